//! Diagnostics: every error or warning the user sees carries a source span in the user's own
//! file, rendered with a caret line. Stages return `Result<_, Diagnostics>`; nothing panics on
//! bad input.

pub mod formats;

use crate::source::SourceSet;

/// A byte range in the preprocessed text of one translation unit (`tu` indexes
/// [`SourceSet::units`]). `SourceSet` maps it back to the user's file, line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Span {
    pub tu: u32,
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub fn new(tu: u32, lo: u32, hi: u32) -> Span {
        Span { tu, lo, hi }
    }
    /// The smallest span covering both (same translation unit).
    pub fn to(self, other: Span) -> Span {
        Span { tu: self.tu, lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// One message: what is wrong (`message`), where (`span`, with an optional `label` under the
/// caret), and what to do instead (`help`).
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub span: Option<Span>,
    pub label: String,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Error, message: message.into(), span: Some(span), label: String::new(), help: None }
    }
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, message: message.into(), span: Some(span), label: String::new(), help: None }
    }
    /// Information about a choice made for the program (not a problem in it).
    pub fn note(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Note, message: message.into(), span: Some(span), label: String::new(), help: None }
    }
    /// A note with no place in the source.
    pub fn global_note(message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Note, message: message.into(), span: None, label: String::new(), help: None }
    }
    /// An error with no place in the source (a missing file, a failed compiler run).
    pub fn global_error(message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Error, message: message.into(), span: None, label: String::new(), help: None }
    }
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// What a stage returns on failure: one or more diagnostics, at least one an error.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}

impl Diagnostics {
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d)
    }
}

/// Renders diagnostics as `file:line:col: error: message`, a caret line and the help, in the
/// style of rustc (codespan-reporting). Returns the text (the CLI writes it to stderr).
pub fn render(sources: &SourceSet, diags: &[Diagnostic], color: bool) -> String {
    crate::source::render_diagnostics(sources, diags, color)
}
