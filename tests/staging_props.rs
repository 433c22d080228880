//! Property test of shared-memory staging: randomly generated 1-D, 2-D and 3-D stencil kernels
//! (`out[p] = sum_k w_k * in[p + off_k]`, offsets in -3..=3 per dimension) and broadcast kernels
//! (`c[i] += a[k] * b[i + k*n]` over a sequential `k` loop, and the 2-D `c[j][i] += a[j][k] *
//! b[k][i]`), with sizes that are not multiples of
//! the block and random power-of-two block shapes, are compiled from C source text with
//! `StagingMode::Force`; the plain and every staged variant (one point per thread, the
//! coarsened one with 2 to 5 points per thread along x, and for 3-D stencils the streaming one
//! whose ring of planes slides over 2 to 5 points per thread along z) then run on the
//! simulator with the same random data and must leave bit-identical arrays behind (staging moves
//! reads into shared memory; it must not change a single value, nor read outside the arrays).
//! Forced staging also puts the written arrays each thread owns through tiles copied back (the
//! stencils' `out`, the products' `c`), and a fourth family writes rows per thread (column
//! writes) only, read-modify-write, or conditionally. A fifth writes box stencils with loops
//! over the neighbour offsets (`in[z + dz][y + dy][x + dx]`).

mod common;

