//! Padding tests: grid kernels built by hand, run on the simulator before and after the pass
//! (same results, the counters' bank-conflict degree is the one the pass computed).

use super::*;
use crate::diag::Span;
use crate::ir::{Axis, Block, LoopRange, Module};
use crate::runtime::device::{Device, DeviceParam, Launch};
use crate::runtime::sim::SimDevice;
use crate::runtime::stats::DeviceCounters;
use crate::runtime::testing::GridBuilder;

/// Runs `kernel` with one array param per input (copied in and back).
fn run_on_sim(kernel: &GridKernel, inputs: &[Vec<u8>]) -> (Vec<Vec<u8>>, DeviceCounters) {
    let mut module = Module::default();
    let handle = module.grid_kernels.append(kernel.clone());
    let mut device = SimDevice::new();
    let mut params = Vec::new();
    let mut allocs = Vec::new();
    for bytes in inputs {
        let a = device.allocate(bytes.len() as u64);
        device.copy_to_device(a, 0, bytes);
        allocs.push((a, bytes.len()));
        params.push(DeviceParam::Array { alloc: a, offset: 0 });
    }
    let outcome = device
        .launch(&Launch::new(&module, &module.grid_kernels[handle], params))
        .expect("the test kernel does not fault");
    let arrays = allocs
        .into_iter()
        .map(|(a, len)| {
            let mut out = vec![0; len];
            device.copy_to_host(a, 0, &mut out);
            out
        })
        .collect();
    (arrays, outcome.counters)
}

/// `for (var = start; var < end; var++) body`, with its range.
fn counted(g: &mut GridBuilder, var: Handle<Local>, start: i64, end: i64, body: Block) -> Vec<Stmt> {
    let start = g.int(start);
    let end = g.int(end);
    let v = g.get(var);
    let cond = g.bin(BinaryOp::Lt, v, end);
    let one = g.int(1);
    let next = g.bin(BinaryOp::Add, v, one);
    vec![
        Stmt::Assign { local: var, value: start },
        Stmt::Loop {
            cond: Some(cond),
            test_first: true,
            body,
            continuing: vec![Stmt::Assign { local: var, value: next }],
            range: Some(LoopRange { var, start, end, step: 1 }),
        },
    ]
}

/// Which way the second phase of [`tile_kernel`] reads the tile.
#[derive(Clone, Copy)]
enum ReadOrder {
    /// `A[threadIdx.x][j]`: each thread walks its own row (lanes a row apart).
    Columns,
    /// `A[r][threadIdx.x]`: the warp reads consecutive elements of one row.
    Rows,
}

/// Block of 32 threads, `elem A[32][64]` in shared memory: the block copies `in` into the tile
/// row by row (`A[r][k*32 + tid] = in[r][k*32 + tid]`), then writes `out[r][c] = A[..][..] + 1`
/// reading the tile in `order`.
fn tile_kernel(elem: ScalarType, order: ReadOrder) -> GridKernel {
    const ROWS: i64 = 32;
    const COLS: i64 = 64;
    let mut g = GridBuilder::new("tile", [32, 1, 1]);
    let input = g.array_param("in", elem, &[COLS]);
    let output = g.array_param("out", elem, &[COLS]);
    let tile = g.shared("A", elem, &[ROWS as u32, COLS as u32]);
    let tid_local = g.local("t", ScalarType::I32);
    let tid_value = g.tid();
    let r = g.local("r", ScalarType::I32);
    let k = g.local("k", ScalarType::I32);
    let j = g.local("j", ScalarType::I32);

    // Copy phase: rows, 32 consecutive elements per warp access.
    let re = g.get(r);
    let ke = g.get(k);
    let t = g.get(tid_local);
    let k32 = g.int(32);
    let base = g.bin(BinaryOp::Mul, ke, k32);
    let col = g.bin(BinaryOp::Add, base, t);
    let value = g.load(ArrayRef::Param(input), &[re, col], elem, Span::default());
    let copy = g.store(ArrayRef::Shared(tile), &[re, col], value);
    let inner = counted(&mut g, k, 0, COLS / 32, vec![copy]);
    let copy_loops = counted(&mut g, r, 0, ROWS, inner);

    // Read phase.
    let je = g.get(j);
    let t = g.get(tid_local);
    let (row, column) = match order {
        ReadOrder::Columns => (t, je),
        ReadOrder::Rows => (je, t),
    };
    let read = g.load(ArrayRef::Shared(tile), &[row, column], elem, Span::default());
    let one_int = g.int(1);
    let one = g.cast(one_int, elem);
    let plus = g.bin(BinaryOp::Add, read, one);
    let write = g.store(ArrayRef::Param(output), &[row, column], plus);
    let read_end = match order {
        ReadOrder::Columns => COLS,
        ReadOrder::Rows => ROWS,
    };
    let read_loop = counted(&mut g, j, 0, read_end, vec![write]);

    let mut block = vec![Stmt::Assign { local: tid_local, value: tid_value }];
    block.extend(copy_loops);
    block.push(Stmt::Barrier);
    block.extend(read_loop);
    g.finish(block)
}

