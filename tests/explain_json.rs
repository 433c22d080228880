//! `yosegi explain --format=json` on every example: it parses, and agrees with the text form
//! on the regions, the kernels (names, in order) and each kernel's variant names.

mod common;

use common::{Input, repo_root, run, yosegi};

fn explain(file: &std::path::Path, format: &str) -> String {
    let mut cmd = yosegi();
    cmd.args(["explain", "--format", format]).arg(file);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    out.stdout
}

#[test]
fn explain_json_agrees_with_the_text_on_every_example() {
    let mut examples: Vec<_> = std::fs::read_dir(repo_root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 8);
    let mut kernels_seen = 0;
    for file in examples {
        let text = explain(&file, "text");
        let json: serde_json::Value = serde_json::from_str(&explain(&file, "json")).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let regions = json["regions"].as_array().expect("regions");
        assert_eq!(regions.len(), text.lines().filter(|l| l.starts_with("region ")).count(), "{}", file.display());
        let text_kernels: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("  kernel ")).collect();
        let json_kernels: Vec<&serde_json::Value> = regions.iter().flat_map(|r| r["kernels"].as_array().unwrap()).collect();
        let names: Vec<&str> = json_kernels.iter().map(|k| k["name"].as_str().unwrap()).collect();
        assert_eq!(names, text_kernels, "{}", file.display());
        for k in &json_kernels {
            let variants: Vec<&str> = k["variants"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
            assert_eq!(variants.first().copied(), k["name"].as_str(), "the global variant first");
            if variants.len() > 1 {
                for v in &variants {
                    assert!(text.contains(&format!("`{v}`:")), "{}: variant {v} not in the text", file.display());
                }
            } else {
                assert!(k["details"].as_array().unwrap().iter().any(|d| d.as_str().unwrap().starts_with("variants: one")));
            }
            kernels_seen += 1;
        }
        // Data moves: one line per data clause, as in the text.
        let moves: usize = regions.iter().map(|r| r["data"].as_array().unwrap().len()).sum();
        assert_eq!(moves, text.lines().filter(|l| l.starts_with("  data: ")).count(), "{}", file.display());
    }
    assert!(kernels_seen >= 10);
}
