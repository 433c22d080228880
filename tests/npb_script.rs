//! `scripts/npb.sh` on a fake NAS suite: the real one is not part of the repository, so the
//! script's reading of a benchmark's Makefile (its OBJS), the suite's `setparams`, and its
//! statuses are checked on two tiny benchmarks laid out as openacc-npb lays out its own
//! (`CG/CG/Makefile` including `../config/make.def`, `CG/sys/setparams.c`, `CG/common/`).

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{Input, repo_root, run};

/// setparams writes npbparams.h with the class's size, as the suite's does.
const SETPARAMS: &str = r##"#include <stdio.h>
int main(int argc, char **argv) {
    if (argc != 3) return 1;
    FILE *f = fopen("npbparams.h", "w");
    fprintf(f, "#define NA %d\n", argv[2][0] == 'S' ? 64 : 128);
    fclose(f);
    return 0;
}
"##;

/// A benchmark over two files (main and a common helper) that verifies when its device sum
/// matches the closed form, unless `broken`.
fn benchmark(root: &Path, name: &str, broken: bool) {
    let lower = name.to_lowercase();
    let dir = root.join(name);
    fs::create_dir_all(dir.join(name)).unwrap();
    fs::create_dir_all(dir.join("sys")).unwrap();
    fs::create_dir_all(dir.join("common")).unwrap();
    fs::create_dir_all(dir.join("config")).unwrap();
    fs::write(dir.join("sys/setparams.c"), SETPARAMS).unwrap();
    fs::write(dir.join("config/make.def"), "CC = cc\nRAND = randdp\n").unwrap();
    fs::write(dir.join("common/helper.c"), "double helper(double x) { return x; }\n").unwrap();
    fs::write(
        dir.join(format!("{name}/Makefile")),
        format!("BENCHMARK={lower}\ninclude ../config/make.def\nCOMMON=../common\nOBJS = {lower}.o ${{COMMON}}/helper.o\n"),
    )
    .unwrap();
    let expected = if broken { "1.0" } else { "0.0" };
    fs::write(
        dir.join(format!("{name}/{lower}.c")),
        format!(
            "#include <stdio.h>\n#include \"npbparams.h\"\ndouble helper(double x);\nint main(void) {{\n  double a[NA], s = 0.0;\n\
             #pragma acc parallel loop copyout(a)\n  for (int i = 0; i < NA; i++) a[i] = i;\n\
             for (int i = 0; i < NA; i++) s += helper(a[i]);\n\
             int ok = s - NA * (NA - 1) / 2.0 == {expected};\n\
             printf(\" Time in seconds = 0.01\\n Mop/s total = 12.5\\n Verification    = %s\\n\", ok ? \"SUCCESSFUL\" : \"UNSUCCESSFUL\");\n  return 0;\n}}\n"
        ),
    )
    .unwrap();
}

#[test]
fn builds_from_the_makefile_and_classifies() {
    let dir = tempfile::tempdir().unwrap();
    benchmark(dir.path(), "CG", false);
    benchmark(dir.path(), "EP", true);
    let tsv = dir.path().join("results.tsv");
    let logs = dir.path().join("logs");
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/npb.sh"))
        .args(["--device", "sim", "--class", "S", "--tsv"])
        .arg(&tsv)
        .arg("--logs")
        .arg(&logs)
        .arg(dir.path())
        .arg(env!("CARGO_BIN_EXE_yosegi"));
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(out.stdout.contains("summary: pass=1 fail=1 refused=0 crash=0 total=2 (device sim, class S)"), "{}", out.describe());
    let tsv = fs::read_to_string(&tsv).unwrap();
    assert!(tsv.contains("CG\tPASS\t0.01\t12.5\t"), "{tsv}");
    assert!(tsv.contains("EP\tFAIL\t0.01\t12.5\tdid not verify: UNSUCCESSFUL"), "{tsv}");
    // `--logs`: each benchmark's output, and the runtime's counters (`--stats`) on stderr.
    assert!(fs::read_to_string(logs.join("CG.out")).unwrap().contains("Verification"));
    assert!(fs::read_to_string(logs.join("CG.err")).unwrap().contains("=== yosegi stats ==="));
    // The clone is not modified: setparams wrote into the scratch copy.
    assert!(!dir.path().join("CG/CG/npbparams.h").exists());
    // `--staging MODE` goes to `yosegi run` (seen through a wrapper that writes down its
    // arguments).
    let called = dir.path().join("called.txt");
    let wrapper = dir.path().join("yosegi-wrapper");
    fs::write(&wrapper, format!("#!/bin/sh\necho \"$@\" >> '{}'\nexec '{}' \"$@\"\n", called.display(), env!("CARGO_BIN_EXE_yosegi"))).unwrap();
    let mut cmd = Command::new("chmod");
    cmd.arg("+x").arg(&wrapper);
    assert_eq!(run(cmd, Input::Nothing).code(), Some(0));
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/npb.sh")).args(["--device", "sim", "--class", "S", "--only", "CG", "--staging", "off"]).arg(dir.path()).arg(&wrapper);
    let out = run(cmd, Input::Nothing);
    assert!(out.stdout.contains("summary: pass=1 fail=0"), "{}", out.describe());
    let called = fs::read_to_string(&called).unwrap();
    assert!(called.starts_with("run ") && called.contains("--staging off"), "{called}");
}

#[test]
fn usage_errors_exit_2() {
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/npb.sh")).args(["--class", "Z", "."]);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
    assert!(out.stderr.contains("--class must be"), "{}", out.describe());
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/npb.sh")).args(["--staging", "sideways", "."]);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
    assert!(out.stderr.contains("--staging must be auto, on or off"), "{}", out.describe());
}