use common::inprocess::{
    Elem, HostData, compile_source, kernels_in_function, launch_on_sim, pseudo_random_values, variants,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::Config;
use yosegi::opt::{PassConfig, StagingMode};

/// Halo width the generator allows on each side: offsets lie in `-HALO..=HALO`.
const HALO: i64 = 3;

/// Weights exact in binary, so a float and a double kernel print the same C literals.
const WEIGHTS: &[&str] = &["0.5", "-0.25", "1.0", "0.125", "2.0", "-1.5", "0.75", "-0.0625"];

#[derive(Clone, Debug)]
struct Stencil {
    /// Points per dimension, outermost first (the array is `in[N0][N1]..`); the loops run
    /// over `HALO..N-HALO` so every offset stays inside the array.
    sizes: Vec<i64>,
    /// Block shape, x (innermost dimension) first, as `PassConfig` takes it.
    block: Vec<u32>,
    /// Per tap: its weight (index into `WEIGHTS`) and offset per dimension, outermost first.
    taps: Vec<(usize, Vec<i64>)>,
    elem: Elem,
    seed: u64,
}

const LOOP_VARS: [&str; 3] = ["z", "y", "x"];

impl Stencil {
    fn dims(&self) -> usize {
        self.sizes.len()
    }

    fn source(&self) -> String {
        let ty = self.elem.c_name();
        let d = self.dims();
        let vars = &LOOP_VARS[3 - d..];
        let extents: String = self.sizes.iter().map(|n| format!("[{n}]")).collect();
        let mut text = format!("static {ty} in{extents};\nstatic {ty} out{extents};\n\nvoid stencil(void) {{\n");
        for (level, (var, n)) in vars.iter().zip(&self.sizes).enumerate() {
            let pragma = if level == 0 { "parallel loop" } else { "loop" };
            let indent = "    ".repeat(level + 1);
            text.push_str(&format!("{indent}#pragma acc {pragma}\n"));
            text.push_str(&format!("{indent}for (int {var} = {HALO}; {var} < {}; {var}++)\n", n - HALO));
        }
        let terms: Vec<String> = self
            .taps
            .iter()
            .map(|(w, offsets)| {
                let index: String = vars.iter().zip(offsets).map(|(v, o)| format!("[{v} + ({o})]")).collect();
                format!("{} * in{index}", WEIGHTS[*w])
            })
            .collect();
        let target: String = vars.iter().map(|v| format!("[{v}]")).collect();
        text.push_str(&format!("{}out{target} = {};\n}}\n", "    ".repeat(d + 1), terms.join(" + ")));
        text
    }

    fn config(&self) -> PassConfig {
        // The coarsened staged variant computes 2 to 5 points per thread along x, the
        // streaming one 2 to 5 along z.
        let points = 2 + (self.seed % 4) as u32;
        let streamed = 2 + (self.seed / 4 % 4) as u32;
        forced_config(&self.block, points, streamed)
    }

    fn host_data(&self) -> HostData {
        in_out_data(&self.sizes, self.elem, self.seed)
    }

    fn distinct_taps(&self) -> usize {
        let mut offsets: Vec<&Vec<i64>> = self.taps.iter().map(|(_, o)| o).collect();
        offsets.sort();
        offsets.dedup();
        offsets.len()
    }

    /// Bytes of the tile a block needs for `in`: per dimension the block's extent plus the
    /// spread of the offsets (the halo), one spare element per innermost row for padding.
    fn tile_bytes(&self) -> u64 {
        let dims = self.dims();
        let mut elements = 1u64;
        for d in 0..dims {
            let offsets = self.taps.iter().map(|(_, o)| o[d]);
            let halo = (offsets.clone().max().unwrap_or(0) - offsets.min().unwrap_or(0)) as u64;
            // `block` is x first; `d` counts from the outermost dimension.
            let extent = self.block[dims - 1 - d] as u64 + halo;
            elements *= if d == dims - 1 { extent + 1 } else { extent };
        }
        elements * self.elem.size() as u64
    }
}

/// Forced staging with `block` (x first) as the block shape of its rank, and the points per
/// thread of the coarsened (along x) and streaming (along z) variants.
fn forced_config(block: &[u32], points: u32, streamed: u32) -> PassConfig {
    let mut config = PassConfig {
        staging: StagingMode::Force,
        staged_points_per_thread: points,
        streamed_points_per_thread: streamed,
        ..PassConfig::default()
    };
    match block {
        [x] => config.block_threads = *x,
        [x, y] => config.block_2d = [*x, *y],
        [x, y, z] => config.block_3d = [*x, *y, *z],
        other => unreachable!("stencils have 1 to 3 dims, not {}", other.len()),
    }
    config
}

/// `in` of `sizes` with random values, `out` filled with -7: points the kernel must not write
/// keep that fill in both runs.
fn in_out_data(sizes: &[i64], elem: Elem, seed: u64) -> HostData {
    let points: i64 = sizes.iter().product();
    let mut data = HostData::default();
    data.arrays.insert("in".into(), elem.bytes(&pseudo_random_values(seed, points as usize)));
    data.arrays.insert("out".into(), elem.bytes(&vec![-7.0; points as usize]));
    data
}

/// A power of two `2^lo ..= 2^hi`.
fn power_of_two(lo: u32, hi: u32) -> impl Strategy<Value = u32> {
    (lo..=hi).prop_map(|e| 1u32 << e)
}

/// Block shapes, x first, with at most 1024 threads.
fn block_shape(dims: usize) -> BoxedStrategy<Vec<u32>> {
    match dims {
        1 => power_of_two(3, 10).prop_map(|x| vec![x]).boxed(),
        2 => (power_of_two(2, 6), power_of_two(1, 4)).prop_map(|(x, y)| vec![x, y]).boxed(),
        _ => (power_of_two(2, 5), power_of_two(1, 3), power_of_two(1, 2)).prop_map(|(x, y, z)| vec![x, y, z]).boxed(),
    }
}

/// Array extents (outermost first) whose loop trip `N - 2*HALO` covers one to `max_blocks`
/// blocks (`outer_blocks` along the outermost dimension) and is never a multiple of the block
/// along that dimension.
fn sizes_for(block: &[u32], max_blocks: u32, outer_blocks: u32) -> BoxedStrategy<Vec<i64>> {
    let per_dim: Vec<BoxedStrategy<i64>> = block
        .iter()
        .rev()
        .enumerate()
        .map(|(d, &b)| {
            let blocks = if d == 0 { outer_blocks } else { max_blocks };
            (0..blocks as i64, 1..b as i64).prop_map(move |(q, r)| q * b as i64 + r + 2 * HALO).boxed()
        })
        .collect();
    per_dim.boxed()
}

fn stencil(dims: usize) -> impl Strategy<Value = Stencil> {
    block_shape(dims).prop_flat_map(move |block| {
        // Simulator time grows with the points: fewer blocks per dim as the rank grows.
        let max_blocks = match dims {
            1 => 3,
            2 => 2,
            _ => 2,
        };
        // A 3-D stencil's z runs over up to 6 blocks, so that the streaming variant's ring of
        // planes wraps around several times within one block's points.
        let outer_blocks = if dims == 3 { 6 } else { max_blocks };
        let taps = proptest::collection::vec((0..WEIGHTS.len(), proptest::collection::vec(-HALO..=HALO, dims)), 2..=7);
        let elem = prop_oneof![Just(Elem::F32), Just(Elem::F64)];
        (sizes_for(&block, max_blocks, outer_blocks), Just(block), taps, elem, any::<u64>())
            .prop_map(|(sizes, block, taps, elem, seed)| Stencil { sizes, block, taps, elem, seed })
    })
}

fn any_stencil() -> impl Strategy<Value = Stencil> {
    prop_oneof![stencil(1), stencil(2), stencil(3)]
}

/// Whether a case's kernel must come with a staged variant (staging is forced).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StagedVariant {
    Required,
    /// The tile may not fit the budget: the pass may leave the kernel plain.
    Optional,
}

