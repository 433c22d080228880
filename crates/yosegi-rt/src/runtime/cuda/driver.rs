//! The few CUDA driver API and NVRTC entry points the cuda device uses, through `cudarc`'s raw
//! bindings, with every result checked and turned into a message that names the call.
//!
//! `cudarc` loads `libcuda` and `libnvrtc` on first use and panics when a library or one of its
//! symbols is missing; [`check_libraries`] runs first and finds out the same thing without
//! panicking, so that a machine without CUDA gets an error message instead.

use std::ffi::{CStr, c_char, c_void};
use std::path::PathBuf;

use cudarc::driver::sys;
use cudarc::nvrtc::sys as nvrtc_sys;

/// Every driver symbol `cudarc` will look up for us (its loader panics on a missing one).
const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGet",
    "cuDeviceGetCount",
    "cuDeviceGetAttribute",
    "cuDeviceGetName",
    "cuDevicePrimaryCtxRetain",
    "cuCtxSetCurrent",
    "cuDeviceCanAccessPeer",
    "cuCtxEnablePeerAccess",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemsetD8_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoD_v2",
    "cuMemcpyPeer",
    "cuMemcpyPeerAsync",
    "cuStreamWaitEvent",
    "cuMemGetInfo_v2",
    "cuStreamCreate",
    "cuStreamSynchronize",
    "cuStreamDestroy_v2",
    "cuMemAllocHost_v2",
    "cuMemFreeHost",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuLaunchKernel",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventQuery",
    "cuEventElapsedTime_v2",
    "cuEventDestroy_v2",
    "cuGetErrorName",
    "cuGetErrorString",
];

const NVRTC_SYMBOLS: &[&str] = &[
    "nvrtcVersion",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetCUBINSize",
    "nvrtcGetCUBIN",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcDestroyProgram",
];

/// Checks that the driver library can be loaded and has every symbol we call.
pub fn check_driver_library() -> Result<(), String> {
    check_library("cuda", DRIVER_SYMBOLS, &[]).map_err(|e| {
        format!("no CUDA driver: {e} (is the NVIDIA driver installed, and is this a machine with a GPU?)")
    })
}

/// Checks that NVRTC can be loaded and has every symbol we call. `YOSEGI_NVRTC=off` hides it:
/// a link that embeds no kernels (a faster build), a run that uses only the executable's own
/// images, and the tests of both on machines that have NVRTC.
pub fn check_nvrtc_library() -> Result<(), String> {
    if std::env::var("YOSEGI_NVRTC").is_ok_and(|v| v.trim().eq_ignore_ascii_case("off")) {
        return Err("NVRTC is turned off (YOSEGI_NVRTC=off)".to_string());
    }
    check_library("nvrtc", NVRTC_SYMBOLS, &toolkit_dirs()).map_err(|e| {
        format!(
            "no NVRTC (the CUDA runtime compiler): {e} (install the CUDA toolkit's nvrtc library, or add its \
             directory, such as /usr/local/cuda/lib64, to LD_LIBRARY_PATH)"
        )
    })
}

/// Where a CUDA toolkit's libraries usually are, for when they are not on the loader's path.
pub(crate) fn toolkit_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            dirs.push(PathBuf::from(home).join("lib64"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs.push(PathBuf::from("/usr/local/cuda/targets/x86_64-linux/lib"));
    dirs
}

/// Finds the library `cudarc` will load for `name` (the first of its candidate file names that
/// loads) and checks its symbols. When none loads by name, tries `extra_dirs` and keeps what
/// it finds there loaded, so that `cudarc`'s later load by name finds it in the process.
fn check_library(name: &str, symbols: &[&str], extra_dirs: &[PathBuf]) -> Result<(), String> {
    let candidates = cudarc::get_lib_name_candidates(name);
    let mut found = None;
    for candidate in &candidates {
        // SAFETY: loading a system library runs its initialisers, as cudarc's own load would.
        if let Ok(lib) = unsafe { libloading::Library::new(candidate) } {
            found = Some((candidate.clone(), lib, false));
            break;
        }
    }
    if found.is_none() {
        'dirs: for dir in extra_dirs {
            for candidate in &candidates {
                let path = dir.join(candidate);
                if !path.exists() {
                    continue;
                }
                // SAFETY: as above.
                if let Ok(lib) = unsafe { libloading::Library::new(&path) } {
                    found = Some((path.display().to_string(), lib, true));
                    break 'dirs;
                }
            }
        }
    }
    let Some((file, lib, keep)) = found else {
        let tried = match (candidates.first(), candidates.last()) {
            (Some(first), Some(last)) => format!(" (tried {} names, {first} to {last})", candidates.len()),
            _ => String::new(),
        };
        return Err(format!("lib{name} could not be loaded{tried}"));
    };
    for symbol in symbols {
        // SAFETY: only looks the symbol up; it is not called through this handle.
        if unsafe { lib.get::<*const c_void>(symbol.as_bytes()) }.is_err() {
            return Err(format!("{file} has no `{symbol}` (a CUDA 13 driver or toolkit is needed)"));
        }
    }
    if keep {
        // Loaded by path: it must stay in the process for cudarc to find it by name.
        std::mem::forget(lib);
    }
    Ok(())
}

/// `CUDA_ERROR_OUT_OF_MEMORY (out of memory)`.
pub fn describe(code: sys::CUresult) -> String {
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: cuGetErrorString writes a pointer to a static string (or fails and leaves null).
    let ok = unsafe { sys::cuGetErrorString(code, &mut text) } == sys::CUresult::CUDA_SUCCESS;
    if ok && !text.is_null() {
        // SAFETY: a NUL-terminated static string from the driver.
        let s = unsafe { CStr::from_ptr(text) }.to_string_lossy();
        format!("{code:?} ({s})")
    } else {
        format!("{code:?}")
    }
}

