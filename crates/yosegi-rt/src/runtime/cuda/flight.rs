//! Bookkeeping of launches that run while the host goes on: the kernels enqueued since the
//! last synchronisation (so that a fault found later still names a kernel and its line), and
//! a pool of the CUDA events recorded around them (so that `--stats` gets device times
//! without a synchronisation per launch, and without creating two events per launch).
//!
//! Generic over the event type so that the bookkeeping is tested without a GPU.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::diag::Span;
use crate::runtime::device::{CompletedLaunch, KernelFault};

/// Launches enqueued before the device waits for them anyway: bounds the events held.
pub const MAX_IN_FLIGHT: usize = 1024;

/// Events created and not in use, handed out again before new ones are created.
pub struct EventPool<E> {
    free: Vec<E>,
}

impl<E> EventPool<E> {
    pub fn new() -> EventPool<E> {
        EventPool { free: Vec::new() }
    }

    /// A free event, or a new one from `create`.
    pub fn take<F: FnMut() -> Result<E, String>>(&mut self, mut create: F) -> Result<E, String> {
        match self.free.pop() {
            Some(event) => Ok(event),
            None => create(),
        }
    }

    pub fn give_back(&mut self, event: E) {
        self.free.push(event);
    }

    /// Every free event (to destroy them).
    pub fn drain(&mut self) -> std::vec::Drain<'_, E> {
        self.free.drain(..)
    }

    #[cfg(test)]
    pub fn free_count(&self) -> usize {
        self.free.len()
    }
}

/// The help of a kernel fault found on the GPU, naming where the kernel's CUDA source is.
pub fn out_of_bounds_help(saved_source: Option<&Path>) -> String {
    let advice = "an out-of-bounds access is the usual cause: run with --device sim, which checks every access";
    match saved_source {
        Some(p) => format!("{advice} (the CUDA source is in {})", p.display()),
        None => advice.to_string(),
    }
}

/// One enqueued launch: what a fault report needs, and the events recorded before and after it.
pub struct InFlight<E> {
    pub kernel: String,
    pub span: Span,
    /// Where the kernel's CUDA source was saved, for the fault's help (written only when a
    /// fault needs it: formatting it at every launch cost more than the launch's bookkeeping).
    pub saved_source: Option<Arc<Path>>,
    pub start: E,
    pub stop: E,
}

/// The launches enqueued since the device last waited, oldest first.
pub struct InFlightLaunches<E> {
    launches: Vec<InFlight<E>>,
}

impl<E> InFlightLaunches<E> {
    pub fn new() -> InFlightLaunches<E> {
        InFlightLaunches { launches: Vec::new() }
    }

    pub fn push(&mut self, launch: InFlight<E>) {
        self.launches.push(launch);
    }

    pub fn len(&self) -> usize {
        self.launches.len()
    }

    pub fn is_empty(&self) -> bool {
        self.launches.is_empty()
    }

    /// The event recorded after the newest launch: when it has completed, all have.
    pub fn last_stop(&self) -> Option<&E> {
        self.launches.last().map(|l| &l.stop)
    }

    /// The launches up to and including the one whose stop event is `stop` finished (a later
    /// launch's results were waited for, or the newest's, which finishes all): each one's
    /// device time from `elapsed(start, stop)` (zero where the events cannot tell), its events
    /// back in `pool`. Nothing when no launch in flight has that stop event (a wait resolved it
    /// already).
    pub fn complete_through<F: FnMut(&E, &E) -> Option<Duration>>(&mut self, pool: &mut EventPool<E>, stop: &E, elapsed: F) -> Vec<CompletedLaunch>
    where
        E: PartialEq,
    {
        match self.launches.iter().position(|l| l.stop == *stop) {
            Some(last) => self.resolve(last + 1, pool, elapsed),
            None => Vec::new(),
        }
    }

    /// The oldest `count` launches finished (see [`InFlightLaunches::complete_through`]).
    fn resolve<F: FnMut(&E, &E) -> Option<Duration>>(&mut self, count: usize, pool: &mut EventPool<E>, mut elapsed: F) -> Vec<CompletedLaunch> {
        let mut done = Vec::with_capacity(count);
        for launch in self.launches.drain(..count) {
            let device_time = elapsed(&launch.start, &launch.stop).unwrap_or_default();
            done.push(CompletedLaunch { kernel: launch.kernel, device_time });
            pool.give_back(launch.start);
            pool.give_back(launch.stop);
        }
        done
    }