/// Compiles `source` with `config`, launches the plain variant of `function`'s one kernel and
/// every staged variant on `data`, and demands bit-identical arrays (and that each staged variant
/// reads its tile). `what` describes the case in failure messages. Returns the staged variants'
/// names.
fn compare_variants(
    source: &str,
    config: &PassConfig,
    function: &str,
    data: &HostData,
    staged_variant: StagedVariant,
    what: &str,
) -> Result<Vec<String>, TestCaseError> {
    let program = compile_source(&format!("{function}.c"), source, config);
    let module = &program.module;
    let kernels = kernels_in_function(module, function);
    prop_assert_eq!(kernels.len(), 1, "one kernel expected\n{}", source);
    let found = variants(module, kernels[0]);
    if staged_variant == StagedVariant::Required {
        prop_assert!(
            !found.staged.is_empty(),
            "no staged variant with --staging on for {} (plain notes: {:?})\n{}",
            what,
            module.grid_kernels[found.plain].variant.notes,
            source
        );
    }
    let plain = launch_on_sim(module, found.plain, data).map_err(TestCaseError::fail)?;
    let mut names = Vec::new();
    for staged in found.staged {
        let name = &module.grid_kernels[staged].name;
        let result = launch_on_sim(module, staged, data)
            .map_err(|e| TestCaseError::fail(format!("staged variant {name} of {what}: {e}\n{source}")))?;
        prop_assert!(result.counters.shared_accesses > 0, "staged variant {} of {} never reads its tile\n{}", name, what, source);
        prop_assert!(
            result.arrays == plain.arrays,
            "staged variant {} of {} leaves other values than the plain one\n{}",
            name,
            what,
            source
        );
        names.push(name.clone());
    }
    Ok(names)
}

