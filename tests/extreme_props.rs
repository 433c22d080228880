//! Property test of the analyses on constants near the ends of the integer types: random small
//! programs whose loops start, end and step near `i64::MIN`/`MAX` and the `int` and `unsigned`
//! bounds, and whose subscripts pass through extreme values that cancel (`((x) + K) - K`,
//! `(K - (K - (x)))`) or wrap on purpose (`(int)((x) + 4294967296LL)`, `(unsigned)(x) +
//! 4294967295u + 1u`). Every program is valid C whose accesses stay inside the arrays; gcc
//! (pragmas ignored, undefined-behaviour checks fatal, so that a program that overflowed would
//! fail there) builds the reference, and `yosegi run --device sim` must print the same
//! in every mode (default, `--fusion on`, `--staging on`, `--gpus 2`) or refuse the program
//! with a located diagnostic (exit 2). A panic is a failure: under `cargo test` (debug, with
//! overflow checks) an analysis that wraps a constant panics instead of planning with it.
//!
//! Each program has a `parallel` region of two loops (the second reads what the first wrote,
//! at an offset: the fusion planner's halo), a `kernels` loop that reads its own array at a
//! distance (the dependence test), and a stencil over the first region's output (staging's
//! halos). `explain` must describe each program too.

mod common;

use common::{Input, compare_outputs, gcc_build_with, run, yosegi};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// Array length; every subscript stays in `2..N-2` plus offsets of at most 2.
const N: i64 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Int,
    LongLong,
    Unsigned,
}

impl Ty {
    fn c_name(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::LongLong => "long long",
            Ty::Unsigned => "unsigned",
        }
    }
    fn range(self) -> (i128, i128) {
        match self {
            Ty::Int => (i32::MIN as i128, i32::MAX as i128),
            Ty::LongLong => (i64::MIN as i128, i64::MAX as i128),
            Ty::Unsigned => (0, u32::MAX as i128),
        }
    }
    /// `v` as a C constant of this type (the most negative values as an expression).
    fn literal(self, v: i128) -> String {
        match self {
            Ty::Int if v == i32::MIN as i128 => "(-2147483647 - 1)".to_string(),
            Ty::Int if v < 0 => format!("({v})"),
            Ty::Int => v.to_string(),
            Ty::LongLong => long_literal(v),
            Ty::Unsigned => format!("{v}u"),
        }
    }
}

fn long_literal(v: i128) -> String {
    if v == i64::MIN as i128 {
        "(-0x7fffffffffffffffLL - 1)".to_string()
    } else if v < 0 {
        format!("({v}LL)")
    } else {
        format!("{v}LL")
    }
}

/// A value-preserving form around a subscript `e` (whose values lie in `0..N`).
#[derive(Clone, Copy, Debug)]
enum Wrap {
    Plain,
    /// `((long long)(e) + K) - K`
    AddSub(i64),
    /// `((long long)(e) - K) + K`
    SubAdd(i64),
    /// `(K - (K - (long long)(e)))`
    Twice(i64),
    /// `(int)((long long)(e) + 4294967296LL * M)`: gcc converts modulo 2^32.
    IntCast(i64),
    /// `(int)((unsigned)(e) + 4294967295u + 1u)`: unsigned arithmetic wraps.
    UnsignedWrap,
    /// `(long long)((unsigned long long)(e) + 18446744073709551615ULL + 1ULL)`
    U64Wrap,
    /// `(short)((e) + 65536)`
    ShortCast,
}

impl Wrap {
    fn apply(self, e: &str) -> String {
        match self {
            Wrap::Plain => e.to_string(),
            Wrap::AddSub(k) => format!("(((long long)({e}) + {k}) - {k})", k = long_literal(k as i128)),
            Wrap::SubAdd(k) => format!("(((long long)({e}) - {k}) + {k})", k = long_literal(k as i128)),
            Wrap::Twice(k) => format!("({k} - ({k} - (long long)({e})))", k = long_literal(k as i128)),
            Wrap::IntCast(m) => format!("(int)((long long)({e}) + 4294967296LL * {})", long_literal(m as i128)),
            Wrap::UnsignedWrap => format!("(int)((unsigned)({e}) + 4294967295u + 1u)"),
            Wrap::U64Wrap => format!("(long long)((unsigned long long)({e}) + 18446744073709551615ULL + 1ULL)"),
            Wrap::ShortCast => format!("(short)(({e}) + 65536)"),
        }
    }
}

