//! The front end's mutation fuzzer (the `yosegi-fuzz` binary drives it): the mutations of
//! preprocessed C text, and the check one input must pass. Every input, however broken, must end
//! in a compiled program or in diagnostics: never a panic, a hang, a stack overflow or another
//! signal.
//!
//! An input is a corpus file preprocessed once by `cpp` and then mutated, mostly inside the
//! user's own lines (cpp's line markers say which lines come from a system header). Input `k`
//! of a run depends only on the seed, `k` and the corpus ([`fuzz_input`]), so a run is
//! reproducible whatever the number of workers.

use std::path::{Path, PathBuf};

use crate::diag::{self, Diagnostic};
use crate::driver::{self, CompiledProgram};
use crate::source::parse_line_marker;
use crate::opt::{PassConfig, StagingMode};

/// One corpus file: its path and its preprocessed text.
#[derive(Clone, Debug)]
pub struct CorpusEntry {
    pub path: PathBuf,
    pub text: String,
}

/// SplitMix64: small, fast, and the same on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The generator of input `k` of a run with `seed`.
    pub fn for_input(seed: u64, k: u64) -> Rng {
        let mut r = Rng(seed ^ 0x5851_f42d_4c95_7f2d);
        let s = r.next_u64();
        Rng(s ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// One fuzz input: the mutated text, where it came from, and how it was made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuzzInput {
    /// Index of the corpus entry it was made from.
    pub entry: usize,
    pub text: String,
    /// The mutations applied, in order (for the reports).
    pub mutations: Vec<String>,
    /// Whether the passes run with staging forced on (else `auto`).
    pub force_staging: bool,
}

/// Input `k` of a run with `seed` over `corpus` (not empty).
pub fn fuzz_input(corpus: &[CorpusEntry], seed: u64, k: u64) -> FuzzInput {
    let mut rng = Rng::for_input(seed, k);
    let entry = rng.below(corpus.len());
    let mut text = corpus[entry].text.clone();
    let mut mutations = Vec::new();
    let count = if rng.chance(1, 3) { rng.range(2, 4) } else { 1 };
    for _ in 0..count {
        if rng.chance(1, 12) {
            let donor = rng.below(corpus.len());
            mutations.push(splice(&mut text, &corpus[donor].text, &mut rng));
        } else {
            mutations.push(mutate(&mut text, &mut rng));
        }
    }
    let force_staging = rng.chance(1, 4);
    FuzzInput { entry, text, mutations, force_staging }
}

// ---- where to mutate -------------------------------------------------------------------------

/// Byte ranges (without the newline) of the lines of `text` that are the user's: not a line
/// marker, not from a system header nor cpp's `<built-in>`/`<command-line>`.
pub fn user_lines(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut user = true;
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let end = start + line.len();
        let body = line.strip_suffix('\n').unwrap_or(line);
        if let Some(marker) = body.starts_with('#').then(|| parse_line_marker(body)).flatten() {
            let name = marker.file.to_string_lossy();
            user = !marker.system && !name.starts_with('<');
        } else if user {
            out.push((start, start + body.len()));
        }
        start = end;
    }
    out
}

/// Byte ranges of every line of `text` (without the newline).
fn all_lines(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        out.push((start, start + body.len()));
        start += line.len();
    }
    out
}

/// The lines to mutate: mostly the user's, now and then any line.
fn lines_for(text: &str, rng: &mut Rng) -> Vec<(usize, usize)> {
    let user = user_lines(text);
    if user.is_empty() || rng.chance(1, 12) { all_lines(text) } else { user }
}

/// Rough C tokens of `text[lo..hi]`: identifiers, numbers, literals, one-character punctuation.
fn tokens_in(text: &str, lo: usize, hi: usize) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = lo;
    while i < hi {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if c.is_ascii_alphanumeric() || c == b'_' || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let number = c.is_ascii_digit() || c == b'.';
            i += 1;
            while i < hi {
                let d = bytes[i];
                let exponent_sign = number && (d == b'+' || d == b'-') && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P');
                if d.is_ascii_alphanumeric() || d == b'_' || (number && d == b'.') || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < hi && bytes[i] != c {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(hi);
        } else {
            i += 1;
            while i < hi && !text.is_char_boundary(i) {
                i += 1;
            }
        }
        out.push((start, i.min(hi)));
    }
    out
}

