//! Launch results (reductions' values, scalar outputs) copied into pinned host memory on the
//! launch stream right after the launch, with an event after the copies: the host then waits
//! for that one launch's results, not for the launches enqueued after it. The runtime starts
//! the next kernel of a region before it reads a reduction's value (`runtime::launch`), so
//! that the GPU runs it while the host folds the value and prepares what follows; a
//! synchronous copy would wait for that next kernel too.

use std::ffi::c_void;

use cudarc::driver::sys;

use crate::ir::ScalarType;
use crate::runtime::device::{KernelFault, LaunchOutcome};
use crate::ir::value;

use super::driver::check;
use super::{CudaDevice, PendingResults};

/// Pinned host memory a launch's results are copied into, and the event recorded after the
/// copies.
pub(super) struct Landing {
    ptr: *mut u8,
    bytes: usize,
    event: sys::CUevent,
}

/// The pinned buffers of finished launches, for the next ones.
#[derive(Default)]
pub(super) struct Landings {
    free: Vec<Landing>,
}

impl Landings {
    /// Frees every buffer and event (the device goes away; its context is current).
    pub(super) fn release(&mut self) {
        for landing in self.free.drain(..) {
            // SAFETY: allocated by `land_results`, released once.
            unsafe {
                sys::cuMemFreeHost(landing.ptr as *mut c_void);
                sys::cuEventDestroy_v2(landing.event);
            }
        }
    }
}

/// Bytes of a launch's results: each reduction's values, then each scalar output.
fn result_bytes(results: &PendingResults) -> usize {
    let reductions: u64 = results.reductions.iter().map(|&(_, ty, count)| ty.size_bytes() as u64 * count).sum();
    let outputs: u64 = results.outputs.iter().map(|&(_, ty)| ty.size_bytes() as u64).sum();
    (reductions + outputs) as usize
}

impl CudaDevice {
    /// Enqueues the copies of a started launch's results into pinned memory, after the launch
    /// (and its fold kernels) on the launch stream. `None` when that cannot be done (no
    /// pinned memory): the results are then read the synchronous way.
    pub(super) fn land_results(&mut self, results: &PendingResults) -> Option<Landing> {
        let bytes = result_bytes(results);
        let reuse = self.landings.free.iter().position(|l| l.bytes >= bytes);
        let landing = match reuse {
            Some(i) => self.landings.free.swap_remove(i),
            None => {
                let size = bytes.next_power_of_two().max(4096);
                let mut host: *mut c_void = std::ptr::null_mut();
                let mut event: sys::CUevent = std::ptr::null_mut();
                // SAFETY: valid out-pointers; the context is current (the launch was enqueued).
                unsafe {
                    if sys::cuMemAllocHost_v2(&mut host, size) != sys::CUresult::CUDA_SUCCESS || host.is_null() {
                        return None;
                    }
                    if sys::cuEventCreate(&mut event, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) != sys::CUresult::CUDA_SUCCESS {
                        sys::cuMemFreeHost(host);
                        return None;
                    }
                }
                Landing { ptr: host as *mut u8, bytes: size, event }
            }
        };
        let copies = results
            .reductions
            .iter()
            .map(|&(ptr, ty, count)| (ptr, ty.size_bytes() as usize * count as usize))
            .chain(results.outputs.iter().map(|&(ptr, ty)| (ptr, ty.size_bytes() as usize)));
        let mut at = 0usize;
        let mut enqueued = Ok(());
        for (ptr, len) in copies {
            if len == 0 {
                continue;
            }
            // SAFETY: `ptr` holds `len` bytes of the launch's scratch; the pinned buffer holds
            // `bytes` >= the sum of the lengths; both stay until `read_landed`.
            enqueued = check("cuMemcpyDtoHAsync", unsafe {
                sys::cuMemcpyDtoHAsync_v2(landing.ptr.add(at) as *mut c_void, ptr, len, std::ptr::null_mut())
            });
            if enqueued.is_err() {
                break;
            }
            at += len;
        }
        // SAFETY: an event of this context, recorded on its launch stream.
        let enqueued = enqueued.and_then(|_| check("cuEventRecord", unsafe { sys::cuEventRecord(landing.event, std::ptr::null_mut()) }));
        if enqueued.is_err() {
            // Whatever was enqueued finishes before the buffer's next use (the same stream).
            self.landings.free.push(landing);
            return None;
        }
        Some(landing)
    }

    /// The results a launch's landing holds, once its copies are done; the launches before it
    /// (on the one stream) are then done too, and their times recorded. A fault found while
    /// waiting is the launches', reported the usual way.
    pub(super) fn read_landed(&mut self, results: PendingResults, landing: Landing) -> Result<LaunchOutcome, KernelFault> {
        let waited = self.make_current().and_then(|_| {
            // SAFETY: an event of this context, recorded after the launch's result copies.
            check("cuEventSynchronize", unsafe { sys::cuEventSynchronize(landing.event) })
        });
        if waited.is_err() {
            self.landings.free.push(landing);
            self.wait_in_flight();
            if let Some(f) = self.fault.take() {
                return Err(f);
            }
            return self.read_results(results);
        }
        self.complete_through(results.stop);
        let PendingResults { reductions, outputs, scratch, counters, .. } = results;
        // SAFETY: the copies into the buffer completed (the event above), and nothing else
        // writes it until it goes back to the pool below.
        let landed = unsafe { std::slice::from_raw_parts(landing.ptr, landing.bytes) };
        let mut at = 0usize;
        let mut take = |ty: ScalarType, count: u64| {
            let size = ty.size_bytes() as usize;
            let values: Vec<u64> = landed[at..at + size * count as usize].chunks(size).map(|c| value::from_bytes(ty, c)).collect();
            at += size * count as usize;
            values
        };
        let partials: Vec<Vec<u64>> = reductions.iter().map(|&(_, ty, count)| take(ty, count)).collect();
        let scalar_outputs: Vec<u64> = outputs.iter().map(|&(_, ty)| take(ty, 1).first().copied().unwrap_or(0)).collect();
        self.landings.free.push(landing);
        self.recycle(scratch);
        Ok(LaunchOutcome { partials, scalar_outputs, counters })
    }
}