fn input_bytes(elem: ScalarType) -> Vec<u8> {
    let n = 32 * 64;
    match elem {
        ScalarType::F64 => (0..n).flat_map(|x| (x as f64 * 0.5).to_le_bytes()).collect(),
        _ => (0..n).flat_map(|x| (x as f32 * 0.5).to_le_bytes()).collect(),
    }
}

/// Runs the tile kernel before and after the pass; returns the report, the notes and the
/// counters' max degree before and after.
fn pad_and_compare(elem: ScalarType, order: ReadOrder) -> (GridKernel, PaddingReport, u64, u64) {
    let plain = tile_kernel(elem, order);
    let mut padded = plain.clone();
    let report = pad_shared_arrays(&mut padded);
    let inputs = [input_bytes(elem), vec![0; input_bytes(elem).len()]];
    let (plain_out, plain_counters) = run_on_sim(&plain, &inputs);
    let (padded_out, padded_counters) = run_on_sim(&padded, &inputs);
    assert_eq!(plain_out, padded_out, "padding changed the kernel's results");
    assert_ne!(plain_out[1], inputs[1], "the kernel wrote its output");
    (padded, report, plain_counters.bank_conflict_max_degree, padded_counters.bank_conflict_max_degree)
}

#[test]
fn column_reads_of_a_float_tile_are_padded_to_conflict_free() {
    let (padded, report, sim_before, sim_after) = pad_and_compare(ScalarType::F32, ReadOrder::Columns);
    assert_eq!((sim_before, sim_after), (32, 1));
    assert_eq!(report.arrays.len(), 1);
    let a = &report.arrays[0];
    assert_eq!((a.degree_before, a.degree_after), (sim_before, sim_after));
    assert_eq!((a.row_before, a.row_after), (64, 65));
    assert_eq!(a.irregular_accesses, 0);
    assert_eq!(padded.shared[0].dims, vec![32, 65]);
    assert_eq!(padded.variant.notes, vec!["bank conflicts on tile A_s0: degree 32 -> 1 after padding rows 64 -> 65 floats"]);
}

#[test]
fn column_reads_of_a_double_tile_are_padded_by_one_element() {
    // 8-byte accesses are served per half-warp: 16 lanes down a column of a 64-double row hit
    // one bank pair (degree 16); one extra double per row spreads them over all 32 banks.
    let (padded, report, sim_before, sim_after) = pad_and_compare(ScalarType::F64, ReadOrder::Columns);
    assert_eq!((sim_before, sim_after), (16, 1));
    let a = &report.arrays[0];
    assert_eq!((a.degree_before, a.degree_after), (sim_before, sim_after));
    assert_eq!(padded.shared[0].dims, vec![32, 65]);
    assert_eq!(padded.variant.notes, vec!["bank conflicts on tile A_s0: degree 16 -> 1 after padding rows 64 -> 65 doubles"]);
}