/// A position on a character boundary in `lo..=hi`.
fn position_in(text: &str, lo: usize, hi: usize, rng: &mut Rng) -> usize {
    let mut p = rng.range(lo, hi);
    while !text.is_char_boundary(p) {
        p -= 1;
    }
    p
}

/// A random position inside the chosen lines.
fn random_position(text: &str, lines: &[(usize, usize)], rng: &mut Rng) -> usize {
    let &(lo, hi) = rng.pick(lines);
    position_in(text, lo, hi, rng)
}

/// A random token of the chosen lines that satisfies `want` (a few tries), else any token.
fn random_token(text: &str, lines: &[(usize, usize)], rng: &mut Rng, want: impl Fn(&str) -> bool) -> Option<(usize, usize)> {
    let mut fallback = None;
    for _ in 0..64 {
        let &(lo, hi) = rng.pick(lines);
        let tokens = tokens_in(text, lo, hi);
        if tokens.is_empty() {
            continue;
        }
        let candidates: Vec<_> = tokens.iter().copied().filter(|&(a, b)| want(&text[a..b])).collect();
        if !candidates.is_empty() {
            return Some(*rng.pick(&candidates));
        }
        fallback.get_or_insert(*rng.pick(&tokens));
    }
    fallback
}

fn is_number(tok: &str) -> bool {
    tok.as_bytes().first().is_some_and(|c| c.is_ascii_digit() || *c == b'.')
}

fn is_identifier(tok: &str) -> bool {
    tok.as_bytes().first().is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
}

fn is_operand(tok: &str) -> bool {
    is_number(tok) || is_identifier(tok) && !KEYWORDS.contains(&tok)
}

// ---- the vocabularies ----------------------------------------------------------------------

const ODD_NUMBERS: &[&str] = &[
    "99999999999999999999",
    "-1",
    "0",
    "2147483648",
    "1e308",
    "0x7fffffffffffffff",
    "1.0iF",
    "-2147483649",
    "4294967296",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "1e-400",
    "1e999",
    "0x",
    "08",
    "1.5e",
    "0.0",
    "-0",
    "1",
    "2",
    "3",
    "0x1p-1074",
    "'\\0'",
    "1ULL",
    "1.f",
    "(-1)",
    "(1 << 31)",
    "(0 / 0)",
];

const KEYWORDS: &[&str] = &[
    "int", "char", "short", "long", "float", "double", "void", "signed", "unsigned", "_Bool", "struct", "union",
    "enum", "typedef", "static", "extern", "const", "volatile", "restrict", "inline", "register", "auto", "if",
    "else", "for", "while", "do", "switch", "case", "default", "break", "continue", "return", "goto", "sizeof",
    "_Alignof", "_Complex", "__attribute__", "__restrict", "__extension__", "__typeof__", "_Static_assert",
];

const PUNCTUATION: &[&str] = &[
    "(", ")", "[", "]", "{", "}", ";", ",", ":", "?", ".", "->", "++", "--", "&", "*", "+", "-", "~", "!", "/", "%",
    "<<", ">>", "<", ">", "<=", ">=", "==", "!=", "^", "|", "&&", "||", "=", "*=", "/=", "%=", "+=", "-=", "<<=",
    ">>=", "&=", "^=", "|=", "...", "#", "\"", "'", "\\", "@", "$", "`", "/*", "*/", "//",
];

const PRAGMA_LINES: &[&str] = &[
    "#pragma acc parallel loop",
    "#pragma acc kernels",
    "#pragma acc parallel",
    "#pragma acc loop",
    "#pragma acc serial",
    "#pragma acc data copy(a)",
    "#pragma acc enter data copyin(a)",
    "#pragma acc exit data delete(a)",
    "#pragma acc update self(a)",
    "#pragma acc update device(a[0:n])",
    "#pragma acc wait",
    "#pragma acc atomic",
    "#pragma acc atomic update",
    "#pragma acc atomic capture",
    "#pragma acc routine seq",
    "#pragma acc host_data use_device(a)",
    "#pragma acc declare create(a)",
    "#pragma acc cache(a[0:4])",
    "#pragma acc init",
    "#pragma acc shutdown",
    "#pragma acc set device_num(0)",
    "#pragma acc loop seq",
    "#pragma acc loop gang vector",
    "#pragma acc parallel loop collapse(2) reduction(+:s)",
    "#pragma acc kernels loop independent",
    "#pragma acc",
    "#pragma acc end parallel",
    "#pragma omp parallel for",
    "#pragma",
    "#pragma acc parallel loop tile(*, 4)",
];

