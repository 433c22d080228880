//! Directive lines that cpp joined from several physical lines. A `#pragma acc` continued with
//! backslash-newline reaches the preprocessed text as one line (its spacing collapsed), with
//! blank lines after it to keep the line count; the line marker above it names only its first
//! physical line. This module reads the user's file back and matches the joined line against
//! the physical lines, so that a clause on the third line is located on the third line, at its
//! own column.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where the characters of one joined line are in the user's file: for each non-whitespace
/// character, by its byte offset in the preprocessed line, its line and column (from 1, the
/// column in characters) and its byte offset in that physical line. Sorted by `pre`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct JoinedLine {
    pub anchors: Vec<Anchor>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Anchor {
    pub pre: usize,
    pub line: u32,
    pub column: u32,
    pub byte_in_line: usize,
}

impl JoinedLine {
    /// The physical place of byte `pre` of the joined line: the character's own where the two
    /// texts matched, else the place where they stopped matching (a macro cpp expanded there).
    pub fn at(&self, pre: usize) -> Option<Anchor> {
        let k = self.anchors.partition_point(|a| a.pre <= pre);
        k.checked_sub(1).map(|k| self.anchors[k])
    }
}

/// A user's file as [`joined_lines`] reads it: its text and where its lines start.
pub(super) struct FileLines {
    text: String,
    starts: Vec<usize>,
}

impl FileLines {
    fn read(path: &Path) -> Option<FileLines> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Some(FileLines { text, starts })
    }

    /// The text of line `line` (from 1), without its newline.
    fn line(&self, line: u32) -> Option<(usize, &str)> {
        let start = *self.starts.get(line.checked_sub(1)? as usize)?;
        let end = self.text[start..].find('\n').map_or(self.text.len(), |i| start + i);
        Some((start, &self.text[start..end]))
    }

    /// Line (from 1), column (from 1, in characters) and byte in its line of byte `at`.
    fn position(&self, at: usize) -> (u32, u32, usize) {
        let line = self.starts.partition_point(|&s| s <= at).saturating_sub(1);
        let start = self.starts[line];
        (line as u32 + 1, self.text[start..at].chars().count() as u32 + 1, at - start)
    }
}

/// Whether a physical line ends with a backslash that continues it (spaces after the
/// backslash are allowed, as cpp allows them with a warning).
fn continued(line: &str) -> bool {
    line.trim_end_matches([' ', '\t', '\r']).ends_with('\\')
}

/// The length of a backslash-newline at `at` (with spaces between them), if there is one.
fn splice_len(source: &str, at: usize) -> Option<usize> {
    let rest = source.get(at..)?.strip_prefix('\\')?;
    let blanks = rest.len() - rest.trim_start_matches([' ', '\t', '\r']).len();
    rest[blanks..].starts_with('\n').then_some(1 + blanks + 1)
}

/// The joined lines of a unit's text: each `#pragma` line whose first physical line is
/// continued. `directive_lines` gives, for each line of the text that starts with `#pragma`
/// (outside system headers), its index, its text and the file and line its marker says it is.
/// Each file is read once; one that cannot be read has no joined lines.
pub(super) fn joined_lines<'t>(directive_lines: impl Iterator<Item = (usize, &'t str, PathBuf, u32)>) -> HashMap<usize, JoinedLine> {
    let mut files: HashMap<PathBuf, Option<FileLines>> = HashMap::new();
    let mut out = HashMap::new();
    for (k, pre_line, file, line) in directive_lines {
        let Some(lines) = files.entry(file.clone()).or_insert_with(|| FileLines::read(&file)).as_ref() else { continue };
        let Some((start, first)) = lines.line(line) else { continue };
        if !continued(first) {
            continue;
        }
        let joined = match_joined(pre_line, lines, start, line);
        if !joined.anchors.is_empty() {
            out.insert(k, joined);
        }
    }
    out
}

