//! The lexer: turns cpp's output into tokens with byte spans into that text. It consumes cpp's
//! line markers (tracking whether the text comes from a system header, which the parser needs
//! to skip header declarations) and turns each `#pragma` line into one `Pragma` token, whose
//! contents the directive parser lexes again with [`lex_range`].
//!
//! cpp also marks with flag 3 the expansion of a system header's macro in the user's code
//! (`bool` from `<stdbool.h>` becomes `# 7 "prog.c" 3 4` / `_Bool` / `# 7 "prog.c"`). Such text
//! is the user's: a marker with flag 3 counts as a system header only when it names a file that
//! never appeared without the flag.

use std::collections::HashSet;

use crate::diag::{Diagnostic, Span};
use crate::front::ast::{IntSuffix, NumberLiteral, NumberRun};
use crate::source::parse_line_marker;

#[derive(Clone, Debug, PartialEq)]
pub enum TokKind {
    /// Identifiers and keywords alike; the parser tells them apart.
    Ident(String),
    Int { value: u64, suffix: IntSuffix, radix: u32 },
    Float { value: f64, single: bool, long_double: bool },
    /// GNU C's imaginary floating constant (`1.0iF`, `2.5i`, as `I` from <complex.h> expands
    /// to): `value` times the imaginary unit, of the complex type of the suffix's real type.
    Imaginary { value: f64, single: bool, long_double: bool },
    Char(i64),
    /// Escapes decoded.
    Str(String),
    Punct(&'static str),
    /// Elements of an initializer list that are plain numbers, `1, -2.5, 0x1F`: what follows
    /// an initializer's `{` or `,` up to (not including) the `,` or `}` after its last number
    /// (see [`ast::InitList`](crate::front::ast::InitList)).
    Numbers(Box<NumberRun>),
    /// A whole `#pragma ...` line; the span covers it from `#` to the end of the line.
    Pragma,
    Eof,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokKind,
    pub span: Span,
    /// The token comes from a system header (line marker flag 3).
    pub in_system_header: bool,
}

impl Token {
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(&self.kind, TokKind::Punct(q) if *q == p)
    }
    pub fn ident(&self) -> Option<&str> {
        match &self.kind {
            TokKind::Ident(s) => Some(s),
            _ => None,
        }
    }
}

/// White space other than a line break.
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0c | 0x0b)
}

/// Longest first, so that the greedy match picks `<<=` over `<<` over `<`.
const PUNCTS: &[&str] = &[
    "...", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*=", "/=",
    "%=", "+=", "-=", "&=", "^=", "|=", "##", "[", "]", "(", ")", "{", "}", ".", "&", "*", "+", "-",
    "~", "!", "/", "%", "<", ">", "^", "|", "?", ":", ";", "=", ",", "#",
];

/// Lexes a whole preprocessed translation unit. The result ends with an `Eof` token.
pub fn lex(text: &str, tu: u32) -> Result<Vec<Token>, Diagnostic> {
    let mut lx = Lexer {
        src: text.as_bytes(),
        text,
        pos: 0,
        end: text.len(),
        tu,
        in_system: false,
        user_files: HashSet::new(),
        toks: Vec::new(),
        brackets: Vec::new(),
    };
    lx.run(LineMode::Directives)?;
    Ok(lx.toks)
}

