//! Host/device coherence: for every tracked object, which byte ranges of each copy (the host
//! copy, and one per device) hold the current value. Transfers happen only for ranges a copy
//! lacks, and a copy that is the only valid one is copied back before it is invalidated or
//! freed, so the program always sees sequential semantics whatever its data clauses say.

use super::device::{Device, DeviceAlloc};
use super::stats::{Stats, TransferDirection};

/// A set of disjoint, sorted, half-open byte ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IntervalSet {
    ranges: Vec<(u64, u64)>,
}

impl IntervalSet {
    pub fn new() -> IntervalSet {
        IntervalSet::default()
    }
    pub fn with_range(lo: u64, hi: u64) -> IntervalSet {
        let mut set = IntervalSet::new();
        set.insert(lo, hi);
        set
    }
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
    pub fn insert(&mut self, lo: u64, hi: u64) {
        if lo >= hi {
            return;
        }
        let (mut lo, mut hi) = (lo, hi);
        let mut kept = Vec::with_capacity(self.ranges.len() + 1);
        for &(a, b) in &self.ranges {
            if b < lo || a > hi {
                kept.push((a, b));
            } else {
                lo = lo.min(a);
                hi = hi.max(b);
            }
        }
        let at = kept.partition_point(|&(a, _)| a < lo);
        kept.insert(at, (lo, hi));
        self.ranges = kept;
    }
    pub fn remove(&mut self, lo: u64, hi: u64) {
        if lo >= hi {
            return;
        }
        let mut kept = Vec::with_capacity(self.ranges.len() + 1);
        for &(a, b) in &self.ranges {
            if b <= lo || a >= hi {
                kept.push((a, b));
                continue;
            }
            if a < lo {
                kept.push((a, lo));
            }
            if b > hi {
                kept.push((hi, b));
            }
        }
        self.ranges = kept;
    }
    /// The parts of `lo..hi` not in the set.
    pub fn missing(&self, lo: u64, hi: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut cursor = lo;
        for &(a, b) in &self.ranges {
            if b <= cursor {
                continue;
            }
            if a >= hi {
                break;
            }
            if a > cursor {
                out.push((cursor, a));
            }
            cursor = cursor.max(b);
            if cursor >= hi {
                break;
            }
        }
        if cursor < hi {
            out.push((cursor, hi));
        }
        out
    }
    /// The parts of `lo..hi` in the set.
    pub fn present(&self, lo: u64, hi: u64) -> Vec<(u64, u64)> {
        self.ranges.iter().filter(|&&(a, b)| b > lo && a < hi).map(|&(a, b)| (a.max(lo), b.min(hi))).collect()
    }
    pub fn contains(&self, lo: u64, hi: u64) -> bool {
        self.missing(lo, hi).is_empty()
    }
}

/// One device's copy of an object: allocated over the whole object.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceCopy {
    pub alloc: DeviceAlloc,
    /// Where the object's first byte lies in `alloc`: 0, except for memory `acc_map_data` lent
    /// (a part of an `acc_malloc` block).
    pub base: u64,
    pub valid: IntervalSet,
    /// Bytes of `valid` a `create` started as zeros standing for the host's bytes
    /// ([`CopyState::start_undefined`]) and no launch has written since: valid only while the
    /// copy is present.
    pub undefined: IntervalSet,
    /// Structured data constructs (`data`, the data clauses of compute constructs) holding the
    /// copy (OpenACC's structured reference count).
    pub structured: u32,
    /// `enter data` and the API's `acc_copyin`/`acc_create` (OpenACC's dynamic reference count).
    pub dynamic: u32,
    /// The memory belongs to the program (`acc_map_data`): never freed here, and the copy stays
    /// present until `acc_unmap_data`.
    pub mapped: bool,
    /// The host copied bytes in since a launch the performance model saw last touched the
    /// copy: the next launch touching it pays the device's first touch of uploaded data
    /// (`Machine::upload_touch_s`). Only the model reads it.
    pub uploaded: bool,
}

impl DeviceCopy {
    /// Whether the data is present in OpenACC's sense: held by a data construct, an `enter
    /// data` or a mapping. A copy held by none stays only as a cache for later launches.
    pub fn is_present(&self) -> bool {
        self.structured > 0 || self.dynamic > 0 || self.mapped
    }

    /// The structured and dynamic counts after a release of `hold` (`finalize`: the dynamic
    /// count to zero), as [`CopyState::release`] sets them.
    fn counts_after_release(&self, hold: Hold, finalize: bool) -> (u32, u32) {
        match hold {
            Hold::Structured => (self.structured.saturating_sub(1), self.dynamic),
            Hold::Dynamic if finalize => (self.structured, 0),
            Hold::Dynamic => (self.structured, self.dynamic.saturating_sub(1)),
        }
    }
}

