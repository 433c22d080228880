//! The command-line contract: `yosegi run [--device auto|sim|cuda] [--stats] [-I DIR]
//! [-D NAME[=VAL]] FILE.c... [-- ARGS]`, `yosegi explain FILE.c`, `yosegi emit FILE.c -o DIR`.
//! Exit status 0 when the program succeeded, 1 when the user's program failed, 2 for bad input.

mod common;

use common::{Finished, Input, repo_root, run, yosegi};
use std::path::{Path, PathBuf};

fn example(name: &str) -> PathBuf {
    repo_root().join("examples").join(name)
}

fn test_program(name: &str) -> PathBuf {
    repo_root().join("tests").join("programs").join(name)
}

fn yosegi_run(args: &[&str], files: &[&Path], program_args: &[&str], input: Input) -> Finished {
    let mut cmd = yosegi();
    cmd.arg("run").args(args).args(files);
    if !program_args.is_empty() {
        cmd.arg("--").args(program_args);
    }
    run(cmd, input)
}

/// What gcc's sequential build of `program` prints (it must exit with 0).
fn gcc_output(program: &Path) -> Finished {
    let dir = tempfile::tempdir().expect("temp dir");
    let reference = common::gcc_build(&[program.to_path_buf()], dir.path());
    let expected = run(std::process::Command::new(&reference), Input::Nothing);
    assert_eq!(expected.code(), Some(0), "{}", expected.describe());
    expected
}

/// `yosegi run --device sim --stats program`, checked to print what gcc's build prints.
fn run_with_stats_like_gcc(program: &Path) -> Finished {
    let expected = gcc_output(program);
    let finished = yosegi_run(&["--device", "sim", "--stats"], &[program], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, expected.stdout);
    finished
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create dir");
    }
    std::fs::write(&path, text).expect("write test file");
    path
}

#[test]
fn himeno_example_reports_on_the_simulator() {
    let himeno = example("himeno.c");
    let finished = yosegi_run(&["--device", "sim", "-D", "SIZE_TINY", "-D", "NN=2"], &[&himeno], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    for line in ["mimax = 17 mjmax = 17 mkmax = 33", "Loop executed for 2 times", "Gosa :", "MFLOPS measured :"] {
        assert!(finished.stdout.contains(line), "the Himeno report lacks `{line}`\n{}", finished.describe());
    }
}

#[test]
fn program_arguments_follow_the_double_dash() {
    let jacobi = example("jacobi2d.c");
    let finished = yosegi_run(&["--device", "sim"], &[&jacobi], &["16", "5"], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert!(finished.stdout.contains("16 x 16 mesh"), "{}", finished.describe());
    assert!(finished.stdout.contains("sweeps: 5,"), "{}", finished.describe());
}

#[test]
fn diffusion_example_runs_at_a_small_size() {
    let diffusion = example("diffusion1d.c");
    let finished = yosegi_run(&["--device", "sim"], &[&diffusion], &["500", "20"], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert!(finished.stdout.contains("diffusion1d: 500 points, 20 steps"), "{}", finished.describe());
}

/// The two wide-stencil benchmarks print what gcc's build prints (all but the timing line),
/// with their radius-8 tile staged (`on`: both staged kernels in turn) and not (`off`). (With
/// `--fusion off`: their step loops' kernels of several steps would run instead of the
/// single-step kernels whose variants this checks; the differential tests run them fused.)
#[test]
fn wide_stencil_examples_run_like_gcc_staged_and_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in ["diffusion_wide.c", "wide_stencil_f32.c"] {
        let program = example(name);
        let program_args = ["1000", "6"];
        let reference = common::gcc_build(std::slice::from_ref(&program), dir.path());
        let mut cmd = std::process::Command::new(&reference);
        cmd.args(program_args);
        let expected = run(cmd, Input::Nothing);
        assert_eq!(expected.code(), Some(0), "{name}\n{}", expected.describe());
        for mode in ["off", "on"] {
            let finished =
                yosegi_run(&["--device", "sim", "--stats", "--staging", mode, "--fusion", "off"], &[&program], &program_args, Input::Nothing);
            assert_eq!(finished.code(), Some(0), "{name} --staging {mode}\n{}", finished.describe());
            assert_eq!(without_timing(&finished.stdout), without_timing(&expected.stdout), "{name} --staging {mode}");
            assert_eq!(finished.stderr.contains("_staged_x4 x"), mode == "on", "{name} --staging {mode}\n{}", finished.describe());
        }
    }
}

fn without_timing(stdout: &str) -> String {
    stdout.lines().filter(|line| !line.starts_with("time:")).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_failing_user_program_exits_with_status_1() {
    // argv_size.c rejects a zero size with a usage message and `return 1`.
    let finished = yosegi_run(&["--device", "sim"], &[&test_program("argv_size.c")], &["0", "0"], Input::Nothing);
    assert_eq!(finished.code(), Some(1), "{}", finished.describe());
    assert!(finished.stderr.contains("usage:"), "the program's own stderr must reach the user\n{}", finished.describe());
}

#[test]
fn any_nonzero_user_status_exits_with_status_1() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = write(dir.path(), "three.c", "#include <stdio.h>\nint main(void) { printf(\"before\\n\"); return 3; }\n");
    let finished = yosegi_run(&["--device", "sim"], &[&program], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(1), "{}", finished.describe());
    assert_eq!(finished.stdout, "before\n", "output printed before the failure must not be lost");
}

#[test]
fn output_is_flushed_when_the_program_calls_exit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = write(
        dir.path(),
        "exits.c",
        "#include <stdio.h>\n#include <stdlib.h>\nint main(void) { printf(\"no newline\"); exit(0); }\n",
    );
    let finished = yosegi_run(&["--device", "sim"], &[&program], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, "no newline");
}

#[test]
fn include_dirs_defines_and_stdin_reach_the_program() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "inc/scale.h", "#define SCALE 3\n");
    let program = write(
        dir.path(),
        "main.c",
        r#"#include <stdio.h>
#include "scale.h"
int main(void) {
    int x = 0;
    if (scanf("%d", &x) != 1) return 1;
    double v[8];
    #pragma acc parallel loop copyout(v)
    for (int i = 0; i < 8; i++) v[i] = (double)(i * SCALE + OFFSET + x);
    printf("value %g %g\n", v[0], v[7]);
    return 0;
}
"#,
    );
    let stdin = write(dir.path(), "input.txt", "100\n");
    let include = dir.path().join("inc");
    let finished = yosegi_run(
        &["--device", "sim", "-I", include.to_str().expect("utf-8 path"), "-D", "OFFSET=4"],
        &[&program],
        &[],
        Input::File(&stdin),
    );
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, "value 104 125\n");
}