/// `Ok` for `CUDA_SUCCESS`, otherwise `"<call> failed: <error>"`.
pub fn check(call: &str, code: sys::CUresult) -> Result<(), String> {
    if code == sys::CUresult::CUDA_SUCCESS { Ok(()) } else { Err(format!("{call} failed: {}", describe(code))) }
}

/// `Ok` for `NVRTC_SUCCESS`, otherwise `"<call> failed: <error>"`.
pub fn check_nvrtc(call: &str, code: nvrtc_sys::nvrtcResult) -> Result<(), String> {
    if code == nvrtc_sys::nvrtcResult::NVRTC_SUCCESS { Ok(()) } else { Err(format!("{call} failed: {code:?}")) }
}

/// What an NVRTC compilation produced.
#[derive(Clone)]
pub enum Image {
    Cubin(Vec<u8>),
    /// NUL-terminated PTX text.
    Ptx(Vec<u8>),
}

/// Why a compilation failed: the compiler's log, or an error of NVRTC itself.
pub struct CompileFailure {
    pub log: String,
}

/// Compiles CUDA C with NVRTC for `sm_<arch>`.
pub fn nvrtc_compile(source: &str, file_name: &str, arch: u32) -> Result<Image, CompileFailure> {
    nvrtc_compile_for(source, file_name, arch, false)
}

/// Compiles CUDA C with NVRTC for `sm_<arch>` (a cubin), or with `virtual_arch` for
/// `compute_<arch>` (PTX, which the driver compiles for the GPU it is loaded on).
pub fn nvrtc_compile_for(source: &str, file_name: &str, arch: u32, virtual_arch: bool) -> Result<Image, CompileFailure> {
    let fail = |log: String| CompileFailure { log };
    let src = std::ffi::CString::new(source).map_err(|_| fail("the generated source contains a NUL byte".into()))?;
    let name = std::ffi::CString::new(file_name).map_err(|_| fail("the kernel name contains a NUL byte".into()))?;
    let mut prog: nvrtc_sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: valid NUL-terminated strings that outlive the program; no headers.
    let created = unsafe {
        nvrtc_sys::nvrtcCreateProgram(&mut prog, src.as_ptr(), name.as_ptr(), 0, std::ptr::null(), std::ptr::null())
    };
    check_nvrtc("nvrtcCreateProgram", created).map_err(fail)?;
    let options: Vec<std::ffi::CString> = [
        format!("--gpu-architecture={}_{arch}", if virtual_arch { "compute" } else { "sm" }),
        "-default-device".to_string(),
        "-std=c++17".to_string(),
        // gcc's reference build does not contract `a * b + c` into fused multiply-adds, and
        // a program's output must match it.
        "--fmad=false".to_string(),
        // Line information (no change to the code): with the `#line` directives of the
        // kernel's CUDA, compute-sanitizer and Nsight Compute name the user's C lines.
        "--generate-line-info".to_string(),
    ]
    .into_iter()
    .filter_map(|o| std::ffi::CString::new(o).ok())
    .collect();
    let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: `prog` was created above; the options are valid for the call.
    let compiled = unsafe { nvrtc_sys::nvrtcCompileProgram(prog, option_ptrs.len() as i32, option_ptrs.as_ptr()) };
    let result = if compiled == nvrtc_sys::nvrtcResult::NVRTC_SUCCESS {
        read_image(prog).map_err(fail)
    } else {
        let log = program_log(prog).unwrap_or_else(|e| format!("(no log: {e})"));
        Err(fail(format!("{compiled:?}\n{log}")))
    };
    // SAFETY: destroys the program created above exactly once.
    unsafe { nvrtc_sys::nvrtcDestroyProgram(&mut prog) };
    result
}

fn program_log(prog: nvrtc_sys::nvrtcProgram) -> Result<String, String> {
    let mut size = 0usize;
    // SAFETY: `prog` is a live program.
    check_nvrtc("nvrtcGetProgramLogSize", unsafe { nvrtc_sys::nvrtcGetProgramLogSize(prog, &mut size) })?;
    let mut buf = vec![0u8; size.max(1)];
    // SAFETY: the buffer has the size NVRTC asked for.
    check_nvrtc("nvrtcGetProgramLog", unsafe { nvrtc_sys::nvrtcGetProgramLog(prog, buf.as_mut_ptr() as *mut c_char) })?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).trim_end().to_string())
}

fn read_image(prog: nvrtc_sys::nvrtcProgram) -> Result<Image, String> {
    let mut size = 0usize;
    // SAFETY: `prog` is a compiled program.
    check_nvrtc("nvrtcGetCUBINSize", unsafe { nvrtc_sys::nvrtcGetCUBINSize(prog, &mut size) })?;
    if size > 0 {
        let mut buf = vec![0u8; size];
        // SAFETY: the buffer has the size NVRTC reported.
        check_nvrtc("nvrtcGetCUBIN", unsafe { nvrtc_sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut c_char) })?;
        return Ok(Image::Cubin(buf));
    }
    // A virtual architecture gives PTX only; the driver compiles it when loading.
    check_nvrtc("nvrtcGetPTXSize", unsafe { nvrtc_sys::nvrtcGetPTXSize(prog, &mut size) })?;
    let mut buf = vec![0u8; size.max(1)];
    // SAFETY: as above.
    check_nvrtc("nvrtcGetPTX", unsafe { nvrtc_sys::nvrtcGetPTX(prog, buf.as_mut_ptr() as *mut c_char) })?;
    if buf.last() != Some(&0) {
        buf.push(0);
    }
    Ok(Image::Ptx(buf))
}