    /// Waiting for the launches failed with `error`: the fault names the oldest launch, the
    /// first that may have caused it (the events go back to `pool`; after a fault the
    /// context is lost and nothing more runs on it).
    pub fn fail(&mut self, pool: &mut EventPool<E>, error: &str) -> Option<KernelFault> {
        let count = self.launches.len();
        let mut launches = self.launches.drain(..);
        let first = launches.next()?;
        let message = if count == 1 {
            format!("the kernel failed on the GPU: {error}")
        } else {
            format!(
                "the kernel, or a kernel launched after it ({} more were running), failed on the GPU: {error} \
                 (YOSEGI_SYNC_LAUNCHES=1 waits for every launch and names the one that failed)",
                count - 1
            )
        };
        let fault = KernelFault { kernel: first.kernel, message, span: first.span, help: Some(out_of_bounds_help(first.saved_source.as_deref())) };
        pool.give_back(first.start);
        pool.give_back(first.stop);
        for rest in launches {
            pool.give_back(rest.start);
            pool.give_back(rest.stop);
        }
        Some(fault)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(name: &str, line_offset: u32, start: u32, stop: u32) -> InFlight<u32> {
        InFlight { kernel: name.into(), span: Span::new(0, line_offset, line_offset + 1), saved_source: None, start, stop }
    }

    #[test]
    fn the_pool_reuses_events_before_creating_new_ones() {
        let mut pool = EventPool::new();
        let mut created = 0;
        let mut create = || {
            created += 1;
            Ok(100 + created)
        };
        assert_eq!(pool.take(&mut create), Ok(101));
        pool.give_back(7);
        assert_eq!(pool.take(&mut create), Ok(7));
        assert_eq!(pool.take(&mut create), Ok(102));
        assert_eq!(created, 2);
        assert_eq!(pool.take(|| Err::<u32, _>("no events".to_string())), Err("no events".to_string()));
    }

    #[test]
    fn completing_resolves_each_launch_in_order_and_returns_its_events() {
        let mut pool = EventPool::new();
        let mut flights = InFlightLaunches::new();
        flights.push(launch("a", 1, 1, 2));
        flights.push(launch("b", 2, 3, 4));
        assert_eq!(flights.last_stop(), Some(&4));
        let done = flights.complete_through(&mut pool, &4, |&start, &stop| Some(Duration::from_micros((stop * 10 + start) as u64)));
        assert_eq!(
            done,
            vec![
                CompletedLaunch { kernel: "a".into(), device_time: Duration::from_micros(21) },
                CompletedLaunch { kernel: "b".into(), device_time: Duration::from_micros(43) },
            ]
        );
        assert!(flights.is_empty());
        assert_eq!(pool.free_count(), 4);
    }

    #[test]
    fn completing_through_a_launch_resolves_it_and_those_before_it_only() {
        let mut pool = EventPool::new();
        let mut flights = InFlightLaunches::new();
        flights.push(launch("a", 1, 1, 2));
        flights.push(launch("b", 2, 3, 4));
        flights.push(launch("c", 3, 5, 6));
        let done = flights.complete_through(&mut pool, &4, |_, _| Some(Duration::from_micros(1)));
        assert_eq!(done.iter().map(|d| d.kernel.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(flights.len(), 1);
        assert_eq!(flights.last_stop(), Some(&6));
        assert_eq!(pool.free_count(), 4);
        // A stop no launch in flight has: resolved before, nothing to do.
        assert!(flights.complete_through(&mut pool, &2, |_, _| None).is_empty());
        assert_eq!(flights.len(), 1);
    }

    #[test]
    fn a_fault_names_the_oldest_launch_and_says_when_others_ran_after_it() {
        let mut pool = EventPool::new();
        let mut flights = InFlightLaunches::new();
        flights.push(launch("only", 5, 1, 2));
        let fault = flights.fail(&mut pool, "CUDA_ERROR_ILLEGAL_ADDRESS").expect("one launch");
        assert_eq!(fault.kernel, "only");
        assert_eq!(fault.span, Span::new(0, 5, 6));
        assert_eq!(fault.message, "the kernel failed on the GPU: CUDA_ERROR_ILLEGAL_ADDRESS");

        flights.push(launch("first", 7, 1, 2));
        flights.push(launch("second", 9, 3, 4));
        flights.push(launch("third", 11, 5, 6));
        let fault = flights.fail(&mut pool, "CUDA_ERROR_ILLEGAL_ADDRESS").expect("three launches");
        assert_eq!(fault.kernel, "first");
        assert_eq!(fault.span, Span::new(0, 7, 8));
        assert!(fault.message.contains("or a kernel launched after it (2 more were running)"), "{}", fault.message);
        assert!(flights.is_empty());
        assert_eq!(pool.free_count(), 8, "every event is back in the pool");
        assert!(flights.fail(&mut pool, "x").is_none(), "nothing in flight, nothing to blame");
    }
}