#[test]
fn auto_device_gives_the_same_answer_as_the_simulator() {
    let program = test_program("collapse2.c");
    let sim = yosegi_run(&["--device", "sim"], &[&program], &[], Input::Nothing);
    let auto = yosegi_run(&["--device", "auto"], &[&program], &[], Input::Nothing);
    assert_eq!(sim.code(), Some(0), "{}", sim.describe());
    assert_eq!(auto.code(), Some(0), "{}", auto.describe());
    assert!(sim.stdout.starts_with("total "), "{}", sim.describe());
    assert_eq!(sim.stdout, auto.stdout);
}

#[test]
fn a_missing_source_file_is_bad_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("does_not_exist.c");
    let finished = yosegi_run(&["--device", "sim"], &[&missing], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(finished.stderr.contains("error"), "{}", finished.describe());
    assert!(finished.stderr.contains("does_not_exist.c"), "the message must name the file\n{}", finished.describe());
    assert!(!finished.stderr.contains("panicked"), "{}", finished.describe());
}

#[test]
fn an_unknown_device_is_bad_input() {
    let finished = yosegi_run(&["--device", "tpu"], &[&test_program("collapse2.c")], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(finished.stdout.is_empty(), "nothing may run for a bad command line\n{}", finished.describe());
}

#[test]
fn explain_describes_the_kernels_of_a_program() {
    let mut cmd = yosegi();
    cmd.arg("explain").arg(test_program("jacobi2d.c"));
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert!(!finished.stdout.trim().is_empty(), "explain printed nothing\n{}", finished.describe());
    assert!(!finished.stdout.contains("iteration 0"), "explain must not run the program\n{}", finished.describe());
}

#[test]
fn explain_rejects_bad_input_like_run() {
    let mut cmd = yosegi();
    cmd.arg("explain").arg(repo_root().join("tests").join("bad").join("unknown_clause.c"));
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(finished.stderr.contains("unknown_clause.c:"), "{}", finished.describe());
}

#[test]
fn emit_writes_the_generated_program_into_the_directory() {
    let out = tempfile::tempdir().expect("temp dir");
    let target = out.path().join("emitted");
    let mut cmd = yosegi();
    cmd.arg("emit").arg(test_program("diffusion1d.c")).arg("-o").arg(&target);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    let written: Vec<_> = std::fs::read_dir(&target)
        .unwrap_or_else(|e| panic!("emit did not create {}: {e}\n{}", target.display(), finished.describe()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    assert!(!written.is_empty(), "emit wrote nothing into {}", target.display());
    let any_nonempty = written.iter().any(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() > 0));
    assert!(any_nonempty, "emit wrote only empty files: {written:?}");
}

/// A stencil under each staging mode prints what gcc's build prints; `--stats` shows that
/// `on` ran both staged kernels (one point per thread, and four) on the simulator, barriers
/// and all, taking turns, and `off` never ran either.
#[test]
fn staging_on_and_off_run_a_stencil_like_gcc() {
    let program = test_program("jacobi2d.c");
    let expected = gcc_output(&program);
    for (mode, staged_ran) in [("off", false), ("on", true)] {
        let finished = yosegi_run(&["--device", "sim", "--stats", "--staging", mode], &[&program], &[], Input::Nothing);
        assert_eq!(finished.code(), Some(0), "--staging {mode}\n{}", finished.describe());
        assert_eq!(finished.stdout, expected.stdout, "--staging {mode} changed the output");
        assert_eq!(finished.stderr.contains("_staged x"), staged_ran, "--staging {mode}\n{}", finished.describe());
        assert_eq!(finished.stderr.contains("_staged_x4 x"), staged_ran, "--staging {mode}\n{}", finished.describe());
    }
}

#[test]
fn no_staging_with_an_explicit_staging_mode_is_a_usage_error() {
    let finished = yosegi_run(&["--device", "sim", "--no-staging", "--staging", "on"], &[&test_program("jacobi2d.c")], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(finished.stdout.is_empty(), "nothing may run for a bad command line\n{}", finished.describe());
    assert!(finished.stderr.contains("--no-staging"), "{}", finished.describe());
}

#[test]
fn explain_states_the_staging_rule_in_force() {
    for (flags, expected) in [
        (&["--staging", "off"][..], "variants: one, global memory (staging is off)"),
        (&["--no-staging"][..], "variants: one, global memory (staging is off)"),
    ] {
        let mut cmd = yosegi();
        cmd.arg("explain").args(flags).arg(test_program("jacobi2d.c"));
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(0), "{}", finished.describe());
        assert!(finished.stdout.contains(expected), "{flags:?}\n{}", finished.describe());
    }
}

/// Where OpenACC itself says what a program computes differently from its sequential reading:
/// `create(zero:)` starts a device copy zeroed, and `acc_on_device` in a kernel names the device.
#[test]
fn zero_modifier_and_acc_on_device_follow_openacc() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = write(
        dir.path(),
        "zero.c",
        "#include <stdio.h>\n#include <openacc.h>\n\
         int main(void) {\n  double b[8]; int on = 0;\n  for (int i = 0; i < 8; i++) b[i] = 1;\n\
         #pragma acc data create(zero: b[0:8]) copyout(b[0:8])\n  {\n\
         #pragma acc parallel loop\n    for (int i = 0; i < 8; i++) b[i] += i;\n  }\n\
         #pragma acc serial copy(on)\n  { on = acc_on_device(acc_device_nvidia) * 10 + acc_on_device(acc_device_host); }\n\
           printf(\"%g %g %d %d\\n\", b[0], b[7], on, acc_on_device(acc_device_host));\n  return 0;\n}\n",
    );
    let finished = yosegi_run(&["--device", "sim"], &[&program], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, "0 7 10 1\n");
}

#[test]
fn a_device_number_out_of_range_is_a_fault_at_the_directive() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = write(
        dir.path(),
        "devnum.c",
        "int main(void) {\n  int d = 3;\n#pragma acc set device_num(d)\n  return 0;\n}\n",
    );
    let finished = yosegi_run(&["--device", "sim"], &[&program], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(1), "{}", finished.describe());
    assert!(finished.stderr.contains("devnum.c:3") && finished.stderr.contains("names device 3"), "{}", finished.stderr);
}

