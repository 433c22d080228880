//! What the parser reads off raw tokens without parsing them: the names a skipped system
//! header declaration declares as typedefs, and what in a struct member's tokens can make a
//! layout other than the natural one.

use crate::diag::Span;
use crate::front::lexer::{TokKind, Token};

use super::QUALIFIER_KEYWORDS;

/// What in a struct member's declaration (its tokens) can make the struct's layout other than
/// the natural one: a bit-field width, an attribute, `_Alignas`.
pub(super) fn field_layout_note(toks: &[Token]) -> Option<&'static str> {
    let mut depth = 0i32;
    for t in toks {
        match &t.kind {
            TokKind::Punct("(" | "[" | "{") => depth += 1,
            TokKind::Punct(")" | "]" | "}") => depth -= 1,
            TokKind::Punct(":") if depth == 0 => return Some("a bit-field"),
            TokKind::Ident(w) if matches!(w.as_str(), "__attribute__" | "__attribute") => return Some("an attribute"),
            TokKind::Ident(w) if matches!(w.as_str(), "_Alignas" | "alignas") => return Some("`_Alignas`"),
            _ => {}
        }
    }
    None
}

/// The names a skipped `typedef` declaration declares (see the parser's module doc).
pub(super) fn typedef_names_in(toks: &[Token]) -> Vec<String> {
    // Drop attribute/asm groups and brace bodies, then split at depth-0 commas.
    let mut cleaned: Vec<&Token> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if matches!(t.ident(), Some("__attribute__" | "__attribute" | "__asm__" | "__asm" | "asm")) {
            i += 1;
            let mut depth = 0;
            while i < toks.len() {
                if toks[i].is_punct("(") {
                    depth += 1;
                } else if toks[i].is_punct(")") {
                    depth -= 1;
                    if depth <= 0 {
                        i += 1;
                        break;
                    }
                }
                i += 1;
            }
            continue;
        }
        if t.is_punct("{") {
            let mut depth = 0;
            while i < toks.len() {
                if toks[i].is_punct("{") {
                    depth += 1;
                } else if toks[i].is_punct("}") {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        cleaned.push(t);
        i += 1;
    }
    let mut names = Vec::new();
    let mut segment: Vec<&Token> = Vec::new();
    let mut depth = 0;
    for t in cleaned.into_iter().chain(std::iter::once(&Token { kind: TokKind::Punct(","), span: Span::default(), in_system_header: true })) {
        if t.is_punct("(") || t.is_punct("[") {
            depth += 1;
        } else if t.is_punct(")") || t.is_punct("]") {
            depth -= 1;
        }
        if (t.is_punct(",") && depth == 0) || t.is_punct(";") {
            if let Some(n) = declarator_name_in(&segment) {
                names.push(n);
            }
            segment.clear();
            continue;
        }
        segment.push(t);
    }
    names
}

fn declarator_name_in(seg: &[&Token]) -> Option<String> {
    // `( * name` (pointer to function or array).
    for w in seg.windows(3) {
        if w[0].is_punct("(")
            && w[1].is_punct("*")
            && let Some(n) = w[2].ident()
        {
            return Some(n.to_string());
        }
    }
    // Otherwise the last identifier before the first depth-0 `(` or `[`.
    let mut last = None;
    for t in seg {
        if t.is_punct("(") || t.is_punct("[") {
            break;
        }
        if let Some(w) = t.ident()
            && !QUALIFIER_KEYWORDS.contains(&w)
        {
            last = Some(w.to_string());
        }
    }
    last
}
