//! Progress of the runtime's long steps, on a terminal: the kernels NVRTC compiles (a large
//! program compiles tens of them at their first launches, each taking from a fraction of a
//! second to a few seconds, and nothing else shows while it does). A line on stderr with a
//! spinner and the time so far, cleared when the step ends, so that the program's own output
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

fn shown() -> bool {
    static SHOWN: OnceLock<bool> = OnceLock::new();
    *SHOWN.get_or_init(|| wanted(std::env::var("YOSEGI_PROGRESS").ok().as_deref(), std::io::stderr().is_terminal()))
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
    fn a_step_not_shown_draws_nothing_and_builds_no_message() {
        let step = step_if(false, || panic!("the message is built only when it is drawn"));
        assert!(step.0.is_none());
        let shown = step_if(true, || "compiling main_l48".to_string());
        assert_eq!(shown.0.as_ref().map(|bar| bar.message()), Some("compiling main_l48".to_string()));
    }
}
