//! NVTX ranges for the profilers (Nsight Systems, Nsight Compute): the runtime marks its data
//! regions, compute regions, transfers and kernel compilations with ranges named after the
//! user's code (`jacobi2d.c:42 main_l42`, `jacobi2d.c:30 data`, `copy to device 524288 B`,
//! `compile main_l42`).
//!
//! A profiler that collects NVTX ranges names its injection library in `NVTX_INJECTION64_PATH`;
//! only then is CUDA's `libnvtx3interop` (NVTX 3 as a shared library, for callers without C
//! headers) loaded, once. Without the variable, or without the library, a range costs one
//! atomic load and builds no name.

use std::ffi::{CString, c_char, c_int};
use std::sync::OnceLock;

type PushFn = unsafe extern "C" fn(*const c_char) -> c_int;
type PopFn = unsafe extern "C" fn() -> c_int;

struct Nvtx {
    push: PushFn,
    pop: PopFn,
    /// Keeps the functions loaded.
    _library: libloading::Library,
}

static NVTX: OnceLock<Option<Nvtx>> = OnceLock::new();

fn nvtx() -> Option<&'static Nvtx> {
    NVTX.get_or_init(load).as_ref()
}

fn load() -> Option<Nvtx> {
    std::env::var_os("NVTX_INJECTION64_PATH")?;
    let names = ["libnvtx3interop.so.1", "libnvtx3interop.so"];
    let dirs = super::cuda::driver::toolkit_dirs();
    let paths = names.iter().map(std::path::PathBuf::from).chain(dirs.iter().flat_map(|d| names.iter().map(move |n| d.join(n))));
    for path in paths {
        // SAFETY: CUDA's NVTX library; loading it runs no more than its initialisers.
        let Ok(library) = (unsafe { libloading::Library::new(&path) }) else { continue };
        // SAFETY: the two functions of NVTX's C API with these signatures.
        let functions = unsafe {
            library.get::<PushFn>(b"nvtxRangePushA\0").and_then(|push| library.get::<PopFn>(b"nvtxRangePop\0").map(|pop| (*push, *pop)))
        };
        if let Ok((push, pop)) = functions {
            return Some(Nvtx { push, pop, _library: library });
        }
    }
    None
}

/// An open range, closed when dropped.
#[must_use = "the range closes when this is dropped"]
pub struct Range {
    open: bool,
}

impl Range {
    /// A guard that closes, when dropped, the range the last [`push`] of this thread opened.
    pub fn closing_a_push() -> Range {
        Range { open: true }
    }
}

impl Drop for Range {
    fn drop(&mut self) {
        if self.open
            && let Some(nvtx) = nvtx()
        {
            // SAFETY: closes the range this value opened, on the same thread.
            unsafe { (nvtx.pop)() };
        }
    }
}

/// Opens a range named `name()` when a profiler collects them (`name` is not called otherwise).
pub fn range(name: impl FnOnce() -> String) -> Range {
    let Some(nvtx) = nvtx() else { return Range { open: false } };
    let name = CString::new(name().replace('\0', " ")).unwrap_or_default();
    // SAFETY: a NUL-terminated string that outlives the call (NVTX copies it).
    unsafe { (nvtx.push)(name.as_ptr()) };
    Range { open: true }
}

/// Opens a range that a [`Range::closing_a_push`] closes later on the same thread: a structured `data` construct's
/// range opens at its entry and closes at its exit, so that what runs inside it nests in it.
pub fn push(name: impl FnOnce() -> String) {
    std::mem::forget(range(name));
}


/// Whether ranges go anywhere (a profiler is attached and NVTX loaded).
pub fn enabled() -> bool {
    nvtx().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_builds_its_name_only_for_a_profiler() {
        let built = std::cell::Cell::new(false);
        let range = range(|| {
            built.set(true);
            "main_l42".to_string()
        });
        assert_eq!(built.get(), enabled());
        assert_eq!(range.open, enabled());
        // CI runs under no profiler: nothing is loaded there.
        if std::env::var_os("NVTX_INJECTION64_PATH").is_none() {
            assert!(!enabled());
        }
    }
}
