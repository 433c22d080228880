//! Several GPUs in one runtime: which physical GPU each requested device runs on, peer access
//! between the GPUs, and copies from one device's memory to another's
//! ([`Device::copy_from_peer`] of the cuda device).
//!
//! A request for more devices than the machine has GPUs gives logical devices: device `i` runs
//! on GPU `i % gpus` and shares that GPU's primary context (and so its legacy default stream)
//! with the other devices on it, but has allocations, kernels and launches of its own. Copies
//! between two devices of one context are ordinary device-to-device copies; between two GPUs
//! they are `cuMemcpyPeer`, which goes over NVLink or PCIe when peer access is enabled and
//! through host memory inside the driver when it is not.

use cudarc::driver::sys;

use crate::runtime::device::{Device, DeviceAlloc, DeviceCount, PeerMemory};

use super::CudaDevice;
use super::driver::{check, describe};

/// The physical GPU (ordinal) of each device a request for `requested` devices gives on a
/// machine with `gpus` GPUs: every GPU once for `All`, else GPU `i % gpus` for device `i`.
/// Empty when there are no GPUs or none was requested.
pub fn physical_ordinals(requested: DeviceCount, gpus: usize) -> Vec<usize> {
    if gpus == 0 {
        return Vec::new();
    }
    match requested {
        DeviceCount::All => (0..gpus).collect(),
        DeviceCount::Exactly(n) => (0..n).map(|i| i % gpus).collect(),
    }
}

/// Whether device `i` of `ordinals` shares its GPU with another device (it is then labelled a
/// logical device).
pub fn shares_gpu(ordinals: &[usize], i: usize) -> bool {
    ordinals.iter().enumerate().any(|(j, &o)| j != i && Some(&o) == ordinals.get(i))
}

/// Whether a device's context may read and write another GPU's memory directly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerLink {
    /// `cuCtxEnablePeerAccess` succeeded (or access was already enabled).
    Enabled,
    /// `cuDeviceCanAccessPeer` says the two GPUs cannot: copies between them go through host
    /// memory inside the driver.
    Unsupported,
    /// Asking or enabling failed (too many peers, for one): copies go through host memory as
    /// for `Unsupported`. The message names the failing call.
    Failed(String),
}

/// Enables peer access between the contexts of every ordered pair of distinct GPUs among
/// `devices` where the hardware allows it, and records the outcome on every device of the
/// accessing GPU. Nothing here is fatal: `cuMemcpyPeer` works without peer access, only slower.
pub fn enable_peer_access(devices: &mut [CudaDevice]) {
    // One entry per physical GPU, in the order of its first device.
    let mut gpus: Vec<(i32, sys::CUdevice, sys::CUcontext)> = Vec::new();
    for d in devices.iter() {
        if !gpus.iter().any(|&(o, _, _)| o == d.ordinal) {
            gpus.push((d.ordinal, d.cu_device, d.context));
        }
    }
    for &(ordinal, device, context) in &gpus {
        for &(peer_ordinal, peer_device, peer_context) in &gpus {
            if peer_ordinal == ordinal {
                continue;
            }
            let link = enable_one(device, context, peer_device, peer_context);
            for d in devices.iter_mut().filter(|d| d.ordinal == ordinal) {
                d.peers.push((peer_ordinal, link.clone()));
            }
        }
    }
    // Every method makes its own context current; this only leaves the thread as opening one
    // GPU leaves it. A failure here would show again, and be reported, at the first operation.
    if let Some(first) = devices.first() {
        let _ = first.make_current();
    }
}

/// Lets `context` (on `device`) access the memory of `peer_context` (on `peer_device`). The
/// access is one-way: the pair is asked for again the other way round.
fn enable_one(device: sys::CUdevice, context: sys::CUcontext, peer_device: sys::CUdevice, peer_context: sys::CUcontext) -> PeerLink {
    let mut can = 0;
    // SAFETY: both are devices the driver handed out; valid out-pointer.
    if let Err(e) = check("cuDeviceCanAccessPeer", unsafe { sys::cuDeviceCanAccessPeer(&mut can, device, peer_device) }) {
        return PeerLink::Failed(e);
    }
    if can == 0 {
        return PeerLink::Unsupported;
    }
    // SAFETY: both contexts are primary contexts retained by their devices and live as long
    // as the process (they are never released). Peer access is enabled for the current context.
    let enabled = unsafe {
        check("cuCtxSetCurrent", sys::cuCtxSetCurrent(context)).map(|_| sys::cuCtxEnablePeerAccess(peer_context, 0))
    };
    match enabled {
        Ok(sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) => PeerLink::Enabled,
        Ok(code) => PeerLink::Failed(format!("cuCtxEnablePeerAccess failed: {}", describe(code))),
        Err(e) => PeerLink::Failed(e),
    }
}

