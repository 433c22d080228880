//! The guide's reference cannot drift from the code: every long flag of the clap definitions
//! (`yosegi` and its subcommands, and the flags of `yosegi-cc`, which `yosegi man --list-flags`
//! prints from the same definitions as the man pages), every `YOSEGI_*` variable the sources
//! read, and every key `--stats=json` and `explain --format=json` write must be named in
//! docs/guide/reference/.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{Input, repo_root, run, yosegi};

fn reference(name: &str) -> String {
    let path = repo_root().join("docs/guide/reference").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether `text` names `word` in code (`` `word ``), not only as the start of a longer name.
fn names(text: &str, word: &str, name_char: fn(char) -> bool) -> bool {
    let needle = format!("`{word}");
    text.match_indices(&needle).any(|(at, _)| !text[at + needle.len()..].chars().next().is_some_and(name_char))
}

fn flag_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// The section of cli.md whose heading names `command` in code (`## `yosegi run``).
fn section<'a>(text: &'a str, command: &str) -> Option<&'a str> {
    let heading = text.match_indices("\n## ").find(|(at, _)| {
        let line = text[at + 1..].lines().next().unwrap_or("");
        line.contains(&format!("`{command}`"))
    })?;
    let body = &text[heading.0 + 1..];
    let end = body[3..].find("\n## ").map(|e| e + 3).unwrap_or(body.len());
    Some(&body[..end])
}

#[test]
fn every_flag_is_in_the_command_line_reference() {
    let out = run(
        {
            let mut cmd = yosegi();
            cmd.args(["man", "--list-flags"]);
            cmd
        },
        Input::Nothing,
    );
    assert!(out.status.success(), "{}", out.describe());
    let cli = reference("cli.md");
    let mut missing = Vec::new();
    let mut count = 0;
    for line in out.stdout.lines() {
        let (command, flag) = line.rsplit_once(' ').expect("COMMAND FLAG");
        count += 1;
        let Some(text) = section(&cli, command) else {
            missing.push(format!("{command}: no section naming `{command}` in docs/guide/reference/cli.md"));
            continue;
        };
        if !names(text, flag, flag_char) {
            missing.push(format!("{command} {flag}"));
        }
    }
    assert!(count > 60, "too few flags listed: {}", out.stdout);
    assert!(missing.is_empty(), "flags missing from docs/guide/reference/cli.md:\n  {}", missing.join("\n  "));
}

/// Every `"YOSEGI_..."` string literal of the Rust sources outside tests: the variables the
/// code reads (or sets for the programs it runs).
fn variables_in_sources() -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "tests" && name != "testing" && name != "target" {
                    walk(&path, out);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" && name != "testing.rs" {
                out.push(path);
            }
        }
    }
    let root = repo_root();
    let mut files = vec![root.join("build.rs")];
    walk(&root.join("src"), &mut files);
    walk(&root.join("crates"), &mut files);
    let mut found = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        // A file's unit tests come last, in `#[cfg(test)] mod ...`.
        let text = match text.find("#[cfg(test)]\nmod ") {
            Some(at) => &text[..at],
            None => &text[..],
        };
        for (at, _) in text.match_indices("\"YOSEGI_") {
            let name: String = text[at + 1..].chars().take_while(|&c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_').collect();
            if text[at + 1 + name.len()..].starts_with('"') && !name.ends_with('_') {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn every_environment_variable_is_in_the_reference() {
    let vars = variables_in_sources();
    assert!(vars.len() > 30 && vars.contains("YOSEGI_DEVICE") && vars.contains("YOSEGI_OVERLAP_MIN_ITERATIONS"), "{vars:?}");
    let text = reference("environment.md");
    let missing: Vec<&String> = vars.iter().filter(|v| !names(&text, v, |c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')).collect();
    assert!(missing.is_empty(), "YOSEGI_* variables the code reads but docs/guide/reference/environment.md does not name: {missing:?}");
}

fn keys(value: &serde_json::Value) -> Vec<String> {
    value.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

fn missing_keys(text: &str, what: &str, keys: Vec<String>, missing: &mut Vec<String>) {
    for key in keys {
        if !text.contains(&format!("`{key}`")) {
            missing.push(format!("{what}.{key}"));
        }
    }
}

#[test]
fn every_stats_json_key_is_in_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = yosegi();
    cmd.current_dir(dir.path()).env("YOSEGI_CACHE_DIR", dir.path().join("cache")).args(["run", "--device", "sim", "--stats=json"]);
    cmd.arg(repo_root().join("examples/jacobi2d.c")).args(["--", "24", "10"]);
    let out = run(cmd, Input::Nothing);
    assert!(out.status.success(), "{}", out.describe());
    let start = out.stderr.find('{').expect("JSON on stderr");
    let end = out.stderr.rfind('}').expect("JSON on stderr");
    let stats: serde_json::Value = serde_json::from_str(&out.stderr[start..=end]).expect("stats JSON");
    let text = reference("stats-json.md");
    let mut missing = Vec::new();
    missing_keys(&text, "stats", keys(&stats), &mut missing);
    let kernel = &stats["kernels"][0];
    missing_keys(&text, "kernels[]", keys(kernel), &mut missing);
    missing_keys(&text, "kernels[].counters", keys(&kernel["counters"]), &mut missing);
    missing_keys(&text, "kernels[].last_prediction", keys(&kernel["last_prediction"]), &mut missing);
    missing_keys(&text, "devices[]", keys(&stats["devices"][0]), &mut missing);
    missing_keys(&text, "transfers", keys(&stats["transfers"]), &mut missing);
    missing_keys(&text, "model_sampling", keys(&stats["model_sampling"]), &mut missing);
    missing_keys(&text, "exploration", keys(&stats["exploration"]), &mut missing);
    assert!(missing.is_empty(), "keys of --stats=json missing from docs/guide/reference/stats-json.md: {missing:?}");
}

#[test]
fn every_explain_json_key_is_in_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = yosegi();
    cmd.current_dir(dir.path()).env("YOSEGI_CACHE_DIR", dir.path().join("cache")).args(["explain", "--format=json"]);
    cmd.arg(repo_root().join("examples/jacobi2d.c"));
    let out = run(cmd, Input::Nothing);
    assert!(out.status.success(), "{}", out.describe());
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("explain JSON");
    let text = reference("explain-json.md");
    let mut missing = Vec::new();
    missing_keys(&text, "explain", keys(&json), &mut missing);
    let regions = json["regions"].as_array().expect("regions");
    for region in regions {
        missing_keys(&text, "regions[]", keys(region), &mut missing);
        for kernel in region["kernels"].as_array().into_iter().flatten() {
            missing_keys(&text, "kernels[]", keys(kernel), &mut missing);
            missing_keys(&text, "variants[]", keys(&kernel["variants"][0]), &mut missing);
        }
    }
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "keys of explain --format=json missing from docs/guide/reference/explain-json.md: {missing:?}");
}