fn check_stencil(case: &Stencil) -> Result<(), TestCaseError> {
    // Two distinct taps read elements of `in` more than once per block: with staging forced,
    // the group must be staged whenever its tile fits the block's shared-memory budget.
    let config = case.config();
    let budget = u64::from(config.shared.per_block());
    let staged_variant = if case.distinct_taps() >= 2 && case.tile_bytes() <= budget {
        StagedVariant::Required
    } else {
        StagedVariant::Optional
    };
    let what = format!(
        "a {}-D stencil of {} distinct taps, sizes {:?}, block {:?}, tile {} bytes of {}",
        case.dims(),
        case.distinct_taps(),
        case.sizes,
        case.block,
        case.tile_bytes(),
        budget
    );
    let names = compare_variants(&case.source(), &config, "stencil", &case.host_data(), staged_variant, &what)?;
    // A 3-D stencil with a halo along z also gets the streaming variant when `in`'s tile and
    // the written `out`'s (one element per thread; forced staging stages it too, and it may be
    // chosen first) both fit.
    let z_offsets = case.taps.iter().map(|(_, o)| o[0]);
    let z_halo = case.dims() == 3 && z_offsets.clone().max() != z_offsets.min();
    let out_tile = u64::from(case.block.iter().product::<u32>()) * case.elem.size() as u64;
    if staged_variant == StagedVariant::Required && z_halo && case.tile_bytes() + out_tile <= budget {
        let streaming = format!("_staged_z{}", config.streamed_points_per_thread);
        prop_assert!(names.iter().any(|n| n.ends_with(&streaming)), "no {} variant among {:?} for {}", streaming, names, what);
    }
    Ok(())
}

/// `c[i] += a[k] * b[i + k*n]` for `i < n`, `k < m`: every thread of a block reads all of `a`
/// (the seed's matrix-product kernel, Fig. 19); `m` sometimes exceeds what one tile holds, so
/// a staged variant must swap tiles of `a`.
#[derive(Clone, Debug)]
struct Broadcast {
    n: i64,
    m: i64,
    block: u32,
    elem: Elem,
    seed: u64,
}

impl Broadcast {
    fn source(&self) -> String {
        let ty = self.elem.c_name();
        format!(
            "void broadcast(int n, int m, const {ty} *restrict a, const {ty} *restrict b, {ty} *restrict c) {{\n\
             \x20   #pragma acc parallel loop copyin(a[0:m], b[0:n*m]) copy(c[0:n])\n\
             \x20   for (int i = 0; i < n; i++) {{\n\
             \x20       {ty} s = c[i];\n\
             \x20       for (int k = 0; k < m; k++) s += a[k] * b[i + k * n];\n\
             \x20       c[i] = s;\n\
             \x20   }}\n\
             }}\n"
        )
    }

    fn host_data(&self) -> HostData {
        let mut data = HostData::default();
        let values = |salt: u64, count: i64| self.elem.bytes(&pseudo_random_values(self.seed ^ salt, count as usize));
        data.arrays.insert("a".into(), values(1, self.m));
        data.arrays.insert("b".into(), values(2, self.n * self.m));
        data.arrays.insert("c".into(), values(3, self.n));
        data.ints.insert("n".into(), self.n);
        data.ints.insert("m".into(), self.m);
        data
    }
}

fn broadcast() -> impl Strategy<Value = Broadcast> {
    power_of_two(3, 8).prop_flat_map(|block| {
        let b = block as i64;
        // Mostly a small `m` over up to three blocks; sometimes an `m` whose 6000+ doubles exceed
        // what one tile holds (data swapping), then over one partial block to keep it quick.
        let shape = prop_oneof![
            5 => ((0..3i64, 1..b).prop_map(move |(q, r)| q * b + r), 1..200i64),
            1 => (1..b, 6000..6300i64),
        ];
        let elem = prop_oneof![Just(Elem::F32), Just(Elem::F64)];
        (shape, Just(block), elem, any::<u64>())
            .prop_map(|((n, m), block, elem, seed)| Broadcast { n, m, block, elem, seed })
    })
}

fn check_broadcast(case: &Broadcast) -> Result<(), TestCaseError> {
    let config = PassConfig { staging: StagingMode::Force, block_threads: case.block, ..PassConfig::default() };
    // Every thread of a block reads all of `a`: staging forced must stage it (in strips when
    // it does not fit).
    let what = format!("the broadcast kernel, n {}, m {}, block {}", case.n, case.m, case.block);
    compare_variants(&case.source(), &config, "broadcast", &case.host_data(), StagedVariant::Required, &what).map(|_| ())
}