#[test]
fn dash_w_silences_warnings_but_not_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let warned = write(
        dir.path(),
        "warned.c",
        "#include <stdio.h>\nint main(void) {\n  double s = 10.0, a[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n\
         #pragma acc parallel loop reduction(-:s)\n  for (int i = 0; i < 8; i++) s -= a[i];\n  printf(\"%g\\n\", s);\n  return 0;\n}\n",
    );
    let loud = yosegi_run(&["--device", "sim"], &[&warned], &[], Input::Nothing);
    assert_eq!(loud.code(), Some(0), "{}", loud.describe());
    assert!(loud.stderr.contains("warning:"), "{}", loud.describe());
    let quiet = yosegi_run(&["--device", "sim", "-w"], &[&warned], &[], Input::Nothing);
    assert_eq!(quiet.code(), Some(0), "{}", quiet.describe());
    assert_eq!(quiet.stdout.trim(), "-26", "{}", quiet.describe());
    assert!(!quiet.stderr.contains("warning"), "{}", quiet.describe());
    let broken = write(dir.path(), "broken.c", "int main(void) {\n#pragma acc parallel loop reduction(-:s)\n  return 0 +;\n}\n");
    let failed = yosegi_run(&["--device", "sim", "-w"], &[&broken], &[], Input::Nothing);
    assert_eq!(failed.code(), Some(2), "{}", failed.describe());
    assert!(failed.stderr.contains("error:") && !failed.stderr.contains("warning"), "{}", failed.describe());
}

