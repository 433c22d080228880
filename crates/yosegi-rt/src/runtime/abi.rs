//! The C interface of `include/yosegi_rt.h`: the table of entry points the program's glue code
//! calls, each forwarding to one process-wide [`Runtime`]. Errors end the process here: the
//! diagnostic goes to stderr and the exit status is 1 for a fault of the user's program, 2 when
//! the runtime cannot run it (see [`super::ErrorKind`]).

use std::ffi::{CStr, c_char, c_int, c_longlong, c_void};
use std::sync::{Mutex, MutexGuard};

use super::stats::Stats;
use super::{Runtime, RuntimeError, acc_device, registry, settled_hooks};

/// `yosegi_arg`
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct YosegiArg {
    pub ptr: *mut c_void,
    pub i: i64,
    pub f: f64,
    pub size: i64,
}

impl Default for YosegiArg {
    fn default() -> Self {
        YosegiArg { ptr: std::ptr::null_mut(), i: 0, f: 0.0, size: 0 }
    }
}

pub const YOSEGI_READ: i32 = 1;
pub const YOSEGI_WRITE: i32 = 2;
pub const YOSEGI_ABI_VERSION: c_int = 7;

/// `yosegi_runtime`: field order and types as in the header.
#[repr(C)]
pub struct YosegiRuntime {
    pub abi_version: c_int,
    pub region: extern "C" fn(c_int, *mut YosegiArg, c_int),
    pub data_enter: extern "C" fn(c_int, *mut YosegiArg, c_int),
    pub data_exit: extern "C" fn(c_int, *mut YosegiArg, c_int),
    pub host_access: extern "C" fn(*const *mut c_void, *const c_int, c_int),
    pub host_access_all: extern "C" fn(),
    pub malloc: extern "C" fn(usize) -> *mut c_void,
    pub calloc: extern "C" fn(usize, usize) -> *mut c_void,
    pub realloc: extern "C" fn(*mut c_void, usize) -> *mut c_void,
    pub free: extern "C" fn(*mut c_void),
    pub posix_memalign: extern "C" fn(*mut *mut c_void, usize, usize) -> c_int,
    pub aligned_alloc: extern "C" fn(usize, usize) -> *mut c_void,
    pub register_static: extern "C" fn(*mut c_void, c_longlong, *const c_char),
    pub at_exit: extern "C" fn(),
    pub acc_get_num_devices: extern "C" fn(c_int) -> c_int,
    pub acc_set_device_num: extern "C" fn(c_int, c_int),
    pub acc_get_device_num: extern "C" fn(c_int) -> c_int,
    pub acc_get_device_type: extern "C" fn() -> c_int,
    pub acc_set_device_type: extern "C" fn(CallName, c_int),
    pub acc_init: extern "C" fn(CallName, c_int, c_int),
    pub acc_shutdown: extern "C" fn(CallName, c_int, c_int),
    pub acc_on_device: extern "C" fn(c_int) -> c_int,
    pub acc_get_property: extern "C" fn(CallName, c_int, c_int, c_int) -> usize,
    pub acc_get_property_string: extern "C" fn(CallName, c_int, c_int, c_int) -> *const c_char,
    pub acc_wait: extern "C" fn(CallName, *const c_int, c_int, c_int),
    pub acc_async_test: extern "C" fn(CallName, *const c_int, c_int, c_int) -> c_int,
    pub acc_wait_any: extern "C" fn(CallName, *const c_int, c_int, c_int) -> c_int,
    pub acc_get_default_async: extern "C" fn() -> c_int,
    pub acc_set_default_async: extern "C" fn(CallName, c_int),
    pub acc_malloc: extern "C" fn(usize) -> *mut c_void,
    pub acc_free: extern "C" fn(CallName, *mut c_void),
    pub acc_enter_data: extern "C" fn(CallName, *mut c_void, usize, c_int, c_int) -> *mut c_void,
    pub acc_exit_data: extern "C" fn(CallName, *mut c_void, usize, c_int, c_int),
    pub acc_update: extern "C" fn(CallName, *mut c_void, usize, c_int, c_int),
    pub acc_map_data: extern "C" fn(CallName, *mut c_void, *mut c_void, usize),
    pub acc_unmap_data: extern "C" fn(CallName, *mut c_void),
    pub acc_deviceptr: extern "C" fn(*mut c_void) -> *mut c_void,
    pub acc_hostptr: extern "C" fn(*mut c_void) -> *mut c_void,
    pub acc_is_present: extern "C" fn(*mut c_void, usize) -> c_int,
    pub acc_memcpy: extern "C" fn(CallName, *mut c_void, *const c_void, usize, c_int, c_int),
    pub acc_memcpy_d2d: extern "C" fn(CallName, *mut c_void, *const c_void, usize, c_int, c_int, c_int),
    pub acc_attach: extern "C" fn(CallName, *mut *mut c_void, c_int),
    pub region_steps: extern "C" fn(c_int, *mut YosegiArg, c_int, c_longlong) -> c_longlong,
    pub host_access_range: extern "C" fn(*const *mut c_void, *const u64, *const c_int, c_int),
    pub rank_meet: extern "C" fn(*const c_char),
    pub rank_share: extern "C" fn(*mut c_void, usize, *const c_char),
}

