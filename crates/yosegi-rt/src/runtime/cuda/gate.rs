//! When a launch's value-specialised variant is worth compiling. A specialised variant (the
//! launch's iteration-space values written as constants) runs a few percent faster than the
//! prepared form of its kernel, and costs a compilation on a worker (NVRTC, 50-300 ms of a
//! CPU) and a module load on the launching thread (about a millisecond) when it arrives. A
//! program with many launch shapes of little work each (the coarse levels of a multigrid: NPB
//! MG asked for 188 variants, 49 s of workers' NVRTC, and its first run took 2x its
//! prepared-form time) pays more than it gains. So a variant is compiled only once the
//! launches that wanted it have done [`SPECIALISE_AFTER_THREADS`] thread-launches of work on
//! the prepared form (blocks x threads, summed), past which its remaining launches are
//! likely to repay the load: a Himeno grid of 34 M points passes it in 64 launches, a 64^3
//! level of a multigrid in 8,192. A variant already on disk (an earlier run compiled it) is
//! used from its first launch: the gate only holds back compilations.
//!
//! Generic over the key so that it is tested without a GPU.

use std::collections::HashMap;
use std::hash::Hash;

/// Thread-launches of work on the prepared form before a specialised variant is compiled
/// (see the module doc): about 10 ms of a memory-bound kernel on a current GPU.
pub const SPECIALISE_AFTER_THREADS: u64 = 1 << 31;

/// What the gate says of a launch that wants a specialised variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Never held: look for the variant (memory, disk), and ask [`SpecialisationGate::missing`]
    /// if it is nowhere.
    Open,
    /// Held until now, and its launches have done the work: look for it, compile it if missing.
    Due,
    /// Found on no disk before, and not worth compiling yet: run the prepared form.
    Held,
}

/// The specialised variants held back so far and the work their launches have done.
#[derive(Debug)]
pub struct SpecialisationGate<K> {
    held: HashMap<K, u64>,
    threshold: u64,
}

impl<K: Hash + Eq + Clone> SpecialisationGate<K> {
    pub fn new(threshold: u64) -> SpecialisationGate<K> {
        SpecialisationGate { held: HashMap::new(), threshold }
    }

    /// Before a launch of `work` thread-launches wanting `key`: held while its launches,
    /// this one included, have done less work than the threshold.
    pub fn before_launch(&mut self, key: &K, work: u64) -> Gate {
        let Some(done) = self.held.get_mut(key) else { return Gate::Open };
        *done = done.saturating_add(work);
        if *done < self.threshold {
            return Gate::Held;
        }
        self.held.remove(key);
        Gate::Due
    }

    /// `key` was found nowhere (not on disk) for a launch of `work` that [`before_launch`]
    /// answered `gate`: whether to compile it now (`Open`: it was `Due`, or the launch alone
    /// does the work) or hold it (`Held`, counting this launch's work).
    ///
    /// [`before_launch`]: SpecialisationGate::before_launch
    pub fn missing(&mut self, key: &K, work: u64, gate: Gate) -> Gate {
        if gate == Gate::Due || work >= self.threshold {
            return Gate::Open;
        }
        self.held.insert(key.clone(), work);
        Gate::Held
    }
}

#[cfg(test)]
impl<K: Clone> SpecialisationGate<K> {
    /// The keys held and their work so far.
    pub fn held(&self) -> Vec<(K, u64)> {
        self.held.iter().map(|(k, &w)| (k.clone(), w)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_is_compiled_once_its_launches_have_done_the_work() {
        let mut gate = SpecialisationGate::new(100);
        // Unknown: looked for; missing from the disk with a small launch: held.
        assert_eq!(gate.before_launch(&"k", 30), Gate::Open);
        assert_eq!(gate.missing(&"k", 30, Gate::Open), Gate::Held);
        assert_eq!(gate.before_launch(&"k", 30), Gate::Held); // 60
        assert_eq!(gate.before_launch(&"k", 30), Gate::Held); // 90
        // The fourth launch passes 100: looked for again, and compiled when still missing.
        assert_eq!(gate.before_launch(&"k", 30), Gate::Due);
        assert_eq!(gate.missing(&"k", 30, Gate::Due), Gate::Open);
        // Not held any more.
        assert_eq!(gate.before_launch(&"k", 30), Gate::Open);
        // Other keys are their own.
        assert_eq!(gate.before_launch(&"other", 1), Gate::Open);
    }

    #[test]
    fn a_launch_of_enough_work_alone_is_compiled_at_once() {
        let mut gate = SpecialisationGate::new(100);
        assert_eq!(gate.before_launch(&"big", 500), Gate::Open);
        assert_eq!(gate.missing(&"big", 500, Gate::Open), Gate::Open);
        assert_eq!(gate.before_launch(&"big", 500), Gate::Open);
    }

    #[test]
    fn work_past_the_largest_count_does_not_wrap() {
        let mut gate = SpecialisationGate::new(u64::MAX);
        assert_eq!(gate.missing(&"k", u64::MAX - 1, Gate::Open), Gate::Held);
        assert_eq!(gate.before_launch(&"k", u64::MAX), Gate::Due);
    }
}
