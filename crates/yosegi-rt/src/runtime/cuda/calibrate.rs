//! Measures the performance model's figures on this GPU (`runtime::model::machine`): small
//! kernels compiled once with NVRTC and timed with CUDA events (an empty kernel, a streaming
//! copy over device memory at full and at low occupancy, a copy through L2 past L1, a stencil
//! over an array that fits in L2, float, double, math-function and shared-memory loops), and
//! host copies timed on the host.
//! About a second, once per GPU model: the figures are kept in the kernel cache directory.
//!
//! Operation counts are the simulator's (`a * b + c` is two operations, though the GPU fuses
//! it), so that the rates divide the counts the model samples.

use std::ffi::{CString, c_void};
use std::time::Instant;

use cudarc::driver::sys;

use super::CudaDevice;
use super::driver::{self, Image, check};
use crate::runtime::model::Machine;

const SOURCE: &str = r#"
extern "C" __global__ void cal_empty() {}

extern "C" __global__ void cal_copy(const float4 *__restrict__ a, float4 *__restrict__ b, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        b[i] = a[i];
}

extern "C" __global__ void cal_l2(const float4 *a, float4 *b, unsigned long long n, int reps) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (int r = 0; r < reps; r++) {
        // Each pass starts the blocks at another part of the arrays: no multiprocessor finds in
        // its L1 what it read the pass before.
        unsigned long long shift = (unsigned long long)r * (n / reps);
        for (unsigned long long j = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; j < n; j += stride) {
            unsigned long long i = j + shift < n ? j + shift : j + shift - n;
            float4 v = a[i];
            v.x += 1.0f;
            b[i] = v;
        }
    }
}

// `cal_l2` asking for one sector of each line: lane t copies a float of line t, each pass
// another of the line's four sectors, so a warp access is 32 requests of a sector each.
extern "C" __global__ void cal_l2_sector(const float *a, float *b, unsigned long long lines, int reps) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (int r = 0; r < reps; r++) {
        unsigned long long shift = (unsigned long long)r * (lines / reps);
        unsigned long long sector = (unsigned long long)(r % 4) * 8;
        for (unsigned long long j = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; j < lines; j += stride) {
            unsigned long long line = j + shift < lines ? j + shift : j + shift - lines;
            b[line * 32 + sector] = a[line * 32 + sector] + 1.0f;
        }
    }
}

extern "C" __global__ void cal_stencil(const float *__restrict__ a, float *__restrict__ b, int n, int reps) {
    for (int r = 0; r < reps; r++)
        for (int i = 4 + blockIdx.x * blockDim.x + threadIdx.x; i < n - 4; i += gridDim.x * blockDim.x)
            b[i] += a[i - 4] + a[i - 3] + a[i - 2] + a[i - 1] + a[i] + a[i + 1] + a[i + 2] + a[i + 3] + a[i + 4];
}

extern "C" __global__ void cal_rows(const float *__restrict__ a, float *out, int m) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int j = 0; j < m; j++) acc += a[i * m + j];
    out[i] = acc;
}

extern "C" __global__ void cal_float(float *out, int iters) {
    float a = threadIdx.x, b = a + 1.0f, c = a + 2.0f, d = a + 3.0f;
    for (int i = 0; i < iters; i++) {
        a = a * 0.999f + 0.5f; b = b * 0.999f + 0.5f; c = c * 0.999f + 0.5f; d = d * 0.999f + 0.5f;
    }
    if (a + b + c + d == -1.0f) out[0] = a;
}

extern "C" __global__ void cal_double(double *out, int iters) {
    double a = threadIdx.x, b = a + 1.0, c = a + 2.0, d = a + 3.0;
    for (int i = 0; i < iters; i++) {
        a = a * 0.999 + 0.5; b = b * 0.999 + 0.5; c = c * 0.999 + 0.5; d = d * 0.999 + 0.5;
    }
    if (a + b + c + d == -1.0) out[0] = a;
}

