//! Which of a launch's bytes the launches before it on the same device left in the L2 cache.
//!
//! A time step's kernels pass the same arrays from one to the next: what one writes, the next
//! reads, and when the arrays touched in between fit in the L2 cache the second finds them
//! there and device memory moves nothing for them (NPB SP's `compute_rhs` kernels, which
//! read `u` and the arrays the kernel before wrote, moved 41-53 MB per launch at 6 TB/s on an
//! H100, twice device memory's rate: bench/NOTES.md run 29). A kernel whose arrays were last
//! touched before more than the cache holds went by finds nothing.
//!
//! Each device keeps the byte ranges of its recent launches (host addresses of the tracked
//! objects, one name per byte on every device). A launch's resident bytes are those of its
//! ranges inside the distinct bytes its latest predecessors touched, taken back as far as
//! those fit in a share of the L2 cache: [`RESIDENT_SHARES`], so that the share the cache
//! keeps in practice is a machine figure (`Machine::l2_resident_share`) and a stored run can be
//! replayed at another.

use std::collections::{BTreeMap, VecDeque};

/// The shares of the L2 cache at which a launch's resident bytes are taken.
pub const RESIDENT_SHARES: [f64; 4] = [0.25, 0.5, 0.75, 1.0];

/// Launches a device remembers: enough to fill the cache with a time step's kernels, few
/// enough that a launch's look back stays short.
pub const KEPT_LAUNCHES: usize = 64;

/// A launch's bytes found in the cache, read and written ranges counted apart (as the bytes a
/// launch moves are), when the cache keeps each of [`RESIDENT_SHARES`] of itself.
pub type ResidentBytes = [u64; 4];

/// The bytes of `curve` ([`ResidentBytes`]) when the cache keeps `share` of itself, linear
/// between the shares taken (none below the first share's fraction of it).
pub fn resident_at(curve: &ResidentBytes, share: f64) -> f64 {
    let share = share.clamp(0.0, 1.0);
    let mut below = (0.0, 0.0);
    for (&s, &bytes) in RESIDENT_SHARES.iter().zip(curve) {
        let bytes = bytes as f64;
        if share <= s {
            let (s0, b0) = below;
            return b0 + (bytes - b0) * (share - s0) / (s - s0);
        }
        below = (s, bytes);
    }
    below.1
}

/// One device's recent launches: for every byte they touched, the latest launch that touched
/// it (disjoint ranges keyed by their start), and how many bytes each of the
/// [`KEPT_LAUNCHES`] latest launches is the latest toucher of. The bytes touched since launch
/// `t` (the distinct bytes of launches `t` to the newest) are then the bytes whose latest
/// launch is `t` or later: a launch finds a byte at a share of the cache when those, from the
/// byte's latest launch on, fit in that share. This is what joining the predecessors' ranges
/// one by one, newest first, finds (the proptest below checks it against that), in time
/// linear in the launch's ranges rather than in all its predecessors' (a launch of 40 ranges
/// 64 launches deep cost 34 us of host time joined, 4-6 us so: bench/NOTES.md run 37).
#[derive(Debug, Default)]
pub struct L2History {
    /// Start -> (end, latest launch): disjoint byte ranges, each with the number of the latest
    /// launch that touched it.
    latest: BTreeMap<u64, (u64, u64)>,
    /// Bytes whose latest launch is `first_kept + i`, for the kept launches, oldest first.
    latest_bytes: VecDeque<u64>,
    first_kept: u64,
}

