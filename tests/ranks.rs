//! Programs run as several MPI ranks (`yosegi run --ranks N`, `runtime::ranks`) on the
//! simulator: what each rank sends, and how a job ends when one rank stops. (Every program of
//! the differential corpus also runs as 2, 3 and 4 ranks against gcc: `tests/differential.rs`.)
//! These tests need an MPI launcher (`mpirun`) and compiler wrapper (`mpicc`); `.ci/run`
//! installs Open MPI.

mod common;

use common::{Input, repo_root, run, yosegi};

/// Writes the C program `code` as `name` in `dir`.
fn program(dir: &tempfile::TempDir, name: &str, code: &str) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, code).unwrap();
    path
}

/// Each rank's `rank` object of `--stats=json` (one file per process in `YOSEGI_STATS_DIR`).
fn rank_traffic(ranks: usize, steps: u32) -> (Vec<serde_json::Value>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = yosegi();
    cmd.env("YOSEGI_STATS_DIR", dir.path())
        .args(["run", "--device", "sim", "--ranks", &ranks.to_string()])
        .arg(repo_root().join("tests/programs/halo_exchange.c"))
        .arg("--")
        .arg(steps.to_string());
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    let mut by_rank: Vec<serde_json::Value> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let json: serde_json::Value = serde_json::from_str(&text).unwrap();
            json["rank"].clone()
        })
        .collect();
    by_rank.sort_by_key(|r| r["rank"].as_u64());
    assert_eq!(by_rank.len(), ranks, "one stats file per rank\n{}", finished.describe());
    (by_rank, finished.stdout)
}

/// A 2-D Jacobi sweep split over the ranks' devices by rows: each step, every rank sends each
/// neighbour the boundary row of its block (46 interior doubles) and nothing else, so ten more
/// steps add exactly ten halos per neighbour to what a rank sends. The answer is the one
/// process's, printed once.
#[test]
fn each_rank_sends_its_halo_per_step() {
    let row = 46 * 8;
    let mut one = yosegi();
    one.args(["run", "--device", "sim"]).arg(repo_root().join("tests/programs/halo_exchange.c")).arg("--").arg("16");
    let alone = run(one, Input::Nothing);
    assert_eq!(alone.code(), Some(0), "{}", alone.describe());
    for ranks in [2usize, 3, 4] {
        let (short, _) = rank_traffic(ranks, 6);
        let (long, answer) = rank_traffic(ranks, 16);
        assert_eq!(answer, alone.stdout, "{ranks} ranks: the answer or the output differs from one process's");
        for r in 0..ranks {
            let neighbours = if r == 0 || r == ranks - 1 { 1 } else { 2 };
            let sent = |t: &[serde_json::Value]| t[r]["sent_bytes"].as_u64().unwrap();
            let received = |t: &[serde_json::Value]| t[r]["received_bytes"].as_u64().unwrap();
            assert_eq!(sent(&long) - sent(&short), 10 * neighbours * row, "{ranks} ranks: rank {r} sends more than its halo per step");
            assert_eq!(received(&long) - received(&short), 10 * neighbours * row, "{ranks} ranks: rank {r} receives more than its halo");
            assert_eq!(long[r]["size"].as_u64(), Some(ranks as u64));
        }
    }
}

/// A kernel fault on one rank's part (an access past the array, in the last rows) ends the
/// whole job with the fault's diagnostic and the rank named, instead of leaving the other
/// ranks waiting.
#[test]
fn a_fault_on_one_rank_ends_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let source = program(&dir, "fault.c", "#include <stdio.h>\n#include <stdlib.h>\nint main(int argc, char **argv) {\n    int n = 1 << 16, over = atoi(argv[1]);\n    \
         double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));\n    for (int i = 0; i < n; i++) a[i] = i;\n    \
         #pragma acc parallel loop copyin(a[0:n]) copyout(b[0:n])\n    for (int i = 0; i < n; i++) b[i] = a[i + (i == n - 1 ? over : 0)];\n    \
         printf(\"%f\\n\", b[n / 2]);\n    return 0;\n}\n");
    let mut cmd = yosegi();
    cmd.env("YOSEGI_RANK_TIMEOUT", "60").args(["run", "--device", "sim", "--ranks", "2"]).arg(&source).arg("--").arg("5");
    let finished = run(cmd, Input::Nothing);
    assert_ne!(finished.code(), Some(0), "{}", finished.describe());
    assert!(finished.stderr.contains("out-of-bounds read of `a`"), "{}", finished.describe());
    assert!(finished.stderr.contains("rank 1 of 2: stopped on the error above"), "{}", finished.describe());
    assert!(!finished.stderr.contains("waited"), "the other rank timed out instead of ending: {}", finished.describe());
}

