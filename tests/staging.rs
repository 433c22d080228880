//! Counter tests of shared-memory staging on the seed's examples (tests/staging_programs/):
//! each program must print what gcc's build prints with `--staging on` and `--staging off` (and
//! count fewer global transactions in `--stats` with staging on), and
//! its kernel's staged variant, launched in-process on the simulator beside the plain one with
//! the same data, must leave the same arrays and cut the global-memory transactions by what the
//! access pattern predicts (derived in each test's comment; the simulator counts distinct
//! 32-byte sectors per warp memory instruction, with no cache). The column-access example also
//! checks the padding of its tile: bank-conflict degree 32 before padding, 1 after.

mod common;

use common::inprocess::{HostData, LaunchResult, compile_source, kernels_in_function, launch_on_sim, variants};
use common::{Input, compare_outputs, gcc_build, repo_root, run, yosegi};
use std::path::PathBuf;
use yosegi::ir::{GridKernel, Handle, Module};
use yosegi::opt::{PassConfig, StagingMode};

fn program_path(name: &str) -> PathBuf {
    repo_root().join("tests").join("staging_programs").join(name)
}

/// The program prints the same as its gcc build under `--staging on` and `--staging off`, and
/// the runtime's `--stats` count fewer global transactions with staging on (the staged variant
/// ran: the in-process tests below say by how much).
fn check_output_against_gcc(name: &str) {
    let path = program_path(name);
    let scratch = tempfile::tempdir().expect("temp dir");
    let reference = run(std::process::Command::new(gcc_build(std::slice::from_ref(&path), scratch.path())), Input::Nothing);
    assert_eq!(reference.code(), Some(0), "{}", reference.describe());
    let mut transactions = Vec::new();
    for staging in ["on", "off"] {
        let mut cmd = yosegi();
        cmd.args(["run", "--device", "sim", "--stats", "--staging", staging]).arg(&path);
        let actual = run(cmd, Input::Nothing);
        assert_eq!(actual.code(), Some(0), "{name} --staging {staging}\n{}", actual.describe());
        if let Err(mismatch) = compare_outputs(&reference.stdout, &actual.stdout, 0.0) {
            panic!("{name} --staging {staging}: {mismatch}\n--- gcc ---\n{}\n--- yosegi ---\n{}", reference.stdout, actual.stdout);
        }
        let count = stats_counter(&actual.stderr, "global memory transactions")
            .unwrap_or_else(|| panic!("{name}: no global transaction count in --stats\n{}", actual.stderr));
        transactions.push((staging, count));
    }
    let (on, off) = (transactions[0].1, transactions[1].1);
    assert!(on < off, "{name}: {on} global transactions with --staging on, {off} with off: the staged variant did not run");
}

/// The number at the end of the first `--stats` line starting with `label`.
fn stats_counter(report: &str, label: &str) -> Option<u64> {
    let line = report.lines().find(|l| l.trim_start().starts_with(label))?;
    line.split_whitespace().last()?.parse().ok()
}

/// The plain and the staged variant of `function`'s kernel, each launched once on `data`.
struct PlainAndStaged {
    plain: LaunchResult,
    staged: LaunchResult,
    module: Module,
    /// The staged variant that ran (the first, when the pass made several).
    staged_kernel: Handle<GridKernel>,
    plain_kernel: Handle<GridKernel>,
}

fn launch_both(name: &str, function: &str, config: &PassConfig, data: &HostData) -> PlainAndStaged {
    let source = std::fs::read_to_string(program_path(name)).expect("program is readable");
    let program = compile_source(name, &source, config);
    let module = program.module;
    let kernels = kernels_in_function(&module, function);
    assert_eq!(kernels.len(), 1, "{name}: one kernel in `{function}`");
    let found = variants(&module, kernels[0]);
    assert!(
        !found.staged.is_empty(),
        "{name}: with --staging on the kernel of `{function}` must have a staged variant (notes of the plain one: {:?})",
        module.grid_kernels[found.plain].variant.notes
    );
    let staged_kernel = found.staged[0];
    let plain = launch_on_sim(&module, found.plain, data).expect("plain variant runs");
    let staged = launch_on_sim(&module, staged_kernel, data).expect("staged variant runs");
    assert!(plain.arrays == staged.arrays, "{name}: the staged variant leaves other values than the plain one");
    assert!(staged.counters.shared_accesses > 0, "{name}: the staged variant never reads shared memory");
    assert!(staged.counters.barriers > 0, "{name}: a staged variant waits for its tile at a barrier");
    let plain_kernel = found.plain;
    PlainAndStaged { plain, staged, module, staged_kernel, plain_kernel }
}