impl L2History {
    /// A launch reading `reads` and writing `writes` (half-open byte ranges) on a device whose
    /// L2 cache holds `l2_bytes`: its resident bytes, from the launches before it; then it is
    /// remembered as the newest.
    pub fn touch(&mut self, reads: &[(u64, u64)], writes: &[(u64, u64)], l2_bytes: u64) -> ResidentBytes {
        let (reads, writes) = (merged(reads.to_vec()), merged(writes.to_vec()));
        let capacities = RESIDENT_SHARES.map(|s| (s * l2_bytes as f64) as u64);
        // Bytes touched since each kept launch: suffix sums, newest last.
        let mut since = vec![0u64; self.latest_bytes.len()];
        let mut sum = 0;
        for (i, &b) in self.latest_bytes.iter().enumerate().rev() {
            sum += b;
            since[i] = sum;
        }
        let mut resident = [0; 4];
        for &(lo, hi) in reads.iter().chain(&writes) {
            self.each_overlapping(lo, hi, |start, end, launch| {
                let Some(&between) = self.kept_index(launch).and_then(|i| since.get(i)) else { return };
                let bytes = end.min(hi) - start.max(lo);
                for (r, &c) in resident.iter_mut().zip(&capacities) {
                    if between <= c {
                        *r += bytes;
                    }
                }
            });
        }
        let this = self.first_kept + self.latest_bytes.len() as u64;
        self.latest_bytes.push_back(0);
        for (lo, hi) in merged(reads.into_iter().chain(writes).collect()) {
            self.mark(lo, hi, this);
        }
        if self.latest_bytes.len() > KEPT_LAUNCHES {
            self.latest_bytes.pop_front();
            self.first_kept += 1;
            // The ranges of forgotten launches are dropped now and then, not at every launch.
            if self.first_kept % KEPT_LAUNCHES as u64 == 0 {
                let first_kept = self.first_kept;
                self.latest.retain(|_, &mut (_, launch)| launch >= first_kept);
            }
        }
        resident
    }

    /// Where launch `launch` is among the kept ones (`latest_bytes`), if it is kept.
    fn kept_index(&self, launch: u64) -> Option<usize> {
        launch.checked_sub(self.first_kept).map(|i| i as usize).filter(|&i| i < self.latest_bytes.len())
    }

    /// Counts `bytes` more (or fewer) as last touched by `launch`, if it is kept.
    fn add_latest_bytes(&mut self, launch: u64, bytes: u64, more: bool) {
        if let Some(i) = self.kept_index(launch) {
            let b = &mut self.latest_bytes[i];
            *b = if more { *b + bytes } else { *b - bytes };
        }
    }

    /// Calls `f(start, end, launch)` for every recorded range that overlaps `lo..hi`, last
    /// first (one descent of the tree: the ranges are disjoint, so those that start before
    /// `hi` and end after `lo` are the last ones that start before `hi`).
    fn each_overlapping(&self, lo: u64, hi: u64, mut f: impl FnMut(u64, u64, u64)) {
        for (&start, &(end, launch)) in self.latest.range(..hi).rev() {
            if end <= lo {
                break;
            }
            f(start, end, launch);
        }
    }

    /// Records launch `launch` as the latest to touch `lo..hi`.
    fn mark(&mut self, lo: u64, hi: u64, launch: u64) {
        // A time step touches the ranges it touched the step before: the range is there, and
        // only its launch changes.
        let same_range = self.latest.get_mut(&lo).filter(|(end, _)| *end == hi).map(|(_, earlier)| std::mem::replace(earlier, launch));
        if let Some(earlier) = same_range {
            self.add_latest_bytes(earlier, hi - lo, false);
        } else {
            let mut overlapping: Vec<(u64, u64, u64)> = Vec::new();
            self.each_overlapping(lo, hi, |start, end, earlier| overlapping.push((start, end, earlier)));
            for (start, end, earlier) in overlapping {
                self.latest.remove(&start);
                self.add_latest_bytes(earlier, end.min(hi) - start.max(lo), false);
                if start < lo {
                    self.latest.insert(start, (lo, earlier));
                }
                if end > hi {
                    self.latest.insert(hi, (end, earlier));
                }
            }
            self.latest.insert(lo, (hi, launch));
        }
        self.add_latest_bytes(launch, hi - lo, true);
    }
}

