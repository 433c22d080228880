//! Source files and the preprocessed text of each translation unit, with the map from a
//! position in the preprocessed text back to the user's file, line and column (from cpp's line
//! markers), and diagnostic rendering. Directive lines cpp joined from several physical lines
//! are located through [`joined`], which reads the user's file back when the program is
//! compiled; what it found travels with the unit ([`SourceUnit::joined_lines`]), so an
//! executable's runtime, which may run where the files are not, locates them the same way
//! (the `#line` of a kernel's CUDA, hence its embedded image, must not depend on that).

use std::collections::HashMap;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::Error as FilesError;
use codespan_reporting::term;

use crate::diag::{Diagnostic, Severity, Span};

mod joined;

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
    /// Where each line of `text` starts and which lines are markers, built on the first
    /// [`SourceSet::location`]: a location costs a binary search, not a walk back through the
    /// text (thousands of diagnostics on a long file or a long line stay linear).
    index: std::sync::OnceLock<LineIndex>,
    /// The joined directive lines as found when the program was compiled (a unit read back
    /// from an executable); `None`: found by reading the user's files.
    known_joined: Option<HashMap<usize, joined::JoinedLine>>,
}

/// One joined directive line of a unit as it travels in an executable: the line's index in the
/// text and, per anchor, its byte in the preprocessed line, line, column and byte in its line.
pub type JoinedLineRecord = (usize, Vec<(usize, u32, u32, usize)>);

impl SourceUnit {
    pub fn new(path: PathBuf, text: String) -> SourceUnit {
        SourceUnit { path, text, index: std::sync::OnceLock::new(), known_joined: None }
    }

    /// A unit read back with the joined directive lines [`SourceUnit::joined_lines`] gave
    /// when it was compiled: its locations are those the compiler computed, files or not.
    pub fn with_joined_lines(path: PathBuf, text: String, records: Vec<JoinedLineRecord>) -> SourceUnit {
        let known = records
            .into_iter()
            .map(|(k, anchors)| {
                let anchors = anchors.into_iter().map(|(pre, line, column, byte_in_line)| joined::Anchor { pre, line, column, byte_in_line }).collect();
                (k, joined::JoinedLine { anchors })
            })
            .collect();
        SourceUnit { path, text, index: std::sync::OnceLock::new(), known_joined: Some(known) }
    }

    /// The unit's joined directive lines (reading the user's files now if nobody has), sorted,
    /// for [`SourceUnit::with_joined_lines`].
    pub fn joined_lines(&self) -> Vec<JoinedLineRecord> {
        let mut records: Vec<JoinedLineRecord> = self
            .index()
            .joined
            .iter()
            .map(|(&k, j)| (k, j.anchors.iter().map(|a| (a.pre, a.line, a.column, a.byte_in_line)).collect()))
            .collect();
        records.sort_by_key(|r| r.0);
        records
    }

    fn index(&self) -> &LineIndex {
        self.index.get_or_init(|| LineIndex::of(&self.text, self.known_joined.as_ref()))
    }
}

#[derive(Clone, Debug, Default)]
struct LineIndex {
    /// Byte offset of each line's start.
    starts: Vec<usize>,
    /// The line markers, by the index of their line, in order.
    markers: Vec<(usize, LineMarker)>,
    /// The `#pragma` lines cpp joined from continued physical lines, by the index of their line.
    joined: HashMap<usize, joined::JoinedLine>,
}

