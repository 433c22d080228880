//! The round trips to L2 or device memory a sampled thread waits for in its loads
//! (`DeviceCounters::load_rounds`), for the performance model's latency term: the far loads of
//! each running loop (and of the kernel's body, a loop of one iteration), per warp, grouped as
//! the CUDA compiler issues them.

/// Iterations of a loop that stores nothing to global or shared memory whose loads the CUDA compiler
/// issues together (it unrolls such a loop and moves the loads ahead of their uses; across
/// the iterations of a loop with a global store it does not). How far nvcc overlaps them
/// varies: PolyBench's column sums keep about 14 loads in flight, the staged `atax` tile loop
/// one (bench/NOTES.md run 35).
pub const OVERLAPPED_ITERATIONS: u64 = 4;

/// A running loop's far warp loads, per warp of the block, until it ends: then each warp
/// waits, per iteration, once per two far loads or once per run of far loads between its
/// global stores, whichever is more, or, where the loop's iterations overlap, once per group
/// of [`OVERLAPPED_ITERATIONS`] iterations with a far load at most
/// (`DeviceCounters::load_rounds`). The kernel's body is tallied too, as a loop of one
/// iteration that does not overlap.
pub(super) struct RoundTally {
    /// Per warp: far warp loads, their active lanes, and the iterations the warp ran.
    far_accesses: Vec<u64>,
    far_lanes: Vec<u64>,
    iterations: Vec<u64>,
    /// Per warp: far warp loads of the running iteration, and the rounds of the finished ones.
    in_iteration: Vec<u64>,
    rounds: Vec<u64>,
    /// Per warp: runs of far loads of the running iteration, and whether one is running (a
    /// global store of the warp, an inner loop or the iteration's end ends it).
    runs_in_iteration: Vec<u64>,
    in_run: Vec<bool>,
    /// Whether the loop's loads may overlap across iterations: no global or shared store was
    /// counted in it and no loop ran inside it.
    overlaps: bool,
}

/// Far loads of one iteration of a loop whose iterations do not overlap that a warp waits
/// for at once: the compiler issues an iteration's independent loads ahead of their uses,
/// but its stores and the uses between keep them apart. Fitted over the latency-bound
/// kernels of bench/NOTES.md run 35b (NPB FT's butterflies wait for each far load, SP's
/// line solvers for one in four): 2 lowered the 90th percentile from 39 to 35.
///
/// A load after a global store is not moved above it (the compiler cannot tell that they
/// do not alias), so an iteration that alternates loads and stores waits once per run of
/// loads at least: NPB SP's forward sweeps (`x_solve_l451`: 18 such runs an iteration, 12 far
/// loads) took four times the backward ones (`x_solve_l546`: 5 runs, 11 far loads) with the
/// same count of pairs (bench/NOTES.md run 36).
pub const ITERATION_LOADS_A_ROUND: u64 = 2;

impl RoundTally {
    /// A loop's tally, for a block of `warps` warps.
    pub(super) fn new(warps: usize) -> RoundTally {
        RoundTally {
            far_accesses: vec![0; warps],
            far_lanes: vec![0; warps],
            iterations: vec![0; warps],
            in_iteration: vec![0; warps],
            rounds: vec![0; warps],
            runs_in_iteration: vec![0; warps],
            in_run: vec![false; warps],
            overlaps: true,
        }
    }

    /// The kernel body's tally: one iteration, whose loads do not overlap another's.
    pub(super) fn body(warps: usize) -> RoundTally {
        RoundTally { iterations: vec![1; warps], overlaps: false, ..RoundTally::new(warps) }
    }

    /// A store to shared memory: the loop fills a tile, a loop the CUDA compiler does not
    /// unroll (the generated loop steps the tile's coordinates by hand), so each iteration
    /// waits for its load before storing it (NPB BT's staged `z_solve_l1555`, whose fill loop
    /// of ten loads a thread ran one load at a time in its SASS, bench/NOTES.md run 36).
    pub(super) fn stored_to_shared(&mut self) {
        self.overlaps = false;
    }

    /// A loop inside: the iterations no longer overlap, and the loads after it are a new run.
    pub(super) fn inner_loop(&mut self) {
        self.overlaps = false;
        self.in_run.fill(false);
    }

