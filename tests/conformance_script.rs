//! `scripts/conformance.sh` on a fake suite folder: the OpenACC V&V suite is not part of the
//! repository, so the script's classification, grouping, `--only` and `--tsv` are checked on a
//! few tiny tests laid out the way the suite lays out its own (a `Tests/` folder with
//! `acc_testsuite.h`, each test including it and returning 0 from main on success).

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{Finished, Input, repo_root, run};

const HEADER: &str = "#include <stdio.h>\n#include <stdlib.h>\n#define ARRAYSIZE 100\n";

/// name, source. Each test's name says the status it must get.
const TESTS: &[(&str, &str)] = &[
    (
        "pass_vector_add",
        r#"#include "acc_testsuite.h"
int main() {
    double a[ARRAYSIZE];
    #pragma acc parallel loop copyout(a)
    for (int i = 0; i < ARRAYSIZE; ++i) a[i] = 2.0 * i;
    for (int i = 0; i < ARRAYSIZE; ++i) if (a[i] != 2.0 * i) return 1;
    return 0;
}
"#,
    ),
    (
        "fail_subtests",
        r#"#include "acc_testsuite.h"
int main() {
    int failcode = 0;
    failcode += 1 << 0; /* T1 failed */
    failcode += 1 << 2; /* T3 failed */
    return failcode;
}
"#,
    ),
    (
        "refused_collapse_on_data",
        r#"#include "acc_testsuite.h"
int main() {
    double a[ARRAYSIZE];
    #pragma acc data copy(a) collapse(2)
    { a[0] = 1.0; }
    return 0;
}
"#,
    ),
    (
        "refused_collapse_on_data_again",
        r#"#include "acc_testsuite.h"
int main() {
    int b[ARRAYSIZE];
    #pragma acc data copyin(b) collapse(3)
    { b[0] = 1; }
    return 0;
}
"#,
    ),
    (
        "refused_missing_function",
        r#"#include "acc_testsuite.h"
extern int conformance_function_nobody_defines(int);
int main() {
    return conformance_function_nobody_defines(3);
}
"#,
    ),
    (
        "crash_signal",
        r#"#include "acc_testsuite.h"
int main() {
    volatile int *nowhere = 0;
    *nowhere = 1;
    return 0;
}
"#,
    ),
];

fn fake_suite(root: &Path) {
    let tests = root.join("Tests");
    fs::create_dir_all(&tests).unwrap();
    fs::write(tests.join("acc_testsuite.h"), HEADER).unwrap();
    for (name, source) in TESTS {
        fs::write(tests.join(format!("{name}.c")), source).unwrap();
    }
    // Not a C test: the script must leave it alone.
    fs::write(tests.join("ignored.F90"), "program p\nend program\n").unwrap();
}

fn conformance(args: &[&str]) -> Finished {
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/conformance.sh")).args(args);
    run(cmd, Input::Nothing)
}

fn yosegi() -> &'static str {
    env!("CARGO_BIN_EXE_yosegi")
}

#[test]
fn classifies_groups_and_writes_the_tsv() {
    let dir = tempfile::tempdir().unwrap();
    fake_suite(dir.path());
    let suite = dir.path().to_str().unwrap();
    let tsv = dir.path().join("results.tsv");
    let scratch = dir.path().join("tmp");
    fs::create_dir(&scratch).unwrap();
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/conformance.sh"))
        .args(["--device", "sim", "--jobs", "3", "--timeout", "120", "--tsv"])
        .arg(&tsv)
        .arg(suite)
        .arg(yosegi())
        .env("TMPDIR", &scratch);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(
        out.stdout.contains("summary: pass=1 fail=1 refused=3 crash=1 loader=0 total=6"),
        "wrong counts:\n{}",
        out.describe()
    );
    // The two refusals name different arrays and clause counts: one group.
    assert!(
        out.stdout.contains("2  `collapse` is not allowed on `data`  (refused_collapse_on_data, refused_collapse_on_data_again)"),
        "refusals not grouped:\n{}",
        out.describe()
    );
    // A function defined nowhere is refused at compile time, never left to the loader.
    assert!(out.stdout.contains("is defined nowhere"), "{}", out.describe());
    assert!(out.stdout.contains("main returned 5 (failcode bits of T1 T3)"), "{}", out.describe());
    assert!(out.stdout.contains("killed by signal SIGSEGV"), "{}", out.describe());

    let table = fs::read_to_string(&tsv).unwrap();
    let rows: Vec<Vec<&str>> = table.lines().map(|l| l.split('\t').collect()).collect();
    let expected = [
        ("crash_signal", "CRASH"),
        ("fail_subtests", "FAIL"),
        ("pass_vector_add", "PASS"),
        ("refused_collapse_on_data", "REFUSED"),
        ("refused_collapse_on_data_again", "REFUSED"),
        ("refused_missing_function", "REFUSED"),
    ];
    assert_eq!(rows.len(), expected.len(), "{table}");
    for (row, (name, status)) in rows.iter().zip(expected) {
        assert_eq!(row.len(), 3, "not three columns: {row:?}");
        assert_eq!((row[0], row[1]), (name, status), "{table}");
    }
    assert_eq!(rows[3][2], "`collapse` is not allowed on `data`");
    // The script's scratch folder is gone.
    let left: Vec<_> = fs::read_dir(&scratch).unwrap().collect();
    assert!(left.is_empty(), "scratch left behind: {left:?}");
}

