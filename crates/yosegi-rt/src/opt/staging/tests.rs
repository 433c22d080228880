//! Tests of staging: plans, tiles, the staged kernels' results and their shared memory.

use super::*;
use crate::analysis::footprint::tests as shapes;
use crate::analysis::testing::{B, array_param, kernel, scalar_param};
use crate::runtime::testing::simulate_f64;

fn config(staging: StagingMode) -> PassConfig {
    PassConfig { staging, ..PassConfig::default() }
}

/// Runs the whole pipeline on one kernel; returns the module (plain variant first).
fn compile(k: Kernel, config: &PassConfig) -> Module {
    let mut m = Module::default();
    m.kernels.append(k);
    crate::opt::run_passes(&mut m, config).expect("passes verify");
    m
}

fn variant(m: &Module, kind: VariantKind) -> Option<&GridKernel> {
    m.grid_kernels.iter().map(|(_, g)| g).find(|g| g.variant.kind == kind)
}


/// Plain and staged variants give the same bits; returns the staged variant's notes.
fn same_results(k: Kernel, config: &PassConfig, ints: &[i64], arrays: &[Vec<f64>]) -> Vec<String> {
    let m = compile(k, config);
    let plain = variant(&m, VariantKind::Global).unwrap();
    let staged = variant(&m, VariantKind::Staged).unwrap_or_else(|| panic!("no staged variant: {:?}", plain.variant.notes));
    let want = simulate_f64(&m, plain, ints, arrays).arrays;
    let got = simulate_f64(&m, staged, ints, arrays).arrays;
    for (a, (w, g)) in want.iter().zip(&got).enumerate() {
        let w: Vec<u64> = w.iter().map(|v| v.to_bits()).collect();
        let g: Vec<u64> = g.iter().map(|v| v.to_bits()).collect();
        assert_eq!(w, g, "array {a} differs; staged notes {:?}", staged.variant.notes);
    }
    staged.variant.notes.clone()
}

fn ramp(n: usize, scale: f64) -> Vec<f64> {
    (0..n).map(|x| ((x * 37 % 101) as f64) * scale + 0.125).collect()
}

#[test]
fn budget_keeps_eight_blocks_resident_on_sm90() {
    assert_eq!(SharedMemoryBudget::default().per_block(), 228 * 1024 / 8 - 1024);
    let few = SharedMemoryBudget { resident_blocks_wanted: 2, ..Default::default() };
    assert_eq!(few.per_block(), 48 * 1024, "capped by the static limit");
}

#[test]
fn three_point_stencil_staged_matches_plain_past_the_last_full_block() {
    let m = compile(shapes::stencil_1d(), &config(StagingMode::Force));
    let staged = variant(&m, VariantKind::Staged).unwrap();
    assert_eq!(staged.name, "st1_staged");
    // Forced, the written b (one element per thread) goes through a tile too.
    assert_eq!(
        staged.shared,
        vec![
            SharedArray { name: "a_tile".into(), elem: ScalarType::F64, dims: vec![258] },
            SharedArray { name: "b_tile".into(), elem: ScalarType::F64, dims: vec![256] }
        ]
    );
    assert_eq!(staged.variant.staged_params, vec![1, 2]);
    // n = 1000: 998 points, the fourth block has 230 threads inside.
    let notes = same_results(shapes::stencil_1d(), &config(StagingMode::Force), &[1000], &[ramp(1000, 1.0), vec![-1.0; 1000]]);
    assert!(notes[0].starts_with("staged a (a[i+{-1..1}]) as tile [258] (2064 B per block)"), "{notes:?}");
}

#[test]
fn five_point_stencil_staged_matches_plain_on_odd_sizes() {
    for (n, m) in [(37, 45), (3, 70), (12, 3)] {
        let arrays = [ramp(n * m, 0.5), vec![7.0; n * m]];
        same_results(shapes::stencil_2d(), &config(StagingMode::Force), &[n as i64, m as i64], &arrays);
    }
}