/// Copies between GPUs use `cuMemcpyPeer`, which the host waits for (after the work on both
/// devices), unless `YOSEGI_PEER_COPY=async` orders them with events instead. Measured on two
/// H100s (bench/NOTES.md, run 13) the events gained nothing (jacobi2d 1.61x against 1.65x,
/// heat3d 1.51x against 1.56x): both forms wait for the same work, and the events cost their
/// own calls. Copies that overlap a split launch's interior are event-ordered whatever this
/// says ([`Exchange`]).
fn peer_copies_wait() -> bool {
    static SYNC: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SYNC.get_or_init(|| !std::env::var("YOSEGI_PEER_COPY").is_ok_and(|v| v.trim() == "async"))
}

/// The copies from other GPUs that run beside this device's launches ([`Device::defer_copies`]):
/// on a stream of their own that does not wait for the launch stream (the legacy default
/// stream, which every blocking stream waits for), each after events recorded on both GPUs'
/// launch streams when it is asked for.
#[derive(Default)]
pub struct Exchange {
    /// Made on first use; null until then, and when it could not be made (copies then stay in
    /// order with the launches, which is correct, only not overlapped).
    stream: usize,
    /// Between `defer_copies` and `join_copies`.
    open: bool,
    /// Some copy was put on the stream since the last join.
    pending: bool,
    /// The bytes those copies bring (allocation id, offset, length): a copy out of this device
    /// waits for them only where it reads them ([`Device::mark_range`]).
    incoming: Vec<(u64, u64, u64)>,
    /// With `YOSEGI_TRACE`: events around each copy, and its length, until they complete.
    timed: Vec<(sys::CUevent, sys::CUevent, u64)>,
}

impl Exchange {
    /// Whether a copy deferred since the last join brings some of `len` bytes at `offset` of
    /// allocation `alloc`.
    pub fn brings(&self, alloc: u64, offset: u64, len: u64) -> bool {
        self.pending && self.incoming.iter().any(|&(a, o, l)| a == alloc && o < offset + len && offset < o + l)
    }
}

impl Exchange {
    /// Waits for the copies and destroys the stream (the device goes away).
    pub fn release(&mut self) {
        if self.stream != 0 {
            // SAFETY: a stream this device made; the context is current (Drop).
            unsafe {
                sys::cuStreamSynchronize(self.stream as sys::CUstream);
                sys::cuStreamDestroy_v2(self.stream as sys::CUstream);
            }
            self.stream = 0;
        }
    }
}

impl CudaDevice {
    /// [`Device::defer_copies`]: makes the exchange stream if there is none yet.
    pub(super) fn start_exchange(&mut self) {
        if self.fault.is_some() {
            return;
        }
        if self.exchange.stream == 0 {
            let mut stream: sys::CUstream = std::ptr::null_mut();
            let made = self.make_current().and_then(|_| {
                // SAFETY: valid out-pointer; the context is current. Non-blocking: the stream
                // does not wait for the legacy default stream the launches are on.
                check("cuStreamCreate", unsafe { sys::cuStreamCreate(&mut stream, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32) })
            });
            if made.is_err() {
                return;
            }
            self.exchange.stream = stream as usize;
        }
        self.exchange.open = true;
    }