/// `--gpus N` asks one process for several devices, which a rank of a job does not drive.
#[test]
fn several_devices_per_rank_are_refused() {
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--ranks", "2", "--gpus", "2"]).arg(repo_root().join("tests/programs/halo_exchange.c"));
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(finished.stderr.contains("each rank drives one device"), "{}", finished.describe());
}

/// The guide's workflow (docs/guide/mpi-ranks.md): an executable built by `yosegi cc`, started by `mpirun` itself, prints
/// what it prints alone (the runtime library joins the job from the launcher's environment).
#[test]
fn an_executable_built_by_yosegi_cc_runs_under_mpirun() {
    common::ensure_runtime_library();
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("heat");
    let built = std::process::Command::new(env!("CARGO_BIN_EXE_yosegi"))
        .args(["cc", "-O2", "-o"])
        .arg(&exe)
        .arg(repo_root().join("examples/heat3d.c"))
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let answer = |cmd: &mut std::process::Command| {
        let out = cmd.env("YOSEGI_DEVICE", "sim").env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // The timing line differs from run to run.
        String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.starts_with("time:")).collect::<Vec<_>>().join("\n")
    };
    let alone = answer(std::process::Command::new(&exe).args(["16", "4"]));
    // A private session folder: Open MPI launchers started together race on the shared one.
    let session = tempfile::tempdir().unwrap();
    let ranks = answer(std::process::Command::new("mpirun").args(["-np", "3", "--oversubscribe"]).env("OMPI_MCA_orte_tmpdir_base", session.path()).arg(&exe).args(["16", "4"]));
    assert!(alone.contains("heat:"), "{alone}");
    assert_eq!(ranks, alone);
}

/// A rank that leaves the program early (here: rank 1 returns from `main` at once) meets the
/// others at a different operation: the job ends with a rank and the operation named, by MPI's
/// error on the mismatch or by the wait's deadline (`YOSEGI_RANK_TIMEOUT`), never a hang.
#[test]
fn a_rank_that_stops_early_ends_the_job_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let source = program(&dir, "early.c", "#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n    const char *r = getenv(\"OMPI_COMM_WORLD_RANK\");\n    \
         if (r && atoi(r) == 1) return 0;\n    int n = 1 << 16;\n    double *a = malloc(n * sizeof(double)), s = 0;\n    \
         for (int i = 0; i < n; i++) a[i] = i;\n    #pragma acc parallel loop reduction(+:s) copyin(a[0:n])\n    \
         for (int i = 0; i < n; i++) s += a[i];\n    printf(\"%f\\n\", s);\n    return 0;\n}\n");
    let started = std::time::Instant::now();
    let mut cmd = yosegi();
    cmd.env("YOSEGI_RANK_TIMEOUT", "3").args(["run", "--device", "sim", "--ranks", "2"]).arg(&source);
    let finished = run(cmd, Input::Nothing);
    assert_ne!(finished.code(), Some(0), "{}", finished.describe());
    let named = finished.stderr.lines().any(|l| {
        l.starts_with("yosegi: rank ") && l.ends_with("ending the job") && (l.contains("waited 3 s") || l.contains("MPI failed"))
    });
    assert!(named, "{}", finished.describe());
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "the job took {:?}", started.elapsed());
}