impl LineIndex {
    /// The index of `text`; its joined lines are `known` ones, else found in the user's files.
    fn of(text: &str, known: Option<&HashMap<usize, joined::JoinedLine>>) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let mut markers = Vec::new();
        for (k, &start) in starts.iter().enumerate() {
            if text[start..].starts_with('#') {
                let end = text[start..].find('\n').map(|i| start + i).unwrap_or(text.len());
                if let Some(m) = parse_line_marker(&text[start..end]) {
                    markers.push((k, m));
                }
            }
        }
        let mut index = LineIndex { starts, markers, joined: HashMap::new() };
        if let Some(known) = known {
            index.joined = known.clone();
            return index;
        }
        let directive_lines: Vec<(usize, &str, PathBuf, u32)> = (0..index.starts.len())
            .filter_map(|k| {
                let start = index.starts[k];
                let end = index.starts.get(k + 1).map_or(text.len(), |&s| s - 1);
                let line = &text[start..end];
                if !line.starts_with("#pragma") {
                    return None;
                }
                let (marker, physical) = index.marked_line(k)?;
                (!marker.system).then(|| (k, line, marker.file.clone(), physical))
            })
            .collect();
        index.joined = joined::joined_lines(directive_lines.into_iter());
        index
    }

    /// The marker that governs line `k` of the text and the line of its file that `k` is.
    fn marked_line(&self, k: usize) -> Option<(&LineMarker, u32)> {
        let above = self.markers.partition_point(|(m, _)| *m < k);
        let (m, marker) = &self.markers[above.checked_sub(1)?];
        Some((marker, marker.line + (k - m - 1) as u32))
    }

    /// The line of the text holding byte `off`, and where that line starts.
    fn line_of(&self, off: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= off).saturating_sub(1);
        (line, self.starts.get(line).copied().unwrap_or(0))
    }
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
    /// The file name (without its folder) of unit `tu`, as messages name a file.
    pub fn file_name(&self, tu: u32) -> String {
        self.units.get(tu as usize).map_or_else(String::new, |u| {
            u.path.file_name().map_or_else(|| u.path.display().to_string(), |f| f.to_string_lossy().into_owned())
        })
    }

    /// The preprocessed text a span covers.
    /// Empty for a span that does not fit the text (never panics).
    pub fn text(&self, span: Span) -> &str {
        self.units.get(span.tu as usize).and_then(|u| u.text.get(span.lo as usize..span.hi as usize)).unwrap_or("")
    }

    /// Where the start of `span` is in the user's files. Columns count characters of the
    /// preprocessed line, which equals the source line except where macros were expanded or cpp
    /// changed the spacing; on a directive continued over several lines (which cpp joins into
    /// one), the line and column are those of the physical line the span starts on.
    pub fn location(&self, span: Span) -> Location {
        let Some(unit) = self.units.get(span.tu as usize) else {
            return Location { file: PathBuf::new(), line: 0, column: 0, in_system_header: false };
        };
        let text = unit.text.as_str();
        let mut off = (span.lo as usize).min(text.len());
        while !text.is_char_boundary(off) {
            off -= 1;
        }
        let index = unit.index();
        let (line, line_start) = index.line_of(off);
        let column = text[line_start..off].chars().count() as u32 + 1;
        // The nearest line marker above the line, and the lines in between.
        let mut location = match index.marked_line(line) {
            Some((m, physical)) => Location { file: m.file.clone(), line: physical, column, in_system_header: m.system },
            None => Location { file: unit.path.clone(), line: line as u32 + 1, column, in_system_header: false },
        };
        if let Some(a) = index.joined.get(&line).and_then(|j| j.at(off - line_start)) {
            (location.line, location.column) = (a.line, a.column);
        }
        location
    }

    /// For a span that starts on a joined directive line: where its first character and (when
    /// it ends on that line) its last one are in the user's file.
    fn joined_range(&self, span: Span) -> Option<JoinedRange> {
        let unit = self.units.get(span.tu as usize)?;
        let index = unit.index();
        let lo = span.lo as usize;
        let (line, line_start) = index.line_of(lo.min(unit.text.len()));
        let joined = index.joined.get(&line)?;
        let first = joined.at(lo - line_start)?;
        let line_end = index.starts.get(line + 1).map_or(unit.text.len(), |&s| s - 1);
        let last_byte = (span.hi as usize).saturating_sub(1).max(lo);
        let last = (last_byte < line_end).then(|| joined.at(last_byte - line_start)).flatten().filter(|l| (l.line, l.byte_in_line) >= (first.line, first.byte_in_line));
        Some(JoinedRange { first, last })
    }
}

/// [`SourceSet::joined_range`]'s answer.
#[derive(Clone, Copy, Debug)]
struct JoinedRange {
    first: joined::Anchor,
    last: Option<joined::Anchor>,
}

