//! Shared helpers of the integration tests: where the repository is, how to run a command with
//! a time limit and capture what it printed, and how to build a C program with gcc as the
//! reference Yosegi must agree with.

#![allow(dead_code)] // each test crate uses a different subset of these helpers

pub mod inprocess;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A simulator run of a test program takes seconds; minutes means it hangs.
pub const RUN_TIME_LIMIT: Duration = Duration::from_secs(300);

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn yosegi() -> Command {
    Command::new(env!("CARGO_BIN_EXE_yosegi"))
}

/// `cargo test` may build yosegi-rt's rlib only, not its cdylib: build the runtime library the
/// driver links executables against (next to the binary) when it is missing or older than the
/// runtime's sources, once per test binary: a library left from an earlier build would have
/// the tests link executables against the old runtime.
pub fn ensure_runtime_library() {
    static BUILT: std::sync::Once = std::sync::Once::new();
    BUILT.call_once(|| {
        let bin_dir = Path::new(env!("CARGO_BIN_EXE_yosegi")).parent().unwrap().to_path_buf();
        let library = bin_dir.join("libyosegi_rt.so");
        let built = std::fs::metadata(&library).and_then(|m| m.modified()).ok();
        let runtime = repo_root().join("crates/yosegi-rt");
        if built.is_some_and(|built| newest_change(&runtime) <= built) {
            return;
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let profile = if bin_dir.ends_with("release") { vec!["--release"] } else { Vec::new() };
        let status = Command::new(cargo).current_dir(repo_root()).args(["build", "-p", "yosegi-rt", "--lib"]).args(profile).status().expect("cargo runs");
        assert!(status.success() && library.is_file(), "cannot build libyosegi_rt.so");
    });
}

/// The latest modification time of the files under `dir`.
fn newest_change(dir: &Path) -> std::time::SystemTime {
    let mut newest = std::time::SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let time = if path.is_dir() { newest_change(&path) } else { entry.metadata().and_then(|m| m.modified()).unwrap_or(newest) };
        newest = newest.max(time);
    }
    newest
}

/// Where a child's stdin comes from.
pub enum Input<'a> {
    Nothing,
    File(&'a Path),
}

pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
    /// Everything a failing assertion should show about the run.
    pub fn describe(&self) -> String {
        format!("exit status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}", self.status, self.stdout, self.stderr)
    }
}

/// Runs `cmd` to completion (killing it after `RUN_TIME_LIMIT`), feeding it `input`.
/// stdout and stderr are drained on their own threads so that a chatty child never blocks.
pub fn run(mut cmd: Command, input: Input) -> Finished {
    let stdin = match input {
        Input::Nothing => Stdio::null(),
        Input::File(path) => Stdio::from(
            std::fs::File::open(path).unwrap_or_else(|e| panic!("cannot open stdin file {}: {e}", path.display())),
        ),
    };
    let description = format!("{cmd:?}");
    let mut child = cmd
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {description}: {e}"));
    let mut out_pipe = child.stdout.take().expect("stdout is piped");
    let mut err_pipe = child.stderr.take().expect("stderr is piped");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out_pipe.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > RUN_TIME_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{description} ran longer than {RUN_TIME_LIMIT:?} and was killed");
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("waiting for {description}: {e}"),
        }
    };
    let stdout = String::from_utf8_lossy(&out_reader.join().expect("stdout reader")).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().expect("stderr reader")).into_owned();
    Finished { status, stdout, stderr }
}

/// Compiles `sources` with gcc exactly as a user without OpenACC would (pragmas ignored, the
/// repository's host-only `openacc.h`), returning the executable's path inside `dir`.
pub fn gcc_build(sources: &[PathBuf], dir: &Path) -> PathBuf {
    gcc_build_with(sources, dir, &[])
}

/// [`gcc_build`] with extra flags (`-D` definitions a program's test asks for).
pub fn gcc_build_with(sources: &[PathBuf], dir: &Path, flags: &[String]) -> PathBuf {
    let exe = dir.join("reference");
    let mut cmd = Command::new("gcc");
    cmd.args(["-std=gnu11", "-O1", "-w"])
        .args(flags)
        .arg(format!("-I{}", repo_root().join("include").display()))
        .args(sources)
        .arg("-o")
        .arg(&exe)
        .arg("-lm");
    let built = run(cmd, Input::Nothing);
    assert!(built.status.success(), "gcc failed to build the reference of {sources:?}\n{}", built.describe());
    exe
}

/// Numbers this close to zero compare equal whatever the tolerance: relative error means nothing
/// for a value that is zero up to rounding.
const ABSOLUTE_FLOOR: f64 = 1e-12;

/// Compares two outputs token by token (tokens split on whitespace). Integers and non-numbers
/// must match exactly; other numbers within `rtol` (or `ABSOLUTE_FLOOR`); `rtol == 0` demands
/// identical tokens. Returns a description of the first difference.
pub fn compare_outputs(expected: &str, actual: &str, rtol: f64) -> Result<(), String> {
    let expected_tokens: Vec<&str> = expected.split_whitespace().collect();
    let actual_tokens: Vec<&str> = actual.split_whitespace().collect();
    for (index, (want, got)) in expected_tokens.iter().zip(&actual_tokens).enumerate() {
        if !tokens_agree(want, got, rtol) {
            return Err(format!("token {index}: expected `{want}`, got `{got}`"));
        }
    }
    if expected_tokens.len() != actual_tokens.len() {
        return Err(format!("expected {} tokens, got {}", expected_tokens.len(), actual_tokens.len()));
    }
    Ok(())
}

fn tokens_agree(want: &str, got: &str, rtol: f64) -> bool {
    if want == got {
        return true;
    }
    if rtol == 0.0 || is_integer(want) || is_integer(got) {
        return false;
    }
    match (want.parse::<f64>(), got.parse::<f64>()) {
        (Ok(w), Ok(g)) if w.is_finite() && g.is_finite() => {
            (w - g).abs() <= (rtol * w.abs().max(g.abs())).max(ABSOLUTE_FLOOR)
        }
        _ => false,
    }
}

/// A count or an index is printed as an integer; off by one is wrong at any tolerance.
fn is_integer(token: &str) -> bool {
    let digits = token.strip_prefix(['-', '+']).unwrap_or(token);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}