#[test]
fn an_inline_only_function_is_defined_as_older_compilers_define_it() {
    // C99 makes `inline` without `extern` an inline definition only; taking the function's
    // address needs the external one, which PGI-lineage compilers emit (NPB EP relies on it).
    let dir = tempfile::tempdir().expect("temp dir");
    let source = write(
        dir.path(),
        "inline_only.c",
        "#include <stdio.h>\ninline double twice(double x) { return 2.0 * x; }\n\
         int main(void) {\n  double (*f)(double) = twice;\n  double a[4] = {1, 2, 3, 4};\n\
         #pragma acc parallel loop copy(a)\n  for (int i = 0; i < 4; i++) a[i] = a[i] + 1;\n\
         printf(\"%g %g\\n\", f(a[3]), twice(a[0]));\n  return 0;\n}\n",
    );
    let finished = yosegi_run(&["--device", "sim"], &[&source], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout.trim(), "10 4", "{}", finished.describe());
}

#[test]
fn a_loop_whose_iterations_write_one_element_runs_in_order_with_a_warning() {
    let finished = yosegi_run(&["--device", "sim"], &[&test_program("racing_stores.c")], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert!(
        finished.stderr.contains("every iteration of the loop over `j` writes the same element of `x`")
            && finished.stderr.contains("that loop and those inside it run in order inside each thread"),
        "{}",
        finished.describe()
    );
    assert!(finished.stderr.contains("the loop nest runs on one thread"), "{}", finished.describe());
}

#[test]
fn a_pointer_of_unknown_extent_is_refused_at_the_clause_naming_the_allocation_kinds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = write(
        dir.path(),
        "untracked.c",
        "#include <stdio.h>\nstatic void twice(double *p) {\n#pragma acc parallel loop copy(p)\n\
         for (int i = 0; i < 8; i++) p[i] *= 2;\n}\nint main(void) {\n  double local[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n\
         twice(local);\n  printf(\"%g\\n\", local[7]);\n  return 0;\n}\n",
    );
    let finished = yosegi_run(&["--device", "sim"], &[&source], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(
        finished.stderr.contains("untracked.c:3:32")
            && finished.stderr.contains("cannot tell how many elements `p` has")
            && finished.stderr.contains("posix_memalign"),
        "{}",
        finished.describe()
    );
}

/// Two files' `static` functions of one name are two functions on the device as in C: each
/// file's kernel calls its own (`scale` doubles in main.c, halves in other.c; gcc's build of
/// the same two files is the reference).
#[test]
fn same_named_static_functions_of_two_files_each_serve_their_own_kernels() {
    let dir = tempfile::tempdir().expect("temp dir");
    let main = write(
        dir.path(),
        "main.c",
        "#include <stdio.h>\nstatic double scale(double x) { return 2 * x; }\nvoid run(double *a);\nint main(void) {\n  double a[4] = {1, 2, 3, 4};\n\
         #pragma acc parallel loop copy(a[0:4])\n  for (int i = 0; i < 4; i++) a[i] = scale(a[i]);\n  run(a);\n\
         printf(\"%g %g %g\\n\", a[0], a[3], scale(a[1]));\n  return 0;\n}\n",
    );
    let other = write(
        dir.path(),
        "other.c",
        "static double scale(double x) { return x / 2 + 1; }\nvoid run(double *a) {\n#pragma acc parallel loop copy(a[0:4])\n  for (int i = 0; i < 4; i++) a[i] = scale(a[i]);\n}\n",
    );
    let reference = common::gcc_build(&[main.clone(), other.clone()], dir.path());
    let expected = run(std::process::Command::new(&reference), Input::Nothing);
    assert_eq!(expected.stdout, "2 5 6\n", "{}", expected.describe());
    let finished = yosegi_run(&["--device", "sim"], &[&main, &other], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, expected.stdout, "{}", finished.describe());
}

/// Two external definitions of one function are the linker's error: refused at the second,
/// naming the first, with status 2.
#[test]
fn an_external_function_defined_in_two_files_is_refused_with_both_places() {
    let dir = tempfile::tempdir().expect("temp dir");
    let main = write(dir.path(), "main.c", "double scale(double x) { return 2 * x; }\nvoid run(double *a);\nint main(void) {\n  double a[4] = {1, 2, 3, 4};\n  run(a);\n  return (int)scale(a[0]);\n}\n");
    let other = write(
        dir.path(),
        "other.c",
        "double scale(double x) { return x / 2; }\nvoid run(double *a) {\n#pragma acc parallel loop copy(a[0:4])\n  for (int i = 0; i < 4; i++) a[i] = scale(a[i]);\n}\n",
    );
    let finished = yosegi_run(&["--device", "sim"], &[&main, &other], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(
        finished.stderr.contains("other.c:1:8")
            && finished.stderr.contains("the function `scale` is also defined at")
            && finished.stderr.contains("main.c:1:8")
            && finished.stderr.contains("make `scale` `static`"),
        "{}",
        finished.describe()
    );
}

/// A routine with array parameters is inlined into the kernels that call it, and its names are
/// looked up in the kernel's file. One from another file that reads a file-scope variable
/// `static` in either file would read the wrong one: refused at the call. An external variable
/// both files share, and a local that shadows the static's name, are the same in both files:
/// those give gcc's answer.
#[test]
fn an_inlined_routine_of_another_file_that_reads_a_static_variable_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let main = write(
        dir.path(),
        "main.c",
        "#include <stdio.h>\nstatic double g = 100.0;\ndouble shared = 0.5;\ndouble b_sum(int n, double *x);\ndouble b_mix(int n, double *x);\n\
         int main(void) {\n  double x[8], out[4];\n  for (int i = 0; i < 8; i++) x[i] = i;\n\
         #pragma acc parallel loop copyin(x) copyout(out)\n  for (int i = 0; i < 4; i++) out[i] = SUM(8, x) + g;\n\
         printf(\"%.3f %.3f\\n\", out[0], out[3]);\n  return 0;\n}\n",
    );
    let other = write(
        dir.path(),
        "other.c",
        "static double g = 1.0;\nextern double shared;\n#pragma acc routine seq\n\
         double b_sum(int n, double *x) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * g; return s; }\n\
         #pragma acc routine seq\n\
         double b_mix(int n, double *x) { double g = 2.0, s = 0; for (int i = 0; i < n; i++) s += x[i] * g * shared; return s; }\n",
    );
    let with_call = |call: &str| {
        let text = std::fs::read_to_string(&main).unwrap().replace("SUM", call);
        write(dir.path(), &format!("{call}/main.c"), &text)
    };
    let refused = with_call("b_sum");
    let finished = yosegi_run(&["--device", "sim"], &[&refused, &other], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(
        finished.stderr.contains("main.c:10:40")
            && finished.stderr.contains("`b_sum` (defined in other.c) reads the file-scope variable `g`, which is `static` in other.c")
            && finished.stderr.contains("pass `g` to `b_sum` as an argument"),
        "{}",
        finished.describe()
    );
    let fine = with_call("b_mix");
    let reference = common::gcc_build(&[fine.clone(), other.clone()], dir.path());
    let expected = run(std::process::Command::new(&reference), Input::Nothing);
    assert_eq!(expected.code(), Some(0), "{}", expected.describe());
    let finished = yosegi_run(&["--device", "sim"], &[&fine, &other], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, expected.stdout);
}

/// A local scratch array that only kernels touch is never copied back when its `data create`
/// region ends, and a file-scope one created on every call moves once; the program still
/// prints what gcc's build prints (tests/programs/scratch_arrays.c says what each array does).
#[test]
fn scratch_arrays_of_create_regions_do_not_travel() {
    let program = test_program("scratch_arrays.c");
    let finished = run_with_stats_like_gcc(&program);
    let counter = |name: &str| -> u64 {
        let line = finished.stderr.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no `{name}` in\n{}", finished.stderr));
        line.split_whitespace().last().and_then(|v| v.parse().ok()).expect("a number")
    };
    // Sent: `a` once (cached between calls). Back: `out` and `kept` per call, `total` once.
    let n = 4096 * 8;
    assert_eq!(counter("host->device bytes"), n, "{}", finished.stderr);
    assert_eq!(counter("device->host bytes"), 4 * 2 * n + n, "{}", finished.stderr);
}

/// Host loops that read and write mapped arrays between kernels print what gcc's build prints,
/// and their access hooks do work only once per array after each runtime call: 12,000 host
/// statements touch tracked arrays, a dozen hooks reach the runtime (`runtime::settled_hooks`).
#[test]
fn host_loops_over_mapped_arrays_settle_their_hooks_once() {
    let program = test_program("host_loop_hooks.c");
    let finished = run_with_stats_like_gcc(&program);
    let line = finished.stderr.lines().find(|l| l.starts_with("runtime: host access calls")).unwrap_or_else(|| panic!("no host access line in\n{}", finished.stderr));
    let calls: u64 = line.split_whitespace().rev().nth(1).and_then(|v| v.parse().ok()).expect("a count");
    assert!((1..=100).contains(&calls), "{calls} host-access hooks reached the runtime:\n{}", finished.stderr);
}

/// A grid of fewer blocks than the device has multiprocessors runs with narrower blocks
/// (`runtime::launch_shape`): 40x40 iterations make 2x5 blocks of 32x8, spread over 64
/// multiprocessors 2x40 blocks of 32x1, with gcc's answer. A kernel with a reduction combines
/// per block in shared memory and keeps its shape.
#[test]
fn small_grids_spread_their_blocks_over_the_multiprocessors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = write(
        dir.path(),
        "spread.c",
        "#include <stdio.h>\n#define N 40\nstatic double a[N][N];\nint main(void) {\n  double s = 0.0;\n\
         #pragma acc parallel loop collapse(2) copyout(a)\n  for (int i = 0; i < N; i++)\n    for (int j = 0; j < N; j++) a[i][j] = i * 0.5 + j;\n\
         #pragma acc parallel loop reduction(+:s) copyin(a)\n  for (int i = 0; i < N * N; i++) s += a[i / N][i % N];\n\
         printf(\"%.3f %.3f\\n\", a[N - 1][3], s);\n  return 0;\n}\n",
    );
    let reference = common::gcc_build(std::slice::from_ref(&program), dir.path());
    let expected = run(std::process::Command::new(&reference), Input::Nothing);
    assert_eq!(expected.code(), Some(0), "{}", expected.describe());
    let blocks = |multiprocessors: &str| -> u64 {
        let mut cmd = yosegi();
        cmd.args(["run", "--device", "sim", "--stats"]).arg(&program).env("YOSEGI_MULTIPROCESSORS", multiprocessors);
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(0), "{}", finished.describe());
        assert_eq!(finished.stdout, expected.stdout, "{}", finished.describe());
        let line = finished.stderr.lines().find(|l| l.starts_with("blocks launched")).unwrap_or_else(|| panic!("{}", finished.stderr));
        line.split_whitespace().last().and_then(|v| v.parse().ok()).expect("a number")
    };
    // The reduction's launch: 1600 iterations in blocks of 256, 7 blocks either way.
    assert_eq!(blocks("0"), 2 * 5 + 7);
    assert_eq!(blocks("64"), 2 * 40 + 7);
}

