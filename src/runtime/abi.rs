//! The C interface of `include/yosegi_rt.h`: the table of entry points the program's glue code
//! calls, each forwarding to one process-wide [`Runtime`]. Errors end the process here: the
//! diagnostic goes to stderr and the exit status is 1 for a fault of the user's program, 2 when
//! the runtime cannot run it (see [`super::ErrorKind`]).

use std::ffi::{CStr, c_char, c_int, c_longlong, c_void};
use std::sync::{Mutex, MutexGuard};

use super::stats::Stats;
use super::{Runtime, RuntimeError, acc_device};

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
pub const YOSEGI_ABI_VERSION: c_int = 1;

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
    pub register_static: extern "C" fn(*mut c_void, c_longlong, *const c_char),
    pub at_exit: extern "C" fn(),
    pub acc_get_num_devices: extern "C" fn(c_int) -> c_int,
    pub acc_set_device_num: extern "C" fn(c_int, c_int),
    pub acc_get_device_num: extern "C" fn(c_int) -> c_int,
    pub acc_get_device_type: extern "C" fn() -> c_int,
    pub acc_set_device_type: extern "C" fn(c_int),
    pub acc_init: extern "C" fn(c_int),
    pub acc_shutdown: extern "C" fn(c_int),
    pub acc_on_device: extern "C" fn(c_int) -> c_int,
    pub acc_wait_all: extern "C" fn(),
    pub acc_wait: extern "C" fn(c_longlong),
}

unsafe extern "C" {
    fn malloc(n: usize) -> *mut c_void;
    fn calloc(n: usize, size: usize) -> *mut c_void;
    fn realloc(p: *mut c_void, n: usize) -> *mut c_void;
    fn free(p: *mut c_void);
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
    acc_wait_all: rt_acc_wait_all,
    acc_wait: rt_acc_wait,
};

/// Makes `runtime` the process's runtime and returns the table to hand to the program's glue.
pub fn install(runtime: Runtime) -> &'static YosegiRuntime {
    *lock() = Some(runtime);
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

fn lock() -> MutexGuard<'static, Option<Runtime>> {
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
    with_runtime(|rt| {
        rt.region(id, args)?;
        let frame_marker = 0u8;
        rt.settle_stack_objects(std::hint::black_box(&frame_marker) as *const u8 as u64);
        Ok(())
    })
}

extern "C" fn rt_data_enter(id: c_int, args: *mut YosegiArg, n: c_int) {
    // SAFETY: as in `rt_region`.
    let args = unsafe { args_slice(args, n) };
    with_runtime(|rt| rt.data_enter(id, args))
}

extern "C" fn rt_data_exit(id: c_int, args: *mut YosegiArg, n: c_int) {
    // SAFETY: as in `rt_region`.
    let args = unsafe { args_slice(args, n) };
    with_runtime(|rt| rt.data_exit(id, args))
}

extern "C" fn rt_host_access(ptrs: *const *mut c_void, modes: *const c_int, n: c_int) {
    if ptrs.is_null() || modes.is_null() || n <= 0 {
        return;
    }
    // SAFETY: the glue passes two arrays of `n` elements.
    let (ptrs, modes) =
        unsafe { (std::slice::from_raw_parts(ptrs, n as usize), std::slice::from_raw_parts(modes, n as usize)) };
    let addresses: Vec<u64> = ptrs.iter().map(|&p| p as u64).collect();
    if_installed(|rt| {
        rt.host_access(&addresses, modes);
    })
}

extern "C" fn rt_host_access_all() {
    if_installed(|rt| {
        rt.host_access_all();
    })
}

extern "C" fn rt_malloc(n: usize) -> *mut c_void {
    // SAFETY: the C library's allocator.
    let p = unsafe { malloc(n) };
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

extern "C" fn rt_at_exit() {
    let report = lock().as_mut().and_then(|rt| {
        rt.settle_at_exit();
        rt.exit_report()
    });
    if let Some(report) = report {
        eprint!("{report}");
    }
}

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
    acc_device::NVIDIA
}

extern "C" fn rt_acc_set_device_type(_device_type: c_int) {}

extern "C" fn rt_acc_init(_device_type: c_int) {}

extern "C" fn rt_acc_shutdown(_device_type: c_int) {}

/// Called from host code only (kernels evaluate `acc_on_device` themselves).
extern "C" fn rt_acc_on_device(device_type: c_int) -> c_int {
    (device_type == acc_device::HOST) as c_int
}

extern "C" fn rt_acc_wait_all() {}

extern "C" fn rt_acc_wait(_queue: c_longlong) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_layout_matches_the_header() {
        // Same field count and pointer-sized slots as `yosegi_runtime` (an int padded to 8,
        // then 21 function pointers) and `yosegi_arg` (4 eight-byte fields).
        assert_eq!(std::mem::size_of::<YosegiRuntime>(), 8 + 21 * 8);
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
        assert_eq!(rt_acc_get_device_type(), acc_device::NVIDIA);
    }
}
