//! Property test of loop fusion: random chains of 2 to 6 stencil loops over 1-D, 2-D and 3-D
//! arrays in one compute region (each loop reads earlier arrays at random offsets in -2..=2 per
//! dim, over bounds that differ from loop to loop; some loops write an array an earlier loop
//! wrote or read, which must cut the chain, update one in place, or sum what they write in a
//! reduction) are written as C programs,
//! built by gcc with the pragmas ignored (the reference) and run by `yosegi run --device sim`
//! with `--fusion on` (every legal chain fused, the fused kernel always run) and `--fusion off`.
//! All three must print the same checksums of every array. The same chains without reductions,
//! as the body of a time-step loop of 1 to 9 steps, check fusion across steps
//! (`opt::fusion::steps`) the same way, with the kernels of 2 steps forced too
//! (`YOSEGI_STEPS=2`). Two more tests pin what `explain`
//! says of `tests/programs/fusion_chain1d.c` (extensions, why chains stop, the store-free
//! variant) and that `YOSEGI_FUSION=off` keeps the fused kernels from running.

mod common;

use common::{Input, compare_outputs, gcc_build_with, run, yosegi};
use proptest::prelude::*;
use proptest::test_runner::Config;

const VARS: [&str; 3] = ["k", "j", "i"];
const WEIGHTS: &[&str] = &["0.5", "-0.25", "1.0", "0.125", "2.0", "-1.5", "0.75"];

/// A read: array, weight, offsets per dim.
type Read = (usize, usize, Vec<i64>);

#[derive(Clone, Debug)]
struct Loop {
    /// Index of the array it writes (0 is the input, never written).
    target: usize,
    /// Whether it also reads its target at its own element (`a[p] = a[p] * w + ...`).
    in_place: bool,
    /// Per read: array, weight, offsets per dim.
    reads: Vec<Read>,
    /// Per dim: how far inside the array its range starts and ends.
    margins: Vec<(i64, i64)>,
    /// Whether it also sums what it writes (`reduction(+:rsum)`; the data are sums of
    /// products of short binary fractions, so every order of the sum gives the same value).
    reduce: bool,
    /// A second array it defines (a new one), from a local of its own reads plus half the
    /// first array's value: a loop with several defining statements and temporaries, which the
    /// fused kernel computes each only where needed (`opt::fusion::slice`).
    extra: Option<(usize, Vec<Read>)>,
}

#[derive(Clone, Debug)]
struct Chain {
    sizes: Vec<i64>,
    arrays: usize,
    loops: Vec<Loop>,
    /// The region is the body of a loop of this many steps (its loops have no reduction).
    steps: Option<u32>,
}