/// A wait on a rank's own device that never ends (here: a kernel that never stops; on a GPU,
/// an NCCL copy whose partner never comes holds the device the same way, beyond any MPI
/// deadline) ends the job at the deadline with the rank and what it waited for, never a hang.
#[test]
fn a_device_wait_that_never_ends_ends_the_job_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    // The launch's start or its end, as the device runs it (the simulator: at the start).
    let source = program(&dir, "stuck.c", "#include <stdio.h>\nint main(void) {\n    static double a[4096];\n    \
         #pragma acc parallel loop copy(a)\n    for (int i = 0; i < 4096; i++) {\n        \
         while (a[i] >= 0.0) a[i] = a[i] * 0.5;\n    }\n    printf(\"%f\\n\", a[0]);\n    return 0;\n}\n");
    let started = std::time::Instant::now();
    let mut cmd = yosegi();
    cmd.env("YOSEGI_RANK_TIMEOUT", "2").args(["run", "--device", "sim", "--ranks", "2", "-w"]).arg(&source);
    let finished = run(cmd, Input::Nothing);
    assert_ne!(finished.code(), Some(0), "{}", finished.describe());
    let named = finished.stderr.lines().any(|l| {
        l.starts_with("yosegi: rank ") && l.contains("waited 2 s for its GPU (") && l.contains(" of main_l5)") && l.ends_with("ending the job")
    });
    assert!(named, "{}", finished.describe());
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "the job took {:?}", started.elapsed());
}

/// Ranks whose host code takes different paths (here: rank 1 updates `b` where rank 0 updates
/// `a`, two arrays of one size split over the ranks' devices) stop at the first device read
/// that differs, naming it, instead of one rank taking the other's bytes for its own.
#[test]
fn ranks_that_read_different_arrays_stop() {
    let dir = tempfile::tempdir().unwrap();
    let source = program(&dir, "diverge.c", "#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n    const char *r = getenv(\"OMPI_COMM_WORLD_RANK\");\n    \
         int n = 1 << 16;\n    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));\n    \
         #pragma acc data create(a[0:n], b[0:n])\n    {\n    #pragma acc parallel loop\n    for (int i = 0; i < n; i++) { a[i] = i; b[i] = -i; }\n    \
         if (r && atoi(r) == 1) {\n        #pragma acc update self(b[0:n])\n    } else {\n        #pragma acc update self(a[0:n])\n    }\n    printf(\"%f %f\\n\", a[n - 1], b[n - 1]);\n    }\n    return 0;\n}\n");
    let mut cmd = yosegi();
    cmd.env("YOSEGI_RANK_TIMEOUT", "20").args(["run", "--device", "sim", "--ranks", "2"]).arg(&source);
    let finished = run(cmd, Input::Nothing);
    assert_ne!(finished.code(), Some(0), "{}", finished.describe());
    assert!(finished.stderr.contains("the ranks' host code took different paths"), "{}", finished.describe());
    assert!(!finished.stdout.contains("-65535"), "a rank printed the other array's value: {}", finished.describe());
}

/// Files the program opens for writing are written once, by rank 0: a line appended to a file
/// appears once whatever the number of ranks, and a file written then read back reads the same
/// on every rank (the others write and read a private shadow).
#[test]
fn files_are_written_once() {
    let dir = tempfile::tempdir().unwrap();
    let source = program(&dir, "files.c", "#include <stdio.h>\n#include <stdlib.h>\nint main(int argc, char **argv) {\n    int n = 1 << 12;\n    double *a = malloc(n * sizeof(double)), s = 0;\n    \
         #pragma acc parallel loop copyout(a[0:n])\n    for (int i = 0; i < n; i++) a[i] = 0.5 * i;\n    \
         FILE *log = fopen(argv[1], \"a\");\n    fprintf(log, \"ran\\n\");\n    fclose(log);\n    \
         FILE *out = fopen(argv[2], \"w\");\n    for (int i = 0; i < n; i++) fprintf(out, \"%.1f\\n\", a[i]);\n    fclose(out);\n    \
         FILE *in = fopen(argv[2], \"r\");\n    double v;\n    while (fscanf(in, \"%lf\", &v) == 1) s += v;\n    fclose(in);\n    \
         #pragma acc parallel loop copyin(a[0:n]) reduction(+:s)\n    for (int i = 0; i < n; i++) s += a[i];\n    printf(\"%.1f\\n\", s);\n    return 0;\n}\n");
    let (log, out) = (dir.path().join("log.txt"), dir.path().join("out.txt"));
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--ranks", "3"]).arg(&source).arg("--").arg(&log).arg(&out);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    // sum of 0.5 i over i < 4096, twice (read back, then on the device).
    assert_eq!(finished.stdout.trim(), "8386560.0", "{}", finished.describe());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "ran\n", "the log was appended to by more than one rank");
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 4096);
}