/// Renders diagnostics in the rustc style with codespan-reporting, reading the user's files
/// from disk for the source lines. `color` adds ANSI colours. Each file is read once; a line
/// longer than [`SHOWN_LINE_BYTES`] is shown as a window around the label, so that the output
/// and the time stay proportional to the number of diagnostics, whatever the line's length.
pub fn render_diagnostics(sources: &SourceSet, diags: &[Diagnostic], color: bool) -> String {
    let mut read_back: HashMap<PathBuf, Option<ReadBack>> = HashMap::new();
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
        let mut snippets = Snippets(Vec::new());
        if let Some(span) = d.span
            && (span.tu as usize) < sources.units.len()
        {
            let loc = sources.location(span);
            let file = read_back.entry(loc.file.clone()).or_insert_with(|| ReadBack::of(&loc.file));
            match file.as_ref().and_then(|f| f.snippet(&loc, span, preprocessed_line(sources, span), sources.joined_range(span))) {
                Some((snippet, range)) => {
                    snippets.0.push(snippet);
                    cs = cs.with_labels(vec![Label::primary(0, range).with_message(d.label.clone())]);
                }
                None => {
                    // The file cannot be read back (deleted, or a generated name): point at it anyway.
                    cs.notes.insert(0, format!("at {}:{}:{}", loc.file.display(), loc.line, loc.column));
                }
            }
        }
        if color {
            let _ = term::emit_to_write_style(&mut ansi, &config, &snippets, &cs);
        } else {
            let _ = term::emit_to_string(&mut out, &config, &snippets, &cs);
        }
    }
    if color {
        out = String::from_utf8_lossy(ansi.as_slice()).into_owned();
    }
    out
}

/// Where a span starts and ends in the user's file, as the text form's caret shows it: the
/// columns are those of the file on disk (cpp may have moved a line's text, as it does for
/// `#pragma` lines), the end on the start's line. Lines and columns count from 1, columns in
/// characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserSpan {
    pub file: PathBuf,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

/// [`UserSpan`]s of several spans, reading each user's file once.
#[derive(Default)]
pub struct UserSpans {
    read_back: HashMap<PathBuf, Option<ReadBack>>,
}

impl UserSpans {
    pub fn of(&mut self, sources: &SourceSet, span: Span) -> Option<UserSpan> {
        let unit_exists = (span.tu as usize) < sources.units.len();
        if !unit_exists {
            return None;
        }
        let loc = sources.location(span);
        let file = self.read_back.entry(loc.file.clone()).or_insert_with(|| ReadBack::of(&loc.file));
        let from_file = file.as_ref().and_then(|f| {
            let (_, _, lo, hi) = f.label_range(&loc, span, preprocessed_line(sources, span), sources.joined_range(span))?;
            let (line, column) = f.position(lo);
            let (end_line, end_column) = f.position(hi);
            Some(UserSpan { file: loc.file.clone(), line, column, end_line, end_column })
        });
        // A file that cannot be read back: the preprocessed text's columns.
        from_file.or_else(|| {
            let end = sources.location(Span { lo: span.hi.max(span.lo), ..span });
            let same = end.file == loc.file && (end.line, end.column) >= (loc.line, loc.column);
            let (end_line, end_column) = if same { (end.line, end.column) } else { (loc.line, loc.column) };
            Some(UserSpan { file: loc.file.clone(), line: loc.line, column: loc.column, end_line, end_column })
        })
    }
}

/// Lines longer than this are shown as a window around the label.
pub const SHOWN_LINE_BYTES: usize = 200;
/// How much of a long line a window shows on each side of the label.
const WINDOW_CONTEXT_BYTES: usize = 70;

/// A user's file read back for diagnostics: its text and where its lines start.
struct ReadBack {
    name: String,
    text: String,
    starts: Vec<usize>,
    /// Per line (by start): whether cpp left it as it was, and whether it is ASCII (columns
    /// are then byte offsets); worked out once per line, not per diagnostic.
    unchanged: std::cell::RefCell<HashMap<usize, bool>>,
    ascii: std::cell::RefCell<HashMap<usize, bool>>,
}