/// The name of the OpenACC routine the program called (a string literal of the glue), for
/// error messages.
pub type CallName = *const c_char;

/// `YOSEGI_ACC_COPY`, `YOSEGI_ACC_FINALIZE`: flags of `acc_enter_data`/`acc_exit_data`.
pub const YOSEGI_ACC_COPY: c_int = 1;
pub const YOSEGI_ACC_FINALIZE: c_int = 2;
/// Directions of `acc_memcpy`.
pub const YOSEGI_ACC_TO_DEVICE: c_int = 0;
pub const YOSEGI_ACC_FROM_DEVICE: c_int = 1;
pub const YOSEGI_ACC_DEVICE_TO_DEVICE: c_int = 2;
/// `dev_num` of the routines that act on the current device.
pub const YOSEGI_CURRENT_DEVICE: c_int = c_int::MIN;

unsafe extern "C" {
    fn calloc(n: usize, size: usize) -> *mut c_void;
    fn realloc(p: *mut c_void, n: usize) -> *mut c_void;
    fn free(p: *mut c_void);
    fn posix_memalign(p: *mut *mut c_void, align: usize, n: usize) -> c_int;
    fn aligned_alloc(align: usize, n: usize) -> *mut c_void;
}

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

static TABLE: YosegiRuntime = YosegiRuntime {
    abi_version: YOSEGI_ABI_VERSION,
    region: rt_region,
    data_enter: rt_data_enter,
    data_exit: rt_data_exit,
    host_access: rt_host_access,
    host_access_all: rt_host_access_all,
    malloc: rt_malloc,
    calloc: rt_calloc,
    realloc: rt_realloc,
    free: rt_free,
    posix_memalign: rt_posix_memalign,
    aligned_alloc: rt_aligned_alloc,
    register_static: rt_register_static,
    at_exit: rt_at_exit,
    acc_get_num_devices: rt_acc_get_num_devices,
    acc_set_device_num: rt_acc_set_device_num,
    acc_get_device_num: rt_acc_get_device_num,
    acc_get_device_type: rt_acc_get_device_type,
    acc_set_device_type: rt_acc_set_device_type,
    acc_init: rt_acc_init,
    acc_shutdown: rt_acc_shutdown,
    acc_on_device: rt_acc_on_device,
    acc_get_property: rt_acc_get_property,
    acc_get_property_string: rt_acc_get_property_string,
    acc_wait: rt_acc_wait,
    acc_async_test: rt_acc_async_test,
    acc_wait_any: rt_acc_wait_any,
    acc_get_default_async: rt_acc_get_default_async,
    acc_set_default_async: rt_acc_set_default_async,
    acc_malloc: rt_acc_malloc,
    acc_free: rt_acc_free,
    acc_enter_data: rt_acc_enter_data,
    acc_exit_data: rt_acc_exit_data,
    acc_update: rt_acc_update,
    acc_map_data: rt_acc_map_data,
    acc_unmap_data: rt_acc_unmap_data,
    acc_deviceptr: rt_acc_deviceptr,
    acc_hostptr: rt_acc_hostptr,
    acc_is_present: rt_acc_is_present,
    acc_memcpy: rt_acc_memcpy,
    acc_memcpy_d2d: rt_acc_memcpy_d2d,
    acc_attach: rt_acc_attach,
    region_steps: rt_region_steps,
    host_access_range: rt_host_access_range,
    rank_meet: rt_rank_meet,
    rank_share: rt_rank_share,
};

