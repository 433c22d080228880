//! The time of one launch from what it does and the machine's figures.
//!
//! A launch costs the launch itself plus the longest of what its work keeps busy: device
//! memory (the bytes the access analysis says the launch must move, read and written once:
//! the caches serve the reuse), the caches (32-byte sectors the memory instructions touch),
//! the L2 cache (each request for a line of the sectors a block's reads fetch past its share of
//! the L1 cache or of a sector written, since the L1 cache writes through, and each sector it
//! carries),
//! arithmetic (float, double and math-function operations; reached only with enough resident
//! warps; the bandwidths only with enough blocks to keep the multiprocessors busy), shared memory (passes over the banks: per warp request, the most distinct words one bank gives, over the
//! multiprocessors the grid occupies), and latency: a thread's accesses one after the other,
//! global and shared, wave after wave, which bounds kernels whose grid is too small to hide memory latency
//! behind other warps (a thread per row of a matrix): the round trips to L2 or device memory
//! its loads wait for (the simulator counts them: `DeviceCounters::load_rounds`), each at the
//! calibrated round trip of where the data lies, and its loads the L1 cache serves. Where
//! blocks meet at barriers, part of the shorter of latency and throughput adds to the longer.
//! Device memory is read at a blend of its own and the cache's rate:
//! the bytes the launches before left in the L2 cache come from there ([`super::residency`]),
//! and scattered accesses over more than the L2 cache holds move every sector they touch. The
//! first launch of a kernel also pays for loading its code. The paper's model counted warp accesses against latencies; this one
//! adds what it lacked: launch cost, cache reuse, occupancy, and the multiprocessors a small
//! grid leaves idle.

use super::machine::Machine;
use super::residency::{ResidentBytes, resident_at};
use crate::runtime::stats::DeviceCounters;

/// Warps per multiprocessor that keep its arithmetic pipelines busy.
const SATURATING_COMPUTE_WARPS: f64 = 8.0;

/// Global accesses a thread has in flight at once in the latency bound, for its stores, and
/// for its loads where the machine's figures predate the round trips (calibration 8 and
/// before): the loads of a loop body that do not depend on each other overlap. Fitted to the latency-bound kernels of
/// bench/NOTES.md run 20 (NPB's line solvers and the thread-per-row products of PolyBench and
/// `examples/matmul_vec.c`, H100): 1.5 took the model's median error there from 1.8x too slow
/// to 1.1x, and the loss of choosing variants by the model alone from 58% to 7%.
pub const THREAD_MEMORY_PARALLELISM: f64 = 1.5;

/// What a global store of a thread adds to its accesses one after the other, against a load:
/// a thread does not wait for its stores. Fitted over the one-warp-per-multiprocessor kernels
/// of NPB SP and BT in bench/NOTES.md run 32 (85 kernels, least squares of the relative error:
/// 40 ns a load, 16 a store); replayed over runs 30-32, 0.5 lowered the 90th percentile by 2-4
/// points on three of the five runs (the other two unchanged) and moved the medians by less
/// than 0.5.
pub const STORE_LATENCY_SHARE: f64 = 0.5;

/// The share of the shorter of a kernel's throughput (its longest bandwidth or arithmetic
/// term) and its latency that adds to the longer where its blocks meet at barriers: the warps
/// of a block wait together for the loads of a tile before any computes on it, and the blocks
/// of a wave reach their barriers together, so the phases take turns more than they overlap.
/// Fitted over bench/NOTES.md run 35b (the staged variants of NPB's and the examples' stencils
/// were 35-40% under): 0.5 lowered the 90th percentile from 38 to 35 points.
pub const BARRIER_EXPOSED_SHARE: f64 = 0.5;

/// The share of the L2 cache whose bytes a latency-bound thread's far loads find there: all of
/// it. The device-memory term takes a launch's bytes from the share the cache keeps under a
/// full grid's traffic (`Machine::l2_resident_share`); a grid too small to hide latency moves
/// little, and what the launches before left anywhere in L2 answers at its round trip.
/// Replayed over bench/NOTES.md runs 35b-35d (against that share, 0.5): the 90th percentile
/// 36.4 -> 34.1 (35d), 37.3 -> 35.9 (35c), 35.0 unchanged (35b).
pub const LATENCY_RESIDENT_SHARE: f64 = 1.0;

/// What a load that hits the L1 cache adds to a thread's accesses one after the other,
/// against an L1 round trip: such loads overlap with each other and with the far ones.
pub const NEAR_LOAD_SHARE: f64 = 0.5;

