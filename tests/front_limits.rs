//! Generated code at the front end's limits: an expression of tens of thousands of terms in a
//! kernel runs (the compiler's walkers recurse on a large stack, the CUDA writer builds a long
//! chain in one pass) and gives gcc's answer; one past the operator limit is refused with a
//! diagnostic, not a crash; thousands of diagnostics on one very long line each show a window
//! of the line, not the whole of it. Running out of memory on a large input is an error with
//! exit status 2 and no scratch left, not an abort.

mod common;

use common::{Input, run, yosegi};
use std::path::Path;
use std::process::Command;

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `b[i] = a[0] + a[1] + ... ` with `terms` terms, in a parallel loop.
fn long_sum_program(terms: usize) -> String {
    let sum: Vec<String> = (0..terms).map(|k| format!("a[{}]", k % 7)).collect();
    format!(
        "#include <stdio.h>\ndouble a[8], b[64];\nint main(void) {{\n    for (int k = 0; k < 8; k++) a[k] = 0.5 * k;\n\
         #pragma acc parallel loop copyin(a) copyout(b)\n    for (int i = 0; i < 64; i++) b[i] = i + {};\n\
         printf(\"%.3f %.3f\\n\", b[0], b[63]);\n    return 0;\n}}\n",
        sum.join(" + ")
    )
}

#[test]
fn an_expression_of_twenty_thousand_terms_runs_like_gcc() {
    let dir = tempfile::tempdir().unwrap();
    let program = write(dir.path(), "long_sum.c", &long_sum_program(20_000));
    let reference = common::gcc_build(std::slice::from_ref(&program), dir.path());
    let expected = run(Command::new(reference), Input::Nothing);
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim"]).arg(&program);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, expected.stdout);
    // The CUDA writer handles it too.
    let mut cmd = yosegi();
    cmd.arg("emit").arg(&program).arg("-o").arg(dir.path().join("out"));
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    let cuda = std::fs::read_to_string(dir.path().join("out/kernels.cu")).unwrap();
    assert!(cuda.matches(" + ").count() >= 20_000, "the whole sum is in the kernel");
}

#[test]
fn an_expression_past_the_operator_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let limit = yosegi::front::parser::MAX_EXPRESSION_OPERATORS;
    let program = write(dir.path(), "too_long.c", &long_sum_program(limit + 2));
    let mut cmd = yosegi();
    cmd.arg("explain").arg(&program);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(finished.stderr.contains(&format!("more than {limit} operators")), "{}", &finished.stderr[..500.min(finished.stderr.len())]);
    assert!(finished.stderr.contains("too_long.c:6:"), "{}", &finished.stderr[..500.min(finished.stderr.len())]);
    assert!(!finished.stderr.contains("panicked") && !finished.stderr.contains("overflow"));
}

#[test]
fn diagnostics_on_a_long_line_show_a_window_of_it() {
    let dir = tempfile::tempdir().unwrap();
    // Every loop carries a dependence: one warning each, all on line 4.
    let loops: Vec<String> = (0..3000).map(|k| format!("for (int i{k} = 0; i{k} < 10; i{k}++) b[i{k}] = b[i{k} + 1] + {k};")).collect();
    let text = format!("double b[100];\nint main(void) {{\n#pragma acc kernels\n{{ {} }}\n    return 0;\n}}\n", loops.join(" "));
    let program = write(dir.path(), "long_line.c", &text);
    let mut cmd = yosegi();
    cmd.arg("explain").arg(&program);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", &finished.stderr[..2000.min(finished.stderr.len())]);
    assert_eq!(finished.stderr.matches("warning: loop left sequential").count(), 3000);
    let longest = finished.stderr.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 400, "a diagnostic shows {longest} bytes of one line");
    // The last loop's warning points at its real column.
    let column = text.lines().nth(3).unwrap().find("for (int i2999").unwrap() + 1;
    assert!(finished.stderr.contains(&format!("long_line.c:4:{column}")), "no warning at column {column}");
}

/// An initialiser of three million numbers (8.7 MB of source) under a 700 MB address-space
/// limit: the allocation that fails is reported (`yosegi::oom`), the exit status is 2, and
/// the scratch directory is gone. Rust's default handler aborted here (SIGABRT in the lexer).
#[cfg(target_os = "linux")]
#[test]
fn out_of_memory_is_an_error_with_status_2_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    // Names, not numbers: a list of numbers is held flat (`front_memory.rs`), a list of
    // names as tokens and trees, which is more than 700 MB for three million of them.
    let names = vec!["a"; 3_000_000];
    let source = format!(
        "#include <stdio.h>\nenum {{ a = 1 }};\nstatic const int t[3000000] = {{{}}};\nint main(void) {{ long s = 0; for (int i = 0; i < 3000000; i++) s += t[i]; printf(\"%ld\\n\", s); return 0; }}\n",
        names.join(",")
    );
    let path = write(dir.path(), "big.c", &source);
    let scratch = dir.path().join("tmp");
    std::fs::create_dir(&scratch).unwrap();
    let yosegi = yosegi().get_program().to_owned();
    for sub in ["explain", "run"] {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("ulimit -v 700000 && exec \"$0\" \"$@\"").arg(&yosegi).arg(sub);
        if sub == "run" {
            cmd.args(["--device", "sim"]);
        }
        cmd.arg(&path).env("TMPDIR", &scratch);
        let out = run(cmd, Input::Nothing);
        assert_eq!(out.code(), Some(2), "yosegi {sub}: {}", out.describe());
        assert!(out.stderr.contains("error: out of memory: an allocation of"), "yosegi {sub}: {}", out.describe());
        assert!(!out.stderr.contains("panicked") && !out.stderr.contains("memory allocation of"), "yosegi {sub}: {}", out.describe());
        let left: Vec<_> = std::fs::read_dir(&scratch).unwrap().flatten().map(|e| e.file_name()).collect();
        assert!(left.is_empty(), "yosegi {sub} left {left:?} in its TMPDIR");
    }
}