/// Which reference count a data action changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    Structured,
    Dynamic,
}

/// The copies of one object. Offsets are bytes from the object's start.
#[derive(Clone, Debug, PartialEq)]
pub struct CopyState {
    pub len: u64,
    pub host_valid: IntervalSet,
    pub devices: Vec<Option<DeviceCopy>>,
}

/// The environment transfers need: the object's host address, the devices and the counters.
pub struct Transfer<'a> {
    pub host: *mut u8,
    pub devices: &'a mut [Box<dyn Device>],
    pub stats: &'a mut Stats,
    /// The host byte ranges copied to each device (device, start, end), for the performance
    /// model: a copy writes through the device's L2 cache, where the next kernels find it.
    pub uploads: &'a mut Vec<(usize, u64, u64)>,
}

/// Devices `a` and `b` (distinct) of `devices`, both mutable.
fn two_devices(devices: &mut [Box<dyn Device>], a: usize, b: usize) -> (&mut dyn Device, &mut dyn Device) {
    assert_ne!(a, b, "a copy between devices needs two devices");
    if a < b {
        let (low, high) = devices.split_at_mut(b);
        (low[a].as_mut(), high[0].as_mut())
    } else {
        let (low, high) = devices.split_at_mut(a);
        (high[0].as_mut(), low[b].as_mut())
    }
}

impl CopyState {
    /// A fresh object: only the host copy is valid.
    pub fn new(len: u64, device_count: usize) -> CopyState {
        CopyState { len, host_valid: IntervalSet::with_range(0, len), devices: vec![None; device_count] }
    }

    pub fn has_device_copy(&self, device: usize) -> bool {
        self.devices[device].is_some()
    }

    /// Allocates the device copy if there is none (nothing valid on it yet).
    pub fn ensure_allocated(&mut self, device: usize, t: &mut Transfer) {
        if self.devices[device].is_none() {
            let alloc = t.devices[device].allocate(self.len);
            t.stats.device_copies_allocated += 1;
            self.devices[device] = Some(DeviceCopy {
                alloc,
                base: 0,
                valid: IntervalSet::new(),
                undefined: IntervalSet::new(),
                structured: 0,
                dynamic: 0,
                mapped: false,
                uploaded: false,
            });
        }
    }

    pub fn alloc(&self, device: usize) -> Option<DeviceAlloc> {
        self.devices[device].as_ref().map(|c| c.alloc)
    }

    /// The device copy's allocation and the offset of the object's first byte in it.
    pub fn placement(&self, device: usize) -> Option<(DeviceAlloc, u64)> {
        self.devices[device].as_ref().map(|c| (c.alloc, c.base))
    }

    /// Whether device `device` holds the object in OpenACC's sense ([`DeviceCopy::is_present`]).
    pub fn is_present(&self, device: usize) -> bool {
        self.devices[device].as_ref().is_some_and(DeviceCopy::is_present)
    }

    /// Whether any data construct, `enter data` or mapping holds a copy on any device.
    pub fn is_held(&self) -> bool {
        self.devices.iter().flatten().any(DeviceCopy::is_present)
    }

    /// Makes the host copy valid over `lo..hi`, fetching ranges only a device holds (each
    /// byte once, from the first device that holds it).
    pub fn make_host_valid(&mut self, lo: u64, hi: u64, t: &mut Transfer) {
        let (lo, hi) = (lo.min(self.len), hi.min(self.len));
        for (a, b) in self.host_valid.missing(lo, hi) {
            let mut wanted = IntervalSet::with_range(a, b);
            for (d, copy) in self.devices.iter().enumerate() {
                let Some(copy) = copy else { continue };
                for (u, v) in copy.valid.present(a, b) {
                    for (x, y) in wanted.present(u, v) {
                        // SAFETY: the registry only tracks live host objects of `len` bytes.
                        let dst = unsafe { std::slice::from_raw_parts_mut(t.host.add(x as usize), (y - x) as usize) };
                        // The launches that wrote these bytes finish first, outside the copy's time.
                        t.devices[d].wait();
                        let started = std::time::Instant::now();
                        t.devices[d].copy_to_host(copy.alloc, copy.base + x, dst);
                        t.stats.record_transfer_time(TransferDirection::ToHost, started.elapsed());
                        t.stats.record_to_host(d, y - x);
                        wanted.remove(x, y);
                    }
                }
            }
            self.host_valid.insert(a, b);
        }
    }