extern "C" __global__ void cal_math(double *out, int iters) {
    double a = threadIdx.x * 1e-3, b = a + 0.1;
    for (int i = 0; i < iters; i++) {
        a = sqrt(a + 1.0); b = exp(b * 1e-3);
    }
    if (a + b == -1.0) out[0] = a;
}

// Two chains of `pow` (positive bases, non-integer exponents: the general path).
extern "C" __global__ void cal_pow(double *out, int iters) {
    double a = threadIdx.x * 1e-3 + 1.0, b = a + 0.5;
    for (int i = 0; i < iters; i++) {
        a = pow(a, 0.999) + 0.5; b = pow(b, 1.001) * 0.999 + 0.001;
    }
    if (a + b == -1.0) out[0] = a;
}

extern "C" __global__ void cal_shared(float *out, int iters) {
    __shared__ float s[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = i;
    __syncthreads();
    float acc = 0.0f;
    float acc2 = 0.0f;
    for (int i = 0; i < iters; i++) {
        acc += s[(threadIdx.x + i) & 1023];
        acc2 += s[(threadIdx.x + 2 * i) & 1023];
    }
    if (acc + acc2 == -1.0f) out[0] = acc;
}

extern "C" __global__ void cal_chain(unsigned *next, unsigned long long n, unsigned long long stride) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        next[i] = (unsigned)((i + stride) % n);
}

// Each warp follows its own chain of dependent loads through `next` (its lanes in step: one
// request a step), from its own place in the cycle: an access that nothing overlaps.
extern "C" __global__ void cal_chase(const unsigned *next, unsigned *out, unsigned long long n, int steps) {
    unsigned i = (unsigned)((unsigned long long)blockIdx.x * n / gridDim.x);
    for (int s = 0; s < steps; s++) i = next[i];
    if (threadIdx.x == 0) out[blockIdx.x] = i;
}
"#;

/// Threads per block of the timed kernels.
const THREADS: u32 = 256;
/// Bytes of each of the two arrays of the device-memory copy, and of the in-cache stencil.
const DRAM_COPY_BYTES: u64 = 256 << 20;
const CACHE_STENCIL_BYTES: u64 = 16 << 20;
const LOOP_ITERATIONS: i32 = 4096;
/// Elements of each row the serial-access kernel walks.
const ROW_LENGTH: i32 = 8192;
/// Elements (4 bytes each) of the chains the round trips are timed on, and the steps taken:
/// 16 KiB, which the L1 cache holds (two passes: the first pass's misses are 1/64 of the
/// steps); 16 MiB, which the L2 cache of the GPUs this targets holds; 512 MiB, which it does
/// not, over more lines than L2 holds, so that a pass finds none of the lines the pass
/// before left there.
const L1_CHAIN: (u64, i32) = (4 << 10, 8192);
const L2_CHAIN: (u64, i32) = (4 << 20, 4096);
const DRAM_CHAIN: (u64, i32) = (128 << 20, 8192);

struct Calibration {
    module: sys::CUmodule,
    start: sys::CUevent,
    stop: sys::CUevent,
    allocations: Vec<sys::CUdeviceptr>,
}

impl Drop for Calibration {
    fn drop(&mut self) {
        // SAFETY: handles made by `CudaDevice::measure_machine` on the current context.
        unsafe {
            for &p in &self.allocations {
                sys::cuMemFree_v2(p);
            }
            sys::cuEventDestroy_v2(self.start);
            sys::cuEventDestroy_v2(self.stop);
            sys::cuModuleUnload(self.module);
        }
    }
}

impl Calibration {
    fn function(&self, name: &str) -> Result<sys::CUfunction, String> {
        let name = CString::new(name).map_err(|_| "NUL in a kernel name".to_string())?;
        let mut function: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: a loaded module and a valid out-pointer.
        check("cuModuleGetFunction", unsafe { sys::cuModuleGetFunction(&mut function, self.module, name.as_ptr()) })?;
        Ok(function)
    }

    fn allocate(&mut self, bytes: u64) -> Result<sys::CUdeviceptr, String> {
        let mut p: sys::CUdeviceptr = 0;
        // SAFETY: a valid out-pointer on the current context.
        check("cuMemAlloc", unsafe { sys::cuMemAlloc_v2(&mut p, bytes as usize) })?;
        self.allocations.push(p);
        Ok(p)
    }

