//! Diagnostics for tools: JSON in the shape of GCC's `-fdiagnostics-format=json` (an array of
//! diagnostics, each with its `kind`, `message`, `locations` as `caret` and `finish` positions,
//! and our `help`), and SARIF 2.1.0, which editors and code-scanning services read. Both carry
//! what the text form shows: the file, line and column of the start and end of the span, the
//! label, the message and the help. Lines and columns count from 1; columns count characters.

use serde_json::{Value, json};

use super::{Diagnostic, Severity};
use crate::source::{SourceSet, UserSpans};

/// The format a command-line flag chose for this process ([`DiagnosticsFormat::choose`]).
static CHOSEN: std::sync::OnceLock<DiagnosticsFormat> = std::sync::OnceLock::new();

/// How diagnostics are written (`--diagnostics-format`, `-fdiagnostics-format=`,
/// `YOSEGI_DIAGNOSTICS_FORMAT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DiagnosticsFormat {
    /// The rustc-style text with a caret line (the default).
    #[default]
    Text,
    Json,
    Sarif,
}

impl DiagnosticsFormat {
    /// `text`, `json`, or `sarif` (GCC's `sarif-stderr` too).
    pub fn parse(text: &str) -> Result<DiagnosticsFormat, String> {
        match text.trim() {
            "text" => Ok(DiagnosticsFormat::Text),
            "json" | "json-stderr" => Ok(DiagnosticsFormat::Json),
            "sarif" | "sarif-stderr" => Ok(DiagnosticsFormat::Sarif),
            other => Err(format!("`{other}` is not a diagnostics format: use text, json or sarif")),
        }
    }

    /// The format `YOSEGI_DIAGNOSTICS_FORMAT` names (text when unset or unknown).
    pub fn from_env() -> DiagnosticsFormat {
        std::env::var("YOSEGI_DIAGNOSTICS_FORMAT").ok().and_then(|v| DiagnosticsFormat::parse(&v).ok()).unwrap_or_default()
    }

    /// Makes `self` the process's format (a command-line flag); the first choice stays. The
    /// runtime of `yosegi run`, which runs in the same process, writes its errors in it too.
    pub fn choose(self) {
        let _ = CHOSEN.set(self);
    }

    /// The process's format: the one chosen, else `YOSEGI_DIAGNOSTICS_FORMAT`'s (which
    /// executables built by `yosegi cc` read), else text.
    pub fn current() -> DiagnosticsFormat {
        CHOSEN.get().copied().unwrap_or_else(DiagnosticsFormat::from_env)
    }

    /// `diags` in this format, as the text to write to stderr (ending in a newline; empty for
    /// no diagnostics in the text form).
    pub fn render(self, sources: &SourceSet, diags: &[Diagnostic], color: bool) -> String {
        match self {
            DiagnosticsFormat::Text => super::render(sources, diags, color),
            DiagnosticsFormat::Json => serde_json::to_string_pretty(&to_json(sources, diags)).unwrap_or_default() + "\n",
            DiagnosticsFormat::Sarif => serde_json::to_string_pretty(&to_sarif(sources, diags)).unwrap_or_default() + "\n",
        }
    }
}

/// Where a diagnostic starts and ends in the user's files, as the text form's caret shows it.
struct Place {
    file: String,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
}

fn place(spans: &mut UserSpans, sources: &SourceSet, d: &Diagnostic) -> Option<Place> {
    let Some(span) = d.span else { return embedded_place(&d.message) };
    let at = spans.of(sources, span)?;
    Some(Place { file: at.file.display().to_string(), line: at.line, column: at.column, end_line: at.end_line, end_column: at.end_column })
}

/// The place a message from the system's preprocessor names on its first line of the form
/// `FILE:LINE:COL: error: ...` (a missing header): such a diagnostic has no span of ours.
fn embedded_place(message: &str) -> Option<Place> {
    message.lines().find_map(|line| {
        let (head, _) = [": fatal error:", ": error:", ": warning:"].iter().find_map(|k| line.split_once(k))?;
        let mut parts = head.rsplitn(3, ':');
        let column: u32 = parts.next()?.trim().parse().ok()?;
        let line_no: u32 = parts.next()?.trim().parse().ok()?;
        let file = parts.next()?.trim().to_string();
        (!file.is_empty()).then_some(Place { file, line: line_no, column, end_line: line_no, end_column: column })
    })
}

fn kind(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// GCC's JSON diagnostics shape, with `help` and `label` added.
pub fn to_json(sources: &SourceSet, diags: &[Diagnostic]) -> Value {
    let mut spans = UserSpans::default();
    let items: Vec<Value> = diags
        .iter()
        .map(|d| {
            let locations: Vec<Value> = place(&mut spans, sources, d)
                .map(|p| {
                    let mut location = json!({
                        "caret": {"file": p.file, "line": p.line, "column": p.column},
                        "finish": {"file": p.file, "line": p.end_line, "column": p.end_column},
                    });
                    if !d.label.is_empty() {
                        location["label"] = json!(d.label);
                    }
                    location
                })
                .into_iter()
                .collect();
            let children: Vec<Value> = d.help.iter().map(|h| json!({"kind": "note", "message": format!("help: {h}"), "locations": []})).collect();
            json!({
                "kind": kind(d.severity),
                "message": d.message,
                "locations": locations,
                "help": d.help,
                "children": children,
            })
        })
        .collect();
    Value::Array(items)
}

/// A file path as a SARIF URI reference: `file://` and the path for an absolute one, the
/// relative path otherwise; characters outside the unreserved set percent-encoded.
fn uri(path: &str) -> String {
    let mut out = String::new();
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// One SARIF 2.1.0 log with one run of `yosegi`.
pub fn to_sarif(sources: &SourceSet, diags: &[Diagnostic]) -> Value {
    let mut spans = UserSpans::default();
    let results: Vec<Value> = diags
        .iter()
        .map(|d| {
            let text = match &d.help {
                Some(help) => format!("{}\nhelp: {help}", d.message),
                None => d.message.clone(),
            };
            let mut result = json!({
                "level": kind(d.severity),
                "message": {"text": text},
            });
            if let Some(p) = place(&mut spans, sources, d) {
                let mut location = json!({
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri(&p.file)},
                        "region": {"startLine": p.line, "startColumn": p.column, "endLine": p.end_line, "endColumn": p.end_column},
                    },
                });
                if !d.label.is_empty() {
                    location["message"] = json!({"text": d.label});
                }
                result["locations"] = json!([location]);
            }
            if let Some(help) = &d.help {
                result["properties"] = json!({"help": help});
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "yosegi", "version": env!("CARGO_PKG_VERSION")}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}
