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

/// A byte range a launch touches, and the share of its bytes the launch's references reach:
/// 1 where they fill the range, less where the range is the hull of a few slices of a large
/// array (`access::Reached`: NPB BT's `x_solve_l1555` reaches 794 KB of a 164 MB hull).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Touched {
    pub lo: u64,
    pub hi: u64,
    pub share: f64,
}

impl Touched {
    /// Every byte of `lo..hi`.
    pub fn whole(lo: u64, hi: u64) -> Touched {
        Touched { lo, hi, share: 1.0 }
    }

    /// The bytes of the range the references reach.
    pub fn bytes(&self) -> f64 {
        self.hi.saturating_sub(self.lo) as f64 * self.share
    }
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
///
/// A range that its launch reaches only a share of (a hull of slices) counts that share of
/// its bytes as touched, and a later launch finds in it the smaller of the two shares of the
/// bytes they both span: a launch that touches slices of an array is taken to touch those the
/// launch before touched where it touches as many (a sweep along one axis), all of them where
/// the one before filled the array. Over bytes an earlier launch touched, a range keeps the
/// larger share ([`L2History::mark`]). One range per param keeps the look up at the hulls'
/// cost; the slices as ranges of their own cost 15-27 us a launch (bench/NOTES.md run 38).
#[derive(Debug, Default)]
pub struct L2History {
    /// Start -> the range's end, latest launch and share.
    latest: BTreeMap<u64, Entry>,
    /// Bytes (shares counted) whose latest launch is `first_kept + i`, for the kept launches,
    /// oldest first.
    latest_bytes: VecDeque<f64>,
    first_kept: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    end: u64,
    launch: u64,
    share: f64,
}

impl L2History {
    /// A launch reading `reads` and writing `writes` on a device whose L2 cache holds
    /// `l2_bytes`: its resident bytes, from the launches before it; then it is remembered as
    /// the newest.
    pub fn touch(&mut self, reads: &[Touched], writes: &[Touched], l2_bytes: u64) -> ResidentBytes {
        let (reads, writes) = (union_of(reads), union_of(writes));
        let capacities = RESIDENT_SHARES.map(|s| s * l2_bytes as f64);
        // Bytes touched since each kept launch: suffix sums, newest last.
        let mut since = vec![0.0; self.latest_bytes.len()];
        let mut sum = 0.0;
        for (i, &b) in self.latest_bytes.iter().enumerate().rev() {
            sum += b;
            since[i] = sum;
        }
        let mut resident = [0.0; 4];
        for range in reads.iter().chain(&writes) {
            self.each_overlapping(range.lo, range.hi, |start, entry| {
                let Some(&between) = self.kept_index(entry.launch).and_then(|i| since.get(i)) else { return };
                let bytes = (entry.end.min(range.hi) - start.max(range.lo)) as f64 * range.share.min(entry.share);
                for (r, &c) in resident.iter_mut().zip(&capacities) {
                    if between <= c {
                        *r += bytes;
                    }
                }
            });
        }
        let this = self.first_kept + self.latest_bytes.len() as u64;
        self.latest_bytes.push_back(0.0);
        let all: Vec<Touched> = reads.into_iter().chain(writes).collect();
        for range in union_of(&all) {
            self.mark(range, this);
        }
        if self.latest_bytes.len() > KEPT_LAUNCHES {
            self.latest_bytes.pop_front();
            self.first_kept += 1;
            // The ranges of forgotten launches are dropped now and then, not at every launch.
            if self.first_kept % KEPT_LAUNCHES as u64 == 0 {
                let first_kept = self.first_kept;
                self.latest.retain(|_, entry| entry.launch >= first_kept);
            }
        }
        resident.map(|r| r.round() as u64)
    }

    /// Where launch `launch` is among the kept ones (`latest_bytes`), if it is kept.
    fn kept_index(&self, launch: u64) -> Option<usize> {
        launch.checked_sub(self.first_kept).map(|i| i as usize).filter(|&i| i < self.latest_bytes.len())
    }