    /// Seconds per launch of `function` on `blocks` blocks, `launches` launches between two
    /// events (after one launch to warm up).
    fn time(&self, function: sys::CUfunction, blocks: u32, args: &mut [*mut c_void], launches: u32) -> Result<f64, String> {
        self.time_shaped(function, blocks, THREADS, args, launches)
    }

    /// [`Calibration::time`] with `threads` threads per block.
    fn time_shaped(&self, function: sys::CUfunction, blocks: u32, threads: u32, args: &mut [*mut c_void], launches: u32) -> Result<f64, String> {
        self.launch(function, blocks, threads, args)?;
        self.time_cold(function, blocks, threads, args, launches)
    }

    fn launch(&self, function: sys::CUfunction, blocks: u32, threads: u32, args: &mut [*mut c_void]) -> Result<(), String> {
        // SAFETY: `args` point at values of the kernel's parameter types.
        check("cuLaunchKernel", unsafe {
            sys::cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, 0, std::ptr::null_mut(), args.as_mut_ptr(), std::ptr::null_mut())
        })
    }

    /// Seconds per launch of `launches` launches between two events, with no launch before.
    fn time_cold(&self, function: sys::CUfunction, blocks: u32, threads: u32, args: &mut [*mut c_void], launches: u32) -> Result<f64, String> {
        let launch = |args: &mut [*mut c_void]| self.launch(function, blocks, threads, args);
        // SAFETY: events of the current context, recorded on the null stream.
        unsafe {
            check("cuEventRecord", sys::cuEventRecord(self.start, std::ptr::null_mut()))?;
            for _ in 0..launches {
                launch(args)?;
            }
            check("cuEventRecord", sys::cuEventRecord(self.stop, std::ptr::null_mut()))?;
            check("cuEventSynchronize", sys::cuEventSynchronize(self.stop))?;
            let mut ms = 0f32;
            check("cuEventElapsedTime", sys::cuEventElapsedTime_v2(&mut ms, self.start, self.stop))?;
            Ok(ms as f64 / 1e3 / launches as f64)
        }
    }

    /// What the first launch of `cal_first` (reading and writing `THREADS` floats at `p`) in
    /// a fresh load of `image` takes beyond its second launch, each on an idle device.
    fn first_launch_excess(&self, image: &[u8], mut p: sys::CUdeviceptr) -> Result<f64, String> {
        let mut fresh: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: a cubin or NUL-terminated PTX image; a valid out-pointer.
        check("cuModuleLoadData", unsafe { sys::cuModuleLoadData(&mut fresh, image.as_ptr() as *const c_void) })?;
        let mut function: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: the module just loaded; a NUL-terminated name and a valid out-pointer.
        let timed = check("cuModuleGetFunction", unsafe { sys::cuModuleGetFunction(&mut function, fresh, c"cal_first".as_ptr()) }).and_then(|()| {
            let first = self.time_idle(function, 1, THREADS, &mut [&mut p as *mut _ as *mut c_void])?;
            let second = self.time_idle(function, 1, THREADS, &mut [&mut p as *mut _ as *mut c_void])?;
            Ok(first - second)
        });
        // SAFETY: the module loaded above; its launches have finished (the timing waited).
        unsafe { sys::cuModuleUnload(fresh) };
        timed
    }

    /// The device time of one launch on an idle device (all work before it finished), as a
    /// program's launch after its host code ran.
    fn time_idle(&self, function: sys::CUfunction, blocks: u32, threads: u32, args: &mut [*mut c_void]) -> Result<f64, String> {
        // SAFETY: the current context.
        check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })?;
        self.time_cold(function, blocks, threads, args, 1)
    }

    /// The median device time of `repeats` launches of `function` (no params, one block) each
    /// after the host waited for the device.
    fn idle_launch_time(&self, function: sys::CUfunction, repeats: u32) -> Result<f64, String> {
        let mut times = Vec::with_capacity(repeats as usize);
        for _ in 0..repeats {
            times.push(self.time_idle(function, 1, 1, &mut [])?);
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }

    /// The median device time of `launches` launches of `function` (no params, one block)
    /// enqueued behind a kernel that keeps the device busy while the host enqueues them, each
    /// between its own two events as the runtime times launches.
    fn queued_launch_time(&mut self, function: sys::CUfunction, launches: u32) -> Result<f64, String> {
        // A kernel of about 200 us: one block spinning on the float loop.
        let spin = self.function("cal_float")?;
        let out = self.allocate(4)?;
        let events: Vec<sys::CUevent> = (0..2 * launches)
            .map(|_| {
                let mut e: sys::CUevent = std::ptr::null_mut();
                // SAFETY: a valid out-pointer on the current context.
                check("cuEventCreate", unsafe { sys::cuEventCreate(&mut e, 0) }).map(|()| e)
            })
            .collect::<Result<_, _>>()?;
        let timed = (|| -> Result<f64, String> {
            check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })?;
            let (mut p, mut iters) = (out, 200_000i32);
            self.launch(spin, 1, 32, &mut [&mut p as *mut _ as *mut c_void, &mut iters as *mut _ as *mut c_void])?;
            for pair in events.chunks(2) {
                // SAFETY: events of the current context, recorded on the null stream.
                unsafe {
                    check("cuEventRecord", sys::cuEventRecord(pair[0], std::ptr::null_mut()))?;
                    self.launch(function, 1, 1, &mut [])?;
                    check("cuEventRecord", sys::cuEventRecord(pair[1], std::ptr::null_mut()))?;
                }
            }
            check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })?;
            let mut times = Vec::with_capacity(launches as usize);
            for pair in events.chunks(2) {
                let mut ms = 0f32;
                // SAFETY: both events recorded above and complete.
                check("cuEventElapsedTime", unsafe { sys::cuEventElapsedTime_v2(&mut ms, pair[0], pair[1]) })?;
                times.push(ms as f64 / 1e3);
            }
            times.sort_by(f64::total_cmp);
            Ok(times[times.len() / 2])
        })();
        for e in events {
            // SAFETY: created above; nothing waits on them any more.
            unsafe { sys::cuEventDestroy_v2(e) };
        }
        timed
    }

}