/// Constants for the cancelling forms; each form keeps those for which no step overflows.
const EXTREMES: &[i64] = &[
    i64::MAX,
    i64::MAX - 64,
    i64::MAX - 1000,
    1 << 62,
    (1 << 62) + 7,
    1 << 32,
    i32::MAX as i64,
    i32::MIN as i64,
    -(1 << 62),
    i64::MIN + 128,
    i64::MIN + 1,
    i64::MIN,
];

fn wrap() -> impl Strategy<Value = Wrap> {
    let k = proptest::sample::select(EXTREMES);
    prop_oneof![
        2 => Just(Wrap::Plain),
        // e + K must not overflow for e in 0..N: K <= MAX - N.
        3 => k.clone().prop_filter("e + K overflows", |k| *k <= i64::MAX - N).prop_map(Wrap::AddSub),
        // e - K must not overflow: K >= N - MAX.
        3 => k.clone().prop_filter("e - K overflows", |k| *k > i64::MIN + 2 * N).prop_map(Wrap::SubAdd),
        2 => k.clone().prop_filter("K - e overflows", |k| *k >= i64::MIN + N).prop_map(Wrap::Twice),
        2 => proptest::sample::select(&[1i64, -1, 2, 1000][..]).prop_map(Wrap::IntCast),
        1 => Just(Wrap::UnsignedWrap),
        1 => Just(Wrap::U64Wrap),
        1 => Just(Wrap::ShortCast),
    ]
}

/// `for (T i = ...; ...; ...)` visiting `x = x0, x0 + step, ...` (`count` values, or the same
/// values downwards), `i` being `bias + x`. The subscript is `(i - bias)`.
#[derive(Clone, Debug)]
struct Loop {
    ty: Ty,
    bias: i128,
    x0: i64,
    count: i64,
    step: i128,
    down: bool,
}

impl Loop {
    fn last_x(&self) -> i64 {
        self.x0 + (self.count - 1) * self.step as i64
    }
    /// Whether C runs it without overflow, its final step included, over `x` in `lo..=hi`.
    fn valid(&self, lo: i64, hi: i64) -> bool {
        let (min, max) = self.ty.range();
        let first = self.bias + self.x0 as i128;
        let last = self.bias + self.last_x() as i128;
        let beyond = if self.down { first - self.step } else { last + self.step };
        self.count >= 1
            && self.step >= 1
            && self.x0 >= lo
            && self.last_x() <= hi
            && (min..=max).contains(&first)
            && (min..=max).contains(&last)
            && (min..=max).contains(&beyond)
    }
    fn header(&self) -> String {
        let t = self.ty;
        let first = self.bias + self.x0 as i128;
        let last = self.bias + self.last_x() as i128;
        let step = if self.step == 1 {
            if self.down { "i--".to_string() } else { "i++".to_string() }
        } else {
            let s = match t {
                Ty::LongLong => long_literal(self.step),
                _ => t.literal(self.step),
            };
            format!("i {}= {s}", if self.down { "-" } else { "+" })
        };
        if self.down {
            // From the last value down to the first: i > first - 1.
            let bound = t.literal(first - 1);
            format!("for ({} i = {}; i > {bound}; {step})", t.c_name(), t.literal(last))
        } else {
            format!("for ({} i = {}; i <= {}; {step})", t.c_name(), t.literal(first), t.literal(last))
        }
    }
    /// `x` in C: `(i - bias)` in the loop's type.
    fn x(&self) -> String {
        format!("(i - {})", self.ty.literal(self.bias))
    }
}