    /// Counts `bytes` more (or fewer) as last touched by `launch`, if it is kept.
    fn add_latest_bytes(&mut self, launch: u64, bytes: f64) {
        if let Some(i) = self.kept_index(launch) {
            let b = &mut self.latest_bytes[i];
            *b = (*b + bytes).max(0.0);
        }
    }

    /// Calls `f(start, entry)` for every recorded range that overlaps `lo..hi`, last first
    /// (one descent of the tree: the ranges are disjoint, so those that start before `hi` and
    /// end after `lo` are the last ones that start before `hi`).
    fn each_overlapping(&self, lo: u64, hi: u64, mut f: impl FnMut(u64, Entry)) {
        for (&start, &entry) in self.latest.range(..hi).rev() {
            if entry.end <= lo {
                break;
            }
            f(start, entry);
        }
    }

    /// Records launch `launch` as the latest to touch `range`. Where it spans bytes an earlier
    /// launch touched, the range keeps the larger of the two shares: a launch over a few slices
    /// of an array that a launch before filled leaves the array as present as it found it,
    /// though only the slices count as its bytes.
    fn mark(&mut self, range: Touched, launch: u64) {
        let Touched { lo, hi, share } = range;
        // A time step touches the ranges it touched the step before: the range is there, and
        // only its launch changes.
        if let Some(entry) = self.latest.get_mut(&lo).filter(|entry| entry.end == hi) {
            let earlier = std::mem::replace(entry, Entry { end: hi, launch, share: share.max(entry.share) });
            self.add_latest_bytes(earlier.launch, -((hi - lo) as f64 * share.min(earlier.share)));
        } else {
            let mut overlapping: Vec<(u64, Entry)> = Vec::new();
            self.each_overlapping(lo, hi, |start, entry| overlapping.push((start, entry)));
            // The marked range's pieces, in order: over an earlier range the larger share.
            let mut pieces: Vec<(u64, u64, f64)> = Vec::with_capacity(2 * overlapping.len() + 1);
            let mut at = lo;
            for &(start, earlier) in overlapping.iter().rev() {
                self.latest.remove(&start);
                let (from, to) = (start.max(lo), earlier.end.min(hi));
                self.add_latest_bytes(earlier.launch, -((to - from) as f64 * share.min(earlier.share)));
                if start < lo {
                    self.latest.insert(start, Entry { end: lo, ..earlier });
                }
                if earlier.end > hi {
                    self.latest.insert(hi, earlier);
                }
                if at < from {
                    pieces.push((at, from, share));
                }
                pieces.push((from, to, share.max(earlier.share)));
                at = to;
            }
            if at < hi {
                pieces.push((at, hi, share));
            }
            let mut joined: Vec<(u64, u64, f64)> = Vec::with_capacity(pieces.len());
            for piece in pieces {
                match joined.last_mut() {
                    Some(last) if last.1 == piece.0 && last.2 == piece.2 => last.1 = piece.1,
                    _ => joined.push(piece),
                }
            }
            for (from, to, share) in joined {
                self.latest.insert(from, Entry { end: to, launch, share });
            }
        }
        self.add_latest_bytes(launch, range.bytes());
    }
}

/// The bytes `ranges` span, as disjoint ranges in order, each piece with the largest share of
/// the ranges over it (one launch's ranges over the same bytes are taken to reach the same
/// ones: a param read and written in place); touching pieces of one share are joined.
fn union_of(ranges: &[Touched]) -> Vec<Touched> {
    let mut ranges: Vec<Touched> = ranges.iter().copied().filter(|r| r.lo < r.hi && r.share > 0.0).collect();
    ranges.sort_unstable_by_key(|r| (r.lo, r.hi));
    let mut out: Vec<Touched> = Vec::with_capacity(ranges.len());
    for &range in &ranges {
        // Sorted by start, a range can only overlap the last piece so far.
        match out.last_mut() {
            Some(last) if range.lo <= last.hi && range.share == last.share => last.hi = last.hi.max(range.hi),
            Some(last) if range.lo < last.hi => return split_by_largest_share(&ranges),
            _ => out.push(range),
        }
    }
    out
}

/// [`union_of`] where ranges of different shares overlap: the ranges cut at every end, each
/// piece with the largest share over it.
fn split_by_largest_share(ranges: &[Touched]) -> Vec<Touched> {
    let mut cuts: Vec<u64> = ranges.iter().flat_map(|r| [r.lo, r.hi]).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<Touched> = Vec::new();
    for w in cuts.windows(2) {
        let share = ranges.iter().filter(|r| r.lo <= w[0] && w[1] <= r.hi).map(|r| r.share).fold(0.0, f64::max);
        if share == 0.0 {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.hi == w[0] && last.share == share => last.hi = w[1],
            _ => out.push(Touched { lo: w[0], hi: w[1], share }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Every byte of each range.
    fn whole(ranges: &[(u64, u64)]) -> Vec<Touched> {
        ranges.iter().map(|&(lo, hi)| Touched::whole(lo, hi)).collect()
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

    const MB: u64 = 1 << 20;

    #[test]
    fn what_the_kernel_before_wrote_is_found_while_the_cache_holds_what_came_between() {
        let mut device = L2History::default();
        let l2 = 40 * MB;
        // Nothing ran before: nothing is resident.
        assert_eq!(device.touch(&whole(&[(0, 4 * MB)]), &whole(&[(100 * MB, 104 * MB)]), l2), [0; 4]);
        // Reads what the first wrote and writes a fresh array: the 4 MB read is found at every
        // share (the first launch's 8 MB fit in a quarter of 40 MB).
        assert_eq!(device.touch(&whole(&[(100 * MB, 104 * MB)]), &whole(&[(200 * MB, 204 * MB)]), l2), [4 * MB; 4]);
        // A launch over 16 MB elsewhere, then one reading the first array again: 16 + 8 MB
        // came between (the second launch's ranges overlap the first's), more than a quarter
        // and less than three quarters hold; the first launch's ranges are reached only at
        // three quarters.
        device.touch(&whole(&[(300 * MB, 316 * MB)]), &[], l2);
        assert_eq!(device.touch(&whole(&[(0, 2 * MB)]), &[], l2), [0, 0, 2 * MB, 2 * MB]);
    }

    #[test]
    fn a_range_both_read_and_written_counts_twice_as_the_bytes_moved_do() {
        let mut device = L2History::default();
        device.touch(&whole(&[(0, MB)]), &[], 8 * MB);
        assert_eq!(device.touch(&whole(&[(0, MB)]), &whole(&[(0, MB)]), 8 * MB), [2 * MB; 4]);
        // Overlapping ranges of one launch count once each way.
        assert_eq!(device.touch(&whole(&[(0, MB), (MB / 2, MB)]), &[], 8 * MB), [MB; 4]);
    }

    /// A hull of 100 MB whose references reach 1% of it (1 MB: slices of a large array).
    fn slices() -> Touched {
        Touched { lo: 100 * MB, hi: 200 * MB, share: 0.01 }
    }

    #[test]
    fn a_hull_of_slices_counts_as_the_bytes_its_references_reach() {
        let mut device = L2History::default();
        device.touch(&[], &whole(&[(0, 4 * MB)]), 8 * MB);
        device.touch(&[slices()], &[], 8 * MB);
        // 4 MB and the slices' 1 MB came since the first launch: found at three quarters of
        // 8 MB and at the whole, not at half.
        assert_eq!(device.touch(&whole(&[(0, 4 * MB)]), &[], 8 * MB), [0, 0, 4 * MB, 4 * MB]);
        // The same launches with the slices' hull counted whole: 100 MB came between.
        let mut hulls = L2History::default();
        hulls.touch(&[], &whole(&[(0, 4 * MB)]), 8 * MB);
        hulls.touch(&[Touched { share: 1.0, ..slices() }], &[], 8 * MB);
        assert_eq!(hulls.touch(&whole(&[(0, 4 * MB)]), &[], 8 * MB), [0; 4]);
    }

    #[test]
    fn a_launch_over_slices_finds_the_smaller_share_of_what_both_span() {
        let mut device = L2History::default();
        device.touch(&[slices()], &[], 8 * MB);
        // The sweep's next launch over the same slices finds them all.
        assert_eq!(device.touch(&[slices()], &[], 8 * MB), [slices().bytes().round() as u64; 4]);
        // A launch reading 1 MB of the hull whole finds the slices' share of it.
        let share = (MB as f64 * 0.01).round() as u64;
        assert_eq!(device.touch(&whole(&[(100 * MB, 101 * MB)]), &[], 8 * MB), [share; 4]);
    }

    #[test]
    fn a_launch_over_slices_leaves_an_array_as_present_as_it_found_it() {
        let mut device = L2History::default();
        let l2 = 40 * MB;
        // A kernel fills 8 MB, the next touches a tenth of them (two rows of each plane).
        device.touch(&[], &whole(&[(0, 8 * MB)]), l2);
        device.touch(&[Touched { lo: 0, hi: 8 * MB, share: 0.1 }], &[], l2);
        // One reading the whole 8 MB finds all of it, as it would after the first alone.
        assert_eq!(device.touch(&whole(&[(0, 8 * MB)]), &[], l2), [8 * MB; 4]);
    }

    #[test]
    fn ranges_over_the_same_bytes_keep_the_largest_share() {
        let t = |lo, hi, share| Touched { lo, hi, share };
        assert_eq!(union_of(&[t(0, 100, 0.5), t(50, 150, 1.0)]), vec![t(0, 50, 0.5), t(50, 150, 1.0)]);
        assert_eq!(union_of(&[t(0, 100, 1.0), t(20, 30, 0.5)]), vec![t(0, 100, 1.0)]);
        assert_eq!(union_of(&[t(0, 10, 1.0), t(10, 20, 1.0), t(30, 40, 0.5), t(20, 25, 0.0)]), vec![t(0, 20, 1.0), t(30, 40, 0.5)]);
    }

    #[test]
    fn a_device_forgets_its_oldest_launches() {
        let mut device = L2History::default();
        device.touch(&whole(&[(0, 64)]), &[], 1 << 40);
        for n in 1..=KEPT_LAUNCHES as u64 {
            device.touch(&whole(&[(n * 1000, n * 1000 + 64)]), &[], 1 << 40);
        }
        assert_eq!(device.touch(&whole(&[(0, 64)]), &[], 1 << 40), [0; 4]);
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
        /// The union covers the bytes some range covers, each with the largest share over it,
        /// in disjoint pieces in order.
        #[test]
        fn the_union_of_ranges_keeps_each_bytes_largest_share(
            ranges in proptest::collection::vec((0u64..200, 1u64..60, 0usize..3), 0..8),
        ) {
            let shares = [0.25, 0.5, 1.0];
            let ranges: Vec<Touched> = ranges.iter().map(|&(lo, len, s)| Touched { lo, hi: lo + len, share: shares[s] }).collect();
            let union = union_of(&ranges);
            prop_assert!(union.windows(2).all(|w| w[0].hi <= w[1].lo));
            for x in 0..260u64 {
                let want = ranges.iter().filter(|r| r.lo <= x && x < r.hi).map(|r| r.share).fold(0.0, f64::max);
                let got = union.iter().find(|r| r.lo <= x && x < r.hi).map_or(0.0, |r| r.share);
                prop_assert_eq!(got, want, "byte {}", x);
            }
        }

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
                prop_assert_eq!(device.touch(&whole(reads), &whole(writes), l2_bytes), expected);
                kept.push(merged(reads.iter().chain(writes).copied().collect()));
            }
        }
    }
}