#[test]
fn coarsened_variants_compute_what_the_plain_kernel_does_and_copy_less() {
    for points in [2, 3, 4] {
        let config = PassConfig { staged_points_per_thread: points, ..config(StagingMode::Force) };
        // 2-D: 32x8 blocks; sizes that leave partial blocks and a partial last group of points.
        for (n, m) in [(37, 45), (3, 70), (12, 300)] {
            let arrays = [ramp(n * m, 0.5), vec![7.0; n * m]];
            let module = compile(shapes::stencil_2d(), &config);
            let plain = variant(&module, VariantKind::Global).unwrap();
            let want = simulate_f64(&module, plain, &[n as i64, m as i64], &arrays);
            let staged: Vec<&GridKernel> = module.grid_kernels.iter().map(|(_, g)| g).filter(|g| g.variant.kind == VariantKind::Staged).collect();
            assert_eq!(staged.len(), 2, "one point per thread, and {points}");
            let coarse = staged[1];
            assert_eq!(coarse.name, format!("{}_x{points}", staged[0].name));
            let in_tile = coarse.shared.iter().find(|s| s.name.starts_with("in_tile")).expect("in's tile");
            assert_eq!(in_tile.dims[0], 10, "y is not coarsened");
            assert!(in_tile.dims[1] >= 32 * points + 2, "{:?}", coarse.shared);
            for g in &staged {
                let got = simulate_f64(&module, g, &[n as i64, m as i64], &arrays);
                assert_eq!(got.arrays[1].iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want.arrays[1].iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "{} at {n}x{m}", g.name);
            }
            if n * m > 3000 {
                let one = simulate_f64(&module, staged[0], &[n as i64, m as i64], &arrays).counters;
                let many = simulate_f64(&module, coarse, &[n as i64, m as i64], &arrays).counters;
                assert!(many.global_transactions < one.global_transactions, "{}: {many:?} vs {one:?}", coarse.name);
                assert!(many.barriers < one.barriers, "{}: {many:?} vs {one:?}", coarse.name);
            }
        }
    }
    // 1-D with a reduction: the accumulator runs across a thread's points.
    let config = PassConfig { staged_points_per_thread: 4, ..config(StagingMode::Force) };
    let module = compile(shapes::stencil_1d(), &config);
    let coarse = module.grid_kernels.iter().map(|(_, g)| g).find(|g| g.name.ends_with("_staged_x4")).expect("a coarsened variant");
    let plain = variant(&module, VariantKind::Global).unwrap();
    for n in [5, 1000, 2100] {
        let arrays = [ramp(n, 1.0), vec![-1.0; n]];
        let want = simulate_f64(&module, plain, &[n as i64], &arrays).arrays;
        let got = simulate_f64(&module, coarse, &[n as i64], &arrays).arrays;
        assert_eq!(got, want, "n = {n}");
    }
}

#[test]
fn coarsening_is_not_offered_with_strip_mining_or_over_the_budget() {
    // The matrix-vector kernel swaps strips of `a`: no coarsened variant.
    let m = compile(shapes::matvec(), &config(StagingMode::Force));
    assert!(m.grid_kernels.iter().all(|(_, g)| !g.name.contains("_staged_x")));
    // 16 points of a [10][34] double tile need [10][514] = 41120 B, over the 28 KiB budget.
    let wide = PassConfig { staged_points_per_thread: 16, ..config(StagingMode::Force) };
    let m = compile(shapes::stencil_2d(), &wide);
    assert!(variant(&m, VariantKind::Staged).is_some());
    assert!(m.grid_kernels.iter().all(|(_, g)| !g.name.contains("_staged_x")));
    let none = PassConfig { staged_points_per_thread: 1, ..config(StagingMode::Force) };
    let m = compile(shapes::stencil_2d(), &none);
    assert_eq!(m.grid_kernels.iter().filter(|(_, g)| g.variant.kind == VariantKind::Staged).count(), 1);
}

#[test]
fn auto_stages_the_stencil_and_off_only_writes_notes() {
    let m = compile(shapes::stencil_2d(), &config(StagingMode::Auto));
    let staged = variant(&m, VariantKind::Staged).expect("reuse 3.8 is worth a tile");
    assert!(staged.variant.estimated_ratio < 1.0);
    let plain = variant(&m, VariantKind::Global).unwrap();
    assert!(
        plain.variant.notes[0].starts_with("in: 5 refs in[j+{-1..1}][i+{-1..1}] form one group, halo 1x1; block footprint 10x34 doubles (2720 B), 1280 accesses -> reuse 3.8"),
        "{:?}",
        plain.variant.notes
    );
    let m = compile(shapes::stencil_2d(), &config(StagingMode::Off));
    assert!(variant(&m, VariantKind::Staged).is_none());
    let plain = variant(&m, VariantKind::Global).unwrap();
    assert_eq!(plain.variant.notes.last().unwrap(), "staging is off: no staged variant");
}

