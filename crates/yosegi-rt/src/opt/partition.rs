//! Partitioning: every kernel of a compute region that has parallel dims gets, per dim, two
//! params, the first iteration and the iteration count of that dim, so that one launch can run
//! any contiguous block of it. The runtime splits one dim into blocks, one per device, and
//! launches the same kernel (every variant the later passes make of it) on each device with its
//! block; on one device it passes every dim whole, which is the kernel the source wrote.
//!
//! The rewrite happens before mapping, on the source kernel, so that the access analysis
//! (`analysis::access`) sees the part too: evaluating a kernel's sections with a device's
//! `first` and `count` gives the sections that device uses and defines (the USE and DEF of
//! the multi-GPU flow analysis), with no separate analysis to keep in step with the kernel.
//!
//! The runtime prefers the outermost dim: in C's row-major arrays it selects whole rows (planes),
//! so each device's part of an array is one contiguous range and a stencil's halo is a few rows
//! at each end. An inner dim serves where the outermost one's blocks would write the same
//! memory (`b[j][i]` in a nest over `i` then `j`: `runtime::distribute`).

use crate::diag::Span;
use crate::ir::{BinaryOp, Expr, ExprKind, Handle, HostArg, HostArgKind, Kernel, KernelPartition, Module, Param, ParamKind, RegionKind, ScalarType};


/// Gives every kernel of every compute region that can be split its partition params (see the
/// module doc). Runs before mapping; kernels already partitioned are left alone.
pub fn partition_module(module: &mut Module) {
    for region in &mut module.regions {
        let RegionKind::Compute { kernels, .. } = &region.kind else { continue };
        for &handle in kernels {
            let kernel = &mut module.kernels[handle];
            if !kernel.partitions.is_empty() || !can_split(kernel) {
                continue;
            }
            for dim in 0..kernel.space.len() {
                let first_arg = region.args.len() as u32;
                let count_arg = first_arg + 1;
                for _ in 0..2 {
                    region.args.push(HostArg { c_expr: "0".to_string(), kind: HostArgKind::Int, size_expr: None });
                }
                split_dim(kernel, dim, first_arg, count_arg);
            }
        }
    }
}

/// The whole trip of each partitioned dim (in `Kernel::partitions` order), from the launch's
/// param values (the partitions' own params are not read): what each `count` is when one
/// device runs it all.
pub fn whole_trips(kernel: &Kernel, values: &[crate::ir::ParamValue]) -> Result<Vec<i64>, String> {
    kernel.partitions.iter().map(|p| crate::analysis::uniform::eval_uniform_int(&kernel.body, p.trip, values)).collect()
}

/// A kernel can be split when it has a parallel dim and hands no scalar back (a sequential
/// kernel's final values come from its single thread).
fn can_split(kernel: &Kernel) -> bool {
    !kernel.space.is_empty() && kernel.scalar_outputs.is_empty()
}

