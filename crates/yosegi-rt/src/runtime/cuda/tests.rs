//! Without a GPU these check that the device explains its absence; with one (`cargo test --lib
//! runtime::cuda` on a CUDA machine) they run the `back::cuda` test kernels on the GPU and on
//! the simulator and compare what they computed. The runtime's handling of deferred launches
//! (device times and faults reported after the launch returned) is checked without a GPU,
//! through a simulator that reports the way the GPU does.

use super::*;
use crate::back::cuda::tests::{block_reduction, histogram, miscellany, stencil, vector_add};
use crate::ir::{Handle, Module};
use crate::runtime::sim::SimDevice;

enum Arg {
    Int(i64),
    Float(f64),
    Array(Vec<u8>),
}

/// Runs the module's first grid kernel on `device` with the arrays copied in; returns the
/// arrays copied back and the outcome.
fn run(device: &mut dyn Device, module: &Module, args: &[Arg]) -> (Vec<Vec<u8>>, LaunchOutcome) {
    let kernel = &module.grid_kernels[Handle::new(0)];
    let mut params = Vec::new();
    let mut allocs = Vec::new();
    for arg in args {
        match arg {
            Arg::Int(i) => params.push(DeviceParam::Value(ParamValue::Int(*i))),
            Arg::Float(f) => params.push(DeviceParam::Value(ParamValue::Float(*f))),
            Arg::Array(bytes) => {
                let a = device.allocate(bytes.len() as u64);
                device.copy_to_device(a, 0, bytes);
                allocs.push((a, bytes.len()));
                params.push(DeviceParam::Array { alloc: a, offset: 0 });
            }
        }
    }
    let outcome = match device.launch(&Launch::new(module, kernel, params)) {
        Ok(o) => o,
        Err(f) => panic!("{} faulted on {}: {}\n{}", f.kernel, device.name(), f.message, f.help.unwrap_or_default()),
    };
    let arrays = allocs
        .into_iter()
        .map(|(a, len)| {
            let mut out = vec![0; len];
            device.copy_to_host(a, 0, &mut out);
            device.free(a);
            out
        })
        .collect();
    (arrays, outcome)
}