const BIASES_INT: &[i128] = &[0, i32::MAX as i128 - 100, i32::MIN as i128 + 10, 1 << 30, i32::MIN as i128];
const BIASES_LONG: &[i128] =
    &[0, i64::MAX as i128 - 100, i64::MAX as i128 - 1100, i64::MIN as i128, i64::MIN as i128 + 5, 1 << 62, -(1 << 62), 1 << 40];
const BIASES_UNSIGNED: &[i128] = &[0, u32::MAX as i128 - 100, 1 << 31];

/// A loop over `x` in `lo..=hi` (a part of it), some with a huge step that runs it once.
fn a_loop(lo: i64, hi: i64) -> impl Strategy<Value = Loop> {
    let ty = prop_oneof![1 => Just(Ty::Int), 2 => Just(Ty::LongLong), 1 => Just(Ty::Unsigned)];
    (ty, any::<proptest::sample::Index>(), lo..=hi, 1..=40i64, 0..6u8, any::<bool>()).prop_map(move |(ty, b, x0, count, kind, down)| {
        let biases = match ty {
            Ty::Int => BIASES_INT,
            Ty::LongLong => BIASES_LONG,
            Ty::Unsigned => BIASES_UNSIGNED,
        };
        let bias = *b.get(biases);
        let (_, max) = ty.range();
        let mut l = Loop { ty, bias, x0, count, step: 1, down: false };
        match kind {
            0..=2 => {}
            3 => l.step = 2,
            4 => l.step = 3,
            // One iteration and a step to the type's end (or as far as it goes).
            _ => {
                l.count = 1;
                l.down = down;
                l.step = if down { (bias + x0 as i128 - ty.range().0).max(1) } else { (max - bias - x0 as i128).max(1) };
            }
        }
        if kind < 5 {
            l.down = down && ty != Ty::Unsigned;
            let room = (hi - l.x0) / l.step as i64 + 1;
            l.count = l.count.min(room).max(1);
        }
        l
    })
    .prop_filter("C would overflow the loop variable", move |l| l.valid(lo, hi))
}

/// `W(x + o)` or `W(x) + o`.
#[derive(Clone, Debug)]
struct Subscript {
    wrap: Wrap,
    offset: i64,
    inside: bool,
}

impl Subscript {
    fn text(&self, x: &str) -> String {
        let o = self.offset;
        if self.inside {
            self.wrap.apply(&if o == 0 { x.to_string() } else { format!("{x} + ({o})") })
        } else if o == 0 {
            self.wrap.apply(x)
        } else {
            format!("{} + ({o})", self.wrap.apply(x))
        }
    }
}

fn subscript(max_offset: i64) -> impl Strategy<Value = Subscript> {
    (wrap(), -max_offset..=max_offset, any::<bool>()).prop_map(|(wrap, offset, inside)| Subscript { wrap, offset, inside })
}

#[derive(Clone, Debug)]
struct Case {
    /// Region 1: `b[W(x)] = 0.5 * a[S1] + a[S2]`, then `c[W(x)] = b[S3] - 0.25 * a[W(x)]`.
    first: (Loop, Subscript, Subscript, Subscript),
    second: (Loop, Subscript, Subscript, Subscript),
    /// `kernels`: `d[W(x)] = d[W(x + D)] * 0.5 + b[W(x)]`.
    dependent: (Loop, Subscript, Subscript, Subscript),
    /// `e[W(x)] = c[S-1] + c[S] + c[S+1]`.
    stencil: (Loop, Subscript, [Subscript; 3]),
}

fn statement_subscripts(max: i64) -> impl Strategy<Value = (Subscript, Subscript, Subscript)> {
    (subscript(0), subscript(max), subscript(max))
}

fn case() -> impl Strategy<Value = Case> {
    let lo = 2;
    let hi = N - 3;
    let body = |l: BoxedStrategy<Loop>| (l, statement_subscripts(2)).prop_map(|(l, (w, r1, r2))| (l, w, r1, r2));
    (
        body(a_loop(lo, hi).boxed()),
        body(a_loop(lo, hi).boxed()),
        body(a_loop(lo, hi).boxed()),
        (a_loop(lo, hi), subscript(0), wrap(), wrap(), wrap(), any::<bool>()),
    )
        .prop_map(|(first, second, dependent, (l, w, a, b, c, inside))| {
            let taps = [(a, -1), (b, 0), (c, 1)].map(|(wrap, offset)| Subscript { wrap, offset, inside });
            Case { first, second, dependent, stencil: (l, w, taps) }
        })
}

