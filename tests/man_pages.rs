//! `yosegi man`: the pages are written, name the subcommands and their flags, and yosegi-cc(1)
//! describes every flag the driver's hand-written parser (src/cc.rs, src/cc/questions.rs)
//! handles, in GCC's one-dash spelling.

mod common;

use std::collections::BTreeSet;

use common::{Input, repo_root, run, yosegi};

fn man(args: &[&str]) -> common::Finished {
    let mut cmd = yosegi();
    cmd.arg("man").args(args);
    let out = run(cmd, Input::Nothing);
    assert!(out.status.success(), "{}", out.describe());
    out
}

#[test]
fn the_pages_name_the_subcommands_and_their_flags() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("man1");
    let out = man(&["--out", out_dir.to_str().unwrap()]);
    let page = |name: &str| std::fs::read_to_string(out_dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}\n{}", out.describe()));
    for name in ["yosegi.1", "yosegi-run.1", "yosegi-explain.1", "yosegi-emit.1", "yosegi-man.1", "yosegi-cc.1"] {
        assert!(out.stdout.contains(name), "{name} not reported:\n{}", out.stdout);
        assert!(page(name).starts_with(".ie") || page(name).contains(".TH"), "{name} is not a man page");
    }
    let main = page("yosegi.1");
    for sub in ["run", "explain", "emit", "man"] {
        assert!(main.contains(&format!("yosegi\\-{sub}(1)")) || main.contains(&format!("\\fB{sub}\\fR")), "yosegi.1 does not list `{sub}`:\n{main}");
    }
    let run_page = page("yosegi-run.1");
    for flag in ["device", "gpus", "stats", "ranks", "staging", "no\\-staging", "fusion", "keep", "diagnostics\\-format"] {
        assert!(run_page.contains(&format!("\\-\\-{flag}")), "yosegi-run.1 lacks --{flag}");
    }
    assert!(page("yosegi-explain.1").contains("\\-\\-format"));
    assert!(page("yosegi-emit.1").contains("\\fB\\-o\\fR"));
    let cc = page("yosegi-cc.1");
    for flag in ["\\-fopenmp", "\\-Minfo", "\\-MMD", "\\-fyosegi\\-staging", "\\-gpu", "\\-print\\-prog\\-name", "\\-\\-help", "\\-\\-version"] {
        assert!(cc.contains(&format!("\\fB{flag}\\fR")), "yosegi-cc.1 lacks {flag}");
    }
    assert!(!cc.contains("\\-\\-fopenmp") && !cc.contains("\\-\\-MMD"), "GCC's flags take one dash in yosegi-cc.1");
    // A folder that cannot be made is an error, status 2.
    let mut cmd = yosegi();
    cmd.args(["man", "--out", "/dev/null/man1"]);
    let bad = run(cmd, Input::Nothing);
    assert_eq!(bad.code(), Some(2), "{}", bad.describe());
    assert!(bad.stderr.contains("cannot write the man pages"), "{}", bad.describe());
}

/// The flags the C driver's parser recognises: the string literals starting with a dash in
/// `parse_args` (and the constants it uses) and in the questions it answers.
fn flags_the_driver_handles() -> BTreeSet<String> {
    let root = repo_root();
    let cc = std::fs::read_to_string(root.join("src/cc.rs")).unwrap();
    let start = cc.find("\nconst OPENACC_MACRO").expect("the flag constants");
    let end = start + cc[start..].find("\n/// `yosegi cc ARGS...`").expect("parse_args ends before main");
    let questions = std::fs::read_to_string(root.join("src/cc/questions.rs")).unwrap();
    let questions = &questions[..questions.find("#[cfg(test)]").unwrap_or(questions.len())];
    let mut found = BTreeSet::new();
    for text in [&cc[start..end], questions] {
        for (at, _) in text.match_indices("\"-") {
            let flag: String = text[at + 1..].chars().take_while(|&c| c.is_ascii_alphanumeric() || c == '-' || c == '_').collect();
            let flag = flag.trim_end_matches('-').to_string();
            // `-D_OPENACC=201711` is what the driver passes on, not a flag it reads.
            if flag.len() > 1 && !flag.starts_with("-D_") {
                found.insert(flag);
            }
        }
    }
    found
}

#[test]
fn yosegi_cc_page_describes_every_flag_the_driver_handles() {
    let listed = man(&["--list-flags"]);
    let described: Vec<String> = listed.stdout.lines().filter_map(|l| l.strip_prefix("yosegi-cc ")).map(|f| f.trim_start_matches('-').to_string()).collect();
    let handled = flags_the_driver_handles();
    for expected in ["-c", "-o", "-fopenmp", "-MMD", "-Minfo", "-gpu", "-print", "-dumpversion", "--help", "--version", "-Wl", "-fyosegi-staging"] {
        assert!(handled.contains(expected), "the scan of src/cc.rs missed {expected}: {handled:?}");
    }
    let missing: Vec<&String> = handled
        .iter()
        .filter(|flag| {
            let name = flag.trim_start_matches('-');
            // `-Wl,` is `-W` with `l,OPTIONS`; `-print-` stands for every `-print-*`; `-help` for `--help`.
            !described.iter().any(|d| d == name || d.starts_with(name) || (name == "Wl" && d == "W"))
        })
        .collect();
    assert!(missing.is_empty(), "flags src/cc.rs handles that yosegi-cc(1) (src/manpages.rs) does not describe: {missing:?}");
}