impl Chain {
    fn source(&self) -> String {
        let d = self.sizes.len();
        let vars = &VARS[3 - d..];
        let extents: String = self.sizes.iter().map(|n| format!("[{n}]")).collect();
        let mut text = String::from("#include <stdio.h>\n\n");
        for a in 0..self.arrays {
            text.push_str(&format!("static double a{a}{extents};\n"));
        }
        text.push_str("\nint main(void) {\n    unsigned s = 12345u;\n");
        // Every element of every array starts at a pseudo-random value: reads outside a
        // writer's range see them.
        for a in 0..self.arrays {
            let mut nest = String::new();
            for (level, (v, n)) in vars.iter().zip(&self.sizes).enumerate() {
                nest.push_str(&format!("{}for (int {v} = 0; {v} < {n}; {v}++)\n", "    ".repeat(level + 1)));
            }
            let index: String = vars.iter().map(|v| format!("[{v}]")).collect();
            text.push_str(&nest);
            text.push_str(&format!(
                "{}{{ s = s * 1103515245u + 12345u; a{a}{index} = (double)((s >> 16) % 1000) / 64.0 - 7.0; }}\n",
                "    ".repeat(d + 1)
            ));
        }
        let all: Vec<String> = (0..self.arrays).map(|a| format!("a{a}")).collect();
        text.push_str("    double rsum = 0.0;\n");
        match self.steps {
            Some(steps) => text.push_str(&format!(
                "    #pragma acc data copy({})\n    for (int t = 0; t < {steps}; t++)\n    #pragma acc parallel\n    {{\n",
                all.join(", ")
            )),
            None => text.push_str(&format!("    #pragma acc parallel copy({})\n    {{\n", all.join(", "))),
        }
        for l in &self.loops {
            let reduction = if l.reduce { " reduction(+:rsum)" } else { "" };
            text.push_str(&format!("        #pragma acc loop collapse({d}){reduction}\n"));
            for (level, ((v, n), (lo, hi))) in vars.iter().zip(&self.sizes).zip(&l.margins).enumerate() {
                text.push_str(&format!("{}for (int {v} = {lo}; {v} < {}; {v}++)\n", "    ".repeat(level + 2), n - hi));
            }
            let own: String = vars.iter().map(|v| format!("[{v}]")).collect();
            let terms_of = |reads: &[Read]| -> Vec<String> {
                reads
                    .iter()
                    .map(|(a, w, offsets)| {
                        let index: String = vars.iter().zip(offsets).map(|(v, o)| format!("[{v} + ({o})]")).collect();
                        format!("{} * a{a}{index}", WEIGHTS[*w])
                    })
                    .collect()
            };
            let mut terms = terms_of(&l.reads);
            if l.in_place {
                terms.push(format!("0.5 * a{}{own}", l.target));
            }
            let indent = "    ".repeat(d + 2);
            let mut body = format!("double v = {}; a{t}{own} = v;", terms.join(" + "), t = l.target);
            if let Some((extra, reads)) = &l.extra {
                body.push_str(&format!(" double u = {}; a{extra}{own} = u + 0.5 * v;", terms_of(reads).join(" + ")));
            }
            if l.reduce {
                body.push_str(&format!(" rsum += a{t}{own};", t = l.target));
            }
            text.push_str(&format!("{indent}{{ {body} }}\n"));
        }
        text.push_str("    }\n    printf(\"rsum %.15e\\n\", rsum);\n");
        for a in 0..self.arrays {
            let mut nest = String::new();
            for (level, (v, n)) in vars.iter().zip(&self.sizes).enumerate() {
                nest.push_str(&format!("{}for (int {v} = 0; {v} < {n}; {v}++)\n", "    ".repeat(level + 2)));
            }
            let index: String = vars.iter().map(|v| format!("[{v}]")).collect();
            let weight: String = vars.join(" + ");
            text.push_str(&format!(
                "    {{\n        double sum = 0.0, abs = 0.0;\n{nest}{}{{ sum += a{a}{index} * (1 + ({weight}) % 7); abs += a{a}{index} < 0 ? -a{a}{index} : a{a}{index}; }}\n        printf(\"a{a} %.15e %.15e\\n\", sum, abs);\n    }}\n",
                "    ".repeat(d + 2)
            ));
        }
        text.push_str("    return 0;\n}\n");
        text
    }
}