    /// [`Device::deferred_copy_stream`]: the exchange stream, made to wait for the work
    /// enqueued on the launch stream so far (the launches that write what is sent, or still
    /// read what a receive overwrites), when copies are deferred.
    pub(super) fn exchange_stream_for(&mut self, alloc: DeviceAlloc, offset: u64, len: u64, incoming: bool) -> Option<usize> {
        if !self.exchange.open || self.exchange.stream == 0 || self.fault.is_some() {
            return None;
        }
        let stream = self.exchange.stream as sys::CUstream;
        let mut event: sys::CUevent = std::ptr::null_mut();
        let ordered = self.make_current().and_then(|_| {
            // SAFETY: valid out-pointer; the context is current and the stream its own.
            unsafe {
                check("cuEventCreate", sys::cuEventCreate(&mut event, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32))
                    .and_then(|_| check("cuEventRecord", sys::cuEventRecord(event, std::ptr::null_mut())))
                    .and_then(|_| check("cuStreamWaitEvent", sys::cuStreamWaitEvent(stream, event, 0)))
            }
        });
        if !event.is_null() {
            // SAFETY: an event made above; one still pending in a stream is released once it
            // completes.
            unsafe { sys::cuEventDestroy_v2(event) };
        }
        // Not ordered: the copy goes in order with the launches, which is correct too.
        ordered.ok()?;
        self.exchange.pending = true;
        if incoming {
            self.exchange.incoming.push((alloc.0, offset, len));
        }
        Some(stream as usize)
    }

    /// Waits for the deferred copies still running (the host is about to read this device's
    /// memory).
    pub(super) fn wait_for_exchange(&mut self) {
        if self.exchange.pending && self.exchange.stream != 0 && self.make_current().is_ok() {
            // SAFETY: the exchange stream is this context's.
            if let Err(e) = check("cuStreamSynchronize", unsafe { sys::cuStreamSynchronize(self.exchange.stream as sys::CUstream) }) {
                self.memory_failure(format!("waiting for the copies from other devices: {e}"));
            }
        }
    }

    /// With `YOSEGI_TRACE`: the deferred copies that completed, as spans of this device.
    pub(super) fn trace_copies(&mut self) {
        let Some(reference) = self.trace_reference else { return };
        let timed = std::mem::take(&mut self.exchange.timed);
        for (start, stop, len) in timed {
            // SAFETY: events of this context recorded around one copy.
            let done = unsafe { sys::cuEventQuery(stop) } == sys::CUresult::CUDA_SUCCESS;
            if !done {
                self.exchange.timed.push((start, stop, len));
                continue;
            }
            let (from, to) = (super::enqueue::on_trace_clock(reference, &start), super::enqueue::on_trace_clock(reference, &stop));
            crate::runtime::trace::span(&self.label, &format!("copy in {len} B"), from, to);
            // SAFETY: events this device made, no longer used.
            unsafe {
                sys::cuEventDestroy_v2(start);
                sys::cuEventDestroy_v2(stop);
            }
        }
    }

    /// [`Device::join_copies`]: the launch stream waits for the copies put on the exchange
    /// stream since the last join; the event it waits for is handed back for the sources.
    pub(super) fn join_exchange(&mut self) -> Option<usize> {
        self.exchange.open = false;
        self.exchange.incoming.clear();
        if !std::mem::take(&mut self.exchange.pending) || self.fault.is_some() {
            return None;
        }
        let mut event: sys::CUevent = std::ptr::null_mut();
        let stream = self.exchange.stream as sys::CUstream;
        let joined = self.make_current().and_then(|_| {
            // SAFETY: valid out-pointer; the stream is this context's.
            unsafe {
                check("cuEventCreate", sys::cuEventCreate(&mut event, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32))
                    .and_then(|_| check("cuEventRecord", sys::cuEventRecord(event, stream)))
                    .and_then(|_| check("cuStreamWaitEvent", sys::cuStreamWaitEvent(std::ptr::null_mut(), event, 0)))
            }
        });
        match joined {
            Ok(()) => Some(event as usize),
            Err(e) => {
                // SAFETY: the exchange stream is this context's; waiting for it keeps the order.
                unsafe { sys::cuStreamSynchronize(stream) };
                self.memory_failure(format!("waiting for the copies from other devices: {e}"));
                None
            }
        }
    }