    /// Makes device `device`'s copy valid over `lo..hi` (allocating it if needed), sending
    /// only the ranges it lacks: from another device that holds them (directly, device to
    /// device), else from the host. Bytes a `create` left as zeros on another device are not
    /// the object's value there ([`DeviceCopy::undefined`]): they come from the host.
    pub fn make_device_valid(&mut self, device: usize, lo: u64, hi: u64, t: &mut Transfer) {
        let (lo, hi) = (lo.min(self.len), hi.min(self.len));
        self.ensure_allocated(device, t);
        let missing = self.devices[device].as_ref().map(|c| c.valid.missing(lo, hi)).unwrap_or_default();
        // In a job of several ranks every rank's host holds the host copy: its valid bytes go
        // from the rank's own host, not as a message from another rank's device.
        let host_first = t.devices[device].rank().is_some();
        for (a, b) in missing {
            let mut from_host = IntervalSet::with_range(a, b);
            if host_first {
                for (x, y) in self.host_valid.present(a, b) {
                    self.send_from_host(device, x, y, t);
                    from_host.remove(x, y);
                }
            }
            for peer in (0..self.devices.len()).filter(|&d| d != device) {
                for (x, y) in self.peer_ranges(peer, &from_host, a, b) {
                    self.copy_from_peer(peer, device, x, y, t);
                    from_host.remove(x, y);
                }
            }
            for &(x, y) in from_host.ranges() {
                self.send_from_host(device, x, y, t);
            }
        }
    }

    /// The parts of `a..b` still `wanted` that device `peer`'s copy holds as the object's value.
    fn peer_ranges(&self, peer: usize, wanted: &IntervalSet, a: u64, b: u64) -> Vec<(u64, u64)> {
        let Some(copy) = self.devices[peer].as_ref() else { return Vec::new() };
        let mut out = Vec::new();
        for (x, y) in copy.valid.present(a, b) {
            for (u, v) in wanted.present(x, y) {
                let mut held = IntervalSet::with_range(u, v);
                for &(p, q) in copy.undefined.ranges() {
                    held.remove(p, q);
                }
                out.extend_from_slice(held.ranges());
            }
        }
        out
    }

    /// Copies `x..y` from device `from`'s copy to device `to`'s, which becomes valid there.
    fn copy_from_peer(&mut self, from: usize, to: usize, x: u64, y: u64, t: &mut Transfer) {
        let (src, dst) = match (self.devices[from].as_ref(), self.devices[to].as_ref()) {
            (Some(src), Some(dst)) => ((src.alloc, src.base), (dst.alloc, dst.base)),
            _ => return,
        };
        let (src_device, dst_device) = two_devices(t.devices, from, to);
        let started = std::time::Instant::now();
        dst_device.copy_from_peer(dst.0, dst.1 + x, src_device, src.0, src.1 + x, y - x);
        t.stats.peer_time += started.elapsed();
        t.stats.record_peer(from, to, y - x);
        if let Some(copy) = self.devices[to].as_mut() {
            copy.valid.insert(x, y);
        }
    }

    /// Sends the host's bytes `x..y` to device `device`'s copy (making the host copy valid
    /// there first: another device may have held the only valid bytes).
    fn send_from_host(&mut self, device: usize, x: u64, y: u64, t: &mut Transfer) {
        self.make_host_valid(x, y, t);
        let Some(copy) = self.devices[device].as_mut() else { return };
        // SAFETY: as in `make_host_valid`.
        let src = unsafe { std::slice::from_raw_parts(t.host.add(x as usize), (y - x) as usize) };
        let started = std::time::Instant::now();
        t.devices[device].copy_to_device(copy.alloc, copy.base + x, src);
        t.stats.record_transfer_time(TransferDirection::ToDevice, started.elapsed());
        t.stats.record_to_device(device, y - x);
        t.uploads.push((device, t.host as u64 + x, t.host as u64 + y));
        copy.valid.insert(x, y);
        copy.uploaded = true;
    }

    /// `update device`: the host's bytes of `lo..hi` go to device `device`, even where the
    /// device copy counts as valid too (a `create` copy starts as zeros that stand for the
    /// host's bytes; see [`CopyState::start_undefined`]). Bytes a device wrote after the host's
    /// last write are newer than the host's: they stay.
    pub fn update_device(&mut self, device: usize, lo: u64, hi: u64, t: &mut Transfer) {
        let (lo, hi) = (lo.min(self.len), hi.min(self.len));
        if let Some(copy) = self.devices[device].as_mut() {
            for &(a, b) in self.host_valid.ranges() {
                let (a, b) = (a.max(lo), b.min(hi));
                if a < b {
                    copy.valid.remove(a, b);
                    copy.undefined.remove(a, b);
                }
            }
        }
        self.make_device_valid(device, lo, hi, t);
    }

