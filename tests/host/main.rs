//! The `yosegi` command end to end: device selection, exit statuses, and a directive-free
//! program running through the generated host code.

use std::path::PathBuf;
use std::process::Command;

fn yosegi() -> Command {
    Command::new(env!("CARGO_BIN_EXE_yosegi"))
}

fn input(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/host/inputs").join(name)
}

#[test]
fn cuda_device_without_a_gpu_is_refused_with_exit_2() {
    let out = yosegi().args(["run", "--device", "cuda"]).arg(input("hello.c")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot use the cuda device"), "{stderr}");
}

#[test]
fn missing_file_is_bad_input() {
    let out = yosegi().args(["run", "--device", "sim", "no_such_file.c"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no_such_file.c"));
}

#[test]
fn usage_errors_exit_2() {
    let out = yosegi().args(["run", "--frobnicate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn program_without_directives_runs_and_prints() {
    let out = yosegi().args(["run", "--device", "sim"]).arg(input("hello.c")).args(["--", "5"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sum 5.00\n");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn auto_device_says_it_uses_sim_once() {
    let out = yosegi().args(["run"]).arg(input("hello.c")).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("yosegi: no usable CUDA GPU; running on the sim device").count(), 1, "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sum 3.00\n");
}

#[test]
fn nonzero_main_status_is_reported_and_exits_1() {
    let out = yosegi().args(["run", "--device", "sim"]).arg(input("status.c")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "failing\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("yosegi: the program exited with status 3"));
}

#[test]
fn exit_calls_end_the_process_with_their_status() {
    let out = yosegi().args(["run", "--device", "sim"]).arg(input("exits.c")).output().unwrap();
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "buffered before exit\n");
}

#[test]
fn syntax_errors_are_diagnostics_with_exit_2() {
    let out = yosegi().args(["run", "--device", "sim"]).arg(input("syntax_error.c")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("syntax_error.c"), "{stderr}");
}

#[test]
fn emit_writes_host_files_glue_and_ir() {
    let dir = tempfile::tempdir().unwrap();
    let out = yosegi().arg("emit").arg(input("hello.c")).arg("-o").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let host = std::fs::read_to_string(dir.path().join("tu0_hello.c")).unwrap();
    assert!(host.contains("__yosegi_malloc(n * sizeof(double))"));
    assert!(dir.path().join("yosegi_glue.c").exists());
    assert!(dir.path().join("program.ir").exists());
}

/// The program's stdout when compiled by the system C compiler (pragmas ignored).
fn reference_output(file: &std::path::Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("reference");
    let status = Command::new("cc").args(["-std=gnu11", "-w", "-o"]).arg(&exe).arg(file).arg("-lm").status().unwrap();
    assert!(status.success());
    String::from_utf8(Command::new(&exe).output().unwrap().stdout).unwrap()
}

#[test]
fn host_reads_and_writes_between_launches_see_current_data() {
    let file = input("coherence.c");
    let out = yosegi().args(["run", "--device", "sim"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), reference_output(&file));
}

#[test]
fn explain_lists_regions_kernels_and_moves() {
    let out = yosegi().arg("explain").arg(input("coherence.c")).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("region 0 (scale, coherence.c:10): compute, 1 kernel"), "{text}");
    assert!(text.contains("region 1 (main, coherence.c:26): compute, 1 kernel"), "{text}");
    assert!(text.contains("implicit: table: written by kernel"), "{text}");
}

#[test]
fn several_files_are_one_program() {
    let (main, util) = (input("multi_main.c"), input("multi_util.c"));
    let out = yosegi().args(["run", "--device", "sim"]).arg(&main).arg(&util).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("reference");
    assert!(Command::new("cc").args(["-w", "-o"]).arg(&exe).arg(&main).arg(&util).status().unwrap().success());
    let expected = String::from_utf8(Command::new(&exe).output().unwrap().stdout).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
}
