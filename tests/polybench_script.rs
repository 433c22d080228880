//! `scripts/polybench.sh` on a fake PolyBench-ACC folder: the suite is not part of the
//! repository, so the script's build flags, dump comparison and statuses are checked on three
//! tiny programs laid out as the suite lays out its own (`OpenACC/<group>/<name>/<name>.c`, a
//! `utilities/` folder with `polybench.h` and `polybench.c`, arrays dumped on stderr).

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{Input, repo_root, run};

const POLYBENCH_H: &str = "#include <stdio.h>\n#ifdef MINI_DATASET\n#define N 8\n#else\n#define N 32\n#endif\nvoid polybench_note(void);\n";
const POLYBENCH_C: &str = "#include \"polybench.h\"\nvoid polybench_note(void) {}\n";

/// A program that scales an array by `factor` on the device and dumps it when asked.
fn program(factor: &str, clause: &str) -> String {
    format!(
        "#include \"polybench.h\"\nint main(void) {{\n  double a[N];\n  for (int i = 0; i < N; i++) a[i] = i;\n\
         #pragma acc parallel loop {clause}\n  for (int i = 0; i < N; i++) a[i] = a[i] * {factor};\n  polybench_note();\n\
         #ifdef POLYBENCH_DUMP_ARRAYS\n  for (int i = 0; i < N; i++) fprintf(stderr, \"%0.2lf \", a[i]);\n#endif\n  return 0;\n}}\n"
    )
}

/// The suite's compiler settings (`utilities/options.mk`): ROSE's source-to-source compiler
/// and the `openacc` tool that gives its paths, neither of which exists here.
const OPTIONS_MK: &str = "ACC = roseacc\nACCFLAGS=--roseacc:desc_format=static_data --roseacc:compile=false\n\
                          ACC_INC_PATH=`openacc --incpath`\nACC_LIB_PATH=`openacc --libpath`\nACC_LIBS=`openacc --libs`\n\
                          CC = gcc\nCFLAGS = -O2\nUTIL_DIR = ../../utilities\n";

/// Each program's Makefile, as the suite writes it: ROSE turns NAME.c into rose_NAME.c and
/// NAME-data.c, which the host compiler links with polybench.c.
const PROGRAM_MAKEFILE: &str = "-include ../../utilities/options.mk\nINCPATHS = -I$(UTIL_DIR)\nBENCHMARK = $(shell basename `pwd`)\n\
                                EXE = $(BENCHMARK)\nOBJ = rose_$(BENCHMARK).c\nSRC = $(BENCHMARK).c\nall : exe\nexe : $(EXE)\n\
                                $(OBJ) : $(SRC)\n\t$(ACC) $(ACCFLAGS) $(ACC_INC_PATH) $(INCPATHS) $^\n\
                                $(EXE) : $(OBJ) $(BENCHMARK)-data.c $(UTIL_DIR)/polybench.c\n\
                                \t$(CC) -o $@ $(CFLAGS) $(ACC_INC_PATH) $(ACC_LIB_PATH) $(INCPATHS) $^ $(ACC_LIBS)\n";

