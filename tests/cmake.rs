//! CMake with Yosegi as the C compiler: `tests/cmake_project` (a static library and an
//! executable, OpenACC in both, `find_package(OpenACC REQUIRED)`) configures with
//! `-DCMAKE_C_COMPILER=yosegi-cc` (compiler identification, ABI detection, OpenACC found),
//! builds with its Makefiles (dependency files and all), and `ctest` runs it on the simulator;
//! the output equals gcc's build of the same sources and both kernels run through Yosegi.
//! CMake comes from PATH, else from the `cmake` Python package in the user's site (`.ci/run`
//! installs it); without either the test fails, saying how to get it.

mod common;

use common::{ensure_runtime_library, repo_root};
use std::path::PathBuf;
use std::process::Command;

/// `cmake` and `ctest`: on PATH, or where `pip install --user cmake` puts them.
fn cmake_tools() -> (PathBuf, PathBuf) {
    let on_path = |tool: &str| Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success()).then(|| PathBuf::from(tool));
    if let (Some(cmake), Some(ctest)) = (on_path("cmake"), on_path("ctest")) {
        return (cmake, ctest);
    }
    let user_bin = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/bin")).unwrap_or_default();
    let (cmake, ctest) = (user_bin.join("cmake"), user_bin.join("ctest"));
    assert!(cmake.is_file() && ctest.is_file(), "CMake is needed for this test: install it (`pip install --user cmake`, or the system package); .ci/run does");
    (cmake, ctest)
}

fn check(what: &str, out: std::process::Output) -> String {
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{what} failed:\n{text}");
    text
}

#[test]
fn a_cmake_project_with_a_library_and_an_executable_builds_and_runs_under_ctest() {
    ensure_runtime_library();
    let (cmake, ctest) = cmake_tools();
    let source = repo_root().join("tests/cmake_project");
    let scratch = tempfile::tempdir().unwrap();
    let build = scratch.path().join("build");
    let configure = Command::new(&cmake)
        .arg("-S")
        .arg(&source)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_C_COMPILER={}", env!("CARGO_BIN_EXE_yosegi-cc")))
        .output()
        .unwrap();
    let log = check("cmake configure", configure);
    assert!(log.contains("The C compiler identification is GNU"), "{log}");
    assert!(log.contains("Detecting C compiler ABI info - done"), "{log}");
    assert!(log.contains("Found OpenACC_C: -fopenacc"), "{log}");
    check("cmake --build", Command::new(&cmake).arg("--build").arg(&build).output().unwrap());
    // The dependency files the Makefiles track headers with were written.
    assert!(std::fs::read_dir(build.join("CMakeFiles/demo.dir")).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".o.d")));
    let tested = check("ctest", Command::new(&ctest).current_dir(&build).env("YOSEGI_DEVICE", "sim").arg("--output-on-failure").output().unwrap());
    assert!(tested.contains("100% tests passed"), "{tested}");
    // Both targets' loops ran through Yosegi, and the answer is gcc's.
    let run = Command::new(build.join("demo")).envs([("YOSEGI_DEVICE", "sim"), ("YOSEGI_STATS", "1")]).output().unwrap();
    let stats = String::from_utf8_lossy(&run.stderr);
    for kernel in ["main_l6 ", "scale_l3 "] {
        assert!(stats.lines().any(|l| l.starts_with(kernel)), "{kernel}did not run through Yosegi:\n{stats}");
    }
    let reference = scratch.path().join("reference");
    check(
        "gcc",
        Command::new("gcc").arg(source.join("main.c")).arg(source.join("scale.c")).arg("-o").arg(&reference).output().unwrap(),
    );
    let expected = Command::new(&reference).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&expected.stdout));
}
