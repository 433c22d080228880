//! The OpenACC API on the simulator: the routines together with data clauses and launches of
//! `runtime::tests::scale_module`'s kernel (region 0: `b[i] = 2 * a[i]` for `i < n`, args n, a,
//! b), reference counts, device addresses, copies, and the errors of calls that cannot be
//! honoured.

use std::ffi::c_void;

use super::*;
use crate::ir::DataClauseKind;
use crate::ir::RegionKind;
use crate::runtime::abi::YOSEGI_READ;
use crate::runtime::tests::{args, runtime, scale_module, section};

const SYNC: i32 = acc_async::SYNC;

fn bytes_of(v: &[f64]) -> u64 {
    std::mem::size_of_val(v) as u64
}

/// The address the runtime reads and writes (taken from a mutable borrow: it writes there).
fn addr(v: &mut [f64]) -> u64 {
    v.as_mut_ptr() as u64
}

/// `args` with the arrays given as (device) addresses.
fn raw_args(n: i64, a: u64, b: u64) -> Vec<YosegiArg> {
    vec![
        YosegiArg { i: n, ..Default::default() },
        YosegiArg { ptr: a as *mut c_void, ..Default::default() },
        YosegiArg { ptr: b as *mut c_void, ..Default::default() },
    ]
}

#[test]
fn copyin_then_a_present_clause_sees_the_same_copy() {
    // Region 1: `parallel present(a[0:n])` around nothing but the clause check.
    let data = vec![section(DataClauseKind::Present, 1, Some(0), "a")];
    let mut rt = runtime(scale_module(vec![RegionKind::Data { data }]));
    let mut a: Vec<f64> = (0..32).map(f64::from).collect();
    let mut b = vec![0.0; 32];
    assert!(!rt.acc_is_present(addr(&mut a), bytes_of(&a)));
    let err = rt.data_enter(1, &args(32, &mut a, &mut b)).expect_err("not present yet");
    assert!(err.diagnostic.message.contains("is not on the device"), "{}", err.diagnostic.message);

    let d = rt.acc_enter_data("acc_copyin", addr(&mut a), bytes_of(&a), true, SYNC).expect("copyin");
    assert_ne!(d, 0);
    assert_eq!(rt.stats().bytes_to_device, 256);
    assert!(rt.acc_is_present(addr(&mut a), bytes_of(&a)));
    assert!(rt.acc_is_present(addr(&mut a) + 8, 16), "a part of present data is present");
    assert!(!rt.acc_is_present(addr(&mut a), bytes_of(&a) + 8), "more than was copied in is not");
    let region_args = args(32, &mut a, &mut b);
    rt.data_enter(1, &region_args).expect("present now");
    rt.region(0, &region_args).expect("runs");
    assert_eq!(rt.stats().bytes_to_device, 256, "the launch found `a` on the device already");
    rt.data_exit(1, &region_args).expect("exit");
    assert!(rt.acc_is_present(addr(&mut a), bytes_of(&a)), "the construct's exit leaves the dynamic count");
    rt.acc_exit_data("acc_delete", addr(&mut a), bytes_of(&a), false, false, SYNC).expect("delete");
    assert!(!rt.acc_is_present(addr(&mut a), bytes_of(&a)));
    rt.host_access(&[addr(&mut b)], &[YOSEGI_READ]);
    assert_eq!(b[31], 62.0);
}