/// The share of a launch's bytes found in the L2 cache when its sections fit there and the
/// launches before it are not known (the rest comes from device memory), fitted to run 20's NPB class A kernels, which each move 10-50 MB
/// that the kernels before them in the time step touched.
pub const L2_RESIDENT_SHARE: f64 = 0.25;

/// Bytes of sectors per access above which a launch's accesses count as scattered (a
/// coalesced warp reading doubles touches 8 bytes of sectors per access; one thread per
/// sector, 32).
pub const SCATTERED_BYTES_PER_ACCESS: f64 = 24.0;


/// Registers per thread assumed where the compiler has not said.
pub const DEFAULT_REGISTERS: u32 = 32;

/// What one launch does, as the model sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchWork {
    pub blocks: u64,
    pub threads_per_block: u32,
    pub shared_bytes_per_block: u64,
    pub registers_per_thread: u32,
    /// The whole launch's counts (sampled blocks scaled to the grid: `model::sample`).
    pub counters: DeviceCounters,
    /// Bytes the launch must read and write in device memory (its arrays' sections).
    pub dram_bytes: u64,
    /// Of those, the ones the launches before it on the device left in the L2 cache
    /// ([`super::residency`]); `None` where the launches before it are not known (stats
    /// written before they were tracked, a launch predicted outside a run).
    pub resident_bytes: Option<ResidentBytes>,
    /// The time steps a block runs on its tile in shared memory, one after another between
    /// barriers: more than 1 only for a step-fused kernel (`opt::fusion::steps`).
    pub time_steps: u32,
}

impl LaunchWork {
    /// The work of a part of this launch that has `share` of it (a device's or a rank's): its
    /// blocks (at least one), counts and device-memory bytes. What the part finds in L2 is
    /// not known (the launches before it on its device would be parts too, and a part's
    /// cache holds more of them than the whole's): the share that sections fitting in L2 find.
    pub fn part(&self, share: f64) -> LaunchWork {
        let blocks = ((self.blocks as f64 * share).ceil() as u64).clamp(1, self.blocks.max(1));
        let bytes = |b: u64| (b as f64 * share).round() as u64;
        LaunchWork {
            blocks,
            counters: self.counters.scaled(self.blocks.max(1), blocks),
            dram_bytes: bytes(self.dram_bytes),
            resident_bytes: None,
            ..self.clone()
        }
    }
}

/// Which resource the prediction found the launch limited by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Launch,
    Memory,
    Cache,
    L2,
    Compute,
    Shared,
    Latency,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::Launch => "launch",
            Bound::Memory => "memory",
            Bound::Cache => "cache",
            Bound::L2 => "L2 cache",
            Bound::Compute => "compute",
            Bound::Shared => "shared memory",
            Bound::Latency => "latency",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    pub seconds: f64,
    pub launch_s: f64,
    pub memory_s: f64,
    pub cache_s: f64,
    pub l2_s: f64,
    pub compute_s: f64,
    pub shared_s: f64,
    pub latency_s: f64,
    /// What a kernel whose blocks meet at barriers adds to its longest term: the part of the
    /// shorter of its throughput and its latency that the barriers keep from overlapping.
    pub barrier_s: f64,
    /// Resident warps over the device's maximum.
    pub occupancy: f64,
    pub bound: Bound,
    /// The device-memory bytes the prediction counted (the work's, capped by its sectors).
    pub dram_bytes: u64,
    /// What the prediction was made from.
    pub work: LaunchWork,
    /// Whether the launch is the first of its compiled kernel, which loads its code, and of
    /// `launch_s` what it pays for that load (0 on the other launches).
    pub loads_code: bool,
    pub first_launch_s: f64,
}

impl Prediction {
    /// What of the launch's work keeps it busy longest, and for how long (`Launch` and 0
    /// when nothing does).
    fn busiest(&self) -> (Bound, f64) {
        let longest = |terms: &[(Bound, f64)]| terms.iter().fold((Bound::Launch, 0.0), |best, &(b, t)| if t > best.1 { (b, t) } else { best });
        let global = longest(&[(Bound::Memory, self.memory_s), (Bound::Cache, self.cache_s), (Bound::L2, self.l2_s)]);
        let (compute, latency) = ((Bound::Compute, self.compute_s), (Bound::Latency, self.latency_s));
        if self.work.time_steps > 1 {
            // A step-fused kernel's blocks load their tile from global memory, then run their
            // steps on it in shared memory between barriers, the blocks of a wave together:
            // the two phases take turns, so they add (bench/NOTES.md run 39: the time-step
            // kernels of the examples measured within 1-6% of the sum in 5 cases of 6, 21-24%
            // over the larger; replayed over runs 36-39, the examples' median 1-3 points lower
            // in each of eleven passes).
            let bound = if self.shared_s > global.1 { Bound::Shared } else { global.0 };
            longest(&[(bound, global.1 + self.shared_s), compute, latency])
        } else {
            longest(&[global, compute, (Bound::Shared, self.shared_s), latency])
        }
    }