const CLAUSES: &[&str] = &[
    "copy", "copyin", "copyout", "create", "present", "no_create", "deviceptr", "attach", "detach", "delete", "private",
    "firstprivate", "reduction", "collapse", "tile", "gang", "worker", "vector", "num_gangs", "num_workers",
    "vector_length", "async", "wait", "if", "self", "default", "device_type", "seq", "independent", "auto", "finalize",
    "if_present", "use_device", "host", "device", "device_num", "device_resident", "link", "bind", "nohost", "read",
    "write", "update", "capture", "dtype",
];

const REDUCTION_OPERATORS: &[&str] = &["+", "*", "max", "min", "&", "|", "^", "&&", "||", "-", "/", "%", "", "foo", "+:"];

/// Identifiers of the user's lines (to name variables in clauses); a few defaults if none.
fn identifiers(text: &str, lines: &[(usize, usize)], rng: &mut Rng) -> Vec<String> {
    let mut names = Vec::new();
    for _ in 0..16 {
        let &(lo, hi) = rng.pick(lines);
        for (a, b) in tokens_in(text, lo, hi) {
            let tok = &text[a..b];
            if is_identifier(tok) && !KEYWORDS.contains(&tok) && tok != "pragma" && tok != "acc" {
                names.push(tok.to_string());
            }
        }
    }
    if names.is_empty() {
        names.extend(["a", "n", "i", "x", "main"].map(String::from));
    }
    names
}

/// An argument: a number (often an odd one), a variable, an expression or garbage.
fn random_argument(names: &[String], rng: &mut Rng) -> String {
    match rng.below(10) {
        0..=2 => rng.pick(ODD_NUMBERS).to_string(),
        3..=5 => rng.pick(names).clone(),
        6 => format!("{} + {}", rng.pick(names), rng.range(0, 8)),
        7 => "*".to_string(),
        8 => rng.pick(PUNCTUATION).to_string(),
        _ => String::new(),
    }
}

/// A variable list with optional sections (`a[lo:len]`, `a[:n][2:3]`) and modifiers.
fn random_var_list(names: &[String], rng: &mut Rng) -> String {
    let mut vars = Vec::new();
    for _ in 0..rng.range(1, 3) {
        let mut v = if rng.chance(1, 10) { random_argument(names, rng) } else { rng.pick(names).clone() };
        for _ in 0..[0, 0, 1, 1, 2, 3][rng.below(6)] {
            let lo = if rng.chance(1, 3) { String::new() } else { random_argument(names, rng) };
            let len = random_argument(names, rng);
            v.push_str(&if rng.chance(1, 6) { format!("[{lo}]") } else { format!("[{lo}:{len}]") });
        }
        vars.push(v);
    }
    let prefix = match rng.below(12) {
        0 => "zero: ",
        1 => "readonly: ",
        2 => "zero:readonly: ",
        3 => "bogus: ",
        _ => "",
    };
    format!("{prefix}{}", vars.join(", "))
}

