//! Machine-readable diagnostics: every input of the bad-input corpus (`tests/bad`), written as
//! JSON (`--diagnostics-format=json`, GCC's shape) and as SARIF 2.1.0, parses, has the shape
//! its format's schema gives (SARIF through the types generated from the SARIF 2.1.0 schema;
//! our JSON through the typed form below, unknown fields refused), and names the place and the
//! problem the corpus expects, as the text form does. The driver's `-fdiagnostics-format=`
//! gives the same.

mod common;

use common::{Input, repo_root, run, yosegi};
use serde::Deserialize;
use std::path::PathBuf;

/// One diagnostic of the JSON form (docs/diagnostics.md).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonDiagnostic {
    kind: String,
    message: String,
    locations: Vec<JsonLocation>,
    help: Option<String>,
    children: Vec<JsonChild>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonLocation {
    caret: JsonPosition,
    finish: JsonPosition,
    label: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonPosition {
    file: String,
    line: u32,
    column: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonChild {
    kind: String,
    message: String,
    locations: Vec<JsonLocation>,
}

fn bad_inputs() -> Vec<(String, u32, u32, String)> {
    let dir = repo_root().join("tests").join("bad");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/bad") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "c") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let expected = std::fs::read_to_string(dir.join(format!("{name}.expected"))).unwrap();
            let mut lines = expected.lines();
            let (line, column) = lines.next().unwrap().trim().split_once(':').unwrap();
            out.push((name, line.parse().unwrap(), column.parse().unwrap(), lines.next().unwrap().trim().to_lowercase()));
        }
    }
    out.sort();
    out
}

fn path_of(name: &str) -> PathBuf {
    repo_root().join("tests").join("bad").join(format!("{name}.c"))
}

fn stderr_of(format: &str, name: &str) -> String {
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--diagnostics-format", format]).arg(path_of(name));
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(2), "{name}: {}", out.describe());
    out.stderr
}

#[test]
fn every_bad_input_gives_json_with_its_place_and_problem() {
    let inputs = bad_inputs();
    assert!(inputs.len() >= 25);
    for (name, line, column, phrase) in inputs {
        let stderr = stderr_of("json", &name);
        let diags: Vec<JsonDiagnostic> = serde_json::from_str(&stderr).unwrap_or_else(|e| panic!("{name}: not the JSON form ({e}):\n{stderr}"));
        assert!(diags.iter().all(|d| d.kind != "error" || !d.locations.is_empty()), "{name}: an error without a location:\n{stderr}");
        // The error the corpus expects (a program may have more than one).
        let error = diags
            .iter()
            .find(|d| d.kind == "error" && d.locations.first().is_some_and(|l| (l.caret.line, l.caret.column) == (line, column)))
            .unwrap_or_else(|| panic!("{name}: no error at {line}:{column}:\n{stderr}"));
        assert!(error.message.to_lowercase().contains(&phrase) || error.help.as_deref().is_some_and(|h| h.to_lowercase().contains(&phrase)), "{name}: `{phrase}` not said:\n{stderr}");
        let at = &error.locations[0];
        assert!(at.caret.file.ends_with(&format!("{name}.c")), "{name}: file {}", at.caret.file);
        assert!((at.finish.line, at.finish.column) >= (at.caret.line, at.caret.column), "{name}: the span ends before it starts");
        assert_eq!(at.finish.file, at.caret.file);
        for child in &error.children {
            assert_eq!(child.kind, "note");
            assert!(child.message.starts_with("help: ") && child.locations.is_empty());
        }
        let _ = &at.label;
    }
}

#[test]
fn every_bad_input_gives_sarif_that_the_schema_accepts() {
    for (name, line, column, _) in bad_inputs() {
        let stderr = stderr_of("sarif", &name);
        let log: serde_sarif::sarif::Sarif = serde_json::from_str(&stderr).unwrap_or_else(|e| panic!("{name}: not SARIF 2.1.0 ({e}):\n{stderr}"));
        let value: serde_json::Value = serde_json::from_str(&stderr).unwrap();
        assert_eq!(value["version"], "2.1.0");
        assert_eq!(log.runs.len(), 1);
        let results = value["runs"][0]["results"].as_array().expect("results");
        let at = |r: &serde_json::Value| r["locations"][0]["physicalLocation"].clone();
        let result = results
            .iter()
            .find(|r| r["level"] == "error" && at(r)["region"]["startLine"] == line && at(r)["region"]["startColumn"] == column)
            .unwrap_or_else(|| panic!("{name}: no error at {line}:{column}:\n{stderr}"));
        assert!(at(result)["artifactLocation"]["uri"].as_str().unwrap().ends_with(&format!("{name}.c")), "{name}");
        assert_eq!(value["runs"][0]["tool"]["driver"]["name"], "yosegi");
    }
}

#[test]
fn a_diagnostic_without_a_place_and_the_drivers_flag() {
    // A missing file: an error with no location, in both forms.
    let mut cmd = yosegi();
    cmd.args(["run", "--diagnostics-format=sarif", "no-such-file.c"]);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(2));
    let log: serde_json::Value = serde_json::from_str(&out.stderr).unwrap_or_else(|e| panic!("{e}: {}", out.stderr));
    assert!(log["runs"][0]["results"][0]["locations"].is_null());
    assert!(log["runs"][0]["results"][0]["message"]["text"].as_str().unwrap().contains("no-such-file.c"));
    // `yosegi cc -fdiagnostics-format=json` (GCC's flag), and the environment for `run`.
    common::ensure_runtime_library();
    let scratch = tempfile::tempdir().unwrap();
    let cc = std::path::Path::new(env!("CARGO_BIN_EXE_yosegi-cc"));
    let mut cmd = std::process::Command::new(cc);
    cmd.arg("-fdiagnostics-format=json").arg("-c").arg(path_of("array_reduction_read")).arg("-o").arg(scratch.path().join("x.o"));
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
    let diags: Vec<JsonDiagnostic> = serde_json::from_str(&out.stderr).unwrap_or_else(|e| panic!("{e}: {}", out.stderr));
    assert_eq!(diags[0].locations[0].caret.line, 8);
    let mut cmd = yosegi();
    cmd.env("YOSEGI_DIAGNOSTICS_FORMAT", "json").args(["run", "--device", "sim"]).arg(path_of("array_reduction_read"));
    let out = run(cmd, Input::Nothing);
    assert!(serde_json::from_str::<Vec<JsonDiagnostic>>(&out.stderr).is_ok(), "{}", out.stderr);
    // An unknown format is a usage error.
    let mut cmd = yosegi();
    cmd.args(["run", "--diagnostics-format=xml", "x.c"]);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(2));
    assert!(out.stderr.contains("not a diagnostics format"), "{}", out.stderr);
}