    /// A store to global memory by the lanes in `mask` (one per lane of the block): the
    /// iterations no longer overlap, and the storing warps' loads after it are a new run.
    pub(super) fn store(&mut self, mask: &[bool]) {
        self.overlaps = false;
        for (w, warp) in mask.chunks(32).enumerate() {
            if warp.iter().any(|&m| m) {
                self.in_run[w] = false;
            }
        }
    }

    /// A far warp load of warp `warp`, with `lanes` active lanes.
    pub(super) fn far_load(&mut self, warp: usize, lanes: u64) {
        self.far_accesses[warp] += 1;
        self.far_lanes[warp] += lanes;
        self.in_iteration[warp] += 1;
        if !std::mem::replace(&mut self.in_run[warp], true) {
            self.runs_in_iteration[warp] += 1;
        }
    }

    /// An iteration begins for the warps with a lane in `active` (one per lane of the block).
    pub(super) fn begin_iteration(&mut self, active: &[bool]) {
        self.end_iteration();
        for (w, warp) in active.chunks(32).enumerate() {
            self.iterations[w] += warp.iter().any(|&a| a) as u64;
        }
    }

    /// Ends the running iteration of each warp.
    fn end_iteration(&mut self) {
        for w in 0..self.in_iteration.len() {
            let pairs = std::mem::take(&mut self.in_iteration[w]).div_ceil(ITERATION_LOADS_A_ROUND);
            self.rounds[w] += pairs.max(std::mem::take(&mut self.runs_in_iteration[w]));
        }
        self.in_run.fill(false);
    }

    /// The round trips (per active lane) the tally's warps waited for, once it has ended.
    pub(super) fn rounds(&mut self) -> u64 {
        self.end_iteration();
        let mut rounds = 0;
        for w in 0..self.far_accesses.len() {
            let (far, lanes) = (self.far_accesses[w], self.far_lanes[w]);
            if far == 0 {
                continue;
            }
            let warp_rounds = if self.overlaps { self.iterations[w].div_ceil(OVERLAPPED_ITERATIONS).max(1) } else { self.rounds[w] };
            // The lanes of a round: those of the warp's far loads, on average.
            rounds += (lanes as u128 * warp_rounds.min(far) as u128 / far as u128) as u64;
        }
        rounds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One warp's loop of `iterations`, each running `body` on the tally.
    fn loop_rounds(iterations: usize, body: impl Fn(&mut RoundTally)) -> u64 {
        let mut tally = RoundTally::new(1);
        for _ in 0..iterations {
            tally.begin_iteration(&[true; 32]);
            body(&mut tally);
        }
        tally.rounds()
    }

    #[test]
    fn a_loop_that_stores_nothing_waits_once_per_group_of_iterations() {
        assert_eq!(loop_rounds(8, |t| t.far_load(0, 32)), 2 * 32);
    }

    #[test]
    fn an_iteration_waits_per_pair_of_far_loads_or_per_run_between_stores() {
        let all = [true; 32];
        // Four loads, then a store: two pairs.
        let pairs = loop_rounds(3, |t| {
            (0..4).for_each(|_| t.far_load(0, 32));
            t.store(&all);
        });
        assert_eq!(pairs, 3 * 2 * 32);
        // Load, store, three times: three runs, more than the two pairs.
        let runs = loop_rounds(3, |t| {
            for _ in 0..3 {
                t.far_load(0, 32);
                t.store(&all);
            }
        });
        assert_eq!(runs, 3 * 3 * 32);
        // A store of the other warp of the block does not end this warp's run.
        let mut tally = RoundTally::new(2);
        tally.begin_iteration(&[true; 64]);
        tally.far_load(0, 32);
        let mut other = [false; 64];
        other[40] = true;
        tally.store(&other);
        tally.far_load(0, 32);
        assert_eq!(tally.rounds(), 32);
    }

    #[test]
    fn a_tile_fill_waits_for_each_load() {
        // A load stored to shared memory each iteration: no overlap across iterations.
        let fill = loop_rounds(8, |t| {
            t.far_load(0, 32);
            t.stored_to_shared();
        });
        assert_eq!(fill, 8 * 32);
    }
}