/// A random OpenACC clause with random (sometimes garbage) arguments.
fn random_clause(names: &[String], rng: &mut Rng) -> String {
    let name = *rng.pick(CLAUSES);
    let arg = |rng: &mut Rng| random_argument(names, rng);
    let args = match name {
        "copy" | "copyin" | "copyout" | "create" | "present" | "no_create" | "deviceptr" | "attach" | "detach"
        | "delete" | "private" | "firstprivate" | "use_device" | "host" | "device" | "self" | "device_resident"
        | "link" => Some(random_var_list(names, rng)),
        "reduction" => Some(format!("{}:{}", rng.pick(REDUCTION_OPERATORS), random_var_list(names, rng))),
        "collapse" => Some(match rng.below(4) {
            0 => format!("force:{}", arg(rng)),
            _ => arg(rng),
        }),
        "tile" | "num_gangs" | "wait" => Some((0..rng.range(1, 4)).map(|_| arg(rng)).collect::<Vec<_>>().join(", ")),
        "gang" => Some(match rng.below(5) {
            0 => format!("static:{}", arg(rng)),
            1 => format!("num:{}", arg(rng)),
            2 => format!("dim:{}", arg(rng)),
            3 => format!("static:*, num:{}", arg(rng)),
            _ => arg(rng),
        }),
        "default" => Some(rng.pick(&["none", "present", "shared", "", "x"]).to_string()),
        "device_type" | "dtype" => Some(rng.pick(&["*", "nvidia", "host", "nvidia, host", "", "radeon"]).to_string()),
        "if" | "async" | "worker" | "vector" | "num_workers" | "vector_length" | "device_num" | "bind" => {
            Some(arg(rng))
        }
        _ => None,
    };
    match args {
        // Clauses that take an argument are sometimes written without, and the other way round.
        Some(_) if rng.chance(1, 10) => name.to_string(),
        None if rng.chance(1, 10) => format!("{name}({})", arg(rng)),
        Some(a) => {
            if rng.chance(1, 20) {
                format!("{name}({a}")
            } else {
                format!("{name}({a})")
            }
        }
        None => name.to_string(),
    }
}

/// A random token of the vocabulary (keywords, punctuation, numbers, a pragma line).
fn random_vocabulary_token(names: &[String], rng: &mut Rng) -> String {
    match rng.below(10) {
        0..=2 => rng.pick(KEYWORDS).to_string(),
        3..=6 => rng.pick(PUNCTUATION).to_string(),
        7 => rng.pick(ODD_NUMBERS).to_string(),
        8 => rng.pick(names).clone(),
        _ => format!("\n{}\n", rng.pick(PRAGMA_LINES)),
    }
}

// ---- the mutations -------------------------------------------------------------------------

/// Applies one random mutation to `text` and says which.
pub fn mutate(text: &mut String, rng: &mut Rng) -> String {
    if text.is_empty() {
        text.push_str("int main(void) { return 0; }\n");
    }
    let lines = lines_for(text, rng);
    let weights: &[(u32, fn(&mut String, &[(usize, usize)], &mut Rng) -> String)] = &[
        (8, delete_range),
        (10, delete_token),
        (6, delete_line),
        (5, duplicate_range),
        (5, duplicate_line),
        (3, truncate),
        (18, insert_clause),
        (10, replace_number),
        (3, deep_nesting),
        (5, swap_lines),
        (12, insert_token),
        (4, replace_token),
        (8, replace_identifier),
        (5, replace_type),
        (5, replace_operator),
    ];
    let total: u32 = weights.iter().map(|w| w.0).sum();
    let mut roll = rng.below(total as usize) as u32;
    for &(weight, mutation) in weights {
        if roll < weight {
            return mutation(text, &lines, rng);
        }
        roll -= weight;
    }
    unreachable!()
}

fn delete_range(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let start = random_position(text, lines, rng);
    let len = if rng.chance(1, 4) { rng.range(1, 2000) } else { rng.range(1, 40) };
    let end = position_in(text, start, (start + len).min(text.len()), rng).max(start);
    text.replace_range(start..end, "");
    format!("delete range {start}..{end}")
}

fn delete_token(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    match random_token(text, lines, rng, |_| true) {
        Some((a, b)) => {
            let what = format!("delete token `{}` at {a}", &text[a..b]);
            text.replace_range(a..b, "");
            what
        }
        None => delete_line(text, lines, rng),
    }
}

fn delete_line(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let &(lo, hi) = rng.pick(lines);
    let hi = if text.as_bytes().get(hi) == Some(&b'\n') { hi + 1 } else { hi };
    text.replace_range(lo..hi, "");
    format!("delete line at {lo}")
}

