//! Source files and the preprocessed text of each translation unit, with the map from a
//! position in the preprocessed text back to the user's file, line and column (from cpp's line
//! markers), and diagnostic rendering.

use std::collections::HashMap;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term;

use crate::diag::{Diagnostic, Severity, Span};

#[derive(Clone, Debug, Default)]
pub struct SourceSet {
    pub units: Vec<SourceUnit>,
}

#[derive(Clone, Debug, Default)]
pub struct SourceUnit {
    /// The file given on the command line.
    pub path: PathBuf,
    /// cpp's output, line markers included.
    pub text: String,
}

/// A position in a user's file, 1-based.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    pub line: u32,
    pub column: u32,
    /// The position is inside a system header.
    pub in_system_header: bool,
}

/// A cpp line marker: `# 12 "file.c" 2 3` says the next line is line 12 of `file.c`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineMarker {
    pub line: u32,
    pub file: PathBuf,
    /// Flag 3: the text comes from a system header.
    pub system: bool,
}

/// Parses one line of cpp output as a line marker, if it is one.
pub fn parse_line_marker(line: &str) -> Option<LineMarker> {
    let rest = line.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").map(str::trim_start).unwrap_or(rest);
    let digits_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    if digits_end == 0 {
        return None;
    }
    let line_no: u32 = rest[..digits_end].parse().ok()?;
    let rest = rest[digits_end..].trim_start();
    let (file, flags) = if let Some(quoted) = rest.strip_prefix('"') {
        // cpp escapes `"` and `\\` with a backslash; the preprocessor step writes the bytes of a
        // name that is not UTF-8 as octal escapes (`\\377`).
        let mut name: Vec<u8> = Vec::new();
        let bytes = quoted.as_bytes();
        let mut end = bytes.len();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => {
                    let digits = bytes[i + 1..].iter().take(3).take_while(|b| (b'0'..=b'7').contains(b)).count();
                    if digits > 0 {
                        let value = bytes[i + 1..i + 1 + digits].iter().fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
                        name.push(value as u8);
                        i += 1 + digits;
                    } else {
                        if let Some(&next) = bytes.get(i + 1) {
                            name.push(next);
                        }
                        i += 2;
                    }
                }
                b'"' => {
                    end = i + 1;
                    break;
                }
                b => {
                    name.push(b);
                    i += 1;
                }
            }
        }
        (PathBuf::from(std::ffi::OsString::from_vec(name)), &quoted[end.min(quoted.len())..])
    } else {
        (PathBuf::new(), rest)
    };
    let system = flags.split_whitespace().any(|f| f == "3");
    Some(LineMarker { line: line_no, file, system })
}

impl SourceSet {
    /// The preprocessed text a span covers.
    /// Empty for a span that does not fit the text (never panics).
    pub fn text(&self, span: Span) -> &str {
        self.units.get(span.tu as usize).and_then(|u| u.text.get(span.lo as usize..span.hi as usize)).unwrap_or("")
    }

    /// Where the start of `span` is in the user's files. Columns count bytes of the
    /// preprocessed line, which equals the source line except where macros were expanded.
    pub fn location(&self, span: Span) -> Location {
        let Some(unit) = self.units.get(span.tu as usize) else {
            return Location { file: PathBuf::new(), line: 0, column: 0, in_system_header: false };
        };
        let text = unit.text.as_str();
        let mut off = (span.lo as usize).min(text.len());
        while !text.is_char_boundary(off) {
            off -= 1;
        }
        let line_start = text[..off].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let column = text[line_start..off].chars().count() as u32 + 1;
        // Walk back to the nearest line marker, counting the lines in between.
        let mut lines_after_marker = 0u32;
        let mut end = line_start;
        while end > 0 {
            let prev_start = text[..end - 1].rfind('\n').map(|i| i + 1).unwrap_or(0);
            let line = &text[prev_start..end - 1];
            if line.starts_with('#')
                && let Some(m) = parse_line_marker(line)
            {
                return Location { file: m.file, line: m.line + lines_after_marker, column, in_system_header: m.system };
            }
            lines_after_marker += 1;
            end = prev_start;
        }
        Location { file: unit.path.clone(), line: lines_after_marker + 1, column, in_system_header: false }
    }
}