    /// How long the launch's work keeps the device busy (the prediction less its launch): the
    /// longest of what it keeps busy, and what barriers keep from overlapping it.
    pub fn busy_s(&self) -> f64 {
        self.busiest().1 + self.barrier_s
    }
}

/// Blocks of `work`'s shape one multiprocessor holds at once (at least one).
pub fn blocks_per_multiprocessor(machine: &Machine, work: &LaunchWork) -> u64 {
    let threads = work.threads_per_block.max(1) as u64;
    let warps_threads = threads.div_ceil(32) * 32;
    let mut fit = (machine.max_blocks_per_multiprocessor as u64).min(machine.max_threads_per_multiprocessor as u64 / warps_threads);
    if let Some(by_shared) = machine.shared_bytes_per_multiprocessor.checked_div(work.shared_bytes_per_block) {
        fit = fit.min(by_shared);
    }
    let registers = work.registers_per_thread.max(1) as u64 * warps_threads;
    fit = fit.min(machine.registers_per_multiprocessor as u64 / registers);
    fit.max(1)
}

pub fn predict(machine: &Machine, work: &LaunchWork) -> Prediction {
    let sms = machine.multiprocessors.max(1) as f64;
    let warps_per_block = (work.threads_per_block.max(1) as u64).div_ceil(32) as f64;
    let per_sm = blocks_per_multiprocessor(machine, work);
    let resident_blocks = (work.blocks as f64).min(sms * per_sm as f64);
    let resident_warps = resident_blocks * warps_per_block;
    let occupancy = resident_warps / (sms * machine.max_threads_per_multiprocessor as f64 / 32.0);
    let compute_reach = (resident_warps / (sms * SATURATING_COMPUTE_WARPS)).clamp(1e-6, 1.0);
    let sm_reach = (resident_blocks / sms).clamp(1e-6, 1.0);
    let c = &work.counters;
    // Device memory moves what the sections cover, but no more than the sectors the launch
    // touches, nor than the distinct sectors its blocks touch (read and written apart): a
    // section is a hull (the whole array for an irregular access, every plane of an array a
    // thread walks a line of), and a kernel that touches a plane of a large array moves the
    // plane, once however often its threads come back to it.
    let sector_bytes = c.global_transactions * 32;
    let mut dram_bytes = work.dram_bytes.min(sector_bytes);
    if c.block_sectors > 0 {
        dram_bytes = dram_bytes.min(c.block_sectors * 32);
    }
    // Scattered accesses (each thread's access a sector of its own) over more memory than the
    // L2 cache holds: a sector is evicted before the neighbouring bytes it also holds are read,
    // so every sector touched comes from device memory.
    let accesses = c.global_loads + c.global_stores;
    let scattered = accesses > 0 && sector_bytes as f64 > SCATTERED_BYTES_PER_ACCESS * accesses as f64;
    if scattered && work.dram_bytes > machine.l2_bytes {
        dram_bytes = sector_bytes;
    }
    // A launch finds in the L2 cache what the launches before it touched there (a time
    // step's kernels over the same arrays); where those are not known, a share of sections
    // that fit in it. Scattered accesses over more than the cache evict what they find.
    let found_in_l2 = |cache_share: f64| match work.resident_bytes {
        _ if scattered && work.dram_bytes > machine.l2_bytes => 0.0,
        Some(curve) => (resident_at(&curve, cache_share) / work.dram_bytes.max(1) as f64).clamp(0.0, 1.0),
        None if work.dram_bytes <= machine.l2_bytes => L2_RESIDENT_SHARE,
        None => 0.0,
    };
    let l2_share = found_in_l2(machine.l2_resident_share);
    // A grid of fewer blocks than multiprocessors leaves the others idle, and one
    // multiprocessor draws only a few multiprocessors' share of the bandwidth.
    let bandwidth_reach = ((work.blocks as f64).min(sms) * machine.multiprocessor_bandwidth_share / sms).clamp(1e-6, 1.0);
    let memory_s = dram_bytes as f64 * ((1.0 - l2_share) / machine.dram_bytes_per_s + l2_share / machine.cache_bytes_per_s) / bandwidth_reach;
    let cache_s = (c.global_transactions * 32) as f64 / (machine.cache_bytes_per_s * bandwidth_reach);
    // What the L1 caches do not keep (a stencil's neighbours a plane apart, a strided thread's
    // sectors, every store): each request to a line, and each sector it carries. A strided
    // warp access asks for a line per sector it needs and pays mostly for the requests; a
    // coalesced one for four sectors a line (bench/NOTES.md runs 27, 28: NPB LU's and SP's
    // sweeps ran at 64-90 requests a nanosecond, above the whole-line copy's 50).
    let l2_s = (c.l2_requests as f64 / machine.l2_requests_per_s + (c.l2_sectors * 32) as f64 / machine.l2_bytes_per_s) / bandwidth_reach;
    // Math functions by cost: an instruction's as a double operation, `pow` at its own rate
    // (older figures: at the functions').
    let functions = c.math_calls.saturating_sub(c.math_instructions + c.math_pows);
    let pow_rate = if machine.pow_calls_per_s > 0.0 { machine.pow_calls_per_s } else { machine.math_calls_per_s };
    let compute_s = (c.float_ops as f64 / machine.float_ops_per_s
        + (c.double_ops + c.math_instructions) as f64 / machine.double_ops_per_s
        + functions as f64 / machine.math_calls_per_s
        + c.math_pows as f64 / pow_rate)
        / compute_reach;
    // Passes over the banks (the calibration's requests are one pass each); stats written
    // before passes were counted give the conflict degrees instead.
    let shared_requests = if c.shared_wavefronts > 0 { c.shared_wavefronts } else { c.bank_conflict_degree_sum.max(c.shared_accesses) };
    let shared_s = shared_requests as f64 / (machine.shared_requests_per_s * sm_reach);
    let threads = (work.blocks * work.threads_per_block.max(1) as u64).max(1) as f64;
    let waves = (work.blocks as f64 / (sms * per_sm as f64)).ceil();
    // A thread's accesses one after the other: its loads (the round trips it waits for, to L2
    // or device memory, and its loads the L1 cache serves; older figures: each load alike),
    // its stores (which it does not wait for, but issues in turn: a store counts
    // STORE_LATENCY_SHARE of a load), and its share of its warp's shared-memory requests.
    let latency_l2_share = found_in_l2(LATENCY_RESIDENT_SHARE);
    let loads_s = if machine.l2_round_trip_s > 0.0 {
        let far_s = machine.l2_round_trip_s
            + far_dram_share(machine, work, dram_bytes, latency_l2_share, resident_blocks) * (machine.dram_round_trip_s - machine.l2_round_trip_s).max(0.0);
        c.load_rounds as f64 * far_s + c.global_loads.saturating_sub(c.far_loads) as f64 * machine.l1_round_trip_s * NEAR_LOAD_SHARE
    } else {
        c.global_loads as f64 * machine.serial_access_s / THREAD_MEMORY_PARALLELISM
    };
    let latency_s = waves
        * (loads_s
            + STORE_LATENCY_SHARE * c.global_stores as f64 * machine.serial_access_s / THREAD_MEMORY_PARALLELISM
            + (c.shared_accesses * 32) as f64 * machine.serial_shared_s)
        / threads;
    let launch_s = if work.blocks == 0 { 0.0 } else { machine.launch() };
    let mut p = Prediction {
        seconds: 0.0,
        launch_s,
        memory_s,
        cache_s,
        l2_s,
        compute_s,
        shared_s,
        latency_s,
        barrier_s: 0.0,
        occupancy,
        bound: Bound::Launch,
        dram_bytes,
        work: work.clone(),
        loads_code: false,
        first_launch_s: 0.0,
    };
    // Fitted with the round trips' latency term: figures that predate them keep the old model.
    if c.barriers > 0 && machine.l2_round_trip_s > 0.0 {
        let throughput = memory_s.max(cache_s).max(l2_s).max(compute_s).max(shared_s);
        p.barrier_s = BARRIER_EXPOSED_SHARE * throughput.min(latency_s);
    }
    let (bound, busy) = p.busiest();
    p.seconds = launch_s + p.busy_s();
    p.bound = if busy < launch_s { Bound::Launch } else { bound };
    p
}