fn duplicate_range(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let start = random_position(text, lines, rng);
    let len = rng.range(1, 400);
    let end = position_in(text, start, (start + len).min(text.len()), rng).max(start);
    let piece = text[start..end].to_string();
    let at = random_position(text, lines, rng);
    text.insert_str(at, &piece);
    format!("duplicate range {start}..{end} at {at}")
}

fn duplicate_line(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let &(lo, hi) = rng.pick(lines);
    let line = format!("{}\n", &text[lo..hi]);
    let times = if rng.chance(1, 8) { rng.range(2, 50) } else { 1 };
    let &(at, _) = rng.pick(lines);
    text.insert_str(at, &line.repeat(times));
    format!("duplicate line at {lo} {times}x at {at}")
}

fn truncate(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let at = random_position(text, lines, rng);
    text.truncate(at);
    format!("truncate at {at}")
}

fn insert_clause(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let names = identifiers(text, lines, rng);
    let clause = random_clause(&names, rng);
    let pragmas: Vec<(usize, usize)> =
        lines.iter().copied().filter(|&(lo, hi)| text[lo..hi].trim_start().starts_with("#pragma acc")).collect();
    if pragmas.is_empty() || rng.chance(1, 10) {
        let &(at, _) = rng.pick(lines);
        let line = format!("{} {clause}\n", rng.pick(PRAGMA_LINES));
        text.insert_str(at, &line);
        return format!("insert line `{}` at {at}", line.trim_end());
    }
    let &(lo, hi) = rng.pick(&pragmas);
    // At the end of the line, or after one of its words.
    let at = if rng.chance(1, 2) {
        hi
    } else {
        let words: Vec<usize> = tokens_in(text, lo, hi).iter().map(|t| t.1).collect();
        *rng.pick(&words)
    };
    text.insert_str(at, &format!(" {clause}"));
    format!("insert clause `{clause}` at {at}")
}

fn replace_number(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let Some((a, b)) = random_token(text, lines, rng, is_number) else { return insert_token(text, lines, rng) };
    let number = *rng.pick(ODD_NUMBERS);
    let what = format!("replace `{}` at {a} with {number}", &text[a..b]);
    text.replace_range(a..b, number);
    what
}

fn deep_nesting(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => {
            let Some((a, b)) = random_token(text, lines, rng, is_operand) else { return truncate(text, lines, rng) };
            let n = rng.range(1000, 5000);
            let wrapped = format!("{}{}{}", "(".repeat(n), &text[a..b], ")".repeat(n));
            text.replace_range(a..b, &wrapped);
            format!("wrap the token at {a} in {n} parentheses")
        }
        1 => {
            // A statement line inside a function (ends with `;`), in 3000 nested blocks.
            let statements: Vec<(usize, usize)> =
                lines.iter().copied().filter(|&(lo, hi)| text[lo..hi].trim_end().ends_with(';')).collect();
            let &(lo, hi) = if statements.is_empty() { rng.pick(lines) } else { rng.pick(&statements) };
            let n = rng.range(2000, 4000);
            let unbalanced = usize::from(rng.chance(1, 8));
            text.insert_str(hi, &"}".repeat(n - unbalanced));
            text.insert_str(lo, &"{".repeat(n));
            format!("nest the line at {lo} in {n} blocks")
        }
        2 => {
            let Some((a, b)) = random_token(text, lines, rng, is_operand) else { return truncate(text, lines, rng) };
            let op = *rng.pick(&[" + ", " * ", " - ", ", ", " && ", " < ", " ? 1 : ", " = ", "."]);
            let n = rng.range(5000, 20000);
            let term = text[a..b].to_string();
            let mut chain = String::with_capacity(n * (term.len() + op.len()));
            for i in 0..n {
                if i > 0 {
                    chain.push_str(op);
                }
                chain.push_str(&term);
            }
            text.replace_range(a..b, &chain);
            format!("replace the token at {a} with a chain of {n} terms `{}`", op.trim())
        }
        _ => {
            let Some((a, b)) = random_token(text, lines, rng, is_operand) else { return truncate(text, lines, rng) };
            let op = *rng.pick(&["-", "!", "~", "*", "&", "++", "(int)", "sizeof "]);
            let n = rng.range(1000, 10000);
            text.insert_str(a, &op.repeat(n));
            let _ = b;
            format!("prefix the token at {a} with {n} `{op}`")
        }
    }
}