#[test]
fn row_reads_are_not_padded() {
    let (padded, report, sim_before, sim_after) = pad_and_compare(ScalarType::F32, ReadOrder::Rows);
    assert_eq!((sim_before, sim_after), (1, 1));
    assert_eq!(report.arrays[0].degree_before, 1);
    assert_eq!(padded.shared[0].dims, vec![32, 64]);
    assert_eq!(padded.variant.notes, vec!["bank conflicts on tile A_s0: degree 1, no padding needed"]);
}

#[test]
fn linearly_indexed_arrays_are_left_alone() {
    // A[0][tid*32] written through one linear index: a wider row would move it.
    let mut g = GridBuilder::new("linear", [32, 1, 1]);
    let s = g.shared("A", ScalarType::F32, &[32, 32]);
    let t = g.tid();
    let k32 = g.int(32);
    let at = g.bin(BinaryOp::Mul, t, k32);
    let one = g.float(1.0, ScalarType::F32);
    let st = g.store(ArrayRef::Shared(s), &[at], one);
    let mut kernel = g.finish(vec![st]);
    let report = pad_shared_arrays(&mut kernel);
    assert!(report.arrays.is_empty());
    assert_eq!(kernel.shared[0].dims, vec![32, 32]);
    assert!(kernel.variant.notes[0].contains("index it linearly"), "{:?}", kernel.variant.notes);
}

#[test]
fn padding_stays_within_an_eighth_of_the_array() {
    // float A[32][2] written by column: one extra float per row would grow it by half.
    let mut g = GridBuilder::new("small", [32, 1, 1]);
    let s = g.shared("A", ScalarType::F32, &[32, 2]);
    let t = g.tid();
    let zero = g.int(0);
    let one = g.float(1.0, ScalarType::F32);
    let st = g.store(ArrayRef::Shared(s), &[t, zero], one);
    let mut kernel = g.finish(vec![st]);
    let report = pad_shared_arrays(&mut kernel);
    // Row of 2 floats: lanes 2 words apart, 16 banks used twice each.
    assert_eq!(report.arrays[0].degree_before, 2);
    assert_eq!(report.arrays[0].row_after, 2, "one float per row is 1/2 of the array");
    assert!(kernel.variant.notes[0].contains("budget"), "{:?}", kernel.variant.notes);
}

/// A store `A[i0][i1] = 1` with `ik = ax*threadIdx.x + ay*threadIdx.y + c`.
#[derive(Clone, Debug)]
struct RandomPattern {
    block: [u32; 3],
    elem: ScalarType,
    coeffs: [[i64; 3]; 2],
    /// The row stride the array is declared with, on top of what the indices need.
    extra_row: u32,
}