/// A rate that costs nothing next to the others (JSON has no infinity).
const UNBOUNDED_RATE: f64 = 1e18;

/// L2 requests and bytes per second from two copies of `requests` line requests each: one of
/// whole lines (four sectors a request) taking `whole_lines_s`, one of a sector a line taking
/// `sector_s`. A request costs `r` and a sector `s`: `whole_lines_s = requests (r + 4 s)` and
/// `sector_s = requests (r + s)`. Timings that leave one of the two at nothing or less give all
/// the time to the other.
fn l2_split(requests: f64, whole_lines_s: f64, sector_s: f64) -> (f64, f64) {
    let per_sector = (whole_lines_s - sector_s) / (3.0 * requests);
    let per_request = sector_s / requests - per_sector;
    if per_sector <= 0.0 {
        // Sectors cost nothing beyond their request.
        (requests / whole_lines_s.max(1e-12), UNBOUNDED_RATE)
    } else if per_request <= 0.0 {
        (UNBOUNDED_RATE, 32.0 * 4.0 * requests / whole_lines_s.max(1e-12))
    } else {
        (1.0 / per_request, 32.0 / per_sector)
    }
}

fn attribute(device: sys::CUdevice, attribute: sys::CUdevice_attribute) -> Result<i64, String> {
    let mut value = 0;
    // SAFETY: a valid device handle and out-pointer.
    check("cuDeviceGetAttribute", unsafe { sys::cuDeviceGetAttribute(&mut value, attribute, device) })?;
    Ok(value as i64)
}