impl ReadBack {
    fn of(path: &std::path::Path) -> Option<ReadBack> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Some(ReadBack { name: path.display().to_string(), text, starts, unchanged: Default::default(), ascii: Default::default() })
    }

    /// The line and column (from 1, in characters) of byte `at`.
    fn position(&self, at: usize) -> (u32, u32) {
        let line = self.starts.partition_point(|&s| s <= at).saturating_sub(1);
        let start = self.starts[line];
        let at = at.min(self.text.len());
        (line as u32 + 1, self.text[start..at].chars().count() as u32 + 1)
    }

    /// The bounds of the line `loc` is on and the byte range of `span`'s label in the file:
    /// `(line_start, line_end, lo, hi)`.
    fn label_range(&self, loc: &Location, span: Span, pre: Option<(&str, usize)>, joined: Option<JoinedRange>) -> Option<(usize, usize, usize, usize)> {
        let line_index = loc.line.checked_sub(1)? as usize;
        let line_start = *self.starts.get(line_index)?;
        let line_end = self.starts.get(line_index + 1).map(|&s| s - 1).unwrap_or(self.text.len());
        if let Some(JoinedRange { first, last }) = joined {
            // `loc` is the physical place already: the label runs to the span's last character
            // when that is on the same physical line, else to the line's end.
            let lo = (line_start + first.byte_in_line).min(line_end);
            let hi = match last {
                Some(l) if l.line == first.line => {
                    let at = line_start + l.byte_in_line;
                    at + self.text[at.min(line_end)..line_end].chars().next().map_or(0, char::len_utf8)
                }
                _ => line_end,
            };
            return Some((line_start, line_end, lo, hi.clamp(lo, line_end)));
        }
        let unchanged = pre.is_some_and(|(pre_line, _)| {
            *self.unchanged.borrow_mut().entry(line_start).or_insert_with(|| pre_line == &self.text[line_start..line_end])
        });
        let (lo, hi) = byte_range(&self.text, line_start, line_end, loc, span, pre, unchanged);
        Some((line_start, line_end, lo, hi))
    }

    /// The line `loc` is on, or a window of it, as one snippet; and the label's range in it.
    fn snippet(&self, loc: &Location, span: Span, pre: Option<(&str, usize)>, joined: Option<JoinedRange>) -> Option<(Snippet, std::ops::Range<usize>)> {
        let (line_start, line_end, lo, hi) = self.label_range(loc, span, pre, joined)?;
        let ascii = *self.ascii.borrow_mut().entry(line_start).or_insert_with(|| self.text[line_start..line_end].is_ascii());
        let column = if ascii { lo - line_start + 1 } else { self.text[line_start..lo].chars().count() + 1 };
        let (mut from, mut to) = (line_start, line_end);
        let mut shown_hi = hi;
        if line_end - line_start > SHOWN_LINE_BYTES {
            shown_hi = hi.min(lo + WINDOW_CONTEXT_BYTES);
            from = lo.saturating_sub(WINDOW_CONTEXT_BYTES).max(line_start);
            to = (shown_hi + WINDOW_CONTEXT_BYTES).min(line_end);
            while !self.text.is_char_boundary(from) {
                from -= 1;
            }
            while !self.text.is_char_boundary(to) {
                to += 1;
            }
            while !self.text.is_char_boundary(shown_hi) {
                shown_hi += 1;
            }
        }
        let prefix = if from > line_start { "..." } else { "" };
        let suffix = if to < line_end { "..." } else { "" };
        let text = format!("{prefix}{}{suffix}", &self.text[from..to]);
        let range = (lo - from + prefix.len())..(shown_hi - from + prefix.len());
        Some((Snippet { name: self.name.clone(), line_number: loc.line as usize, column, text }, range))
    }
}

/// One diagnostic's source line as codespan shows it (the whole line, or a window of a long
/// one), with the real line and column numbers.
struct Snippet {
    name: String,
    line_number: usize,
    column: usize,
    text: String,
}

struct Snippets(Vec<Snippet>);