/// Matches the joined `pre_line` against the physical lines from byte `start` (line
/// `first_line`): forwards from the start until the texts differ (a macro expansion), then
/// backwards from the end of the last continued line down to that point. Whitespace,
/// `/* */` comments and backslash-newlines of the original are skipped.
fn match_joined(pre_line: &str, lines: &FileLines, start: usize, first_line: u32) -> JoinedLine {
    let source = lines.text.as_str();
    // The end of the directive: the end of the first physical line not continued.
    let mut last = first_line;
    while let Some((_, l)) = lines.line(last)
        && continued(l)
    {
        last += 1;
    }
    let end = lines.line(last).map_or(source.len(), |(s, l)| s + l.len());
    let anchor = |pre: usize, at: usize| {
        let (line, column, byte_in_line) = lines.position(at);
        Anchor { pre, line, column, byte_in_line }
    };
    let mut anchors = Vec::new();
    // Forwards.
    let mut o = start;
    let mut stopped: Option<usize> = None;
    for (i, c) in pre_line.char_indices() {
        if c.is_whitespace() {
            continue;
        }
        loop {
            if o >= end {
                break;
            }
            if source[o..].starts_with("/*") {
                match source[o + 2..end].find("*/") {
                    Some(k) => o += k + 4,
                    None => o = end,
                }
            } else if let Some(n) = splice_len(source, o) {
                o += n;
            } else if source.as_bytes()[o].is_ascii_whitespace() {
                o += 1;
            } else {
                break;
            }
        }
        if o >= end || !source[o..].starts_with(c) {
            stopped = Some(i);
            if o < end {
                anchors.push(anchor(i, o));
            }
            break;
        }
        anchors.push(anchor(i, o));
        o += c.len_utf8();
    }
    let Some(stop) = stopped else { return JoinedLine { anchors } };
    // Backwards, for what follows a macro expansion.
    let mut back = Vec::new();
    let mut o = end;
    for (i, c) in pre_line.char_indices().rev() {
        if i <= stop {
            break;
        }
        if c.is_whitespace() {
            continue;
        }
        loop {
            if o <= start {
                break;
            }
            let before = &source[start..o];
            if before.ends_with("*/") {
                match before[..before.len() - 2].rfind("/*") {
                    Some(k) => o = start + k,
                    None => o = start,
                }
            } else if before.ends_with('\n') {
                // A backslash-newline, seen from its end.
                let line = before[..before.len() - 1].trim_end_matches([' ', '\t', '\r']);
                if !line.ends_with('\\') {
                    break;
                }
                o = start + line.len() - 1;
            } else if before.as_bytes()[before.len() - 1].is_ascii_whitespace() {
                o -= 1;
            } else {
                break;
            }
        }
        if o <= start || !source[start..o].ends_with(c) {
            break;
        }
        o -= c.len_utf8();
        back.push(anchor(i, o));
    }
    back.reverse();
    anchors.extend(back);
    JoinedLine { anchors }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_lines(text: &str) -> FileLines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        FileLines { text: text.to_string(), starts }
    }

    #[test]
    fn each_clause_of_a_continued_directive_is_found_on_its_own_line() {
        let original = "int x;\n#pragma acc kernels loop gang \\\n            private(j) \\\n            reduction(+:c[0:4][0:3])\nfor (;;);\n";
        let pre = "#pragma acc kernels loop gang private(j) reduction(+:c[0:4][0:3])";
        let lines = file_lines(original);
        let joined = match_joined(pre, &lines, 7, 2);
        let at = |needle: &str| {
            let a = joined.at(pre.find(needle).unwrap()).unwrap();
            (a.line, a.column)
        };
        assert_eq!(at("#pragma"), (2, 1));
        assert_eq!(at("gang"), (2, 26));
        assert_eq!(at("private"), (3, 13));
        assert_eq!(at("reduction"), (4, 13));
        assert_eq!(at("c[0:4]"), (4, 25));
    }

    #[test]
    fn after_a_macro_the_end_of_the_directive_is_matched_backwards() {
        // `N` expanded to `64` by cpp: the clause after it is still found.
        let original = "#pragma acc parallel num_gangs(N) \\\n   /* tuned */ vector_length(32)\n";
        let pre = "#pragma acc parallel num_gangs(64) vector_length(32)";
        let joined = match_joined(pre, &file_lines(original), 0, 1);
        let a = joined.at(pre.find("vector_length").unwrap()).unwrap();
        assert_eq!((a.line, a.column, a.byte_in_line), (2, 16, 15));
        // Inside the expansion: the macro's own place.
        let a = joined.at(pre.find("64").unwrap()).unwrap();
        assert_eq!((a.line, a.column), (1, 32));
    }

    #[test]
    fn backslashes_followed_by_spaces_continue_the_line() {
        assert!(continued("#pragma acc parallel \\  "));
        assert!(!continued("#pragma acc parallel"));
        assert_eq!(splice_len("\\ \t\nx", 0), Some(4));
        assert_eq!(splice_len("\\x", 0), None);
    }
}