fn swap_lines(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let x = *rng.pick(lines);
    let y = *rng.pick(lines);
    let (first, second) = if x.0 <= y.0 { (x, y) } else { (y, x) };
    if first == second || first.1 > second.0 {
        return delete_line(text, lines, rng);
    }
    let a = text[first.0..first.1].to_string();
    let b = text[second.0..second.1].to_string();
    text.replace_range(second.0..second.1, &a);
    text.replace_range(first.0..first.1, &b);
    format!("swap the lines at {} and {}", first.0, second.0)
}

fn insert_token(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let names = identifiers(text, lines, rng);
    let token = random_vocabulary_token(&names, rng);
    let at = match random_token(text, lines, rng, |_| true) {
        Some((a, b)) => {
            if rng.chance(1, 2) {
                a
            } else {
                b
            }
        }
        None => random_position(text, lines, rng),
    };
    text.insert_str(at, &format!(" {token} "));
    format!("insert `{}` at {at}", token.trim())
}

fn replace_token(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let names = identifiers(text, lines, rng);
    let Some((a, b)) = random_token(text, lines, rng, |_| true) else { return insert_token(text, lines, rng) };
    let token = random_vocabulary_token(&names, rng);
    let what = format!("replace `{}` at {a} with `{}`", &text[a..b], token.trim());
    text.replace_range(a..b, &token);
    what
}

/// Inserts a run of the donor's user lines (a loop with its pragma, a declaration, a function)
/// at the start of a user line of `text`.
fn splice(text: &mut String, donor: &str, rng: &mut Rng) -> String {
    let theirs = user_lines(donor);
    let ours = user_lines(text);
    if theirs.is_empty() || ours.is_empty() {
        return mutate(text, rng);
    }
    let first = rng.below(theirs.len());
    let last = (first + rng.range(0, 12)).min(theirs.len() - 1);
    let mut piece = String::new();
    for &(lo, hi) in &theirs[first..=last] {
        piece.push_str(&donor[lo..hi]);
        piece.push('\n');
    }
    let &(at, _) = rng.pick(&ours);
    text.insert_str(at, &piece);
    format!("splice {} lines of another corpus file at {at}", last - first + 1)
}

/// One identifier replaced by another of the file's (a scalar where an array was, a function
/// where a variable was, a loop index of another loop).
fn replace_identifier(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let names = identifiers(text, lines, rng);
    let Some((a, b)) = random_token(text, lines, rng, |t| is_identifier(t) && !KEYWORDS.contains(&t)) else {
        return insert_token(text, lines, rng);
    };
    let name = rng.pick(&names).clone();
    let what = format!("replace `{}` at {a} with `{name}`", &text[a..b]);
    text.replace_range(a..b, &name);
    what
}

const TYPES: &[&str] = &[
    "int", "char", "short", "long", "long long", "float", "double", "long double", "void", "unsigned", "signed",
    "_Bool", "int *", "double *", "const int", "struct s", "void *", "unsigned char", "_Complex double", "size_t",
];

/// A type keyword replaced by another type.
fn replace_type(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    let is_type = |t: &str| matches!(t, "int" | "char" | "short" | "long" | "float" | "double" | "unsigned" | "signed" | "void" | "size_t" | "const");
    let Some((a, b)) = random_token(text, lines, rng, is_type) else { return replace_identifier(text, lines, rng) };
    let ty = *rng.pick(TYPES);
    let what = format!("replace the type `{}` at {a} with `{ty}`", &text[a..b]);
    text.replace_range(a..b, ty);
    what
}

/// An operator replaced by another.
fn replace_operator(text: &mut String, lines: &[(usize, usize)], rng: &mut Rng) -> String {
    const OPERATORS: &[&str] = &[
        "+", "-", "*", "/", "%", "<", ">", "<=", ">=", "==", "!=", "&&", "||", "&", "|", "^", "<<", ">>", "=", "+=",
        "-=", "*=", "/=", "++", "--", ",", "?", ":", "!", "~", "->", ".",
    ];
    let is_operator = |t: &str| matches!(t, "+" | "-" | "*" | "/" | "%" | "<" | ">" | "=" | "&" | "|" | "^" | "!");
    let Some((a, b)) = random_token(text, lines, rng, is_operator) else { return replace_token(text, lines, rng) };
    let op = *rng.pick(OPERATORS);
    let what = format!("replace the operator `{}` at {a} with `{op}`", &text[a..b]);
    text.replace_range(a..b, op);
    what
}

