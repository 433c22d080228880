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
fn cuda_device_is_refused_with_exit_2() {
    let out = yosegi().args(["run", "--device", "cuda"]).arg(input("hello.c")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the cuda device is not available yet; use --device sim"), "{stderr}");
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