/// The share of a launch's far loads (those past L1) that device memory serves: the bytes it
/// reads from there (its sections less what it finds in L2) over the sectors L2 serves it, and
/// at least the share of what the resident blocks keep touching that L2 cannot hold (NPB FT's
/// blocks each transform their own planes, over 400 MB at once: every far load goes out).
fn far_dram_share(machine: &Machine, work: &LaunchWork, dram_bytes: u64, l2_share: f64, resident_blocks: f64) -> f64 {
    let c = &work.counters;
    let far_bytes = (c.l2_sectors * 32) as f64;
    if far_bytes == 0.0 {
        return 0.0;
    }
    let from_dram = (dram_bytes as f64 * (1.0 - l2_share) / far_bytes).clamp(0.0, 1.0);
    // What the resident blocks touch: their sectors, or their share of the sections where
    // blocks share data (each block reading the same rows).
    let footprint = work.dram_bytes.min(c.block_sectors * 32) as f64 * resident_blocks / work.blocks.max(1) as f64;
    let l2 = machine.l2_bytes as f64;
    if footprint > l2 { from_dram.max(1.0 - l2 / footprint) } else { from_dram }
}

/// What one device's share of a launch touches, for [`split_pays`]: the bytes its sections
/// read, and read and write together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitBytes {
    pub read: u64,
    pub total: u64,
}