/// Makes `runtime` the process's runtime and returns the table to hand to the program's glue.
pub fn install(runtime: Runtime) -> &'static YosegiRuntime {
    *lock() = Some(runtime);
    registry::coverage_changed();
    &TABLE
}

/// The installed runtime's counters so far (the driver and benchmarks read them after a run).
pub fn installed_stats() -> Option<Stats> {
    lock().as_mut().map(|r| {
        r.settle_at_exit();
        r.stats().clone()
    })
}

/// Removes the installed runtime (after the program returned).
pub fn uninstall() -> Option<Runtime> {
    lock().take()
}

/// The runtime, for any entry point but the host-access hooks: what it does may change the
/// coherence state that settled hooks rely on (`settled_hooks`).
fn lock() -> MutexGuard<'static, Option<Runtime>> {
    let guard = lock_for_host_access();
    settled_hooks::state_may_change();
    guard
}

/// The runtime, for a host-access hook: what it does never undoes another hook's work.
fn lock_for_host_access() -> MutexGuard<'static, Option<Runtime>> {
    RUNTIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `f` on the runtime; on error, prints the diagnostic and exits. The lock is released
/// before exiting: `exit` runs the program's `atexit` handlers, which call back into the table.
fn with_runtime<R>(f: impl FnOnce(&mut Runtime) -> Result<R, RuntimeError>) -> R {
    let failure = {
        let mut guard = lock();
        let Some(runtime) = guard.as_mut() else {
            drop(guard);
            eprintln!("error: the Yosegi runtime was called before it was installed");
            std::process::exit(2);
        };
        let frame_marker = 0u8;
        runtime.forget_dead_stack_objects(std::hint::black_box(&frame_marker) as *const u8 as u64);
        match f(runtime) {
            Ok(r) => return r,
            Err(e) => (runtime.render_error(&e), e.exit_code()),
        }
    };
    eprint!("{}", failure.0);
    super::ranks::end_job_on_error(failure.1);
    std::process::exit(failure.1);
}

/// Runs `f` on the runtime when one is installed. Allocation tracking and host accesses
/// cannot fail, and may happen before the runtime is installed or after it is gone (C library
/// code running at exit): untracked then.
fn if_installed(f: impl FnOnce(&mut Runtime)) {
    if let Some(runtime) = lock().as_mut() {
        f(runtime)
    }
}

/// # Safety
/// `args` points to `n` initialised `yosegi_arg`s (or `n` is 0).
unsafe fn args_slice<'a>(args: *mut YosegiArg, n: c_int) -> &'a [YosegiArg] {
    if args.is_null() || n <= 0 {
        &[]
    } else {
        // SAFETY: per the contract.
        unsafe { std::slice::from_raw_parts(args, n as usize) }
    }
}

extern "C" fn rt_region(id: c_int, args: *mut YosegiArg, n: c_int) {
    // SAFETY: the glue passes an array of `n` args.
    let args = unsafe { args_slice(args, n) };
    with_region(|rt| rt.region(id, args))
}

/// Runs a compute region's entry `run` on the runtime, then settles the stack arrays the
/// region's frame may have left, each part timed for `--stats`.
fn with_region<R>(run: impl FnOnce(&mut Runtime) -> Result<R, RuntimeError>) -> R {
    with_runtime(|rt| {
        let started = rt.clock();
        let result = run(rt)?;
        let settling = rt.clock();
        let frame_marker = 0u8;
        rt.settle_stack_objects(std::hint::black_box(&frame_marker) as *const u8 as u64);
        rt.record_runtime_call("region: settling stack arrays", settling);
        rt.record_runtime_call("region", started);
        Ok(result)
    })
}

