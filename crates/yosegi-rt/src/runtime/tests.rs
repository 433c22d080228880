//! Runtime tests: regions run through `Runtime` on host buffers, checking coherence (what is
//! transferred when), data clauses, errors and the write-back of reductions and scalars.

use std::ffi::c_void;
use std::sync::Arc;

use super::*;
use crate::analysis::testing::{B, array_param, kernel as make_kernel, scalar_param};
use crate::ir::{ArrayRef, BinaryOp, ExprKind, HostArg, ReductionOp, Stmt};
use crate::runtime::testing::GridBuilder;

pub(super) fn host_arg(kind: HostArgKind) -> HostArg {
    HostArg { c_expr: String::new(), kind, size_expr: None }
}

pub(super) fn section(kind: DataClauseKind, base: u32, len: Option<u32>, name: &str) -> DataSection {
    DataSection { kind, base, lo: None, len, elem_size: 8, name: name.into(), span: Span::new(0, 3, 4), zero: false, rows: None, dead_on_host: false }
}

/// Region 0 runs `b[i] = 2 * a[i]` for `i < n` (args: n, a, b); regions 1.. are `extra`.
pub(super) fn scale_module(extra: Vec<RegionKind>) -> Module {
    let mut module = Module::default();
    let mut b = B::new();
    let i = b.loop_var("i");
    let zero = b.int(0);
    let n = b.param(0);
    let dim = b.dim(i, zero, n);
    let iv = b.local(i);
    let load = b.load(1, vec![iv]);
    let two = b.float(2.0, ScalarType::F64);
    let product = b.bin(BinaryOp::Mul, load, two);
    let store = b.store(2, vec![iv], product);
    b.body.block = vec![store];
    let params = vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)];
    let kernel = module.kernels.append(make_kernel("scale", params, vec![dim], b.body));

    let mut g = GridBuilder::new("scale_g", [32, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let a = g.array_param("a", ScalarType::F64, &[]);
    let out = g.array_param("b", ScalarType::F64, &[]);
    let (gid, guard) = g.one_thread_per_point(np);
    let la = g.load(ArrayRef::Param(a), &[gid], ScalarType::F64, Span::default());
    let two = g.float(2.0, ScalarType::F64);
    let product = g.bin(BinaryOp::Mul, la, two);
    let st = g.store(ArrayRef::Param(out), &[gid], product);
    module.grid_kernels.append(g.finish(vec![Stmt::If { cond: guard, then: vec![st], otherwise: vec![] }]));

    let args = vec![host_arg(HostArgKind::Int), host_arg(HostArgKind::Pointer), host_arg(HostArgKind::Pointer)];
    let mut kinds = vec![RegionKind::Compute { kernels: vec![kernel], data: vec![] }];
    kinds.extend(extra);
    for (id, kind) in kinds.into_iter().enumerate() {
        module.regions.push(Region {
            id: id as u32,
            span: Span::default(),
            body_span: None,
            kind,
            args: args.clone(),
            if_arg: None,
            function: "main".into(),
            unread_on_host: Vec::new(),
            host_after: Vec::new(),
            settle_after: Vec::new(),
        });
    }
    module
}

pub(super) fn runtime(module: Module) -> Runtime {
    Runtime::new(Arc::new(module), Arc::new(SourceSet::default()), RuntimeConfig::default())
}

pub(super) fn args(n: i64, a: &mut [f64], b: &mut [f64]) -> Vec<YosegiArg> {
    vec![
        YosegiArg { i: n, ..Default::default() },
        YosegiArg { ptr: a.as_mut_ptr() as *mut c_void, ..Default::default() },
        YosegiArg { ptr: b.as_mut_ptr() as *mut c_void, ..Default::default() },
    ]
}

#[test]
fn launch_results_stay_on_the_device_until_the_host_reads_them() {
    let mut rt = runtime(scale_module(vec![]));
    let mut a: Vec<f64> = (0..100).map(|x| x as f64).collect();
    let mut b = vec![0.0; 100];
    let region_args = args(100, &mut a, &mut b);
    rt.region(0, &region_args).expect("runs");
    assert_eq!(rt.stats().bytes_to_device, 800, "only `a` is read");
    assert_eq!(b[7], 0.0, "nothing comes back before the host reads `b`");
    rt.region(0, &region_args).expect("runs again");
    assert_eq!(rt.stats().bytes_to_device, 800, "`a` is still valid on the device");
    rt.host_access(&[b.as_ptr() as u64 + 16], &[abi::YOSEGI_READ]);
    assert_eq!(b[7], 14.0);
    assert_eq!(rt.stats().bytes_to_host, 800);
    assert_eq!(rt.stats().launches["scale_g"].count, 2);
}

#[test]
fn host_writes_are_sent_again_before_the_next_launch() {
    let mut rt = runtime(scale_module(vec![]));
    let mut a = vec![1.0; 64];
    let mut b = vec![0.0; 64];
    let region_args = args(64, &mut a, &mut b);
    rt.region(0, &region_args).expect("runs");
    rt.host_access(&[a.as_ptr() as u64], &[abi::YOSEGI_WRITE]);
    a[3] = 5.0;
    rt.region(0, &region_args).expect("runs");
    rt.host_access_all();
    assert_eq!(b[3], 10.0);
    assert_eq!(b[4], 2.0);
    assert_eq!(rt.stats().bytes_to_device, 2 * 64 * 8);
}

#[test]
fn data_region_copies_out_at_exit_and_frees_the_copy_of_an_array_of_unknown_lifetime() {
    let data =
        vec![section(DataClauseKind::CopyIn, 1, Some(0), "a"), section(DataClauseKind::CopyOut, 2, Some(0), "b")];
    let mut rt = runtime(scale_module(vec![RegionKind::Data { data }]));
    let mut a: Vec<f64> = (0..40).map(|x| x as f64).collect();
    let mut b = vec![0.0; 40];
    let region_args = args(40, &mut a, &mut b);
    rt.data_enter(1, &region_args).expect("enter");
    assert_eq!(rt.stats().bytes_to_device, 320);
    rt.region(0, &region_args).expect("runs");
    assert_eq!(rt.stats().bytes_to_device, 320, "copyin already made `a` valid");
    rt.data_exit(1, &region_args).expect("exit");
    assert_eq!(b[39], 78.0);
    let b_object = rt.registry().find(b.as_ptr() as u64).expect("tracked");
    // Not a heap block or file-scope array the runtime tracks: no cache may outlive it.
    assert!(!rt.registry().get(b_object).expect("object").copies.has_device_copy(0));
}

#[test]
fn present_of_an_absent_array_is_a_program_fault() {
    let data = vec![section(DataClauseKind::Present, 1, Some(0), "a")];
    let mut rt = runtime(scale_module(vec![RegionKind::EnterData { data }]));
    let mut a = vec![0.0; 8];
    let mut b = vec![0.0; 8];
    let err = rt.region(1, &args(8, &mut a, &mut b)).expect_err("not present");
    assert_eq!(err.exit_code(), 1);
    assert!(err.diagnostic.message.contains("present clause: `a` is not on the device"));
}

#[test]
fn whole_array_clause_of_an_unknown_pointer_is_an_extent_error() {
    let data = vec![section(DataClauseKind::CopyIn, 1, None, "a")];
    let mut rt = runtime(scale_module(vec![RegionKind::EnterData { data }]));
    let mut a = vec![0.0; 8];
    let mut b = vec![0.0; 8];
    let err = rt.region(1, &args(8, &mut a, &mut b)).expect_err("unknown extent");
    assert_eq!(err.exit_code(), 2);
    assert!(err.diagnostic.help.as_deref().unwrap_or("").contains("`a[0:n]`"));
    // The same clause on a registered (static) array works from its known extent.
    rt.register_static(a.as_ptr() as u64, 64, "a");
    rt.region(1, &args(8, &mut a, &mut b)).expect("known extent");
    assert_eq!(rt.stats().bytes_to_device, 64);
}

#[test]
fn freed_blocks_drop_their_device_copies() {
    let mut rt = runtime(scale_module(vec![]));
    let mut a = vec![3.0; 16];
    let mut b = vec![0.0; 16];
    rt.track_malloc(a.as_ptr() as u64, 128);
    rt.region(0, &args(16, &mut a, &mut b)).expect("runs");
    let object = rt.registry().find(a.as_ptr() as u64 + 8).expect("tracked");
    assert!(rt.registry().get(object).expect("object").copies.has_device_copy(0));
    rt.track_free(a.as_ptr() as u64);
    assert_eq!(rt.registry().find(a.as_ptr() as u64), None);
}

#[test]
fn reduction_partials_fold_into_the_host_variable() {
    let mut module = Module::default();
    let kernel = module.kernels.append(make_kernel("sum", vec![], vec![], B::new().body));
    let mut g = GridBuilder::new("sum_g", [8, 1, 1]);
    let red = g.reduction(ReductionOp::Add, ScalarType::I32, 0);
    let four = g.int(4);
    g.grid_x(four);
    let t = g.tid();
    let zero = g.int(0);
    let first = g.bin(BinaryOp::Eq, t, zero);
    let bid = g.body.add_expr(ExprKind::BlockIdx(crate::ir::Axis::X), ScalarType::I32, Span::default());
    let one = g.int(1);
    let value = g.bin(BinaryOp::Add, bid, one);
    let st = g.store(ArrayRef::Partials(red), &[bid], value);
    module.grid_kernels.append(g.finish(vec![Stmt::If { cond: first, then: vec![st], otherwise: vec![] }]));
    module.regions.push(Region {
        id: 0,
        span: Span::default(),
        body_span: None,
        kind: RegionKind::Compute { kernels: vec![kernel], data: vec![] },
        args: vec![host_arg(HostArgKind::ScalarOut(ScalarType::I32))],
        if_arg: None,
        function: "main".into(),
        unread_on_host: Vec::new(),
        host_after: Vec::new(),
        settle_after: Vec::new(),
    });
    let mut rt = runtime(module);
    let mut x: i32 = 10;
    let region_args = vec![YosegiArg { ptr: &mut x as *mut i32 as *mut c_void, ..Default::default() }];
    rt.region(0, &region_args).expect("runs");
    assert_eq!(x, 10 + 1 + 2 + 3 + 4);
}

#[test]
fn kernel_faults_come_back_as_program_faults() {
    let mut rt = runtime(scale_module(vec![]));
    let mut a = vec![0.0; 4];
    let mut b = vec![0.0; 4];
    // `a` and `b` are known malloc blocks of 4 elements; a launch over 8 reads past them.
    rt.track_malloc(a.as_ptr() as u64, 32);
    rt.track_malloc(b.as_ptr() as u64, 32);
    let err = rt.region(0, &args(8, &mut a, &mut b)).expect_err("out of bounds");
    assert_eq!(err.exit_code(), 1);
    assert!(err.diagnostic.message.contains("kernel `scale_g` faulted"), "{}", err.diagnostic.message);
    assert!(err.diagnostic.message.contains("out-of-bounds read of `a` in thread 4"), "{}", err.diagnostic.message);
}

#[test]
fn pointer_args_with_a_host_size_are_tracked_at_their_real_extent() {
    let mut rt = runtime(scale_module(vec![]));
    let mut a = vec![1.0; 32];
    let mut b = vec![0.0; 32];
    let mut region_args = args(16, &mut a, &mut b);
    region_args[1].size = 256;
    rt.region(0, &region_args).expect("runs");
    let object = rt.registry().get(a.as_ptr() as u64).expect("tracked from its start");
    assert_eq!((object.len, object.origin), (256, registry::Origin::Sized));
    // The launch reads only its section of `a`: the first 16 elements.
    assert_eq!(rt.stats().bytes_to_device, 128);
}

#[test]
fn scalar_outputs_of_a_single_thread_kernel_reach_the_host() {
    let mut module = Module::default();
    let kernel = module.kernels.append(make_kernel("seq", vec![], vec![], B::new().body));
    let mut g = GridBuilder::new("seq_g", [1, 1, 1]);
    let x = g.local("x", ScalarType::F32);
    let v = g.float(2.5, ScalarType::F32);
    g.scalar_output(x, 0);
    module.grid_kernels.append(g.finish(vec![Stmt::Assign { local: x, value: v }]));
    module.regions.push(Region {
        id: 0,
        span: Span::default(),
        body_span: None,
        kind: RegionKind::Compute { kernels: vec![kernel], data: vec![] },
        args: vec![host_arg(HostArgKind::ScalarOut(ScalarType::F32))],
        if_arg: None,
        function: "main".into(),
        unread_on_host: Vec::new(),
        host_after: Vec::new(),
        settle_after: Vec::new(),
    });
    let mut rt = runtime(module);
    let mut x_host: f32 = 0.0;
    let region_args = vec![YosegiArg { ptr: &mut x_host as *mut f32 as *mut c_void, ..Default::default() }];
    rt.region(0, &region_args).expect("runs");
    assert_eq!(x_host, 2.5);
}

#[test]
fn a_launch_reaching_past_an_inferred_extent_grows_it_without_losing_data() {
    let mut rt = runtime(scale_module(vec![]));
    let mut base: Vec<f64> = (0..8).map(|x| x as f64).collect();
    let mut out = vec![0.0; 8];
    // b = 2 * base[0..4]: `base` is tracked as the 32 bytes the launch reads.
    rt.region(0, &args(4, &mut base[..], &mut out)).expect("runs");
    // out = 2 * base[2..6], then base[4..8] = 2 * out[0..4]: both objects grow or merge.
    rt.region(0, &args(4, &mut base[2..], &mut out)).expect("runs");
    rt.region(0, &args(4, &mut out, &mut base[4..])).expect("runs");
    rt.host_access_all();
    assert_eq!(out[..4], [4.0, 6.0, 8.0, 10.0]);
    assert_eq!(base, vec![0.0, 1.0, 2.0, 3.0, 8.0, 12.0, 16.0, 20.0]);
}

#[test]
fn objects_below_the_runtime_frame_are_forgotten() {
    let mut rt = runtime(scale_module(vec![]));
    let frame = 0x7fff_0000_0000u64;
    // Arrays passed with their size (stack arrays, as far as the runtime knows).
    let devices = rt.devices.len();
    for (start, name) in [(frame - 4096, "dead"), (frame + 4096, "live"), (0x5555_0000_0000, "far")] {
        rt.registry.insert(start, 64, name, Origin::Sized, devices);
    }
    // A file-scope array just below the frame is not a stack object.
    rt.register_static(frame - 8192, 64, "static");
    rt.forget_dead_stack_objects(frame);
    assert_eq!(rt.registry().find(frame - 4096), None);
    assert!(rt.registry().find(frame + 4096).is_some());
    assert!(rt.registry().find(0x5555_0000_0000).is_some());
    assert!(rt.registry().find(frame - 8192).is_some(), "a static was forgotten as a dead stack object");
}

#[test]
fn a_sized_array_partially_over_a_stale_one_replaces_it() {
    let mut rt = runtime(scale_module(vec![]));
    let mut memory = vec![1.0; 64];
    let mut out = vec![0.0; 64];
    // A frame's `double a[16]` at element 16, then a later frame's `double b[32]` at element 8.
    let mut region_args = args(16, &mut memory[16..], &mut out);
    region_args[1].size = 128;
    rt.region(0, &region_args).expect("runs");
    let mut region_args = args(32, &mut memory[8..], &mut out);
    region_args[1].size = 256;
    rt.region(0, &region_args).expect("the stale extent does not clamp the new array");
    rt.host_access_all();
    assert_eq!(out[31], 2.0);
    let object = rt.registry().get(memory[8..].as_ptr() as u64).expect("tracked");
    assert_eq!(object.len, 256);
}

#[test]
fn stack_objects_not_held_by_a_data_region_are_settled_on_the_host() {
    let data = vec![section(DataClauseKind::Copy, 2, Some(0), "b")];
    let mut rt = runtime(scale_module(vec![RegionKind::Data { data }]));
    // Two arrays of one frame: side by side in one block, as on a stack (two heap blocks may
    // come from arenas further apart than the window of live frames).
    let mut frame_memory = [0.0; 16];
    let (a, b) = frame_memory.split_at_mut(8);
    a.fill(1.0);
    let region_args = args(8, a, b);
    let frame = a.as_ptr().min(b.as_ptr()) as u64 - 64;
    // Held by a data region: the device keeps the only current copy.
    rt.data_enter(1, &region_args).expect("enter");
    rt.region(0, &region_args).expect("runs");
    rt.settle_stack_objects(frame);
    assert_eq!(b[0], 0.0);
    rt.data_exit(1, &region_args).expect("exit");
    assert_eq!(b[0], 2.0);
    // Not held: settled right after the region.
    a[0] = 5.0;
    rt.host_access(&[a.as_ptr() as u64], &[abi::YOSEGI_WRITE]);
    rt.region(0, &region_args).expect("runs");
    assert_eq!(b[0], 2.0);
    rt.settle_stack_objects(frame);
    assert_eq!(b[0], 10.0);
}

/// A file-scope array is not a stack object even where it lies above the runtime's frame (a
/// program's statics beside a thread's stack): its device copy stays the current one after a
/// region, and the host gets it only when it reads it (run 23: every launch of a MESI-CUDA
/// diffusion copied its array back).
#[test]
fn file_scope_arrays_beside_the_stack_are_not_settled() {
    let mut rt = runtime(scale_module(Vec::new()));
    let mut frame_memory = [0.0; 16];
    let (a, b) = frame_memory.split_at_mut(8);
    a.fill(1.0);
    rt.register_static(a.as_ptr() as u64, 64, "a");
    rt.register_static(b.as_ptr() as u64, 64, "b");
    let region_args = args(8, a, b);
    let frame = a.as_ptr().min(b.as_ptr()) as u64 - 64;
    rt.region(0, &region_args).expect("runs");
    rt.settle_stack_objects(frame);
    assert_eq!(b[0], 0.0, "the device's copy was brought back after the region");
    rt.host_access(&[b.as_ptr() as u64], &[abi::YOSEGI_READ]);
    assert_eq!(b[0], 2.0);
}

#[test]
fn caches_are_freed_largest_first_until_a_quarter_is_free() {
    // 100 bytes, 10 free: freeing the 12-byte cache reaches 22, the 5-byte one 27 (>= 25).
    assert_eq!(caches_to_free(100, 10, vec![(1, 5), (2, 12), (3, 3)]), vec![2, 1]);
    assert_eq!(caches_to_free(100, 30, vec![(1, 5)]), Vec::<u64>::new());
    // Not enough: all of them.
    assert_eq!(caches_to_free(100, 0, vec![(1, 5), (2, 6)]), vec![2, 1]);
}