// ---- the check -----------------------------------------------------------------------------

/// What became of an input that passed the check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Compiled,
    Rejected,
}

/// Compiles `text` (preprocessed, as if from `path`) and runs everything that reads the result:
/// on success `explain`, the host C, the CUDA C and the IR text; on failure the rendered
/// diagnostics. Panics, like the compiler would, on anything wrong: a failure without an error,
/// an error without a message, a success that carries an error. `tuning_dir` is where `explain`
/// looks for measured winners (give an empty or missing directory).
pub fn check_input(path: &Path, text: String, force_staging: bool, tuning_dir: &Path) -> Verdict {
    let passes =
        PassConfig { staging: if force_staging { StagingMode::Force } else { StagingMode::Auto }, ..PassConfig::default() };
    match driver::compile_preprocessed(path.to_path_buf(), text, &passes) {
        Ok(program) => {
            check_messages(&program.warnings);
            assert!(
                !program.warnings.iter().any(Diagnostic::is_error),
                "fuzz check: a compiled program carries an error: {:?}",
                program.warnings.iter().find(|d| d.is_error()).map(|d| &d.message)
            );
            let _ = diag::render(&program.sources, &program.warnings, false);
            use_program(&program, tuning_dir);
            Verdict::Compiled
        }
        Err((sources, diags)) => {
            check_messages(&diags.0);
            assert!(diags.0.iter().any(Diagnostic::is_error), "fuzz check: the compiler failed without an error");
            let rendered = diag::render(&sources, &diags.0, false);
            assert!(!rendered.trim().is_empty(), "fuzz check: the diagnostics render as nothing");
            Verdict::Rejected
        }
    }
}

fn check_messages(diags: &[Diagnostic]) {
    for d in diags {
        assert!(!d.message.trim().is_empty(), "fuzz check: a diagnostic without a message: {d:?}");
    }
}