extern "C" fn rt_region_steps(id: c_int, args: *mut YosegiArg, n: c_int, left: c_longlong) -> c_longlong {
    // SAFETY: as in `rt_region`.
    let args = unsafe { args_slice(args, n) };
    with_region(|rt| rt.region_steps(id, args, left))
}

extern "C" fn rt_data_enter(id: c_int, args: *mut YosegiArg, n: c_int) {
    // SAFETY: as in `rt_region`.
    let args = unsafe { args_slice(args, n) };
    with_runtime(|rt| {
        let started = rt.clock();
        let entered = rt.data_enter(id, args);
        rt.record_runtime_call("data enter", started);
        entered
    })
}

extern "C" fn rt_data_exit(id: c_int, args: *mut YosegiArg, n: c_int) {
    // SAFETY: as in `rt_region`.
    let args = unsafe { args_slice(args, n) };
    with_runtime(|rt| {
        let started = rt.clock();
        let exited = rt.data_exit(id, args);
        rt.record_runtime_call("data exit", started);
        exited
    })
}

extern "C" fn rt_host_access(ptrs: *const *mut c_void, modes: *const c_int, n: c_int) {
    if ptrs.is_null() || modes.is_null() || n <= 0 {
        return;
    }
    // SAFETY: the glue passes two arrays of `n` elements.
    let (ptrs, modes) =
        unsafe { (std::slice::from_raw_parts(ptrs, n as usize), std::slice::from_raw_parts(modes, n as usize)) };
    host_hook(ptrs, None, modes);
}

extern "C" fn rt_host_access_range(ptrs: *const *mut c_void, bytes: *const u64, modes: *const c_int, n: c_int) {
    if ptrs.is_null() || bytes.is_null() || modes.is_null() || n <= 0 {
        return;
    }
    // SAFETY: the glue passes three arrays of `n` elements.
    let (ptrs, bytes, modes) = unsafe {
        (
            std::slice::from_raw_parts(ptrs, n as usize),
            std::slice::from_raw_parts(bytes, n as usize),
            std::slice::from_raw_parts(modes, n as usize),
        )
    };
    host_hook(ptrs, Some(bytes), modes);
}

/// A host-access hook: whole objects (`bytes` `None`) or `bytes[k]` bytes at `ptrs[k]`.
fn host_hook(ptrs: &[*mut c_void], bytes: Option<&[u64]>, modes: &[c_int]) {
    let bytes_of = |k: usize| bytes.map_or(settled_hooks::WHOLE_OBJECT, |b| b[k]);
    // A hook runs before host statements, in the program's innermost loops too: the same
    // addresses again, with nothing done by the runtime since, need nothing, without the lock.
    if ptrs.iter().zip(modes).enumerate().all(|(k, (&p, &m))| settled_hooks::is_settled(p as u64, bytes_of(k), m)) {
        return;
    }
    // The addresses of the usual few pointers stay on the stack.
    let mut few = [0u64; 8];
    let heap: Vec<u64>;
    let addresses: &[u64] = if ptrs.len() <= few.len() {
        for (slot, &p) in few.iter_mut().zip(ptrs) {
            *slot = p as u64;
        }
        &few[..ptrs.len()]
    } else {
        heap = ptrs.iter().map(|&p| p as u64).collect();
        &heap
    };
    if let Some(rt) = lock_for_host_access().as_mut() {
        // Read under the lock, before the work: a change after it shows as a new count.
        let (epoch, coverage) = (settled_hooks::state_epoch(), registry::coverage_generation());
        let started = rt.clock();
        let tracked = match bytes {
            Some(bytes) => rt.host_access_range(addresses, bytes, modes),
            None => rt.host_access(addresses, modes),
        };
        rt.record_runtime_call("host access", started);
        for (k, (&ptr, &mode)) in addresses.iter().zip(modes).enumerate() {
            // Which of several addresses were tracked is not told: all are remembered as
            // tracked then, the shorter-lived kind.
            let generation = if tracked { epoch } else { coverage };
            settled_hooks::remember(ptr, bytes_of(k), mode, tracked, generation);
        }
    }
}

