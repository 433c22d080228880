//! Copies between two ranks' GPUs through NCCL: the receiving rank's `ncclRecv` and the sending
//! rank's `ncclSend` go on the legacy default stream, where the cuda device's launches are, so a
//! halo arrives after the launches that wrote it and before those that read it without either
//! host waiting. While a cut part's halo comes in (`Device::defer_copies`), they go on the
//! device's exchange stream instead, after the launches so far, and the boundary's launches
//! wait for them (`Device::join_copies`), so the interior runs beside the exchange. NCCL goes GPU to GPU over NVLink inside a node and over the network between
//! nodes. The communicator is made once, by every rank together, when every rank drives a GPU
//! and finds NCCL (`libnccl.so.2`); otherwise copies go through MPI (`runtime::ranks`).

use std::ffi::c_void;

use cudarc::nccl::sys as nccl;

use super::Ranks;

pub struct DeviceLink {
    comm: nccl::ncclComm_t,
}

// SAFETY: the communicator is used from the thread that runs the program's regions only (the
// runtime's lock serialises every call).
unsafe impl Send for DeviceLink {}
unsafe impl Sync for DeviceLink {}

/// Every rank's answer to whether it can join (`all_gpus`: every rank's device is a GPU, which
/// every rank knows from the devices' names; each rank a GPU of its own; NCCL found), agreed by
/// all. `YOSEGI_RANK_COPIES=mpi` or `host` leaves NCCL out.
pub fn connect(ranks: &Ranks, all_gpus: bool) -> Option<DeviceLink> {
    let wanted = !std::env::var("YOSEGI_RANK_COPIES").is_ok_and(|v| matches!(v.trim(), "mpi" | "host"));
    if !all_gpus || !wanted {
        return None;
    }
    // NCCL refuses two ranks on one GPU: ranks sharing their node's GPUs (more ranks than
    // GPUs, as when testing on one) copy through MPI instead.
    let shares_a_gpu = !crate::runtime::cuda::CudaDevice::gpu_count().is_ok_and(|gpus| ranks.local_size <= gpus);
    // SAFETY: only looks for the library.
    let mine = (!shares_a_gpu && unsafe { nccl::is_culib_present() }) as u8;
    if !ranks.all_gather(&[mine], || "whether every rank has NCCL".to_string()).iter().all(|r| r == &[1]) {
        return None;
    }
    let mut id = nccl::ncclUniqueId { internal: [0; 128] };
    if ranks.rank == 0 {
        // SAFETY: valid out-pointer.
        check(ranks, unsafe { nccl::ncclGetUniqueId(&mut id) }, || "ncclGetUniqueId".to_string());
    }
    // SAFETY: the id is plain bytes.
    let bytes = unsafe { std::slice::from_raw_parts_mut(id.internal.as_mut_ptr() as *mut u8, 128) };
    ranks.broadcast(bytes, 0, || "NCCL's id".to_string());
    let mut comm: nccl::ncclComm_t = std::ptr::null_mut();
    // SAFETY: every rank calls it with the same id, its own rank and its GPU's context current
    // (the cuda device made it current when it opened).
    let made = unsafe { nccl::ncclCommInitRank(&mut comm, ranks.size as i32, id, ranks.rank as i32) };
    check(ranks, made, || "ncclCommInitRank".to_string());
    Some(DeviceLink { comm })
}

impl DeviceLink {
    /// Sends `len` bytes of the GPU memory at `address` (of the CUDA context `context`) to rank
    /// `to`, after the launches enqueued so far: on `stream` (a stream of that context, ordered
    /// after them: `Device::deferred_copy_stream`), else on the launches' stream.
    pub fn send(&self, ranks: &Ranks, context: usize, address: u64, len: u64, to: usize, stream: Option<usize>) {
        ranks.count_sent(len);
        // SAFETY: a live device address of that context; the communicator is this job's.
        let done = unsafe {
            current(context);
            nccl::ncclSend(address as *const c_void, len as usize, nccl::ncclDataType_t::ncclInt8, to as i32, self.comm, on(stream))
        };
        check(ranks, done, || format!("ncclSend of {len} bytes to rank {to}"));
    }

    /// Receives `len` bytes from rank `from` into the GPU memory at `address`, before the
    /// launches enqueued later (on `stream`: before those enqueued after the join).
    pub fn receive(&self, ranks: &Ranks, context: usize, address: u64, len: u64, from: usize, stream: Option<usize>) {
        ranks.count_received(len);
        // SAFETY: as in `send`.
        let done = unsafe {
            current(context);
            nccl::ncclRecv(address as *mut c_void, len as usize, nccl::ncclDataType_t::ncclInt8, from as i32, self.comm, on(stream))
        };
        check(ranks, done, || format!("ncclRecv of {len} bytes from rank {from}"));
    }
}

/// The stream an operation goes on: `stream`, else the legacy default stream (null).
fn on(stream: Option<usize>) -> nccl::cudaStream_t {
    stream.map_or(std::ptr::null_mut(), |s| s as nccl::cudaStream_t)
}

/// Ends the job when an NCCL call failed.
fn check(ranks: &Ranks, done: nccl::ncclResult_t, what: impl FnOnce() -> String) {
    if done != nccl::ncclResult_t::ncclSuccess {
        ranks.end_job(&format!("{} failed ({done:?})", what()), 1);
    }
}

/// Makes `context` current on this thread.
///
/// # Safety
/// `context` is a live CUDA context (`Device::peer_memory`'s).
unsafe fn current(context: usize) {
    // SAFETY: the caller's contract.
    unsafe { cudarc::driver::sys::cuCtxSetCurrent(context as cudarc::driver::sys::CUcontext) };
}