/// Renders diagnostics in the rustc style with codespan-reporting, reading the user's files
/// from disk for the source lines. `color` adds ANSI colours.
pub fn render_diagnostics(sources: &SourceSet, diags: &[Diagnostic], color: bool) -> String {
    let mut files = SimpleFiles::new();
    let mut file_ids: HashMap<PathBuf, Option<usize>> = HashMap::new();
    let config = term::Config::default();
    let mut out = String::new();
    let mut ansi = term::termcolor::Buffer::ansi();
    for d in diags {
        let severity = match d.severity {
            Severity::Error => codespan_reporting::diagnostic::Severity::Error,
            Severity::Warning => codespan_reporting::diagnostic::Severity::Warning,
            Severity::Note => codespan_reporting::diagnostic::Severity::Note,
        };
        let mut cs = CsDiagnostic::new(severity).with_message(d.message.clone());
        if let Some(help) = &d.help {
            cs = cs.with_notes(vec![format!("help: {help}")]);
        }
        let mut fallback_location = None;
        if let Some(span) = d.span
            && (span.tu as usize) < sources.units.len()
        {
            let loc = sources.location(span);
            let id = *file_ids.entry(loc.file.clone()).or_insert_with(|| {
                std::fs::read_to_string(&loc.file).ok().map(|text| files.add(loc.file.display().to_string(), text))
            });
            match id.and_then(|id| files.get(id).ok().map(|f| (id, f.source().clone()))) {
                Some((id, source)) => {
                    let (lo, hi) = byte_range(&source, &loc, span, preprocessed_line(sources, span));
                    cs = cs.with_labels(vec![Label::primary(id, lo..hi).with_message(d.label.clone())]);
                }
                None => fallback_location = Some(loc),
            }
        }
        if let Some(loc) = fallback_location {
            // The file cannot be read back (deleted, or a generated name): point at it anyway.
            let note = format!("at {}:{}:{}", loc.file.display(), loc.line, loc.column);
            cs.notes.insert(0, note);
        }
        if color {
            let _ = term::emit_to_write_style(&mut ansi, &config, &files, &cs);
        } else {
            let _ = term::emit_to_string(&mut out, &config, &files, &cs);
        }
    }
    if color {
        out = String::from_utf8_lossy(ansi.as_slice()).into_owned();
    }
    out
}

/// The preprocessed line holding the start of `span`, and the span's byte offset in it.
fn preprocessed_line(sources: &SourceSet, span: Span) -> Option<(&str, usize)> {
    let text = &sources.units.get(span.tu as usize)?.text;
    let lo = (span.lo as usize).min(text.len());
    let start = text[..lo].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let end = text[lo..].find('\n').map(|i| lo + i).unwrap_or(text.len());
    Some((&text[start..end], lo - start))
}

/// Finds where byte `target` of the preprocessed line is in the original source starting at
/// `orig_start`, matching the two character by character while skipping whitespace, comments
/// and backslash-newlines on the original side (cpp rewrites the spacing of `#pragma` lines
/// and drops comments). `None` when they differ before the target (a macro was expanded).
fn align(pre_line: &str, target: usize, source: &str, orig_start: usize) -> Option<usize> {
    let orig = source.as_bytes();
    let mut o = orig_start;
    for (i, c) in pre_line.char_indices() {
        if c.is_whitespace() {
            if i >= target {
                break;
            }
            continue;
        }
        loop {
            if o >= orig.len() {
                return None;
            }
            if source[o..].starts_with("/*") {
                o += source[o + 2..].find("*/").map(|k| k + 4)?;
            } else if source[o..].starts_with("\\\n") {
                o += 2;
            } else if orig[o] == b'\n' && i < target {
                return None;
            } else if (orig[o] as char).is_ascii_whitespace() {
                o += 1;
            } else {
                break;
            }
        }
        if i >= target {
            return Some(o);
        }
        if !source[o..].starts_with(c) {
            return None;
        }
        o += c.len_utf8();
    }
    None
}

