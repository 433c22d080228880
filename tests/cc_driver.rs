//! `yosegi cc`: programs under `tests/make_programs/` are built by their own Makefile with
//! `make CC="yosegi cc"` and with `make CC=gcc` (the reference, pragmas ignored), run, and
//! compared. The Yosegi build must run its kernels through the runtime library.

mod common;

use common::{ensure_runtime_library, repo_root};
use std::path::Path;
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

fn make(dir: &Path, cc: &str) {
    let out = Command::new("make")
        .current_dir(dir)
        .arg(format!("CC={cc}"))
        .output()
        .expect("`make` must be installed to test the compiler driver (.ci/run installs it)");
    assert!(out.status.success(), "make CC={cc} failed:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

fn run(program: &Path, env: &[(&str, &str)]) -> std::process::Output {
    Command::new(program).arg("7").envs(env.iter().copied()).output().expect("the built program runs")
}


/// Builds `tests/make_programs/<name>` with `make CC="yosegi cc"` and with `make CC=gcc`,
/// runs both, and checks that the Yosegi build prints gcc's output. Returns the directory of
/// the Yosegi build (under `scratch`) and what its run wrote to stderr (the stats).
fn build_and_match_gcc(name: &str, scratch: &Path) -> (std::path::PathBuf, String) {
    ensure_runtime_library();
    let source = repo_root().join("tests/make_programs").join(name);
    let (ours, reference) = (scratch.join("yosegi"), scratch.join("gcc"));
    copy_dir(&source, &ours);
    copy_dir(&source, &reference);
    make(&ours, &format!("{} cc", env!("CARGO_BIN_EXE_yosegi")));
    make(&reference, "gcc");
    let expected = run(&reference.join("prog"), &[]);
    assert!(expected.status.success());
    let got = run(&ours.join("prog"), &[("YOSEGI_DEVICE", "sim"), ("YOSEGI_STATS", "1")]);
    let stderr = String::from_utf8_lossy(&got.stderr).into_owned();
    assert!(got.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&got.stdout), String::from_utf8_lossy(&expected.stdout), "{stderr}");
    (ours, stderr)
}

#[test]
fn a_two_file_makefile_program_builds_with_yosegi_cc_and_matches_gcc() {
    let scratch = tempfile::tempdir().unwrap();
    let (ours, stderr) = build_and_match_gcc("two_files", scratch.path());
    // The kernels ran on the device through the runtime, not the objects' sequential code.
    assert!(stderr.contains("relax_l15"), "no kernel launches reported:\n{stderr}");
    let bad = run(&ours.join("prog"), &[("YOSEGI_DEVICE", "gpu")]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("YOSEGI_DEVICE is `gpu`"));
}

/// Same-named `static` functions of two files (one plain, one inlined for its array
/// parameter), each called by its own file's kernels, built by make with `yosegi cc`.
#[test]
fn same_named_statics_of_two_files_build_with_yosegi_cc_and_match_gcc() {
    let scratch = tempfile::tempdir().unwrap();
    let (_, stderr) = build_and_match_gcc("static_twins", scratch.path());
    assert!(stderr.contains("main_l15") && stderr.contains("other_pass_l9"), "no kernel launches reported:\n{stderr}");
}

/// A static library of the project's linked with `-L lib -lsmooth`: its OpenACC loops run
/// through the runtime (they ran sequentially from the archive before, without a word).
#[test]
fn a_static_library_linked_with_dash_l_runs_its_loops_through_the_runtime() {
    let scratch = tempfile::tempdir().unwrap();
    let (_, stderr) = build_and_match_gcc("static_lib", scratch.path());
    // (Its loop's body is one region: the runtime may run its two kernels as kernels of
    // several steps, named after the first.)
    let ran = stderr.contains("smooth_l8") && (stderr.contains("smooth_l10") || stderr.contains("smooth_l8_steps"));
    assert!(ran, "the library's kernels did not run through the runtime:\n{stderr}");
}

#[test]
fn yosegi_cc_reports_errors_with_the_location_and_status_2() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("bad.c");
    std::fs::write(&file, "int main(void) {\n  int a[4];\n#pragma acc parallel loop copy(a) frobnicate\n  for (int i = 0; i < 4; i++) a[i] = i;\n  return 0;\n}\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_yosegi")).current_dir(scratch.path()).args(["cc", "-c", "bad.c"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.c:3:") && stderr.contains("frobnicate"), "{stderr}");
    assert!(!scratch.path().join("bad.o").exists());
    let usage = Command::new(env!("CARGO_BIN_EXE_yosegi-cc")).arg("--frobnicate").output().unwrap();
    assert_eq!(usage.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&usage.stderr).contains("unknown flag `--frobnicate`"));
}

