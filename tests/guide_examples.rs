//! The documentation's examples run and its links resolve:
//!
//! * every ```sh block of README.md and of the guide's getting-started chapter marked with a
//!   `<!-- runnable -->` line runs, as a script (`sh -eu`), on the simulator, in a scratch
//!   folder holding `examples/`, with the built `yosegi` and `yosegi-cc` first on the PATH;
//!   blocks that need a GPU, a network or an install are left unmarked;
//! * every relative link of README.md, CONTRIBUTING.md and docs/**/*.md names a file that
//!   exists, and its `#anchor`, in a Markdown file, a heading of that file.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Input, ensure_runtime_library, repo_root, run};

const MARK: &str = "<!-- runnable -->";

/// The runnable blocks of `file`, with the line each starts at.
fn runnable_blocks(file: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == MARK {
            let fence = lines.get(i + 1).map(|l| l.trim()).unwrap_or("");
            assert!(fence == "```sh", "{}:{}: `{MARK}` must stand right before a ```sh block", file.display(), i + 1);
            let start = i + 2;
            let end = (start..lines.len()).find(|&k| lines[k].trim() == "```").unwrap_or_else(|| panic!("{}:{}: unclosed block", file.display(), start));
            blocks.push((start + 1, lines[start..end].join("\n") + "\n"));
            i = end;
        }
        i += 1;
    }
    blocks
}

#[test]
fn the_runnable_examples_run_on_the_simulator() {
    ensure_runtime_library();
    let root = repo_root();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_yosegi")).parent().unwrap().to_path_buf();
    assert!(bin_dir.join("yosegi-cc").is_file(), "yosegi-cc is built beside yosegi");
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut count = 0;
    for doc in ["README.md", "docs/guide/getting-started.md"] {
        let blocks = runnable_blocks(&root.join(doc));
        assert!(!blocks.is_empty(), "{doc} has no runnable block");
        for (line, script) in blocks {
            count += 1;
            let dir = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(root.join("examples"), dir.path().join("examples")).unwrap();
            let cache = dir.path().join("cache");
            let mut cmd = Command::new("sh");
            cmd.current_dir(dir.path()).args(["-eu", "-c", &script]).env("PATH", &path).env("YOSEGI_CACHE_DIR", &cache);
            for var in ["YOSEGI_DEVICE", "YOSEGI_GPUS", "YOSEGI_STATS", "YOSEGI_STATS_DIR", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"] {
                cmd.env_remove(var);
            }
            let out = run(cmd, Input::Nothing);
            assert!(out.status.success(), "{doc}:{line}: the block failed:\n{script}\n{}", out.describe());
        }
    }
    assert!(count >= 6, "only {count} runnable blocks");
}

fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if entry.file_name() != "book" {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let root = repo_root();
    let mut files = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    walk(&root.join("docs"), &mut files);
    files
}

/// `text` without its fenced code blocks (their lines left empty, so that line numbers hold).
fn without_fences(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if !fenced {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The heading anchors of a Markdown file, as mdBook and GitHub make them.
fn anchors(text: &str) -> Vec<String> {
    without_fences(text)
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| {
            l.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { Some(c) } else if c == ' ' { Some('-') } else { None })
                .collect()
        })
        .collect()
}

/// The targets of the inline links `[text](target)` outside code, with their lines.
fn links(text: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = without_fences(text).chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Skips the code span starting at `i` (a run of backticks); returns the index after it.
    let skip_code = |i: usize, line: &mut usize| -> usize {
        let run = chars[i..].iter().take_while(|&&c| c == '`').count();
        let mut k = i + run;
        while k < chars.len() {
            if chars[k] == '`' {
                let close = chars[k..].iter().take_while(|&&c| c == '`').count();
                if close == run {
                    return k + close;
                }
                k += close;
            } else {
                if chars[k] == '\n' {
                    *line += 1;
                }
                k += 1;
            }
        }
        i + run
    };
    while i < chars.len() {
        match chars[i] {
            '\n' => {
                line += 1;
                i += 1;
            }
            '`' => i = skip_code(i, &mut line),
            '[' => {
                let mut k = i + 1;
                let mut depth = 1;
                while k < chars.len() && depth > 0 {
                    match chars[k] {
                        '`' => {
                            k = skip_code(k, &mut line);
                            continue;
                        }
                        '[' => depth += 1,
                        ']' => depth -= 1,
                        '\n' => line += 1,
                        _ => {}
                    }
                    k += 1;
                }
                if depth == 0 && chars.get(k) == Some(&'(') {
                    let end = chars[k..].iter().position(|&c| c == ')' || c == '\n').map(|e| k + e).unwrap_or(chars.len());
                    let target: String = chars[k + 1..end].iter().collect();
                    out.push((line, target.trim().to_string()));
                    i = end;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
            let place = format!("{}:{line}: ({target})", file.strip_prefix(repo_root()).unwrap_or(&file).display());
            if !resolved.exists() {
                broken.push(format!("{place}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor
                && resolved.extension().is_some_and(|e| e == "md")
                && !anchors(&std::fs::read_to_string(&resolved).unwrap()).iter().any(|a| a == anchor)
            {
                broken.push(format!("{place}: no heading with the anchor #{anchor}"));
            }
        }
    }
    assert!(checked > 50, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n  {}", broken.join("\n  "));
}

#[test]
fn the_link_scanner_reads_links_and_skips_code() {
    let text = "a [b](x.md) `num_gangs[0](n)` [`--c`](y.md#z)\n```\n[no](never.md)\n```\n[d]\n(e)";
    let found: Vec<String> = links(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(found, ["x.md", "y.md#z"]);
    assert_eq!(anchors("# A `b`, c\n## Fusion across time steps"), ["a-b-c", "fusion-across-time-steps"]);
}
