//! Large copies between host and device through two pinned staging buffers. Up: while the
//! copy engine reads chunk k from one buffer, the host copies chunk k+1 into the other (with
//! several threads: one thread's `memcpy` is slower than the copy engine). Down: while the host
//! copies chunk k out of one buffer, the copy engine fills the other with chunk k+1. A copy
//! to or from pageable memory instead goes through the driver's own small bounce buffers, one
//! thread touching the pages (NPB FT's 1 GB read-back of a static array ran at 2.3 GB/s).
//!
//! The copies run on a stream of their own created *blocking* (`CU_STREAM_DEFAULT`): the
//! legacy default stream, where kernels run, orders itself after them and they after it, so a
//! launch that reads the data waits for its copy, and a copy into memory a running kernel
//! reads waits for that kernel, without events between the two streams.

use cudarc::driver::sys;
use rayon::prelude::*;

use super::driver::check;

/// Copies of at least this many bytes are staged; smaller ones cost less as they are.
pub const STAGED_UPLOAD_MIN: usize = 4 << 20;
/// Bytes per staging buffer (two are kept).
pub const UPLOAD_CHUNK: usize = 8 << 20;
/// Bytes each host thread copies into a staging buffer at a time.
const HOST_COPY_PIECE: usize = 1 << 20;

/// One chunk of an upload: `len` bytes at `offset` of the source, through staging buffer
/// `buffer` (0 or 1, alternating).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UploadChunk {
    pub offset: usize,
    pub len: usize,
    pub buffer: usize,
}

/// The chunks of a `len`-byte upload through buffers of `chunk` bytes, in order.
pub fn plan_upload(len: usize, chunk: usize) -> Vec<UploadChunk> {
    let chunk = chunk.max(1);
    (0..len.div_ceil(chunk))
        .map(|k| UploadChunk { offset: k * chunk, len: chunk.min(len - k * chunk), buffer: k % 2 })
        .collect()
}

/// How large copies between host and device are made (`YOSEGI_UPLOADS=pageable` keeps the
/// driver's own path for both directions, to compare).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadPath {
    Staged,
    Pageable,
}

impl UploadPath {
    pub fn from_env() -> UploadPath {
        match std::env::var("YOSEGI_UPLOADS").as_deref() {
            Ok("pageable") => UploadPath::Pageable,
            _ => UploadPath::Staged,
        }
    }
}

/// The copy stream, the two pinned buffers and the event recorded after the last copy out
/// of each; created on the first staged upload.
pub struct PinnedStaging {
    stream: sys::CUstream,
    buffers: [*mut u8; 2],
    /// Recorded after the copy engine's last use of each buffer, a read (upload) or a write
    /// (download); `None`: never used.
    read: [Option<sys::CUevent>; 2],
}

impl PinnedStaging {
    /// The copy stream and the pinned buffers (the caller made the context current).
    pub fn create() -> Result<PinnedStaging, String> {
        let mut staging = PinnedStaging { stream: std::ptr::null_mut(), buffers: [std::ptr::null_mut(); 2], read: [None, None] };
        // SAFETY: valid out-pointers; on failure `release` frees what was made.
        unsafe {
            let made = check("cuStreamCreate", sys::cuStreamCreate(&mut staging.stream, 0)).and_then(|_| {
                for buffer in &mut staging.buffers {
                    let mut host: *mut std::ffi::c_void = std::ptr::null_mut();
                    check("cuMemAllocHost", sys::cuMemAllocHost_v2(&mut host, UPLOAD_CHUNK))?;
                    *buffer = host as *mut u8;
                }
                Ok(())
            });
            if let Err(e) = made {
                staging.release();
                return Err(e);
            }
        }
        Ok(staging)
    }

    /// Enqueues the copy of `src` to device address `dst`; returns once `src` has been read
    /// (the last chunk may still be on its way to the device).
    pub fn upload(&mut self, dst: sys::CUdeviceptr, src: &[u8]) -> Result<(), String> {
        for chunk in plan_upload(src.len(), UPLOAD_CHUNK) {
            let b = chunk.buffer;
            // SAFETY (this block): the event was recorded on our stream; the buffer holds
            // UPLOAD_CHUNK bytes and is not read by the copy engine once the event completed;
            // the device range is the caller's.
            unsafe {
                if let Some(read) = self.read[b] {
                    check("cuEventSynchronize", sys::cuEventSynchronize(read))?;
                }
                let staged = std::slice::from_raw_parts_mut(self.buffers[b], chunk.len);
                staged
                    .par_chunks_mut(HOST_COPY_PIECE)
                    .zip(src[chunk.offset..chunk.offset + chunk.len].par_chunks(HOST_COPY_PIECE))
                    .for_each(|(to, from)| to.copy_from_slice(from));
                check(
                    "cuMemcpyHtoDAsync",
                    sys::cuMemcpyHtoDAsync_v2(dst + chunk.offset as u64, self.buffers[b] as *const _, chunk.len, self.stream),
                )?;
            }
            self.mark_last_use(b)?;
        }
        Ok(())
    }

