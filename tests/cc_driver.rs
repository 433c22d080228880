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

/// `yosegi cc`'s output without the warning a machine without NVRTC gives every link of a
/// program with kernels (tested by `a_link_without_nvrtc_warns_once_and_its_executable_runs`).
fn without_ahead_of_time_warning(stderr: &str) -> String {
    stderr.lines().filter(|l| !l.contains("kernels are not compiled ahead of time")).map(|l| format!("{l}\n")).collect()
}

/// A host OpenMP program: kernels before and after a host `omp parallel for` that records its
/// team's size, and a timer from `omp_get_wtime`.
const HOST_OPENMP: &str = "#include <stdio.h>\n#include <omp.h>\n#define N 2048\nstatic double a[N];\n\
int main(void) {\n  double t0 = omp_get_wtime();\n  int team = 0;\n\
#pragma acc parallel loop copyout(a)\n  for (int i = 0; i < N; i++) a[i] = i;\n\
#pragma omp parallel for reduction(max:team)\n  for (int i = 0; i < N; i++) {\n    a[i] = 2 * a[i] + 1;\n    if (omp_get_num_threads() > team) team = omp_get_num_threads();\n  }\n\
  double s = 0;\n\
#pragma acc parallel loop copyin(a) reduction(+:s)\n  for (int i = 0; i < N; i++) s += a[i];\n\
  printf(\"%.1f %s\\n\", s, omp_get_wtime() >= t0 ? \"clock\" : \"backwards\");\n  fprintf(stderr, \"team %d\\n\", team);\n  return 0;\n}\n";

fn team_of(stderr: &str) -> u32 {
    stderr.lines().find_map(|l| l.strip_prefix("team ")).and_then(|n| n.trim().parse().ok()).unwrap_or_else(|| panic!("no team size in\n{stderr}"))
}

