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

use std::collections::VecDeque;

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

/// One device's recent launches, newest last: each one's ranges, merged.
#[derive(Debug, Default)]
pub struct L2History {
    launches: VecDeque<Vec<(u64, u64)>>,
}

impl L2History {
    /// A launch reading `reads` and writing `writes` (half-open byte ranges) on a device whose
    /// L2 cache holds `l2_bytes`: its resident bytes, from the launches before it; then it is
    /// remembered as the newest.
    pub fn touch(&mut self, reads: &[(u64, u64)], writes: &[(u64, u64)], l2_bytes: u64) -> ResidentBytes {
        let (reads, writes) = (merged(reads.to_vec()), merged(writes.to_vec()));
        let capacities = RESIDENT_SHARES.map(|s| (s * l2_bytes as f64) as u64);
        let all = total(&reads) + total(&writes);
        let mut resident = [0; 4];
        let (mut seen, mut next) = (Vec::<(u64, u64)>::new(), Vec::<(u64, u64)>::new());
        for earlier in self.launches.iter().rev() {
            union_into(&seen, earlier, &mut next);
            let size = total(&next);
            if size > capacities[capacities.len() - 1] {
                break;
            }
            std::mem::swap(&mut seen, &mut next);
            let found = overlap(&reads, &seen) + overlap(&writes, &seen);
            for (r, &c) in resident.iter_mut().zip(&capacities) {
                if size <= c {
                    *r = found;
                }
            }
            // Every byte found: looking further back adds bytes between and finds no more, so
            // each larger share keeps what it has (bench/NOTES.md run 34: the look back was 13 us
            // of host time per launch of NPB LU on the simulator).
            if found == all {
                break;
            }
        }
        self.launches.push_back(merged(reads.into_iter().chain(writes).collect()));
        if self.launches.len() > KEPT_LAUNCHES {
            self.launches.pop_front();
        }
        resident
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

/// Two merged lists of ranges as one, merged, in one pass (the look back of every launch joins
/// its predecessors' lists one by one), into `out` (cleared first; its allocation is reused).
fn union_into(a: &[(u64, u64)], b: &[(u64, u64)], out: &mut Vec<(u64, u64)>) {
    out.clear();
    out.reserve(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = if j == b.len() || (i < a.len() && a[i].0 <= b[j].0) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        match out.last_mut() {
            Some(last) if next.0 <= last.1 => last.1 = last.1.max(next.1),
            _ => out.push(next),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn two_merged_lists_join_as_merging_them_together_would() {
        let a = merged(vec![(0, 10), (20, 30), (50, 60)]);
        let b = merged(vec![(5, 22), (30, 40), (70, 80)]);
        let union = |x: &[(u64, u64)], y: &[(u64, u64)]| {
            let mut out = vec![(7, 9)];
            union_into(x, y, &mut out);
            out
        };
        assert_eq!(union(&a, &b), merged(a.iter().chain(&b).copied().collect()));
        assert_eq!(union(&a, &b), vec![(0, 40), (50, 60), (70, 80)]);
        assert_eq!(union(&[], &b), b);
        assert_eq!(union(&a, &[]), a);
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

    /// The look back as it was before it stopped at the first predecessor that held every
    /// byte: every predecessor joined until the largest share is full.
    fn touch_looking_all_the_way(launches: &[Vec<(u64, u64)>], reads: &[(u64, u64)], writes: &[(u64, u64)], l2_bytes: u64) -> ResidentBytes {
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
        /// Stopping the look back once every byte is found changes no resident bytes.
        #[test]
        fn the_look_back_stops_without_changing_what_it_finds(
            history in proptest::collection::vec((ranges(), ranges()), 1..20),
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