/// Every call that opens a file for writing (`fopen` with `a` and `r+`, `open` with and without
/// `O_TRUNC` and `O_EXCL`, `creat`, `freopen`) writes the file once, on rank 0, keeping what a
/// file held before; the other ranks read back what they wrote (the program exits with 3 where
/// one does not, and with 5 where `O_EXCL` passes on a file that exists).
#[test]
fn every_call_that_opens_a_file_writes_it_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kept.txt"), "head\n").unwrap();
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--ranks", "4"]).arg(repo_root().join("tests/ranks/file_writes.c")).arg("--").arg(dir.path());
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    // sum of 0.5 i over i < 1024.
    assert_eq!(finished.stdout.trim(), "261888.0", "{}", finished.describe());
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(read("kept.txt"), "HEAD\nappended\nmore\n", "appended to by more than one rank, or its content lost");
    assert_eq!(read("made.txt"), "made\n");
    assert_eq!(read("created.txt"), "created\n");
    assert_eq!(read("reopened.txt"), "511.5\n");
}

/// `rename`, `remove` and `unlink` act once, on rank 0, and every rank sees the answers one
/// process sees, for a file the program wrote and one it did not (the program exits with 3
/// where an answer differs): the folder ends empty.
#[test]
fn files_are_renamed_and_removed_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kept.txt"), "kept\n").unwrap();
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--ranks", "4"]).arg(repo_root().join("tests/ranks/file_removes.c")).arg("--").arg(dir.path());
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout.trim(), "261888.0", "{}", finished.describe());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "left in the folder: {left:?}");
}

/// `time` is rank 0's clock on every rank: a program seeding `rand` with `time(NULL)` draws the
/// same numbers on every rank, or the ranks' parts of a loop would be computed over different
/// data. The ranks call it over a second apart here (rank r sleeps 1.1 r seconds first), and
/// the reduction over the ranks' parts must equal rank 0's own sum of its data.
#[test]
fn the_clock_of_time_is_rank_0s() {
    let dir = tempfile::tempdir().unwrap();
    let source = program(&dir, "seeded.c", "#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n#include <unistd.h>\nint main(void) {\n    \
         const char *r = getenv(\"OMPI_COMM_WORLD_RANK\");\n    usleep(1100000 * (r ? atoi(r) : 0));\n    time_t seed = time(NULL);\n    srand((unsigned)seed);\n    \
         int n = 1 << 12;\n    double *a = malloc(n * sizeof(double)), s = 0, t = 0;\n    for (int i = 0; i < n; i++) a[i] = rand() % 1000;\n    \
         #pragma acc parallel loop copyin(a[0:n]) reduction(+:s)\n    for (int i = 0; i < n; i++) s += a[i];\n    \
         for (int i = 0; i < n; i++) t += a[i];\n    printf(\"%s\\n\", s == t ? \"same\" : \"differs\");\n    return 0;\n}\n");
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--ranks", "3"]).arg(&source);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout, "same\n", "{}", finished.describe());
}

/// The program's standard error is rank 0's, as its standard output: a line the program writes
/// to `stderr` (PolyBench dumps its arrays there) appears once, whatever the number of ranks.
#[test]
fn the_program_writes_its_standard_error_once() {
    let dir = tempfile::tempdir().unwrap();
    let source = program(&dir, "errors.c", "#include <stdio.h>\nint main(void) {\n    double s = 0;\n    \
         #pragma acc parallel loop reduction(+:s)\n    for (int i = 0; i < 4096; i++) s += i;\n    \
         fprintf(stderr, \"dump %.1f\\n\", s);\n    perror(\"perror line\");\n    printf(\"%.1f\\n\", s);\n    return 0;\n}\n");
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--ranks", "3"]).arg(&source);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert_eq!(finished.stdout.trim(), "8386560.0", "{}", finished.describe());
    assert_eq!(finished.stderr.matches("dump 8386560.0").count(), 1, "{}", finished.describe());
    assert_eq!(finished.stderr.matches("perror line").count(), 1, "{}", finished.describe());
}
