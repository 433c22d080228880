//! Where runs put (and do not put) the kernel cache: a run on the simulator caches nothing and
//! makes no cache folder, and a home folder that does not exist is never made.

mod common;

use common::{repo_root, yosegi};

fn run_and_explain(home: &std::path::Path) {
    let program = repo_root().join("tests/programs/acc_api_data.c");
    for args in [vec!["run", "--device", "sim"], vec!["explain"]] {
        let out = yosegi()
            .args(&args)
            .arg(&program)
            .env("HOME", home)
            .env_remove("XDG_CACHE_HOME")
            .env_remove("YOSEGI_CACHE_DIR")
            .env_remove("YOSEGI_DEVICE")
            .output()
            .expect("yosegi runs");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn a_simulator_run_and_explain_make_no_cache_folder() {
    let home = tempfile::tempdir().unwrap();
    run_and_explain(home.path());
    let made: Vec<_> = std::fs::read_dir(home.path()).unwrap().flatten().map(|e| e.path()).collect();
    assert!(made.is_empty(), "made in the home folder: {made:?}");
}

#[test]
fn a_home_that_does_not_exist_is_not_made() {
    let scratch = tempfile::tempdir().unwrap();
    let home = scratch.path().join("nonexistent/x");
    run_and_explain(&home);
    assert!(!scratch.path().join("nonexistent").exists(), "the missing home was made");
}