impl Case {
    fn source(&self) -> String {
        let mut s = format!(
            "#include <stdio.h>\n#define N {N}\nstatic double a[N], b[N], c[N], d[N], e[N];\n\nint main(void) {{\n\
             \x20   for (int t = 0; t < N; t++) {{ a[t] = 0.5 * t + 1.0; b[t] = -0.25 * t; c[t] = 0.125 * (t % 7); d[t] = t; e[t] = 0; }}\n\
             #pragma acc parallel copyin(a) copy(b, c)\n    {{\n"
        );
        let (l, w, r1, r2) = &self.first;
        let x = l.x();
        s.push_str(&format!(
            "#pragma acc loop\n        {}\n            b[{}] = 0.5 * a[{}] + a[{}];\n",
            l.header(),
            w.text(&x),
            r1.text(&x),
            r2.text(&x)
        ));
        let (l, w, r1, r2) = &self.second;
        let x = l.x();
        s.push_str(&format!(
            "#pragma acc loop\n        {}\n            c[{}] = b[{}] - 0.25 * a[{}];\n    }}\n",
            l.header(),
            w.text(&x),
            r1.text(&x),
            r2.text(&x)
        ));
        let (l, w, r1, r2) = &self.dependent;
        let x = l.x();
        s.push_str(&format!(
            "#pragma acc kernels copyin(b) copy(d)\n    {}\n        d[{}] = d[{}] * 0.5 + b[{}];\n",
            l.header(),
            w.text(&x),
            r1.text(&x),
            r2.text(&x)
        ));
        let (l, w, taps) = &self.stencil;
        let x = l.x();
        s.push_str(&format!(
            "#pragma acc parallel loop copyin(c) copy(e)\n    {}\n        e[{}] = c[{}] + 2.0 * c[{}] - c[{}];\n",
            l.header(),
            w.text(&x),
            taps[0].text(&x),
            taps[1].text(&x),
            taps[2].text(&x)
        ));
        s.push_str(
            "    for (int t = 0; t < N; t++) printf(\"%d %.17g %.17g %.17g %.17g\\n\", t, b[t], c[t], d[t], e[t]);\n    return 0;\n}\n",
        );
        s
    }
}

/// gcc's undefined-behaviour checks, fatal: a generated program that overflowed a signed type
/// or shifted too far would be no reference, and its run would say so.
fn undefined_behaviour_checks() -> Vec<String> {
    vec!["-fsanitize=undefined".to_string(), "-fno-sanitize-recover=all".to_string()]
}

/// The modes each program runs in (the first is the default).
const MODES: &[&[&str]] = &[&[], &["--fusion", "on"], &["--staging", "on"], &["--gpus", "2"]];