fn chain() -> impl Strategy<Value = Chain> {
    (1usize..=3, 2usize..=6, any::<u64>()).prop_map(|(dims, length, seed)| {
        let mut rng = seed;
        let mut next = move |n: u64| {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 33) % n
        };
        let sizes: Vec<i64> = match dims {
            1 => vec![100 + next(3000) as i64],
            2 => vec![8 + next(40) as i64, 20 + next(150) as i64],
            _ => vec![6 + next(10) as i64, 6 + next(14) as i64, 10 + next(40) as i64],
        };
        let mut arrays = 1;
        let mut loops: Vec<Loop> = Vec::new();
        for _ in 0..length {
            // Mostly a new array; sometimes one written or read before (the chain must stop).
            let target = if arrays > 1 && next(5) == 0 { 1 + next(arrays as u64 - 1) as usize } else { arrays };
            if target == arrays {
                arrays += 1;
            }
            let mut reads = Vec::new();
            let candidates: Vec<usize> = (0..arrays).filter(|&a| a != target).collect();
            // The array the previous loop wrote, when there is one, then 0 to 3 more.
            if let Some(prev) = loops.last().map(|l| l.target).filter(|&p| p != target) {
                reads.push(prev);
            }
            for _ in 0..next(4) {
                reads.push(candidates[next(candidates.len() as u64) as usize]);
            }
            if reads.is_empty() {
                reads.push(candidates[next(candidates.len() as u64) as usize]);
            }
            let reads: Vec<Read> = reads
                .into_iter()
                .map(|a| (a, next(WEIGHTS.len() as u64) as usize, (0..dims).map(|_| next(5) as i64 - 2).collect()))
                .collect();
            let extra = (next(3) == 0).then(|| {
                let extra = arrays;
                arrays += 1;
                let reads: Vec<Read> = (0..1 + next(2))
                    .map(|_| {
                        let a = candidates[next(candidates.len() as u64) as usize];
                        (a, next(WEIGHTS.len() as u64) as usize, (0..dims).map(|_| next(5) as i64 - 2).collect())
                    })
                    .collect();
                (extra, reads)
            });
            // Ranges keep every read inside the arrays.
            let all_reads: Vec<&Read> = reads.iter().chain(extra.iter().flat_map(|(_, r)| r)).collect();
            let margins = (0..dims)
                .map(|d| {
                    let low = all_reads.iter().map(|r| -r.2[d]).max().unwrap_or(0).max(0);
                    let high = all_reads.iter().map(|r| r.2[d]).max().unwrap_or(0).max(0);
                    (low + next(3) as i64, high + next(3) as i64)
                })
                .collect();
            loops.push(Loop { target, in_place: next(6) == 0, reads, margins, reduce: next(4) == 0, extra });
        }
        Chain { sizes, arrays, loops, steps: None }
    })
}

/// A chain without reductions as the body of a step loop.
fn step_chain() -> impl Strategy<Value = Chain> {
    (chain(), 1u32..=9).prop_map(|(mut case, steps)| {
        for l in &mut case.loops {
            l.reduce = false;
        }
        case.steps = Some(steps);
        case
    })
}

fn check(case: &Chain) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = dir.path().join("chain.c");
    std::fs::write(&source, case.source()).expect("write the program");
    let reference = gcc_build_with(std::slice::from_ref(&source), dir.path(), &[]);
    let expected = run(std::process::Command::new(&reference), Input::Nothing);
    prop_assert_eq!(expected.code(), Some(0), "gcc's build failed\n{}", expected.describe());
    let modes: &[(&str, Option<&str>)] =
        if case.steps.is_some() { &[("on", None), ("off", None), ("on", Some("2"))] } else { &[("on", None), ("off", None)] };
    for &(fusion, steps) in modes {
        let mut cmd = yosegi();
        cmd.args(["run", "--device", "sim", "--fusion", fusion]).arg(&source);
        if let Some(k) = steps {
            cmd.env("YOSEGI_STEPS", k);
        }
        let actual = run(cmd, Input::Nothing);
        prop_assert_eq!(actual.code(), Some(0), "--fusion {} failed\n{}\n{}", fusion, actual.describe(), case.source());
        if let Err(mismatch) = compare_outputs(&expected.stdout, &actual.stdout, 1e-12) {
            return Err(TestCaseError::fail(format!(
                "--fusion {fusion}: {mismatch}\n--- program ---\n{}\n--- gcc ---\n{}\n--- yosegi ---\n{}",
                case.source(),
                expected.stdout,
                actual.stdout
            )));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: 40, ..Config::default() })]
    #[test]
    fn fused_chains_compute_what_gcc_does(case in chain()) {
        check(&case)?;
    }
}