#[test]
fn dynamic_counts_go_down_one_at_a_time_and_finalize_zeroes_them() {
    let data = vec![section(DataClauseKind::CopyIn, 1, Some(0), "a")];
    let mut rt = runtime(scale_module(vec![RegionKind::Data { data }]));
    let mut a = vec![1.0; 8];
    let mut b = vec![0.0; 8];
    let (h, n) = (addr(&mut a), bytes_of(&a));
    for _ in 0..3 {
        rt.acc_enter_data("acc_copyin", h, n, true, SYNC).expect("copyin");
    }
    rt.acc_exit_data("acc_delete", h, n, false, false, SYNC).expect("delete");
    assert!(rt.acc_is_present(h, n), "two holds left");
    // A data construct holds it too: finalize drops the dynamic count only.
    let region_args = args(8, &mut a, &mut b);
    rt.data_enter(1, &region_args).expect("enter");
    rt.acc_exit_data("acc_copyout_finalize", h, n, true, true, SYNC).expect("finalize");
    assert!(rt.acc_is_present(h, n), "the construct still holds it");
    rt.acc_exit_data("acc_delete", h, n, false, false, SYNC).expect("no dynamic count left: nothing happens");
    assert!(rt.acc_is_present(h, n));
    rt.data_exit(1, &region_args).expect("exit");
    assert!(!rt.acc_is_present(h, n));
    // Exit routines on absent data do nothing.
    rt.acc_exit_data("acc_copyout", h, n, true, false, SYNC).expect("absent: no action");
}

#[test]
fn device_pointers_map_back_and_a_kernel_may_take_them() {
    let mut rt = runtime(scale_module(vec![]));
    let mut a: Vec<f64> = (0..16).map(f64::from).collect();
    let mut b = vec![0.0; 16];
    let da = rt.acc_enter_data("acc_copyin", addr(&mut a), bytes_of(&a), true, SYNC).expect("copyin");
    let db = rt.acc_enter_data("acc_create", addr(&mut b), bytes_of(&b), false, SYNC).expect("create");
    assert!(da >= crate::runtime::sim::SIM_ADDRESS_BASE, "a simulated device address: {da:#x}");
    assert_eq!(rt.acc_deviceptr(addr(&mut a)), da);
    assert_eq!(rt.acc_deviceptr(addr(&mut a) + 24), da + 24);
    assert_eq!(rt.acc_hostptr(da + 24), addr(&mut a) + 24);
    assert_eq!(rt.acc_hostptr(addr(&mut a)), 0, "a host address is no device address");
    assert_eq!(rt.acc_deviceptr(addr(&mut a) + bytes_of(&a)), 0, "one past the end is not present");
    // `deviceptr(da, db)`: the kernel works on the objects themselves.
    rt.region(0, &raw_args(16, da, db)).expect("runs on device addresses");
    rt.host_access(&[addr(&mut b)], &[YOSEGI_READ]);
    assert_eq!(b[5], 10.0);
    rt.acc_exit_data("acc_delete", addr(&mut a), bytes_of(&a), false, false, SYNC).expect("delete");
    assert_eq!(rt.acc_deviceptr(addr(&mut a)), 0);
    assert_eq!(rt.acc_hostptr(da), 0, "no longer present");
}

#[test]
fn acc_malloc_memory_is_bound_as_it_is_and_memcpy_moves_through_it() {
    let mut rt = runtime(scale_module(vec![]));
    let mut a: Vec<f64> = (0..10).map(|x| x as f64 + 0.5).collect();
    let mut out = vec![0.0; 10];
    let (_, free_before) = rt.devices[0].memory();
    let da = rt.acc_malloc(80);
    let db = rt.acc_malloc(80);
    assert!(da != 0 && db != 0 && da != db);
    assert_eq!(rt.devices[0].memory().1, free_before - 160);
    assert_eq!(rt.acc_get_property("acc_get_property", 0, acc_device::NVIDIA, acc_property::FREE_MEMORY).unwrap(), free_before - 160);
    rt.acc_memcpy_to_device("acc_memcpy_to_device", da, addr(&mut a), 80, SYNC).expect("to device");
    rt.region(0, &raw_args(10, da, db)).expect("runs on acc_malloc memory");
    rt.acc_memcpy_from_device("acc_memcpy_from_device", addr(&mut out), db + 16, 64, SYNC).expect("from device");
    assert_eq!(out[0], 5.0, "b[2] = 2 * 2.5");
    assert_eq!(out[7], 19.0);
    assert_eq!(rt.acc_hostptr(da), 0, "acc_malloc memory mirrors no host data");
    rt.acc_free("acc_free", da).expect("free");
    rt.acc_free("acc_free", db).expect("free");
    assert_eq!(rt.devices[0].memory().1, free_before);
    let err = rt.acc_free("acc_free", da).expect_err("freed twice");
    assert!(err.diagnostic.message.starts_with("acc_free: "), "{}", err.diagnostic.message);
}