extern "C" fn rt_host_access_all() {
    if_installed(|rt| {
        rt.host_access_all();
    })
}

// Memory the program allocates comes zeroed (`malloc` is `calloc`): a program that reads
// elements it never wrote (a stencil's untouched border copied back whole) sees what a fresh
// process's pages hold, the same on every run, and not what the runtime's own allocations
// left behind. Large blocks are fresh pages either way, so this costs little.
extern "C" fn rt_malloc(n: usize) -> *mut c_void {
    // SAFETY: the C library's allocator.
    let p = unsafe { calloc(1, n) };
    if_installed(|rt| {
        rt.track_malloc(p as u64, n as u64);
    });
    p
}

extern "C" fn rt_calloc(n: usize, size: usize) -> *mut c_void {
    // SAFETY: the C library's allocator.
    let p = unsafe { calloc(n, size) };
    if_installed(|rt| {
        rt.track_malloc(p as u64, n.saturating_mul(size) as u64);
    });
    p
}

extern "C" fn rt_realloc(old: *mut c_void, n: usize) -> *mut c_void {
    if_installed(|rt| {
        rt.before_realloc(old as u64);
    });
    // SAFETY: `old` came from the C library's allocator (or is null).
    let p = unsafe { realloc(old, n) };
    if_installed(|rt| {
        rt.track_malloc(p as u64, n as u64);
    });
    p
}

extern "C" fn rt_posix_memalign(out: *mut *mut c_void, align: usize, n: usize) -> c_int {
    // SAFETY: the C library's allocator; `out` is the caller's pointer variable.
    let status = unsafe { posix_memalign(out, align, n) };
    if status == 0 && !out.is_null() {
        // SAFETY: on success the C library stored an allocation of `n` bytes through `out`;
        // zeroed as `rt_malloc`'s are.
        let p = unsafe { *out };
        unsafe { std::ptr::write_bytes(p as *mut u8, 0, n) };
        if_installed(|rt| {
            rt.track_malloc(p as u64, n as u64);
        });
    }
    status
}

extern "C" fn rt_aligned_alloc(align: usize, n: usize) -> *mut c_void {
    // SAFETY: the C library's allocator.
    let p = unsafe { aligned_alloc(align, n) };
    if !p.is_null() {
        // SAFETY: a fresh allocation of `n` bytes; zeroed as `rt_malloc`'s are.
        unsafe { std::ptr::write_bytes(p as *mut u8, 0, n) };
    }
    if_installed(|rt| {
        rt.track_malloc(p as u64, n as u64);
    });
    p
}

extern "C" fn rt_free(p: *mut c_void) {
    if_installed(|rt| {
        rt.track_free(p as u64);
    });
    // SAFETY: `p` came from the C library's allocator (or is null).
    unsafe { free(p) }
}

extern "C" fn rt_register_static(ptr: *mut c_void, bytes: c_longlong, name: *const c_char) {
    let name = if name.is_null() {
        "static array".to_string()
    } else {
        // SAFETY: the glue passes a string literal.
        unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
    };
    if_installed(|rt| {
        rt.register_static(ptr as u64, bytes.max(0) as u64, &name);
    })
}

extern "C" fn rt_rank_meet(what: *const c_char) {
    if let Some(ranks) = super::ranks::current() {
        // SAFETY: the glue passes a NUL-terminated string literal.
        let what = if what.is_null() { "a meeting of the ranks".into() } else { unsafe { CStr::from_ptr(what) }.to_string_lossy() };
        ranks.meet(&what);
    }
}

extern "C" fn rt_rank_share(data: *mut c_void, bytes: usize, what: *const c_char) {
    if let Some(ranks) = super::ranks::current()
        && !data.is_null()
    {
        // SAFETY: the glue passes a NUL-terminated string literal, and `bytes` of its own at
        // `data`.
        let what = if what.is_null() { "a value of rank 0's".into() } else { unsafe { CStr::from_ptr(what) }.to_string_lossy().into_owned() };
        let data = unsafe { std::slice::from_raw_parts_mut(data as *mut u8, bytes) };
        ranks.broadcast(data, 0, || what.clone());
    }
}

