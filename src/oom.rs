//! Running out of memory is an error, not an abort: the allocator the `yosegi` and
//! `yosegi-cc` binaries install ([`ExitOnOutOfMemory`]) hands every request to the system's;
//! when one fails it says so on stderr (file descriptor 2, without allocating), ends the child
//! processes and removes the scratch directories in the process's care ([`crate::care`]), and
//! exits with status 2, as for input too large to compile. Without it Rust's default handler
//! aborts (SIGABRT, a core, the scratch left behind).
//!
//! A reserve of [`RESERVE_BYTES`], taken at the first allocation, is given back to the system
//! before the clean-up, which allocates a little (paths) and would otherwise fail too.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// What the clean-up after a failed allocation may need.
pub const RESERVE_BYTES: usize = 4 << 20;

static RESERVE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static RESERVE_TAKEN: AtomicBool = AtomicBool::new(false);
static FAILED: AtomicBool = AtomicBool::new(false);

fn reserve_layout() -> Layout {
    Layout::from_size_align(RESERVE_BYTES, 16).expect("a valid layout")
}

/// The system's allocator, with an exit instead of an abort when it fails.
pub struct ExitOnOutOfMemory;

// SAFETY: every method forwards to `System` with the caller's layout; the reserve is a block
// of `System`'s own, freed with the layout it was allocated with.
unsafe impl GlobalAlloc for ExitOnOutOfMemory {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        take_reserve();
        // SAFETY: the caller's contract.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() { out_of_memory(layout.size()) } else { p }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        take_reserve();
        // SAFETY: the caller's contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() { out_of_memory(layout.size()) } else { p }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() { out_of_memory(new_size) } else { p }
    }
}

fn take_reserve() {
    if RESERVE_TAKEN.load(Ordering::Relaxed) || RESERVE_TAKEN.swap(true, Ordering::SeqCst) {
        return;
    }
    // SAFETY: a non-zero-sized layout.
    RESERVE.store(unsafe { System.alloc(reserve_layout()) }, Ordering::SeqCst);
}

/// Says that `bytes` could not be allocated, cleans up and exits with status 2. A second
/// failure (in the clean-up itself, or on another thread meanwhile) exits at once.
fn out_of_memory(bytes: usize) -> ! {
    if FAILED.swap(true, Ordering::SeqCst) {
        // SAFETY: _exit ends the process without running anything that could allocate.
        unsafe { libc::_exit(2) }
    }
    let reserve = RESERVE.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !reserve.is_null() {
        // SAFETY: allocated by `take_reserve` with this layout, freed once (the swap).
        unsafe { System.dealloc(reserve, reserve_layout()) };
    }
    let mut message = [0u8; 256];
    let len = render_message(bytes, &mut message);
    // SAFETY: write(2) of a local buffer's initialised prefix.
    unsafe { libc::write(2, message.as_ptr().cast(), len) };
    crate::care::abandon();
    // SAFETY: as above; what the process still holds the system takes back.
    unsafe { libc::_exit(2) }
}

/// The message for a failed allocation of `bytes`, written into `out` without allocating;
/// returns its length.
fn render_message(bytes: usize, out: &mut [u8]) -> usize {
    let mut len = 0;
    let mut put = |s: &[u8], len: &mut usize| {
        let n = s.len().min(out.len() - *len);
        out[*len..*len + n].copy_from_slice(&s[..n]);
        *len += n;
    };
    put(b"error: out of memory: an allocation of ", &mut len);
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = bytes;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    put(&digits[i..], &mut len);
    put(b" bytes failed\n = help: give the process more memory (its `ulimit -v`, the job's memory limit), or make the input smaller\n", &mut len);
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_size_and_what_to_do() {
        let mut out = [0u8; 256];
        let len = render_message(1_610_612_736, &mut out);
        let text = std::str::from_utf8(&out[..len]).unwrap();
        assert!(text.starts_with("error: out of memory: an allocation of 1610612736 bytes failed\n"), "{text}");
        assert!(text.contains("help: give the process more memory"), "{text}");
        let len = render_message(0, &mut out);
        assert!(std::str::from_utf8(&out[..len]).unwrap().contains(" of 0 bytes"));
    }
}
