//! The runtime's entry for executables built by `yosegi cc`: the generated `main` hands it the
//! program image the linker embedded and the host code's entry (`__yosegi_entry` of the
//! glue); it reads the image, opens the device the environment names, installs the runtime
//! and runs the program's own `main` through the entry.
//!
//! Environment: `YOSEGI_DEVICE` = `auto` (the default: the GPU when one is usable, else the
//! simulator, with a one-line notice), `cuda` or `sim`; `YOSEGI_GPUS` = `all` (the default) or
//! a number of devices to split kernels over (`runtime::distribute`); `YOSEGI_STATS=1` prints
//! the runtime's counters and the model's predictions at exit (`YOSEGI_STATS=json`: as JSON).
//!
//! The program's `main` runs on a thread of [`PROGRAM_STACK_BYTES`] (address space reserved,
//! pages used only as deep as the program goes), as it does under `yosegi run`: codes such as
//! NPB SP keep arrays of hundreds of MB as local variables (C99 variable-length arrays), which
//! the usual 8 MB stack of a process cannot hold. Where the stack limit is already unlimited
//! (`ulimit -s unlimited`) the process's own stack can grow further, and `main` stays on it.

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use crate::image::ProgramImage;
use crate::ir::Module;
use crate::source::SourceSet;
use crate::runtime::{ColorMode, DeviceKind, DeviceCount, Runtime, RuntimeConfig, StatsMode, abi};

/// `__yosegi_entry(table, argc, argv)`: the glue's entry, which runs the user's `main`.
pub type HostEntry = unsafe extern "C" fn(*const c_void, c_int, *mut *mut c_char) -> c_int;

/// The stack the program's `main` gets (see the module doc): 4 GiB, as `yosegi run` gives it.
pub const PROGRAM_STACK_BYTES: usize = 4 << 30;

/// Status for a bad image or environment, as for bad input to the compiler.
const EXIT_BAD_SETUP: c_int = 2;

/// Runs the program; does not come back (the process ends through C's `exit` with `main`'s
/// status, so the program's `atexit` handlers and stdio buffers are served).
///
/// # Safety
/// `image` points to `len` readable bytes; `argv` is the process's argv; `entry` is the glue's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn yosegi_rt_start(image: *const u8, len: usize, argc: c_int, argv: *mut *mut c_char, entry: HostEntry) -> c_int {
    // SAFETY: the caller's contract.
    let bytes: &'static [u8] = unsafe { std::slice::from_raw_parts(image, len) };
    if !stack_unlimited() {
        // Pointers cross to the thread as integers: argv and the image live as long as the process.
        let argv_address = argv as usize;
        let program = move || -> c_int { run_program(bytes, argc, argv_address as *mut *mut c_char, entry) };
        // No room for the thread (a limit on address space): this stack, as a C program's.
        if let Ok(thread) = std::thread::Builder::new().name("main".into()).stack_size(PROGRAM_STACK_BYTES).spawn(program) {
            // `run_program` ends the process from its thread; a panic there is passed on.
            match thread.join() {
                Ok(status) => exit_process(status),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    }
    run_program(bytes, argc, argv, entry)
}

/// Whether the process's stack may grow without limit (`ulimit -s unlimited`).
fn stack_unlimited() -> bool {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut limit) == 0 && limit.rlim_cur == libc::RLIM_INFINITY }
}

/// Installs the runtime and runs the program's `main`; does not come back.
fn run_program(bytes: &[u8], argc: c_int, argv: *mut *mut c_char, entry: HostEntry) -> ! {
    let status = match prepare(bytes) {
        // SAFETY: the table is 'static; argv is the process's.
        Ok(table) => unsafe { entry(table, argc, argv) },
        Err(message) => {
            eprintln!("yosegi: {message}");
            EXIT_BAD_SETUP
        }
    };
    exit_process(status)
}

/// Reads the image and the environment and installs the runtime; returns the glue's table.
fn prepare(bytes: &[u8]) -> Result<*const c_void, String> {
    use std::io::IsTerminal;
    let image = ProgramImage::from_bytes(bytes)?;
    let device = device_from_env(std::env::var("YOSEGI_DEVICE").ok().as_deref())?;
    let stats = match std::env::var("YOSEGI_STATS").ok().as_deref() {
        _ if std::env::var_os(abi::STATS_DIR_VARIABLE).is_some() => StatsMode::Json,
        None | Some("" | "0") => StatsMode::Off,
        Some("json") => StatsMode::Json,
        Some(_) => StatsMode::Print,
    };
    let color = if std::io::stderr().is_terminal() { ColorMode::Always } else { ColorMode::Never };
    let gpus = match std::env::var("YOSEGI_GPUS").ok().as_deref().map(str::trim) {
        None | Some("") => DeviceCount::All,
        Some(text) => DeviceCount::parse(text).map_err(|why| format!("YOSEGI_GPUS: {why}"))?,
    };
    crate::runtime::sim::timeout_from_env()?;
    let config = RuntimeConfig { device, stats, color, staging: image.staging, gpus };
    // Before any device opens: a GPU the images serve needs no NVRTC.
    crate::runtime::cuda::embedded::install(image.kernel_images);
    install_program(Arc::new(image.module), Arc::new(image.sources), config)
        .map_err(|why| format!("{why} (YOSEGI_DEVICE=sim runs the program on the simulator)"))
}

/// Opens the device `config` names, installs the process's runtime for `module` and returns
/// the table for the program's glue. With `DeviceKind::Auto` and no usable GPU it says, in
/// one line, that the simulator runs the program. `yosegi run` and executables both start here.
pub fn install_program(module: Arc<Module>, sources: Arc<SourceSet>, config: RuntimeConfig) -> Result<*const c_void, String> {
    let runtime = Runtime::try_new(module, sources, config)?;
    if config.device == DeviceKind::Auto && runtime.device_name() == "sim" {
        eprintln!("yosegi: no usable CUDA GPU; running on the sim device");
    }
    Ok(abi::install(runtime) as *const abi::YosegiRuntime as *const c_void)
}

fn device_from_env(value: Option<&str>) -> Result<DeviceKind, String> {
    match value.map(str::trim) {
        None | Some("" | "auto") => Ok(DeviceKind::Auto),
        Some("cuda") => Ok(DeviceKind::Cuda),
        Some("sim") => Ok(DeviceKind::Sim),
        Some(other) => Err(format!("YOSEGI_DEVICE is `{other}`; it must be auto, cuda or sim")),
    }
}

/// Ends the process the way C's `exit` does: the program's and the runtime's `atexit` handlers
/// run (stdio is flushed) before the process ends with `status`.
pub fn exit_process(status: c_int) -> ! {
    unsafe extern "C" {
        fn exit(status: c_int) -> !;
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    // Before any exit handler: NVRTC's own (those of its builtins library too, loaded by the
    // first compilation) must not run under a worker still compiling.
    crate::runtime::cuda::jit::quiesce();
    // SAFETY: libc's exit; Rust's own stdout is flushed first.
    unsafe { exit(status) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_comes_from_the_environment_and_a_bad_one_is_named() {
        assert_eq!(device_from_env(None), Ok(DeviceKind::Auto));
        assert_eq!(device_from_env(Some("sim")), Ok(DeviceKind::Sim));
        assert_eq!(device_from_env(Some("cuda")), Ok(DeviceKind::Cuda));
        assert!(device_from_env(Some("gpu")).unwrap_err().contains("`gpu`"));
    }
}
