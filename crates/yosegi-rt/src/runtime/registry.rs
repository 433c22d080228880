//! The registry of host objects the runtime tracks: file-scope arrays (registered at start),
//! heap blocks (through the malloc wrappers), sections named by data clauses, and extents
//! computed from a launch's access ranges. Keyed by start address; each object carries the
//! coherence state of its copies.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use super::coherence::CopyState;

/// Counts insertions into any registry (and runtime installations): an address found
/// untracked stays untracked until this changes, which lets the host's access hooks remember
/// a miss without taking the runtime's lock (`abi::rt_host_access`).
static COVERAGE_GENERATION: AtomicU64 = AtomicU64::new(0);

/// The current [`COVERAGE_GENERATION`].
pub fn coverage_generation() -> u64 {
    COVERAGE_GENERATION.load(Ordering::Acquire)
}

/// Marks that tracked memory may have grown (an insertion, a new runtime).
pub fn coverage_changed() {
    COVERAGE_GENERATION.fetch_add(1, Ordering::AcqRel);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Static,
    Malloc,
    DataClause,
    LaunchExtent,
    /// An array whose size the host passed with its pointer (`sizeof a`): often a stack
    /// array, so it may outlive its frame in the registry until something overlaps it.
    Sized,
}

impl Origin {
    /// A file-scope array or a heap block: never a stack object, whatever its address.
    pub fn is_outside_the_stack(self) -> bool {
        matches!(self, Origin::Static | Origin::Malloc)
    }

    /// Whether the object's extent is the real C object's (it cannot grow).
    pub fn is_exact(self) -> bool {
        matches!(self, Origin::Static | Origin::Malloc | Origin::Sized)
    }
}

#[derive(Clone, Debug)]
pub struct HostObject {
    pub start: u64,
    pub len: u64,
    pub name: String,
    pub origin: Origin,
    pub copies: CopyState,
    /// The order objects were registered in: the same in every run of the program's host
    /// code, where start addresses are not (several MPI ranks: `runtime::ranks`).
    pub serial: u64,
}

impl HostObject {
    pub fn end(&self) -> u64 {
        self.start + self.len
    }
}

#[derive(Clone, Debug, Default)]
pub struct Registry {
    objects: BTreeMap<u64, HostObject>,
    next_serial: u64,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds an object; the caller has removed whatever overlapped it.
    pub fn insert(&mut self, start: u64, len: u64, name: &str, origin: Origin, device_count: usize) -> &mut HostObject {
        coverage_changed();
        self.next_serial += 1;
        self.objects.insert(
            start,
            HostObject { start, len, name: name.to_string(), origin, copies: CopyState::new(len, device_count), serial: self.next_serial },
        );
        self.objects.get_mut(&start).expect("just inserted")
    }

    /// The start of the object containing `addr`.
    pub fn find(&self, addr: u64) -> Option<u64> {
        let (&start, object) = self.objects.range(..=addr).next_back()?;
        (addr < object.end()).then_some(start)
    }

    /// The starts of the objects overlapping `lo..hi`.
    pub fn overlapping(&self, lo: u64, hi: u64) -> Vec<u64> {
        let mut out: Vec<u64> = self.find(lo).into_iter().collect();
        out.extend(self.objects.range(lo..hi).map(|(&s, _)| s));
        out.sort_unstable();
        out.dedup();
        out
    }

    pub fn get(&self, start: u64) -> Option<&HostObject> {
        self.objects.get(&start)
    }
    pub fn get_mut(&mut self, start: u64) -> Option<&mut HostObject> {
        self.objects.get_mut(&start)
    }
    pub fn remove(&mut self, start: u64) -> Option<HostObject> {
        self.objects.remove(&start)
    }
    /// Every object, by start address.
    pub fn iter(&self) -> impl Iterator<Item = &HostObject> {
        self.objects.values()
    }
    /// Every object, by start address, to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut HostObject> {
        self.objects.values_mut()
    }
    /// Every object's start, by address.
    pub fn starts(&self) -> Vec<u64> {
        self.objects.keys().copied().collect()
    }
    /// Every object's start, in the order the objects were registered: what a pass over all
    /// objects that moves data follows, so that every rank of a job moves it in one order.
    pub fn starts_in_registration_order(&self) -> Vec<u64> {
        let mut objects: Vec<(u64, u64)> = self.objects.values().map(|o| (o.serial, o.start)).collect();
        objects.sort_unstable();
        objects.into_iter().map(|(_, start)| start).collect()
    }
    pub fn len(&self) -> usize {
        self.objects.len()
    }
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_containing_object() {
        let mut r = Registry::new();
        r.insert(100, 50, "a", Origin::Malloc, 1);
        r.insert(200, 8, "b", Origin::Static, 1);
        assert_eq!(r.find(100), Some(100));
        assert_eq!(r.find(149), Some(100));
        assert_eq!(r.find(150), None);
        assert_eq!(r.find(99), None);
        assert_eq!(r.find(207), Some(200));
        assert_eq!(r.overlapping(120, 201), vec![100, 200]);
        assert_eq!(r.overlapping(150, 200), Vec::<u64>::new());
        assert_eq!(r.remove(100).map(|o| o.name), Some("a".to_string()));
        assert_eq!(r.find(120), None);
    }
}