#[test]
fn a_tile_over_the_budget_is_not_made_even_when_forced() {
    let small = PassConfig { shared: SharedMemoryBudget { static_per_block: 2048, ..Default::default() }, ..config(StagingMode::Force) };
    let m = compile(shapes::stencil_2d(), &small);
    // `in` (param 2) is not staged; the written `out` ([8][32] doubles, 2048 B) still fits.
    let stages = |m: &Module, p: u32| variant(m, VariantKind::Staged).is_some_and(|s| s.variant.staged_params.contains(&p));
    assert!(!stages(&m, 2));
    assert!(stages(&m, 3));
    let notes = &variant(&m, VariantKind::Global).unwrap().variant.notes;
    assert!(
        notes.iter().any(|n| n == "in[j+{-1..1}][i+{-1..1}]: not staged: its tile [10][34] needs 2720 B, over the 2048 B left of the 2048 B budget"),
        "{notes:?}"
    );
    // The reduction tree's shared array counts against the budget too.
    let mut with_tree = shapes::stencil_1d();
    let acc = with_tree.body.locals.append(Local { name: "s".into(), ty: ScalarType::F64, array_dims: None, kind: LocalKind::Reduction(0), span: Span::default() });
    with_tree.reductions.push(Reduction { op: crate::ir::ReductionOp::Add, ty: ScalarType::F64, local: acc, target_arg: 3, span: Span::default(), part: None });
    let budget = |bytes| PassConfig { shared: SharedMemoryBudget { static_per_block: bytes, ..Default::default() }, ..config(StagingMode::Force) };
    let m = compile(with_tree.clone(), &budget(2048 + 2063));
    let notes = &variant(&m, VariantKind::Global).unwrap().variant.notes;
    assert!(notes.iter().any(|n| n.contains("needs 2064 B, over the 2063 B left of the 4111 B budget")), "{notes:?}");
    assert!(!stages(&m, 1));
    let m = compile(with_tree, &budget(2048 + 2064));
    assert!(stages(&m, 1), "2048 B of tree + 2064 B of tile fit exactly");
}

#[test]
fn auto_does_not_stage_a_copy_read_once() {
    // b[i] = a[i]: one coalesced read per element.
    let mut b = B::new();
    let i = b.loop_var("i");
    let zero = b.int(0);
    let n = b.param(0);
    let d = b.dim(i, zero, n);
    let ie = b.local(i);
    let ld = b.load(1, vec![ie]);
    let ie = b.local(i);
    let st = b.store(2, vec![ie], ld);
    b.body.block.push(st);
    let k = kernel("copy", vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)], vec![d], b.body);
    let m = compile(k.clone(), &config(StagingMode::Auto));
    assert!(variant(&m, VariantKind::Staged).is_none());
    let notes = &variant(&m, VariantKind::Global).unwrap().variant.notes;
    assert!(notes.iter().any(|n| n == "a[i]: each element read once per block and coalesced: not staged"), "{notes:?}");
    // Forced, it is staged and still right.
    same_results(k, &config(StagingMode::Force), &[300], &[ramp(300, 2.0), vec![0.0; 300]]);
}

#[test]
fn linearised_stencil_staged_matches_plain() {
    let m = compile(shapes::linearised_2d(), &config(StagingMode::Auto));
    assert_eq!(variant(&m, VariantKind::Staged).expect("reuse 3.8").shared[0].dims, vec![10, 34]);
    for n in [3, 37, 50] {
        same_results(shapes::linearised_2d(), &config(StagingMode::Auto), &[n], &[ramp((n * n) as usize, 0.5), vec![9.0; (n * n) as usize]]);
    }
}

#[test]
fn box_corners_outside_the_read_addresses_are_not_loaded() {
    // out[j][i] = in[j][i-1] + in[j-1][i] over j in 1..n, i in 0..m: at i = 0 the kernel
    // reads the previous row's last element; the box corner in[0][-1] is before the array.
    let mut b = B::new();
    let j = b.loop_var("j");
    let i = b.loop_var("i");
    let (zero, one) = (b.int(0), b.int(1));
    let n = b.param(0);
    let m = b.param(1);
    let trip = b.bin(BinaryOp::Sub, n, one);
    let dj = b.dim(j, one, trip);
    let di = b.dim(i, zero, m);
    let (j0, i1) = (b.var_plus(j, 0), b.var_plus(i, -1));
    let west = b.load(2, vec![j0, i1]);
    let (j1, i0) = (b.var_plus(j, -1), b.var_plus(i, 0));
    let north = b.load(2, vec![j1, i0]);
    let sum = b.add(west, north);
    let (je, ie) = (b.local(j), b.local(i));
    let st = b.store(3, vec![je, ie], sum);
    b.body.block.push(st);
    let md = b.param(1);
    let k = kernel(
        "corner",
        vec![scalar_param("n", 0), scalar_param("m", 1), array_param("in", vec![None, Some(md)], 2), array_param("out", vec![None, Some(md)], 3)],
        vec![dj, di],
        b.body,
    );
    for (n, m) in [(9, 40), (20, 7)] {
        same_results(k.clone(), &config(StagingMode::Force), &[n, m], &[ramp((n * m) as usize, 1.0), vec![0.0; (n * m) as usize]]);
    }
}

