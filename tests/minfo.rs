//! `yosegi-cc -Minfo=accel` and `yosegi explain --brief`: one line per compute loop and per
//! data movement, `file:line: ...`, on the programs in tests/minfo (a CG kernel in a data region
//! around its iteration loop, a Jacobi stencil whose brief account is snapshotted in
//! tests/minfo/).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::repo_root;

fn input(name: &str) -> PathBuf {
    repo_root().join("tests/minfo").join(name)
}

fn yosegi_cc(args: &[&str], source: &Path, dir: &Path) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_yosegi-cc"))
        .current_dir(dir)
        .args(args)
        .arg(source)
        .output()
        .expect("yosegi-cc runs");
    assert!(out.status.success(), "yosegi-cc {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    out
}

fn brief(source: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_yosegi")).args(["explain", "--brief"]).arg(source).output().expect("yosegi runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The lines of the source at which a combined `parallel loop` / `kernels loop` stands.
fn compute_loop_pragmas(source: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(source).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let l = l.trim_start();
            l.starts_with("#pragma acc parallel loop") || l.starts_with("#pragma acc kernels loop")
        })
        .map(|(n, _)| n as u32 + 1)
        .collect()
}

/// `(line, text)` of each `cg.c:LINE: TEXT` line.
fn parsed(lines: &str, file: &str) -> Vec<(u32, String)> {
    lines
        .lines()
        .map(|l| {
            let rest = l.strip_prefix(&format!("{file}:")).unwrap_or_else(|| panic!("not a `{file}:` line: {l}"));
            let (line, text) = rest.split_once(": ").unwrap_or_else(|| panic!("no `: ` in {l}"));
            (line.parse().unwrap_or_else(|_| panic!("no line number in {l}")), text.to_string())
        })
        .collect()
}

fn is_loop_line(text: &str) -> bool {
    ["parallel", "kernels", "serial"].iter().any(|c| text.starts_with(c))
}

#[test]
fn minfo_prints_one_line_per_compute_loop_and_the_data_movements_and_the_object_builds() {
    let dir = tempfile::tempdir().unwrap();
    let source = input("cg.c");
    let out = yosegi_cc(&["-Minfo=accel", "-O2", "-c", "-o", "cg.o"], &source, dir.path());
    assert!(out.stdout.is_empty(), "-Minfo writes to stderr only");
    assert!(dir.path().join("cg.o").is_file(), "the object is built");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("warning"), "-Minfo=accel is no longer dropped:\n{stderr}");
    let lines = parsed(&stderr, "cg.c");
    // One line per compute loop, at the loop's line (the one after its pragma).
    let pragmas = compute_loop_pragmas(&source);
    assert_eq!(pragmas.len(), 4);
    let loops: Vec<u32> = lines.iter().filter(|(_, t)| is_loop_line(t)).map(|(n, _)| *n).collect();
    assert_eq!(loops, pragmas.iter().map(|p| p + 1).collect::<Vec<_>>(), "{stderr}");
    let line = |n: u32| lines.iter().filter(|(l, _)| *l == n).map(|(_, t)| t.as_str()).collect::<Vec<_>>().join("\n");
    // The SpMV: its inner reduction loop runs in each thread; the dot products reduce.
    assert!(line(31).starts_with("parallel loop over row (n, gang): gangs x "), "{stderr}");
    assert!(line(31).contains("the loop over `e` in order in each thread"), "{stderr}");
    assert!(line(39).contains("reduction(+:pq)"), "{stderr}");
    assert!(line(43).contains("reduction(+:rr_new)"), "{stderr}");
    assert!(line(51).starts_with("kernels loop over i (n)"), "{stderr}");
    // Data: the region's copies happen once around the iteration loop (line 29); inside it,
    // the arrays are present; the update runs every iteration.
    for expected in [
        "copyin rowptr[0:n+1], col[0:nnz], val[0:nnz], r[0:n], p[0:n] once before the loop at line 29",
        "copy x[0:n]: in once before the loop at line 29, out once after it",
        "create q[0:n]: on the device only, nothing copied",
    ] {
        assert!(line(27).contains(expected), "missing {expected:?} at line 27:\n{stderr}");
    }
    assert!(line(30).contains("implicit present rowptr, val, p, col, q (data region at line 27), nothing moves"), "{stderr}");
    assert_eq!(line(52), "update host r[0:1]: device -> host per iteration of the loop at line 29", "{stderr}");
    // Expressions as the user would write them.
    assert!(!stderr.contains("max(") && !stderr.contains("0ll") && !stderr.contains("(long long)"), "{stderr}");
}

#[test]
fn explain_brief_prints_the_same_lines() {
    let dir = tempfile::tempdir().unwrap();
    let source = input("cg.c");
    let out = yosegi_cc(&["-Minfo=accel", "-c"], &source, dir.path());
    assert_eq!(String::from_utf8(out.stderr).unwrap(), brief(&source));
}

#[test]
fn every_accel_spelling_of_minfo_prints_it_and_other_kinds_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let source = input("cg.c");
    let expected = brief(&source);
    for flag in ["-Minfo", "-Minfo=all", "-Minfo=accel,loop"] {
        let out = yosegi_cc(&[flag, "-c"], &source, dir.path());
        assert_eq!(String::from_utf8(out.stderr).unwrap(), expected, "{flag}");
    }
    let out = yosegi_cc(&["-Minfo=inline", "-c"], &source, dir.path());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "yosegi cc: warning: ignoring -Minfo=inline (Yosegi compiles the OpenACC directives itself)\n"
    );
}

#[test]
fn without_minfo_nothing_extra_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let out = yosegi_cc(&["-c", "-O2"], &input("cg.c"), dir.path());
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.path().join("cg.o").is_file());
}

#[test]
fn brief_account_of_a_jacobi_stencil() {
    let source = input("jacobi.c");
    let text = brief(&source);
    let loops: Vec<u32> = parsed(&text, "jacobi.c").iter().filter(|(_, t)| is_loop_line(t)).map(|(n, _)| *n).collect();
    assert_eq!(loops, compute_loop_pragmas(&source).iter().map(|p| p + 1).collect::<Vec<_>>(), "{text}");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("minfo");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("jacobi_brief", text));
}