extern "C" fn rt_at_exit() {
    // Kernel compilations still running end first (`cuda::jit::quiesce`).
    crate::runtime::cuda::jit::quiesce();
    let report = lock().as_mut().and_then(|rt| {
        rt.settle_at_exit();
        rt.exit_report()
    });
    if let Some(report) = report {
        match std::env::var_os(STATS_DIR_VARIABLE) {
            // One file per process, for scripts that run many programs (bench/model.sh).
            Some(dir) => {
                let path = std::path::Path::new(&dir).join(format!("{}.json", std::process::id()));
                if let Err(why) = std::fs::write(&path, report) {
                    eprintln!("yosegi: warning: could not write the stats to {}: {why}", path.display());
                }
            }
            None => eprint!("{report}"),
        }
    }
}

/// When set, the stats go as JSON to `<pid>.json` in this folder instead of stderr (and are on
/// without `--stats`).
pub const STATS_DIR_VARIABLE: &str = "YOSEGI_STATS_DIR";

/// How many devices of `device_type` there are, with `count` devices of the not-host kind.
pub fn num_devices(device_type: i32, count: usize) -> i32 {
    match device_type {
        acc_device::HOST => 1,
        acc_device::DEFAULT | acc_device::NOT_HOST | acc_device::NVIDIA => count as i32,
        _ => 0,
    }
}

extern "C" fn rt_acc_get_num_devices(device_type: c_int) -> c_int {
    with_runtime(|rt| Ok(num_devices(device_type, rt.device_count())))
}

extern "C" fn rt_acc_set_device_num(num: c_int, device_type: c_int) {
    with_runtime(|rt| {
        let count = num_devices(device_type, rt.device_count());
        if num < 0 || num >= count {
            return Err(RuntimeError::fault(crate::diag::Diagnostic::global_error(format!(
                "acc_set_device_num({num}, {device_type}): there {} {count} device{} of that type, numbered from 0",
                if count == 1 { "is" } else { "are" },
                if count == 1 { "" } else { "s" }
            ))));
        }
        if device_type != acc_device::HOST {
            rt.set_current_device(num as usize);
        }
        Ok(())
    })
}

extern "C" fn rt_acc_get_device_num(device_type: c_int) -> c_int {
    with_runtime(|rt| Ok(if device_type == acc_device::HOST { 0 } else { rt.current_device() as c_int }))
}

extern "C" fn rt_acc_get_device_type() -> c_int {
    with_runtime(|rt| Ok(rt.api.device_type()))
}

/// The routine's name as the glue passed it.
fn call_name(call: CallName) -> String {
    if call.is_null() {
        "an OpenACC routine".to_string()
    } else {
        // SAFETY: the glue passes a string literal.
        unsafe { CStr::from_ptr(call) }.to_string_lossy().into_owned()
    }
}

/// `None` for the routines that act on the current device.
fn dev_num_arg(dev_num: c_int) -> Option<i32> {
    (dev_num != YOSEGI_CURRENT_DEVICE).then_some(dev_num)
}

/// # Safety
/// `queues` points to `n` ints (or `n` is 0 or negative).
unsafe fn queue_slice<'a>(queues: *const c_int, n: c_int) -> &'a [c_int] {
    if queues.is_null() || n <= 0 {
        &[]
    } else {
        // SAFETY: per the contract.
        unsafe { std::slice::from_raw_parts(queues, n as usize) }
    }
}

extern "C" fn rt_acc_set_device_type(call: CallName, device_type: c_int) {
    with_runtime(|rt| rt.acc_set_device_type(&call_name(call), device_type))
}

extern "C" fn rt_acc_init(call: CallName, dev_num: c_int, device_type: c_int) {
    let dev = |rt: &Runtime| dev_num_arg(dev_num).unwrap_or(if device_type == acc_device::HOST { 0 } else { rt.current_device() as i32 });
    with_runtime(|rt| rt.acc_init(&call_name(call), dev(rt), device_type))
}