fn random_kernel(p: &RandomPattern) -> GridKernel {
    let mut g = GridBuilder::new("random", p.block);
    let [bx, by, _] = p.block.map(|d| d as i64);
    let max = |c: [i64; 3]| c[0] * (bx - 1) + c[1] * (by - 1) + c[2];
    let dims = [max(p.coeffs[0]) as u32 + 1, max(p.coeffs[1]) as u32 + 1 + p.extra_row];
    let s = g.shared("A", p.elem, &dims);
    let mut indices = Vec::new();
    for c in p.coeffs {
        let tx = g.tid();
        let ty = g.body.add_expr(ExprKind::ThreadIdx(Axis::Y), ScalarType::I32, Span::default());
        let (ax, ay, k) = (g.int(c[0]), g.int(c[1]), g.int(c[2]));
        let x = g.bin(BinaryOp::Mul, tx, ax);
        let y = g.bin(BinaryOp::Mul, ay, ty);
        let xy = g.bin(BinaryOp::Add, x, y);
        indices.push(g.bin(BinaryOp::Add, xy, k));
    }
    let one = g.int(1);
    let st = g.store(ArrayRef::Shared(s), &indices, one);
    g.finish(vec![st])
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 64, ..Default::default() })]
    #[test]
    fn computed_degree_is_the_simulated_degree(
        block in proptest::sample::select(vec![[32u32, 1, 1], [16, 2, 1], [8, 4, 1], [64, 1, 1], [4, 8, 1], [48, 1, 1]]),
        elem in proptest::sample::select(vec![ScalarType::F32, ScalarType::F64, ScalarType::I16, ScalarType::I8]),
        coeffs in proptest::array::uniform2(proptest::array::uniform3(0i64..5)),
        extra_row in 0u32..40,
    ) {
        let pattern = RandomPattern { block, elem, coeffs, extra_row };
        let kernel = random_kernel(&pattern);
        let accesses = shared_accesses(&kernel.body);
        let forms = FormContext::new(&kernel.body, kernel.launch.block);
        proptest::prop_assert_eq!(accesses.len(), 1);
        let indices: Vec<IndexForm> = accesses[0].1.iter().map(|&i| forms.form(i).expect("affine")).collect();
        proptest::prop_assert!(indices.iter().all(|i| matches!(i, IndexForm::Affine(_))));
        let computed = pattern_degree(&SharedAccessPattern { indices }, &kernel.shared[0].dims, elem, block);
        let (_, counters) = run_on_sim(&kernel, &[]);
        proptest::prop_assert_eq!(computed, Some(counters.bank_conflict_max_degree), "{:?}", pattern);
    }
}

#[test]
fn forms_follow_once_assigned_locals_and_uniform_loop_variables() {
    let mut g = GridBuilder::new("forms", [32, 1, 1]);
    let row = g.local("row", ScalarType::I32);
    let j = g.local("j", ScalarType::I32);
    let t = g.tid();
    let k2 = g.int(2);
    let one = g.int(1);
    let doubled = g.bin(BinaryOp::Shl, t, one);
    let row_value = g.bin(BinaryOp::Mul, doubled, k2);
    let re = g.get(row);
    let je = g.get(j);
    let idx = g.bin(BinaryOp::Add, re, je);
    let body = counted(&mut g, j, 0, 4, vec![Stmt::Eval(idx)]);
    let mut block = vec![Stmt::Assign { local: row, value: row_value }];
    block.extend(body);
    let kernel = g.finish(block);
    let forms = FormContext::new(&kernel.body, kernel.launch.block);
    assert_eq!(forms.form(idx), Some(IndexForm::Affine(ThreadAffine { thread: [4, 0, 0], uniform: None })));
    assert_eq!(forms.form(re), Some(IndexForm::Affine(ThreadAffine { thread: [4, 0, 0], uniform: Some(0) })));
}

#[test]
fn a_tight_budget_forbids_padding() {
    // The 8 KiB float tile needs 128 more bytes; a static limit 64 bytes above it refuses them.
    let mut kernel = tile_kernel(ScalarType::F32, ReadOrder::Columns);
    let budget = SharedMemoryBudget { static_per_block: 8192 + 64, ..Default::default() };
    let report = pad_shared_arrays_within(&mut kernel, &budget);
    assert_eq!((report.arrays[0].degree_before, report.arrays[0].degree_after), (32, 32));
    assert_eq!(kernel.shared[0].dims, vec![32, 64]);
    assert!(kernel.variant.notes[0].contains("budget"), "{:?}", kernel.variant.notes);
}