#[test]
fn only_selects_tests_and_the_tests_folder_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    fake_suite(dir.path());
    let tests = dir.path().join("Tests");
    let out = conformance(&["--only", "pass_*", "--only", "fail_subtests", tests.to_str().unwrap(), yosegi()]);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(out.stdout.contains("summary: pass=1 fail=1 refused=0 crash=0 loader=0 total=2"), "{}", out.describe());
}

/// `--gpus N` and `--ranks N` run every test on N devices: a test that passes only where it
/// sees two devices passes with them and fails without.
#[test]
fn gpus_and_ranks_reach_every_test() {
    let dir = tempfile::tempdir().unwrap();
    fake_suite(dir.path());
    fs::write(
        dir.path().join("Tests/two_devices.c"),
        "#include \"acc_testsuite.h\"\n#include <openacc.h>\nint main() { return acc_get_num_devices(acc_device_default) == 2 ? 0 : 1; }\n",
    )
    .unwrap();
    let suite = dir.path().to_str().unwrap();
    for (spread, passes) in [(None, 0), (Some("--gpus"), 1), (Some("--ranks"), 1)] {
        let mut args = vec!["--only", "two_devices"];
        if let Some(flag) = spread {
            args.extend([flag, "2"]);
        }
        args.extend([suite, yosegi()]);
        let out = conformance(&args);
        assert_eq!(out.code(), Some(0), "{args:?}: {}", out.describe());
        let summary = format!("summary: pass={passes} fail={} refused=0 crash=0 loader=0 total=1", 1 - passes);
        assert!(out.stdout.contains(&summary), "{args:?}: {}", out.describe());
    }
    let out = conformance(&["--ranks", "two", suite, yosegi()]);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
}

#[test]
fn usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    // Not the suite.
    let out = conformance(&[dir.path().to_str().unwrap(), yosegi()]);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
    assert!(out.stderr.contains("not the OpenACC V&V suite"), "{}", out.describe());
    fake_suite(dir.path());
    let suite = dir.path().to_str().unwrap();
    for args in [
        vec!["--device", "fpga", suite, yosegi()],
        vec!["--jobs", "0", suite, yosegi()],
        vec!["--only", "no_such_test", suite, yosegi()],
        vec![suite, "/nonexistent/yosegi"],
        vec!["--frobnicate", suite],
    ] {
        let out = conformance(&args);
        assert_eq!(out.code(), Some(2), "{args:?}: {}", out.describe());
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.describe());
    }
}

/// A loader error (what a Yosegi without the compile-time check would give) is told apart from
/// a crash: a stand-in for the binary prints the loader's message.
#[test]
fn loader_errors_are_their_own_status() {
    let dir = tempfile::tempdir().unwrap();
    fake_suite(dir.path());
    let fake = dir.path().join("fake-yosegi");
    fs::write(
        &fake,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'yosegi 0.0.0'; exit 0; fi\n\
         echo 'error: cannot load the program: program.so: undefined symbol: acc_frobnicate' >&2\nexit 2\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let out = conformance(&["--only", "pass_*", dir.path().to_str().unwrap(), fake.to_str().unwrap()]);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(out.stdout.contains("summary: pass=0 fail=0 refused=0 crash=0 loader=1 total=1"), "{}", out.describe());
    assert!(out.stdout.contains("acc_frobnicate"), "{}", out.describe());
}