impl<'a> codespan_reporting::files::Files<'a> for Snippets {
    type FileId = usize;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<&'a str, FilesError> {
        self.0.get(id).map(|s| s.name.as_str()).ok_or(FilesError::FileMissing)
    }
    fn source(&'a self, id: usize) -> Result<&'a str, FilesError> {
        self.0.get(id).map(|s| s.text.as_str()).ok_or(FilesError::FileMissing)
    }
    fn line_index(&'a self, _id: usize, _byte_index: usize) -> Result<usize, FilesError> {
        Ok(0)
    }
    fn line_number(&'a self, id: usize, _line_index: usize) -> Result<usize, FilesError> {
        self.0.get(id).map(|s| s.line_number).ok_or(FilesError::FileMissing)
    }
    fn column_number(&'a self, id: usize, _line_index: usize, _byte_index: usize) -> Result<usize, FilesError> {
        self.0.get(id).map(|s| s.column).ok_or(FilesError::FileMissing)
    }
    fn line_range(&'a self, id: usize, line_index: usize) -> Result<std::ops::Range<usize>, FilesError> {
        let snippet = self.0.get(id).ok_or(FilesError::FileMissing)?;
        if line_index == 0 { Ok(0..snippet.text.len()) } else { Err(FilesError::LineTooLarge { given: line_index, max: 0 }) }
    }
}