fn check(case: &Case) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = dir.path().join("extreme.c");
    let text = case.source();
    std::fs::write(&source, &text).expect("write the program");
    let reference = gcc_build_with(std::slice::from_ref(&source), dir.path(), &undefined_behaviour_checks());
    let expected = run(std::process::Command::new(&reference), Input::Nothing);
    prop_assert_eq!(expected.code(), Some(0), "gcc's build failed\n{}\n{}", expected.describe(), text);
    for mode in MODES {
        let mut cmd = yosegi();
        cmd.args(["run", "--device", "sim", "-w"]).args(*mode).arg(&source);
        let actual = run(cmd, Input::Nothing);
        prop_assert!(!actual.stderr.contains("panicked"), "{mode:?} panicked\n{}\n{text}", actual.describe());
        if actual.code() == Some(2) {
            // Refused: with a located error, never a wrong answer.
            prop_assert!(actual.stderr.contains("error") && actual.stderr.contains("extreme.c:"), "{mode:?}: refused without a location\n{}", actual.describe());
            continue;
        }
        prop_assert_eq!(actual.code(), Some(0), "{:?} failed\n{}\n{}", mode, actual.describe(), text);
        if let Err(mismatch) = compare_outputs(&expected.stdout, &actual.stdout, 0.0) {
            return Err(TestCaseError::fail(format!("{mode:?}: {mismatch}\n--- program ---\n{text}\n--- gcc ---\n{}\n--- yosegi ---\n{}", expected.stdout, actual.stdout)));
        }
    }
    let mut cmd = yosegi();
    cmd.args(["explain", "--fusion", "on", "-w"]).arg(&source);
    let explained = run(cmd, Input::Nothing);
    prop_assert!(!explained.stderr.contains("panicked"), "explain panicked\n{}\n{text}", explained.describe());
    prop_assert!(matches!(explained.code(), Some(0 | 2)), "explain\n{}\n{text}", explained.describe());
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: 24, ..Config::default() })]
    #[test]
    fn extreme_constants_compute_what_gcc_does(case in case()) {
        check(&case)?;
    }
}

/// The generator's programs are valid C that gcc runs (the property would pass vacuously on
/// programs every compiler refuses): one of each wrap and loop kind, checked against the
/// values they must print.
#[test]
fn the_generated_forms_are_what_they_claim_under_gcc() {
    let dir = tempfile::tempdir().unwrap();
    let wraps = [
        Wrap::Plain,
        Wrap::AddSub(i64::MIN),
        Wrap::AddSub(i64::MAX - N),
        Wrap::SubAdd(i64::MAX),
        Wrap::Twice(i64::MIN + N),
        Wrap::IntCast(-1),
        Wrap::UnsignedWrap,
        Wrap::U64Wrap,
        Wrap::ShortCast,
    ];
    let mut body = String::new();
    for w in wraps {
        body.push_str(&format!("    for (int x = 0; x < N; x++) if ({} != x) bad++;\n", w.apply("x")));
    }
    let loops = [
        Loop { ty: Ty::LongLong, bias: i64::MAX as i128 - 100, x0: 2, count: 5, step: 3, down: false },
        Loop { ty: Ty::LongLong, bias: i64::MIN as i128, x0: 2, count: 5, step: 1, down: true },
        // i = INT_MAX - 97, then i += 97 reaches INT_MAX exactly.
        Loop { ty: Ty::Int, bias: i32::MAX as i128 - 100, x0: 3, count: 1, step: 97, down: false },
        Loop { ty: Ty::Unsigned, bias: u32::MAX as i128 - 100, x0: 4, count: 7, step: 2, down: false },
        Loop { ty: Ty::LongLong, bias: 0, x0: 5, count: 1, step: i64::MAX as i128 - 5, down: false },
    ];
    for l in &loops {
        assert!(l.valid(2, N - 3), "{l:?}");
        let xs: Vec<String> = (0..l.count).map(|k| (l.x0 + k * l.step as i64).to_string()).collect();
        let expected = if l.down { xs.iter().rev().cloned().collect::<Vec<_>>().join(" ") } else { xs.join(" ") };
        body.push_str(&format!("    {} printf(\"%lld \", (long long){});\n    printf(\"| {expected}\\n\");\n", l.header(), l.x()));
    }
    let source = dir.path().join("forms.c");
    std::fs::write(&source, format!("#include <stdio.h>\n#define N {N}\nint main(void) {{\n    int bad = 0;\n{body}    printf(\"bad %d\\n\", bad);\n    return 0;\n}}\n")).unwrap();
    let exe = gcc_build_with(std::slice::from_ref(&source), dir.path(), &undefined_behaviour_checks());
    let out = run(std::process::Command::new(&exe), Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.last(), Some(&"bad 0"), "{}", out.stdout);
    for line in &lines[..lines.len() - 1] {
        let (got, want) = line.split_once('|').unwrap();
        assert_eq!(got.trim(), want.trim(), "{}", out.stdout);
    }
}