#[test]
fn column_access_is_staged_for_coalescing() {
    let k = shapes::transpose();
    let m = compile(k.clone(), &config(StagingMode::Auto));
    let staged = variant(&m, VariantKind::Staged).expect("a column access is worth a coalesced copy");
    let tile = &staged.shared[0].dims;
    assert_eq!(tile[0], 32, "in[i][j]: i on x indexes the outer dim");
    assert!(tile[1] >= 8, "8 columns, maybe padded against bank conflicts: {tile:?}");
    same_results(k, &config(StagingMode::Auto), &[41], &[ramp(41 * 41, 1.0), vec![0.0; 41 * 41]]);
}

#[test]
fn matvec_swaps_strips_of_a_with_a_remainder() {
    // 1100 = a strip of 1024 and a remainder of 76.
    let notes = same_results(shapes::matvec(), &config(StagingMode::Auto), &[1100], &[ramp(1100, 1.0), ramp(1100 * 1100, 0.25), vec![0.0; 1100]]);
    assert!(notes.iter().any(|n| n == "data swapping: loop k runs in strips of 1024, each strip's data copied in between two barriers"), "{notes:?}");
    // A small budget: strips of 32 over 70 (two full strips and 6).
    let tight = PassConfig { shared: SharedMemoryBudget { static_per_block: 256, ..Default::default() }, ..config(StagingMode::Force) };
    let notes = same_results(shapes::matvec(), &tight, &[70], &[ramp(70, 1.0), ramp(4900, 0.5), vec![0.0; 70]]);
    assert!(notes.iter().any(|n| n.contains("strips of 32")), "{notes:?}");
    // An empty loop: every strip loop is skipped, the stores after it still run.
    same_results(shapes::matvec(), &tight, &[0], &[vec![1.0], vec![1.0], vec![5.0]]);
}

#[test]
fn histogram_scan_with_a_conditional_count_is_swapped() {
    // for bin < nbins: cnt = 0; for k < len: if (data[k] == bin) cnt += 1; out[bin] = cnt
    let mut b = B::new();
    let bin = b.loop_var("bin");
    let k = b.loop_var("k");
    let cnt = b.new_local("cnt", ScalarType::F64, LocalKind::Var);
    let zero = b.int(0);
    let nbins = b.param(0);
    let d = b.dim(bin, zero, nbins);
    let z = b.float(0.0, ScalarType::F64);
    b.body.block.push(Stmt::Assign { local: cnt, value: z });
    let ke = b.local(k);
    let v = b.load(2, vec![ke]);
    let be = b.local(bin);
    let bf = b.cast(be, ScalarType::F64);
    let eq = b.bin(BinaryOp::Eq, v, bf);
    let ce = b.local(cnt);
    let one = b.float(1.0, ScalarType::F64);
    let inc = b.add(ce, one);
    let body = vec![Stmt::If { cond: eq, then: vec![Stmt::Assign { local: cnt, value: inc }], otherwise: Vec::new() }];
    let zero2 = b.int(0);
    let len = b.param(1);
    let lp = b.counted_loop(k, zero2, len, body);
    b.body.block.extend(lp);
    let be = b.local(bin);
    let ce = b.local(cnt);
    let st = b.store(3, vec![be], ce);
    b.body.block.push(st);
    let kern = kernel(
        "hist",
        vec![scalar_param("nbins", 0), scalar_param("len", 1), array_param("data", vec![None], 2), array_param("out", vec![None], 3)],
        vec![d],
        b.body,
    );
    let data: Vec<f64> = (0..3000).map(|x| ((x * 7) % 13) as f64).collect();
    let m = compile(kern.clone(), &config(StagingMode::Auto));
    assert!(variant(&m, VariantKind::Staged).is_some(), "{:?}", variant(&m, VariantKind::Global).unwrap().variant.notes);
    same_results(kern, &config(StagingMode::Auto), &[13, 3000], &[data, vec![0.0; 13]]);
}

#[test]
fn staged_jacobi_prints_as_cuda_with_a_two_dimensional_tile() {
    let m = compile(shapes::stencil_2d(), &config(StagingMode::Force));
    let text = crate::back::cuda::module_cuda(&m);
    assert!(text.contains("__shared__ double in_tile_s0[10][34];"), "{text}");
    assert!(text.contains("__syncthreads();"), "{text}");
}