/// `c[j][i] += a[j][k] * b[k][i]` over a sequential `k` loop on a 2-D grid: `a`'s rows are
/// shared by the threads of a block row, `b`'s columns by a block column; a long `k` loop makes
/// both tiles too large for one load (data swapping in two arrays at once).
#[derive(Clone, Debug)]
struct MatrixProduct {
    ni: i64,
    nj: i64,
    nk: i64,
    block: [u32; 2],
    elem: Elem,
    seed: u64,
}

impl MatrixProduct {
    fn source(&self) -> String {
        let ty = self.elem.c_name();
        let (ni, nj, nk) = (self.ni, self.nj, self.nk);
        format!(
            "static {ty} a[{nj}][{nk}];\nstatic {ty} b[{nk}][{ni}];\nstatic {ty} c[{nj}][{ni}];\n\n\
             void matmul(void) {{\n\
             \x20   #pragma acc parallel loop\n\
             \x20   for (int j = 0; j < {nj}; j++) {{\n\
             \x20       #pragma acc loop\n\
             \x20       for (int i = 0; i < {ni}; i++) {{\n\
             \x20           {ty} s = c[j][i];\n\
             \x20           for (int k = 0; k < {nk}; k++) s += a[j][k] * b[k][i];\n\
             \x20           c[j][i] = s;\n\
             \x20       }}\n\
             \x20   }}\n\
             }}\n"
        )
    }

    fn host_data(&self) -> HostData {
        let mut data = HostData::default();
        let values = |salt: u64, count: i64| self.elem.bytes(&pseudo_random_values(self.seed ^ salt, count as usize));
        data.arrays.insert("a".into(), values(1, self.nj * self.nk));
        data.arrays.insert("b".into(), values(2, self.nk * self.ni));
        data.arrays.insert("c".into(), values(3, self.nj * self.ni));
        data
    }
}

fn matrix_product() -> impl Strategy<Value = MatrixProduct> {
    (power_of_two(2, 5), power_of_two(1, 3)).prop_flat_map(|(bx, by)| {
        let (x, y) = (bx as i64, by as i64);
        let ni = (0..2i64, 1..x).prop_map(move |(q, r)| q * x + r);
        let nj = (0..2i64, 1..y).prop_map(move |(q, r)| q * y + r);
        // Short loops fit one tile; 300+ doubles of a block's rows and columns do not.
        let nk = prop_oneof![3 => 1..40i64, 1 => 300..340i64];
        let elem = prop_oneof![Just(Elem::F32), Just(Elem::F64)];
        (ni, nj, nk, elem, any::<u64>()).prop_map(move |(ni, nj, nk, elem, seed)| MatrixProduct {
            ni,
            nj,
            nk,
            block: [bx, by],
            elem,
            seed,
        })
    })
}

fn check_matrix_product(case: &MatrixProduct) -> Result<(), TestCaseError> {
    let config = PassConfig { staging: StagingMode::Force, block_2d: case.block, ..PassConfig::default() };
    // A block of more than one thread per row and column reads each element of its `a` rows
    // and `b` columns several times: forced staging must stage at least one of them.
    let staged_variant =
        if case.block[0] > 1 && case.block[1] > 1 { StagedVariant::Required } else { StagedVariant::Optional };
    let what = format!("the matrix product {}x{}x{}, block {:?}", case.nj, case.ni, case.nk, case.block);
    compare_variants(&case.source(), &config, "matmul", &case.host_data(), staged_variant, &what).map(|_| ())
}