fn use_program(program: &CompiledProgram, tuning_dir: &Path) {
    let _ = crate::explain::explain_with_tuning_cache(program, Some(tuning_dir.to_path_buf()));
    let _ = driver::host_program(program);
    let _ = crate::back::cuda::module_cuda(&program.module);
    let _ = crate::ir::text::module_text(&program.module);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Vec<CorpusEntry> {
        let text = "# 1 \"t.c\"\n# 1 \"<built-in>\"\n# 1 \"/usr/include/stdio.h\" 1 3 4\nextern int printf(const char *, ...);\n\
                    # 2 \"t.c\" 2\nint main(void) {\n    double a[100]; int n = 100;\n#pragma acc parallel loop copy(a[0:n])\n    for (int i = 0; i < n; i++) a[i] = 2.0 * i;\n    printf(\"%f\\n\", a[3]);\n    return 0;\n}\n";
        vec![CorpusEntry { path: "t.c".into(), text: text.to_string() }]
    }

    #[test]
    fn inputs_depend_only_on_the_seed_and_the_index() {
        let corpus = corpus();
        for k in 0..300 {
            let a = fuzz_input(&corpus, 7, k);
            let b = fuzz_input(&corpus, 7, k);
            assert_eq!(a, b, "input {k}");
        }
        let differ = (0..50).filter(|&k| fuzz_input(&corpus, 7, k).text != fuzz_input(&corpus, 8, k).text).count();
        assert!(differ > 40, "{differ}");
    }

    #[test]
    fn user_lines_leave_out_headers_and_markers() {
        let corpus = corpus();
        let text = &corpus[0].text;
        let lines: Vec<&str> = user_lines(text).into_iter().map(|(a, b)| &text[a..b]).collect();
        assert_eq!(lines.first(), Some(&"int main(void) {"));
        assert!(!lines.iter().any(|l| l.contains("printf(const") || l.starts_with("# ")));
    }

    /// Runs `f` on a thread with the CLI's stack.
    fn on_compiler_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| {
            let worker = std::thread::Builder::new().stack_size(driver::COMPILER_STACK_BYTES).spawn_scoped(s, f);
            worker.unwrap().join().unwrap()
        })
    }

    /// Inputs the fuzzer found panicking (arithmetic overflow: `cargo test` checks it, release
    /// builds wrapped silently), reduced by hand.
    #[test]
    fn found_by_the_fuzzer() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            // The constant after the largest enum value has no value we can compute.
            ("enum_after_the_largest.c", "enum big { A = 0x7fffffffffffffff, B };\nint main(void) { return 0; }\n"),
            // A neighbour too far away for a halo: not staged, no overflowing halo.
            (
                "far_neighbour.c",
                "void f(int n, double *restrict a, double *restrict b) {\n#pragma acc parallel loop\n    for (int i = 1; i < n - 1; i++)\n        b[i] = a[i - 1] + a[i + 0x7fffffffffffffff];\n}\n",
            ),
            // The offset is i64::MIN: `abs` of it overflows.
            (
                "far_neighbour_min.c",
                "void f(int n, double *restrict a, double *restrict b) {\n#pragma acc parallel loop\n    for (int i = 1; i < n - 1; i++)\n        b[i] = a[i - 1] + a[i - -9223372036854775808] + a[i + 1];\n}\n",
            ),
            // A private copy's section starting at i64::MIN: the tile's origin has no `-c`.
            (
                "firstprivate_section_at_min.c",
                "void f(int n, double *restrict a, double *restrict c, double *restrict d) {\n#pragma acc parallel firstprivate(c[-9223372036854775808:n])\n    {\n#pragma acc loop gang\n        for (int x = 0; x < 10; ++x) {\n#pragma acc loop worker\n            for (int y = 0; y < n; ++y) {\n                d[x * n + y] = a[x * n + y] + c[y];\n            }\n        }\n    }\n}\n",
            ),
            (
                "far_neighbour_2d.c",
                "void f(int n, double a[n][n], double b[n][n]) {\n#pragma acc parallel loop collapse(2)\n    for (int i = 1; i < n - 1; i++)\n        for (int j = 1; j < n - 1; j++)\n            b[i][j] = a[i - 1][j] + a[i + 1][j] + a[i][j - 0x7fffffffffffffff] + a[i][j + 1];\n}\n",
            ),
        ];
        on_compiler_stack(|| {
            for (name, text) in cases {
                for force_staging in [false, true] {
                    let verdict = check_input(Path::new(name), text.to_string(), force_staging, dir.path());
                    assert_eq!(verdict, Verdict::Compiled, "{name}");
                }
            }
            // 20,000 locals of one name in a kernel: naming them in the IR text and finding the
            // CUDA position locals were quadratic (37 s).
            let many = format!(
                "void f(int n, double *restrict y) {{\n#pragma acc parallel loop\n    for (int r = 0; r < n; r++) {{\n        double {};\n        s = r;\n        y[r] = s;\n    }}\n}}\n",
                vec!["s"; 20000].join(", ")
            );
            let began = std::time::Instant::now();
            assert_eq!(check_input(Path::new("many_locals.c"), many, false, dir.path()), Verdict::Compiled);
            assert!(began.elapsed() < std::time::Duration::from_secs(10), "{:?}", began.elapsed());
            let passes = PassConfig { staging: StagingMode::Force, ..PassConfig::default() };
            let program = driver::compile_preprocessed("far.c".into(), cases[1].1.to_string(), &passes).unwrap_or_else(|_| panic!());
            let text = crate::explain::explain_with_tuning_cache(&program, Some(dir.path().to_path_buf()));
            assert!(text.contains("too far from its base"), "{text}");
        });
    }

    #[test]
    fn mutants_of_a_small_program_pass_the_check() {
        let corpus = corpus();
        let dir = tempfile::tempdir().unwrap();
        on_compiler_stack(|| {
            for k in 0..200 {
                let input = fuzz_input(&corpus, 1, k);
                let _ = check_input(Path::new("t.c"), input.text, input.force_staging, dir.path());
            }
        });
    }
}