/// `--lang mesi` reads a file in the MESI-CUDA dialect whatever its extension, and `--lang c`
/// reads a `.cu` file as C (where the launch is a syntax error).
#[test]
fn lang_chooses_the_dialect_whatever_the_extension() {
    let dir = tempfile::tempdir().expect("temp dir");
    let source = std::fs::read_to_string(repo_root().join("examples").join("mesi").join("diffusion.cu")).expect("example");
    let timer = std::fs::read_to_string(repo_root().join("examples").join("mesi").join("timer.h")).expect("timer");
    write(dir.path(), "timer.h", &timer);
    let as_c = write(dir.path(), "diffusion_dialect.c", &source);
    let as_cu = write(dir.path(), "diffusion.cu", &source);
    let default = yosegi_run(&["--device", "sim", "-DN=1024"], &[&as_cu], &["4"], Input::Nothing);
    assert_eq!(default.code(), Some(0), "{}", default.describe());
    let forced = yosegi_run(&["--device", "sim", "--lang", "mesi", "-DN=1024"], &[&as_c], &["4"], Input::Nothing);
    assert_eq!(forced.code(), Some(0), "{}", forced.describe());
    let first_line = |s: &str| s.lines().next().unwrap_or_default().to_string();
    assert_eq!(first_line(&forced.stdout), first_line(&default.stdout));
    let as_plain_c = yosegi_run(&["--device", "sim", "--lang", "c", "-DN=1024"], &[&as_cu], &["4"], Input::Nothing);
    assert_eq!(as_plain_c.code(), Some(2), "{}", as_plain_c.describe());
    assert!(as_plain_c.stderr.contains("diffusion.cu:"), "{}", as_plain_c.describe());
}

