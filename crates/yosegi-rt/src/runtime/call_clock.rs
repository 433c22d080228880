//! The clock `--stats` times the runtime's own work with ([`Stats::runtime_calls`]): which
//! parts are timed, and what a timed part counts for.
//!
//! Each timed part reads the host's clock twice, and a program that launches a million small
//! kernels makes some twelve such parts a launch; where the clock is a system call (a virtual
//! machine's host) the reads alone took ~2.4 s of NPB LU's 20 s timed loop (bench/NOTES.md run
//! 47), which `--stats` must not add. So the first [`TIMED_IN_FULL`] parts are timed, every
//! one (a short program's figures stay exact); after them one part in [`SAMPLE_EVERY`], drawn
//! at random, is timed and counts [`SAMPLE_EVERY`] times its time (a program's launches come in
//! periodic patterns, which a fixed stride would follow and so time one kind of part only).
//! Each entry's sum is then an unbiased estimate of its time; every call is counted.
//!
//! [`Stats::runtime_calls`]: super::stats::Stats::runtime_calls

use std::cell::Cell;
use std::time::{Duration, Instant};

/// How many parts are timed before sampling starts.
pub const TIMED_IN_FULL: u64 = 4096;
/// One part in this many is timed after the first [`TIMED_IN_FULL`].
pub const SAMPLE_EVERY: u32 = 16;

/// The start of one part of the runtime's work, as [`CallClock::start`] made it.
#[derive(Clone, Copy, Debug)]
pub enum CallTimer {
    /// `--stats` is off: nothing is recorded.
    Off,
    /// The call is counted, its time not read.
    Counted,
    /// The clock at the start, and how many parts the time stands for.
    Timed { started: Instant, weight: u32 },
}

impl CallTimer {
    /// What the part adds to its entry's time (`None`: nothing is recorded); the clock is
    /// read only for a timed part.
    pub fn stop(self) -> Option<Duration> {
        match self {
            CallTimer::Off => None,
            CallTimer::Counted => Some(Duration::ZERO),
            CallTimer::Timed { started, weight } => Some(started.elapsed() * weight),
        }
    }
}

/// Decides which parts are timed (see the module's comment).
#[derive(Debug)]
pub struct CallClock {
    on: bool,
    parts: Cell<u64>,
    /// A xorshift generator's state: cheap, and any fixed seed serves.
    draw: Cell<u64>,
}

impl CallClock {
    pub fn new(on: bool) -> CallClock {
        CallClock { on, parts: Cell::new(0), draw: Cell::new(0x9E37_79B9_7F4A_7C15) }
    }

    pub fn start(&self) -> CallTimer {
        if !self.on {
            return CallTimer::Off;
        }
        let part = self.parts.get();
        self.parts.set(part + 1);
        if part < TIMED_IN_FULL {
            return CallTimer::Timed { started: Instant::now(), weight: 1 };
        }
        let mut x = self.draw.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.draw.set(x);
        if x % u64::from(SAMPLE_EVERY) == 0 { CallTimer::Timed { started: Instant::now(), weight: SAMPLE_EVERY } } else { CallTimer::Counted }
    }

    /// Whether some parts were sampled rather than all timed: the times printed are estimates.
    pub fn sampled(&self) -> bool {
        self.parts.get() > TIMED_IN_FULL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Off records nothing; the first parts are all timed at weight one; after them about one
    /// in [`SAMPLE_EVERY`] is timed, at that weight, and the rest only counted.
    #[test]
    fn times_every_part_first_then_one_in_sample_every() {
        assert!(CallClock::new(false).start().stop().is_none());
        let clock = CallClock::new(true);
        for _ in 0..TIMED_IN_FULL {
            assert!(matches!(clock.start(), CallTimer::Timed { weight: 1, .. }));
        }
        assert!(!clock.sampled());
        let draws = 160_000;
        let (mut timed, mut counted) = (0u32, 0u32);
        for _ in 0..draws {
            match clock.start() {
                CallTimer::Timed { weight, .. } => {
                    assert_eq!(weight, SAMPLE_EVERY);
                    timed += 1;
                }
                CallTimer::Counted => counted += 1,
                CallTimer::Off => panic!("the clock is on"),
            }
        }
        assert!(clock.sampled());
        assert_eq!(timed + counted, draws);
        let expected = draws / SAMPLE_EVERY;
        assert!(timed.abs_diff(expected) < expected / 10, "{timed} timed of {draws}, expected about {expected}");
        assert_eq!(CallTimer::Counted.stop(), Some(Duration::ZERO));
    }

    /// The draws follow no short period: parts made in a repeating pattern of four (a time
    /// step's four launches) are each timed about equally often.
    #[test]
    fn sampling_does_not_follow_a_periodic_pattern() {
        let clock = CallClock::new(true);
        for _ in 0..TIMED_IN_FULL {
            clock.start();
        }
        let mut per_kind = [0u32; 4];
        for n in 0..64_000 {
            if matches!(clock.start(), CallTimer::Timed { .. }) {
                per_kind[n % 4] += 1;
            }
        }
        let expected = 64_000 / 4 / SAMPLE_EVERY;
        for (kind, &timed) in per_kind.iter().enumerate() {
            assert!(timed.abs_diff(expected) < expected / 5, "kind {kind}: {timed} timed, expected about {expected}: {per_kind:?}");
        }
    }
}