impl CudaDevice {
    /// Measures this GPU's figures for the performance model (see the module doc).
    pub(super) fn measure_machine(&mut self) -> Result<Machine, String> {
        use sys::CUdevice_attribute as A;
        self.make_current()?;
        self.wait_in_flight();
        let d = self.cu_device;
        let sms = attribute(d, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?.max(1) as u32;
        let image = driver::nvrtc_compile(SOURCE, "yosegi_calibrate.cu", self.arch)
            .map_err(|f| format!("NVRTC could not compile the calibration kernels:\n{}", f.log))?;
        let bytes = match &image {
            Image::Cubin(b) | Image::Ptx(b) => b,
        };
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: a cubin or NUL-terminated PTX image; a valid out-pointer.
        check("cuModuleLoadData", unsafe { sys::cuModuleLoadData(&mut module, bytes.as_ptr() as *const c_void) })?;
        let (mut start, mut stop): (sys::CUevent, sys::CUevent) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: valid out-pointers on the current context.
        unsafe {
            check("cuEventCreate", sys::cuEventCreate(&mut start, 0))?;
            check("cuEventCreate", sys::cuEventCreate(&mut stop, 0))?;
        }
        let mut cal = Calibration { module, start, stop, allocations: Vec::new() };

        // The first launch of a kernel costs the driver host time the device waits for (it
        // does with eager module loading too, bench/NOTES.md run 26). The runtime loads a
        // module per kernel, each with code of its own, so the first launch is timed on five
        // modules of distinct code, compiled here, against each one's second launch, and the
        // median kept. (Loading the same image again costs the driver almost nothing, run 21;
        // a kernel touching no memory paid 5 us less than one that does, run 26.)
        let empty = cal.function("cal_empty")?;
        let touched = cal.allocate(THREADS as u64 * 4)?;
        let mut firsts = Vec::new();
        for k in 0..5 {
            let source = format!("extern \"C\" __global__ void cal_first(float *p) {{ p[threadIdx.x] = p[threadIdx.x] * 0.5f + {}.0f; }}\n", 7919 * (k + 1));
            let fresh = driver::nvrtc_compile(&source, "yosegi_first_launch.cu", self.arch)
                .map_err(|f| format!("NVRTC could not compile a first-launch kernel:\n{}", f.log))?;
            let fresh_bytes = match &fresh {
                Image::Cubin(b) | Image::Ptx(b) => b,
            };
            firsts.push(cal.first_launch_excess(fresh_bytes, touched)?);
        }
        firsts.sort_by(f64::total_cmp);
        // The steady launch the model charges every launch, and what one from idle costs more
        // (bench/NOTES.md run 34: calibrated as one launch timed after another, some 6 us, it
        // was an idle launch's cost, and the first idle extras observed against it were 0.2 us).
        let launch_s = cal.queued_launch_time(empty, 21)?;
        let idle_launch_s = (cal.idle_launch_time(empty, 21)? - launch_s).max(0.0);
        let first_launch_s = firsts[firsts.len() / 2].max(0.0);

        // Streaming copies: bytes read plus written per launch.
        let copy = cal.function("cal_copy")?;
        // Bytes read plus written per second by copies over two arrays of device memory.
        let (mut a, mut b, mut n) = (cal.allocate(DRAM_COPY_BYTES)?, cal.allocate(DRAM_COPY_BYTES)?, DRAM_COPY_BYTES / 16);
        let mut copy_rate = |cal: &Calibration, blocks: u32, threads: u32, launches: u32| -> Result<f64, String> {
            let mut args = [&mut a as *mut _ as *mut c_void, &mut b as *mut _ as *mut c_void, &mut n as *mut _ as *mut c_void];
            Ok(2.0 * DRAM_COPY_BYTES as f64 / cal.time_shaped(copy, blocks, threads, &mut args, launches)?)
        };
        let full_blocks = sms * (2048 / THREADS);
        let dram_bytes_per_s = copy_rate(&cal, full_blocks, THREADS, 5)?;
        // One block of 1024 threads on each of an eighth of the multiprocessors: what one
        // busy multiprocessor draws, in multiprocessors' shares.
        let few = (sms / 8).max(1);
        let multiprocessor_bandwidth_share = (copy_rate(&cal, few, 1024, 3)? / dram_bytes_per_s * sms as f64 / few as f64).clamp(1.0, 8.0);
        // A copy over two arrays that together fill a quarter of L2, repeated inside the launch
        // (so that the launch's own cost does not count) with each pass's data on other
        // multiprocessors than the pass before: every read misses L1 and finds L2, and every
        // store goes through to it.
        // The same copy asking for one sector of each line splits a request's cost from its
        // sectors' (`l2_split`).
        let (l2_requests_per_s, l2_bytes_per_s) = {
            let l2 = attribute(d, A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64;
            let bytes = (l2 / 8).clamp(1 << 20, 16 << 20) / 128 * 128;
            let (mut a, mut b, mut n, mut reps) = (cal.allocate(bytes)?, cal.allocate(bytes)?, bytes / 16, 16i32);
            let mut args = [
                &mut a as *mut _ as *mut c_void,
                &mut b as *mut _ as *mut c_void,
                &mut n as *mut _ as *mut c_void,
                &mut reps as *mut _ as *mut c_void,
            ];
            let whole_lines_s = cal.time(cal.function("cal_l2")?, full_blocks, &mut args, 3)?;
            let mut lines = bytes / 128;
            args[2] = &mut lines as *mut _ as *mut c_void;
            let sector_s = cal.time(cal.function("cal_l2_sector")?, full_blocks, &mut args, 3)?;
            // Every pass asks for each line once for reading and once for writing.
            let requests = 2.0 * lines as f64 * reps as f64;
            l2_split(requests, whole_lines_s, sector_s)
        };
        // Sectors a nine-point stencil over an array that fits in L2 touches, as the
        // simulator counts them: per warp, four for the aligned load and five for each of the
        // eight shifted ones, four to load `b[i]` and four to store it.
        let cache_bytes_per_s = {
            let n = (CACHE_STENCIL_BYTES / 4) as i32;
            let mut a = cal.allocate(CACHE_STENCIL_BYTES)?;
            let mut b = cal.allocate(CACHE_STENCIL_BYTES)?;
            let (mut n_arg, mut reps) = (n, 16i32);
            let mut args = [
                &mut a as *mut _ as *mut c_void,
                &mut b as *mut _ as *mut c_void,
                &mut n_arg as *mut _ as *mut c_void,
                &mut reps as *mut _ as *mut c_void,
            ];
            let t = cal.time(cal.function("cal_stencil")?, full_blocks, &mut args, 3)?;
            let sectors_per_warp = 4.0 + 8.0 * 5.0 + 4.0 + 4.0;
            (n as f64 / 32.0) * sectors_per_warp * 32.0 * reps as f64 / t
        };
        // One warp per multiprocessor, each thread walking a row of a matrix larger than L2:
        // the time of one access when no other warp hides its latency.
        let serial_access_s = {
            let rows = (sms * 32) as u64;
            let mut m = ROW_LENGTH;
            let mut a = cal.allocate(rows * m as u64 * 4)?;
            let mut out = cal.allocate(rows * 4)?;
            let mut args = [&mut a as *mut _ as *mut c_void, &mut out as *mut _ as *mut c_void, &mut m as *mut _ as *mut c_void];
            let f = cal.function("cal_rows")?;
            cal.time_shaped(f, sms, 32, &mut args, 3)? / m as f64
        };

        // A load's round trip when nothing overlaps it, one warp per multiprocessor chasing a
        // chain: through an array that fits in L1, one that fits in L2, one that fits in neither.
        let round_trip = |cal: &mut Calibration, (elements, steps): (u64, i32)| -> Result<f64, String> {
            let mut next = cal.allocate(elements * 4)?;
            let mut out = cal.allocate(sms as u64 * 4)?;
            // An odd stride (a full cycle) of a little more than a quarter of the array.
            let (mut n, mut stride) = (elements, elements / 4 + 32 * 101 + 1);
            let mut chain_args = [&mut next as *mut _ as *mut c_void, &mut n as *mut _ as *mut c_void, &mut stride as *mut _ as *mut c_void];
            cal.launch(cal.function("cal_chain")?, full_blocks, THREADS, &mut chain_args)?;
            let mut steps = steps;
            let mut args = [
                &mut next as *mut _ as *mut c_void,
                &mut out as *mut _ as *mut c_void,
                &mut n as *mut _ as *mut c_void,
                &mut steps as *mut _ as *mut c_void,
            ];
            Ok(cal.time_shaped(cal.function("cal_chase")?, sms, 32, &mut args, 3)? / steps as f64)
        };
        let l1_round_trip_s = round_trip(&mut cal, L1_CHAIN)?;
        let l2_round_trip_s = round_trip(&mut cal, L2_CHAIN)?;
        let dram_round_trip_s = round_trip(&mut cal, DRAM_CHAIN)?;

        // Arithmetic and shared memory, at full occupancy.
        let mut out = cal.allocate(64)?;
        let mut iters = LOOP_ITERATIONS;
        let threads = (full_blocks * THREADS) as f64;
        let mut rate = |cal: &Calibration, name: &str, per_thread: f64| -> Result<f64, String> {
            let f = cal.function(name)?;
            let mut args = [&mut out as *mut _ as *mut c_void, &mut iters as *mut _ as *mut c_void];
            let t = cal.time(f, full_blocks, &mut args, 3)?;
            Ok(threads * per_thread / t)
        };
        let iterations = LOOP_ITERATIONS as f64;
        // Four chains of a multiply and an add per iteration.
        let float_ops_per_s = rate(&cal, "cal_float", 8.0 * iterations)?;
        let double_ops_per_s = rate(&cal, "cal_double", 8.0 * iterations)?;
        let math_calls_per_s = rate(&cal, "cal_math", 2.0 * iterations)?;
        let pow_calls_per_s = rate(&cal, "cal_pow", 2.0 * iterations)?;
        // Two requests per iteration per warp: per thread, 2/32 of a request.
        let shared_requests_per_s = rate(&cal, "cal_shared", 2.0 * iterations / 32.0)?;
        // The same loop on one warp per multiprocessor: a thread's time per request.
        let serial_shared_s = {
            let f = cal.function("cal_shared")?;
            let mut args = [&mut out as *mut _ as *mut c_void, &mut iters as *mut _ as *mut c_void];
            cal.time_shaped(f, sms, 32, &mut args, 3)? / (2.0 * iterations)
        };

        // Host copies: pageable memory, as the program's arrays are.
        let big = 64usize << 20;
        let dev = cal.allocate(big as u64)?;
        let mut host = vec![1u8; big];

        // The first launch to read data just copied from the host, against the launch after:
        // five fresh arrays, each copied in and copied twice by `cal_copy` (already loaded)
        // into `dev`, the median difference kept. Each launch on an idle device: timed right
        // behind the copy, the first pass cost 0.5 us more than the second on an H100, after
        // the copy finished 11-18 us (bench/NOTES.md run 26), and a program's launch follows
        // its host code.
        let upload_touch_s = {
            let mut touches = Vec::new();
            for _ in 0..5 {
                let mut fresh: sys::CUdeviceptr = 0;
                // SAFETY: a valid out-pointer on the current context.
                check("cuMemAlloc", unsafe { sys::cuMemAlloc_v2(&mut fresh, big) })?;
                // SAFETY: `host` and `fresh` hold `big` bytes each; `dev` too.
                let timed = check("cuMemcpyHtoD", unsafe { sys::cuMemcpyHtoD_v2(fresh, host.as_ptr() as *const c_void, big) }).and_then(|()| {
                    let (mut a, mut b, mut n) = (fresh, dev, (big / 16) as u64);
                    let mut args = [&mut a as *mut _ as *mut c_void, &mut b as *mut _ as *mut c_void, &mut n as *mut _ as *mut c_void];
                    let first = cal.time_idle(copy, full_blocks, THREADS, &mut args)?;
                    let second = cal.time_idle(copy, full_blocks, THREADS, &mut args)?;
                    Ok(first - second)
                });
                // SAFETY: allocated above; the timed launches have finished.
                unsafe { sys::cuMemFree_v2(fresh) };
                touches.push(timed?);
            }
            touches.sort_by(f64::total_cmp);
            touches[touches.len() / 2].max(0.0)
        };
        let timed = |f: &mut dyn FnMut() -> Result<(), String>, repeats: u32| -> Result<f64, String> {
            f()?;
            let started = Instant::now();
            for _ in 0..repeats {
                f()?;
            }
            Ok(started.elapsed().as_secs_f64() / repeats as f64)
        };
        // SAFETY: `host` and `dev` hold `big` bytes each.
        let to_device = timed(&mut || check("cuMemcpyHtoD", unsafe { sys::cuMemcpyHtoD_v2(dev, host.as_ptr() as *const c_void, big) }), 3)?;
        let to_host = timed(&mut || check("cuMemcpyDtoH", unsafe { sys::cuMemcpyDtoH_v2(host.as_mut_ptr() as *mut c_void, dev, big) }), 3)?;
        let small = 4096usize;
        let host_copy_s = timed(&mut || check("cuMemcpyHtoD", unsafe { sys::cuMemcpyHtoD_v2(dev, host.as_ptr() as *const c_void, small) }), 50)?;
        drop(cal);

        let nominal = Machine::nominal(&self.model);
        Ok(Machine {
            name: self.model.clone(),
            measured: true,
            multiprocessors: sms,
            max_threads_per_multiprocessor: attribute(d, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)? as u32,
            max_blocks_per_multiprocessor: attribute(d, A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)? as u32,
            shared_bytes_per_multiprocessor: attribute(d, A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)? as u64,
            registers_per_multiprocessor: attribute(d, A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)? as u32,
            l2_bytes: attribute(d, A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
            launch_s,
            idle_launch_s,
            first_launch_s,
            upload_touch_s,
            // Observed in programs later (`model::observed`).
            first_launch_observed_s: None,
            launch_observed_s: None,
            idle_launch_observed_s: None,
            serial_access_s,
            serial_shared_s,
            l1_round_trip_s,
            l2_round_trip_s,
            dram_round_trip_s,
            multiprocessor_bandwidth_share,
            dram_bytes_per_s,
            cache_bytes_per_s,
            l2_bytes_per_s,
            l2_requests_per_s,
            // Not measured: what programs' kernels found (`model::residency`).
            l2_resident_share: nominal.l2_resident_share,
            float_ops_per_s,
            double_ops_per_s,
            math_calls_per_s,
            pow_calls_per_s,
            shared_requests_per_s,
            host_to_device_bytes_per_s: big as f64 / to_device,
            device_to_host_bytes_per_s: big as f64 / to_host,
            host_copy_s,
            // Measured between devices when several are open (`peers`); until then nominal.
            peer_bytes_per_s: nominal.peer_bytes_per_s,
            peer_copy_s: nominal.peer_copy_s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_l2_copies_split_into_a_request_rate_and_a_sector_rate() {
        // 1e6 requests at 10 ps each, sectors at 2.5 ps: 20 us of whole lines, 12.5 us of sectors.
        let (requests_per_s, bytes_per_s) = l2_split(1e6, 20e-6, 12.5e-6);
        assert!((requests_per_s / 1e11 - 1.0).abs() < 1e-9, "{requests_per_s}");
        assert!((bytes_per_s / (32.0 / 2.5e-12) - 1.0).abs() < 1e-9, "{bytes_per_s}");
        // Sector copies no faster than whole lines: the requests take it all.
        let (requests_per_s, bytes_per_s) = l2_split(1e6, 20e-6, 21e-6);
        assert!((requests_per_s / 5e10 - 1.0).abs() < 1e-9 && bytes_per_s == UNBOUNDED_RATE);
        // Sector copies under a quarter of whole lines: the sectors take it all.
        let (requests_per_s, bytes_per_s) = l2_split(1e6, 20e-6, 4e-6);
        assert!(requests_per_s == UNBOUNDED_RATE && (bytes_per_s / (128.0 / 20e-12) - 1.0).abs() < 1e-9);
        // Finite figures, so that the machine file reads back.
        assert!(serde_json::to_string(&UNBOUNDED_RATE).unwrap().parse::<f64>().is_ok());
    }
}