/// A host OpenMP program: a team size recorded inside `#pragma omp parallel`, a timer from
/// `omp_get_wtime`, and kernels before and after.
const HOST_OPENMP: &str = "#include <stdio.h>\n#include <omp.h>\n#define N 512\nstatic double a[N];\n\
int main(void) {\n  double t0 = omp_get_wtime();\n  int team = 0;\n\
#pragma acc parallel loop copyout(a)\n  for (int i = 0; i < N; i++) a[i] = i;\n\
#pragma omp parallel for reduction(max:team)\n  for (int i = 0; i < N; i++) {\n    a[i] += 1;\n    if (omp_get_num_threads() > team) team = omp_get_num_threads();\n  }\n\
  double s = 0;\n\
#pragma acc parallel loop copyin(a) reduction(+:s)\n  for (int i = 0; i < N; i++) s += a[i];\n\
  printf(\"%.1f %s\\n\", s, omp_get_wtime() >= t0 ? \"clock\" : \"backwards\");\n  fprintf(stderr, \"team %d\\n\", team);\n  return 0;\n}\n";

fn team_of(stderr: &str) -> u32 {
    stderr.lines().find_map(|l| l.strip_prefix("team ")).and_then(|n| n.trim().parse().ok()).unwrap_or_else(|| panic!("no team size in\n{stderr}"))
}