fn f32s(v: impl IntoIterator<Item = f32>) -> Vec<u8> {
    v.into_iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn f64s(v: impl IntoIterator<Item = f64>) -> Vec<u8> {
    v.into_iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn i32s(v: impl IntoIterator<Item = i32>) -> Vec<u8> {
    v.into_iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The GPU and the simulator agree on every test kernel of `back::cuda` (bit for bit, except
/// for a float product whose atomic updates may happen in any order).
fn compare_with_simulator(gpu: &mut CudaDevice) {
    let mut sim = SimDevice::new();
    let n = 1000;
    let cases: Vec<(&str, Module, Vec<Arg>)> = vec![
        (
            "vector add",
            vector_add(),
            vec![
                Arg::Int(n),
                Arg::Array(f32s((0..n).map(|x| x as f32 * 0.1))),
                Arg::Array(f32s((0..n).map(|x| 1.0 / (x as f32 + 1.0)))),
                Arg::Array(vec![0; 4 * n as usize]),
            ],
        ),
        ("block reduction", block_reduction(), vec![Arg::Int(300), Arg::Array(f64s((0..300).map(|x| (x as f64).sqrt())))]),
        (
            "stencil",
            stencil(),
            vec![
                Arg::Int(20),
                Arg::Int(37),
                Arg::Array(f64s((0..20 * 37).map(|x| (x % 11) as f64 * 0.3))),
                Arg::Array(vec![0; 8 * 20 * 37]),
            ],
        ),
        (
            "histogram",
            histogram(),
            vec![
                Arg::Int(n),
                Arg::Array(i32s((0..n as i32).map(|x| (x * 7) % 100))),
                Arg::Array(vec![0; 4 * 16]),
                Arg::Array(f32s([1.0])),
                Arg::Array(f64s([0.0, 0.0])),
                Arg::Array(vec![0; 16]),
                Arg::Array(vec![0; 8]),
            ],
        ),
        (
            "miscellany",
            miscellany(),
            vec![Arg::Int(32), Arg::Float(0.75), Arg::Array(vec![0; 8 * 32]), Arg::Array(vec![0; 8 * 32]), Arg::Array(vec![0; 2 * 32])],
        ),
    ];
    for (what, module, args) in cases {
        let (gpu_arrays, gpu_outcome) = run(gpu, &module, &args);
        let (sim_arrays, sim_outcome) = run(&mut sim, &module, &args);
        let kernel = &module.grid_kernels[Handle::new(0)];
        for (r, (g, s)) in kernel.reductions.iter().zip(gpu_outcome.partials.iter().zip(&sim_outcome.partials)) {
            // A one-block launch hands back one partial per thread on both devices (the host
            // folds them); a larger one, one per block, which the GPU folds itself.
            if g.len() > 1 {
                assert_eq!(g, s, "{what}: the threads' partials");
                continue;
            }
            assert_eq!(g.len(), 1, "{what}: the GPU folds the partials itself");
            let want = fold::fold_in_kernel_order(s, |a, b| value::reduce(r.op, r.ty, a, b)).expect("partials");
            assert_eq!(g[0], want, "{what}: the fold kernel combines in its documented order");
        }
        assert_eq!(gpu_outcome.scalar_outputs, sim_outcome.scalar_outputs, "{what}: scalar outputs");
        // Device times come back once the host waited for the launch (here: the read-back).
        let timed = gpu.take_completed();
        let name = &module.grid_kernels[Handle::new(0)].name;
        assert!(timed.iter().any(|c| &c.kernel == name && c.device_time > Duration::ZERO), "{what}: the launch was timed");
        for (k, (g, s)) in gpu_arrays.iter().zip(&sim_arrays).enumerate() {
            if what == "histogram" && k == 2 {
                // prod: 1000 multiplications by 1.0001f in the order the atomics happened.
                let g = f32::from_le_bytes(g[..4].try_into().expect("4 bytes"));
                let s = f32::from_le_bytes(s[..4].try_into().expect("4 bytes"));
                assert!((g - s).abs() <= 1e-4 * s.abs(), "{what}: prod {g} vs {s}");
            } else if what == "miscellany" && k == 0 {
                // pow, expf and erff: CUDA's may differ from glibc's in the last bits.
                for (a, b) in g.chunks(8).zip(s.chunks(8)) {
                    let a = f64::from_le_bytes(a.try_into().expect("8 bytes"));
                    let b = f64::from_le_bytes(b.try_into().expect("8 bytes"));
                    assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{what}: {a} vs {b}");
                }
            } else if what == "histogram" && k == 3 {
                // big[1] is written by every thread: only big[0] (the max) is determined.
                assert_eq!(g[..8], s[..8], "{what}: max");
            } else {
                assert_eq!(g, s, "{what}: array {k}");
            }
        }
    }
}

#[test]
fn cuda_device_runs_kernels_like_the_simulator_or_explains_its_absence() {
    match CudaDevice::probe() {
        Ok(mut gpu) => {
            assert!(gpu.label().starts_with("cuda:0 ("), "{}", gpu.label());
            compare_with_simulator(&mut gpu);
        }
        Err(why) => {
            // A machine without CUDA: the reason names what is missing.
            eprintln!("no usable GPU here: {why}");
            assert!(why.contains("CUDA") || why.contains("NVRTC") || why.contains("GPU"), "{why}");
            assert!(!why.contains("panicked"), "{why}");
        }
    }
}

#[test]
fn launch_arguments_use_the_parameters_c_width() {
    // The slot of an `int` param holds its 4-byte two's complement in the low bytes, a
    // `float` its f32 bits: what `cuLaunchKernel` copies for parameters of those types.
    let v = value::to_memory(ScalarType::I32, value::from_param(ScalarType::I32, ParamValue::Int(-2)));
    assert_eq!(v.to_le_bytes()[..4], (-2i32).to_le_bytes());
    let f = value::to_memory(ScalarType::F32, value::from_param(ScalarType::F32, ParamValue::Float(0.1)));
    assert_eq!(f.to_le_bytes()[..4], 0.1f32.to_le_bytes());
}

#[test]
fn runtime_selection_of_the_cuda_device() {
    use crate::source::SourceSet;
    use crate::runtime::{DeviceKind, Runtime, RuntimeConfig};
    use std::sync::Arc;
    let make = |device| {
        Runtime::try_new(Arc::new(Module::default()), Arc::new(SourceSet::default()), RuntimeConfig { device, ..Default::default() })
    };
    let gpu_present = CudaDevice::probe().is_ok();
    match make(DeviceKind::Cuda) {
        Ok(runtime) => assert!(gpu_present && runtime.device_name() == "cuda"),
        Err(why) => assert!(!gpu_present && why.starts_with("cannot use the cuda device: "), "{why}"),
    }
    let auto = make(DeviceKind::Auto).unwrap_or_else(|why| panic!("auto never fails: {why}"));
    assert_eq!(auto.device_name(), if gpu_present { "cuda" } else { "sim" });
    let sim = make(DeviceKind::Sim).unwrap_or_else(|why| panic!("sim never fails: {why}"));
    assert_eq!(sim.device_name(), "sim");
}

#[test]
fn the_miscellany_kernel_computes_what_c_would_on_the_simulator() {
    // The GPU comparison above is only as good as the kernel: check it against hand-computed C.
    let args =
        [Arg::Int(32), Arg::Float(0.75), Arg::Array(vec![0; 8 * 32]), Arg::Array(vec![0; 8 * 32]), Arg::Array(vec![0; 2 * 32])];
    let (arrays, outcome) = run(&mut SimDevice::new(), &miscellany(), &args);
    let out_i: Vec<i64> = arrays[1].chunks(8).map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
    let out_s: Vec<i16> = arrays[2].chunks(2).map(|c| i16::from_le_bytes(c.try_into().expect("2 bytes"))).collect();
    // |t-16| + ~t + (t*1 + 1) + (3 < t < 10) + 2t
    assert_eq!(out_i[0], 16);
    assert_eq!(out_i[5], 11 - 6 + 6 + 1 + 10);
    // t*1000 + ((t << 31) >> 30) in unsigned: 2 for odd t
    assert_eq!(out_s[1], 1002);
    assert_eq!(out_s[30], 30000);
    let out_f0 = f64::from_le_bytes(arrays[0][..8].try_into().expect("8 bytes"));
    let expected = 1.0 + 0.5625 + 1.5 + 0.0 + (0.375f32.exp() as f64) + 0.7111556f32 as f64;
    assert!((out_f0 - expected).abs() < 1e-6, "{out_f0} vs {expected}");
    assert_eq!(outcome.partials, vec![vec![100; 32]]);
    assert_eq!(outcome.scalar_outputs, vec![2.25f64.to_bits()]);
}

/// The GPU, or `None` after saying on stderr that the test is skipped (no usable GPU here).
fn gpu_or_skip() -> Option<CudaDevice> {
    CudaDevice::probe().map_err(|why| eprintln!("skipped: no usable CUDA GPU ({why})")).ok()
}

fn key(constants: &[i64], width: IndexWidth) -> VariantKey {
    VariantKey { symbol: "k".into(), constants: constants.to_vec(), width, aliasing: ParamAliasing::Unknown }
}

#[test]
fn variants_are_capped_per_kernel_and_reused() {
    let compiled: Vec<VariantKey> = (0..MAX_VARIANTS as i64).map(|v| key(&[v], IndexWidth::Bits32)).collect();
    // A value set already compiled is reused, even at the cap.
    assert_eq!(choose_variant(key(&[3], IndexWidth::Bits32), VariantPolicy::Specialise, compiled.iter()), key(&[3], IndexWidth::Bits32));
    // A new one beyond the cap gets the generic kernel.
    assert_eq!(choose_variant(key(&[99], IndexWidth::Bits32), VariantPolicy::Specialise, compiled.iter()), key(&[], IndexWidth::Bits64));
    // Below the cap, and for other kernels, new variants are made.
    assert_eq!(choose_variant(key(&[99], IndexWidth::Bits32), VariantPolicy::Specialise, compiled[1..].iter()), key(&[99], IndexWidth::Bits32));
    let other = VariantKey { symbol: "other".into(), constants: vec![99], width: IndexWidth::Bits64, aliasing: ParamAliasing::Unknown };
    assert_eq!(choose_variant(other.clone(), VariantPolicy::Specialise, compiled.iter()), other);
    assert_eq!(choose_variant(key(&[1], IndexWidth::Bits32), VariantPolicy::GenericOnly, [].iter()), key(&[], IndexWidth::Bits64));
    // The 32-bit prepared form (no constants) is not a specialised variant: one below the cap
    // beside it still gets its own (the GPU test of many sizes got 7 of 8 when it counted).
    let mut with_prepared: Vec<VariantKey> = compiled[1..].to_vec();
    with_prepared.push(key(&[], IndexWidth::Bits32));
    assert_eq!(choose_variant(key(&[99], IndexWidth::Bits32), VariantPolicy::Specialise, with_prepared.iter()), key(&[99], IndexWidth::Bits32));
}

#[test]
fn thirty_two_bit_indexing_only_when_threads_and_arrays_fit() {
    assert_eq!(index_width([1024, 1, 1], [256, 1, 1], &[(0, 1 << 20)]), IndexWidth::Bits32);
    // 2^31 elements after the pointer: one past what `int` holds.
    assert_eq!(index_width([1, 1, 1], [1, 1, 1], &[(0, 1 << 31)]), IndexWidth::Bits64);
    // A pointer far into its array: the elements before it count too.
    assert_eq!(index_width([1, 1, 1], [1, 1, 1], &[(-(1 << 31) - 1, 10)]), IndexWidth::Bits64);
    // 2^23 blocks of 256 threads: 2^31 threads.
    assert_eq!(index_width([1 << 23, 1, 1], [256, 1, 1], &[]), IndexWidth::Bits64);
    assert_eq!(index_width([1 << 10, 1 << 10, 2], [32, 32, 1], &[]), IndexWidth::Bits64);
}

/// On a GPU: a first launch runs the prepared form of its kernel, compiled while it waits (a
/// miss), and asks a worker for its specialised variant; once made, the next launch loads it
/// (a worker's), a repeated launch reuses it (a memory hit), and a new device reading the same
/// cache directory loads it from disk; every launch computes what the simulator does.
#[test]
fn kernels_come_from_memory_then_disk_on_the_gpu() {
    let Some(mut first) = gpu_or_skip() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    first.use_disk_cache(dir.path());
    // Every specialised variant is worth compiling here (the gate has its own test).
    first.gate = SpecialisationGate::new(0);
    let module = vector_add();
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (2 * i) as f32).collect();
    let args = || vec![Arg::Int(n as i64), Arg::Array(f32s(a.clone())), Arg::Array(f32s(b.clone())), Arg::Array(f32s(vec![0.0; n]))];
    let (want, _) = run(&mut SimDevice::new(), &module, &args());
    let (got, outcome) = run(&mut first, &module, &args());
    assert_eq!(got, want);
    assert_eq!(outcome.counters.kernel_cache_misses, 1);
    assert_eq!(outcome.counters.kernel_prepared_stand_ins, 1);
    assert!(outcome.counters.jit_time_ns > 0);
    first.wait_for_requested();
    let (got, outcome) = run(&mut first, &module, &args());
    assert_eq!(got, want);
    assert_eq!((outcome.counters.kernel_worker_hits, outcome.counters.kernel_prepared_stand_ins), (1, 0), "{:?}", outcome.counters);
    let (_, outcome) = run(&mut first, &module, &args());
    assert_eq!(outcome.counters.kernel_cache_memory_hits, 1);
    assert_eq!(outcome.counters.jit_time_ns, 0);
    assert!(first.kernels.keys().any(|k| k.constants == vec![n as i64] && k.width == IndexWidth::Bits32));
    drop(first);

    let mut second = CudaDevice::probe().expect("the GPU opened a moment ago");
    second.use_disk_cache(dir.path());
    let (got, outcome) = run(&mut second, &module, &args());
    assert_eq!(got, want);
    assert_eq!(outcome.counters.kernel_cache_disk_hits, 1, "{:?}", outcome.counters);
    eprintln!("vadd from the disk cache: {:.2} ms", outcome.counters.jit_time_ns as f64 / 1e6);
}

/// On a GPU: a specialised variant whose launches have done little work is not compiled (the
/// prepared form runs them, and no worker is asked); once they pass the gate's threshold, a
/// worker makes it and later launches run it.
#[test]
fn a_specialised_variant_is_compiled_once_its_launches_have_done_enough_work_on_the_gpu() {
    let Some(mut gpu) = gpu_or_skip() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    gpu.use_disk_cache(dir.path());
    let module = vector_add();
    let n = 1000usize;
    let args = || vec![Arg::Int(n as i64), Arg::Array(f32s((0..n).map(|i| i as f32))), Arg::Array(f32s(vec![1.0; n])), Arg::Array(f32s(vec![0.0; n]))];
    let (want, _) = run(&mut SimDevice::new(), &module, &args());
    // The first launch's work (blocks x threads) sets the threshold: three launches pass it.
    let (got, first) = run(&mut gpu, &module, &args());
    assert_eq!(got, want);
    let held = gpu.gate.held();
    assert_eq!(held.len(), 1, "a launch of {} blocks is held back by the default threshold: {held:?}", first.counters.blocks);
    assert_eq!(first.counters.kernel_prepared_stand_ins, 1);
    gpu.gate = SpecialisationGate::new(held[0].1 * 5 / 2);
    gpu.requested.clear();
    for launch in 0..2 {
        let (got, outcome) = run(&mut gpu, &module, &args());
        assert_eq!(got, want);
        assert_eq!(outcome.counters.kernel_prepared_stand_ins, 1, "launch {launch}: {:?}", outcome.counters);
        assert!(gpu.requested.is_empty() && !gpu.kernels.keys().any(|k| !k.constants.is_empty()), "launch {launch} asked for the variant");
    }
    let (got, _) = run(&mut gpu, &module, &args());
    assert_eq!(got, want);
    assert!(!gpu.requested.is_empty() || gpu.kernels.keys().any(|k| !k.constants.is_empty()), "the third launch asks for it");
    gpu.wait_for_requested();
    let (got, outcome) = run(&mut gpu, &module, &args());
    assert_eq!(got, want);
    assert_eq!(outcome.counters.kernel_prepared_stand_ins, 0, "{:?}", outcome.counters);
    assert!(gpu.kernels.keys().any(|k| k.constants == vec![n as i64]));
}

/// On a GPU: launches with more distinct sizes than `MAX_VARIANTS` stay correct (the extra
/// ones run the generic kernel) and compile no more than the cap plus the generic kernel.
#[test]
fn many_sizes_fall_back_to_the_generic_kernel_on_the_gpu() {
    let Some(mut gpu) = gpu_or_skip() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    gpu.use_disk_cache(dir.path());
    gpu.gate = SpecialisationGate::new(0);
    let module = vector_add();
    for n in 1..=(MAX_VARIANTS + 3) {
        let args = vec![
            Arg::Int(n as i64),
            Arg::Array(f32s((0..n).map(|i| i as f32))),
            Arg::Array(f32s((0..n).map(|i| 1.0 + i as f32))),
            Arg::Array(f32s(vec![0.0; n])),
        ];
        let (want, _) = run(&mut SimDevice::new(), &module, &args);
        let (got, _) = run(&mut gpu, &module, &args);
        assert_eq!(got, want, "n = {n}");
        gpu.wait_for_requested();
        // Its own variant, once a worker made it.
        let (again, _) = run(&mut gpu, &module, &args);
        assert_eq!(again, want, "n = {n}, again");
    }
    let specialised = gpu.kernels.keys().filter(|k| !k.constants.is_empty()).count();
    assert_eq!(specialised, MAX_VARIANTS, "{:?}", gpu.kernels.keys().collect::<Vec<_>>());
    assert!(gpu.kernels.keys().any(VariantKey::is_generic));
}

/// On a GPU: a reduction's partials buffer is reused by the next launch, zeroed again: a
/// smaller launch after a larger one reads only its own blocks' partials, and the results match
/// the simulator's each time.
#[test]
fn reduction_buffers_are_reused_between_launches_on_the_gpu() {
    let Some(mut gpu) = gpu_or_skip() else { return };
    let module = block_reduction();
    let mut sim = SimDevice::new();
    // 1 200 000 elements (18 750 blocks of 64): more partials than the fold kernel's
    // threads times its batch, so that a thread folds a batch and then part of one.
    for n in [3000i64, 300, 3000, 1_200_000] {
        let args = vec![Arg::Int(n), Arg::Array(f64s((0..n).map(|x| (x as f64).sqrt())))];
        let (_, want) = run(&mut sim, &module, &args);
        let (_, got) = run(&mut gpu, &module, &args);
        let r = &module.grid_kernels[Handle::new(0)].reductions[0];
        let want = fold::fold_in_kernel_order(&want.partials[0], |a, b| value::reduce(r.op, r.ty, a, b));
        assert_eq!(got.partials, vec![want.into_iter().collect::<Vec<_>>()], "n = {n}");
        // The partials and the folded value's buffers are kept; the largest launch needs a
        // larger partials buffer.
        assert_eq!(gpu.spare.len(), if n == 1_200_000 { 3 } else { 2 }, "n = {n}");
    }
}

/// Binds the vector-add kernel to fresh arrays of `n` elements, its output `c_offset` bytes
/// into its allocation.
fn vector_add_params(device: &mut dyn Device, n: usize, c_offset: i64) -> Vec<DeviceParam> {
    let mut params = vec![DeviceParam::Value(ParamValue::Int(n as i64))];
    for k in 0..3 {
        let alloc = device.allocate(4 * n as u64);
        device.copy_to_device(alloc, 0, &f32s((0..n).map(|i| (i + k) as f32)));
        params.push(DeviceParam::Array { alloc, offset: if k == 2 { c_offset } else { 0 } });
    }
    params
}

/// On a GPU: a launch that hands nothing back is only enqueued; its device time reaches the
/// stats once the host waited for it, exactly once.
#[test]
fn device_times_are_reported_once_the_host_waited_on_the_gpu() {
    let Some(mut gpu) = gpu_or_skip() else { return };
    gpu.sync = LaunchSync::Deferred;
    let module = vector_add();
    let kernel = &module.grid_kernels[Handle::new(0)];
    let params = vector_add_params(&mut gpu, 1 << 20, 0);
    gpu.launch(&Launch::new(&module, kernel, params)).expect("launches");
    assert_eq!(gpu.in_flight.len(), 1, "the host did not wait for the launch");
    assert!(gpu.take_completed().is_empty(), "no time is known before the host waited");
    gpu.wait();
    let done = gpu.take_completed();
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(done[0].kernel, "vadd_l12");
    assert!(done[0].device_time > Duration::ZERO);
    assert!(gpu.take_completed().is_empty(), "each launch is reported once");
    assert_eq!(gpu.events.free_count(), 2, "the launch's events are back in the pool");
}

const FAULT_CHILD: &str = "YOSEGI_TEST_FAULT_CHILD";

/// On a GPU: a kernel that faults after its launch returned is named when the host next waits
/// (here: by a copy back), with a note when other launches ran after it. A fault breaks the
/// process's CUDA context, so the faulting part runs in a child process (this same test,
/// told so by an environment variable).
#[test]
fn a_deferred_fault_names_the_first_kernel_in_flight_on_the_gpu() {
    if std::env::var_os(FAULT_CHILD).is_some() {
        fault_while_in_flight();
        return;
    }
    if let Err(why) = CudaDevice::probe() {
        eprintln!("skipped: no usable CUDA GPU ({why})");
        return;
    }
    let exe = std::env::current_exe().expect("the test executable");
    let name = "runtime::cuda::tests::a_deferred_fault_names_the_first_kernel_in_flight_on_the_gpu";
    let out = std::process::Command::new(exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(FAULT_CHILD, "1")
        .output()
        .expect("the child runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("deferred fault of vadd_l12:"), "{text}");
}

fn fault_while_in_flight() {
    let mut gpu = CudaDevice::probe().expect("the parent process opened the GPU");
    gpu.sync = LaunchSync::Deferred;
    let module = vector_add();
    let kernel = &module.grid_kernels[Handle::new(0)];
    // The output 1 TiB past its allocation: the stores fault.
    let params = vector_add_params(&mut gpu, 1 << 16, 1 << 40);
    gpu.launch(&Launch::new(&module, kernel, params)).expect("enqueued: the fault is not known yet");
    let other = stencil();
    let stencil_kernel = &other.grid_kernels[Handle::new(0)];
    let (u, out) = (gpu.allocate(8 * 64 * 64), gpu.allocate(8 * 64 * 64));
    let stencil_params = vec![
        DeviceParam::Value(ParamValue::Int(64)),
        DeviceParam::Value(ParamValue::Int(64)),
        DeviceParam::Array { alloc: u, offset: 0 },
        DeviceParam::Array { alloc: out, offset: 0 },
    ];
    let second = gpu.launch(&Launch::new(&other, stencil_kernel, stencil_params));
    let fault = match second {
        // Refused because the first one broke the context: reported as the first one's.
        Err(fault) => fault,
        Ok(_) => {
            let mut back = vec![0u8; 8];
            gpu.copy_to_host(out, 0, &mut back);
            let fault = gpu.take_fault().expect("the copy back found the fault");
            assert!(fault.message.contains("or a kernel launched after it (1 more were running)"), "{}", fault.message);
            fault
        }
    };
    assert_eq!(fault.kernel, "vadd_l12", "{}", fault.message);
    assert!(fault.message.contains("failed on the GPU"), "{}", fault.message);
    println!("deferred fault of {}: {}", fault.kernel, fault.message);
}

// ---------------------------------------------------------------------------------------------
// The runtime's side of deferred launches, without a GPU: a simulator that reports like the GPU.

/// The simulator, reporting its launches the way the cuda device does: device times only once
/// the host waited for them, and a planned fault found at that wait.
struct DeferringSim {
    sim: SimDevice,
    in_flight: Vec<String>,
    completed: Vec<CompletedLaunch>,
    fault_at_next_wait: Option<KernelFault>,
    fault: Option<KernelFault>,
}

impl DeferringSim {
    fn new() -> DeferringSim {
        DeferringSim { sim: SimDevice::new(), in_flight: Vec::new(), completed: Vec::new(), fault_at_next_wait: None, fault: None }
    }
}

impl Device for DeferringSim {
    fn name(&self) -> &str {
        "deferring sim"
    }
    crate::delegate_device_memory_to_sim!();
    fn copy_to_host(&mut self, alloc: DeviceAlloc, offset: u64, dst: &mut [u8]) {
        self.wait();
        self.sim.copy_to_host(alloc, offset, dst)
    }
    fn launch(&mut self, launch: &Launch) -> Result<LaunchOutcome, KernelFault> {
        let outcome = self.sim.launch(launch)?;
        self.in_flight.push(launch.kernel.name.clone());
        Ok(outcome)
    }
    fn wait(&mut self) {
        if let Some(fault) = self.fault_at_next_wait.take() {
            self.in_flight.clear();
            self.fault = Some(fault);
        }
        let done = self.in_flight.drain(..).map(|kernel| CompletedLaunch { kernel, device_time: Duration::from_millis(1) });
        self.completed.extend(done);
    }
    fn take_fault(&mut self) -> Option<KernelFault> {
        self.fault.take()
    }
    fn take_completed(&mut self) -> Vec<CompletedLaunch> {
        std::mem::take(&mut self.completed)
    }
}

/// Region 0 runs `b[i] = a[i] + 1` for `i < n` (args: n, a, b) through grid kernel `inc_g`.
fn increment_module() -> Module {
    use crate::analysis::testing::{B, array_param, kernel as make_kernel, scalar_param};
    use crate::ir::{ArrayRef, BinaryOp, HostArg, HostArgKind, Region, RegionKind, Stmt};
    use crate::runtime::testing::GridBuilder;
    let mut module = Module::default();
    let mut b = B::new();
    let i = b.loop_var("i");
    let zero = b.int(0);
    let n = b.param(0);
    let dim = b.dim(i, zero, n);
    let iv = b.local(i);
    let load = b.load(1, vec![iv]);
    let one = b.float(1.0, ScalarType::F64);
    let sum = b.add(load, one);
    let store = b.store(2, vec![iv], sum);
    b.body.block = vec![store];
    let params = vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)];
    let kernel = module.kernels.append(make_kernel("inc", params, vec![dim], b.body));

    let mut g = GridBuilder::new("inc_g", [32, 1, 1]);
    let np = g.scalar_param("n", ScalarType::I32);
    let a = g.array_param("a", ScalarType::F64, &[]);
    let out = g.array_param("b", ScalarType::F64, &[]);
    let (gid, guard) = g.one_thread_per_point(np);
    let la = g.load(ArrayRef::Param(a), &[gid], ScalarType::F64, crate::diag::Span::default());
    let one = g.float(1.0, ScalarType::F64);
    let sum = g.bin(BinaryOp::Add, la, one);
    let st = g.store(ArrayRef::Param(out), &[gid], sum);
    module.grid_kernels.append(g.finish(vec![Stmt::If { cond: guard, then: vec![st], otherwise: vec![] }]));
    let arg = |kind| HostArg { c_expr: String::new(), kind, size_expr: None };
    module.regions.push(Region {
        id: 0,
        span: crate::diag::Span::default(),
        body_span: None,
        kind: RegionKind::Compute { kernels: vec![kernel], data: vec![] },
        args: vec![arg(HostArgKind::Int), arg(HostArgKind::Pointer), arg(HostArgKind::Pointer)],
        if_arg: None,
        function: "main".into(),
        unread_on_host: Vec::new(),
        host_after: Vec::new(),
        settle_after: Vec::new(),
    });
    module
}

fn deferring_runtime(device: DeferringSim) -> crate::runtime::Runtime {
    use crate::runtime::{Runtime, RuntimeConfig};
    let mut rt = Runtime::try_new(
        std::sync::Arc::new(increment_module()),
        std::sync::Arc::new(crate::source::SourceSet::default()),
        RuntimeConfig::default(),
    )
    .expect("the simulator is always there");
    rt.devices = vec![Box::new(device)];
    rt
}

fn increment_args(a: &mut [f64], b: &mut [f64]) -> Vec<crate::runtime::abi::YosegiArg> {
    use crate::runtime::abi::YosegiArg;
    vec![
        YosegiArg { i: a.len() as i64, ..Default::default() },
        YosegiArg { ptr: a.as_mut_ptr() as *mut std::ffi::c_void, ..Default::default() },
        YosegiArg { ptr: b.as_mut_ptr() as *mut std::ffi::c_void, ..Default::default() },
    ]
}

/// Without a GPU: the stats get a deferred launch's device time when the host waits for the
/// device (here: reading the result), not before, and each launch's once.
#[test]
fn deferred_device_times_reach_the_stats_when_the_host_reads() {
    let mut rt = deferring_runtime(DeferringSim::new());
    let mut a = vec![1.0; 100];
    let mut b = vec![0.0; 100];
    let args = increment_args(&mut a, &mut b);
    rt.region(0, &args).expect("runs");
    rt.region(0, &args).expect("runs");
    assert_eq!(rt.stats().launches["inc_g"].count, 2);
    assert_eq!(rt.stats().launches["inc_g"].device_time, Duration::ZERO, "nothing waited for yet");
    rt.host_access(&[args[2].ptr as u64], &[crate::runtime::abi::YOSEGI_READ]);
    assert_eq!(rt.stats().launches["inc_g"].device_time, Duration::from_millis(2));
    assert_eq!(rt.stats().device.device_time_ns, 2_000_000);
    rt.synchronize_devices().expect("no fault");
    assert_eq!(rt.stats().launches["inc_g"].device_time, Duration::from_millis(2), "counted once");
    assert_eq!(b, vec![2.0; 100]);
}

/// Without a GPU: a fault found after its launch returned is reported by the runtime at the
/// next wait (`#pragma acc wait`, the end of the program), naming the kernel.
#[test]
fn a_fault_found_after_the_launch_is_reported_with_its_kernel() {
    // The fault the GPU will find at the next wait.
    let fault = KernelFault {
        kernel: "inc_g".into(),
        message: "the kernel failed on the GPU: CUDA_ERROR_ILLEGAL_ADDRESS".into(),
        span: crate::diag::Span::default(),
        help: None,
    };
    let mut rt = deferring_runtime(DeferringSim { fault_at_next_wait: Some(fault), ..DeferringSim::new() });
    let mut a = vec![1.0; 100];
    let mut b = vec![0.0; 100];
    let args = increment_args(&mut a, &mut b);
    rt.region(0, &args).expect("the launch returns before the fault is known");
    rt.region(0, &args).expect("nothing waited for the device yet");
    let error = rt.synchronize_devices().expect_err("the wait finds the fault");
    assert_eq!(error.exit_code(), 1);
    assert!(error.diagnostic.message.contains("kernel `inc_g` faulted"), "{}", error.diagnostic.message);
    assert!(error.diagnostic.message.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{}", error.diagnostic.message);
}

#[test]
fn requested_devices_map_onto_the_physical_gpus_in_turn() {
    use peers::{physical_ordinals, shares_gpu};
    assert_eq!(physical_ordinals(DeviceCount::All, 2), vec![0, 1]);
    assert_eq!(physical_ordinals(DeviceCount::Exactly(1), 8), vec![0]);
    assert_eq!(physical_ordinals(DeviceCount::Exactly(4), 1), vec![0, 0, 0, 0], "logical devices on one GPU");
    assert_eq!(physical_ordinals(DeviceCount::Exactly(5), 2), vec![0, 1, 0, 1, 0]);
    assert_eq!(physical_ordinals(DeviceCount::Exactly(0), 2), Vec::<usize>::new());
    assert_eq!(physical_ordinals(DeviceCount::All, 0), Vec::<usize>::new(), "no GPU, no device");
    let ordinals = physical_ordinals(DeviceCount::Exactly(3), 2);
    assert_eq!((0..3).map(|i| shares_gpu(&ordinals, i)).collect::<Vec<_>>(), vec![true, false, true]);
    assert!(!shares_gpu(&physical_ordinals(DeviceCount::All, 4), 2));
}

#[test]
fn open_devices_gives_as_many_simulators_as_asked_for() {
    use crate::runtime::{DeviceKind, open_devices};
    let names = |devices: Vec<Box<dyn Device>>| devices.iter().map(|d| d.name().to_string()).collect::<Vec<_>>();
    let three = open_devices(DeviceKind::Sim, DeviceCount::Exactly(3)).expect("sims always open");
    assert_eq!(names(three), vec!["sim"; 3]);
    let all = open_devices(DeviceKind::Sim, DeviceCount::All).expect("sims always open");
    assert_eq!(names(all), vec!["sim"], "one simulator stands for the machine");
    for kind in [DeviceKind::Sim, DeviceKind::Cuda, DeviceKind::Auto] {
        let why = open_devices(kind, DeviceCount::Exactly(0)).err().unwrap_or_else(|| panic!("{kind:?}: 0 devices is refused"));
        assert!(why.contains("0 devices"), "{why}");
    }
    let auto = open_devices(DeviceKind::Auto, DeviceCount::Exactly(2)).expect("auto never fails");
    let gpu_present = CudaDevice::probe().is_ok();
    assert_eq!(names(auto), vec![if gpu_present { "cuda" } else { "sim" }; 2]);
}

/// Fills `len` bytes of a new allocation of `device` with a pattern that differs per `seed`.
fn patterned(device: &mut dyn Device, len: usize, seed: u8) -> (DeviceAlloc, Vec<u8>) {
    let bytes: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed)).collect();
    let alloc = device.allocate(len as u64);
    device.copy_to_device(alloc, 0, &bytes);
    (alloc, bytes)
}

/// Copies a middle range of a patterned allocation of `src` into a zeroed one of `dst` (at
/// another offset) and checks every byte of the destination.
fn check_copy_between(dst: &mut dyn Device, src: &mut dyn Device, len: usize) {
    let (from, pattern) = patterned(src, len, 3);
    let to = dst.allocate(len as u64);
    dst.fill_zero(to, 0, len as u64);
    let (src_offset, dst_offset, count) = (16, 40, len - 64);
    dst.copy_from_peer(to, dst_offset as u64, src, from, src_offset as u64, count as u64);
    let mut got = vec![0xffu8; len];
    dst.copy_to_host(to, 0, &mut got);
    let mut want = vec![0u8; len];
    want[dst_offset..dst_offset + count].copy_from_slice(&pattern[src_offset..src_offset + count]);
    assert!(got == want, "{} <- {}: the copied range and only it", dst.name(), src.name());
    src.free(from);
    dst.free(to);
}

#[test]
fn copies_between_simulators_go_through_the_host() {
    let (mut a, mut b) = (SimDevice::new(), SimDevice::new());
    let lent = a.allocate(8);
    assert_eq!(a.peer_memory(lent, 0), None, "the simulator lends no memory");
    check_copy_between(&mut a, &mut b, 4096);
    check_copy_between(&mut b, &mut a, 100);
}

/// Two devices of a slice at once.
fn pair_mut<T>(devices: &mut [T], i: usize, j: usize) -> (&mut T, &mut T) {
    assert_ne!(i, j);
    if i < j {
        let (low, high) = devices.split_at_mut(j);
        (&mut low[i], &mut high[0])
    } else {
        let (low, high) = devices.split_at_mut(i);
        (&mut high[0], &mut low[j])
    }
}

/// On a GPU: every pair of three devices (logical ones sharing a GPU on a one-GPU machine,
/// peers on a machine with several) copies between their memories, also right after a launch
/// that writes the source is enqueued (the copy must come after it), and from and to a
/// simulator (through the host).
#[test]
fn devices_copy_from_each_other_on_the_gpu() {
    let mut devices = match CudaDevice::probe_all(DeviceCount::Exactly(3)) {
        Ok(devices) => devices,
        Err(why) => {
            eprintln!("skipped: no usable CUDA GPU ({why})");
            assert!(CudaDevice::probe_all(DeviceCount::All).is_err());
            return;
        }
    };
    let gpus = CudaDevice::probe_all(DeviceCount::All).expect("the GPUs opened a moment ago").len();
    let ordinals = peers::physical_ordinals(DeviceCount::Exactly(3), gpus);
    for (i, d) in devices.iter().enumerate() {
        assert_eq!(d.ordinal() as usize, ordinals[i]);
        let logical = peers::shares_gpu(&ordinals, i);
        let prefix = if logical { format!("cuda:{i} (logical device on GPU {}: ", ordinals[i]) } else { format!("cuda:{i} (") };
        assert!(d.label().starts_with(&prefix), "{}", d.label());
        assert!(d.model().contains(", sm_") && !d.model().contains("cuda:"), "{}", d.model());
        eprintln!("{}: peers {:?}", d.label(), d.peer_links());
        let others: Vec<i32> = ordinals.iter().map(|&o| o as i32).filter(|&o| o != d.ordinal()).collect();
        assert!(d.peer_links().iter().all(|(o, _)| others.contains(o)), "{:?}", d.peer_links());
    }
    for i in 0..3 {
        for j in 0..3 {
            if i != j {
                let (dst, src) = pair_mut(&mut devices, i, j);
                check_copy_between(dst, src, 1 << 16);
            }
        }
    }
    let mut sim = SimDevice::new();
    check_copy_between(&mut devices[1], &mut sim, 1000);
    check_copy_between(&mut sim, &mut devices[2], 1000);

    // A copy enqueued behind a launch in flight on the source sees what the launch wrote
    // (devices 0 and 1 are on two GPUs where there are two).
    let n = 1 << 20;
    let module = vector_add();
    let kernel = &module.grid_kernels[Handle::new(0)];
    let (dst, src) = pair_mut(&mut devices, 1, 0);
    src.sync = LaunchSync::Deferred;
    let params = vector_add_params(src, n, 0);
    let DeviceParam::Array { alloc: c, .. } = params[3] else { panic!("c is an array") };
    src.launch(&Launch::new(&module, kernel, params)).expect("launches");
    let to = dst.allocate(4 * n as u64);
    dst.copy_from_peer(to, 0, src, c, 0, 4 * n as u64);
    let mut got = vec![0u8; 4 * n];
    dst.copy_to_host(to, 0, &mut got);
    assert!(got == f32s((0..n).map(|i| i as f32 + 0.5)), "the copy came after the launch");
    assert!(dst.take_fault().is_none() && src.take_fault().is_none());
}