    /// `create(zero: ...)`: device `device`'s bytes `lo..hi` become zero, the only valid values
    /// there (the host copy is stale until it is next read).
    pub fn zero_on_device(&mut self, device: usize, lo: u64, hi: u64, t: &mut Transfer) {
        let (lo, hi) = (lo.min(self.len), hi.min(self.len));
        self.ensure_allocated(device, t);
        let Some(alloc) = self.alloc(device) else { return };
        if hi > lo {
            t.devices[device].copy_to_device(alloc, lo, &vec![0u8; (hi - lo) as usize]);
            t.uploads.push((device, t.host as u64 + lo, t.host as u64 + hi));
            if let Some(copy) = self.devices[device].as_mut() {
                copy.uploaded = true;
            }
        }
        self.device_wrote(device, lo, hi);
    }

    /// A launch on `device` wrote `lo..hi` (whose bytes were all valid there before the launch):
    /// every other copy is stale there.
    pub fn device_wrote(&mut self, device: usize, lo: u64, hi: u64) {
        let (lo, hi) = (lo.min(self.len), hi.min(self.len));
        for (d, copy) in self.devices.iter_mut().enumerate() {
            let Some(copy) = copy else { continue };
            if d == device {
                copy.valid.insert(lo, hi);
                copy.undefined.remove(lo, hi);
            } else {
                copy.valid.remove(lo, hi);
            }
        }
        self.host_valid.remove(lo, hi);
    }

    /// The runtime wrote into device `device`'s copy over `lo..hi` something other than the
    /// object's value (the device addresses of a pointer table's rows): that copy no longer
    /// holds the value there, which the host copy keeps.
    pub fn device_overwrote(&mut self, device: usize, lo: u64, hi: u64, t: &mut Transfer) {
        self.make_host_valid(lo, hi, t);
        if let Some(copy) = self.devices[device].as_mut() {
            copy.valid.remove(lo, hi);
            copy.undefined.remove(lo, hi);
        }
    }

    /// The host is about to write `lo..hi`: the host copy becomes the only valid one there.
    pub fn host_writes(&mut self, lo: u64, hi: u64, t: &mut Transfer) {
        self.make_host_valid(lo, hi, t);
        for copy in self.devices.iter_mut().flatten() {
            copy.valid.remove(lo, hi);
            copy.undefined.remove(lo, hi);
        }
    }

    /// Frees device `device`'s copy after saving what only it holds.
    pub fn free_device_copy(&mut self, device: usize, t: &mut Transfer) {
        if self.devices[device].is_none() {
            return;
        }
        self.make_host_valid(0, self.len, t);
        if let Some(copy) = self.devices[device].take()
            && !copy.mapped
        {
            t.devices[device].free(copy.alloc);
        }
    }

    /// Frees device `device`'s copy without saving it: nothing will read the bytes only it
    /// holds ([`crate::ir::DataSection::dead_on_host`]), so the host's older bytes become the
    /// value there.
    pub fn drop_device_copy(&mut self, device: usize, t: &mut Transfer) {
        let Some(copy) = self.devices[device].take() else { return };
        let mut orphaned = IntervalSet::new();
        for &(a, b) in copy.valid.ranges() {
            for (x, y) in self.host_valid.missing(a, b) {
                orphaned.insert(x, y);
            }
        }
        for other in self.devices.iter().flatten() {
            for &(a, b) in other.valid.ranges() {
                orphaned.remove(a, b);
            }
        }
        for &(a, b) in orphaned.ranges() {
            self.host_valid.insert(a, b);
        }
        if !copy.mapped {
            t.devices[device].free(copy.alloc);
        }
    }

    /// Frees every device copy without saving anything (the host object itself is being freed).
    /// Memory `acc_map_data` lent stays the program's.
    pub fn discard_device_copies(&mut self, t: &mut Transfer) {
        for (d, copy) in self.devices.iter_mut().enumerate() {
            if let Some(copy) = copy.take()
                && !copy.mapped
            {
                t.devices[d].free(copy.alloc);
            }
        }
    }

