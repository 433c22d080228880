//! A short run of `yosegi-fuzz` over the repository's corpus (every mutant must compile or be
//! refused with diagnostics), and the fuzzer's own machinery: a panic, an abort, a stack
//! overflow and a hang in a worker are each found, kept with their input, and the run goes on.

mod common;

use common::{Input, repo_root, run};
use std::process::Command;

fn fuzz() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_yosegi-fuzz"));
    cmd.current_dir(repo_root());
    cmd
}

#[test]
fn three_thousand_mutants_of_the_corpus_compile_or_are_refused() {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = fuzz();
    cmd.args(["--inputs", "3000", "--seed", "20240607", "--jobs", "2", "--out"]).arg(out.path());
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(
        finished.stdout.trim_end().lines().last(),
        Some("fuzz: 3000 inputs, 0 panics, 0 hangs, 0 crashes"),
        "{}",
        finished.describe()
    );
}

/// Runs 12 inputs over one example with `fault` at input 5.
fn run_with_fault(fault: &str) -> (common::Finished, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = fuzz();
    cmd.args(["--inputs", "12", "--seed", "1", "--jobs", "2", "--hang-seconds", "2", "--fault", fault]);
    cmd.args(["--no-default-corpus", "examples/jacobi2d.c", "--out"]).arg(out.path());
    (run(cmd, Input::Nothing), out)
}

#[test]
fn panics_aborts_overflows_and_hangs_are_found_and_the_run_goes_on() {
    for (fault, summary, file) in [
        ("panic@5", "fuzz: 12 inputs, 1 panics, 0 hangs, 0 crashes", "panic-5"),
        ("abort@5", "fuzz: 12 inputs, 0 panics, 0 hangs, 1 crashes", "crash-5"),
        ("overflow@5", "fuzz: 12 inputs, 0 panics, 0 hangs, 1 crashes", "crash-5"),
        ("hang@5", "fuzz: 12 inputs, 0 panics, 1 hangs, 0 crashes", "hang-5"),
    ] {
        let (finished, out) = run_with_fault(fault);
        assert_eq!(finished.code(), Some(1), "{fault}: {}", finished.describe());
        assert_eq!(finished.stdout.trim_end().lines().last(), Some(summary), "{fault}: {}", finished.describe());
        let input = std::fs::read_to_string(out.path().join(format!("{file}.c"))).unwrap();
        assert!(input.contains("jacobi"), "{fault}: the saved input is not the mutant");
        let report = std::fs::read_to_string(out.path().join(format!("{file}.txt"))).unwrap();
        let expected = match fault {
            "panic@5" => "self-test panic",
            "abort@5" => "SIGABRT",
            "overflow@5" => "overflowed its stack",
            _ => "ran over 2 s",
        };
        assert!(report.contains(expected), "{fault}: {report}");
    }
}

#[test]
fn usage_errors_exit_2() {
    let mut cmd = fuzz();
    cmd.args(["--inputs", "10", "--seconds", "10"]);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    let mut cmd = fuzz();
    cmd.args(["--inputs", "10", "--no-default-corpus", "no/such/folder"]);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
}

/// The processes whose command line names `folder` (the fuzzer's `--out`), other than `except`.
#[cfg(target_os = "linux")]
fn processes_naming(folder: &std::path::Path, except: u32) -> Vec<u32> {
    let needle = folder.as_os_str().as_encoded_bytes().to_vec();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        if pid != except && cmdline.windows(needle.len()).any(|w| w == needle.as_slice()) {
            found.push(pid);
        }
    }
    found
}

#[cfg(target_os = "linux")]
#[test]
fn workers_end_when_their_supervisor_is_killed() {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = fuzz();
    cmd.args(["--inputs", "1000000", "--seed", "9", "--jobs", "2", "--out"]).arg(out.path());
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut supervisor = cmd.spawn().unwrap();
    // The workers have started once each has written its current input.
    let started = std::time::Instant::now();
    while !(out.path().join("current-0.c").exists() && out.path().join("current-1.c").exists()) {
        assert!(started.elapsed().as_secs() < 120, "the workers never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let workers = processes_naming(out.path(), supervisor.id());
    assert_eq!(workers.len(), 2, "expected two workers, found {workers:?}");
    // SAFETY: kill has no memory preconditions; the pid is our own child's.
    assert_eq!(unsafe { libc::kill(supervisor.id() as i32, libc::SIGKILL) }, 0);
    supervisor.wait().unwrap();
    let killed = std::time::Instant::now();
    loop {
        let left = processes_naming(out.path(), supervisor.id());
        if left.is_empty() {
            break;
        }
        assert!(killed.elapsed().as_secs() < 20, "workers {left:?} still run 20 s after their supervisor was killed");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