/// A box stencil written with loops over the neighbour offsets (`for dz .. for dy .. for dx:
/// s += w(dz) * in[z + dz][y + dy][x + dx]`), the form the analysis folds into one thread dim
/// per array dim whose halo is the loop's range; per dim the offsets run over `lo..=hi`.
#[derive(Clone, Debug)]
struct BoxStencil {
    sizes: Vec<i64>,
    block: Vec<u32>,
    /// Per dim, outermost first: the offset loop's first and last value.
    ranges: Vec<(i64, i64)>,
    elem: Elem,
    seed: u64,
}

const OFFSET_VARS: [&str; 3] = ["dz", "dy", "dx"];

impl BoxStencil {
    fn source(&self) -> String {
        let ty = self.elem.c_name();
        let d = self.sizes.len();
        let vars = &LOOP_VARS[3 - d..];
        let offsets = &OFFSET_VARS[3 - d..];
        let extents: String = self.sizes.iter().map(|n| format!("[{n}]")).collect();
        let mut text = format!("static {ty} in{extents};\nstatic {ty} out{extents};\n\nvoid stencil(void) {{\n");
        for (level, (var, n)) in vars.iter().zip(&self.sizes).enumerate() {
            let pragma = if level == 0 { "parallel loop" } else { "loop" };
            let indent = "    ".repeat(level + 1);
            text.push_str(&format!("{indent}#pragma acc {pragma}\n"));
            text.push_str(&format!("{indent}for (int {var} = {HALO}; {var} < {}; {var}++) {{\n", n - HALO));
        }
        let inner = "    ".repeat(d + 1);
        text.push_str(&format!("{inner}{ty} s = 0.0;\n"));
        for (level, (off, (lo, hi))) in offsets.iter().zip(&self.ranges).enumerate() {
            text.push_str(&format!("{inner}{}for (int {off} = {lo}; {off} <= {hi}; {off}++)\n", "    ".repeat(level)));
        }
        let index: String = vars.iter().zip(offsets).map(|(v, o)| format!("[{v} + {o}]")).collect();
        let target: String = vars.iter().map(|v| format!("[{v}]")).collect();
        text.push_str(&format!("{inner}{}s += ({} + 0.25 * {}) * in{index};\n", "    ".repeat(d), WEIGHTS[(self.seed % 8) as usize], offsets[0]));
        text.push_str(&format!("{inner}out{target} = s;\n"));
        for level in (0..d).rev() {
            text.push_str(&format!("{}}}\n", "    ".repeat(level + 1)));
        }
        text.push_str("}\n");
        text
    }

    fn host_data(&self) -> HostData {
        in_out_data(&self.sizes, self.elem, self.seed)
    }
}

fn box_stencil() -> impl Strategy<Value = BoxStencil> {
    (1..=3usize).prop_flat_map(|dims| {
        block_shape(dims).prop_flat_map(move |block| {
            let outer_blocks = if dims == 3 { 4 } else { 2 };
            let range = (-HALO..=0i64, 0..=HALO).prop_map(|(lo, hi)| (lo, hi));
            let ranges = proptest::collection::vec(range, dims);
            let elem = prop_oneof![Just(Elem::F32), Just(Elem::F64)];
            (sizes_for(&block, 2, outer_blocks), Just(block), ranges, elem, any::<u64>())
                .prop_map(|(sizes, block, ranges, elem, seed)| BoxStencil { sizes, block, ranges, elem, seed })
        })
    })
}

fn check_box_stencil(case: &BoxStencil) -> Result<(), TestCaseError> {
    let config = forced_config(&case.block, 2 + (case.seed % 3) as u32, 2 + (case.seed / 3 % 3) as u32);
    let what = format!("a box stencil over offsets {:?}, sizes {:?}, block {:?}", case.ranges, case.sizes, case.block);
    // One reference sweeping a box of offsets: it is one group, staged whenever its tile fits.
    let tile: u64 = case
        .ranges
        .iter()
        .zip(case.block.iter().rev())
        .map(|((lo, hi), b)| u64::from(*b) + (hi - lo) as u64 + 1)
        .product::<u64>()
        * case.elem.size() as u64;
    let reused = case.ranges.iter().any(|(lo, hi)| hi > lo);
    let staged_variant = if reused && tile <= 20 * 1024 { StagedVariant::Required } else { StagedVariant::Optional };
    compare_variants(&case.source(), &config, "stencil", &case.host_data(), staged_variant, &what).map(|_| ())
}

