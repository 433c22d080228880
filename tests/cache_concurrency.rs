//! Runs that share a kernel cache folder and end at the same moment: each adds its own records
//! to the files there (`model-predictions.txt` here, written by every simulator run with
//! `--stats`), and none may lose another's (`private_fs::update_locked`, docs/SECURITY.md).
//!
//! Eight `yosegi run --device sim --stats` processes of one program, each at its own size (so
//! each leaves records no other leaves), are held at the end of `main` until all have computed,
//! then let go together, so that their stores at exit overlap. What they must leave is what the
//! same eight runs leave one at a time, each in a folder of its own.

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Stdio};

use common::{RUN_TIME_LIMIT, yosegi};

/// Two kernels over `n` elements, then a wait for a line on stdin: the test's barrier.
const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100;
    double *a = malloc(n * sizeof(double));
    double *b = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) a[i] = 0.5 * i;
    #pragma acc parallel loop copyin(a[0:n]) copyout(b[0:n])
    for (int i = 0; i < n; i++) b[i] = 2.0 * a[i] + 1.0;
    #pragma acc parallel loop copy(b[0:n])
    for (int i = 0; i < n; i++) b[i] = b[i] * b[i];
    printf("computed %d\n", n);
    fflush(stdout);
    /* Every run's records are stored at exit: the test ends them all at once. */
    getchar();
    printf("%.1f\n", b[n - 1]);
    free(a);
    free(b);
    return 0;
}
"#;

const SIZES: [u32; 8] = [96, 160, 224, 288, 352, 416, 480, 544];

const PREDICTIONS: &str = "model-predictions.txt";

fn start(program: &Path, cache: &Path, n: u32) -> Child {
    yosegi()
        .env("YOSEGI_CACHE_DIR", cache)
        .env_remove("YOSEGI_TRUST_CACHE")
        .env_remove("YOSEGI_DEVICE")
        .args(["run", "--device", "sim", "--stats", "-w"])
        .arg(program)
        .args(["--", &n.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("yosegi starts")
}

/// Waits until `child` says it computed (its records are made at exit, after the barrier).
fn wait_computed(child: &mut Child, n: u32) -> BufReader<std::process::ChildStdout> {
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    out.read_line(&mut line).expect("read stdout");
    assert_eq!(line, format!("computed {n}\n"), "run {n} did not reach the barrier");
    out
}

/// Lets `child` exit and checks that it ran to the end.
fn finish(mut child: Child, mut out: BufReader<std::process::ChildStdout>, n: u32) {
    drop(child.stdin.take());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).expect("read stdout");
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("piped"), &mut err).expect("read stderr");
    let status = child.wait().expect("wait");
    assert!(status.success(), "run {n}: {status}\n{rest}\n{err}");
    let last = (0.5 * (n - 1) as f64 * 2.0 + 1.0).powi(2);
    assert_eq!(rest, format!("{last:.1}\n"), "run {n}\n{err}");
}

/// Every record's key in a predictions file (kernel, hash, device, sizes, grid kernel), and
/// whether each line is a whole record (its tag, the header aside).
fn record_keys(cache: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(cache.join(PREDICTIONS)).unwrap_or_else(|e| panic!("{}: {e}", cache.display()));
    assert!(text.ends_with('\n'), "{text}");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let fields: Vec<&str> = l.split('\t').collect();
            assert!(fields[0] == "p1" && fields.len() == 12, "not a whole record: {l:?}");
            fields[1..6].join("\t")
        })
        .collect()
}

#[test]
fn runs_ending_together_keep_every_ones_predictions() {
    let scratch = tempfile::tempdir().unwrap();
    let program = scratch.path().join("barrier.c");
    std::fs::write(&program, PROGRAM).unwrap();

    // Alone, each in its own folder: what each run leaves.
    let mut expected = BTreeSet::new();
    for n in SIZES {
        let own = scratch.path().join(format!("alone-{n}"));
        let mut child = start(&program, &own, n);
        let out = wait_computed(&mut child, n);
        finish(child, out, n);
        let keys = record_keys(&own);
        assert!(keys.len() >= 2, "run {n} predicted both kernels: {keys:?}");
        assert!(keys.iter().all(|k| k.contains(&n.to_string())), "run {n}'s records name its size: {keys:?}");
        expected.extend(keys);
    }
    assert!(expected.len() >= 2 * SIZES.len(), "each run's records are its own: {expected:?}");

    // Together, in one folder, ending at once.
    let shared = scratch.path().join("shared");
    let mut runs: Vec<(Child, BufReader<std::process::ChildStdout>, u32)> = Vec::new();
    for n in SIZES {
        let mut child = start(&program, &shared, n);
        let out = wait_computed(&mut child, n);
        runs.push((child, out, n));
    }
    // Let them all go before waiting for any.
    for (child, _, _) in &mut runs {
        let stdin = child.stdin.as_mut().expect("piped");
        stdin.write_all(b"\n").and_then(|()| stdin.flush()).expect("release the run");
    }
    let started = std::time::Instant::now();
    for (child, out, n) in runs {
        assert!(started.elapsed() < RUN_TIME_LIMIT, "the runs hang");
        finish(child, out, n);
    }
    let keys = record_keys(&shared);
    let got: BTreeSet<String> = keys.iter().cloned().collect();
    assert_eq!(got.len(), keys.len(), "a record is in the file twice: {keys:?}");
    let lost: Vec<&String> = expected.difference(&got).collect();
    assert!(lost.is_empty(), "records lost by runs sharing the folder: {lost:?}");
    assert_eq!(got, expected);
    // Nothing but the file, its lock and what a run keeps there is left (no temporary file).
    for entry in std::fs::read_dir(&shared).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(!name.ends_with(".tmp"), "a temporary file was left: {name}");
    }
    assert!(shared.join(format!("{PREDICTIONS}.lock")).is_file());
}
