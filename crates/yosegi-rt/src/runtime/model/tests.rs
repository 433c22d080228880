//! The model's counts against the simulator's, and its arithmetic: what bounds a launch,
//! occupancy limits, the first launch, the device-memory cap and a split launch.

use std::sync::Arc;

use super::predict::{BARRIER_EXPOSED_SHARE, Bound, L2_RESIDENT_SHARE, LaunchWork, NEAR_LOAD_SHARE, STORE_LATENCY_SHARE, THREAD_MEMORY_PARALLELISM, SplitBytes, blocks_per_multiprocessor, predict, predict_parts, split_pays};
use super::sample::{SAMPLED_BLOCKS, sample_launch, sample_of};
use super::{Machine, Model};
use crate::diag::Span;
use crate::ir::{ArrayRef, BinaryOp, GridKernel, Module, ParamValue, ScalarType, Stmt};
use crate::runtime::device::{Device, DeviceAlloc, DeviceParam, Launch};
use crate::runtime::sim::SimDevice;
use crate::runtime::sim::memory::SimBuffer;
use crate::runtime::stats::DeviceCounters;
use crate::runtime::testing::{GridBuilder, f32_bytes};

/// `c[i] = a[i] * b[i] + a[i]` over `n` floats, 128 threads a block.
fn multiply_add() -> GridKernel {
    let mut g = GridBuilder::new("madd", [128, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let a = g.array_param("a", ScalarType::F32, &[]);
    let b = g.array_param("b", ScalarType::F32, &[]);
    let c = g.array_param("c", ScalarType::F32, &[]);
    let (i, guard) = g.one_thread_per_point(np);
    let la = g.load(ArrayRef::Param(a), &[i], ScalarType::F32, Span::default());
    let lb = g.load(ArrayRef::Param(b), &[i], ScalarType::F32, Span::default());
    let la2 = g.load(ArrayRef::Param(a), &[i], ScalarType::F32, Span::default());
    let product = g.bin(BinaryOp::Mul, la, lb);
    let value = g.bin(BinaryOp::Add, product, la2);
    let store = g.store(ArrayRef::Param(c), &[i], value);
    g.finish(vec![Stmt::If { cond: guard, then: vec![store], otherwise: vec![] }])
}

/// `s[tid][0] = a[i]` on `float s[128][columns]`, then a barrier: a column store whose bank
/// conflicts depend on `columns`.
fn column_store(columns: u32) -> GridKernel {
    let mut g = GridBuilder::new("columns", [128, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let a = g.array_param("a", ScalarType::F32, &[]);
    let s = g.shared("s", ScalarType::F32, &[128, columns]);
    let nv = g.param(np);
    let k128 = g.int(128);
    let blocks = g.bin(BinaryOp::Div, nv, k128);
    g.grid_x(blocks);
    let i = g.global_id();
    let t = g.tid();
    let zero = g.int(0);
    let la = g.load(ArrayRef::Param(a), &[i], ScalarType::F32, Span::default());
    let st = g.store(ArrayRef::Shared(s), &[t, zero], la);
    g.finish(vec![st, Stmt::Barrier])
}

/// Runs `kernel` with `n` and `arrays` float arrays of `n` elements on the simulator (every
/// block) and through the model's sampler over host views of the same data; returns both
/// counts.
fn simulated_and_sampled(kernel: GridKernel, n: usize, arrays: usize) -> (DeviceCounters, DeviceCounters) {
    let mut module = Module::default();
    module.grid_kernels.append(kernel);
    let kernel = &module.grid_kernels[crate::ir::Handle::new(0)];
    let host: Vec<Vec<u8>> = (0..arrays).map(|k| f32_bytes(&(0..n).map(|x| (x + k) as f32).collect::<Vec<_>>())).collect();
    let mut device = SimDevice::new();
    let mut params = vec![DeviceParam::Value(ParamValue::Int(n as i64))];
    let mut allocs = Vec::new();
    for bytes in &host {
        let alloc = device.allocate(bytes.len() as u64);
        device.copy_to_device(alloc, 0, bytes);
        allocs.push(alloc);
        params.push(DeviceParam::Array { alloc, offset: 0 });
    }
    let launch = Launch::new(&module, kernel, params);
    let simulated = device.launch(&launch).expect("no fault").counters;
    let view_of = |alloc: DeviceAlloc| {
        let k = allocs.iter().position(|&a| a == alloc)?;
        // SAFETY: `host` outlives the sampling.
        Some(Arc::new(unsafe { SimBuffer::host_view(host[k].as_ptr(), host[k].len()) }))
    };
    let sampled = sample_launch(&launch, &view_of, 0, &Machine::nominal("test"), None).expect("counted");
    // The host's arrays are unchanged: a view drops stores.
    assert_eq!(host[0], f32_bytes(&(0..n).map(|x| x as f32).collect::<Vec<_>>()));
    assert_eq!(sampled.blocks, simulated.blocks);
    (simulated, sampled.counters)
}

fn assert_same_counts(simulated: &DeviceCounters, sampled: &DeviceCounters) {
    assert_eq!(sampled.global_transactions, simulated.global_transactions, "sectors");
    assert_eq!(sampled.global_loads, simulated.global_loads, "loads");
    assert_eq!(sampled.global_stores, simulated.global_stores, "stores");
    assert_eq!(sampled.float_ops, simulated.float_ops, "float operations");
    assert_eq!(sampled.shared_accesses, simulated.shared_accesses, "shared requests");
    assert_eq!(sampled.bank_conflict_degree_sum, simulated.bank_conflict_degree_sum, "conflict degrees");
    assert_eq!(sampled.bank_conflict_max_degree, simulated.bank_conflict_max_degree, "worst conflict");
    assert_eq!(sampled.shared_wavefronts, simulated.shared_wavefronts, "shared passes");
    assert_eq!(sampled.barriers, simulated.barriers, "barriers");
}

#[test]
fn sampled_blocks_count_what_the_simulator_counts_over_every_block() {
    // 64 blocks, of which the sampler runs four; every block does the same.
    let (simulated, sampled) = simulated_and_sampled(multiply_add(), 64 * 128, 3);
    assert_eq!(simulated.global_loads, 3 * 64 * 128);
    assert_eq!(simulated.float_ops, 2 * 64 * 128);
    assert_same_counts(&simulated, &sampled);
}

#[test]
fn sampled_bank_conflicts_follow_the_padding() {
    for columns in [32, 33] {
        let (simulated, sampled) = simulated_and_sampled(column_store(columns), 32 * 128, 1);
        assert_same_counts(&simulated, &sampled);
        let expected_degree = if columns == 32 { 32 } else { 1 };
        assert_eq!(sampled.bank_conflict_max_degree, expected_degree, "{columns} columns");
    }
}

#[test]
fn a_partial_last_block_makes_the_sample_an_estimate_within_a_block() {
    // 1000 points: 8 blocks, the last one 24 points short of full; the sample runs blocks 1, 3,
    // 5 and 7, so it sees the short block twice as often as the grid has it.
    let (simulated, sampled) = simulated_and_sampled(multiply_add(), 1000, 3);
    let per_block = (3 * 128) as u64;
    assert_eq!(simulated.global_loads, 3 * 1000);
    assert!(sampled.global_loads.abs_diff(simulated.global_loads) <= per_block, "{} vs {}", sampled.global_loads, simulated.global_loads);
    assert_ne!(sampled.global_loads, simulated.global_loads);
}

#[test]
fn samples_spread_over_the_grid_and_scale_to_it() {
    assert_eq!(sample_of(3), vec![0, 1, 2]);
    assert_eq!(sample_of(80), vec![10, 30, 50, 70]);
    assert_eq!(sample_of(80).len() as u64, SAMPLED_BLOCKS);
    let four = DeviceCounters { global_loads: 400, bank_conflict_max_degree: 4, ..DeviceCounters::default() };
    let whole = four.scaled(4, 10);
    assert_eq!(whole.global_loads, 1000);
    assert_eq!(whole.bank_conflict_max_degree, 4, "a maximum is not scaled");
    assert_eq!(whole.blocks, 10);
}

fn machine() -> Machine {
    Machine::nominal("test")
}

fn streaming(bytes: u64, blocks: u64) -> LaunchWork {
    LaunchWork {
        blocks,
        threads_per_block: 256,
        shared_bytes_per_block: 0,
        registers_per_thread: 32,
        counters: DeviceCounters {
            global_transactions: bytes / 32,
            global_loads: bytes / 16,
            global_stores: bytes / 16,
            ..DeviceCounters::default()
        },
        dram_bytes: bytes,
        resident_bytes: None,
        time_steps: 1,
    }
}

#[test]
fn a_large_copy_is_bound_by_device_memory() {
    let m = machine();
    let p = predict(&m, &streaming(1 << 30, 1 << 20));
    assert_eq!(p.bound, Bound::Memory);
    let expected = m.launch_s + (1u64 << 30) as f64 / m.dram_bytes_per_s;
    assert!((p.seconds - expected).abs() < 1e-12, "{} vs {expected}", p.seconds);
}

#[test]
fn a_tiny_launch_costs_the_launch() {
    let p = predict(&machine(), &streaming(4096, 1));
    assert_eq!(p.bound, Bound::Launch);
    assert_eq!(p.seconds, machine().launch_s + p.memory_s.max(p.cache_s).max(p.latency_s));
}

#[test]
fn device_memory_bytes_are_capped_by_the_sectors_touched() {
    // A section hull of 1 GB (an irregular access) over a launch that touches 1 MB.
    let mut work = streaming(1 << 20, 4096);
    work.dram_bytes = 1 << 30;
    let p = predict(&machine(), &work);
    assert_eq!(p.dram_bytes, 1 << 20);
}

#[test]
fn a_strided_sweep_pays_l2_a_request_per_sector() {
    let m = machine();
    // A sweep over 64 MB whose sectors all miss L1. Strided, each is a request of its own: the
    // L2 cache, not device memory, bounds it, at a request's and a sector's cost each.
    let mut work = streaming(64 << 20, 1 << 15);
    let sectors = work.counters.global_transactions;
    work.counters.l2_sectors = sectors;
    work.counters.l2_requests = sectors;
    let p = predict(&m, &work);
    assert_eq!(p.bound, Bound::L2);
    let per_sector = 32.0 / m.l2_bytes_per_s;
    let expected = sectors as f64 * (1.0 / m.l2_requests_per_s + per_sector);
    assert!((p.l2_s - expected).abs() < 1e-12, "{} vs {expected}", p.l2_s);
    assert!((p.seconds - m.launch_s - expected).abs() < 1e-12);
    // Coalesced, four sectors a request: a quarter of the requests, the same sectors, and
    // device memory bounds it.
    work.counters.l2_requests = sectors / 4;
    let p = predict(&m, &work);
    let coalesced = sectors as f64 * (0.25 / m.l2_requests_per_s + per_sector);
    assert!((p.l2_s - coalesced).abs() < 1e-12);
    assert!(coalesced < 0.5 * expected);
    assert_eq!(p.bound, Bound::Memory);
}

#[test]
fn a_grid_too_small_to_hide_latency_is_bound_by_its_threads_accesses() {
    let m = machine();
    // One block of 32 threads, each making 10 000 loads, all past L1 and each waited for,
    // over 1.28 MB (in L2, where the launches before are not known: a share of it there).
    let far = DeviceCounters { global_loads: 320_000, far_loads: 320_000, load_rounds: 320_000, global_transactions: 320_000, l2_sectors: 40_000, ..DeviceCounters::default() };
    let work = LaunchWork { blocks: 1, threads_per_block: 32, counters: far.clone(), dram_bytes: 320_000 * 4, ..streaming(0, 1) };
    let p = predict(&m, &work);
    assert_eq!(p.bound, Bound::Latency);
    let dram_share = 1.0 - L2_RESIDENT_SHARE;
    let round_trip = m.l2_round_trip_s + dram_share * (m.dram_round_trip_s - m.l2_round_trip_s);
    assert!((p.latency_s - 10_000.0 * round_trip).abs() < 1e-12, "{} vs {}", p.latency_s, 10_000.0 * round_trip);
    // Overlapped four loads a round: a quarter of the time.
    let overlapped = LaunchWork { counters: DeviceCounters { load_rounds: 80_000, ..far.clone() }, ..work.clone() };
    assert!((predict(&m, &overlapped).latency_s - 2_500.0 * round_trip).abs() < 1e-12);
    // Loads the L1 cache serves: a share of its round trip each.
    let near = LaunchWork { counters: DeviceCounters { far_loads: 0, load_rounds: 0, ..far.clone() }, ..work.clone() };
    assert!((predict(&m, &near).latency_s - 10_000.0 * NEAR_LOAD_SHARE * m.l1_round_trip_s).abs() < 1e-12);
    // Figures measured before the round trips were: every load alike.
    let old = Machine { l1_round_trip_s: 0.0, l2_round_trip_s: 0.0, dram_round_trip_s: 0.0, ..m.clone() };
    assert!((predict(&old, &work).latency_s - 10_000.0 * m.serial_access_s / THREAD_MEMORY_PARALLELISM).abs() < 1e-12);
    // The same accesses as stores: a thread does not wait for them, they count a share.
    let stores = LaunchWork { counters: DeviceCounters { global_stores: 320_000, global_transactions: 320_000, ..DeviceCounters::default() }, ..work };
    let p = predict(&m, &stores);
    assert!((p.latency_s - STORE_LATENCY_SHARE * 10_000.0 * m.serial_access_s / THREAD_MEMORY_PARALLELISM).abs() < 1e-12);
}

/// A kernel whose blocks meet at barriers adds half the shorter of its throughput and its
/// latency to the longer; one without barriers overlaps them.
#[test]
fn barriers_keep_a_share_of_latency_from_overlapping_throughput() {
    let m = machine();
    let counters = DeviceCounters { global_loads: 320_000, far_loads: 320_000, load_rounds: 320_000, global_transactions: 1 << 24, l2_sectors: 1 << 24, ..DeviceCounters::default() };
    let work = LaunchWork { blocks: 1, threads_per_block: 32, counters, dram_bytes: 1 << 29, ..streaming(0, 1) };
    let free = predict(&m, &work);
    assert_eq!(free.barrier_s, 0.0);
    let longest = free.seconds - free.launch_s;
    let throughput = free.memory_s.max(free.cache_s).max(free.l2_s).max(free.compute_s).max(free.shared_s);
    assert!(throughput > 0.0 && free.latency_s > 0.0);
    let synced = LaunchWork { counters: DeviceCounters { barriers: 1, ..work.counters.clone() }, ..work };
    let p = predict(&m, &synced);
    let exposed = BARRIER_EXPOSED_SHARE * throughput.min(free.latency_s);
    assert!((p.barrier_s - exposed).abs() < 1e-15);
    assert!((p.seconds - p.launch_s - longest - exposed).abs() < 1e-12);
    assert!((p.busy_s() - longest - exposed).abs() < 1e-12);
    // Figures measured before the round trips: the model they were fitted with.
    let old = Machine { l1_round_trip_s: 0.0, l2_round_trip_s: 0.0, dram_round_trip_s: 0.0, ..m };
    assert_eq!(predict(&old, &synced).barrier_s, 0.0);
}

/// `pow` costs its own rate, an instruction-like function a double operation, the others the
/// math functions' rate.
#[test]
fn math_calls_cost_by_their_kind() {
    let m = Machine { pow_calls_per_s: 1e11, ..machine() };
    let calls = |math_instructions: u64, math_pows: u64| {
        let counters = DeviceCounters { math_calls: 1 << 30, math_instructions, math_pows, ..DeviceCounters::default() };
        predict(&m, &LaunchWork { blocks: 1 << 16, counters, ..streaming(0, 1 << 16) }).compute_s
    };
    let n = (1u64 << 30) as f64;
    assert!((calls(0, 0) - n / m.math_calls_per_s).abs() < 1e-12);
    assert!((calls(1 << 30, 0) - n / m.double_ops_per_s).abs() < 1e-12);
    assert!((calls(0, 1 << 30) - n / m.pow_calls_per_s).abs() < 1e-12);
    // Figures without a rate of `pow`: as any function.
    let old = Machine { pow_calls_per_s: 0.0, ..machine() };
    let counters = DeviceCounters { math_calls: 1 << 30, math_pows: 1 << 30, ..DeviceCounters::default() };
    assert!((predict(&old, &LaunchWork { blocks: 1 << 16, counters, ..streaming(0, 1 << 16) }).compute_s - n / old.math_calls_per_s).abs() < 1e-12);
}

/// Bytes the launches before left in L2 beyond the share the device-memory term counts on are
/// still found there by a latency-bound thread's far loads, at L2's round trip.
#[test]
fn a_latency_bound_thread_finds_what_any_of_l2_holds() {
    let m = machine();
    let bytes = m.l2_bytes / 2;
    let counters = DeviceCounters { global_loads: 320_000, far_loads: 320_000, load_rounds: 320_000, global_transactions: bytes / 32, l2_sectors: bytes / 32, ..DeviceCounters::default() };
    // Found only once the whole cache is counted: none at the shares below it.
    let resident_bytes = Some([0, 0, 0, bytes]);
    let work = LaunchWork { blocks: 1, threads_per_block: 32, counters, dram_bytes: bytes, resident_bytes, ..streaming(0, 1) };
    let p = predict(&m, &work);
    assert!(m.l2_resident_share < 0.75);
    assert!((p.latency_s - 10_000.0 * m.l2_round_trip_s).abs() < 1e-12, "{} vs {}", p.latency_s, 10_000.0 * m.l2_round_trip_s);
    let gone = LaunchWork { resident_bytes: Some([0; 4]), ..work };
    assert!((predict(&m, &gone).latency_s - 10_000.0 * m.dram_round_trip_s).abs() < 1e-12);
}

/// Blocks that each keep touching their own data, more of it at once than L2 holds, fetch
/// their far loads from device memory (NPB FT's planes), though their sections alone would
/// find some of it in L2.
#[test]
fn far_loads_of_resident_blocks_that_outgrow_l2_come_from_device_memory() {
    let m = machine();
    let per_block = m.l2_bytes / 16;
    let blocks = 64;
    let counters = DeviceCounters {
        global_loads: blocks * 32 * 1000,
        far_loads: blocks * 32 * 1000,
        load_rounds: blocks * 32 * 1000,
        global_transactions: blocks * per_block / 32,
        block_sectors: blocks * per_block / 32,
        l2_sectors: 2 * blocks * per_block / 32,
        ..DeviceCounters::default()
    };
    let work = LaunchWork { blocks, threads_per_block: 32, counters, dram_bytes: blocks * per_block, ..streaming(0, 1) };
    let p = predict(&m, &work);
    // Four times L2 at once: three quarters of the far loads go to device memory (the
    // sections alone: half, each sector read twice).
    let round_trip = m.l2_round_trip_s + 0.75 * (m.dram_round_trip_s - m.l2_round_trip_s);
    assert!((p.latency_s - 1000.0 * round_trip).abs() < 1e-12, "{} vs {}", p.latency_s, 1000.0 * round_trip);
}

/// Where the launches before are tracked, the bytes they left in L2 (at the machine's share of
/// it) cost no device-memory time, the rest all of it, whatever the launch's size.
#[test]
fn the_bytes_earlier_launches_left_in_l2_are_read_from_it() {
    let m = machine();
    let bytes = 2 * m.l2_bytes;
    let at_share = |resident: u64| {
        let mut curve = [0; 4];
        for (c, &s) in curve.iter_mut().zip(&super::residency::RESIDENT_SHARES) {
            if s >= m.l2_resident_share {
                *c = resident;
            }
        }
        predict(&m, &LaunchWork { resident_bytes: Some(curve), ..streaming(bytes, 1 << 16) })
    };
    let none = at_share(0);
    assert!((none.memory_s - bytes as f64 / m.dram_bytes_per_s).abs() < 1e-12);
    let quarter = at_share(bytes / 4);
    let expected = bytes as f64 * (0.75 / m.dram_bytes_per_s + 0.25 / m.cache_bytes_per_s);
    assert!((quarter.memory_s - expected).abs() < 1e-12 * expected);
    // Bytes found only in the part of the cache beyond the machine's share do not count.
    let mut beyond = [0; 4];
    beyond[3] = bytes;
    let p = predict(&m, &LaunchWork { resident_bytes: Some(beyond), ..streaming(bytes, 1 << 16) });
    assert!(m.l2_resident_share <= 0.75 && (p.memory_s - none.memory_s).abs() < 1e-12);
}

#[test]
fn sections_that_fit_in_l2_are_read_partly_from_it() {
    let m = machine();
    let fits = predict(&m, &streaming(m.l2_bytes, 1 << 16));
    let expected = m.l2_bytes as f64 * ((1.0 - L2_RESIDENT_SHARE) / m.dram_bytes_per_s + L2_RESIDENT_SHARE / m.cache_bytes_per_s);
    assert!((fits.memory_s - expected).abs() < 1e-12 * expected.max(1.0));
    let larger = predict(&m, &streaming(m.l2_bytes + 32, 1 << 16));
    assert!((larger.memory_s - (m.l2_bytes + 32) as f64 / m.dram_bytes_per_s).abs() < 1e-12);
    assert!(larger.memory_s > fits.memory_s * 1.1);
}

#[test]
fn scattered_accesses_over_more_than_l2_move_every_sector() {
    let m = machine();
    // 2 GB of sections read a double at a time, one sector per access.
    let bytes: u64 = 2 << 30;
    let accesses = bytes / 8;
    let mut work = streaming(bytes, 1 << 16);
    work.counters.global_loads = accesses;
    work.counters.global_stores = 0;
    work.counters.global_transactions = accesses;
    let p = predict(&m, &work);
    assert_eq!(p.dram_bytes, accesses * 32);
    // Coalesced (8 bytes of sectors per access), the sections' bytes.
    work.counters.global_transactions = accesses / 4;
    assert_eq!(predict(&m, &work).dram_bytes, bytes);
    // Scattered within what L2 holds: the sections' bytes.
    let small = m.l2_bytes / 2;
    let mut work = streaming(small, 1 << 16);
    work.counters.global_loads = small / 8;
    work.counters.global_stores = 0;
    work.counters.global_transactions = small / 8;
    assert_eq!(predict(&m, &work).dram_bytes, small);
}

#[test]
fn shared_memory_and_registers_limit_the_blocks_a_multiprocessor_holds() {
    let m = machine();
    let mut work = streaming(1 << 20, 10_000);
    assert_eq!(blocks_per_multiprocessor(&m, &work), 8, "2048 threads / 256");
    work.shared_bytes_per_block = 48 << 10;
    assert_eq!(blocks_per_multiprocessor(&m, &work), 4, "228 KiB / 48 KiB");
    work.shared_bytes_per_block = 0;
    work.registers_per_thread = 128;
    assert_eq!(blocks_per_multiprocessor(&m, &work), 2, "65536 registers / (128 x 256)");
    // Fewer blocks resident: fewer warps to hide arithmetic latency (two-warp blocks, 32 of
    // them on a multiprocessor, or one when each needs 200 KiB of shared memory).
    work.registers_per_thread = 32;
    work.threads_per_block = 64;
    work.counters.double_ops = 1 << 32;
    let full = predict(&m, &work).compute_s;
    work.shared_bytes_per_block = 200 << 10;
    assert!((predict(&m, &work).compute_s / full - 4.0).abs() < 1e-9, "8 warps saturate, 2 reach a quarter");
}

#[test]
fn bank_conflicts_and_passes_cost_shared_memory_time() {
    let m = machine();
    let mut work = streaming(1 << 10, 4096);
    work.counters.shared_accesses = 1 << 24;
    work.counters.bank_conflict_degree_sum = 1 << 24;
    let free = predict(&m, &work).shared_s;
    work.counters.bank_conflict_degree_sum = 32 << 24;
    let conflicted = predict(&m, &work);
    assert!((conflicted.shared_s / free - 32.0).abs() < 1e-9);
    assert_eq!(conflicted.bound, Bound::Shared);
    // Counted passes over the banks rule where there are any: rows of doubles, no conflict
    // but two passes a request.
    work.counters.bank_conflict_degree_sum = 1 << 24;
    work.counters.shared_wavefronts = 2 << 24;
    assert!((predict(&m, &work).shared_s / free - 2.0).abs() < 1e-9);
}

#[test]
fn a_split_launch_waits_for_its_slowest_part_and_the_exchange() {
    let m = machine();
    let bytes: u64 = 1 << 30;
    let whole = predict(&m, &streaming(bytes, 1 << 16));
    // Two even halves, 1 MiB of halo into the larger part.
    let half = SplitBytes { read: bytes / 4, total: bytes / 2 };
    let halo: u64 = 1 << 20;
    let t = predict_parts(&m, &whole, &[half, half], halo);
    let part = predict(&m, &streaming(bytes / 2, 1 << 15)).seconds;
    let expected = part + halo as f64 / m.peer_bytes_per_s + m.peer_copy_s + m.launch_s + m.host_copy_s;
    assert!((t - expected).abs() < 1e-9 * expected, "{t} vs {expected}");
    // A streaming launch this large gains nearly twofold; an uneven split waits for its larger
    // part; hulls that overstate every part alike change nothing.
    assert!(t < 0.6 * whole.seconds);
    let uneven = predict_parts(&m, &whole, &[SplitBytes { read: bytes / 8, total: bytes / 4 }, SplitBytes { read: bytes * 3 / 8, total: bytes * 3 / 4 }], halo);
    assert!(uneven > t);
    let hulls = predict_parts(&m, &whole, &[SplitBytes { read: bytes, total: bytes * 2 }; 2], halo);
    assert!((hulls - t).abs() < 1e-9 * t);
    // One part is the whole launch.
    assert_eq!(predict_parts(&m, &whole, &[half], 0), whole.seconds);
}

/// A module holding [`multiply_add`] alone.
fn multiply_add_module() -> Module {
    let mut module = Module::default();
    module.grid_kernels.append(multiply_add());
    module
}

/// Three host arrays of `n` floats, zeroed: [`multiply_add`]'s, for allocations 0, 1 and 2.
fn zeroed_arrays(n: usize) -> Vec<Vec<u8>> {
    (0..3).map(|_| vec![0u8; 4 * n]).collect()
}

/// Read-only views of `host`'s arrays, allocation `k` viewing array `k`, as the model samples.
fn views_of(host: &[Vec<u8>]) -> impl Fn(DeviceAlloc) -> Option<Arc<SimBuffer>> + '_ {
    // SAFETY: the views borrow `host`, which outlives them.
    |alloc: DeviceAlloc| host.get(alloc.0 as usize).map(|a| Arc::new(unsafe { SimBuffer::host_view(a.as_ptr(), a.len()) }))
}

/// [`multiply_add`]'s params for `n` points, its three arrays in allocations 0, 1 and 2.
fn multiply_add_params(n: usize) -> Vec<DeviceParam> {
    std::iter::once(DeviceParam::Value(ParamValue::Int(n as i64)))
        .chain((0..3).map(|k| DeviceParam::Array { alloc: DeviceAlloc(k), offset: 0 }))
        .collect()
}

/// A step-fused kernel's blocks load their tile, then run their steps on it in shared memory
/// between barriers: the two phases add (bench/NOTES.md run 39). Any other kernel takes the
/// longer of them. The model finds a kernel's steps in the module's step fusions.
#[test]
fn a_step_fused_kernels_global_and_shared_phases_add() {
    let m = machine();
    let mut counters = streaming(1 << 28, 1 << 16).counters;
    counters.shared_wavefronts = 1 << 24;
    counters.barriers = 1 << 16;
    let one = predict(&m, &LaunchWork { counters, time_steps: 1, ..streaming(1 << 28, 1 << 16) });
    let steps = predict(&m, &LaunchWork { time_steps: 4, ..one.work.clone() });
    let global = one.memory_s.max(one.cache_s).max(one.l2_s);
    assert!(global > 0.0 && one.shared_s > 0.0 && one.shared_s < global, "{one:?}");
    assert!((one.busy_s() - global - one.barrier_s).abs() < 1e-12);
    assert!((steps.busy_s() - global - steps.shared_s - steps.barrier_s).abs() < 1e-12, "{steps:?}");
    assert_eq!((one.bound, steps.bound), (Bound::Memory, Bound::Memory));
    // Where the shared phase is the longer, the sum is the shared memory's.
    let mut shared_heavy = one.work.clone();
    shared_heavy.counters.shared_wavefronts = 1 << 30;
    shared_heavy.time_steps = 2;
    assert_eq!(predict(&m, &shared_heavy).bound, Bound::Shared);

    let mut module = multiply_add_module();
    let n = 4 * 128;
    let host = zeroed_arrays(n);
    let view_of = views_of(&host);
    let steps_of = |module: &Module| {
        let launch = Launch::new(module, &module.grid_kernels[crate::ir::Handle::new(0)], multiply_add_params(n));
        super::predict_with(&m, &launch, super::Traffic::default(), 132, &view_of, None).expect("predicted").work.time_steps
    };
    assert_eq!(steps_of(&module), 1);
    module.step_fusions.push(crate::ir::StepFusion {
        region: 0,
        steps: 4,
        grid: crate::ir::Handle::new(0),
        renamed: Vec::new(),
        forced: false,
        estimated_ratio: 1.0,
        notes: Vec::new(),
    });
    assert_eq!(steps_of(&module), 4);
}

#[test]
fn the_first_launch_of_a_kernel_pays_for_loading_it() {
    let module = multiply_add_module();
    let kernel = &module.grid_kernels[crate::ir::Handle::new(0)];
    let n = 4 * 128;
    let host = zeroed_arrays(n);
    let launch = Launch::new(&module, kernel, multiply_add_params(n));
    let view_of = views_of(&host);
    let at = |device: usize, bytes: u64| super::Placement { device, device_name: "sim", multiprocessors: 0, traffic: super::Traffic { bytes, resident: None }, host_view_of: &view_of, touches_upload: false, timing: super::Timing::Queued };
    let mut model = Model::new(vec![machine()]);
    let first = model.predict_launch(&launch, &at(0, 3 * 4 * n as u64)).expect("predicted");
    let again = model.predict_launch(&launch, &at(0, 3 * 4 * n as u64)).expect("predicted");
    // The load, and from idle: the host got the code ready while the device ran dry.
    assert!(first.loads_code && !again.loads_code);
    assert_eq!((first.first_launch_s, again.first_launch_s), (machine().first_launch(), 0.0));
    assert!((first.seconds - again.seconds - machine().first_launch() - machine().idle_launch()).abs() < 1e-12);
    assert_eq!(again.work.counters.global_loads, 3 * n as u64);
    // No machine for a device the model does not know.
    assert_eq!(model.predict_launch(&launch, &at(1, 0)).err(), Some(super::Unpredicted::Uncountable));
    // A launch on an idle device pays what programs were seen to pay for it, once observed.
    let mut observed = machine();
    observed.idle_launch_s = 3e-6;
    observed.idle_launch_observed_s = Some(10e-6);
    let mut model = Model::new(vec![observed]);
    let queued = model.predict_steady(&launch, &at(0, 3 * 4 * n as u64)).expect("predicted");
    let alone = super::Placement { timing: super::Timing::IDLE, ..at(0, 3 * 4 * n as u64) };
    let timed = model.predict_steady(&launch, &alone).expect("predicted");
    assert_eq!(timed.seconds, queued.seconds, "a steady prediction is of a queued launch");
    model.predict_launch(&launch, &at(0, 3 * 4 * n as u64)).expect("predicted");
    let timed = model.predict_launch(&launch, &alone).expect("predicted");
    assert!((timed.seconds - queued.seconds - 10e-6).abs() < 1e-12, "{} {}", timed.seconds, queued.seconds);
    // After a short gap, a share of it.
    let short = super::Placement { timing: super::Timing::Alone { idle_share: 0.25 }, ..at(0, 3 * 4 * n as u64) };
    let after_gap = model.predict_launch(&launch, &short).expect("predicted");
    assert!((after_gap.seconds - queued.seconds - 2.5e-6).abs() < 1e-12, "{} {}", after_gap.seconds, queued.seconds);
}

/// A GPU compiles a variant of a kernel per distinct values of its specialisable params (up to
/// `cuda::MAX_VARIANTS`, then the generic kernel), and each variant's first launch loads its
/// code: the model charges the first launch per variant, not once per kernel.
#[test]
fn each_compiled_variant_pays_its_first_launch() {
    let module = multiply_add_module();
    let kernel = &module.grid_kernels[crate::ir::Handle::new(0)];
    let host = zeroed_arrays(4 * 128);
    let view_of = views_of(&host);
    let launch_of = |n: usize| Launch::new(&module, kernel, multiply_add_params(n));
    assert!(!launch_of(8).specialisable.is_empty(), "n specialises the kernel");
    let at = super::Placement { device: 0, device_name: "sim", multiprocessors: 0, traffic: super::Traffic::default(), host_view_of: &view_of, touches_upload: false, timing: super::Timing::Queued };
    let mut model = Model::new(vec![machine()]);
    let mut pays_first = |n: usize| {
        let launch = launch_of(n);
        let steady = model.predict_steady(&launch, &at).expect("predicted").seconds;
        let paid = model.predict_launch(&launch, &at).expect("predicted").seconds - steady;
        assert!(paid.abs() < 1e-12 || (paid - machine().first_launch() - machine().idle_launch()).abs() < 1e-12, "{paid}");
        paid > 0.0
    };
    assert!(pays_first(512));
    assert!(!pays_first(512));
    assert!(pays_first(256), "another size is another variant");
    assert!(!pays_first(512));
    // Up to MAX_VARIANTS specialised variants, then the generic one, once.
    for k in 3..=crate::runtime::cuda::MAX_VARIANTS {
        assert!(pays_first(8 * k), "variant {k}");
    }
    assert!(pays_first(8 * 40), "the generic variant");
    assert!(!pays_first(8 * 41), "the generic variant again");
    assert!(!pays_first(256));
}

#[test]
fn machine_figures_are_kept_per_gpu_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut measured = Machine::nominal("NVIDIA Test GPU, sm_90");
    assert!(Machine::load(dir.path(), &measured.name).is_none());
    // Nominal figures are never kept as if measured.
    measured.store(dir.path());
    assert!(Machine::load(dir.path(), &measured.name).is_none());
    measured.measured = true;
    measured.dram_bytes_per_s = 1.5e12;
    measured.store(dir.path());
    assert_eq!(Machine::load(dir.path(), &measured.name), Some(measured.clone()));
    assert!(Machine::load(dir.path(), "another GPU").is_none());
}

/// The number of devices a launch runs on: a large stencil splits, a vector update of a few
/// megabytes stays whole (each extra device costs a launch and a result read), and so does a
/// sparse product that gathers its whole vector on every device (CG's, which measured 0.83x
/// on two H100s when split).
#[test]
fn the_model_splits_only_launches_that_gain() {
    let m = Machine::nominal("test");
    let mb = |x: f64| (x * (1u64 << 20) as f64) as u64;
    let bytes = |read: f64, total: f64| SplitBytes { read: mb(read), total: mb(total) };
    // A 2-D stencil over 512 MB in, 512 MB out; each half reads its rows plus one row each side.
    let (pays, whole, split) = split_pays(&m, bytes(512.0, 1024.0), &[bytes(256.1, 512.1), bytes(256.1, 512.1)]);
    assert!(pays && split < 0.6 * whole, "{whole} {split}");
    // Four devices: the same, faster again.
    let (pays4, _, split4) = split_pays(&m, bytes(512.0, 1024.0), &[bytes(128.1, 256.1); 4]);
    assert!(pays4 && split4 < split, "{split4} {split}");
    // A vector update of 24 MB: 8 us of bandwidth, less than a device's launch and results.
    let (pays, whole, split) = split_pays(&m, bytes(16.0, 24.0), &[bytes(8.0, 12.0), bytes(8.0, 12.0)]);
    assert!(!pays, "{whole} {split}");
    // A sparse product: 60 MB of matrix in row blocks, and the whole 8 MB vector on each part.
    let (pays, whole, split) = split_pays(&m, bytes(68.0, 76.0), &[bytes(38.0, 42.0), bytes(38.0, 42.0)]);
    assert!(!pays, "{whole} {split}");
    // Ten times larger it still does not: its exchange grows with its traffic, and 40 MB over a
    // 150 GB/s link takes longer than the 380 MB it saves at 3 TB/s.
    let (pays, whole, split) = split_pays(&m, bytes(680.0, 760.0), &[bytes(380.0, 420.0), bytes(380.0, 420.0)]);
    assert!(!pays && split > whole * 1.5, "{whole} {split}");
    // Without a peer link's figure, a split that must exchange never pays; one that need not,
    // does.
    let no_peer = Machine { peer_bytes_per_s: 0.0, ..m.clone() };
    assert!(!split_pays(&no_peer, bytes(512.0, 1024.0), &[bytes(256.1, 512.1), bytes(256.1, 512.1)]).0);
    assert!(split_pays(&no_peer, bytes(512.0, 1024.0), &[bytes(256.0, 512.0), bytes(256.0, 512.0)]).0);
}

#[test]
fn a_measured_peer_link_serves_every_devices_figures() {
    let mut model = Model::new(vec![machine(), machine()]);
    model.set_peer_link(40e9, 12e-6);
    for d in 0..2 {
        let m = model.machine(d).expect("a machine per device");
        assert_eq!((m.peer_bytes_per_s, m.peer_copy_s), (40e9, 12e-6));
    }
}

/// A device whose launches queue (a GPU's stream), for [`Model::timing`]; nothing runs on it.
struct QueueingDevice {
    sim: crate::runtime::sim::SimDevice,
    waited: bool,
}

impl crate::runtime::device::Device for QueueingDevice {
    fn name(&self) -> &str {
        "queueing"
    }
    crate::delegate_device_memory_to_sim!();
    fn copy_to_host(&mut self, alloc: DeviceAlloc, offset: u64, dst: &mut [u8]) {
        self.sim.copy_to_host(alloc, offset, dst)
    }
    fn launch(&mut self, launch: &Launch) -> Result<crate::runtime::device::LaunchOutcome, crate::runtime::device::KernelFault> {
        self.sim.launch(launch)
    }
    fn idle(&self) -> bool {
        self.waited
    }
    fn queues_launches(&self) -> bool {
        true
    }
}

/// A launch starts from idle when it is timed, when the host waited for the device, or when
/// the host enqueues it after the device is predicted to have finished the launches before
/// (run 34: hosts slower than their kernels); otherwise it queues. The whole idle extra is paid
/// after a wait or a long gap, a share of it after a short one (run 36: [`super::IDLE_SETTLE_S`]).
/// Devices whose launches do not queue (the simulator) never start one from idle on the
/// clock's word.
#[test]
fn a_launch_enqueued_after_the_device_drained_starts_from_idle() {
    use super::Timing::{self, Queued};
    const IDLE: Timing = Timing::IDLE;
    use std::time::{Duration, Instant};
    let mut model = Model::new(vec![machine()]);
    let gpu = QueueingDevice { sim: crate::runtime::sim::SimDevice::new(), waited: false };
    let t0 = Instant::now();
    let us = |n: u64| t0 + Duration::from_micros(n);
    // Nothing enqueued yet: the device is idle.
    assert_eq!(model.timing(0, false, &gpu, us(0)), IDLE);
    model.enqueued(0, us(0), IDLE, 10e-6);
    // Enqueued 4 us later, while the first runs until 10 us: queued, so it ends at 10 + 5.
    assert_eq!(model.timing(0, false, &gpu, us(4)), Queued);
    model.enqueued(0, us(4), Queued, 5e-6);
    assert_eq!(model.timing(0, false, &gpu, us(14)), Queued);
    // The host came back 1 us after the device finished both: from idle, paying the share of
    // the idle extra a 1 us gap says; 100 us after, all of it.
    let share = |t: Timing| t.idle_share();
    let after_1us = model.timing(0, false, &gpu, us(16));
    assert!((share(after_1us) - (1.0 - (-1e-6 / super::IDLE_SETTLE_S).exp())).abs() < 1e-9, "{after_1us:?}");
    assert!(share(after_1us) > 0.0 && share(after_1us) < 0.5);
    assert!(share(model.timing(0, false, &gpu, us(115))) > 0.999);
    model.enqueued(0, us(16), after_1us, 5e-6);
    // A timed launch, and one after the host waited for the device, pay the whole extra
    // whatever the clock says.
    assert_eq!(model.timing(0, true, &gpu, us(17)), IDLE);
    let waited = QueueingDevice { sim: crate::runtime::sim::SimDevice::new(), waited: true };
    assert_eq!(model.timing(0, false, &waited, us(17)), IDLE);
    // Another device has its own queue.
    assert_eq!(model.timing(1, false, &gpu, us(17)), IDLE);
    // The simulator runs each launch as it is made: never idle on the clock's word.
    let sim = crate::runtime::sim::SimDevice::new();
    assert_eq!(model.timing(0, false, &sim, us(1_000_000)), Queued);
}

/// `c[i] = a[i] + k` over `n` floats, 128 threads a block: `n` decides the work (the grid,
/// the guard), `k` only the values; `f` (a double) is in the grid when `float_grid`, else only
/// in the values.
fn add_scalar(float_grid: bool) -> GridKernel {
    let mut g = GridBuilder::new("add_k", [128, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let a = g.array_param("a", ScalarType::F32, &[]);
    let c = g.array_param("c", ScalarType::F32, &[]);
    let kp = g.scalar_param("k", ScalarType::I32);
    let fp = g.scalar_param("f", ScalarType::F64);
    let (i, guard) = g.one_thread_per_point(np);
    if float_grid {
        let f = g.param(fp);
        let blocks = g.cast(f, ScalarType::I32);
        g.grid_x(blocks);
    }
    let la = g.load(ArrayRef::Param(a), &[i], ScalarType::F32, Span::default());
    let k = g.param(kp);
    let kf = g.cast(k, ScalarType::F32);
    let f = g.param(fp);
    let ff = g.cast(f, ScalarType::F32);
    let sum = g.bin(BinaryOp::Add, la, kf);
    let value = g.bin(BinaryOp::Mul, sum, ff);
    let store = g.store(ArrayRef::Param(c), &[i], value);
    g.finish(vec![Stmt::If { cond: guard, then: vec![store], otherwise: vec![] }])
}

/// [`add_scalar`]'s params: `n` points, `a` and `c` in allocations 0 and 1.
fn add_scalar_params(n: i64, k: i64, f: f64) -> Vec<DeviceParam> {
    vec![
        DeviceParam::Value(ParamValue::Int(n)),
        DeviceParam::Array { alloc: DeviceAlloc(0), offset: 0 },
        DeviceParam::Array { alloc: DeviceAlloc(1), offset: 0 },
        DeviceParam::Value(ParamValue::Int(k)),
        DeviceParam::Value(ParamValue::Float(f)),
    ]
}

/// The shape of a launch holds the params that decide its work: an integer the grid or a
/// condition reads, a floating one only where the grid reads it; not an integer that only
/// changes values (an outer iteration passed in, NPB EP's `koff`).
#[test]
fn a_launch_shape_holds_the_params_that_decide_the_work_and_no_other() {
    let module = {
        let mut m = Module::default();
        m.grid_kernels.append(add_scalar(false));
        m.grid_kernels.append(add_scalar(true));
        m
    };
    let (values, grid) = (&module.grid_kernels[crate::ir::Handle::new(0)], &module.grid_kernels[crate::ir::Handle::new(1)]);
    let shape = |kernel: &GridKernel, n: i64, k: i64, f: f64| super::shape_scalars(&Launch::new(&module, kernel, add_scalar_params(n, k, f)));
    assert_eq!(shape(values, 512, 1, 0.5), shape(values, 512, 2, 0.5), "k changes values only");
    assert_eq!(shape(values, 512, 1, 0.5), shape(values, 512, 1, 0.25), "f changes values only");
    assert_ne!(shape(values, 512, 1, 0.5), shape(values, 256, 1, 0.5), "n decides the grid");
    assert_eq!(shape(grid, 512, 1, 4.0), shape(grid, 512, 9, 4.0));
    assert_ne!(shape(grid, 512, 1, 4.0), shape(grid, 512, 1, 2.0), "f decides this one's grid");
}

/// A launch of a shape already sampled takes its prediction, whatever its other params; a new
/// shape, or the same with other traffic, is sampled.
#[test]
fn a_kernel_is_sampled_once_per_shape() {
    let mut module = Module::default();
    module.grid_kernels.append(add_scalar(false));
    let kernel = &module.grid_kernels[crate::ir::Handle::new(0)];
    let host = zeroed_arrays(512);
    let view_of = views_of(&host);
    let at = |bytes: u64| super::Placement { device: 0, device_name: "sim", multiprocessors: 0, traffic: super::Traffic { bytes, resident: None }, host_view_of: &view_of, touches_upload: false, timing: super::Timing::Queued };
    let mut model = Model::bounded(vec![machine()], None, None);
    let mut steady = |n: i64, k: i64, bytes: u64| model.predict_steady(&Launch::new(&module, kernel, add_scalar_params(n, k, 1.0)), &at(bytes)).expect("predicted");
    let first = steady(512, 0, 4096);
    for k in 1..32 {
        assert_eq!(steady(512, k, 4096).work, first.work, "iteration {k}");
    }
    assert_eq!(model.sampling_cost().samples, 1, "32 launches of one shape, one sample");
    let mut steady = |n: i64, k: i64, bytes: u64| model.predict_steady(&Launch::new(&module, kernel, add_scalar_params(n, k, 1.0)), &at(bytes)).expect("predicted");
    let half = steady(256, 0, 2048);
    assert_eq!(half.work.counters.global_loads, 256);
    steady(512, 0, 8192);
    assert_eq!(model.sampling_cost().samples, 3, "another size, other traffic: sampled");
    assert!(model.sampling_cost().spent > std::time::Duration::ZERO);
}

/// A kernel of a new shape at every launch (a wavefront's) is sampled for its first
/// `MAX_SAMPLED_SHAPES` shapes only; the others go unpredicted at once, and stay so.
#[test]
fn a_kernel_of_many_shapes_is_sampled_for_a_bounded_number_of_them() {
    let mut module = Module::default();
    module.grid_kernels.append(add_scalar(false));
    let kernel = &module.grid_kernels[crate::ir::Handle::new(0)];
    let host = zeroed_arrays(512);
    let view_of = views_of(&host);
    let at = super::Placement { device: 0, device_name: "sim", multiprocessors: 0, traffic: super::Traffic { bytes: 4096, resident: None }, host_view_of: &view_of, touches_upload: false, timing: super::Timing::Queued };
    let mut model = Model::bounded(vec![machine()], None, None);
    let limit = super::MAX_SAMPLED_SHAPES;
    let outcomes: Vec<_> = (0..limit + 8).map(|n| model.predict_steady(&Launch::new(&module, kernel, add_scalar_params(1 + n as i64, 0, 1.0)), &at).err()).collect();
    assert!(outcomes[..limit].iter().all(Option::is_none), "{outcomes:?}");
    assert!(outcomes[limit..].iter().all(|o| *o == Some(super::Unpredicted::Shapes)), "{outcomes:?}");
    assert_eq!((model.sampling_cost().samples, model.sampling_cost().not_sampled), (limit as u64, 8));
    // A shape sampled before keeps its prediction.
    assert!(model.predict_steady(&Launch::new(&module, kernel, add_scalar_params(1, 0, 1.0)), &at).is_ok());
    assert_eq!(model.sampling_cost().samples, limit as u64);
}

/// Split shapes are taken once per kernel and sizes, for `MAX_SPLIT_SHAPES` sizes: a size
/// taken before becomes the latest again without being taken, and past the bound the latest
/// one taken stands for the others.
#[test]
fn split_shapes_are_taken_once_per_size_for_a_bounded_number_of_sizes() {
    let mut model = Model::new(vec![machine()]);
    let shape = |n: i64| super::SplitShape { key: vec![n], parts: Vec::new() };
    assert!(!model.recall_split_shape("k", &[1]), "nothing taken yet");
    model.set_split_shape("k".to_string(), shape(1));
    assert!(model.recall_split_shape("k", &[1]));
    for n in 2..=super::MAX_SPLIT_SHAPES as i64 {
        assert!(!model.recall_split_shape("k", &[n]), "size {n} is new");
        model.set_split_shape("k".to_string(), shape(n));
    }
    assert_eq!(model.split_shape("k").map(|s| s.key.clone()), Some(vec![super::MAX_SPLIT_SHAPES as i64]));
    assert!(model.recall_split_shape("k", &[1]));
    assert_eq!(model.split_shape("k").map(|s| s.key.clone()), Some(vec![1]), "the size taken before is the latest again");
    assert!(model.recall_split_shape("k", &[1000]), "past the bound: not taken");
    assert_eq!(model.split_shape("k").map(|s| s.key.clone()), Some(vec![1]));
    assert!(!model.recall_split_shape("other", &[1000]), "another kernel has its own");
}

/// A block that never ends (a loop without a condition), 1024 threads.
fn endless() -> GridKernel {
    let mut g = GridBuilder::new("endless", [1024, 1, 1]);
    let x = g.local("x", ScalarType::I32);
    let xv = g.get(x);
    let one = g.int(1);
    let next = g.bin(BinaryOp::Add, xv, one);
    let body = vec![Stmt::Assign { local: x, value: next }];
    g.finish(vec![Stmt::Loop { cond: None, test_first: true, body, continuing: Vec::new(), range: None }])
}

/// A sample stops at a block's statement budget, or sooner at its deadline; either way the
/// shape is not sampled again (it would take as long).
#[test]
fn a_sample_stops_at_its_deadline_or_its_statement_budget_and_stands_for_its_shape() {
    use std::time::Duration;
    let mut module = Module::default();
    module.grid_kernels.append(endless());
    let launch = Launch::new(&module, &module.grid_kernels[crate::ir::Handle::new(0)], Vec::new());
    let no_views = |_: DeviceAlloc| None;
    let at = super::Placement { device: 0, device_name: "sim", multiprocessors: 0, traffic: super::Traffic::default(), host_view_of: &no_views, touches_upload: false, timing: super::Timing::Queued };
    let mut unbounded = Model::bounded(vec![machine()], None, None);
    assert_eq!(unbounded.predict_steady(&launch, &at).err(), Some(super::Unpredicted::Statements));
    let mut bounded = Model::bounded(vec![machine()], Some(Duration::ZERO), None);
    for _ in 0..3 {
        assert_eq!(bounded.predict_steady(&launch, &at).err(), Some(super::Unpredicted::Deadline));
    }
    let cost = bounded.sampling_cost();
    assert_eq!((cost.samples, cost.unfinished, cost.not_sampled), (1, 1, 0));
    // Past the deadline by a look at the clock (64 statements) and the set-up, or by the time
    // the thread was taken away meanwhile; not by the block, which runs some 100 ms.
    assert!(cost.spent < Duration::from_millis(20), "{:?}", cost.spent);
}

/// The model's sampling time stays within its share of the run plus the allowance: a launch
/// is not sampled without room, a sample runs to the cap at most, and neither outcome stands
/// for the shape: a later launch, when the run has earned more room, samples it.
#[test]
fn the_cap_on_sampling_refuses_or_cuts_short_and_a_later_launch_tries_again() {
    use std::time::Duration;
    let mut module = Module::default();
    module.grid_kernels.append(endless());
    module.grid_kernels.append(multiply_add());
    let endless = Launch::new(&module, &module.grid_kernels[crate::ir::Handle::new(0)], Vec::new());
    let quick = Launch::new(&module, &module.grid_kernels[crate::ir::Handle::new(1)], multiply_add_params(512));
    let host = zeroed_arrays(512);
    let view_of = views_of(&host);
    let at = super::Placement { device: 0, device_name: "sim", multiprocessors: 0, traffic: super::Traffic::default(), host_view_of: &view_of, touches_upload: false, timing: super::Timing::Queued };
    // No allowance, and a run just started: no room. (A deadline longer than any room below,
    // so that only the cap cuts a sample short.)
    let mut model = Model::bounded(vec![machine()], Some(Duration::from_secs(10)), Some(Duration::ZERO));
    assert_eq!(model.predict_steady(&quick, &at).err(), Some(super::Unpredicted::TimeBudget));
    assert_eq!((model.sampling_cost().samples, model.sampling_cost().not_sampled, model.sampling_cost().spent), (0, 1, Duration::ZERO));
    // Half a second spent in the runtime, 10 ms of room: the quick launch is sampled now.
    model.note_busy(Duration::from_millis(500));
    assert!(model.predict_steady(&quick, &at).is_ok());
    // The endless block runs to the cap, which is not its deadline: not kept.
    let before = model.sampling_cost();
    assert_eq!(model.predict_steady(&endless, &at).err(), Some(super::Unpredicted::TimeBudget));
    let after = model.sampling_cost();
    assert_eq!((after.samples, after.not_sampled), (before.samples + 1, before.not_sampled + 1));
    let run = model.sampler.busy;
    // Past the cap by a look at the clock, or by the time the thread was taken away: the
    // other tests run beside this one, on a loaded machine for tens of milliseconds at
    // times. Far from the 10 s deadline all the same.
    assert!(after.spent <= run.mul_f64(super::SAMPLING_SHARE) + Duration::from_millis(100), "{:?} of {run:?}", after.spent);
    // No room left now; once cut short, it waits for room for its whole deadline, which a
    // longer run gives it.
    assert_eq!(model.predict_steady(&endless, &at).err(), Some(super::Unpredicted::TimeBudget));
    assert_eq!(model.sampling_cost().samples, after.samples, "refused: not run");
    model.note_busy(Duration::from_millis(200));
    assert_eq!(model.predict_steady(&endless, &at).err(), Some(super::Unpredicted::TimeBudget));
    assert_eq!(model.sampling_cost().samples, after.samples, "4 ms of room, under its 10 s deadline: not run");
    // 20 s of room: it runs to its own end, the statement budget.
    model.note_busy(Duration::from_secs(1000));
    assert_eq!(model.predict_steady(&endless, &at).err(), Some(super::Unpredicted::Statements));
}