/// Whether splitting a launch over `parts.len()` devices is predicted to be faster than
/// running it whole on one, with the two predicted times (whole, split), in seconds.
///
/// Both sides are taken in the steady state of a time step, where each device already holds
/// its own block of the arrays: a part's exchange is what it reads beyond an even share of
/// what the whole launch reads (a stencil's halo; all but its share of an array read whole,
/// such as a vector a sparse product gathers), over the peer link. Memory traffic streams at
/// the device's bandwidth; each extra device costs a launch and a read of its results, and the
/// exchange a peer copy's fixed cost.
pub fn split_pays(machine: &Machine, whole: SplitBytes, parts: &[SplitBytes]) -> (bool, f64, f64) {
    let stream = |bytes: u64| bytes as f64 / machine.dram_bytes_per_s;
    let whole_s = machine.launch() + stream(whole.total);
    let slowest = parts.iter().map(|p| machine.launch() + stream(p.total)).fold(0.0, f64::max);
    let share = whole.read / parts.len().max(1) as u64;
    let exchange = parts.iter().map(|p| p.read.saturating_sub(share)).max().unwrap_or(0);
    let split_s = slowest + split_overhead_s(machine, parts.len(), exchange);
    (split_s < whole_s, whole_s, split_s)
}

/// What a split over `parts` devices adds to its slowest part: the largest part's exchange
/// (`exchange` bytes over the peer link, with a peer copy's fixed cost), and per extra device
/// a launch and a read of its results.
fn split_overhead_s(machine: &Machine, parts: usize, exchange: u64) -> f64 {
    let exchange_s = if exchange == 0 {
        0.0
    } else if machine.peer_bytes_per_s > 0.0 {
        exchange as f64 / machine.peer_bytes_per_s + machine.peer_copy_s
    } else {
        f64::INFINITY
    };
    exchange_s + parts.max(1).saturating_sub(1) as f64 * (machine.launch() + machine.host_copy_s)
}

/// The predicted time of a launch split into `parts` (one per device, in the steady state of
/// a time step), from the prediction of the whole launch on one device: each part does the
/// whole's work (blocks, counts, device-memory bytes) in the share of the parts' section bytes
/// it has; the
/// slowest part is followed by the split's overhead, `exchange` the most bytes a part receives
/// from the others.
pub fn predict_parts(machine: &Machine, whole: &Prediction, parts: &[SplitBytes], exchange: u64) -> f64 {
    if parts.len() < 2 {
        return whole.seconds;
    }
    // Shares of the parts' sections: a section is a hull, which a part of a many-dimensional
    // array overstates alike on every device, so the shares, not the bytes, carry over.
    let parts_total: u64 = parts.iter().map(|p| p.total).sum();
    let slowest = parts
        .iter()
        .map(|p| {
            let share = if parts_total == 0 { 1.0 / parts.len() as f64 } else { p.total as f64 / parts_total as f64 };
            predict(machine, &whole.work.part(share)).seconds
        })
        .fold(0.0, f64::max);
    slowest + split_overhead_s(machine, parts.len(), exchange)
}