/// `-fopenmp` runs the host's OpenMP loop on several threads (two asked for) between kernels,
/// with gcc's answer and no warning about the pragmas; `explain` and `emit` take it too.
#[test]
fn dash_fopenmp_runs_host_openmp_beside_the_kernels() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = write(dir.path(), "prog.c", HOST_OPENMP);
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "-fopenmp"]).arg(&program).env("OMP_NUM_THREADS", "2");
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, "131328.0 clock\n", "{}", finished.describe());
    assert_eq!(team_of(&finished.stderr), 2, "{}", finished.describe());
    assert!(!finished.stderr.contains("warning") && !finished.stderr.contains("note"), "{}", finished.describe());
    for command in ["explain", "emit"] {
        let mut cmd = yosegi();
        cmd.args([command, "-fopenmp"]).arg(&program);
        if command == "emit" {
            cmd.arg("-o").arg(dir.path().join("emitted"));
        }
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(0), "{command}\n{}", finished.describe());
    }
    let emitted = std::fs::read_to_string(dir.path().join("emitted/tu0_prog.c")).expect("emitted host code");
    assert!(emitted.contains("\n#pragma omp parallel for reduction(max:team)\n  for"), "the construct must keep its loop:\n{emitted}");
}

/// Without `-fopenmp` a program calling OpenMP's API runs (libgomp linked), its directives
/// inactive (a team of one), and one note says so, at the first call.
#[test]
fn without_dash_fopenmp_the_openmp_api_links_with_one_note() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = write(dir.path(), "prog.c", HOST_OPENMP);
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim"]).arg(&program).env("OMP_NUM_THREADS", "2");
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, "131328.0 clock\n", "{}", finished.describe());
    assert_eq!(team_of(&finished.stderr), 1, "the directives must stay inactive\n{}", finished.describe());
    assert_eq!(finished.stderr.matches("note:").count(), 1, "{}", finished.describe());
    assert!(
        finished.stderr.contains("note: the program calls OpenMP's `omp_get_wtime`: it is linked with libgomp, and its `#pragma omp` directive stays ignored without -fopenmp")
            && finished.stderr.contains("prog.c:6:15"),
        "{}",
        finished.describe()
    );
    assert!(!finished.stderr.contains("warning"), "{}", finished.describe());
    // Directives alone (no API call): one warning for all of them.
    let pragmas = write(
        dir.path(),
        "pragmas.c",
        "#include <stdio.h>\nint main(void) {\n  int a[8];\n#pragma omp parallel for\n  for (int i = 0; i < 8; i++) a[i] = i;\n#pragma omp parallel for\n  for (int i = 0; i < 8; i++) a[i] += 1;\n  printf(\"%d\\n\", a[7]);\n  return 0;\n}\n",
    );
    let finished = yosegi_run(&["--device", "sim"], &[&pragmas], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, "8\n");
    assert_eq!(finished.stderr.matches("warning: ignored pragma").count(), 1, "{}", finished.describe());
    assert!(finished.stderr.contains("pragmas.c:4:1") && finished.stderr.contains("and the program's 1 others"), "{}", finished.describe());
}

