//! The simulator's watchdog (`YOSEGI_SIM_TIMEOUT`, docs/guide/reference/environment.md): a kernel
//! that never ends stops with a kernel fault that names the kernel, the loop it was in and
//! the limit, and says how to raise it; exit status 1 as for the other kernel faults. A value
//! that is not a number of seconds is refused (exit 2), not ignored.

mod common;

use std::path::{Path, PathBuf};

use common::{Input, run, yosegi};

/// A region whose loop never ends: every element stays non-negative.
fn endless(dir: &Path) -> PathBuf {
    let path = dir.join("endless.c");
    std::fs::write(
        &path,
        "#include <stdio.h>\n\
         int main(void) {\n\
         \x20   int a[64];\n\
         \x20   for (int i = 0; i < 64; i++) a[i] = i;\n\
         \x20   #pragma acc parallel loop copy(a)\n\
         \x20   for (int i = 0; i < 64; i++) {\n\
         \x20       while (a[i] >= 0) {\n\
         \x20           a[i] = a[i] + 0;\n\
         \x20       }\n\
         \x20   }\n\
         \x20   printf(\"%d\\n\", a[3]);\n\
         \x20   return 0;\n\
         }\n",
    )
    .unwrap();
    path
}

#[test]
fn a_kernel_that_never_ends_is_stopped_with_a_clear_fault() {
    let dir = tempfile::tempdir().unwrap();
    let program = endless(dir.path());
    let mut cmd = yosegi();
    cmd.env("YOSEGI_SIM_TIMEOUT", "1").args(["run", "--device", "sim", "-w"]).arg(&program);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(1), "{}", finished.describe());
    let err = &finished.stderr;
    assert!(err.contains("kernel `main_l"), "the kernel is named: {}", finished.describe());
    // The loop that kept it busy: line 7, `while (a[i] >= 0)`.
    assert!(err.contains("endless.c:7"), "{}", finished.describe());
    assert!(err.contains("time limit of 1 s (YOSEGI_SIM_TIMEOUT)"), "{}", finished.describe());
    assert!(err.contains("raise the limit (YOSEGI_SIM_TIMEOUT=SECONDS)"), "{}", finished.describe());
    assert_eq!(finished.stdout, "", "the program went on after the fault");
    assert!(!err.contains("panicked"), "{}", finished.describe());
}

#[test]
fn a_watchdog_that_is_not_a_number_of_seconds_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let program = endless(dir.path());
    for bad in ["soon", "0", "-3"] {
        let mut cmd = yosegi();
        cmd.env("YOSEGI_SIM_TIMEOUT", bad).args(["run", "--device", "sim", "-w"]).arg(&program);
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(2), "{bad}: {}", finished.describe());
        assert!(finished.stderr.contains(&format!("YOSEGI_SIM_TIMEOUT is `{bad}`")), "{}", finished.describe());
        assert!(finished.stderr.contains("positive number of seconds"), "{}", finished.describe());
    }
}
