//! A timeline of one run, for reading where a step's time goes (`YOSEGI_TRACE=FILE`): when
//! each kernel ran on each GPU (from the events recorded around it, placed on the host's clock
//! through one reference event per device) and when the runtime began and ended its host-side
//! phases (preparing a launch, starting it, waiting for its results). Written as tab-separated
//! lines `lane  what  start_us  end_us` at the end of the program; off, it costs one branch.

use std::sync::{Mutex, OnceLock};
use std::time::Instant;

struct Trace {
    path: std::path::PathBuf,
    epoch: Instant,
    lines: Mutex<Vec<(String, String, f64, f64)>>,
}

fn trace() -> Option<&'static Trace> {
    static TRACE: OnceLock<Option<Trace>> = OnceLock::new();
    TRACE
        .get_or_init(|| {
            let path = std::env::var_os("YOSEGI_TRACE").filter(|p| !p.is_empty())?;
            Some(Trace { path: path.into(), epoch: Instant::now(), lines: Mutex::new(Vec::new()) })
        })
        .as_ref()
}

/// Whether a timeline is being kept.
pub fn enabled() -> bool {
    trace().is_some()
}

/// Microseconds from the trace's start to `at`.
pub fn micros(at: Instant) -> f64 {
    trace().map_or(0.0, |t| at.saturating_duration_since(t.epoch).as_secs_f64() * 1e6)
}

/// One span of `lane` (a device, or the host).
pub fn span(lane: &str, what: &str, start_us: f64, end_us: f64) {
    if let Some(t) = trace() {
        t.lines.lock().unwrap_or_else(|e| e.into_inner()).push((lane.to_string(), what.to_string(), start_us, end_us));
    }
}

/// A host span from `started` (`None`: not tracing) to now, named by `what`.
pub fn host(what: impl FnOnce() -> String, started: Option<Instant>) {
    if let Some(started) = started {
        span("host", &what(), micros(started), micros(Instant::now()));
    }
}

/// Now, when tracing (for [`host`]).
pub fn now() -> Option<Instant> {
    enabled().then(Instant::now)
}

/// Writes the timeline (at the end of the program).
pub fn write() {
    let Some(t) = trace() else { return };
    let lines = t.lines.lock().unwrap_or_else(|e| e.into_inner());
    let mut text = String::with_capacity(lines.len() * 48);
    for (lane, what, start, end) in lines.iter() {
        text.push_str(&format!("{lane}\t{what}\t{start:.1}\t{end:.1}\n"));
    }
    if let Err(e) = std::fs::write(&t.path, text) {
        eprintln!("yosegi: warning: cannot write the trace to {}: {e}", t.path.display());
    }
}
