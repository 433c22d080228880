//! The GPU suite: every differential program run with `yosegi run --device cuda` against the gcc
//! reference (`scripts/gpu-test.sh`, with the binary this build made). On a machine without a
//! usable GPU the test says so, with the reason, and passes: a skip that must be seen, not
//! mistaken for a run.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use yosegi::runtime::cuda::CudaDevice;

/// Prints `message` on stderr so that it shows in the normal test output too: the harness
/// captures `eprintln!` output of passing tests, but not direct writes to the stderr handle.
fn say(message: &str) {
    eprintln!("{message}");
    let captured = !std::env::args().any(|a| a == "--nocapture")
        && std::env::var_os("RUST_TEST_NOCAPTURE").is_none_or(|v| v == "0");
    if captured {
        let _ = writeln!(std::io::stderr().lock(), "gpu_suite_or_skip_visibly: {message}");
    }
}

#[test]
fn gpu_suite_or_skip_visibly() {
    let gpu = match CudaDevice::probe() {
        Ok(gpu) => gpu,
        Err(why) => {
            say(&format!("skipped: no usable CUDA GPU ({why})"));
            return;
        }
    };
    say(&format!("running scripts/gpu-test.sh on {}", gpu.label()));
    // The programs open the GPU themselves.
    drop(gpu);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("bash")
        .arg(root.join("scripts/gpu-test.sh"))
        .arg(env!("CARGO_BIN_EXE_yosegi"))
        .current_dir(root)
        .output()
        .expect("bash runs scripts/gpu-test.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    say(stdout.lines().last().unwrap_or("gpu-test.sh printed nothing"));
    assert!(output.status.success(), "scripts/gpu-test.sh failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains(" passed, 0 failed"), "scripts/gpu-test.sh did not report its count:\n{stdout}");
}