/// Column writes: thread `i` runs along row `i` (`for j in lo..m-hi`), keeping a running
/// value from `in[i][j]`, and writes `out[i][j]` in one of three ways: only written (the tile is
/// copied back, never in), read and written (copied in and back), or written under a condition
/// (no tile: a conditional store keeps the array in global memory). The rows the loop skips at
/// both ends must keep `out`'s fill.
#[derive(Clone, Debug)]
struct ColumnWrites {
    n: i64,
    m: i64,
    skip: (i64, i64),
    block: u32,
    update: usize,
    elem: Elem,
    seed: u64,
}

const COLUMN_UPDATES: [&str; 3] = [
    "out[i][j] = run;",
    "out[i][j] = 0.5 * out[i][j] + run;",
    "if (j % 3 != 1) out[i][j] = run;",
];

impl ColumnWrites {
    fn source(&self) -> String {
        let ty = self.elem.c_name();
        let (n, m, (lo, hi)) = (self.n, self.m, self.skip);
        format!(
            "static {ty} in[{n}][{m}];\nstatic {ty} out[{n}][{m}];\n\n\
             void columns(void) {{\n\
             \x20   #pragma acc parallel loop gang vector vector_length({b})\n\
             \x20   for (int i = 0; i < {n}; i++) {{\n\
             \x20       {ty} run = 0.0;\n\
             \x20       for (int j = {lo}; j < {m} - {hi}; j++) {{\n\
             \x20           run = 0.75 * run + in[i][j];\n\
             \x20           {update}\n\
             \x20       }}\n\
             \x20   }}\n\
             }}\n",
            b = self.block,
            update = COLUMN_UPDATES[self.update]
        )
    }

    fn host_data(&self) -> HostData {
        let count = (self.n * self.m) as usize;
        let mut data = HostData::default();
        data.arrays.insert("in".into(), self.elem.bytes(&pseudo_random_values(self.seed, count)));
        data.arrays.insert("out".into(), self.elem.bytes(&pseudo_random_values(self.seed ^ 5, count)));
        data
    }
}

fn column_writes() -> impl Strategy<Value = ColumnWrites> {
    power_of_two(5, 7).prop_flat_map(|block| {
        let b = block as i64;
        let n = (0..3i64, 1..b).prop_map(move |(q, r)| q * b + r);
        let elem = prop_oneof![Just(Elem::F32), Just(Elem::F64)];
        (n, 1..24i64, (0..3i64, 0..3i64), 0..COLUMN_UPDATES.len(), elem, any::<u64>()).prop_map(move |(n, m, skip, update, elem, seed)| {
            ColumnWrites { n, m: m + skip.0 + skip.1, skip, block, update, elem, seed }
        })
    })
}

fn check_column_writes(case: &ColumnWrites) -> Result<(), TestCaseError> {
    let config = PassConfig { staging: StagingMode::Force, ..PassConfig::default() };
    let what = format!("column writes {:?} of {}x{}, block {}", COLUMN_UPDATES[case.update], case.n, case.m, case.block);
    let names = compare_variants(&case.source(), &config, "columns", &case.host_data(), StagedVariant::Optional, &what)?;
    // `in`'s column reads always get a tile when it fits (at most 128 x 30 doubles, 30 KiB).
    let fits = case.block as i64 * (case.m + 1) * case.elem.size() as i64 <= 28 * 1024 - 1024;
    prop_assert!(!fits || !names.is_empty(), "no staged variant for {}", what);
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: 28, ..Config::default() })]
    #[test]
    fn staged_stencils_compute_what_plain_ones_do(case in any_stencil()) {
        check_stencil(&case)?;
    }
}