    /// A data construct (`Hold::Structured`) or an `enter data` (`Hold::Dynamic`) starts
    /// holding the device copy.
    /// What a data clause of `kind` does to `lo..hi` when its region starts: takes a hold of
    /// `hold` on the device copy, and brings data in for `copy`/`copyin` (the device copy
    /// valid) or zeroes a copy it allocates under `zero:`; `update host/device` make one side
    /// valid. Other kinds do nothing here.
    pub fn enter_clause(&mut self, kind: crate::ir::DataClauseKind, zero: bool, device: usize, hold: Hold, lo: u64, hi: u64, t: &mut Transfer) {
        use crate::ir::DataClauseKind as K;
        match kind {
            K::Copy | K::CopyIn => {
                self.acquire(device, hold, t);
                self.make_device_valid(device, lo, hi, t);
            }
            K::Create | K::CopyOut | K::Present => {
                // `zero:` (OpenACC 3.3): a copy this clause allocates (none held before) starts zeroed.
                let fresh = !self.is_present(device);
                self.acquire(device, hold, t);
                if zero && fresh {
                    self.zero_on_device(device, lo, hi, t);
                } else if kind == K::Create && fresh {
                    self.start_undefined(device, lo, hi, t);
                }
            }
            K::Host => self.make_host_valid(lo, hi, t),
            K::Device => self.update_device(device, lo, hi, t),
            _ => {}
        }
    }

    /// What a data clause of `kind` does to `lo..hi` when its region ends: `copy`/`copyout`
    /// bring the data home when theirs is the last reference, then every holding kind
    /// releases its hold (`finalize`: all of them); `update host/device` make one side valid.
    /// Other kinds do nothing here. Returns whether the copy stopped being present
    /// ([`CopyState::release`]).
    pub fn exit_clause(&mut self, kind: crate::ir::DataClauseKind, device: usize, hold: Hold, finalize: bool, lo: u64, hi: u64, t: &mut Transfer) -> bool {
        use crate::ir::DataClauseKind as K;
        match kind {
            // OpenACC copies out only when the last reference goes: an inner `copy` of data
            // an enclosing region (or an `enter data`) still holds leaves the host's bytes as
            // they are, and the device keeps the current ones.
            K::Copy | K::CopyOut => {
                if self.last_reference(device, hold, finalize) {
                    self.make_host_valid(lo, hi, t);
                }
                self.release(device, hold, finalize)
            }
            K::CopyIn | K::Create | K::Present | K::Delete => self.release(device, hold, finalize),
            K::Host => {
                self.make_host_valid(lo, hi, t);
                false
            }
            K::Device => {
                self.update_device(device, lo, hi, t);
                false
            }
            _ => false,
        }
    }

    pub fn acquire(&mut self, device: usize, hold: Hold, t: &mut Transfer) {
        self.ensure_allocated(device, t);
        if let Some(copy) = self.devices[device].as_mut() {
            match hold {
                Hold::Structured => copy.structured += 1,
                Hold::Dynamic => copy.dynamic += 1,
            }
        }
    }

    /// Whether [`CopyState::release`] with these arguments would leave device `device`'s copy
    /// no longer present (also when there is no copy: the bytes then go to the host as before).
    fn last_reference(&self, device: usize, hold: Hold, finalize: bool) -> bool {
        let Some(copy) = self.devices[device].as_ref() else { return true };
        copy.counts_after_release(hold, finalize) == (0, 0) && !copy.mapped
    }

    /// A data construct ends, or an `exit data` (`finalize`: its dynamic count drops to zero)
    /// lets the copy go. An `exit data` of a copy no `enter data` holds does nothing, as
    /// OpenACC says. When nothing holds the copy any more it stays as a cache, not present:
    /// bytes only it holds go to the host when the host reads them (its access hooks) and
    /// nowhere when the program frees the object, so a scratch array a `data` region creates
    /// on every call neither comes back nor goes out again (the runtime frees caches when
    /// device memory runs short: `Runtime::trim_device_caches`). Returns whether the copy
    /// stopped being present.
    pub fn release(&mut self, device: usize, hold: Hold, finalize: bool) -> bool {
        let Some(copy) = self.devices[device].as_mut() else { return false };
        (copy.structured, copy.dynamic) = copy.counts_after_release(hold, finalize);
        if copy.is_present() {
            return false;
        }
        // The zeros a `create` left unwritten are not the object's value: a later region
        // sends the host's bytes there.
        for &(a, b) in copy.undefined.ranges() {
            copy.valid.remove(a, b);
        }
        copy.undefined = IntervalSet::new();
        true
    }

    /// A `create` allocates device `device`'s copy: OpenACC leaves its contents undefined, and
    /// nothing is sent. The bytes of `lo..hi` it lacks become zero (the same on every device
    /// and every run) and count as valid, so a launch that may read them before writing them
    /// does not fetch the host's bytes; the host copy stays valid too (the two differ only where
    /// the program reads what it never wrote on the device, which OpenACC leaves undefined).
    pub fn start_undefined(&mut self, device: usize, lo: u64, hi: u64, t: &mut Transfer) {
        let (lo, hi) = (lo.min(self.len), hi.min(self.len));
        self.ensure_allocated(device, t);
        let Some(copy) = self.devices[device].as_mut() else { return };
        for (a, b) in copy.valid.missing(lo, hi) {
            t.devices[device].fill_zero(copy.alloc, copy.base + a, b - a);
            copy.valid.insert(a, b);
            copy.undefined.insert(a, b);
        }
    }