    /// Copies device address `src` into `dst`; returns once `dst` holds the bytes. Launches
    /// that write them must have finished (the caller waits for them).
    pub fn download(&mut self, dst: &mut [u8], src: sys::CUdeviceptr) -> Result<(), String> {
        let chunks = plan_upload(dst.len(), UPLOAD_CHUNK);
        if let Some(first) = chunks.first() {
            self.fetch_chunk(src, first)?;
        }
        for (k, chunk) in chunks.iter().enumerate() {
            // The copy engine fills the other buffer while this one is emptied.
            if let Some(next) = chunks.get(k + 1) {
                self.fetch_chunk(src, next)?;
            }
            let b = chunk.buffer;
            // SAFETY: the event was recorded after the copy into buffer `b`; once it completed,
            // the buffer's first `chunk.len` bytes are the device's and nothing writes them.
            unsafe {
                if let Some(done) = self.read[b] {
                    check("cuEventSynchronize", sys::cuEventSynchronize(done))?;
                }
                let staged = std::slice::from_raw_parts(self.buffers[b], chunk.len);
                dst[chunk.offset..chunk.offset + chunk.len]
                    .par_chunks_mut(HOST_COPY_PIECE)
                    .zip(staged.par_chunks(HOST_COPY_PIECE))
                    .for_each(|(to, from)| to.copy_from_slice(from));
            }
        }
        Ok(())
    }

    /// Enqueues the copy of `chunk` of the device bytes at `src` into its buffer, after the
    /// copy engine's last use of that buffer.
    fn fetch_chunk(&mut self, src: sys::CUdeviceptr, chunk: &UploadChunk) -> Result<(), String> {
        let b = chunk.buffer;
        // SAFETY: the buffer holds UPLOAD_CHUNK bytes; its previous copy finished (the event)
        // and the host consumed it before asking for this one; the device range is the caller's.
        unsafe {
            if let Some(last) = self.read[b] {
                check("cuEventSynchronize", sys::cuEventSynchronize(last))?;
            }
            check(
                "cuMemcpyDtoHAsync",
                sys::cuMemcpyDtoHAsync_v2(self.buffers[b] as *mut _, src + chunk.offset as u64, chunk.len, self.stream),
            )?;
        }
        self.mark_last_use(b)
    }

    /// Records buffer `b`'s event after the copy just enqueued on the stream (its last use).
    fn mark_last_use(&mut self, b: usize) -> Result<(), String> {
        // SAFETY: the event is ours, created here on first use; the stream is ours.
        unsafe {
            let event = match self.read[b] {
                Some(event) => event,
                None => {
                    let mut event: sys::CUevent = std::ptr::null_mut();
                    check("cuEventCreate", sys::cuEventCreate(&mut event, 0))?;
                    self.read[b] = Some(event);
                    event
                }
            };
            check("cuEventRecord", sys::cuEventRecord(event, self.stream))
        }
    }

    /// Frees everything (after waiting for the copies still reading the buffers).
    pub fn release(&mut self) {
        // SAFETY: handles created by `create`/`upload`, each released once (then nulled).
        unsafe {
            if !self.stream.is_null() {
                sys::cuStreamSynchronize(self.stream);
                sys::cuStreamDestroy_v2(self.stream);
                self.stream = std::ptr::null_mut();
            }
            for buffer in &mut self.buffers {
                if !buffer.is_null() {
                    sys::cuMemFreeHost(*buffer as *mut std::ffi::c_void);
                    *buffer = std::ptr::null_mut();
                }
            }
            for event in self.read.iter_mut().filter_map(Option::take) {
                sys::cuEventDestroy_v2(event);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_upload_once_alternating_buffers() {
        assert_eq!(plan_upload(0, 8), vec![]);
        assert_eq!(plan_upload(5, 8), vec![UploadChunk { offset: 0, len: 5, buffer: 0 }]);
        assert_eq!(
            plan_upload(20, 8),
            vec![
                UploadChunk { offset: 0, len: 8, buffer: 0 },
                UploadChunk { offset: 8, len: 8, buffer: 1 },
                UploadChunk { offset: 16, len: 4, buffer: 0 },
            ]
        );
        let plan = plan_upload(100 << 20, UPLOAD_CHUNK);
        assert_eq!(plan.iter().map(|c| c.len).sum::<usize>(), 100 << 20);
        assert!(plan.windows(2).all(|w| w[0].offset + w[0].len == w[1].offset && w[0].buffer != w[1].buffer));
    }
}