extern "C" fn rt_acc_shutdown(call: CallName, dev_num: c_int, device_type: c_int) {
    let dev = |rt: &Runtime| dev_num_arg(dev_num).unwrap_or(if device_type == acc_device::HOST { 0 } else { rt.current_device() as i32 });
    with_runtime(|rt| rt.acc_shutdown(&call_name(call), dev(rt), device_type))
}

/// Called from host code only (kernels evaluate `acc_on_device` themselves).
extern "C" fn rt_acc_on_device(device_type: c_int) -> c_int {
    (device_type == acc_device::HOST) as c_int
}

extern "C" fn rt_acc_get_property(call: CallName, dev_num: c_int, device_type: c_int, property: c_int) -> usize {
    with_runtime(|rt| rt.acc_get_property(&call_name(call), dev_num, device_type, property)) as usize
}

extern "C" fn rt_acc_get_property_string(call: CallName, dev_num: c_int, device_type: c_int, property: c_int) -> *const c_char {
    let text = with_runtime(|rt| rt.acc_get_property_string(&call_name(call), dev_num, device_type, property));
    text.map_or(std::ptr::null(), |t| interned(&t).as_ptr())
}

/// A C string that lives as long as the process (the strings `acc_get_property_string`
/// returns), one per distinct text.
fn interned(text: &str) -> &'static CStr {
    static STRINGS: Mutex<Vec<&'static CStr>> = Mutex::new(Vec::new());
    let mut strings = STRINGS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(found) = strings.iter().find(|s| s.to_bytes() == text.as_bytes()) {
        return found;
    }
    let owned = std::ffi::CString::new(text.replace('\0', " ")).expect("no NUL bytes");
    let leaked: &'static CStr = Box::leak(owned.into_boxed_c_str());
    strings.push(leaked);
    leaked
}

extern "C" fn rt_acc_wait(call: CallName, queues: *const c_int, n: c_int, dev_num: c_int) {
    // SAFETY: the glue passes `n` queues.
    let queues = unsafe { queue_slice(queues, n) };
    with_runtime(|rt| rt.acc_wait_queues(&call_name(call), queues, dev_num_arg(dev_num)))
}

extern "C" fn rt_acc_async_test(call: CallName, queues: *const c_int, n: c_int, dev_num: c_int) -> c_int {
    // SAFETY: as in `rt_acc_wait`.
    let queues = unsafe { queue_slice(queues, n) };
    with_runtime(|rt| rt.acc_wait_queues(&call_name(call), queues, dev_num_arg(dev_num)).map(|_| 1))
}

extern "C" fn rt_acc_wait_any(call: CallName, queues: *const c_int, n: c_int, dev_num: c_int) -> c_int {
    // SAFETY: as in `rt_acc_wait`.
    let queues = unsafe { queue_slice(queues, n) };
    with_runtime(|rt| rt.acc_wait_any(&call_name(call), queues, dev_num_arg(dev_num)))
}

extern "C" fn rt_acc_get_default_async() -> c_int {
    with_runtime(|rt| Ok(rt.api.default_async()))
}

extern "C" fn rt_acc_set_default_async(call: CallName, queue: c_int) {
    with_runtime(|rt| rt.acc_set_default_async(&call_name(call), queue))
}

// The calls below hand the program device addresses or act on them: from the first one on,
// launches are no longer split over several devices (`Runtime::stop_splitting`), so that the
// current device's copies are the objects' values.

extern "C" fn rt_acc_malloc(bytes: usize) -> *mut c_void {
    with_runtime(|rt| {
        rt.stop_splitting();
        Ok(rt.acc_malloc(bytes as u64))
    }) as *mut c_void
}

extern "C" fn rt_acc_free(call: CallName, d: *mut c_void) {
    with_runtime(|rt| rt.acc_free(&call_name(call), d as u64))
}

extern "C" fn rt_acc_enter_data(call: CallName, h: *mut c_void, bytes: usize, flags: c_int, queue: c_int) -> *mut c_void {
    let copy = flags & YOSEGI_ACC_COPY != 0;
    with_runtime(|rt| rt.acc_enter_data(&call_name(call), h as u64, bytes as u64, copy, queue)) as *mut c_void
}