/// `ranges` sorted, the empty ones dropped and the overlapping or touching ones joined.
fn merged(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.retain(|(lo, hi)| lo < hi);
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(ranges: &[(u64, u64)]) -> u64 {
        ranges.iter().map(|(lo, hi)| hi - lo).sum()
    }

    /// Bytes two merged lists of ranges share.
    fn overlap(a: &[(u64, u64)], b: &[(u64, u64)]) -> u64 {
        let (mut i, mut j, mut bytes) = (0, 0, 0);
        while i < a.len() && j < b.len() {
            let lo = a[i].0.max(b[j].0);
            let hi = a[i].1.min(b[j].1);
            bytes += hi.saturating_sub(lo);
            if a[i].1 < b[j].1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        bytes
    }

    const MB: u64 = 1 << 20;

    #[test]
    fn what_the_kernel_before_wrote_is_found_while_the_cache_holds_what_came_between() {
        let mut device = L2History::default();
        let l2 = 40 * MB;
        // Nothing ran before: nothing is resident.
        assert_eq!(device.touch(&[(0, 4 * MB)], &[(100 * MB, 104 * MB)], l2), [0; 4]);
        // Reads what the first wrote and writes a fresh array: the 4 MB read is found at every
        // share (the first launch's 8 MB fit in a quarter of 40 MB).
        assert_eq!(device.touch(&[(100 * MB, 104 * MB)], &[(200 * MB, 204 * MB)], l2), [4 * MB; 4]);
        // A launch over 16 MB elsewhere, then one reading the first array again: 16 + 8 MB
        // came between (the second launch's ranges overlap the first's), more than a quarter
        // and less than three quarters hold; the first launch's ranges are reached only at
        // three quarters.
        device.touch(&[(300 * MB, 316 * MB)], &[], l2);
        assert_eq!(device.touch(&[(0, 2 * MB)], &[], l2), [0, 0, 2 * MB, 2 * MB]);
    }

    #[test]
    fn a_range_both_read_and_written_counts_twice_as_the_bytes_moved_do() {
        let mut device = L2History::default();
        device.touch(&[(0, MB)], &[], 8 * MB);
        assert_eq!(device.touch(&[(0, MB)], &[(0, MB)], 8 * MB), [2 * MB; 4]);
        // Overlapping ranges of one launch count once each way.
        assert_eq!(device.touch(&[(0, MB), (MB / 2, MB)], &[], 8 * MB), [MB; 4]);
    }

    #[test]
    fn a_device_forgets_its_oldest_launches() {
        let mut device = L2History::default();
        device.touch(&[(0, 64)], &[], 1 << 40);
        for n in 1..=KEPT_LAUNCHES as u64 {
            device.touch(&[(n * 1000, n * 1000 + 64)], &[], 1 << 40);
        }
        assert_eq!(device.touch(&[(0, 64)], &[], 1 << 40), [0; 4]);
    }

    #[test]
    fn the_resident_bytes_between_the_shares_taken_are_interpolated() {
        let curve = [0, 100, 200, 400];
        assert_eq!(resident_at(&curve, 0.5), 100.0);
        assert_eq!(resident_at(&curve, 0.625), 150.0);
        assert_eq!(resident_at(&curve, 1.0), 400.0);
        assert_eq!(resident_at(&curve, 2.0), 400.0);
        assert_eq!(resident_at(&[80, 80, 80, 80], 0.125), 40.0);
    }

    /// The look back as first written: the kept predecessors' ranges joined one by one,
    /// newest first, until the largest share is full.
    fn touch_looking_all_the_way(launches: &[Vec<(u64, u64)>], reads: &[(u64, u64)], writes: &[(u64, u64)], l2_bytes: u64) -> ResidentBytes {
        let launches = &launches[launches.len().saturating_sub(KEPT_LAUNCHES)..];
        let (reads, writes) = (merged(reads.to_vec()), merged(writes.to_vec()));
        let capacities = RESIDENT_SHARES.map(|s| (s * l2_bytes as f64) as u64);
        let mut resident = [0; 4];
        let mut seen: Vec<(u64, u64)> = Vec::new();
        for earlier in launches.iter().rev() {
            let union = merged(seen.iter().chain(earlier).copied().collect());
            let size = total(&union);
            if size > capacities[3] {
                break;
            }
            seen = union;
            let found = overlap(&reads, &seen) + overlap(&writes, &seen);
            for (r, &c) in resident.iter_mut().zip(&capacities) {
                if size <= c {
                    *r = found;
                }
            }
        }
        resident
    }

    fn ranges() -> impl proptest::strategy::Strategy<Value = Vec<(u64, u64)>> {
        proptest::collection::vec((0u64..4000, 1u64..600).prop_map(|(lo, len)| (lo, lo + len)), 0..6)
    }

    use proptest::prelude::*;

    proptest! {
        /// The latest launch per byte finds what joining the predecessors finds, also past
        /// the launches a device keeps.
        #[test]
        fn the_latest_launch_per_byte_finds_what_joining_the_predecessors_finds(
            history in proptest::collection::vec((ranges(), ranges()), 1..150),
            l2_bytes in 500u64..20_000,
        ) {
            let mut device = L2History::default();
            let mut kept: Vec<Vec<(u64, u64)>> = Vec::new();
            for (reads, writes) in &history {
                let expected = touch_looking_all_the_way(&kept, reads, writes, l2_bytes);
                prop_assert_eq!(device.touch(reads, writes, l2_bytes), expected);
                kept.push(merged(reads.iter().chain(writes).copied().collect()));
            }
        }
    }
}