/// Lexes `text[lo..hi]` with spans relative to the whole text (used for the inside of a
/// `#pragma` line). No line markers or pragmas are recognised. Ends with an `Eof` token.
pub fn lex_range(text: &str, tu: u32, lo: usize, hi: usize) -> Result<Vec<Token>, Diagnostic> {
    let mut lx = Lexer {
        src: text.as_bytes(),
        text,
        pos: lo,
        end: hi.min(text.len()),
        tu,
        in_system: false,
        user_files: HashSet::new(),
        toks: Vec::new(),
        brackets: Vec::new(),
    };
    lx.run(LineMode::Plain)?;
    Ok(lx.toks)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LineMode {
    /// `#` at the start of a line is a line marker or a pragma.
    Directives,
    Plain,
}

struct Lexer<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    end: usize,
    tu: u32,
    in_system: bool,
    /// The files line markers named without the system-header flag (the user's files).
    user_files: HashSet<std::path::PathBuf>,
    toks: Vec<Token>,
    /// The brackets open at this point, innermost last: where runs of numbers may start.
    brackets: Vec<Bracket>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bracket {
    Paren,
    Square,
    /// `init`: the brace opens an initializer list: it follows `=`, or it is an element of a
    /// list (after its `{` or a `,`). Only those hold runs of numbers, so a block statement
    /// (`{ 1, 2, f(); }`) keeps its tokens.
    Brace { init: bool },
}

impl<'a> Lexer<'a> {
    fn span(&self, lo: usize, hi: usize) -> Span {
        Span::new(self.tu, lo as u32, hi as u32)
    }
    fn peek(&self, k: usize) -> u8 {
        self.byte(self.pos + k)
    }
    fn push(&mut self, kind: TokKind, lo: usize) {
        if let TokKind::Punct(p) = kind {
            match p {
                "(" => self.brackets.push(Bracket::Paren),
                "[" => self.brackets.push(Bracket::Square),
                "{" => {
                    let init = self.toks.last().is_some_and(|t| t.is_punct("=")) || self.at_list_element();
                    self.brackets.push(Bracket::Brace { init });
                }
                ")" | "]" | "}" => {
                    self.brackets.pop();
                }
                _ => {}
            }
        }
        let span = self.span(lo, self.pos);
        self.toks.push(Token { kind, span, in_system_header: self.in_system });
    }

    /// Whether the next token starts an element of an initializer list: the last token is
    /// the list's `{` or a `,` directly inside it.
    fn at_list_element(&self) -> bool {
        matches!(self.brackets.last(), Some(Bracket::Brace { init: true }))
            && self.toks.last().is_some_and(|t| t.is_punct("{") || t.is_punct(","))
    }
    fn line_end(&self, from: usize) -> usize {
        let mut i = from;
        while i < self.end && self.src[i] != b'\n' {
            i += 1;
        }
        i
    }

    fn run(&mut self, mode: LineMode) -> Result<(), Diagnostic> {
        let mut at_line_start = true;
        while self.pos < self.end {
            let c = self.src[self.pos];
            match c {
                b'\n' => {
                    self.pos += 1;
                    at_line_start = true;
                    continue;
                }
                b if is_blank(b) => {
                    self.pos += 1;
                    continue;
                }
                b'\\' if self.peek(1) == b'\n' => {
                    self.pos += 2;
                    continue;
                }
                b'/' if self.peek(1) == b'/' => {
                    self.pos = self.line_end(self.pos);
                    continue;
                }
                b'/' if self.peek(1) == b'*' => {
                    let lo = self.pos;
                    match self.text[self.pos + 2..self.end].find("*/") {
                        Some(k) => self.pos = self.pos + 2 + k + 2,
                        None => return Err(Diagnostic::error(self.span(lo, lo + 2), "unterminated comment")),
                    }
                    continue;
                }
                b'#' if at_line_start && mode == LineMode::Directives => {
                    self.hash_line();
                    continue;
                }
                _ => {}
            }
            at_line_start = false;
            if self.at_list_element() && matches!(c, b'0'..=b'9' | b'.' | b'-') {
                let lo = self.pos;
                if let Some(run) = self.number_run() {
                    self.push(TokKind::Numbers(Box::new(run)), lo);
                    continue;
                }
            }
            self.token()?;
        }
        let p = self.end;
        self.toks.push(Token { kind: TokKind::Eof, span: self.span(p, p), in_system_header: self.in_system });
        Ok(())
    }

    /// A line starting with `#`: a line marker (`# 12 "file" 2 3`), a pragma, or another
    /// directive cpp passed through (ignored).
    fn hash_line(&mut self) {
        let lo = self.pos;
        let hi = self.line_end(lo);
        let line = &self.text[lo + 1..hi];
        let rest = line.trim_start();
        if rest.starts_with(|c: char| c.is_ascii_digit()) || rest.starts_with("line") {
            // Flags after the file name: 3 marks a system header, or a system macro's expansion
            // in a user's file.
            if let Some(marker) = parse_line_marker(&self.text[lo..hi]).filter(|_| rest.contains('"')) {
                if !marker.system {
                    self.user_files.insert(marker.file.clone());
                }
                self.in_system = marker.system && !self.user_files.contains(&marker.file);
            }
        } else if rest.starts_with("pragma") {
            self.pos = hi;
            self.push(TokKind::Pragma, lo);
        }
        self.pos = hi;
    }

    fn token(&mut self) -> Result<(), Diagnostic> {
        let lo = self.pos;
        let c = self.src[lo];
        if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80 {
            // A wide/unicode string or char prefix: `L"..."`, `u8"..."`.
            let mut i = lo;
            while i < self.end && (self.src[i].is_ascii_alphanumeric() || self.src[i] == b'_' || self.src[i] == b'$' || self.src[i] >= 0x80) {
                i += 1;
            }
            let word = &self.text[lo..i];
            if i < self.end && (self.src[i] == b'"' || self.src[i] == b'\'') && matches!(word, "L" | "u" | "U" | "u8") {
                self.pos = i;
                return self.quoted(lo);
            }
            self.pos = i;
            self.push(TokKind::Ident(word.to_string()), lo);
            return Ok(());
        }
        if c.is_ascii_digit() || (c == b'.' && self.peek(1).is_ascii_digit()) {
            return self.number();
        }
        if c == b'"' || c == b'\'' {
            return self.quoted(lo);
        }
        for p in PUNCTS {
            if self.text[lo..self.end].starts_with(p) {
                self.pos += p.len();
                self.push(TokKind::Punct(p), lo);
                return Ok(());
            }
        }
        let ch = self.text[lo..].chars().next().unwrap_or('?');
        Err(Diagnostic::error(self.span(lo, lo + ch.len_utf8()), format!("unexpected character `{}`", ch.escape_default())))
    }

    /// The elements from `self.pos` on that are plain numbers, each `-` or nothing right
    /// before a literal and followed (blanks aside) by `,` or `}`; `self.pos` after the last.
    /// `None`, and `self.pos` unmoved, when the first element is not one.
    fn number_run(&mut self) -> Option<NumberRun> {
        let mut run = NumberRun::new(self.tu);
        let mut start = self.pos;
        let mut end = self.pos;
        loop {
            let negated = self.byte(start) == b'-';
            let lo = start + negated as usize;
            if !(self.byte(lo).is_ascii_digit() || (self.byte(lo) == b'.' && self.byte(lo + 1).is_ascii_digit())) {
                break;
            }
            let hi = self.number_end(lo);
            let literal = match classify_number(&self.text[lo..hi]) {
                Some(TokKind::Int { value, suffix, radix }) => NumberLiteral::Int { value, suffix, radix },
                Some(TokKind::Float { value, single, long_double }) => NumberLiteral::Float { value, single, long_double },
                _ => break,
            };
            let next = self.skip_blanks(hi);
            let closes = match self.byte(next) {
                b',' => false,
                b'}' => true,
                _ => break,
            };
            if !run.push(literal, negated, start as u32, hi - start) {
                break;
            }
            end = hi;
            if closes {
                break;
            }
            start = self.skip_blanks(next + 1);
        }
        if run.is_empty() {
            return None;
        }
        run.shrink_to_fit();
        self.pos = end;
        Some(run)
    }

    /// The byte at `i`, or 0 past the end.
    fn byte(&self, i: usize) -> u8 {
        if i < self.end { self.src[i] } else { 0 }
    }

    /// The first position from `i` that is not a space or a line break. A line starting with
    /// `#` (a line marker) stops it at the line break: the main loop reads the marker.
    fn skip_blanks(&self, mut i: usize) -> usize {
        while i < self.end {
            match self.src[i] {
                b if is_blank(b) => i += 1,
                b'\n' if self.byte(i + 1) != b'#' => i += 1,
                _ => break,
            }
        }
        i
    }

    /// The end of the preprocessing number that starts at `lo`.
    fn number_end(&self, lo: usize) -> usize {
        let mut i = lo;
        while i < self.end {
            let b = self.src[i];
            if (b == b'+' || b == b'-') && i > lo && matches!(self.src[i - 1], b'e' | b'E' | b'p' | b'P') {
                // An exponent sign belongs to the number, except `0x1e+2` which is hex `1e` plus 2.
                let hex = self.text[lo..i].starts_with("0x") || self.text[lo..i].starts_with("0X");
                if hex && matches!(self.src[i - 1], b'e' | b'E') {
                    break;
                }
                i += 1;
                continue;
            }
            if b.is_ascii_alphanumeric() || b == b'.' || b == b'_' {
                i += 1;
            } else {
                break;
            }
        }
        i
    }

    /// A preprocessing number, then classified as integer or floating literal.
    fn number(&mut self) -> Result<(), Diagnostic> {
        let lo = self.pos;
        let i = self.number_end(lo);
        self.pos = i;
        let span = self.span(lo, i);
        let text = &self.text[lo..i];
        let kind = match classify_number(text) {
            Some(kind) => kind,
            None => match imaginary_constant(text) {
                Some(TokKind::Float { value, single, long_double }) => TokKind::Imaginary { value, single, long_double },
                Some(_) => {
                    return Err(Diagnostic::error(span, format!("the integer imaginary constant `{text}` is not supported"))
                        .with_help("complex integer types are a GNU extension; write a floating constant such as `2.0i`"));
                }
                None => return Err(Diagnostic::error(span, format!("invalid number literal `{text}`"))),
            },
        };
        self.push(kind, lo);
        Ok(())
    }

    /// A string or character literal starting at `self.pos` (the quote); `lo` includes any prefix.
    fn quoted(&mut self, lo: usize) -> Result<(), Diagnostic> {
        let quote = self.src[self.pos];
        let mut i = self.pos + 1;
        let mut out: Vec<u32> = Vec::new();
        loop {
            if i >= self.end || self.src[i] == b'\n' {
                let what = if quote == b'"' { "string" } else { "character" };
                return Err(Diagnostic::error(self.span(lo, i), format!("unterminated {what} literal"))
                    .with_help(format!("close it with `{}`", quote as char)));
            }
            let b = self.src[i];
            if b == quote {
                i += 1;
                break;
            }
            if b == b'\\' {
                let (v, next) = self.escape(i)?;
                out.push(v);
                i = next;
            } else {
                let ch = self.text[i..].chars().next().unwrap_or('?');
                if quote == b'\'' {
                    out.push(ch as u32);
                } else {
                    // Keep the UTF-8 bytes of the string as they are.
                    for byte in ch.to_string().bytes() {
                        out.push(byte as u32);
                    }
                }
                i += ch.len_utf8();
            }
        }
        self.pos = i;
        if quote == b'"' {
            let bytes: Vec<u8> = out.iter().map(|&v| v as u8).collect();
            let s = String::from_utf8(bytes.clone()).unwrap_or_else(|_| bytes.iter().map(|&b| b as char).collect());
            self.push(TokKind::Str(s), lo);
        } else {
            if out.is_empty() {
                return Err(Diagnostic::error(self.span(lo, i), "empty character literal"));
            }
            // Multi-char constants take the last char's value like gcc's low byte; a plain
            // char is signed.
            let v = *out.last().unwrap_or(&0);
            let value = if v < 256 { (v as u8) as i8 as i64 } else { v as i64 };
            self.push(TokKind::Char(value), lo);
        }
        Ok(())
    }

    /// Decodes the escape at `i` (the backslash); returns its value and the next position.
    fn escape(&self, i: usize) -> Result<(u32, usize), Diagnostic> {
        let c = if i + 1 < self.end { self.src[i + 1] } else { 0 };
        let simple = match c {
            b'n' => Some(10),
            b't' => Some(9),
            b'r' => Some(13),
            b'a' => Some(7),
            b'b' => Some(8),
            b'f' => Some(12),
            b'v' => Some(11),
            b'e' => Some(27),
            b'\\' => Some(92),
            b'\'' => Some(39),
            b'"' => Some(34),
            b'?' => Some(63),
            _ => None,
        };
        if let Some(v) = simple {
            return Ok((v, i + 2));
        }
        if (b'0'..=b'7').contains(&c) {
            let mut v = 0u32;
            let mut j = i + 1;
            while j < self.end && j < i + 4 && (b'0'..=b'7').contains(&self.src[j]) {
                v = v * 8 + (self.src[j] - b'0') as u32;
                j += 1;
            }
            return Ok((v & 0xff, j));
        }
        if c == b'x' {
            let mut v = 0u32;
            let mut j = i + 2;
            while j < self.end && self.src[j].is_ascii_hexdigit() {
                v = v.wrapping_mul(16) + (self.src[j] as char).to_digit(16).unwrap_or(0);
                j += 1;
            }
            if j == i + 2 {
                return Err(Diagnostic::error(self.span(i, j), "`\\x` escape without hex digits"));
            }
            return Ok((v & 0xff, j));
        }
        Err(Diagnostic::error(self.span(i, (i + 2).min(self.end)), "unknown escape sequence")
            .with_help("write `\\\\` for a backslash"))
    }
}

/// Turns the text of a preprocessing number into an integer or floating literal.
pub fn classify_number(s: &str) -> Option<TokKind> {
    let lower = s.to_ascii_lowercase();
    let is_hex = lower.starts_with("0x");
    let is_float = if is_hex { lower.contains('.') || lower.contains('p') } else { lower.contains('.') || lower.contains('e') };
    if is_float {
        let (body, single, long_double) = if is_hex {
            // In hex floats `f` is a digit before the `p` exponent; a suffix comes after it.
            match lower.rfind('p') {
                Some(p) if lower.ends_with('f') && p < lower.len() - 1 => (&lower[..lower.len() - 1], true, false),
                Some(p) if lower.ends_with('l') && p < lower.len() - 1 => (&lower[..lower.len() - 1], false, true),
                _ => (lower.as_str(), false, false),
            }
        } else if let Some(b) = lower.strip_suffix('f') {
            (b, true, false)
        } else if let Some(b) = lower.strip_suffix('l') {
            (b, false, true)
        } else {
            (lower.as_str(), false, false)
        };
        let value = if is_hex { parse_hex_float(&body[2..])? } else { body.parse::<f64>().ok()? };
        return Some(TokKind::Float { value, single, long_double });
    }
    let digits_end = lower.find(['u', 'l']).unwrap_or(lower.len());
    let (digits, suffix_text) = lower.split_at(digits_end);
    let mut suffix = IntSuffix::default();
    match suffix_text {
        "" => {}
        "u" => suffix.unsigned = true,
        "l" => suffix.longs = 1,
        "ll" => suffix.longs = 2,
        "ul" | "lu" => suffix = IntSuffix { unsigned: true, longs: 1 },
        "ull" | "llu" => suffix = IntSuffix { unsigned: true, longs: 2 },
        _ => return None,
    }
    // `lL` mixes are invalid in C; checking the original case keeps `Ll` out.
    if s.contains("lL") || s.contains("Ll") {
        return None;
    }
    let (radix, body) = if is_hex {
        (16, &digits[2..])
    } else if digits.starts_with("0b") {
        // C23 binary literals; typed like hex ones, so radix 16 tells lowering "not decimal".
        let value = u64::from_str_radix(&digits[2..], 2).ok()?;
        return Some(TokKind::Int { value, suffix, radix: 16 });
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() && radix == 16 {
        return None;
    }
    let value = if body.is_empty() { 0 } else { u64::from_str_radix(body, radix).ok()? };
    Some(TokKind::Int { value, suffix, radix })
}

/// GNU C's imaginary constants: a number with an `i` or `j` suffix (`2i`, `1.0iF`, `1.5fj`),
/// as `I` from <complex.h> expands to. The number without its `i` (a float or an integer).
fn imaginary_constant(s: &str) -> Option<TokKind> {
    let lower = s.to_ascii_lowercase();
    if lower.starts_with("0x") && !lower.contains('p') {
        return None;
    }
    let suffix_start = lower.rfind(|c: char| c.is_ascii_digit() || c == '.').map_or(0, |k| k + 1);
    let (number, suffix) = lower.split_at(suffix_start);
    let marks = suffix.matches(['i', 'j']).count();
    if marks != 1 {
        return None;
    }
    classify_number(&format!("{number}{}", suffix.replace(['i', 'j'], "")))
}

fn parse_hex_float(s: &str) -> Option<f64> {
    let (mant, exp) = match s.find('p') {
        Some(p) => (&s[..p], s[p + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (int_part, frac_part) = match mant.find('.') {
        Some(d) => (&mant[..d], &mant[d + 1..]),
        None => (mant, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int_part.chars() {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        v += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    Some(v * 2f64.powi(exp))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokKind> {
        lex(src, 0).unwrap().into_iter().map(|t| t.kind).collect()
    }
    fn one(src: &str) -> TokKind {
        let k = kinds(src);
        assert_eq!(k.len(), 2, "{src}: {k:?}");
        k[0].clone()
    }
    fn int(value: u64, unsigned: bool, longs: u8, radix: u32) -> TokKind {
        TokKind::Int { value, suffix: IntSuffix { unsigned, longs }, radix }
    }

    #[test]
    fn integer_literals() {
        assert_eq!(one("42"), int(42, false, 0, 10));
        assert_eq!(one("0x1F"), int(31, false, 0, 16));
        assert_eq!(one("017"), int(15, false, 0, 8));
        assert_eq!(one("0"), int(0, false, 0, 10));
        assert_eq!(one("10u"), int(10, true, 0, 10));
        assert_eq!(one("10UL"), int(10, true, 1, 10));
        assert_eq!(one("10ll"), int(10, false, 2, 10));
        assert_eq!(one("10LLU"), int(10, true, 2, 10));
        assert_eq!(one("0b101u"), int(5, true, 0, 16));
        assert!(lex("10lul", 0).is_err());
        assert!(lex("0b", 0).is_err());
        assert!(lex("08", 0).is_err());
    }

    #[test]
    fn float_literals() {
        assert_eq!(one("1.5"), TokKind::Float { value: 1.5, single: false, long_double: false });
        assert_eq!(one("1.5f"), TokKind::Float { value: 1.5, single: true, long_double: false });
        assert_eq!(one("2e3"), TokKind::Float { value: 2000.0, single: false, long_double: false });
        assert_eq!(one("1e-3L"), TokKind::Float { value: 1e-3, single: false, long_double: true });
        assert_eq!(one(".25"), TokKind::Float { value: 0.25, single: false, long_double: false });
        assert_eq!(one("3."), TokKind::Float { value: 3.0, single: false, long_double: false });
        assert_eq!(one("0x1.8p1"), TokKind::Float { value: 3.0, single: false, long_double: false });
        assert_eq!(one("0x1p-2f"), TokKind::Float { value: 0.25, single: true, long_double: false });
    }

    #[test]
    fn imaginary_constants() {
        assert_eq!(one("1.0iF"), TokKind::Imaginary { value: 1.0, single: true, long_double: false });
        assert_eq!(one("1.5fj"), TokKind::Imaginary { value: 1.5, single: true, long_double: false });
        assert_eq!(one("2.5i"), TokKind::Imaginary { value: 2.5, single: false, long_double: false });
        assert_eq!(one("3.0e2Li"), TokKind::Imaginary { value: 300.0, single: false, long_double: true });
        assert_eq!(one("0x1p3i"), TokKind::Imaginary { value: 8.0, single: false, long_double: false });
        let e = lex("2i", 0).unwrap_err();
        assert!(e.message.contains("integer imaginary constant"), "{}", e.message);
        for text in ["1.0q", "2ii", "1.0ij"] {
            let e = lex(text, 0).unwrap_err();
            assert!(e.message.contains("invalid number literal"), "{text}: {}", e.message);
        }
    }

    #[test]
    fn char_and_string_literals() {
        assert_eq!(one("'a'"), TokKind::Char(97));
        assert_eq!(one("'\\n'"), TokKind::Char(10));
        assert_eq!(one("'\\0'"), TokKind::Char(0));
        assert_eq!(one("'\\x41'"), TokKind::Char(65));
        assert_eq!(one("'\\377'"), TokKind::Char(-1));
        assert_eq!(one("\"a\\tb\\\"\""), TokKind::Str("a\tb\"".into()));
        assert!(lex("\"abc", 0).is_err());
    }

    #[test]
    fn punctuators_are_greedy() {
        let k = kinds("a<<=b->c...d&&e");
        let puncts: Vec<&str> = k.iter().filter_map(|t| if let TokKind::Punct(p) = t { Some(*p) } else { None }).collect();
        assert_eq!(puncts, vec!["<<=", "->", "...", "&&"]);
    }

    #[test]
    fn line_markers_and_pragmas() {
        let src = "# 1 \"/usr/include/stdio.h\" 1 3 4\nint x;\n# 5 \"a.c\" 2\n#pragma acc parallel\ny;\n";
        let toks = lex(src, 0).unwrap();
        assert!(toks[0].in_system_header);
        assert_eq!(toks[0].kind, TokKind::Ident("int".into()));
        let pragma = toks.iter().find(|t| t.kind == TokKind::Pragma).unwrap();
        assert!(!pragma.in_system_header);
        assert_eq!(&src[pragma.span.lo as usize..pragma.span.hi as usize], "#pragma acc parallel");
        assert_eq!(toks.len(), 7);
    }

    #[test]
    fn system_macro_expansions_in_user_code_are_user_code() {
        // What cpp writes for `bool f(void) { return true; }` after `#include <stdbool.h>`.
        let src = "# 1 \"p.c\"\n# 1 \"/usr/include/stdbool.h\" 1 3 4\nint hdr;\n# 2 \"p.c\" 2\n\n# 2 \"p.c\" 3 4\n_Bool\n# 2 \"p.c\"\n f(void) { return\n# 2 \"p.c\" 3 4\n 1\n# 2 \"p.c\"\n; }\n";
        let toks = lex(src, 0).unwrap();
        assert_eq!(toks[1].kind, TokKind::Ident("hdr".into()));
        assert!(toks[..3].iter().all(|t| t.in_system_header));
        let user: Vec<&Token> = toks.iter().skip(3).collect();
        assert_eq!(user[0].kind, TokKind::Ident("_Bool".into()));
        assert!(user.iter().all(|t| !t.in_system_header), "{user:?}");
    }

    /// The tokens of `src` as text, a run of numbers as `[` its elements' texts `]`.
    fn shapes(src: &str) -> Vec<String> {
        lex(src, 0)
            .unwrap()
            .into_iter()
            .filter(|t| t.kind != TokKind::Eof)
            .map(|t| match &t.kind {
                TokKind::Numbers(run) => {
                    let texts: Vec<&str> = (0..run.len()).map(|k| run.element_span(k)).map(|s| &src[s.lo as usize..s.hi as usize]).collect();
                    assert_eq!(run.span(), t.span, "a run's span is its token's");
                    format!("[{}]", texts.join(" "))
                }
                _ => src[t.span.lo as usize..t.span.hi as usize].to_string(),
            })
            .collect()
    }

    #[test]
    fn an_initializers_numbers_are_one_token_with_their_values() {
        let src = "double w[] = {1, -2, 0x1F, 2.5e-3f, 7UL};";
        assert_eq!(shapes(src), ["double", "w", "[", "]", "=", "{", "[1 -2 0x1F 2.5e-3f 7UL]", "}", ";"]);
        let toks = lex(src, 0).unwrap();
        let TokKind::Numbers(run) = &toks[6].kind else { panic!("{:?}", toks[6]) };
        assert_eq!(run.literal(1), (NumberLiteral::Int { value: 2, suffix: IntSuffix::default(), radix: 10 }, true));
        assert_eq!(run.literal(2), (NumberLiteral::Int { value: 31, suffix: IntSuffix::default(), radix: 16 }, false));
        assert_eq!(run.literal(3), (NumberLiteral::Float { value: 2.5e-3, single: true, long_double: false }, false));
        assert_eq!(run.literal(4), (NumberLiteral::Int { value: 7, suffix: IntSuffix { unsigned: true, longs: 1 }, radix: 10 }, false));
    }

    #[test]
    fn a_run_ends_before_an_element_that_is_not_a_plain_number() {
        assert_eq!(
            shapes("int a[] = {1, 2, x, 3, 4 * 2, - 5, -y, f(6, 7), 8, 9,};"),
            ["int", "a", "[", "]", "=", "{", "[1 2]", ",", "x", ",", "[3]", ",", "4", "*", "2", ",", "-", "5", ",", "-", "y", ",", "f", "(", "6", ",", "7", ")", ",", "[8 9]", ",", "}", ";"]
        );
        // Nested lists and designators.
        assert_eq!(
            shapes("int m[2][2] = {{1, 2}, [1] = {3}}; struct p q = {.x = 1, 2};"),
            ["int", "m", "[", "2", "]", "[", "2", "]", "=", "{", "{", "[1 2]", "}", ",", "[", "1", "]", "=", "{", "[3]", "}", "}", ";", "struct", "p", "q", "=", "{", ".", "x", "=", "1", ",", "[2]", "}", ";"]
        );
        // Text of 256 bytes or more is not held by a run.
        let long = format!("1.{}", "0".repeat(300));
        assert_eq!(shapes(&format!("double d[] = {{{long}, 2}};")), ["double", "d", "[", "]", "=", "{", long.as_str(), ",", "[2]", "}", ";"]);
    }

    #[test]
    fn braces_that_are_not_initializers_keep_their_numbers_as_tokens() {
        // A block whose first statement is a comma expression, and a compound literal.
        assert_eq!(shapes("void f(void) { 1, 2, g(); }"), ["void", "f", "(", "void", ")", "{", "1", ",", "2", ",", "g", "(", ")", ";", "}"]);
        assert_eq!(shapes("p = (int[]){1, 2};"), ["p", "=", "(", "int", "[", "]", ")", "{", "1", ",", "2", "}", ";"]);
        assert_eq!(shapes("enum { A = 1, B };"), ["enum", "{", "A", "=", "1", ",", "B", "}", ";"]);
    }

    #[test]
    fn a_line_marker_inside_an_initializer_splits_the_run() {
        let src = "int a[] = {1, 2,\n# 40 \"p.c\"\n3,\n4};\n";
        assert_eq!(shapes(src), ["int", "a", "[", "]", "=", "{", "[1 2]", ",", "[3 4]", "}", ";"]);
    }
}