#[test]
fn memcpy_to_a_copy_makes_the_host_copy_stale_until_it_is_read() {
    let mut rt = runtime(scale_module(vec![]));
    let mut data = vec![7.0; 6];
    let mut src = vec![1.0, 2.0, 3.0];
    let d = rt.acc_enter_data("acc_create", addr(&mut data), bytes_of(&data), false, SYNC).expect("create");
    rt.acc_memcpy_to_device("acc_memcpy_to_device", d + 16, addr(&mut src), 24, SYNC).expect("to device");
    assert_eq!(data[2], 7.0, "the device holds the new bytes");
    rt.host_access(&[addr(&mut data)], &[YOSEGI_READ]);
    assert_eq!(data, vec![7.0, 7.0, 1.0, 2.0, 3.0, 7.0], "the host sees them once it reads");
    // Device to device within the copy, then an update.
    rt.acc_memcpy_device("acc_memcpy_device", d, d + 16, 16, SYNC).expect("device to device");
    rt.acc_update("acc_update_self", addr(&mut data), 16, false, SYNC).expect("update self");
    assert_eq!(&data[..2], &[1.0, 2.0]);
}

#[test]
fn update_device_sends_what_the_host_changed() {
    let mut rt = runtime(scale_module(vec![]));
    let mut a = vec![1.0; 8];
    let mut b = vec![0.0; 8];
    rt.acc_enter_data("acc_copyin", addr(&mut a), bytes_of(&a), true, SYNC).expect("copyin");
    rt.acc_enter_data("acc_create", addr(&mut b), bytes_of(&b), false, SYNC).expect("create");
    rt.host_access(&[addr(&mut a)], &[abi::YOSEGI_WRITE]);
    a[0] = 4.0;
    rt.acc_update("acc_update_device", addr(&mut a), 8, true, 3).expect("update device");
    assert_eq!(rt.stats().bytes_to_device, 64 + 8, "only the changed element moved");
    let (da, db) = (rt.acc_deviceptr(addr(&mut a)), rt.acc_deviceptr(addr(&mut b)));
    rt.region(0, &raw_args(8, da, db)).expect("runs");
    rt.acc_update("acc_update_self", addr(&mut b), bytes_of(&b), false, SYNC).expect("update self");
    assert_eq!(&b[..2], &[8.0, 2.0]);
    let err = rt.acc_update("acc_update_self", addr(&mut b), bytes_of(&b) + 8, false, SYNC).expect_err("past the end");
    assert!(err.diagnostic.message.starts_with("acc_update_self: "), "{}", err.diagnostic.message);
}