/// Like [`align`], but matching from the ends of the lines: finds tokens that follow a macro
/// expansion (`a[IDX(i, j)] = x +;`). A trailing `//` comment is tried both ways.
fn align_from_end(pre_line: &str, target: usize, orig_line: &str) -> Option<usize> {
    let attempt = |orig: &str| -> Option<usize> {
        let pre_chars: Vec<(usize, char)> = pre_line.char_indices().filter(|(_, c)| !c.is_whitespace()).collect();
        let orig_chars: Vec<(usize, char)> = orig.char_indices().filter(|(_, c)| !c.is_whitespace()).collect();
        let mut o = orig_chars.len();
        for &(i, c) in pre_chars.iter().rev() {
            if o == 0 {
                return None;
            }
            o -= 1;
            if orig_chars[o].1 != c {
                return None;
            }
            if i == target {
                return Some(orig_chars[o].0);
            }
            if i < target {
                return None;
            }
        }
        None
    };
    attempt(orig_line).or_else(|| orig_line.find("//").and_then(|k| attempt(&orig_line[..k])))
}

/// The byte range in the original file for a span that starts at `loc`: the same length as
/// the span, clamped to the line (macro expansions can make the preprocessed line longer).
fn byte_range(source: &str, loc: &Location, span: Span, pre: Option<(&str, usize)>) -> (usize, usize) {
    let mut line_start = 0usize;
    for _ in 1..loc.line.max(1) {
        match source[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => break,
        }
    }
    let line_end = source[line_start..].find('\n').map(|i| line_start + i).unwrap_or(source.len());
    let line = &source[line_start..line_end];
    let col_bytes: usize = line.chars().take(loc.column.saturating_sub(1) as usize).map(char::len_utf8).sum();
    let lo = pre
        .and_then(|(pre_line, target)| {
            align(pre_line, target, source, line_start).or_else(|| align_from_end(pre_line, target, line).map(|o| line_start + o))
        })
        .unwrap_or(line_start + col_bytes.min(line.len()));
    let line_end = source[lo..].find('\n').map(|i| lo + i).unwrap_or(source.len());
    let len = (span.hi.saturating_sub(span.lo) as usize).max(1);
    let mut hi = (lo + len).min(line_end);
    while hi < source.len() && !source.is_char_boundary(hi) {
        hi += 1;
    }
    (lo, hi.max(lo))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_markers_parse() {
        assert_eq!(parse_line_marker("# 12 \"a b.c\" 2 3"), Some(LineMarker { line: 12, file: "a b.c".into(), system: true }));
        assert_eq!(parse_line_marker("# 1 \"x.c\""), Some(LineMarker { line: 1, file: "x.c".into(), system: false }));
        assert_eq!(parse_line_marker("#pragma acc parallel"), None);
        // Quotes and backslashes are escaped by cpp; bytes that are not UTF-8 by our step.
        let m = parse_line_marker("# 3 \"a \\\"q\\\" \\\\ \\377\\376.c\" 1").unwrap();
        assert_eq!(m.file.as_os_str().as_encoded_bytes(), b"a \"q\" \\ \xff\xfe.c");
    }

    #[test]
    fn location_follows_markers() {
        let text = "# 1 \"a.c\"\n# 1 \"/usr/include/x.h\" 1 3 4\nint x;\n# 3 \"a.c\" 2\n\nint  y;\n";
        let set = SourceSet { units: vec![SourceUnit { path: "a.c".into(), text: text.into() }] };
        let y = text.find('y').unwrap() as u32;
        let loc = set.location(Span::new(0, y, y + 1));
        assert_eq!(loc, Location { file: "a.c".into(), line: 4, column: 6, in_system_header: false });
        let x = text.find("x;").unwrap() as u32;
        let loc = set.location(Span::new(0, x, x + 1));
        assert_eq!((loc.line, loc.in_system_header), (1, true));
    }

    #[test]
    fn columns_follow_the_original_spacing_of_pragmas() {
        let original = "int x;\n  #  pragma   acc   parallel \\\n  copyz( a )\n";
        let pre = "#pragma acc parallel copyz( a )";
        let target = pre.find("copyz").unwrap();
        assert_eq!(align(pre, target, original, 7), Some(original.find("copyz").unwrap()));
        // A macro expanded before the target: no alignment.
        assert_eq!(align("int y = 64 + z;", 13, "int y = N + z;", 0), None);
        assert_eq!(align("int y = 1 + z;", 12, "int y = /* c */ 1 + z;", 0), Some(20));
        // After a macro expansion, matching from the end of the line finds it.
        let pre = "a[((i) * 64 + (j))] = x +;";
        let orig = "a[IDX(i, j)] = x +; // sum";
        assert_eq!(align_from_end(pre, pre.find(';').unwrap(), orig), Some(orig.find(';').unwrap()));
        assert_eq!(align_from_end(pre, 2, orig), None);
    }
}