/// The preprocessed line holding the start of `span`, and the span's byte offset in it.
fn preprocessed_line(sources: &SourceSet, span: Span) -> Option<(&str, usize)> {
    let unit = sources.units.get(span.tu as usize)?;
    let text = &unit.text;
    let lo = (span.lo as usize).min(text.len());
    let index = unit.index();
    let line = index.starts.partition_point(|&s| s <= lo).saturating_sub(1);
    let start = index.starts.get(line).copied().unwrap_or(0);
    let end = index.starts.get(line + 1).map(|&s| s - 1).unwrap_or(text.len());
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

/// The byte range in the original file for a span that starts at `loc`, on the line that
/// spans `line_start..line_end`. Where cpp changed the line's spacing (it writes leading tabs
/// as spaces and collapses the blanks between tokens), the span's last character is aligned
/// too, so the label ends where the span's text ends in the file, tabs and all; otherwise it
/// has the span's length, clamped to the line (macro expansions can make the preprocessed line
/// longer).
fn byte_range(
    source: &str,
    line_start: usize,
    line_end: usize,
    loc: &Location,
    span: Span,
    pre: Option<(&str, usize)>,
    unchanged: bool,
) -> (usize, usize) {
    let line = &source[line_start..line_end];
    let at_column = || line.chars().take(loc.column.saturating_sub(1) as usize).map(char::len_utf8).sum::<usize>();
    let lo = pre
        .and_then(|(pre_line, target)| {
            // The common case, a line cpp left as it was, needs no alignment.
            if unchanged {
                return Some(line_start + target);
            }
            align(pre_line, target, source, line_start).or_else(|| align_from_end(pre_line, target, line).map(|o| line_start + o))
        })
        .unwrap_or_else(|| line_start + at_column().min(line.len()));
    let line_end = if lo <= line_end { line_end } else { source[lo..].find('\n').map(|i| lo + i).unwrap_or(source.len()) };
    let len = (span.hi.saturating_sub(span.lo) as usize).max(1);
    let aligned_end = pre.filter(|_| !unchanged).and_then(|(pre_line, target)| {
        // The start of the span's last character, when the span ends on this line.
        let mut last = target + len - 1;
        if last >= pre_line.len() {
            return None;
        }
        while !pre_line.is_char_boundary(last) {
            last -= 1;
        }
        let at = align(pre_line, last, source, line_start).or_else(|| align_from_end(pre_line, last, line).map(|o| line_start + o))?;
        let c = source[at..].chars().next()?;
        Some(at + c.len_utf8())
    });
    let mut hi = match aligned_end {
        Some(end) if end > lo && end <= line_end => end,
        _ => (lo + len).min(line_end),
    };
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
        let set = SourceSet { units: vec![SourceUnit::new("a.c".into(), text.into())] };
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

    /// A unit whose preprocessed `text` names `original`, written to a scratch file, in its
    /// line markers (`FILE` in `text` stands for the file's path).
    fn unit_over(original: &str, text: &str) -> (tempfile::TempDir, SourceSet) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prog.c");
        std::fs::write(&path, original).unwrap();
        let text = text.replace("FILE", &path.display().to_string());
        (dir, SourceSet { units: vec![SourceUnit::new(path, text)] })
    }

    /// The caret line of a one-label rendering: the positions (in characters of the rendered
    /// line) of its first and last `^`, and the rendered source line above it.
    fn caret_columns(rendered: &str) -> (usize, usize, String) {
        let lines: Vec<&str> = rendered.lines().collect();
        let k = lines.iter().position(|l| l.contains('^')).unwrap_or_else(|| panic!("no caret:\n{rendered}"));
        let caret = lines[k];
        let carets: Vec<usize> = caret.chars().enumerate().filter(|(_, c)| *c == '^').map(|(i, _)| i).collect();
        (carets[0], carets[carets.len() - 1], lines[k - 1].to_string())
    }

    #[test]
    fn carets_under_tab_indented_code_cover_the_span_text() {
        // cpp writes the leading tabs as spaces and collapses the blanks between tokens; the
        // caret must still run from `s` to `;` of the file's line, whose tabs codespan expands.
        let original = "int main(void) {\n\t\tif (a[i] > 3)\t\ts  =\t\t1;\n}\n";
        let text = "# 1 \"FILE\"\nint main(void) {\n  if (a[i] > 3) s = 1;\n}\n";
        let (_dir, set) = unit_over(original, text);
        let unit_text = set.units[0].text.clone();
        let lo = unit_text.find("s = 1;").unwrap() as u32;
        let span = Span::new(0, lo, lo + "s = 1;".len() as u32);
        let rendered = render_diagnostics(&set, &[Diagnostic::warning(span, "here")], false);
        let (first, last, source_line) = caret_columns(&rendered);
        let chars: Vec<char> = source_line.chars().collect();
        assert_eq!(chars.get(first), Some(&'s'), "{rendered}");
        assert_eq!(chars.get(last), Some(&';'), "{rendered}");
        assert!(rendered.contains("prog.c:2:18"), "{rendered}");
        // The other formats give the same end: the column after `;`, counting a tab as one.
        let at = UserSpans::default().of(&set, span).unwrap();
        assert_eq!((at.line, at.column, at.end_line, at.end_column), (2, 18, 2, 26));
    }

    #[test]
    fn a_clause_on_the_third_line_of_a_continued_directive_is_located_there() {
        let original = "int main(void) {\n#pragma acc kernels loop gang worker independent \\\n            private(j) \\\n\t    reduction(+:c[0:4][0:3])\n  for (;;);\n}\n";
        let text = "# 1 \"FILE\"\nint main(void) {\n\n# 2 \"FILE\"\n#pragma acc kernels loop gang worker independent private(j) reduction(+:c[0:4][0:3])\n\n\n  for (;;);\n}\n";
        let (_dir, set) = unit_over(original, text);
        let unit_text = set.units[0].text.clone();
        let at = |needle: &str| {
            let lo = unit_text.find(needle).unwrap() as u32;
            Span::new(0, lo, lo + needle.len() as u32)
        };
        let loc = |needle: &str| {
            let l = set.location(at(needle));
            (l.line, l.column)
        };
        assert_eq!(loc("#pragma"), (2, 1));
        assert_eq!(loc("independent"), (2, 38));
        assert_eq!(loc("private(j)"), (3, 13));
        assert_eq!(loc("c[0:4][0:3]"), (4, 18));
        // The caret is drawn under the clause, on its own line.
        let rendered = render_diagnostics(&set, &[Diagnostic::error(at("c[0:4][0:3]"), "not a scalar")], false);
        assert!(rendered.contains("prog.c:4:18"), "{rendered}");
        let (first, last, source_line) = caret_columns(&rendered);
        let chars: Vec<char> = source_line.chars().collect();
        assert_eq!((chars.get(first), chars.get(last)), (Some(&'c'), Some(&']')), "{rendered}");
        assert_eq!(last - first + 1, "c[0:4][0:3]".len(), "{rendered}");
        let user = UserSpans::default().of(&set, at("private(j)")).unwrap();
        assert_eq!((user.line, user.column, user.end_line, user.end_column), (3, 13, 3, 23));
    }

    #[test]
    fn an_unreadable_file_leaves_a_joined_line_at_its_first_line() {
        let text = "# 1 \"/nonexistent/yosegi/prog.c\"\n#pragma acc parallel private(j)\n\n";
        let set = SourceSet { units: vec![SourceUnit::new("prog.c".into(), text.into())] };
        let lo = text.find("private").unwrap() as u32;
        let loc = set.location(Span::new(0, lo, lo + 7));
        assert_eq!((loc.line, loc.column), (1, 22));
    }
}