#[test]
fn mapped_memory_is_the_copy_of_the_host_array() {
    let data = vec![section(DataClauseKind::Present, 2, Some(0), "b")];
    let mut rt = runtime(scale_module(vec![RegionKind::Data { data }]));
    let mut a: Vec<f64> = (0..8).map(f64::from).collect();
    let mut b = vec![0.0; 8];
    let d = rt.acc_malloc(2 * bytes_of(&b));
    rt.acc_map_data("acc_map_data", addr(&mut b), d + 64, bytes_of(&b)).expect("map");
    assert!(rt.acc_is_present(addr(&mut b), bytes_of(&b)));
    assert_eq!(rt.acc_deviceptr(addr(&mut b)), d + 64);
    assert_eq!(rt.acc_hostptr(d + 72), addr(&mut b) + 8);
    let err = rt.acc_map_data("acc_map_data", addr(&mut b), d, bytes_of(&b)).expect_err("mapped twice");
    assert!(err.diagnostic.message.contains("already present"), "{}", err.diagnostic.message);
    let region_args = args(8, &mut a, &mut b);
    rt.data_enter(1, &region_args).expect("present through the mapping");
    rt.region(0, &region_args).expect("runs");
    rt.data_exit(1, &region_args).expect("exit");
    assert!(rt.acc_is_present(addr(&mut b), bytes_of(&b)), "a mapping outlives the constructs");
    // The kernel wrote the mapped memory itself.
    let mut raw = vec![0.0f64; 8];
    rt.acc_memcpy_from_device("acc_memcpy_from_device", addr(&mut raw), d + 64, 64, SYNC).expect("read the block");
    assert_eq!(raw[3], 6.0);
    rt.acc_unmap_data("acc_unmap_data", addr(&mut b)).expect("unmap");
    assert!(!rt.acc_is_present(addr(&mut b), bytes_of(&b)));
    assert_eq!(b[7], 14.0, "unmapping saved what only the device held");
    rt.acc_free("acc_free", d).expect("the block is still the program's");
    let err = rt.acc_unmap_data("acc_unmap_data", addr(&mut b)).expect_err("not mapped");
    assert!(err.diagnostic.message.contains("not a host address that acc_map_data mapped"));
}

#[test]
fn acc_map_data_maps_whole_arrays_within_acc_malloc_memory() {
    let mut rt = runtime(scale_module(vec![]));
    let mut b = vec![0.0; 8];
    rt.track_malloc(addr(&mut b), bytes_of(&b));
    let d = rt.acc_malloc(64);
    let err = rt.acc_map_data("acc_map_data", addr(&mut b), d, 32).expect_err("half an array");
    assert!(err.diagnostic.message.contains("Yosegi maps whole arrays"), "{}", err.diagnostic.message);
    let err = rt.acc_map_data("acc_map_data", addr(&mut b), d + 8, 64).expect_err("past the block");
    assert!(err.diagnostic.message.contains("not inside memory that acc_malloc returned"), "{}", err.diagnostic.message);
    // Freeing the block unmaps what was mapped into it.
    rt.acc_map_data("acc_map_data", addr(&mut b), d, 64).expect("map");
    rt.acc_free("acc_free", d).expect("free");
    assert!(!rt.acc_is_present(addr(&mut b), 64));
}

#[test]
fn calls_that_cannot_be_honoured_are_errors_naming_the_call() {
    let mut rt = runtime(scale_module(vec![]));
    let mut a = vec![0.0; 4];
    let d = rt.acc_malloc(32);
    let cases: Vec<(RuntimeError, &str)> = vec![
        (rt.acc_memcpy_to_device("acc_memcpy_to_device", addr(&mut a), addr(&mut a), 8, SYNC).unwrap_err(), "acc_memcpy_to_device: the destination"),
        (rt.acc_memcpy_from_device("acc_memcpy_from_device", addr(&mut a), d, 64, SYNC).unwrap_err(), "reach past the end"),
        (rt.acc_memcpy_to_device("acc_memcpy_to_device", d, d, 8, SYNC).unwrap_err(), "is a device address"),
        (rt.acc_enter_data("acc_copyin_async", addr(&mut a), 32, true, -7).unwrap_err(), "-7 is not an async queue"),
        (rt.acc_enter_data("acc_copyin", d, 32, true, SYNC).unwrap_err(), "takes host memory"),
        (rt.acc_set_device_type("acc_set_device_type", acc_device::NONE).unwrap_err(), "no device of type 0"),
        (rt.acc_init("acc_init_device", 3, acc_device::NVIDIA).unwrap_err(), "device 3 of type 4"),
        (rt.acc_memcpy_d2d("acc_memcpy_d2d", addr(&mut a), addr(&mut a), 8, 0, 1, SYNC).unwrap_err(), "device 1 of type 4"),
        (rt.acc_memcpy_d2d("acc_memcpy_d2d", addr(&mut a), addr(&mut a), 8, 0, 0, SYNC).unwrap_err(), "is not present on device 0"),
        (rt.acc_attach("acc_attach", 0, SYNC).unwrap_err(), "NULL"),
    ];
    for (err, phrase) in cases {
        assert_eq!(err.exit_code(), 1);
        assert!(err.diagnostic.span.is_none());
        assert!(err.diagnostic.message.contains(phrase), "`{}` lacks `{phrase}`", err.diagnostic.message);
    }
}