/// Makefiles with `-MMD` and CMake (`-MD -MT obj -MF obj.d`) ask for a dependency file beside
/// the compile: the object must still be Yosegi's (its kernels run through the runtime), not
/// the system compiler's alone, and the dependency file must name the object and the headers.
#[test]
fn dependency_flags_write_the_dependency_file_and_keep_the_kernels() {
    ensure_runtime_library();
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    std::fs::write(dir.join("n.h"), "#define N 1000\n").unwrap();
    std::fs::write(
        dir.join("x.c"),
        "#include <stdio.h>\n#include \"n.h\"\nint main(void) {\n  double a[N];\n#pragma acc parallel loop copyout(a)\n  for (int i = 0; i < N; i++) a[i] = 2.0 * i;\n  printf(\"%.1f\\n\", a[N - 1]);\n  return 0;\n}\n",
    )
    .unwrap();
    let cc = env!("CARGO_BIN_EXE_yosegi-cc");
    let compile = |args: &[&str]| {
        let out = Command::new(cc).current_dir(dir).args(args).output().unwrap();
        assert!(out.status.success(), "yosegi-cc {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    // Make's habit: the file and the target named after the object.
    compile(&["-c", "x.c", "-MMD", "-o", "x.o"]);
    let deps = std::fs::read_to_string(dir.join("x.d")).expect("x.d written");
    assert!(deps.starts_with("x.o:") && deps.contains("x.c") && deps.contains("n.h"), "{deps}");
    // CMake's: both named.
    compile(&["-MD", "-MT", "obj/x.o", "-MF", "x.o.d", "-c", "x.c", "-o", "y.o"]);
    let deps = std::fs::read_to_string(dir.join("x.o.d")).expect("x.o.d written");
    assert!(deps.starts_with("obj/x.o:") && deps.contains("n.h"), "{deps}");
    for object in ["x.o", "y.o"] {
        compile(&[object, "-o", "prog"]);
        let out = Command::new(dir.join("prog")).envs([("YOSEGI_DEVICE", "sim"), ("YOSEGI_STATS", "1")]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "1998.0\n");
        let stats = String::from_utf8_lossy(&out.stderr);
        assert!(stats.lines().any(|l| l.starts_with("main_l6 ") && l.split_whitespace().nth(1) == Some("1")), "{object}: the kernel did not run through Yosegi:\n{stats}");
    }
}

/// `-fyosegi-fusion=` and `-fyosegi-staging=` on the link: the executable runs the fused
/// kernel only when fusion is on (`on` always runs it; `off` never builds it), and with
/// staging on the staged variants; every build prints gcc's output.
#[test]
fn the_pass_modes_reach_an_executable_through_the_link_flags() {
    ensure_runtime_library();
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let source = repo_root().join("tests/programs/fusion_chain1d.c");
    let gcc = Command::new("gcc").args(["-w", "-O2", "-o"]).arg(dir.join("reference")).arg(&source).arg("-lm").output().unwrap();
    assert!(gcc.status.success(), "{}", String::from_utf8_lossy(&gcc.stderr));
    let expected = Command::new(dir.join("reference")).output().unwrap();
    let cc = env!("CARGO_BIN_EXE_yosegi-cc");
    let object = dir.join("chain.o");
    let out = Command::new(cc).args(["-c", "-fyosegi-fusion=on"]).arg(&source).arg("-o").arg(&object).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let build_and_run = |flags: &[&str]| {
        let program = dir.join(format!("prog{}", flags.join("")));
        let out = Command::new(cc).args(flags).arg(&object).arg("-o").arg(&program).arg("-lm").output().unwrap();
        assert!(out.status.success(), "{flags:?}: {}", String::from_utf8_lossy(&out.stderr));
        let run = Command::new(&program).envs([("YOSEGI_DEVICE", "sim"), ("YOSEGI_STATS", "1")]).output().unwrap();
        assert!(run.status.success(), "{flags:?}: {}", String::from_utf8_lossy(&run.stderr));
        assert_eq!(run.stdout, expected.stdout, "{flags:?}");
        String::from_utf8_lossy(&run.stderr).into_owned()
    };
    let ran = |stats: &str, suffix: &str| stats.lines().any(|l| l.split_whitespace().next().is_some_and(|k| k.ends_with(suffix)));
    let fused = build_and_run(&["-fyosegi-fusion=on"]);
    assert!(ran(&fused, "_fused"), "fusion on: no fused kernel ran:\n{fused}");
    let unfused = build_and_run(&["-fyosegi-fusion=off"]);
    assert!(!ran(&unfused, "_fused"), "fusion off: a fused kernel ran:\n{unfused}");
    let staged = build_and_run(&["-fyosegi-fusion=off", "-fyosegi-staging=on"]);
    assert!(staged.lines().any(|l| l.split_whitespace().next().is_some_and(|k| k.contains("_staged"))), "staging on: no staged variant ran:\n{staged}");
    let bad = Command::new(cc).arg("-fyosegi-fusion=maybe").arg(&object).arg("-o").arg(dir.join("never")).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("the fusion mode is auto, on or off"));
}