proptest! {
    #![proptest_config(Config { cases: 24, ..Config::default() })]
    #[test]
    fn fused_steps_compute_what_gcc_does(case in step_chain()) {
        check(&case)?;
    }
}

/// The step-loop generator makes loops whose steps the pass fuses: a fixed chain of two 2-D
/// stencils over 7 steps, the second writing back the array the first reads (so both steps'
/// arrays are versions and the first array goes to a second buffer), is checked the same way,
/// and explain and the stats show kernels of 1, 2 and 4 steps made and the largest run.
#[test]
fn a_generated_step_loop_is_fused() {
    let case = Chain {
        sizes: vec![30, 70],
        arrays: 3,
        loops: vec![
            Loop { target: 1, in_place: false, reads: vec![(0, 0, vec![-1, 1]), (0, 2, vec![1, 0])], margins: vec![(1, 1), (1, 2)], reduce: false, extra: None },
            Loop { target: 0, in_place: true, reads: vec![(1, 1, vec![1, -1]), (2, 3, vec![0, 0])], margins: vec![(2, 2), (2, 2)], reduce: false, extra: None },
        ],
        steps: Some(7),
    };
    check(&case).expect("fused == unfused == gcc");
    let dir = tempfile::tempdir().expect("temp dir");
    let source = dir.path().join("chain.c");
    std::fs::write(&source, case.source()).expect("write the program");
    let mut cmd = yosegi();
    cmd.args(["explain", "--fusion", "on"]).arg(&source);
    let explained = run(cmd, Input::Nothing).stdout;
    assert!(explained.contains("step loop: the whole body of the loop over `t`"), "{explained}");
    for k in ["1 step in one kernel `main_l", "2 steps in one kernel `main_l", "4 steps in one kernel `main_l"] {
        assert!(explained.contains(k), "{k}\n{explained}");
    }
    assert!(explained.contains("stored into a second buffer that the runtime alternates with the first: `a0`"), "{explained}");
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--fusion", "on", "--stats"]).arg(&source);
    let stats = run(cmd, Input::Nothing).stderr;
    // 7 steps: one launch of 4 steps, one of 2, one of 1.
    for k in ["_steps4 ", "_steps2 ", "_steps1 "] {
        assert!(stats.lines().any(|l| l.contains(k) && l.split_whitespace().nth(1) == Some("1")), "{k}\n{stats}");
    }
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--fusion", "on", "--stats"]).arg(&source).env("YOSEGI_FUSION", "off");
    let off = run(cmd, Input::Nothing).stderr;
    assert!(!off.contains("_steps"), "{off}");
    // Unfused, the runtime runs all 7 steps in the one call the host makes.
    let calls = off.lines().find(|l| l.starts_with("runtime: region calls")).unwrap_or_else(|| panic!("{off}"));
    assert_eq!(calls.split_whitespace().nth(5), Some("1"), "{calls}");
}