#[test]
fn queues_are_idle_once_the_device_finished() {
    let mut rt = runtime(scale_module(vec![]));
    assert_eq!(rt.api.default_async(), INITIAL_DEFAULT_ASYNC);
    rt.acc_set_default_async("acc_set_default_async", 4).expect("set");
    assert_eq!(rt.api.default_async(), 4);
    rt.acc_set_default_async("acc_set_default_async", acc_async::DEFAULT).expect("reset");
    assert_eq!(rt.api.default_async(), INITIAL_DEFAULT_ASYNC);
    assert_eq!(rt.acc_wait_any("acc_wait_any", &[SYNC, 2, 1], None).unwrap(), 1);
    assert_eq!(rt.acc_wait_any("acc_wait_any", &[SYNC, SYNC], None).unwrap(), -1);
    rt.acc_wait_queues("acc_wait_all", &[], None).expect("wait");
    assert!(rt.acc_wait_queues("acc_wait_device", &[1], Some(2)).is_err());
}

#[test]
fn shutdown_brings_every_array_home() {
    let mut rt = runtime(scale_module(vec![]));
    let mut a = vec![2.0; 8];
    let mut b = vec![0.0; 8];
    rt.acc_enter_data("acc_create", addr(&mut b), bytes_of(&b), false, SYNC).expect("create");
    rt.region(0, &args(8, &mut a, &mut b)).expect("runs");
    assert_eq!(b[0], 0.0);
    rt.acc_shutdown("acc_shutdown", 0, acc_device::NVIDIA).expect("shutdown");
    assert_eq!(b[0], 4.0);
    let name = rt.acc_get_property_string("acc_get_property_string", 0, acc_device::NVIDIA, acc_property::NAME).unwrap();
    assert_eq!(name.as_deref(), Some("Yosegi SIMT simulator"));
    assert_eq!(rt.acc_get_property_string("p", 0, acc_device::HOST, 7).unwrap(), None);
    rt.acc_set_device_type("acc_set_device_type", acc_device::HOST).expect("host");
    assert_eq!(rt.api.device_type(), acc_device::HOST);
}

#[test]
fn exit_data_with_finalize_drops_every_dynamic_hold_of_the_api_and_the_directives() {
    let enter = vec![section(DataClauseKind::CopyIn, 1, Some(0), "a")];
    let exit = vec![section(DataClauseKind::Delete, 1, Some(0), "a")];
    let mut rt = runtime(scale_module(vec![
        RegionKind::EnterData { data: enter },
        RegionKind::ExitData { data: exit.clone(), finalize: false },
        RegionKind::ExitData { data: exit, finalize: true },
    ]));
    let mut a = vec![1.0; 8];
    let mut b = vec![0.0; 8];
    let region_args = args(8, &mut a, &mut b);
    let (h, n) = (region_args[1].ptr as u64, 64);
    rt.region(1, &region_args).expect("enter data");
    rt.acc_enter_data("acc_copyin", h, n, true, SYNC).expect("copyin");
    rt.acc_enter_data("acc_create", h, n, false, SYNC).expect("create");
    rt.region(2, &region_args).expect("exit data");
    assert!(rt.acc_is_present(h, n), "two holds left");
    rt.region(3, &region_args).expect("exit data finalize");
    assert!(!rt.acc_is_present(h, n));
}