fn forced() -> PassConfig {
    PassConfig { staging: StagingMode::Force, ..PassConfig::default() }
}

fn f64_bytes(values: impl Iterator<Item = f64>) -> Vec<u8> {
    values.flat_map(|v| v.to_le_bytes()).collect()
}
fn f32_bytes(values: impl Iterator<Item = f32>) -> Vec<u8> {
    values.flat_map(|v| v.to_le_bytes()).collect()
}
fn i32_bytes(values: impl Iterator<Item = i32>) -> Vec<u8> {
    values.flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn diffusion_prints_what_gcc_prints_staged_or_not() {
    check_output_against_gcc("diffusion3.c");
}

/// `out[i] = (in[i-1] + in[i] + in[i+1]) / 3` for `1 <= i < n-1`, doubles, blocks of 256.
/// Plain, per warp: the three loads touch 8 + 9 + 9 sectors (one aligned, two straddling a
/// sector), the store 9: 35. Staged, per block of 8 warps: the tile of 258 doubles is 65 sectors
/// read once, the stores 8 x 9 = 72: 137 against 8 x 35 = 280, a factor of 2.04. Asserted: 1.8.
#[test]
fn diffusion_halo_tile_halves_global_transactions() {
    let n = 8192usize;
    let mut data = HostData::default();
    data.arrays.insert("in".into(), f64_bytes((0..n).map(|i| ((i * 37) % 101) as f64 / 101.0)));
    data.arrays.insert("out".into(), f64_bytes((0..n).map(|_| 0.0)));
    data.ints.insert("n".into(), n as i64);
    let run = launch_both("diffusion3.c", "diffuse", &forced(), &data);
    let (plain, staged) = (run.plain.counters.global_transactions, run.staged.counters.global_transactions);
    assert!(
        plain as f64 >= 1.8 * staged as f64,
        "1-D diffusion: {plain} global transactions plain, {staged} staged; want a drop of at least 1.8x"
    );
}

#[test]
fn matrix_product_prints_what_gcc_prints_staged_or_not() {
    check_output_against_gcc("matvec.c");
}

/// `c[i] += a[k] * b[i + k*n]`, floats, n = 2048 (8 blocks of 256, 64 warps), m = 512. Plain,
/// per warp and k: `c` load 4 sectors, `a[k]` 1 (a broadcast), `b` 4, `c` store 4. Staging `a`
/// removes the broadcast, 64 x 512 = 32768 sectors, and adds its tile loads, m / 8 = 64 sectors
/// per block, 512 in all: a drop of 32256. Asserted: at least 0.9 x 32768. (`b` and `c` are read
/// once per element and stay in global memory, so the total falls by only ~8%.)
#[test]
fn matrix_product_stages_the_vector_every_thread_reads() {
    let (n, m) = (2048usize, 512usize);
    let mut data = HostData::default();
    data.arrays.insert("a".into(), f32_bytes((0..m).map(|k| (k % 13) as f32 * 0.125)));
    data.arrays.insert("b".into(), f32_bytes((0..n * m).map(|j| (j % 17) as f32 * 0.0625)));
    data.arrays.insert("c".into(), f32_bytes((0..n).map(|_| 1.0)));
    data.ints.insert("n".into(), n as i64);
    data.ints.insert("m".into(), m as i64);
    let run = launch_both("matvec.c", "matvec", &forced(), &data);
    let (plain, staged) = (run.plain.counters.global_transactions, run.staged.counters.global_transactions);
    let warps = (n / 32) as u64;
    let broadcast_sectors = warps * m as u64;
    assert!(
        plain >= staged + broadcast_sectors * 9 / 10,
        "matrix product: {plain} global transactions plain, {staged} staged; staging `a` must save most of its {broadcast_sectors} broadcast sectors"
    );
    let staged_kernel = &run.module.grid_kernels[run.staged_kernel];
    assert!(
        staged_kernel.shared.iter().any(|s| s.name.starts_with('a')),
        "the staged array is `a`, the one every thread reads: {:?}",
        staged_kernel.shared
    );
}

#[test]
fn histogram_prints_what_gcc_prints_staged_or_not() {
    check_output_against_gcc("histogram_swap.c");
}

/// 256 bins, one block of 256 threads (8 warps); each thread scans all LEN = 9000 ints. Plain:
/// every warp reads `data[k]` as a broadcast, 1 sector per k: 72000, plus 32 for the `hist`
/// stores. Staged: the block reads `data` once, 9000 x 4 / 32 = 1125 sectors, plus 32: a factor
/// of 62. Asserted: 20, and the tile must be smaller than `data` (36000 bytes do not fit the
/// 28 KiB a block may stage), so the scan is strip-mined with a barrier pair per strip.
#[test]
fn histogram_swaps_data_tiles_through_shared_memory() {
    const LEN: usize = 9000;
    const BINS: usize = 256;
    let mut x: u32 = 12345;
    let values: Vec<i32> = (0..LEN)
        .map(|_| {
            x = x.wrapping_mul(1103515245).wrapping_add(12345);
            ((x >> 8) % BINS as u32) as i32
        })
        .collect();
    let mut data = HostData::default();
    data.arrays.insert("data".into(), i32_bytes(values.iter().copied()));
    data.arrays.insert("hist".into(), i32_bytes((0..BINS).map(|_| -1)));
    let run = launch_both("histogram_swap.c", "histogram", &forced(), &data);
    let hist: Vec<i32> = run.staged.arrays["hist"].chunks(4).map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
    assert_eq!(hist.iter().sum::<i32>(), LEN as i32, "every element lands in one bin");
    let (plain, staged) = (run.plain.counters.global_transactions, run.staged.counters.global_transactions);
    assert!(plain >= 20 * staged, "histogram: {plain} global transactions plain, {staged} staged; want a drop of at least 20x");
    let staged_kernel = &run.module.grid_kernels[run.staged_kernel];
    let tile_bytes: u64 = staged_kernel
        .shared
        .iter()
        .map(|s| s.dims.iter().map(|&d| d as u64).product::<u64>() * s.elem.size_bytes() as u64)
        .sum();
    assert!(tile_bytes < (LEN * 4) as u64, "the tile ({tile_bytes} bytes) cannot hold all of `data`: it must be swapped");
    assert!(run.staged.counters.barriers >= 4, "at least two strips, a barrier pair each: {} barriers", run.staged.counters.barriers);
}

#[test]
fn column_sums_print_what_gcc_prints_staged_or_not() {
    check_output_against_gcc("rowsum64.c");
}

/// `A[N][64]` floats, thread i sums row i, blocks of 64 (the program's `vector_length(64)`).
/// Plain, per warp and j: 32 lanes read 32 different rows, 32 sectors: 32 warps x 64 x 32 =
/// 65536, plus 128 for the `rowsum` stores. Staged: each block reads its 64 x 64 tile once,
/// 512 sectors, 8192 in all, plus 128: a factor of 7.9. Asserted: 6.
/// Banks: a warp reads the tile's column j, lanes 64 words apart: unpadded, every lane is in bank
/// j mod 32 (degree 32); rows padded to 65 words put lane t in bank (t + j) mod 32 (degree 1).
/// The degree-1 assertion needs the padding pass.
#[test]
fn column_access_tile_is_staged_and_padded_conflict_free() {
    const N: usize = 1024;
    let mut data = HostData::default();
    data.arrays.insert("A".into(), f32_bytes((0..N * 64).map(|e| ((e / 64 + 3 * (e % 64)) % 29) as f32 * 0.25)));
    data.arrays.insert("rowsum".into(), f32_bytes((0..N).map(|_| 0.0)));
    let run = launch_both("rowsum64.c", "rowsums", &forced(), &data);
    let (plain, staged) = (run.plain.counters.global_transactions, run.staged.counters.global_transactions);
    assert!(plain >= 6 * staged, "column access: {plain} global transactions plain, {staged} staged; want a drop of at least 6x");
    assert_eq!(run.plain.counters.bank_conflict_max_degree, 0, "the plain variant uses no shared memory");

    // Before padding: the same staged kernel with its tile rows cut back to the 64 words the
    // footprint needs (what the staging pass alone makes) conflicts 32 ways.
    let staged_handle = run.staged_kernel;
    let mut unpadded = run.module.clone();
    for tile in &mut unpadded.grid_kernels[staged_handle].shared {
        if let [_, row] = tile.dims.as_mut_slice() {
            *row = 64;
        }
    }
    let before = launch_on_sim(&unpadded, staged_handle, &data).expect("unpadded staged variant runs");
    assert_eq!(before.arrays, run.plain.arrays, "the unpadded tile computes the same sums");
    assert_eq!(before.counters.bank_conflict_max_degree, 32, "an unpadded [64][64] float tile read by columns");

    assert_eq!(
        run.staged.counters.bank_conflict_max_degree, 1,
        "after padding, the column reads of the staged tile must be conflict-free (notes: {:?})",
        run.module.grid_kernels[staged_handle].variant.notes
    );
}

#[test]
fn seven_point_heat_prints_what_gcc_prints_staged_or_not() {
    check_output_against_gcc("heat7.c");
}

/// `out[z][y][x]` from `in`'s seven neighbours, floats, 32 x 16 x 64 points, blocks of 32x4x2.
/// The one-point staged variant copies a [4][6][34] tile per block of 2 planes: 24 rows of 34
/// floats (136 B, 5 or 6 sectors each) for 2 x 4 rows of points. The streaming variant (8 points
/// per thread along z) copies per point only its 2 new planes, 12 rows, plus 2 halo planes once
/// per 8 points: about half the tile sectors; the stores (5 sectors per row of 64 floats
/// starting at x = 1) are the same in both. Asserted: at least 1.3x fewer transactions overall,
/// and the same bits as the plain variant.
#[test]
fn streaming_ring_copies_fewer_planes_than_a_tile_per_block() {
    let (nz, ny, nx) = (34usize, 18usize, 66usize);
    let source = std::fs::read_to_string(program_path("heat7.c")).expect("program is readable");
    let program = compile_source("heat7.c", &source, &forced());
    let module = program.module;
    let kernels = kernels_in_function(&module, "heat");
    let found = variants(&module, kernels[0]);
    let named = |suffix: &str| {
        *found
            .staged
            .iter()
            .find(|&&h| module.grid_kernels[h].name.ends_with(suffix))
            .unwrap_or_else(|| panic!("no {suffix} variant among {:?}", found.staged.iter().map(|&h| &module.grid_kernels[h].name).collect::<Vec<_>>()))
    };
    let (one_point, streaming) = (named("_staged"), named("_staged_z8"));
    let mut data = HostData::default();
    data.arrays.insert("in".into(), f32_bytes((0..nz * ny * nx).map(|e| ((e * 29 + e / nx * 13) % 31) as f32 * 0.125 + 0.5)));
    data.arrays.insert("out".into(), f32_bytes((0..nz * ny * nx).map(|_| -1.0)));
    let plain = launch_on_sim(&module, found.plain, &data).expect("plain variant runs");
    let tile = launch_on_sim(&module, one_point, &data).expect("one-point staged variant runs");
    let ring = launch_on_sim(&module, streaming, &data).expect("streaming variant runs");
    assert!(tile.arrays == plain.arrays, "the one-point staged variant leaves other values than the plain one");
    assert!(ring.arrays == plain.arrays, "the streaming variant leaves other values than the plain one");
    assert!(ring.counters.shared_accesses > 0, "the streaming variant reads its ring");
    let (per_block, sliding) = (tile.counters.global_transactions, ring.counters.global_transactions);
    assert!(
        per_block as f64 >= 1.3 * sliding as f64,
        "3-D stencil: {per_block} global transactions with a tile per block, {sliding} with the sliding ring; want a drop of at least 1.3x"
    );
}

#[test]
fn column_writes_print_what_gcc_prints_staged_or_not() {
    check_output_against_gcc("rowscale32.c");
}

/// `A`, `B`, `C` are `[1000][32]` floats, thread i reads row i of `A`, reads and writes row i of
/// `B` and writes row i of `C`, blocks of 64 (16 blocks, 32 warps, the last block 40 rows).
/// Plain, per warp and j: 32 lanes in 32 rows, a sector each, for the `A` load, the `B` load,
/// the `B` store and the `C` store: 4 x 32 x 32 x 32 = 131072 sectors (128000 with the last
/// warps' 8 idle lanes). Staged, each block copies its `A` and `B` rows in and its `B` and `C`
/// rows back, 64 x 32 floats = 256 sectors per copy: 4 x 256 x 16 = 16384 (16000): a factor of
/// 8. Asserted: 6. The tiles' column accesses are padded to bank degree 1, and `C`'s copy-back
/// does not copy it in first (nothing reads it, every element is written).
#[test]
fn column_writes_go_back_through_a_tile_coalesced() {
    const N: usize = 1000;
    let mut data = HostData::default();
    data.arrays.insert("A".into(), f32_bytes((0..N * 32).map(|e| ((e / 32 + 3 * (e % 32)) % 29) as f32 * 0.25)));
    data.arrays.insert("B".into(), f32_bytes((0..N * 32).map(|e| ((7 * (e / 32) + e % 32) % 13) as f32 * 0.5)));
    data.arrays.insert("C".into(), f32_bytes((0..N * 32).map(|_| -1.0)));
    let run = launch_both("rowscale32.c", "rowscale", &forced(), &data);
    let (plain, staged) = (run.plain.counters.global_transactions, run.staged.counters.global_transactions);
    assert!(plain >= 6 * staged, "column writes: {plain} global transactions plain, {staged} staged; want a drop of at least 6x");
    assert_eq!(run.staged.counters.bank_conflict_max_degree, 1, "padded tiles");
    let kernel = &run.module.grid_kernels[run.staged_kernel];
    assert_eq!(kernel.variant.staged_params.len(), 3, "A, B and C: {:?}", kernel.variant.notes);
    let notes = &run.module.grid_kernels[run.plain_kernel].variant.notes;
    for line in [
        "staged C (C[i][j]) as tile [64][32] (8192 B per block), copied back after the last write",
        "staged B (B[i][j]) as tile [64][32] (8192 B per block), copied in and back after the last write (the kernel reads and writes it)",
    ] {
        assert!(notes.iter().any(|n| n == line), "missing {line:?} in {notes:?}");
    }
}

/// The notes of the plain variant of the one kernel in `function` of `source`, staging forced.
fn forced_notes(source: &str, function: &str) -> Vec<String> {
    let program = compile_source("written.c", source, &forced());
    let kernels = kernels_in_function(&program.module, function);
    assert_eq!(kernels.len(), 1, "one kernel in\n{source}");
    let found = variants(&program.module, kernels[0]);
    program.module.grid_kernels[found.plain].variant.notes.clone()
}

/// A written array goes through a tile only when each of its elements belongs to one thread;
/// otherwise the kernel keeps it in global memory and says why.
#[test]
fn written_arrays_are_staged_only_when_each_element_belongs_to_one_thread() {
    let kernel = |body: &str| {
        format!(
            "static float in[64][16];\nstatic float out[64][16];\nstatic float flat[1024];\n\
             void k(void) {{\n    #pragma acc parallel loop\n    for (int i = 1; i < 63; i++) {{\n{body}\n    }}\n}}\n"
        )
    };
    let cases = [
        ("        for (int j = 0; j < 16; j++) if (in[i][j] > 0.0f) out[i][j] = 1.0f;", "out: not staged: the kernel writes it and it is stored to conditionally (under if)"),
        (
            "        #pragma acc atomic update\n        out[i][0] += 1.0f;",
            "out: not staged: the kernel writes it and it is updated atomically",
        ),
        (
            "        for (int j = 0; j < 16; j++) { out[i][j] = in[i][j]; out[i][0] = 2.0f; }",
            "out: not staged: the kernel writes it and its accesses are at different elements",
        ),
        (
            "        for (int j = 0; j < 16; j++) flat[i * 16 + j] = in[i][j];",
            "flat: not staged: the kernel writes it and an index combines two variables in one dim (linearised)",
        ),
    ];
    for (body, why) in cases {
        let source = kernel(body);
        let notes = forced_notes(&source, "k");
        assert!(notes.iter().any(|n| n == why), "missing {why:?} in {notes:?}\n{source}");
        assert!(!notes.iter().any(|n| n.starts_with("staged out") || n.starts_with("staged flat")), "{notes:?}\n{source}");
    }
    // Rows i and i + 32 of a loop that stops at 32: no two iterations write one row, but each
    // thread writes a row a block's tile of rows i would not hold.
    let halo = "static float in[64][16];\nstatic float out[64][16];\nvoid k(void) {\n    #pragma acc parallel loop\n    \
                for (int i = 1; i < 32; i++)\n        for (int j = 0; j < 16; j++) { out[i][j] = in[i][j]; out[i + 32][j] = in[i][j]; }\n}\n";
    let notes = forced_notes(halo, "k");
    let why = "out: not staged: the kernel writes it and threads read or write each other's elements (a halo along a mapped dim)";
    assert!(notes.iter().any(|n| n == why), "missing {why:?} in {notes:?}");
    // 2-D: a row written by the whole y extent of a block is shared by its threads (the same
    // value from every iteration, so the loop is no race and stays 2-D).
    let shared = "static float in[64][64];\nstatic float row[64];\nvoid k(void) {\n    #pragma acc parallel loop collapse(2)\n    \
                  for (int j = 0; j < 64; j++)\n        for (int i = 0; i < 64; i++)\n            row[i] = 2.0f;\n}\n";
    let notes = forced_notes(shared, "k");
    let why = "row: not staged: the kernel writes it and threads of a block share its elements (each element must belong to one thread)";
    assert!(notes.iter().any(|n| n == why), "missing {why:?} in {notes:?}");
    // Owned per thread: staged, copied back only (every element written, none read).
    let notes = forced_notes(&kernel("        for (int j = 0; j < 16; j++) out[i][j] = (float)(i * j);"), "k");
    assert!(notes.iter().any(|n| n == "staged out (out[i][j]) as tile [256][16] (16384 B per block), copied back after the last write"), "{notes:?}");
}