/// Rewrites dim `d` as `start' = start + first * step`, `trip' = count`, with `first` and
/// `count` new params bound to region args `first_arg` and `count_arg`.
fn split_dim(kernel: &mut Kernel, d: usize, first_arg: u32, count_arg: u32) {
    // Named after the dim's variable (`i_first`, `i_count`): the count is a launch's size, which
    // `--stats` and the tuning cache show by name.
    let first_param = kernel.params.len() as u32;
    let var = kernel.body.locals[kernel.space[d].var].name.clone();
    kernel.params.push(Param { name: format!("{var}_first"), kind: ParamKind::Scalar(ScalarType::I64), arg: first_arg });
    kernel.params.push(Param { name: format!("{var}_count"), kind: ParamKind::Scalar(ScalarType::I64), arg: count_arg });
    let dim = &kernel.space[d];
    let (start, trip, step) = (dim.start, dim.trip_count, dim.step);
    let exprs = &mut kernel.body.exprs;
    let start_ty = exprs[start].ty;
    let trip_ty = exprs[trip].ty;
    let mut add = |kind: ExprKind, ty: ScalarType| exprs.append(Expr { kind, ty, span: Span::default() });
    let as_type = |e: Handle<Expr>, ty: ScalarType, add: &mut dyn FnMut(ExprKind, ScalarType) -> Handle<Expr>| {
        if ty == ScalarType::I64 { e } else { add(ExprKind::Cast { arg: e }, ty) }
    };
    let first = add(ExprKind::Param(first_param), ScalarType::I64);
    let first = as_type(first, start_ty, &mut add);
    let offset = if step == 1 {
        first
    } else {
        let step = add(ExprKind::ConstInt(step), start_ty);
        add(ExprKind::Binary { op: BinaryOp::Mul, lhs: first, rhs: step }, start_ty)
    };
    let new_start = add(ExprKind::Binary { op: BinaryOp::Add, lhs: start, rhs: offset }, start_ty);
    let count = add(ExprKind::Param(first_param + 1), ScalarType::I64);
    let new_trip = as_type(count, trip_ty, &mut add);
    kernel.space[d].start = new_start;
    kernel.space[d].trip_count = new_trip;
    kernel.partitions.push(KernelPartition { dim: d as u32, first_arg, count_arg, start, trip });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::access::{Section, launch_sections};
    use crate::analysis::testing::{B, array_param, kernel as make_kernel, scalar_param};
    use crate::ir::{ParamValue, Region};

    /// `b[i] = a[i - 1] + a[i + 1]` for `i` in `1..n-1` (dim start 1, trip `n - 2`).
    fn stencil_module() -> Module {
        let mut b = B::new();
        let i = b.loop_var("i");
        let one = b.int(1);
        let n = b.param(0);
        let two = b.int(2);
        let trip = b.bin(BinaryOp::Sub, n, two);
        let dim = b.dim(i, one, trip);
        let left = b.var_plus(i, -1);
        let right = b.var_plus(i, 1);
        let l = b.load(1, vec![left]);
        let r = b.load(1, vec![right]);
        let sum = b.add(l, r);
        let iv = b.local(i);
        let store = b.store(2, vec![iv], sum);
        b.body.block = vec![store];
        let params = vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)];
        let mut module = Module::default();
        let kernel = module.kernels.append(make_kernel("stencil", params, vec![dim], b.body));
        let arg = |c: &str, kind| HostArg { c_expr: c.to_string(), kind, size_expr: None };
        module.regions.push(Region {
            id: 0,
            span: Span::default(),
            body_span: None,
            kind: RegionKind::Compute { kernels: vec![kernel], data: Vec::new() },
            args: vec![arg("n", HostArgKind::Int), arg("a", HostArgKind::Pointer), arg("b", HostArgKind::Pointer)],
            if_arg: None,
            function: "main".to_string(),
            unread_on_host: Vec::new(),
            host_after: Vec::new(),
            settle_after: Vec::new(),
        });
        module
    }

    #[test]
    fn each_part_has_its_own_use_and_def_sections() {
        let mut module = stencil_module();
        partition_module(&mut module);
        crate::valid::verify_module(&module).expect("the partitioned module verifies");
        let kernel = &module.kernels.iter().next().expect("one kernel").1;
        let partition = kernel.partitions.first().cloned().expect("partitioned");
        assert_eq!((partition.first_arg, partition.count_arg), (3, 4));
        assert_eq!(module.regions[0].args.len(), 5);
        let values = |first: i64, count: i64| {
            vec![ParamValue::Int(10), ParamValue::Pointer(0x1000), ParamValue::Pointer(0x2000), ParamValue::Int(first), ParamValue::Int(count)]
        };
        // (USE of `a`, DEF of `b`) of a launch.
        let sections = |first: i64, count: i64| {
            let all = launch_sections(kernel, &values(first, count));
            let of = |p: u32| all.iter().find(|s| s.param == p).cloned().expect("an array param's sections");
            (of(1).read, of(2).write)
        };
        let elements = |lo: i64, hi: i64| Section::Elements { lo, hi };
        // The whole dim: iterations 1..9 read a[0..10) and write b[1..9).
        assert_eq!(sections(0, 8), (elements(0, 10), elements(1, 9)));
        // Two halves: disjoint DEF, USE overlapping by the halo.
        assert_eq!(sections(0, 4), (elements(0, 6), elements(1, 5)));
        assert_eq!(sections(4, 4), (elements(4, 10), elements(5, 9)));
    }

    #[test]
    fn partitioning_twice_changes_nothing() {
        let mut module = stencil_module();
        partition_module(&mut module);
        let once = module.kernels.iter().next().expect("kernel").1.clone();
        partition_module(&mut module);
        assert_eq!(module.kernels.iter().next().expect("kernel").1, &once);
        assert_eq!(module.regions[0].args.len(), 5);
    }
}