/// `yosegi cc -fopenmp`, in one command and as `-c` then the link: the host loop runs on the
/// two threads asked for, between kernels that run through the runtime, with gcc's answer.
#[test]
fn dash_fopenmp_builds_host_openmp_that_runs_on_several_threads() {
    ensure_runtime_library();
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    std::fs::write(dir.join("prog.c"), HOST_OPENMP).unwrap();
    let cc = env!("CARGO_BIN_EXE_yosegi-cc");
    let build = |args: &[&str]| {
        let out = Command::new(cc).current_dir(dir).args(args).output().unwrap();
        assert!(out.status.success(), "yosegi-cc {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let quiet = without_ahead_of_time_warning(&build(&["-fopenmp", "-O2", "prog.c", "-o", "whole"]));
    assert!(!quiet.contains("warning") && !quiet.contains("note"), "{quiet}");
    build(&["-fopenmp", "-c", "prog.c", "-o", "prog.o"]);
    build(&["-fopenmp", "prog.o", "-o", "linked"]);
    for program in ["whole", "linked"] {
        let out = Command::new(dir.join(program)).envs([("OMP_NUM_THREADS", "2"), ("YOSEGI_DEVICE", "sim"), ("YOSEGI_STATS", "1")]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{program}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "4194304.0 clock\n", "{program}: {stderr}");
        assert!(team_of(&stderr) > 1, "{program}: the host loop ran on one thread:\n{stderr}");
        assert!(stderr.lines().any(|l| l.starts_with("main_l17 ")), "{program}: the kernels did not run through Yosegi:\n{stderr}");
    }
}

/// Without `-fopenmp` the program links (libgomp provides OpenMP's API), its directives stay
/// inactive, and one note says so; with PGI's `-mp` it is `-fopenmp`.
#[test]
fn without_dash_fopenmp_the_openmp_api_links_with_one_note_and_dash_mp_is_openmp() {
    ensure_runtime_library();
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    std::fs::write(dir.join("prog.c"), HOST_OPENMP).unwrap();
    let cc = env!("CARGO_BIN_EXE_yosegi-cc");
    for (flag, team) in [(None, 1), (Some("-mp"), 2)] {
        let mut cmd = Command::new(cc);
        cmd.current_dir(dir).args(flag).args(["prog.c", "-o", "prog"]);
        let out = cmd.output().unwrap();
        let stderr = without_ahead_of_time_warning(&String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{flag:?}: {stderr}");
        let notes = stderr.matches("note: the program calls OpenMP's `omp_get_wtime`: it is linked with libgomp").count();
        assert_eq!(notes, usize::from(flag.is_none()), "{flag:?}: {stderr}");
        if flag.is_none() {
            assert!(stderr.contains("prog.c:6:15") && !stderr.contains("warning"), "{stderr}");
        }
        let run = Command::new(dir.join("prog")).envs([("OMP_NUM_THREADS", "2"), ("YOSEGI_DEVICE", "sim")]).output().unwrap();
        let run_stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{flag:?}: {run_stderr}");
        assert_eq!(String::from_utf8_lossy(&run.stdout), "4194304.0 clock\n");
        assert_eq!(team_of(&run_stderr), team, "{flag:?}: {run_stderr}");
    }
}

/// `main` falling off its end exits 0 in an executable of `yosegi cc`, where `main` is compiled
/// under another name (the status was what the last call left: `printf`'s count here).
#[test]
fn main_without_return_exits_zero_when_built_by_yosegi_cc() {
    ensure_runtime_library();
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    std::fs::write(
        dir.join("noreturn.c"),
        "#include <stdio.h>\nint main(int argc, char **argv) {\n  double a[64];\n#pragma acc parallel loop copyout(a)\n  for (int i = 0; i < 64; i++) a[i] = i * 0.5;\n  printf(\"%f\\n\", a[63] + argc);\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_yosegi-cc")).current_dir(dir).args(["noreturn.c", "-o", "noreturn"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(dir.join("noreturn")).env("YOSEGI_DEVICE", "sim").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "32.500000\n");
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
}

#[test]
fn a_main_with_local_arrays_larger_than_the_usual_stack_runs_as_under_yosegi_run() {
    // NPB SP keeps ~170 MB variable-length arrays as locals; an 8 MB stack crashed the
    // executable (SIGSEGV) where `yosegi run` ran it.
    ensure_runtime_library();
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let code = "#include <stdio.h>\n#include <stdlib.h>\n\
        static double solve(int n) {\n  double lhs[n][64];\n  double sum = 0.0;\n\
        #pragma acc data create(lhs)\n  {\n\
        #pragma acc parallel loop\n    for (int i = 0; i < n; i++)\n      for (int j = 0; j < 64; j++) lhs[i][j] = i + j * 0.5;\n\
        #pragma acc update self(lhs)\n  }\n\
        for (int i = 0; i < n; i++) sum += lhs[i][i % 64];\n  return sum;\n}\n\
        int main(int argc, char **argv) {\n  printf(\"%.1f\\n\", solve(argc > 1 ? atoi(argv[1]) : 1));\n  return 0;\n}\n";
    std::fs::write(dir.join("bigstack.c"), code).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_yosegi-cc")).current_dir(dir).args(["bigstack.c", "-o", "bigstack"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let gcc = system_cc(&[dir.join("bigstack.c").to_str().unwrap(), "-o", dir.join("bigstack-gcc").to_str().unwrap()]);
    assert!(gcc.status.success(), "{}", String::from_utf8_lossy(&gcc.stderr));
    // 40,000 rows of 64 doubles: 20 MB on the stack, under the usual 8 MB limit.
    let under_limit = |exe: &str| {
        Command::new("sh").current_dir(dir).arg("-c").arg(format!("ulimit -s 8192 && exec ./{exe} 40000")).env("YOSEGI_DEVICE", "sim").output().unwrap()
    };
    let reference = Command::new("sh").current_dir(dir).arg("-c").arg("ulimit -s unlimited 2>/dev/null || ulimit -s 65536; exec ./bigstack-gcc 40000").output().unwrap();
    assert!(reference.status.success(), "the gcc build needs more stack than this machine allows: {:?}", reference.status);
    let ours = under_limit("bigstack");
    assert_eq!(ours.status.code(), Some(0), "{}", String::from_utf8_lossy(&ours.stderr));
    assert_eq!(String::from_utf8_lossy(&ours.stdout), String::from_utf8_lossy(&reference.stdout));
    // The gcc build itself dies at that limit: the test does need the larger stack.
    assert!(!under_limit("bigstack-gcc").status.success());
}

fn system_cc(args: &[&str]) -> std::process::Output {
    Command::new("cc").args(args).output().expect("cc runs")
}

/// What configure scripts and CMake ask before compiling: answered as gcc answers, status 0;
/// the facts are the system compiler's.
#[test]
fn the_driver_answers_what_build_systems_ask() {
    let cc = env!("CARGO_BIN_EXE_yosegi-cc");
    let ask = |args: &[&str]| {
        let out = Command::new(cc).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out
    };
    let help = String::from_utf8_lossy(&ask(&["--help"]).stdout).into_owned();
    for taken in ["-fopenmp", "-fyosegi-fusion=", "-ta=", "YOSEGI_DEVICE", "YOSEGI_HOST_CC", "-print-"] {
        assert!(help.contains(taken), "--help does not mention {taken}:\n{help}");
    }
    let host_version = String::from_utf8_lossy(&system_cc(&["-dumpfullversion"]).stdout).trim().to_string();
    let version = String::from_utf8_lossy(&ask(&["--version"]).stdout).into_owned();
    let first = version.lines().next().unwrap_or_default();
    assert_eq!(first, format!("yosegi-cc (Yosegi {}) {host_version}", env!("CARGO_PKG_VERSION")), "{version}");
    assert!(version.contains("Free Software Foundation"), "the system compiler's own text is missing:\n{version}");
    let verbose = ask(&["-v"]);
    let verbose_text = String::from_utf8_lossy(&verbose.stderr);
    assert!(verbose_text.starts_with("yosegi-cc (Yosegi ") && verbose_text.contains(&format!("gcc version {host_version}")), "{verbose_text}");
    for question in ["-dumpversion", "-dumpmachine", "-print-prog-name=ld", "-print-file-name=libgomp.so", "-print-search-dirs", "-print-libgcc-file-name"] {
        let ours = ask(&[question]);
        let theirs = system_cc(&[question]);
        assert!(!theirs.stdout.is_empty(), "{question}");
        assert_eq!(ours.stdout, theirs.stdout, "{question}");
    }
    // A flag that changes the answer reaches the system compiler; Yosegi's own flags do not.
    assert_eq!(ask(&["-fyosegi-fusion=on", "-m64", "-print-multi-os-directory"]).stdout, system_cc(&["-m64", "-print-multi-os-directory"]).stdout);
}

/// `-E` (a Makefile's dependency or preprocessing rule) with the flags an nvc Makefile passes:
/// the system compiler preprocesses, as `cc -E` with the same flags less nvc's (which gcc
/// would refuse), and the partly used `-ta=` is named as the user wrote it in the warning.
#[test]
fn preprocessing_with_nvc_flags_is_the_system_compilers_without_them() {
    let cc = env!("CARGO_BIN_EXE_yosegi-cc");
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("p.c");
    std::fs::write(&source, "#ifdef _OPENACC\nint acc = 1;\n#endif\nint x = X;\n").unwrap();
    let source = source.to_str().unwrap();
    let ours = Command::new(cc)
        .args(["-E", "-acc", "-ta=tesla:cc80", "-gpu=cc90,managed", "-Minfo=accel", "-fyosegi-staging=off", "-DX=3", source])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert_eq!(ours.status.code(), Some(0), "{stderr}");
    let theirs = system_cc(&["-E", "-DX=3", source]);
    assert!(theirs.status.success());
    assert_eq!(String::from_utf8_lossy(&ours.stdout), String::from_utf8_lossy(&theirs.stdout));
    let compiled = Command::new(cc).args(["-c", "-acc", "-ta=tesla,8.0", "-DX=3", source, "-o"]).arg(dir.path().join("p.o")).output().unwrap();
    let stderr = String::from_utf8_lossy(&compiled.stderr);
    assert_eq!(compiled.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("ignoring -acc 8.0 in -ta=tesla,8.0 ("), "{stderr}");
}

/// A link where NVRTC cannot be had (YOSEGI_NVRTC=off hides it, as on a build machine without
/// the CUDA toolkit) still gives an executable, with one warning that says its kernels are
/// compiled when it first runs; the executable runs on the simulator as any other.
#[test]
fn a_link_without_nvrtc_warns_once_and_its_executable_runs() {
    ensure_runtime_library();
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let source = repo_root().join("tests/programs/fusion_chain1d.c");
    let gcc = Command::new("gcc").args(["-w", "-O2", "-o"]).arg(dir.join("reference")).arg(&source).arg("-lm").output().unwrap();
    assert!(gcc.status.success(), "{}", String::from_utf8_lossy(&gcc.stderr));
    let expected = Command::new(dir.join("reference")).output().unwrap();
    let program = dir.join("prog");
    let link = Command::new(env!("CARGO_BIN_EXE_yosegi-cc"))
        .env("YOSEGI_NVRTC", "off")
        .args(["-O2", "-gpu=cc90,managed"])
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .arg("-lm")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&link.stderr);
    assert!(link.status.success(), "{stderr}");
    assert_eq!(stderr.matches("kernels are not compiled ahead of time").count(), 1, "{stderr}");
    assert!(stderr.contains("YOSEGI_NVRTC=off") && stderr.contains("compiles them when it first runs"), "{stderr}");
    // `managed` is not ours: dropped with the OpenACC flags' warning, `cc90` taken.
    assert!(stderr.contains("ignoring managed in -gpu=cc90,managed ("), "{stderr}");
    let run = Command::new(&program).env("YOSEGI_DEVICE", "sim").output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(run.stdout, expected.stdout);
    // `-w` silences the warning as it silences the others.
    let quiet = Command::new(env!("CARGO_BIN_EXE_yosegi-cc")).env("YOSEGI_NVRTC", "off").arg("-w").arg(&source).arg("-o").arg(dir.join("quiet")).arg("-lm").output().unwrap();
    assert!(quiet.status.success());
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("ahead of time"), "{}", String::from_utf8_lossy(&quiet.stderr));
    let bad = Command::new(env!("CARGO_BIN_EXE_yosegi-cc")).arg("-gpu=cc9x").arg(&source).arg("-o").arg(dir.join("never")).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a GPU architecture"), "{}", String::from_utf8_lossy(&bad.stderr));
}