    /// An event recorded on this device's stream after the work enqueued so far (`Device::mark`),
    /// deferred copies into it included: a copy out of this device waits for the bytes a
    /// deferred copy is bringing. (The exchange stream waits for the launch stream's work so
    /// far and the event is recorded on it: its copies wait for that work anyway.)
    pub(super) fn record_mark(&mut self, covering_exchange: bool) -> Option<usize> {
        let mut event: sys::CUevent = std::ptr::null_mut();
        let exchange = (covering_exchange && self.exchange.pending && self.exchange.stream != 0).then_some(self.exchange.stream as sys::CUstream);
        let recorded = self.make_current().and_then(|_| {
            // SAFETY: valid out-pointer; the context is current; the exchange stream is its own.
            unsafe {
                check("cuEventCreate", sys::cuEventCreate(&mut event, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32))
                    .and_then(|_| check("cuEventRecord", sys::cuEventRecord(event, std::ptr::null_mut())))?;
                if let Some(stream) = exchange {
                    check("cuStreamWaitEvent", sys::cuStreamWaitEvent(stream, event, 0))?;
                    check("cuEventRecord", sys::cuEventRecord(event, stream))?;
                }
                Ok(())
            }
        });
        match recorded {
            Ok(()) => Some(event as usize),
            Err(e) => {
                self.memory_failure(format!("marking the device's work for another device: {e}"));
                None
            }
        }
    }

    /// `Device::wait_for_mark`.
    pub(super) fn wait_for(&mut self, mark: usize) {
        let waited = self.make_current().and_then(|_| {
            // SAFETY: `mark` is an event another device recorded (`record_mark`) and has not
            // destroyed yet; an event of another context may be waited for.
            check("cuStreamWaitEvent", unsafe { sys::cuStreamWaitEvent(std::ptr::null_mut(), mark as sys::CUevent, 0) })
        });
        if let Err(e) = waited {
            self.memory_failure(format!("waiting for another device's work: {e}"));
        }
    }

    /// `Device::drop_mark`.
    pub(super) fn destroy_mark(&mut self, mark: usize) {
        if self.make_current().is_ok() {
            // SAFETY: an event `record_mark` made; a destroyed event still pending in a stream
            // is released once it completes.
            unsafe { sys::cuEventDestroy_v2(mark as sys::CUevent) };
        }
    }

    /// The physical GPU this device runs on (its CUDA ordinal).
    pub fn ordinal(&self) -> i32 {
        self.ordinal
    }

    /// Per other GPU among the devices opened together (by ordinal): whether this device's
    /// context may access its memory directly.
    pub fn peer_links(&self) -> &[(i32, PeerLink)] {
        &self.peers
    }

    /// `offset` bytes into `alloc` as another cuda device copies from it: `None` for an
    /// allocation that is not live or has no memory (zero bytes), and while a fault is held
    /// (the context is broken and memory operations do nothing).
    pub(super) fn lend_memory(&self, alloc: DeviceAlloc, offset: u64) -> Option<PeerMemory> {
        if self.fault.is_some() {
            return None;
        }
        let b = self.buffers.get(&alloc.0).filter(|b| b.ptr != 0)?;
        Some(PeerMemory { context: self.context as usize, address: b.ptr + offset })
    }

