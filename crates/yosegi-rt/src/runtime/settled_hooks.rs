//! What the host's access hooks remember between calls: a hook that has done its work (the
//! host copy made valid, the device copies marked stale) needs no more until the runtime does
//! something else. The glue calls a hook before every host statement that touches a tracked
//! array, in the program's innermost host loops too (NPB LU's `exact`, called 25 million times
//! by `setiv`, reads a coefficient array that a data region maps): taking the runtime's lock,
//! finding the object and reading the clock each time cost more than the loop's own work.
//!
//! Two counters say when a remembered hook still holds:
//! - [`state_epoch`]: bumped under the runtime's lock by every entry point except the hooks
//!   (a launch, a data clause, an update, an allocation, the OpenACC API). Host accesses never
//!   undo one another (a read makes the host copy valid, a write makes it valid and the device
//!   copies stale, and neither makes the host copy stale), so between two bumps a hook that
//!   was done stays done, on every thread.
//! - [`super::registry::coverage_generation`], for addresses the runtime does not track: they
//!   stay untracked until something is inserted, whatever else the runtime does.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use super::abi::YOSEGI_WRITE;
use super::registry;

static STATE_EPOCH: AtomicU64 = AtomicU64::new(0);

/// The current epoch of the runtime's coherence state (see the module's doc).
pub fn state_epoch() -> u64 {
    STATE_EPOCH.load(Ordering::Acquire)
}

/// Called with the runtime's lock held, by every entry point that is not a host-access hook.
pub fn state_may_change() {
    STATE_EPOCH.fetch_add(1, Ordering::AcqRel);
}

/// `bytes` of a hook that covers the whole object containing the address.
pub const WHOLE_OBJECT: u64 = u64::MAX;

#[derive(Clone, Copy, PartialEq, Eq)]
struct Settled {
    ptr: u64,
    bytes: u64,
    /// A write was done: later reads and writes of the same bytes need nothing.
    wrote: bool,
    /// Tracked (valid for one [`state_epoch`]) or not (valid for one coverage generation).
    tracked: bool,
    generation: u64,
}

const EMPTY: Settled = Settled { ptr: u64::MAX, bytes: 0, wrote: false, tracked: false, generation: u64::MAX };

/// Hooks remembered per thread: a statement names a few arrays, and a loop body a few
/// statements.
const SLOTS: usize = 8;

thread_local! {
    static SETTLED: Cell<([Settled; SLOTS], usize)> = const { Cell::new(([EMPTY; SLOTS], 0)) };
}

/// Whether a hook for `bytes` at `ptr` in `mode` is known to have nothing to do.
pub fn is_settled(ptr: u64, bytes: u64, mode: i32) -> bool {
    let writes = mode & YOSEGI_WRITE != 0;
    let (slots, _) = SETTLED.get();
    slots.iter().any(|s| {
        s.ptr == ptr
            && s.bytes == bytes
            && (s.wrote || !writes)
            && s.generation == if s.tracked { state_epoch() } else { registry::coverage_generation() }
    })
}

/// Remembers that the hook for `bytes` at `ptr` in `mode` has been done, `tracked` or not,
/// as of `generation` (the [`state_epoch`] or the coverage generation, read under the
/// runtime's lock before the hook's work).
pub fn remember(ptr: u64, bytes: u64, mode: i32, tracked: bool, generation: u64) {
    let entry = Settled { ptr, bytes, wrote: mode & YOSEGI_WRITE != 0, tracked, generation };
    let (mut slots, next) = SETTLED.get();
    let slot = slots.iter().position(|s| s.ptr == ptr && s.bytes == bytes).unwrap_or(next);
    slots[slot] = entry;
    SETTLED.set((slots, if slot == next { (next + 1) % SLOTS } else { next }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settled_hook_holds_until_the_state_changes() {
        let (ptr, read) = (0x1000, super::super::abi::YOSEGI_READ);
        let epoch = state_epoch();
        assert!(!is_settled(ptr, WHOLE_OBJECT, read));
        remember(ptr, WHOLE_OBJECT, read, true, epoch);
        assert!(is_settled(ptr, WHOLE_OBJECT, read) || state_epoch() != epoch);
        // A read does not cover a write, nor other bytes at the same address.
        assert!(!is_settled(ptr, WHOLE_OBJECT, YOSEGI_WRITE));
        assert!(!is_settled(ptr, 8, read));
        remember(ptr, WHOLE_OBJECT, YOSEGI_WRITE, true, state_epoch());
        let epoch = state_epoch();
        assert!(is_settled(ptr, WHOLE_OBJECT, read) || state_epoch() != epoch);
        assert!(is_settled(ptr, WHOLE_OBJECT, YOSEGI_WRITE) || state_epoch() != epoch);
        state_may_change();
        assert!(!is_settled(ptr, WHOLE_OBJECT, read));
        assert!(!is_settled(ptr, WHOLE_OBJECT, YOSEGI_WRITE));
    }

    #[test]
    fn an_untracked_address_stays_settled_across_state_changes_until_coverage_grows() {
        let (ptr, read) = (0x2000, super::super::abi::YOSEGI_READ);
        remember(ptr, WHOLE_OBJECT, read, false, registry::coverage_generation());
        let coverage = registry::coverage_generation();
        state_may_change();
        assert!(is_settled(ptr, WHOLE_OBJECT, read) || registry::coverage_generation() != coverage);
        registry::coverage_changed();
        assert!(!is_settled(ptr, WHOLE_OBJECT, read));
    }

    #[test]
    fn more_hooks_than_slots_forget_the_oldest() {
        let read = super::super::abi::YOSEGI_READ;
        let epoch = state_epoch();
        for k in 0..=SLOTS as u64 {
            remember(0x10_000 + k, WHOLE_OBJECT, read, true, epoch);
        }
        if state_epoch() == epoch {
            assert!(!is_settled(0x10_000, WHOLE_OBJECT, read));
            assert!(is_settled(0x10_000 + SLOTS as u64, WHOLE_OBJECT, read));
        }
    }
}
