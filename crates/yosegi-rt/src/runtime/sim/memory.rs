//! The simulator's device memory: one zero-initialised buffer per allocation, accessed with
//! relaxed atomics of the element's width so that blocks running on several CPU threads may
//! share it (racing plain accesses would be undefined behaviour in Rust; relaxed atomic loads and
//! stores compile to ordinary moves).
//!
//! A buffer may also be a read-only view of host memory it does not own
//! ([`SimBuffer::host_view`]): the performance model runs a few blocks of a kernel over the
//! program's host arrays to count what they do, and must not change them, so a view drops
//! stores.

use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering};

pub struct SimBuffer {
    /// The memory of an owned buffer; empty for a view.
    words: Box<[AtomicU64]>,
    base: *mut u8,
    len: usize,
    /// A view of memory the buffer does not own: loads read it, stores are dropped.
    read_only: bool,
}

// SAFETY: the memory is only accessed through atomics (`load`, `store`), and a view's memory
// outlives the buffer (`host_view`'s contract).
unsafe impl Send for SimBuffer {}
unsafe impl Sync for SimBuffer {}

impl SimBuffer {
    pub fn new(len: usize) -> SimBuffer {
        let words: Box<[AtomicU64]> = (0..len.div_ceil(8)).map(|_| AtomicU64::new(0)).collect();
        let base = words.as_ptr() as *mut u8;
        SimBuffer { words, base, len, read_only: false }
    }

    /// A read-only view of the `len` bytes at `ptr`, which may have any alignment: loads read
    /// them, stores and atomics leave them unchanged.
    ///
    /// # Safety
    /// The bytes stay readable as long as the buffer lives.
    pub unsafe fn host_view(ptr: *const u8, len: usize) -> SimBuffer {
        SimBuffer { words: Box::new([]), base: ptr as *mut u8, len, read_only: true }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    fn base(&self) -> *mut u8 {
        debug_assert!(self.read_only || std::ptr::eq(self.base, self.words.as_ptr() as *mut u8));
        self.base
    }

    /// The `size` bytes at `offset` (in bounds: the caller checked) as little-endian bits.
    #[inline]
    pub fn load(&self, offset: usize, size: u32) -> u64 {
        debug_assert!(offset + size as usize <= self.len);
        // SAFETY: in bounds (checked by the caller), aligned (checked here: a view's base may
        // have any alignment), atomics only.
        unsafe {
            let p = self.base().add(offset);
            let at = p as usize;
            match size {
                8 if at.is_multiple_of(8) => AtomicU64::from_ptr(p as *mut u64).load(Ordering::Relaxed),
                4 if at.is_multiple_of(4) => AtomicU32::from_ptr(p as *mut u32).load(Ordering::Relaxed) as u64,
                2 if at.is_multiple_of(2) => AtomicU16::from_ptr(p as *mut u16).load(Ordering::Relaxed) as u64,
                _ => {
                    let mut bits = 0u64;
                    for i in 0..size as usize {
                        bits |= (AtomicU8::from_ptr(p.add(i)).load(Ordering::Relaxed) as u64) << (8 * i);
                    }
                    bits
                }
            }
        }
    }

    #[inline]
    pub fn store(&self, offset: usize, size: u32, bits: u64) {
        debug_assert!(offset + size as usize <= self.len);
        if self.read_only {
            return;
        }
        // SAFETY: as in `load`.
        unsafe {
            let p = self.base().add(offset);
            match size {
                8 if offset.is_multiple_of(8) => AtomicU64::from_ptr(p as *mut u64).store(bits, Ordering::Relaxed),
                4 if offset.is_multiple_of(4) => {
                    AtomicU32::from_ptr(p as *mut u32).store(bits as u32, Ordering::Relaxed)
                }
                2 if offset.is_multiple_of(2) => {
                    AtomicU16::from_ptr(p as *mut u16).store(bits as u16, Ordering::Relaxed)
                }
                _ => {
                    for i in 0..size as usize {
                        AtomicU8::from_ptr(p.add(i)).store((bits >> (8 * i)) as u8, Ordering::Relaxed);
                    }
                }
            }
        }
    }

    /// Atomically replaces the `size` bytes at `offset` by `update(old)`; returns the old bits.
    /// Misaligned atomics are refused by the caller.
    pub fn read_modify_write(&self, offset: usize, size: u32, update: impl Fn(u64) -> u64) -> u64 {
        if self.read_only {
            return self.load(offset, size);
        }
        // SAFETY: in bounds and aligned (checked by the caller).
        unsafe {
            let p = self.base().add(offset);
            match size {
                8 => {
                    let a = AtomicU64::from_ptr(p as *mut u64);
                    a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(update(old))).unwrap_or_else(|v| v)
                }
                4 => {
                    let a = AtomicU32::from_ptr(p as *mut u32);
                    a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(update(old as u64) as u32))
                        .unwrap_or_else(|v| v) as u64
                }
                2 => {
                    let a = AtomicU16::from_ptr(p as *mut u16);
                    a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(update(old as u64) as u16))
                        .unwrap_or_else(|v| v) as u64
                }
                _ => {
                    let a = AtomicU8::from_ptr(p);
                    a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| Some(update(old as u64) as u8))
                        .unwrap_or_else(|v| v) as u64
                }
            }
        }
    }

    pub fn write_bytes(&self, offset: usize, src: &[u8]) {
        let mut i = 0;
        // Whole aligned words first: transfers of large arrays should not go byte by byte.
        while i < src.len() && !(offset + i).is_multiple_of(8) {
            self.store(offset + i, 1, src[i] as u64);
            i += 1;
        }
        while i + 8 <= src.len() {
            let bits = u64::from_le_bytes(src[i..i + 8].try_into().expect("8 bytes"));
            self.store(offset + i, 8, bits);
            i += 8;
        }
        while i < src.len() {
            self.store(offset + i, 1, src[i] as u64);
            i += 1;
        }
    }

    pub fn read_bytes(&self, offset: usize, dst: &mut [u8]) {
        let mut i = 0;
        while i < dst.len() && !(offset + i).is_multiple_of(8) {
            dst[i] = self.load(offset + i, 1) as u8;
            i += 1;
        }
        while i + 8 <= dst.len() {
            dst[i..i + 8].copy_from_slice(&self.load(offset + i, 8).to_le_bytes());
            i += 8;
        }
        while i < dst.len() {
            dst[i] = self.load(offset + i, 1) as u8;
            i += 1;
        }
    }
}