    /// [`Device::copy_from_peer`]: one copy on the legacy default streams, which orders it
    /// after the work already enqueued on both devices and before work enqueued later, so
    /// neither device waits for its launches in flight first. Not staged: the bytes never
    /// reach the host unless the driver itself bounces them (no peer access).
    pub(super) fn copy_from_peer_device(
        &mut self,
        dst: DeviceAlloc,
        dst_offset: u64,
        src: &mut dyn Device,
        src_alloc: DeviceAlloc,
        src_offset: u64,
        len: u64,
    ) {
        if len == 0 || self.fault.is_some() {
            return;
        }
        let Some(from) = src.peer_memory(src_alloc, src_offset) else {
            // Not a cuda device's live memory, or the source holds a fault (it then copies
            // nothing out, and the runtime reports its fault): through the host, as the
            // trait's default does.
            let mut bounce = vec![0u8; len as usize];
            src.copy_to_host(src_alloc, src_offset, &mut bounce);
            self.copy_to_device(dst, dst_offset, &bounce);
            return;
        };
        let (dst_ptr, dst_bytes) = {
            let b = self.buffer(dst);
            (b.ptr, b.bytes)
        };
        if dst_offset + len > dst_bytes {
            self.fatal(format!("a copy of {len} bytes from another device at offset {dst_offset} into a {dst_bytes}-byte allocation"));
        }
        let src_context = from.context as sys::CUcontext;
        let result = self.make_current().and_then(|_| {
            // SAFETY: the destination range lies inside a live allocation (checked above); the
            // source is `len` bytes of a live allocation of a device of `src_context`, which the
            // runtime sized (`PeerMemory` does not carry the allocation's size).
            unsafe {
                if src_context == self.context {
                    // Two logical devices of one GPU: one context, one address space.
                    check("cuMemcpyDtoD", sys::cuMemcpyDtoD_v2(dst_ptr + dst_offset, from.address, len as usize))
                } else if self.exchange.open && self.exchange.stream != 0 {
                    // Beside this device's next launches: after the work so far on the source
                    // (which wrote the bytes) and here (which may still read the old ones).
                    let stream = self.exchange.stream as sys::CUstream;
                    let source_done = src.mark_range(src_alloc, src_offset, len);
                    // This stream is in order with itself: the launch stream's work suffices.
                    let here_done = self.record_mark(false);
                    let timed = crate::runtime::trace::enabled().then(|| (CudaDevice::new_event(), CudaDevice::new_event()));
                    let copied = check("cuCtxSetCurrent", sys::cuCtxSetCurrent(self.context))
                        .and_then(|_| {
                            for mark in [source_done, here_done].into_iter().flatten() {
                                check("cuStreamWaitEvent", sys::cuStreamWaitEvent(stream, mark as sys::CUevent, 0))?;
                            }
                            Ok(())
                        })
                        .and_then(|_| {
                            if let Some((Ok(start), _)) = &timed {
                                sys::cuEventRecord(*start, stream);
                            }
                            check(
                                "cuMemcpyPeerAsync",
                                sys::cuMemcpyPeerAsync(dst_ptr + dst_offset, self.context, from.address, src_context, len as usize, stream),
                            )
                        });
                    if let Some((Ok(start), Ok(stop))) = timed {
                        sys::cuEventRecord(stop, stream);
                        self.exchange.timed.push((start, stop, len));
                    }
                    if let Some(mark) = source_done {
                        src.drop_mark(mark);
                    }
                    if let Some(mark) = here_done {
                        self.destroy_mark(mark);
                    }
                    if copied.is_ok() {
                        self.exchange.pending = true;
                        self.exchange.incoming.push((dst.0, dst_offset, len));
                    }
                    copied
                } else if peer_copies_wait() {
                    check(
                        "cuMemcpyPeer",
                        sys::cuMemcpyPeer(dst_ptr + dst_offset, self.context, from.address, src_context, len as usize),
                    )
                } else {
                    // Without the host waiting: the copy waits on this device's stream for the
                    // source's work so far, and the source's later work (which may overwrite
                    // what is copied) waits for the copy.
                    let source_done = src.mark();
                    let copied = check("cuCtxSetCurrent", sys::cuCtxSetCurrent(self.context))
                        .and_then(|_| match source_done {
                            Some(mark) => check("cuStreamWaitEvent", sys::cuStreamWaitEvent(std::ptr::null_mut(), mark as sys::CUevent, 0)),
                            None => Ok(()),
                        })
                        .and_then(|_| {
                            check(
                                "cuMemcpyPeerAsync",
                                sys::cuMemcpyPeerAsync(dst_ptr + dst_offset, self.context, from.address, src_context, len as usize, std::ptr::null_mut()),
                            )
                        });
                    if let Some(mark) = source_done {
                        src.drop_mark(mark);
                    }
                    if copied.is_ok()
                        && let Some(mark) = self.mark()
                    {
                        src.wait_for_mark(mark);
                        self.drop_mark(mark);
                    }
                    copied
                }
            }
        });
        if let Err(e) = result {
            // A fault of the source's launches breaks its context and fails the copy: it is
            // theirs, kept by the source for the runtime to report. The source lends no memory
            // once it holds one.
            src.wait();
            if src.peer_memory(src_alloc, src_offset).is_none() {
                return;
            }
            self.memory_failure(format!("copying {len} bytes from another device: {e}"));
        }
    }
}