#[test]
fn cooperative_copies_through_division_are_measured_at_their_first_iteration() {
    // for (t = tid; t < 160; t += 32) A[t / 40][t % 40] = 1;  on float A[4][40]
    let mut g = GridBuilder::new("copy", [32, 1, 1]);
    let s = g.shared("A", ScalarType::F32, &[4, 40]);
    let t = g.local("t", ScalarType::I32);
    let te = g.get(t);
    let k40 = g.int(40);
    let row = g.bin(BinaryOp::Div, te, k40);
    let col = g.bin(BinaryOp::Rem, te, k40);
    let one = g.float(1.0, ScalarType::F32);
    let st = g.store(ArrayRef::Shared(s), &[row, col], one);
    let start = g.tid();
    let end = g.int(160);
    let cond = g.bin(BinaryOp::Lt, te, end);
    let k32 = g.int(32);
    let next = g.bin(BinaryOp::Add, te, k32);
    let block = vec![
        Stmt::Assign { local: t, value: start },
        Stmt::Loop {
            cond: Some(cond),
            test_first: true,
            body: vec![st],
            continuing: vec![Stmt::Assign { local: t, value: next }],
            range: Some(LoopRange { var: t, start, end, step: 32 }),
        },
    ];
    let kernel = g.finish(block);
    let forms = FormContext::new(&kernel.body, kernel.launch.block);
    let row_form = forms.form(row).expect("evaluable per thread");
    assert_eq!(row_form, IndexForm::FirstIteration(vec![0; 32]));
    let Some(IndexForm::FirstIteration(cols)) = forms.form(col) else { panic!("evaluable per thread") };
    assert_eq!(cols, (0..32).collect::<Vec<i64>>());
    let pattern = SharedAccessPattern { indices: vec![row_form, IndexForm::FirstIteration(cols)] };
    let (_, counters) = run_on_sim(&kernel, &[]);
    assert_eq!(pattern_degree(&pattern, &kernel.shared[0].dims, ScalarType::F32, kernel.launch.block), Some(counters.bank_conflict_max_degree));
    assert_eq!(counters.bank_conflict_max_degree, 1);
}

/// A shared access whose element offsets pass `i64` (`A[tid][tid + 0x7fffffffffffffff]`, the
/// kernel never run): its banks cannot be computed, and the array is left as it is, with the
/// reason, rather than padded by wrapped offsets (which panicked with overflow checks on).
#[test]
fn offsets_past_i64_leave_the_array_unpadded() {
    let mut g = GridBuilder::new("far", [32, 1, 1]);
    let output = g.array_param("out", ScalarType::F32, &[32]);
    let tile = g.shared("A", ScalarType::F32, &[32, 32]);
    let t = g.tid();
    let max = g.i64c(i64::MAX);
    let wide = g.cast(t, ScalarType::I64);
    let far = g.bin(BinaryOp::Add, wide, max);
    let read = g.load(ArrayRef::Shared(tile), &[t, far], ScalarType::F32, Span::default());
    let write = g.store(ArrayRef::Param(output), &[t], read);
    let mut kernel = g.finish(vec![write]);
    let before = kernel.shared[0].dims.clone();
    let report = pad_shared_arrays(&mut kernel);
    assert!(report.arrays.is_empty(), "{report:?}");
    assert_eq!(kernel.shared[0].dims, before);
    let note = kernel.variant.notes.iter().find(|n| n.contains("bank conflicts on tile A_s0")).expect("a note on the tile");
    assert!(note.contains("not padded: an access's element offsets overflow"), "{note}");
    // Forms that overflow are not forms, neither affine nor evaluated per thread: `0 - MIN`,
    // and `tid * 2^62 * 4`.
    let mut g = GridBuilder::new("forms", [32, 1, 1]);
    let (zero, min) = (g.i64c(0), g.i64c(i64::MIN));
    let negated = g.bin(BinaryOp::Sub, zero, min);
    let t = g.tid();
    let wide = g.cast(t, ScalarType::I64);
    let (big, four) = (g.i64c(1 << 62), g.i64c(4));
    let scaled = g.bin(BinaryOp::Mul, wide, big);
    let past = g.bin(BinaryOp::Mul, scaled, four);
    let fine = g.bin(BinaryOp::Add, wide, big);
    let body = g.finish(Vec::new()).body;
    let forms = FormContext::new(&body, [32, 1, 1]);
    assert_eq!(forms.form(negated), None);
    assert_eq!(forms.form(past), None);
    assert_eq!(forms.form(fine), Some(IndexForm::Affine(ThreadAffine { thread: [1, 0, 0], uniform: Some(1 << 62) })));
}