proptest! {
    #![proptest_config(Config { cases: 12, ..Config::default() })]
    #[test]
    fn staged_broadcasts_compute_what_plain_ones_do(case in broadcast()) {
        check_broadcast(&case)?;
    }
}

proptest! {
    #![proptest_config(Config { cases: 8, ..Config::default() })]
    #[test]
    fn staged_matrix_products_compute_what_plain_ones_do(case in matrix_product()) {
        check_matrix_product(&case)?;
    }
}

proptest! {
    #![proptest_config(Config { cases: 16, ..Config::default() })]
    #[test]
    fn column_writes_copied_back_compute_what_plain_ones_do(case in column_writes()) {
        check_column_writes(&case)?;
    }
}

proptest! {
    #![proptest_config(Config { cases: 20, ..Config::default() })]
    #[test]
    fn box_stencils_over_offset_loops_compute_what_plain_ones_do(case in box_stencil()) {
        check_box_stencil(&case)?;
    }
}

/// The box generator's C text: one load swept by the offset loops, which the analysis folds
/// into one group with the loops' ranges as its halo.
#[test]
fn generated_box_stencils_sweep_one_reference_over_the_offset_loops() {
    let case = BoxStencil { sizes: vec![11, 40], block: vec![32, 4], ranges: vec![(-2, 1), (0, 3)], elem: Elem::F64, seed: 0 };
    let source = case.source();
    assert!(source.contains("for (int dy = -2; dy <= 1; dy++)"), "{source}");
    assert!(source.contains("for (int dx = 0; dx <= 3; dx++)"), "{source}");
    assert!(source.contains("s += (0.5 + 0.25 * dy) * in[y + dy][x + dx];"), "{source}");
    let program = compile_source("stencil.c", &source, &PassConfig { staging: StagingMode::Force, ..PassConfig::default() });
    let kernels = kernels_in_function(&program.module, "stencil");
    let found = variants(&program.module, kernels[0]);
    let notes = &program.module.grid_kernels[found.plain].variant.notes;
    assert!(notes.iter().any(|n| n.starts_with("in: 1 ref in[y+{-2..1}][x+{0..3}] forms one group, halo [-2..1]x[0..3]")), "{notes:?}");
    assert!(!found.staged.is_empty());
}

/// The generator itself: sizes are never multiples of the block, and the C text is what the
/// property claims to test (so a generator bug cannot make the property vacuous).
#[test]
fn generated_stencils_have_partial_blocks_and_the_stated_taps() {
    let case = Stencil {
        sizes: vec![13, 40],
        block: vec![32, 4],
        taps: vec![(0, vec![-1, 2]), (1, vec![0, 0])],
        elem: Elem::F32,
        seed: 1,
    };
    let source = case.source();
    assert!(source.contains("static float in[13][40];"), "{source}");
    assert!(source.contains("for (int y = 3; y < 10; y++)"), "{source}");
    assert!(source.contains("out[y][x] = 0.5 * in[y + (-1)][x + (2)] + -0.25 * in[y + (0)][x + (0)];"), "{source}");
    assert_eq!(case.config().block_2d, [32, 4]);
    assert_eq!(case.distinct_taps(), 2);
    // Halo 1 in y, 2 in x: (4 + 1) x (32 + 2 + 1) floats.
    assert_eq!(case.tile_bytes(), 5 * 35 * 4);

    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..64 {
        let case = any_stencil().new_tree(&mut runner).expect("a case").current();
        assert!(case.block.iter().product::<u32>() <= 1024, "{case:?}");
        for (n, b) in case.sizes.iter().rev().zip(&case.block) {
            let trip = n - 2 * HALO;
            assert!(trip >= 1, "{case:?}");
            assert!(trip % *b as i64 != 0, "trip {trip} is a multiple of block {b}: {case:?}");
        }
    }
}