extern "C" fn rt_acc_exit_data(call: CallName, h: *mut c_void, bytes: usize, flags: c_int, queue: c_int) {
    let (copy, finalize) = (flags & YOSEGI_ACC_COPY != 0, flags & YOSEGI_ACC_FINALIZE != 0);
    with_runtime(|rt| rt.acc_exit_data(&call_name(call), h as u64, bytes as u64, copy, finalize, queue))
}

extern "C" fn rt_acc_update(call: CallName, h: *mut c_void, bytes: usize, to_device: c_int, queue: c_int) {
    with_runtime(|rt| rt.acc_update(&call_name(call), h as u64, bytes as u64, to_device != 0, queue))
}

extern "C" fn rt_acc_map_data(call: CallName, h: *mut c_void, d: *mut c_void, bytes: usize) {
    with_runtime(|rt| {
        rt.stop_splitting();
        rt.acc_map_data(&call_name(call), h as u64, d as u64, bytes as u64)
    })
}

extern "C" fn rt_acc_unmap_data(call: CallName, h: *mut c_void) {
    with_runtime(|rt| rt.acc_unmap_data(&call_name(call), h as u64))
}

extern "C" fn rt_acc_deviceptr(h: *mut c_void) -> *mut c_void {
    with_runtime(|rt| {
        rt.stop_splitting();
        Ok(rt.acc_deviceptr(h as u64))
    }) as *mut c_void
}

extern "C" fn rt_acc_hostptr(d: *mut c_void) -> *mut c_void {
    with_runtime(|rt| Ok(rt.acc_hostptr(d as u64))) as *mut c_void
}

extern "C" fn rt_acc_is_present(h: *mut c_void, bytes: usize) -> c_int {
    with_runtime(|rt| Ok(rt.acc_is_present(h as u64, bytes as u64) as c_int))
}

extern "C" fn rt_acc_memcpy(call: CallName, dst: *mut c_void, src: *const c_void, bytes: usize, direction: c_int, queue: c_int) {
    let call = call_name(call);
    let (dst, src, bytes) = (dst as u64, src as u64, bytes as u64);
    with_runtime(|rt| {
        rt.stop_splitting();
        match direction {
            YOSEGI_ACC_TO_DEVICE => rt.acc_memcpy_to_device(&call, dst, src, bytes, queue),
            YOSEGI_ACC_FROM_DEVICE => rt.acc_memcpy_from_device(&call, dst, src, bytes, queue),
            _ => rt.acc_memcpy_device(&call, dst, src, bytes, queue),
        }
    })
}

#[allow(clippy::too_many_arguments)]
extern "C" fn rt_acc_memcpy_d2d(
    call: CallName,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    dst_dev: c_int,
    src_dev: c_int,
    queue: c_int,
) {
    with_runtime(|rt| {
        rt.stop_splitting();
        rt.acc_memcpy_d2d(&call_name(call), dst as u64, src as u64, bytes as u64, dst_dev, src_dev, queue)
    })
}

extern "C" fn rt_acc_attach(call: CallName, ptr_addr: *mut *mut c_void, queue: c_int) {
    with_runtime(|rt| rt.acc_attach(&call_name(call), ptr_addr as u64, queue))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_layout_matches_the_header() {
        // Same field count and pointer-sized slots as `yosegi_runtime` (an int padded to 8,
        // then 45 function pointers) and `yosegi_arg` (4 eight-byte fields).
        assert_eq!(std::mem::size_of::<YosegiRuntime>(), 8 + 45 * 8);
        assert_eq!(std::mem::size_of::<YosegiArg>(), 32);
        assert_eq!(std::mem::offset_of!(YosegiArg, size), 24);
    }

    #[test]
    fn device_counts_by_type() {
        assert_eq!(num_devices(acc_device::NVIDIA, 1), 1);
        assert_eq!(num_devices(acc_device::HOST, 1), 1);
        assert_eq!(num_devices(acc_device::NONE, 1), 0);
        assert_eq!(rt_acc_on_device(acc_device::HOST), 1);
        assert_eq!(rt_acc_on_device(acc_device::NVIDIA), 0);
    }
}