/// The generator makes chains the pass fuses, not only ones it refuses: a fixed chain of
/// three 2-D loops, checked the same way, is fused into one kernel (explain says so).
#[test]
fn a_generated_chain_is_fused() {
    let case = Chain {
        sizes: vec![30, 70],
        arrays: 5,
        loops: vec![
            Loop {
                target: 1,
                in_place: false,
                reads: vec![(0, 0, vec![-1, 1]), (0, 2, vec![1, 0])],
                margins: vec![(1, 1), (1, 2)],
                reduce: false,
                extra: Some((4, vec![(0, 1, vec![0, 1])])),
            },
            Loop { target: 2, in_place: false, reads: vec![(1, 1, vec![2, -2]), (1, 3, vec![0, 0])], margins: vec![(0, 2), (2, 0)], reduce: false, extra: None },
            Loop { target: 3, in_place: true, reads: vec![(2, 4, vec![-1, -1]), (0, 5, vec![0, 2])], margins: vec![(1, 0), (1, 2)], reduce: true, extra: None },
        ],
        steps: None,
    };
    check(&case).expect("fused == unfused == gcc");
    let dir = tempfile::tempdir().expect("temp dir");
    let source = dir.path().join("chain.c");
    std::fs::write(&source, case.source()).expect("write the program");
    let mut cmd = yosegi();
    cmd.args(["explain", "--fusion", "on"]).arg(&source);
    let explained = run(cmd, Input::Nothing);
    assert!(explained.stdout.contains("run as one kernel `main_l"), "{}", explained.stdout);
    assert!(explained.stdout.contains("redundant iterations of `main_l"), "{}", explained.stdout);
    // The first loop's local `u` feeds only `a4`, which nothing in the chain reads: it is
    // computed on the block's own iterations, not on the redundant ones `v` needs.
    assert!(explained.stdout.contains("computes its local `u` only where its statements need it: j 0 left, 0 right; i 0 left, 0 right"), "{}", explained.stdout);
    assert!(!explained.stdout.contains("computes its local `v`"), "{}", explained.stdout);
    let emitted = dir.path().join("emitted");
    let mut cmd = yosegi();
    cmd.args(["emit", "--fusion", "on", "-o"]).arg(&emitted).arg(&source);
    run(cmd, Input::Nothing);
    let cuda = std::fs::read_to_string(emitted.join("kernels.cu")).expect("kernels.cu");
    let lines: Vec<&str> = cuda.lines().collect();
    let at = |name: &str| lines.iter().position(|l| l.trim_start().starts_with(name) && l.contains(" = ")).unwrap_or_else(|| panic!("{name}\n{cuda}"));
    assert!(lines[at("u_k0") - 1].trim_start().starts_with("if ("), "{cuda}");
    assert!(!lines[at("v_k0") - 1].trim_start().starts_with("if ("), "{cuda}");
}

fn fusion_chain1d() -> std::path::PathBuf {
    common::repo_root().join("tests/programs/fusion_chain1d.c")
}

/// explain names why each chain stops (two loops writing one array; a loop reading what a later
/// one writes) and the redundant iterations the first loop runs for the offsets later loops
/// read (`b[i-2]..b[i+1]`: two on the left, one on the right).
#[test]
fn explain_gives_the_extensions_and_why_a_chain_stops() {
    let mut cmd = yosegi();
    cmd.args(["explain", "--fusion", "on"]).arg(fusion_chain1d());
    let out = run(cmd, Input::Nothing).stdout;
    assert!(out.contains("redundant iterations of `main_l64`: i 2 left, 1 right"), "{out}");
    assert!(out.contains("not fused: `main_l69` and `main_l71`: `main_l65` and `main_l71` both write `c`"), "{out}");
    assert!(out.contains("`main_l71` reads `e` before `main_l72` writes it"), "{out}");
    assert!(out.contains("leaving out the global stores of `t`"), "{out}");
    // `s` is read by a later region: its stores stay.
    assert!(!out.contains("global stores of `s`"), "{out}");
}

/// The fused kernels run (their names in `--stats`), the one without stores where the scratch
/// array allows it, and `YOSEGI_FUSION=off` at run time keeps every kernel on its own.
#[test]
fn fused_kernels_run_unless_turned_off_at_run_time() {
    let stats = |env_off: bool| {
        let mut cmd = yosegi();
        cmd.args(["run", "--device", "sim", "--fusion", "on", "--stats"]).arg(fusion_chain1d());
        if env_off {
            cmd.env("YOSEGI_FUSION", "off");
        }
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(0), "{}", finished.describe());
        finished.stderr
    };
    let on = stats(false);
    assert!(on.contains("\nmain_l64_fused "), "{on}");
    assert!(on.contains("\nsmooth_twice_l19_fused_nostore "), "{on}");
    assert!(on.contains("\nscratch_read_later_l38_fused "), "{on}");
    let off = stats(true);
    assert!(!off.contains("_fused"), "{off}");
    assert!(off.contains("\nmain_l64"), "{off}");
}