fn fake_suite(root: &Path) {
    let utilities = root.join("OpenACC/utilities");
    fs::create_dir_all(&utilities).unwrap();
    fs::write(utilities.join("polybench.h"), POLYBENCH_H).unwrap();
    fs::write(utilities.join("polybench.c"), POLYBENCH_C).unwrap();
    fs::write(utilities.join("options.mk"), OPTIONS_MK).unwrap();
    let programs = [
        ("scale", program("2.5", "copy(a)")),
        // Differs from gcc's build only on the device: `acc_on_device` is 0 in the reference.
        ("wrong", program("(acc_on_device(acc_device_not_host) ? 3.0 : 2.0)", "copy(a)").replace("#include \"polybench.h\"", "#include \"polybench.h\"\n#include <openacc.h>\n#ifndef _OPENACC\n#define acc_on_device(x) 0\n#endif")),
        ("refused", program("2.0", "copy(a) collapse(2)")),
    ];
    for (name, source) in programs {
        let dir = root.join(format!("OpenACC/kernels/{name}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("{name}.c")), source).unwrap();
        fs::write(dir.join("Makefile"), PROGRAM_MAKEFILE).unwrap();
    }
    // A program that fixes its own dataset, as correlation.c does (`#define EXTRALARGE_DATASET`
    // before its header): run at the requested dataset's sizes, read from its header. It does
    // not build at any other size.
    let dir = root.join("OpenACC/kernels/fixed");
    fs::create_dir_all(&dir).unwrap();
    let header = "# if !defined(M)\n#  ifdef MINI_DATASET\n#   define M 6\n#  endif\n#  ifdef EXTRALARGE_DATASET\n#   define M 4000\n#  endif\n# endif\n";
    fs::write(dir.join("fixed.h"), header).unwrap();
    let source = "#define EXTRALARGE_DATASET\n#include <stdio.h>\n#include \"fixed.h\"\n#if M != 6\n#error not the requested size\n#endif\n\
                  int main(void) {\n  double a[M];\n#pragma acc parallel loop copyout(a)\n  for (int i = 0; i < M; i++) a[i] = i * 1.5;\n\
                  for (int i = 0; i < M; i++) fprintf(stderr, \"%0.2lf \", a[i]);\n  return 0;\n}\n";
    fs::write(dir.join("fixed.c"), source).unwrap();
    fs::write(dir.join("Makefile"), PROGRAM_MAKEFILE).unwrap();
    // A program whose own host code faults (convolution-3d's initialisation loops on the wrong
    // variable): gcc's build crashes too, so there is nothing to compare with.
    let dir = root.join("OpenACC/kernels/faulty");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("faulty.c"), "#include <signal.h>\nint main(void) { raise(SIGSEGV); return 0; }\n").unwrap();
    fs::write(dir.join("Makefile"), PROGRAM_MAKEFILE).unwrap();
}

/// Runs the script on a fake suite (with `extra` options) and checks the five statuses.
fn check_statuses(extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    fake_suite(dir.path());
    let tsv = dir.path().join("results.tsv");
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/polybench.sh"))
        .args(extra)
        .args(["--device", "sim", "--dataset", "MINI", "--tsv"])
        .arg(&tsv)
        .arg(dir.path())
        .arg(env!("CARGO_BIN_EXE_yosegi"));
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(out.stdout.contains("summary: pass=2 fail=1 refused=1 crash=0 noref=1 total=5 (device sim, dataset MINI)"), "{}", out.describe());
    let tsv = fs::read_to_string(&tsv).unwrap();
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(lines.len(), 5, "{tsv}");
    assert_eq!(lines[0], "faulty\tNOREF\tgcc's sequential build died of signal 11 (a fault in the program itself)", "{tsv}");
    assert_eq!(lines[1], "fixed\tPASS\t", "{tsv}");
    assert!(lines[2].starts_with("refused\tREFUSED\tcollapse(2) needs 2 perfectly nested"), "{tsv}");
    assert_eq!(lines[3], "scale\tPASS\t", "{tsv}");
    assert!(lines[4].starts_with("wrong\tFAIL\tdump differs: number 1: 3.00, the reference 2.00"), "{tsv}");
    // The suite itself is left as it was: builds happen in a copy.
    assert!(!dir.path().join("OpenACC/kernels/scale/scale").exists() && !dir.path().join("OpenACC/kernels/scale/scale-data.c").exists());
}

#[test]
fn compares_dumps_and_classifies() {
    check_statuses(&[]);
}

/// `--gpus 2` and `--ranks 2`: the same statuses on two devices of one process and as two
/// ranks (whose dumps, on standard error, come from rank 0 alone).
#[test]
fn runs_on_two_devices_and_as_two_ranks() {
    check_statuses(&["--gpus", "2"]);
    check_statuses(&["--ranks", "2"]);
}

/// `--make`: each program built by its own Makefile with `yosegi-cc` as CC (ROSE's step
/// replaced on make's command line), the executable run on the simulator.
#[test]
fn builds_with_the_suites_own_makefiles_and_the_driver() {
    common::ensure_runtime_library();
    check_statuses(&["--make"]);
}

#[test]
fn usage_errors_exit_2() {
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/polybench.sh")).args(["--dataset", "HUGE", "."]);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
    assert!(out.stderr.contains("--dataset must be"), "{}", out.describe());
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/polybench.sh")).arg("/nonexistent-suite");
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
    assert!(out.stderr.contains("has no utilities/polybench.c"), "{}", out.describe());
}
