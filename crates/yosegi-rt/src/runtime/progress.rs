//! Progress of long steps, on a terminal: the kernels NVRTC compiles (a large program compiles
//! tens of them at their first launches, each taking from a fraction of a second to a few
//! seconds, and nothing else shows while it does: [`step`]), and the fuzzer's run ([`Bar`]).
//! A line on stderr, redrawn in place and cleared at the end, so that what else is written
//! reads as without it. Nothing is drawn when stderr is not a terminal (a pipe, a file, a
//! test) or with `YOSEGI_PROGRESS=off`.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A step in progress; its line goes when it is dropped.
pub struct Step(Option<ProgressBar>);

impl Drop for Step {
    fn drop(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}

/// Starts showing `message()` (not called when nothing is shown).
pub fn step(message: impl FnOnce() -> String) -> Step {
    step_if(shown(), message)
}

fn step_if(shown: bool, message: impl FnOnce() -> String) -> Step {
    if !shown {
        return Step(None);
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} yosegi: {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(message());
    bar.enable_steady_tick(Duration::from_millis(120));
    Step(Some(bar))
}

/// Whether progress is drawn here: stderr is a terminal and `YOSEGI_PROGRESS` is not `off`.
pub fn shown() -> bool {
    static SHOWN: OnceLock<bool> = OnceLock::new();
    *SHOWN.get_or_init(|| wanted(std::env::var("YOSEGI_PROGRESS").ok().as_deref(), std::io::stderr().is_terminal()))
}

/// A bar of `len` steps (a spinner without one) with a message, cleared when dropped; lines
/// printed through it go above it (or straight to stderr when nothing is drawn).
pub struct Bar(Option<ProgressBar>);

impl Bar {
    pub fn new(len: Option<u64>, what: &str) -> Bar {
        Bar::new_if(shown(), len, what)
    }

    fn new_if(shown: bool, len: Option<u64>, what: &str) -> Bar {
        if !shown {
            return Bar(None);
        }
        let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
        let template = if len.is_some() {
            format!("{what} [{{bar:20}}] {{pos}}/{{len}} {{msg}} ({{elapsed}})")
        } else {
            format!("{{spinner}} {what} {{msg}} ({{elapsed}})")
        };
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(200));
        Bar(Some(bar))
    }

    /// Moves the bar to `position` with `message()` (not called when nothing is drawn).
    pub fn set(&self, position: u64, message: impl FnOnce() -> String) {
        if let Some(bar) = &self.0 {
            bar.set_position(position);
            bar.set_message(message());
        }
    }

    /// Writes `text` as a line of stderr, above the bar.
    pub fn line(&self, text: &str) {
        match &self.0 {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// Whether the bar is drawn.
    pub fn is_drawn(&self) -> bool {
        self.0.is_some()
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}

/// Whether progress is drawn, from `YOSEGI_PROGRESS` and whether stderr is a terminal.
fn wanted(setting: Option<&str>, terminal: bool) -> bool {
    terminal && !matches!(setting.map(str::trim), Some("off" | "0" | "no"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_drawn_on_a_terminal_unless_turned_off() {
        assert!(wanted(None, true));
        assert!(wanted(Some("on"), true));
        assert!(!wanted(Some("off"), true));
        assert!(!wanted(Some(" 0 "), true));
        assert!(!wanted(None, false), "never on a pipe or a file");
        assert!(!wanted(Some("on"), false));
    }

    #[test]
    fn a_bar_not_shown_builds_no_message() {
        let hidden = Bar::new_if(false, Some(10), "fuzz");
        assert!(!hidden.is_drawn());
        hidden.set(3, || panic!("the message is built only when it is drawn"));
        let drawn = Bar::new_if(true, Some(10), "fuzz");
        drawn.set(3, || "3 inputs".to_string());
        assert_eq!(drawn.0.as_ref().map(|b| (b.position(), b.message())), Some((3, "3 inputs".to_string())));
    }

    #[test]
    fn a_step_not_shown_draws_nothing_and_builds_no_message() {
        let step = step_if(false, || panic!("the message is built only when it is drawn"));
        assert!(step.0.is_none());
        let shown = step_if(true, || "compiling main_l48".to_string());
        assert_eq!(shown.0.as_ref().map(|bar| bar.message()), Some("compiling main_l48".to_string()));
    }
}