    /// `acc_map_data`: device `device`'s copy is the program's memory at `base` in `alloc`,
    /// holding nothing valid yet (the host copy stays the current one). The caller checked
    /// that the object is not present there; a cached copy is freed first, saving its data.
    pub fn map(&mut self, device: usize, alloc: DeviceAlloc, base: u64, t: &mut Transfer) {
        self.free_device_copy(device, t);
        self.devices[device] = Some(DeviceCopy {
            alloc,
            base,
            valid: IntervalSet::new(),
            undefined: IntervalSet::new(),
            structured: 0,
            dynamic: 0,
            mapped: true,
            uploaded: false,
        });
    }

    /// `acc_unmap_data`: the copy stops being the object's, after saving what only it holds
    /// (the memory stays the program's).
    pub fn unmap(&mut self, device: usize, t: &mut Transfer) {
        if self.devices[device].as_ref().is_some_and(|c| c.mapped) {
            self.free_device_copy(device, t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::sim::SimDevice;

    #[test]
    fn interval_set_merges_and_splits() {
        let mut s = IntervalSet::new();
        s.insert(10, 20);
        s.insert(30, 40);
        s.insert(20, 30);
        assert_eq!(s.ranges(), &[(10, 40)]);
        s.remove(15, 25);
        assert_eq!(s.ranges(), &[(10, 15), (25, 40)]);
        assert_eq!(s.missing(0, 50), vec![(0, 10), (15, 25), (40, 50)]);
        assert_eq!(s.present(12, 30), vec![(12, 15), (25, 30)]);
        assert!(s.contains(26, 40));
        assert!(!s.contains(14, 26));
        s.insert(0, 100);
        assert_eq!(s.ranges(), &[(0, 100)]);
        s.remove(0, 100);
        assert!(s.is_empty());
    }

    struct Fixture {
        host: Vec<u8>,
        devices: Vec<Box<dyn Device>>,
        stats: Stats,
        uploads: Vec<(usize, u64, u64)>,
        state: CopyState,
    }

    impl Fixture {
        fn new(len: usize) -> Fixture {
            Fixture {
                host: (0..len as u8).collect(),
                devices: vec![Box::new(SimDevice::new())],
                stats: Stats::default(),
                uploads: Vec::new(),
                state: CopyState::new(len as u64, 1),
            }
        }
        fn with<R>(&mut self, f: impl FnOnce(&mut CopyState, &mut Transfer) -> R) -> R {
            let mut t = Transfer { host: self.host.as_mut_ptr(), devices: &mut self.devices, stats: &mut self.stats, uploads: &mut self.uploads };
            f(&mut self.state, &mut t)
        }
        fn device_bytes(&mut self) -> Vec<u8> {
            let alloc = self.state.alloc(0).expect("device copy");
            let mut out = vec![0; self.host.len()];
            self.devices[0].copy_to_host(alloc, 0, &mut out);
            out
        }
        fn device_write(&mut self, lo: usize, bytes: &[u8]) {
            let alloc = self.state.alloc(0).expect("device copy");
            self.devices[0].copy_to_device(alloc, lo as u64, bytes);
            self.state.device_wrote(0, lo as u64, (lo + bytes.len()) as u64);
        }
    }

    #[test]
    fn copyin_sends_only_missing_ranges() {
        let mut f = Fixture::new(16);
        f.with(|s, t| s.make_device_valid(0, 0, 8, t));
        f.with(|s, t| s.make_device_valid(0, 4, 16, t));
        assert_eq!(f.stats.bytes_to_device, 16);
        assert_eq!(f.stats.transfers_to_device, 2);
        assert_eq!(f.device_bytes(), (0..16).collect::<Vec<u8>>());
        // Valid everywhere already: no transfer.
        f.with(|s, t| s.make_device_valid(0, 0, 16, t));
        assert_eq!(f.stats.transfers_to_device, 2);
    }

    #[test]
    fn device_writes_come_back_on_host_access() {
        let mut f = Fixture::new(8);
        f.with(|s, t| s.make_device_valid(0, 0, 8, t));
        f.device_write(2, &[100, 101]);
        assert!(!f.state.host_valid.contains(2, 4));
        f.with(|s, t| s.make_host_valid(0, 8, t));
        assert_eq!(&f.host[..5], &[0, 1, 100, 101, 4]);
        assert_eq!(f.stats.bytes_to_host, 2);
    }

    #[test]
    fn host_write_invalidates_device_then_update_device_resends() {
        let mut f = Fixture::new(8);
        f.with(|s, t| s.make_device_valid(0, 0, 8, t));
        f.with(|s, t| s.host_writes(0, 4, t));
        f.host[0] = 42;
        assert!(!f.state.devices[0].as_ref().expect("copy").valid.contains(0, 4));
        f.with(|s, t| s.make_device_valid(0, 0, 8, t));
        assert_eq!(f.device_bytes()[0], 42);
        assert_eq!(f.stats.bytes_to_device, 12);
    }

    #[test]
    fn freeing_a_device_copy_never_loses_data() {
        let mut f = Fixture::new(8);
        f.with(|s, t| s.acquire(0, Hold::Structured, t));
        f.with(|s, t| s.acquire(0, Hold::Structured, t));
        f.with(|s, t| s.make_device_valid(0, 0, 8, t));
        f.device_write(6, &[7, 7]);
        // The inner region ends: the outer one still holds the copy.
        assert!(!f.with(|s, _| s.release(0, Hold::Structured, false)));
        assert!(f.state.is_present(0));
        assert_eq!(f.host[6], 6);
        // The outer one ends: the copy stays as a cache until the host reads or it is freed.
        assert!(f.with(|s, _| s.release(0, Hold::Structured, false)));
        assert!(!f.state.is_present(0));
        assert_eq!(f.host[6], 6, "nothing moves before the host reads");
        f.with(|s, t| s.free_device_copy(0, t));
        assert!(!f.state.has_device_copy(0));
        assert_eq!(&f.host[6..], &[7, 7]);
        assert!(f.state.host_valid.contains(0, 8));
    }

    #[test]
    fn create_then_copyout_of_a_device_write() {
        let mut f = Fixture::new(4);
        f.with(|s, t| s.acquire(0, Hold::Structured, t));
        // `create`: no transfer; the launch makes the range valid first (sequential semantics).
        assert_eq!(f.stats.transfers_to_device, 0);
        f.with(|s, t| s.make_device_valid(0, 0, 4, t));
        f.device_write(0, &[9, 9, 9, 9]);
        f.with(|s, t| s.make_host_valid(0, 4, t));
        assert_eq!(f.host, vec![9, 9, 9, 9]);
        assert_eq!(f.stats.bytes_to_host, 4);
    }

    #[test]
    fn create_sends_nothing_and_its_zeros_never_outlive_it() {
        use crate::ir::DataClauseKind as K;
        let mut f = Fixture::new(8);
        f.with(|s, t| s.enter_clause(K::Create, false, 0, Hold::Structured, 0, 8, t));
        // A launch that may read the copy finds it valid: zeros, not the host's bytes.
        f.with(|s, t| s.make_device_valid(0, 0, 8, t));
        assert_eq!(f.stats.transfers_to_device, 0);
        assert_eq!(f.device_bytes(), vec![0; 8]);
        f.device_write(2, &[5]);
        f.with(|s, t| s.exit_clause(K::Create, 0, Hold::Structured, false, 0, 8, t));
        // The copy stays as a cache: nothing came back yet, and the device's write is the value.
        assert!(f.state.has_device_copy(0) && !f.state.is_present(0));
        assert_eq!(f.stats.transfers_to_host, 0);
        // A `copyin` region later: the zeros are not the object's value, the host's bytes are.
        f.with(|s, t| s.enter_clause(K::CopyIn, false, 0, Hold::Structured, 0, 8, t));
        assert_eq!(f.device_bytes(), vec![0, 1, 5, 3, 4, 5, 6, 7]);
        f.with(|s, t| s.make_host_valid(0, 8, t));
        assert_eq!(f.host, vec![0, 1, 5, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn update_device_resends_over_a_create_copy() {
        use crate::ir::DataClauseKind as K;
        let mut f = Fixture::new(4);
        f.with(|s, t| s.enter_clause(K::Create, false, 0, Hold::Dynamic, 0, 4, t));
        f.with(|s, t| s.enter_clause(K::Device, false, 0, Hold::Structured, 1, 3, t));
        assert_eq!(f.device_bytes(), vec![0, 1, 2, 0]);
        assert_eq!(f.stats.bytes_to_device, 2);
    }

    #[test]
    fn structured_and_dynamic_counts_are_separate() {
        let mut f = Fixture::new(8);
        // `enter data` twice, then a `data` construct inside.
        f.with(|s, t| s.acquire(0, Hold::Dynamic, t));
        f.with(|s, t| s.acquire(0, Hold::Dynamic, t));
        f.with(|s, t| s.acquire(0, Hold::Structured, t));
        f.with(|s, t| s.make_device_valid(0, 0, 8, t));
        f.device_write(0, &[9]);
        assert!(!f.with(|s, _| s.release(0, Hold::Structured, false)));
        assert!(!f.with(|s, _| s.release(0, Hold::Dynamic, false)));
        assert!(f.state.is_present(0));
        assert_eq!(f.host[0], 0, "nothing moves while the copy is held");
        // The last `exit data` lets it go: a cache, whose write the host gets when it reads.
        assert!(f.with(|s, _| s.release(0, Hold::Dynamic, false)));
        assert!(!f.state.is_present(0) && f.state.has_device_copy(0));
        f.with(|s, t| s.make_host_valid(0, 8, t));
        assert_eq!(f.host[0], 9);
    }

    #[test]
    fn an_inner_copy_of_held_data_copies_out_only_with_the_last_reference() {
        use crate::ir::DataClauseKind as K;
        let mut f = Fixture::new(8);
        // `data copy(a)` around a function whose own `data copy(a)` runs twice.
        f.with(|s, t| s.enter_clause(K::Copy, false, 0, Hold::Structured, 0, 8, t));
        for step in 1..=2u8 {
            f.with(|s, t| s.enter_clause(K::Copy, false, 0, Hold::Structured, 0, 8, t));
            f.device_write(0, &[step]);
            assert!(!f.with(|s, t| s.exit_clause(K::Copy, 0, Hold::Structured, false, 0, 8, t)));
            assert_eq!(f.stats.transfers_to_host, 0, "the enclosing region still holds the copy");
            assert_eq!(f.host[0], 0);
        }
        // Nor does an `exit data copyout` of data no `enter data` holds.
        assert!(!f.with(|s, t| s.exit_clause(K::CopyOut, 0, Hold::Dynamic, false, 0, 8, t)));
        assert_eq!(f.stats.transfers_to_host, 0);
        // The outer region's exit is the last reference: the device's bytes come home once.
        assert!(f.with(|s, t| s.exit_clause(K::Copy, 0, Hold::Structured, false, 0, 8, t)));
        assert_eq!(f.stats.transfers_to_host, 1);
        assert_eq!(f.host[0], 2);
    }

    #[test]
    fn finalize_zeroes_the_dynamic_count_but_not_the_structured_one() {
        let mut f = Fixture::new(8);
        f.with(|s, t| s.acquire(0, Hold::Structured, t));
        for _ in 0..3 {
            f.with(|s, t| s.acquire(0, Hold::Dynamic, t));
        }
        assert!(!f.with(|s, _| s.release(0, Hold::Dynamic, true)));
        let copy = f.state.devices[0].as_ref().expect("held by the construct");
        assert_eq!((copy.structured, copy.dynamic), (1, 0));
        // An `exit data` with nothing left to release changes nothing.
        assert!(!f.with(|s, _| s.release(0, Hold::Dynamic, false)));
        assert!(f.state.is_present(0));
        assert!(f.with(|s, _| s.release(0, Hold::Structured, false)));
        assert!(!f.state.is_present(0));
    }

    #[test]
    fn a_copy_no_region_holds_is_a_cache_not_present() {
        let mut f = Fixture::new(8);
        f.with(|s, t| s.make_device_valid(0, 0, 8, t));
        assert!(f.state.has_device_copy(0));
        assert!(!f.state.is_present(0));
        assert!(!f.state.is_held());
    }

    #[test]
    fn mapped_memory_is_the_programs_and_is_saved_at_unmap() {
        let mut f = Fixture::new(8);
        let lent = f.devices[0].allocate(32);
        f.with(|s, t| s.map(0, lent, 16, t));
        assert!(f.state.is_present(0));
        // Nothing valid on the mapped memory: the first use sends the host's bytes.
        f.with(|s, t| s.make_device_valid(0, 0, 8, t));
        let mut raw = vec![0u8; 32];
        f.devices[0].copy_to_host(lent, 0, &mut raw);
        assert_eq!(&raw[16..24], &[0, 1, 2, 3, 4, 5, 6, 7]);
        f.devices[0].copy_to_device(lent, 17, &[42]);
        f.state.device_wrote(0, 1, 2);
        // Releases never free a mapped copy.
        f.with(|s, t| s.acquire(0, Hold::Structured, t));
        assert!(!f.with(|s, _| s.release(0, Hold::Structured, false)));
        f.with(|s, t| s.unmap(0, t));
        assert!(!f.state.has_device_copy(0));
        assert_eq!(f.host[1], 42);
        // The lent memory is still allocated (the program frees it with acc_free).
        f.devices[0].copy_to_host(lent, 0, &mut raw);
        assert_eq!(raw[17], 42);
    }
}