/// A library built here, as a static and a shared library: `-L DIR -lfoo` (the shared one,
/// found again when the program is loaded), the archive and the object as files, `-l:` and
/// `-Wl,` flags (`--wrap` shows they reach the linker), in the order given.
#[test]
fn run_links_libraries_and_objects_as_cc_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lib = dir.path().join("lib");
    write(&lib, "foo.c", "double foo_scale(double x) { return 3.0 * x; }\n");
    let cc = |args: &[&str]| {
        let out = std::process::Command::new("cc").current_dir(&lib).args(args).output().expect("cc runs");
        assert!(out.status.success(), "cc {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    cc(&["-c", "-fPIC", "foo.c", "-o", "foo.o"]);
    cc(&["-shared", "foo.o", "-o", "libfoo.so"]);
    let ar = std::process::Command::new("ar").current_dir(&lib).args(["rcs", "libfoo.a", "foo.o"]).status().expect("ar runs");
    assert!(ar.success());
    let main = "int main(void) {\n  double a[8];\n#pragma acc parallel loop copyout(a)\n  for (int i = 0; i < 8; i++) a[i] = i;\n  printf(\"%g\\n\", foo_scale(a[7]));\n  return 0;\n}\n";
    let program = write(dir.path(), "prog.c", &format!("#include <stdio.h>\ndouble foo_scale(double);\n{main}"));
    let wrapped = write(
        dir.path(),
        "wrapped.c",
        &format!("#include <stdio.h>\ndouble foo_scale(double);\ndouble __real_foo_scale(double);\ndouble __wrap_foo_scale(double x) {{ return __real_foo_scale(x) + 1000; }}\n{main}"),
    );
    let lib_dir = lib.to_str().expect("utf-8 path").to_string();
    let strings = |flags: &[&str]| flags.iter().map(|f| f.to_string()).collect::<Vec<String>>();
    let cases: Vec<(Vec<String>, Vec<PathBuf>, &str)> = vec![
        (strings(&["-L", &lib_dir, "-lfoo"]), vec![program.clone()], "21\n"),
        (strings(&["-lfoo", &format!("-L{lib_dir}")]), vec![program.clone()], "21\n"),
        (strings(&["-L", &lib_dir, "-l:libfoo.a"]), vec![program.clone()], "21\n"),
        (vec![], vec![program.clone(), lib.join("libfoo.a")], "21\n"),
        (vec![], vec![program.clone(), lib.join("foo.o")], "21\n"),
        (vec![format!("-Wl,-rpath,{lib_dir}")], vec![program.clone(), lib.join("libfoo.so")], "21\n"),
        (strings(&["-Wl,--wrap=foo_scale", "-L", &lib_dir, "-lfoo"]), vec![wrapped.clone()], "1021\n"),
    ];
    for (flags, files, expected) in cases {
        let mut args = vec!["--device", "sim"];
        args.extend(flags.iter().map(String::as_str));
        let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        let finished = yosegi_run(&args, &files, &[], Input::Nothing);
        assert_eq!(finished.code(), Some(0), "{flags:?} {files:?}\n{}", finished.describe());
        assert_eq!(finished.stdout, expected, "{flags:?} {files:?}\n{}", finished.describe());
    }
    // Without the library: refused at the call, saying how to link one.
    let finished = yosegi_run(&["--device", "sim"], &[&program], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(finished.stderr.contains("`foo_scale` is defined nowhere") && finished.stderr.contains("-lNAME"), "{}", finished.describe());
}

/// A library the linker cannot find is a clear error (status 2) naming it; a `-W` flag that is
/// not for the linker is a usage error; objects alone are no program.
#[test]
fn a_missing_library_and_bad_link_flags_are_bad_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = write(dir.path(), "prog.c", "int main(void) { return 0; }\n");
    let finished = yosegi_run(&["--device", "sim", "-lyosegi_no_such_library"], &[&program], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(
        finished.stderr.contains("cannot find the library `-lyosegi_no_such_library`") && finished.stderr.contains("-L DIR"),
        "{}",
        finished.describe()
    );
    assert!(!finished.stderr.contains("panicked") && !finished.stderr.contains("/usr/bin/ld"), "{}", finished.describe());
    let finished = yosegi_run(&["--device", "sim", "-Wall"], &[&program], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(finished.stderr.contains("`-Wall`: `yosegi run` takes `-Wl,OPTIONS`"), "{}", finished.describe());
    let object = write(dir.path(), "x.o", "");
    let finished = yosegi_run(&["--device", "sim"], &[&object], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(finished.stderr.contains("no C file to compile"), "{}", finished.describe());
}

/// `main` falling off its end returns 0 (C99 5.1.2.2.3), after kernels and output.
#[test]
fn main_without_return_exits_zero() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = write(
        dir.path(),
        "noreturn.c",
        "#include <stdio.h>\nint main(int argc, char **argv) {\n  double a[64];\n#pragma acc parallel loop copyout(a)\n  for (int i = 0; i < 64; i++) a[i] = i * 0.5;\n  printf(\"%f\\n\", a[63] + argc);\n}\n",
    );
    let finished = yosegi_run(&["--device", "sim"], &[&program], &[], Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, "32.500000\n");
}
