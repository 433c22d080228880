//! `cuda`: the GPU device. Grid kernels are written as CUDA C (`back::cuda`), compiled with
//! NVRTC for the GPU's own architecture on their first launch, and run through the driver API;
//! memory is plain device memory (`cuMemAlloc`).
//!
//! Launches run while the host goes on (`flight`): a launch that hands nothing back is only
//! enqueued, and the host waits for the device when it copies data back, for a timed launch and
//! at exit; events recorded around each launch give `--stats` its device times once the host
//! has waited. Reductions are finished on the GPU by a one-block fold kernel (`fold`), so a
//! launch with reductions reads back one value per reduction.
//!
//! Everything CUDA is loaded at run time (`cudarc` with dynamic loading), so the project builds
//! and its tests run on machines without CUDA; [`CudaDevice::probe`] says why there is no GPU
//! to use instead of failing later.
//!
//! Several devices ([`CudaDevice::probe_all`]): one per GPU, or more devices than GPUs, which
//! then share them as logical devices; copies between devices and peer access are `peers`.
//!
//! Kernels are cached: in memory per variant for the life of the device, and on disk across
//! runs (`cache`: keyed by the source, the architecture and the NVRTC version). A launch uses a
//! variant specialised on its iteration-space params (`back::cuda::CudaOptions`), with 32-bit
//! indexing when its arrays and threads fit in `int`; each kernel gets at most
//! [`MAX_VARIANTS`] specialised variants, and launches beyond them use the generic kernel.
//! `YOSEGI_CUDA_VARIANTS=generic` turns specialisation off (to compare the two).
//!
//! Failures: a compile error, a launch error or a fault while the kernel runs is a
//! [`KernelFault`] naming the kernel (with the NVRTC log, and the path of the saved source).
//! The memory operations of the [`Device`] trait cannot return an error; when one fails (the
//! GPU is out of memory) the device prints what failed and ends the process with status 1
//! rather than let the program go on with wrong data. A failure while launches were in flight
//! is theirs: it is kept as their fault ([`Device::take_fault`]) for the runtime to report.

pub(crate) mod cache;
pub mod embedded;
pub mod jit;
/// The cache folder and the hash its entries are named by (the compiler driver keeps the
/// runtime library it carries there).
pub use cache::{fnv1a64, trusted_dir};
mod calibrate;
pub(crate) mod driver;
mod enqueue;
mod flight;
mod fold;
mod gate;
mod landing;
pub mod peers;
mod upload;

use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cudarc::driver::sys;

use crate::analysis::uniform::eval_uniform;
use crate::back::cuda::{
    CudaOptions, IndexWidth, ParamAliasing, grid_kernel_cuda_with, kernel_symbol,
};
use crate::ir::{GridKernel, GridReduction, ParamKind, ParamValue, ReductionOp, ScalarType};
use crate::runtime::device::{
    CompletedLaunch, Device, DeviceAlloc, DeviceCount, DeviceDescription, DeviceParam, KernelFault, Launch, LaunchOutcome,
    PeerMemory, StartedLaunch,
};
use crate::runtime::launch_shape;
use crate::runtime::stats::DeviceCounters;
use crate::ir::value;

use enqueue::{PendingResults, ResultsWhen, traced_time};

use cache::{DiskCache, ImageKind};
use jit::{JitPool, JobKey, Made};
use driver::{Image, check};
use flight::{EventPool, InFlight, InFlightLaunches, MAX_IN_FLIGHT};
use gate::{Gate, SPECIALISE_AFTER_THREADS, SpecialisationGate};
use peers::PeerLink;
use upload::{STAGED_UPLOAD_MIN, UploadPath, PinnedStaging};

/// Specialised variants compiled per kernel; launches with further value sets use the generic
/// kernel (a param that changes at every launch must not cost a compilation each time).
pub const MAX_VARIANTS: usize = 8;

/// Bytes of freed allocations [`CudaDevice::pool`] keeps at most.
const POOL_LIMIT: u64 = 16 << 30;

/// Scratch buffers (reduction partials, scalar outputs) kept for reuse between launches.
const MAX_SPARE_BUFFERS: usize = 8;

/// Grid limits of every GPU CUDA 13 supports.
const MAX_GRID: [i64; 3] = [(1 << 31) - 1, 65535, 65535];
const MAX_BLOCK_THREADS: u64 = 1024;

struct Buffer {
    ptr: sys::CUdeviceptr,
    bytes: u64,
}

/// Which compiled form of a kernel a launch uses: the symbol, the values written as constants
/// (empty for none) and the index width. The generic kernel is no constants at 64 bits.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct VariantKey {
    symbol: String,
    constants: Vec<i64>,
    width: IndexWidth,
    aliasing: ParamAliasing,
}

impl VariantKey {
    fn generic(symbol: String) -> VariantKey {
        VariantKey { symbol, constants: Vec::new(), width: IndexWidth::Bits64, aliasing: ParamAliasing::Unknown }
    }
    fn is_generic(&self) -> bool {
        self.constants.is_empty() && self.width == IndexWidth::Bits64 && self.aliasing == ParamAliasing::Unknown
    }
    /// The form of this variant's kernel made before its values are known (`jit::ahead_variants`)
    /// that runs its launch: the same width and aliasing without constants where that form is
    /// made ahead, else the generic kernel, which runs any launch.
    fn prepared(&self, ahead: &[(IndexWidth, ParamAliasing)]) -> VariantKey {
        if ahead.contains(&(self.width, self.aliasing)) {
            VariantKey { symbol: self.symbol.clone(), constants: Vec::new(), width: self.width, aliasing: self.aliasing }
        } else {
            VariantKey::generic(self.symbol.clone())
        }
    }
}

/// Whether launches get specialised variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum VariantPolicy {
    Specialise,
    /// The forms made ahead only (width and aliasing, no values as constants): what an
    /// executable carrying images runs, with no compiler at run time.
    Prepared,
    GenericOnly,
}

/// When the host waits for a launch. Launches that hand nothing back (no reduction, no scalar
/// output) are only enqueued: the host waits when it needs device data, for a timed launch,
/// and at exit. `YOSEGI_SYNC_LAUNCHES=1` waits for every launch, so that a fault names the
/// very kernel that caused it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LaunchSync {
    Deferred,
    EachLaunch,
}

/// Whether a call of `launch` put a kernel on the stream (an empty grid does not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Enqueued {
    Nothing,
    Kernel,
}

/// Where a launch's kernel came from (counted in `--stats`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KernelSource {
    Memory,
    /// The disk cache, read by the launch or by a worker.
    Disk,
    /// NVRTC while the launch waited.
    Compiled,
    /// NVRTC on a worker thread, finished before the launch needed it, in `took_ns`.
    Worker { took_ns: u64 },
    /// The executable's own cubin.
    Embedded,
    /// The executable's PTX, compiled by the driver as it loaded.
    PtxJit,
}

struct CompiledKernel {
    /// The IR it was compiled from and the module that held it: a launch of an equal kernel
    /// of the same module reuses it without writing the source again.
    ir: GridKernel,
    module_addr: usize,
    /// Where that IR lived in the module: a launch of the very same kernel (the common case,
    /// every step of a time loop) is recognised without comparing the IR, which costs
    /// microseconds per launch on large kernels.
    kernel_addr: usize,
    source: String,
    module: sys::CUmodule,
    function: sys::CUfunction,
    saved_at: Option<Arc<Path>>,
}

pub struct CudaDevice {
    /// `cuda:<index> (<model>)`, or for a device sharing its GPU with others
    /// `cuda:<index> (logical device on GPU <ordinal>: <model>)`.
    label: String,
    /// The GPU's name, architecture and driver (`NVIDIA H100 ..., sm_90, driver for CUDA
    /// 13.0`): what identifies the hardware in the tuning cache, the same for every device on
    /// GPUs of one model.
    model: String,
    /// The GPU's name and the driver's CUDA version (`acc_get_property_string`).
    gpu_name: String,
    driver_version: i32,
    /// The physical GPU: its ordinal and driver handle.
    ordinal: i32,
    cu_device: sys::CUdevice,
    /// The GPU's primary context, shared by every device on the GPU.
    context: sys::CUcontext,
    /// Per other GPU among the devices opened together (`peers::enable_peer_access`), by
    /// ordinal: whether this context may access its memory directly.
    peers: Vec<(i32, PeerLink)>,
    /// Compute capability as `major * 10 + minor` (90 for an H100).
    arch: u32,
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK`: static shared memory per block.
    shared_per_block: u64,
    /// What small grids are spread over (`runtime::launch_shape`): the GPU's multiprocessors,
    /// or `YOSEGI_MULTIPROCESSORS`.
    multiprocessors: u32,
    buffers: HashMap<u64, Buffer>,
    next_id: u64,
    /// `(major, minor)`, part of the disk cache key.
    nvrtc_version: (i32, i32),
    /// By variant; a kernel whose source changed is compiled again.
    kernels: HashMap<VariantKey, CompiledKernel>,
    disk: Arc<Mutex<DiskCache>>,
    /// The worker threads that compile kernels (`jit`); `None` without NVRTC (an executable
    /// that carries its images runs without it).
    jit: Option<Arc<JitPool>>,
    /// Specialised variants a worker is making, by the job that makes each: their launches
    /// run the prepared form meanwhile.
    requested: HashMap<VariantKey, JobKey>,
    /// Specialised variants held back until their launches have done enough work (`gate`).
    gate: SpecialisationGate<VariantKey>,
    policy: VariantPolicy,
    /// Scratch buffers of finished launches, for the next ones.
    spare: Vec<Buffer>,
    /// Freed allocations kept for the next allocation of the same size (a solver's `data
    /// create` of a stack array on every call): `cuMemAlloc` of a large block maps pages and
    /// `cuMemFree` waits for the device, both per call. Given back when an allocation fails
    /// and when more than [`POOL_LIMIT`] bytes wait.
    pool: Vec<Buffer>,
    staging: Staging,
    sync: LaunchSync,
    /// Events recorded around launches, reused once their launch is resolved.
    events: EventPool<sys::CUevent>,
    /// Launches enqueued since the host last waited for the device.
    in_flight: InFlightLaunches<sys::CUevent>,
    /// Launches known finished, with their device times, until the runtime takes them.
    completed: Vec<CompletedLaunch>,
    /// A fault found after its launch returned, until the runtime takes it. While one is
    /// held the context is broken: memory operations do nothing and launches return it.
    fault: Option<KernelFault>,
    /// Fold kernels (see `fold`) by symbol, loaded on first use.
    folds: HashMap<String, LoadedFold>,
    upload_path: UploadPath,
    /// Pinned buffers and the copy stream of large uploads (`upload`), made on first use.
    pinned: Option<PinnedStaging>,
    /// Results of launches started with `start_launch`, by token, until `finish_launch`.
    pending: HashMap<u64, PendingResults>,
    next_pending: u64,
    /// Copies from other GPUs between `defer_copies` and `join_copies` (`peers`).
    exchange: peers::Exchange,
    /// Pinned buffers for launch results read after later launches started (`landing`).
    landings: landing::Landings,
    /// With `YOSEGI_TRACE`: an event recorded and waited for at the first launch, and when
    /// that was on the trace's clock (`runtime::trace`).
    trace_reference: Option<(sys::CUevent, f64)>,
    /// The program's sources, for `#line` directives in the kernels' CUDA (`set_sources`).
    sources: Option<Arc<crate::source::SourceSet>>,
}

/// A loaded fold kernel.
struct LoadedFold {
    module: sys::CUmodule,
    function: sys::CUfunction,
}

// SAFETY: CUDA handles may be used from any thread; every method makes the device's context
// current on the calling thread before it uses them, and `&mut self` serialises the calls.
unsafe impl Send for CudaDevice {}

impl CudaDevice {
    /// Opens GPU 0 as `cuda:0` (the one device of `probe_all(DeviceCount::Exactly(1))`): loads
    /// the driver and NVRTC, retains the context. `Err` says why there is no usable GPU (no
    /// driver, no device, no NVRTC).
    pub fn probe() -> Result<CudaDevice, String> {
        CudaDevice::probe_all(DeviceCount::Exactly(1))?
            .into_iter()
            .next()
            .ok_or_else(|| "no CUDA GPU: no device was opened".to_string())
    }

    /// Opens `requested` devices (see [`peers::physical_ordinals`]): one per GPU, or as many
    /// as asked for, device `i` on GPU `i % gpus`; devices sharing a GPU are labelled logical.
    /// Then enables peer access between the GPUs where the hardware allows it.
    pub fn probe_all(requested: DeviceCount) -> Result<Vec<CudaDevice>, String> {
        let gpus = CudaDevice::gpu_count()?;
        let ordinals = peers::physical_ordinals(requested, gpus);
        if ordinals.is_empty() {
            return Err("no CUDA device was requested (a count of 0)".to_string());
        }
        let mut devices = Vec::with_capacity(ordinals.len());
        for (i, &ordinal) in ordinals.iter().enumerate() {
            let ordinal = i32::try_from(ordinal).map_err(|_| format!("no CUDA GPU {ordinal}"))?;
            let mut device = CudaDevice::open(ordinal, i)?;
            if peers::shares_gpu(&ordinals, i) {
                device.label = format!("cuda:{i} (logical device on GPU {ordinal}: {})", device.model);
            }
            devices.push(device);
        }
        peers::enable_peer_access(&mut devices);
        Ok(devices)
    }

    /// The number of GPUs the driver reports (at least one), after checking that the driver
    /// can be loaded (NVRTC is checked as a device opens: an executable carrying its images
    /// runs without it).
    pub fn gpu_count() -> Result<usize, String> {
        driver::check_driver_library()?;
        let mut count = 0;
        // SAFETY: the libraries and every symbol used were checked above; valid out-pointer.
        unsafe {
            check("cuInit", sys::cuInit(0))?;
            check("cuDeviceGetCount", sys::cuDeviceGetCount(&mut count))?;
        }
        if count <= 0 {
            return Err("no CUDA GPU: the driver reports no devices".to_string());
        }
        Ok(count as usize)
    }

    /// Opens physical GPU `ordinal` as device `cuda:<label_index>`: retains its primary context
    /// (the one every device on that GPU shares) and makes it current. Peer access is
    /// [`CudaDevice::probe_all`]'s.
    pub fn open(ordinal: i32, label_index: usize) -> Result<CudaDevice, String> {
        let gpus = CudaDevice::gpu_count()?;
        if ordinal < 0 || ordinal as usize >= gpus {
            return Err(format!("no CUDA GPU {ordinal}: the driver reports {gpus}"));
        }
        // SAFETY (this block): the libraries and every symbol used were checked by `gpu_count`;
        // the out-pointers are valid locals.
        unsafe {
            let mut version = 0;
            check("cuDriverGetVersion", sys::cuDriverGetVersion(&mut version))?;
            let mut device: sys::CUdevice = 0;
            check("cuDeviceGet", sys::cuDeviceGet(&mut device, ordinal))?;
            let mut name = [0 as std::ffi::c_char; 256];
            check("cuDeviceGetName", sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, device))?;
            let name = std::ffi::CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
            let (mut major, mut minor) = (0, 0);
            check(
                "cuDeviceGetAttribute",
                sys::cuDeviceGetAttribute(&mut major, sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
            )?;
            check(
                "cuDeviceGetAttribute",
                sys::cuDeviceGetAttribute(&mut minor, sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
            )?;
            let mut shared_per_block = 0;
            check(
                "cuDeviceGetAttribute",
                sys::cuDeviceGetAttribute(
                    &mut shared_per_block,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                    device,
                ),
            )?;
            let mut multiprocessors = 0;
            check(
                "cuDeviceGetAttribute",
                sys::cuDeviceGetAttribute(&mut multiprocessors, sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
            )?;
            let mut context: sys::CUcontext = std::ptr::null_mut();
            check("cuDevicePrimaryCtxRetain", sys::cuDevicePrimaryCtxRetain(&mut context, device))?;
            check("cuCtxSetCurrent", sys::cuCtxSetCurrent(context))?;
            let arch = (major * 10 + minor) as u32;
            // NVRTC is needed unless the executable carries images this GPU runs.
            let carried = embedded::serves(arch);
            let nvrtc_version = match driver::check_nvrtc_library() {
                Ok(()) => {
                    let (mut nvrtc_major, mut nvrtc_minor) = (0, 0);
                    driver::check_nvrtc("nvrtcVersion", cudarc::nvrtc::sys::nvrtcVersion(&mut nvrtc_major, &mut nvrtc_minor))?;
                    Some((nvrtc_major, nvrtc_minor))
                }
                Err(_) if carried => None,
                Err(e) => return Err(e),
            };
            let policy = match std::env::var("YOSEGI_CUDA_VARIANTS").as_deref() {
                Ok("generic") => VariantPolicy::GenericOnly,
                _ if carried => VariantPolicy::Prepared,
                _ => VariantPolicy::Specialise,
            };
            let disk = Arc::new(Mutex::new(DiskCache::at(cache::trusted_dir())));
            let jit = nvrtc_version.map(|v| JitPool::shared(arch, v, disk.clone()));
            let model = format!("{name}, sm_{major}{minor}, driver for CUDA {}.{}", version / 1000, (version % 1000) / 10);
            Ok(CudaDevice {
                label: format!("cuda:{label_index} ({model})"),
                model,
                gpu_name: name,
                driver_version: version,
                ordinal,
                cu_device: device,
                context,
                peers: Vec::new(),
                arch,
                shared_per_block: shared_per_block.max(0) as u64,
                multiprocessors: launch_shape::multiprocessors(multiprocessors.max(0) as u32),
                buffers: HashMap::new(),
                next_id: 0,
                nvrtc_version: nvrtc_version.unwrap_or((0, 0)),
                kernels: HashMap::new(),
                disk,
                jit,
                requested: HashMap::new(),
                gate: SpecialisationGate::new(SPECIALISE_AFTER_THREADS),
                policy,
                spare: Vec::new(),
                pool: Vec::new(),
                staging: Staging::NONE,
                sync: match std::env::var("YOSEGI_SYNC_LAUNCHES").as_deref() {
                    Ok("1") => LaunchSync::EachLaunch,
                    _ => LaunchSync::Deferred,
                },
                events: EventPool::new(),
                in_flight: InFlightLaunches::new(),
                completed: Vec::new(),
                fault: None,
                folds: HashMap::new(),
                upload_path: UploadPath::from_env(),
                pinned: None,
                pending: HashMap::new(),
                next_pending: 0,
                exchange: peers::Exchange::default(),
                landings: landing::Landings::default(),
                trace_reference: None,
                sources: None,
            })
        }
    }

    /// A description of the device (`cuda:0 (NVIDIA H100 ..., sm_90, ...)`).
    pub fn label(&self) -> &str {
        &self.label
    }

    fn make_current(&self) -> Result<(), String> {
        // SAFETY: the context was retained in `open` and is never released while we live.
        check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(self.context) })
    }

    /// A memory operation failed: the `Device` trait has no error path for it, and going on
    /// would compute with wrong data.
    fn fatal(&self, what: String) -> ! {
        eprintln!("yosegi: error: the cuda device failed: {what}");
        eprintln!("  = help: run with --device sim to check the program on the simulator");
        crate::runtime::ranks::end_job_on_error(1);
        std::process::exit(1)
    }

    /// A memory operation failed. With launches in flight the failure is most likely theirs (a
    /// fault breaks the context, and every later call fails): the fault is kept, naming the
    /// kernel, for the runtime to report. Otherwise the device cannot go on.
    fn memory_failure(&mut self, what: String) {
        self.wait_in_flight();
        if self.fault.is_none() {
            self.fatal(what)
        }
    }

    /// The launches in flight up to the one whose stop event is `stop` are known finished
    /// (all of them after a wait for the newest): their device times go to `completed`.
    fn complete_through(&mut self, stop: sys::CUevent) {
        self.trace_copies();
        let mut spans = Vec::new();
        let reference = self.trace_reference;
        let done = self.in_flight.complete_through(&mut self.events, &stop, |start, stop| traced_time(reference, &mut spans, start, stop));
        for (launch, &(start, end)) in done.iter().zip(&spans) {
            crate::runtime::trace::span(&self.label, &launch.kernel, start, end);
        }
        self.completed.extend(done);
    }

    /// With `YOSEGI_TRACE`: the reference event, recorded once (the context is current).
    fn trace_reference(&mut self) {
        if self.trace_reference.is_some() || !crate::runtime::trace::enabled() {
            return;
        }
        if let Ok(event) = CudaDevice::new_event() {
            // SAFETY: an event of the current context.
            unsafe {
                sys::cuEventRecord(event, std::ptr::null_mut());
                sys::cuEventSynchronize(event);
            }
            self.trace_reference = Some((event, crate::runtime::trace::micros(Instant::now())));
        }
    }

    /// Waits for the launches in flight: their device times go to `completed`, or the fault
    /// that stopped them to `fault`.
    fn wait_in_flight(&mut self) {
        let Some(&stop) = self.in_flight.last_stop() else { return };
        let waited = self.make_current().and_then(|_| {
            // SAFETY: an event recorded on this context after the newest launch.
            check("cuEventSynchronize", unsafe { sys::cuEventSynchronize(stop) })
        });
        match waited {
            Ok(()) => self.complete_through(stop),
            Err(e) => {
                if let Some(f) = self.in_flight.fail(&mut self.events, &e) {
                    self.fault.get_or_insert(f);
                }
            }
        }
    }

    /// The fold kernel for `op` at `ty`, compiled (or read from the disk cache) and loaded on
    /// first use.
    fn fold_function(
        &mut self,
        op: crate::ir::ReductionOp,
        ty: ScalarType,
    ) -> Result<(sys::CUfunction, KernelSource), String> {
        let symbol = fold::fold_symbol(op, ty);
        if let Some(loaded) = self.folds.get(&symbol) {
            return Ok((loaded.function, KernelSource::Memory));
        }
        let source = fold::fold_kernel_source(op, ty);
        let image_key = cache::image_key(&source, self.arch, self.nvrtc_version);
        let key = VariantKey::generic(symbol.clone());
        let (image, origin) = self
            .image_for(&key, &symbol, &source, image_key, true, (0, Gate::Open))
            .map_err(|log| format!("the reduction's fold kernel could not be made (a compiler bug):\n{log}"))?
            .ok_or_else(|| "the fold kernel was not made (a runtime bug)".to_string())?;
        let bytes = match &image {
            Image::Cubin(b) | Image::Ptx(b) => b,
        };
        let name = CString::new(symbol.clone()).map_err(|_| "the fold kernel's name contains a NUL byte".to_string())?;
        let mut module: sys::CUmodule = std::ptr::null_mut();
        let mut function: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: a cubin or NUL-terminated PTX image; valid out-pointers.
        unsafe {
            check("cuModuleLoadData", sys::cuModuleLoadData(&mut module, bytes.as_ptr() as *const c_void))?;
            if let Err(e) = check("cuModuleGetFunction", sys::cuModuleGetFunction(&mut function, module, name.as_ptr())) {
                sys::cuModuleUnload(module);
                return Err(e);
            }
        }
        self.folds.insert(symbol, LoadedFold { module, function });
        Ok((function, origin))
    }

    /// Enqueues the fold of `count` partials of type `ty` at `partials` into `out`.
    fn enqueue_fold(&mut self, function: sys::CUfunction, partials: sys::CUdeviceptr, count: u64, out: sys::CUdeviceptr) -> Result<(), String> {
        let mut slots: [u64; 3] = [partials, count, out];
        let mut args: Vec<*mut c_void> = slots.iter_mut().map(|s| s as *mut u64 as *mut c_void).collect();
        // SAFETY: the fold kernel's parameters are a pointer, an unsigned 64-bit count and a
        // pointer; `partials` holds `count` values and `out` one.
        check("cuLaunchKernel", unsafe {
            sys::cuLaunchKernel(
                function,
                1,
                1,
                1,
                fold::FOLD_THREADS,
                1,
                1,
                0,
                std::ptr::null_mut(),
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }

    fn new_event() -> Result<sys::CUevent, String> {
        let mut event: sys::CUevent = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the caller made the context current.
        check("cuEventCreate", unsafe { sys::cuEventCreate(&mut event, 0) })?;
        Ok(event)
    }

    fn buffer(&self, alloc: DeviceAlloc) -> &Buffer {
        match self.buffers.get(&alloc.0) {
            Some(b) => b,
            None => self.fatal(format!("device allocation {} is not live (a runtime bug)", alloc.0)),
        }
    }

    /// The variant of its kernel `launch` uses (see the module doc).
    fn variant_for(&self, launch: &Launch, fits: IndexWidth, aliasing: ParamAliasing) -> VariantKey {
        let kernel = launch.kernel;
        // A param bound to something other than an integer (a runtime bug) gets the generic
        // kernel rather than a variant whose key would not say which values it holds.
        let Some(constants) = specialised_constants(launch) else { return VariantKey::generic(kernel_symbol(kernel)) };
        let wanted = VariantKey { symbol: kernel_symbol(kernel), constants, width: fits, aliasing };
        if self.policy == VariantPolicy::Prepared {
            // Only the forms the executable carries.
            return wanted.prepared(&jit::ahead_variants(launch.module, kernel));
        }
        choose_variant(wanted, self.policy, self.kernels.keys().chain(self.requested.keys()))
    }

    /// The function a launch of `kernel` that wants variant `key` runs, where it came from,
    /// and the variant it is: `key`'s own when it is loaded, embedded, on disk or compiled,
    /// else (a specialised variant a worker is still making) the prepared form of the kernel
    /// (`VariantKey::prepared`), which computes the same.
    fn function(
        &mut self,
        module: &crate::ir::Module,
        kernel: &GridKernel,
        key: VariantKey,
        values: &[ParamValue],
        (work, gate): (u64, Gate),
    ) -> Result<(sys::CUfunction, KernelSource, VariantKey), KernelFault> {
        let module_addr = module as *const crate::ir::Module as usize;
        let kernel_addr = kernel as *const GridKernel as usize;
        if let Some(k) = self.kernels.get(&key)
            && k.module_addr == module_addr
            && ((k.kernel_addr == kernel_addr && k.ir.body.exprs.len() == kernel.body.exprs.len()) || k.ir == *kernel)
        {
            return Ok((k.function, KernelSource::Memory, key));
        }
        // Asked of a worker before: until it is there, the prepared form runs the launch.
        if let Some(job) = self.requested.get(&key) {
            match self.jit.as_ref().and_then(|j| j.poll(job)) {
                None => return self.prepared_function(module, kernel, &key, values),
                Some(_) => {
                    self.requested.remove(&key);
                }
            }
        }
        let options = CudaOptions {
            specialise: (!key.constants.is_empty()).then_some(values),
            index_width: key.width,
            aliasing: key.aliasing,
            sources: self.sources.as_deref(),
        };
        let source = grid_kernel_cuda_with(module, kernel, &options);
        if let Some(k) = self.kernels.get_mut(&key)
            && k.source == source
        {
            k.ir = kernel.clone();
            k.module_addr = module_addr;
            k.kernel_addr = kernel_addr;
            return Ok((k.function, KernelSource::Memory, key));
        }
        let symbol = key.symbol.clone();
        let fault = |message: String| KernelFault { kernel: kernel.name.clone(), message, span: kernel.span, help: None };
        let image_key = cache::image_key(&source, self.arch, self.nvrtc_version);
        let file_stem = if key.is_generic() { symbol.clone() } else { format!("{symbol}.{:08x}", image_key as u32) };
        let saved = save_source(&file_stem, &source);
        let saved_note = match &saved {
            Ok(path) => format!("the CUDA source is in {}", path.display()),
            Err(e) => format!("the CUDA source could not be saved: {e}"),
        };
        let compile_fault = |log: String| KernelFault {
            help: Some(format!("{saved_note}; this is a compiler bug: please report it with that file")),
            ..fault(log)
        };
        // A specialised variant not ready yet is made by a worker while the prepared form runs.
        let may_wait = key.constants.is_empty();
        let (image, origin) = match self.image_for(&key, &symbol, &source, image_key, may_wait, (work, gate)).map_err(compile_fault)? {
            Some(found) => found,
            None => return self.prepared_function(module, kernel, &key, values),
        };
        let bytes = match &image {
            Image::Cubin(b) | Image::Ptx(b) => b,
        };
        let name = CString::new(symbol.clone()).map_err(|_| fault("the kernel's name contains a NUL byte".into()))?;
        let mut cu_module: sys::CUmodule = std::ptr::null_mut();
        let mut function: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: `bytes` is a cubin or NUL-terminated PTX from NVRTC (or the disk cache, whose
        // entries are checksummed, or the executable's own images); the out-pointers are valid.
        unsafe {
            check("cuModuleLoadData", sys::cuModuleLoadData(&mut cu_module, bytes.as_ptr() as *const c_void))
                .map_err(|e| KernelFault { help: Some(saved_note.clone()), ..fault(e) })?;
            if let Err(e) = check("cuModuleGetFunction", sys::cuModuleGetFunction(&mut function, cu_module, name.as_ptr())) {
                sys::cuModuleUnload(cu_module);
                return Err(KernelFault { help: Some(saved_note), ..fault(e) });
            }
        }
        if let Some(old) = self.kernels.insert(
            key.clone(),
            CompiledKernel { ir: kernel.clone(), module_addr, kernel_addr, source, module: cu_module, function, saved_at: saved.ok().map(Arc::from) },
        ) {
            // SAFETY: the replaced module is no longer referenced.
            unsafe { sys::cuModuleUnload(old.module) };
        }
        Ok((function, origin, key))
    }

    /// Uses the disk cache in `dir`, for the workers too.
    #[cfg(test)]
    fn use_disk_cache(&mut self, dir: &Path) {
        self.disk = Arc::new(Mutex::new(DiskCache::at(Some(dir.to_path_buf()))));
        self.jit = self.jit.as_ref().map(|_| Arc::new(JitPool::new(self.arch, self.nvrtc_version, self.disk.clone())));
        self.requested.clear();
    }

    /// Waits until the workers have made every variant asked of them.
    #[cfg(test)]
    fn wait_for_requested(&self) {
        if let Some(jit) = &self.jit {
            for job in self.requested.values() {
                let _ = jit.wait(job);
            }
        }
    }

    /// The function of the prepared form of `key`'s kernel (see [`CudaDevice::function`]).
    fn prepared_function(
        &mut self,
        module: &crate::ir::Module,
        kernel: &GridKernel,
        key: &VariantKey,
        values: &[ParamValue],
    ) -> Result<(sys::CUfunction, KernelSource, VariantKey), KernelFault> {
        let prepared = key.prepared(&jit::ahead_variants(module, kernel));
        debug_assert!(prepared.constants.is_empty(), "a prepared form has no constants");
        self.function(module, kernel, prepared, values, (0, Gate::Open))
    }

    /// The image of `source` (variant `key`, cache key `image_key`): the executable's own,
    /// a worker's, the disk cache's, or NVRTC's. `None` when it is not ready and `may_wait` is
    /// false: a worker has been asked for it. `Err`: NVRTC's log, or why there is no NVRTC.
    fn image_for(
        &mut self,
        key: &VariantKey,
        symbol: &str,
        source: &str,
        image_key: u64,
        may_wait: bool,
        (work, gate): (u64, Gate),
    ) -> Result<Option<(Image, KernelSource)>, String> {
        if let Some((image, target)) = embedded::lookup(source, self.arch) {
            return Ok(Some((image, if matches!(target, embedded::Target::Ptx(_)) { KernelSource::PtxJit } else { KernelSource::Embedded })));
        }
        let origin = |ready: &jit::Ready, waited: bool| match (ready.made, waited) {
            (Made::Disk, _) => KernelSource::Disk,
            (Made::Nvrtc, false) => KernelSource::Worker { took_ns: ready.took.as_nanos() as u64 },
            (Made::Nvrtc, true) => KernelSource::Compiled,
        };
        if let Some(jit) = self.jit.clone() {
            // A prepared form the workers were asked for at start: its image, if the source
            // is this one (the prepared job writes it without `#line` sources only when the
            // device had none either).
            let prepared = JobKey::Prepared { symbol: symbol.to_string(), width: key.width, aliasing: key.aliasing };
            if key.constants.is_empty() && jit.has(&prepared) {
                let finished = jit.poll(&prepared).is_some();
                if finished || may_wait {
                    let _progress = crate::runtime::progress::step(|| format!("compiling {symbol} for sm_{} with NVRTC", self.arch));
                    if let Some(Ok(ready)) = jit.wait(&prepared)
                        && ready.source == source
                    {
                        return Ok(Some((ready.image.clone(), origin(&ready, !finished))));
                    }
                }
            }
            let job = JobKey::Source(image_key);
            if !jit.has(&job) {
                let cached = self.disk.lock().unwrap_or_else(|e| e.into_inner()).load(image_key);
                match cached {
                    Ok((ImageKind::Cubin, bytes)) => return Ok(Some((Image::Cubin(bytes), KernelSource::Disk))),
                    Ok((ImageKind::Ptx, bytes)) => return Ok(Some((Image::Ptx(bytes), KernelSource::Disk))),
                    // Not worth a compilation yet: the prepared form runs the launch.
                    Err(_) if !key.constants.is_empty() && self.gate.missing(key, work, gate) == Gate::Held => return Ok(None),
                    Err(_) => jit.request_source(image_key, symbol.to_string(), source.to_string()),
                }
            }
            let finished = jit.poll(&job).is_some();
            if !finished && !may_wait {
                self.requested.insert(key.clone(), job);
                return Ok(None);
            }
            let _progress = crate::runtime::progress::step(|| format!("compiling {symbol} for sm_{} with NVRTC", self.arch));
            let ready = jit.wait(&job).unwrap_or_else(|| Err("the compilation was never started (a runtime bug)".to_string()))?;
            return Ok(Some((ready.image.clone(), origin(&ready, !finished))));
        }
        let targets: Vec<String> = embedded::targets().iter().map(|t| t.describe()).collect();
        Err(format!(
            "no NVRTC on this machine to compile `{symbol}` for sm_{}, and the executable carries no image of it for this GPU{}",
            self.arch,
            if targets.is_empty() { String::new() } else { format!(" (it carries {})", targets.join(", ")) }
        ))
    }

    /// The index width a launch may use (see [`index_width`]).
    fn index_width_for(&self, kernel: &GridKernel, params: &[DeviceParam], grid: [u32; 3], block: [u32; 3]) -> IndexWidth {
        let mut extents = Vec::new();
        for (param, bound) in kernel.params.iter().zip(params) {
            // Rows have lengths the device never learns: index them in 64 bits.
            if let ParamKind::RowTable { .. } = param.kind {
                return IndexWidth::Bits64;
            }
            if let (ParamKind::Array { elem, .. }, DeviceParam::Array { alloc, offset }) = (&param.kind, bound) {
                let Some(b) = self.buffers.get(&alloc.0) else { return IndexWidth::Bits64 };
                let elem = elem.size_bytes().max(1) as i128;
                extents.push((*offset as i128 / elem, (b.bytes as i128 - *offset as i128) / elem));
            }
        }
        index_width(grid, block, &extents)
    }

    /// `bytes` of zeroed device memory for a launch's own buffers: a spare buffer of an earlier
    /// launch when one is large enough (allocating and freeing at every launch of a reduction
    /// kernel costs more than the kernel itself), else a new allocation.
    /// Frees pooled allocations, oldest first, until at most `keep` bytes stay pooled.
    fn drain_pool(&mut self, keep: u64) {
        let mut pooled: u64 = self.pool.iter().map(|b| b.bytes).sum();
        if pooled <= keep {
            return;
        }
        // A failure here (after a fault broke the context) loses nothing the program needs.
        let _ = self.make_current();
        while pooled > keep && !self.pool.is_empty() {
            let b = self.pool.remove(0);
            pooled -= b.bytes;
            // SAFETY: allocated by `allocate` and no longer in the buffer table: freed once.
            unsafe { sys::cuMemFree_v2(b.ptr) };
        }
    }

    fn scratch(&mut self, bytes: u64, scratch: &mut Scratch) -> Result<sys::CUdeviceptr, String> {
        if bytes == 0 {
            return Ok(0);
        }
        let reuse = self.spare.iter().enumerate().filter(|(_, b)| b.bytes >= bytes).min_by_key(|(_, b)| b.bytes).map(|(i, _)| i);
        let buffer = match reuse {
            Some(i) => self.spare.swap_remove(i),
            None => {
                let mut ptr: sys::CUdeviceptr = 0;
                // SAFETY: valid out-pointer.
                check("cuMemAlloc", unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes as usize) })?;
                Buffer { ptr, bytes }
            }
        };
        let ptr = buffer.ptr;
        scratch.0.push(buffer);
        // SAFETY: the buffer holds at least `bytes`.
        check("cuMemsetD8", unsafe { sys::cuMemsetD8_v2(ptr, 0, bytes as usize) })?;
        Ok(ptr)
    }

    /// Keeps a finished launch's buffers for the next launches (the largest few).
    fn recycle(&mut self, mut scratch: Scratch) {
        self.spare.append(&mut scratch.0);
        if self.spare.len() > MAX_SPARE_BUFFERS {
            self.spare.sort_by_key(|b| std::cmp::Reverse(b.bytes));
            for b in self.spare.drain(MAX_SPARE_BUFFERS..) {
                // SAFETY: a scratch allocation no launch uses any more.
                unsafe { sys::cuMemFree_v2(b.ptr) };
            }
        }
    }

    /// `count` elements of `ty` copied back from the device, through the pinned staging buffer
    /// (a copy from pageable memory goes through the driver's own bounce buffer, several times
    /// slower for the partials of a large reduction); through ordinary memory when pinned
    /// memory cannot be had.
    fn read_back(&mut self, ptr: sys::CUdeviceptr, ty: ScalarType, count: u64) -> Result<Vec<u64>, String> {
        let size = ty.size_bytes() as usize;
        let len = size * count as usize;
        if len == 0 {
            return Ok(Vec::new());
        }
        if self.staging.bytes < len {
            self.staging.release();
            let bytes = len.next_power_of_two().max(1 << 16);
            let mut host: *mut c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer; on success `host` is `bytes` of pinned memory.
            if unsafe { sys::cuMemAllocHost_v2(&mut host, bytes) } == sys::CUresult::CUDA_SUCCESS && !host.is_null() {
                self.staging = Staging { ptr: host as *mut u8, bytes };
            }
        }
        if self.staging.bytes >= len {
            // SAFETY: `ptr` holds `count` elements of `ty` (allocated by `scratch`); the staging
            // buffer holds at least `len` bytes and is only used here, synchronously.
            let staged = unsafe {
                check("cuMemcpyDtoH", sys::cuMemcpyDtoH_v2(self.staging.ptr as *mut c_void, ptr, len))?;
                std::slice::from_raw_parts(self.staging.ptr, len)
            };
            return Ok(staged.chunks(size).map(|c| value::from_bytes(ty, c)).collect());
        }
        let mut bytes = vec![0u8; len];
        // SAFETY: as above, into a buffer of `len` bytes.
        check("cuMemcpyDtoH", unsafe { sys::cuMemcpyDtoH_v2(bytes.as_mut_ptr() as *mut c_void, ptr, len) })?;
        Ok(bytes.chunks(size).map(|c| value::from_bytes(ty, c)).collect())
    }
}

/// Pinned host memory for reading launch results back (`bytes == 0`: none yet).
struct Staging {
    ptr: *mut u8,
    bytes: usize,
}

impl Staging {
    const NONE: Staging = Staging { ptr: std::ptr::null_mut(), bytes: 0 };

    fn release(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: allocated by `cuMemAllocHost` in `read_back`, released once.
            unsafe { sys::cuMemFreeHost(self.ptr as *mut c_void) };
        }
        *self = Staging::NONE;
    }
}

/// The values of `launch`'s specialisable params, which a specialised variant of its kernel
/// is compiled for (one module, and one first launch, per distinct values: the performance
/// model counts first launches so too); `None` when one is not an integer.
pub fn specialised_constants(launch: &Launch) -> Option<Vec<i64>> {
    launch
        .specialisable
        .iter()
        .map(|&p| match launch.params.get(p as usize) {
            Some(DeviceParam::Value(ParamValue::Int(v))) => Some(*v),
            _ => None,
        })
        .collect()
}

/// `wanted`, unless the policy is generic-only, or `wanted` is a new specialised variant of a
/// kernel that already has [`MAX_VARIANTS`] of them: then the generic kernel.
fn choose_variant<'k>(wanted: VariantKey, policy: VariantPolicy, compiled: impl Iterator<Item = &'k VariantKey>) -> VariantKey {
    let kept = policy != VariantPolicy::GenericOnly && keeps_variant(&wanted, |k| k.symbol == wanted.symbol && !k.constants.is_empty(), compiled);
    if kept { wanted } else { VariantKey::generic(wanted.symbol) }
}

/// Whether a launch gets the variant it wants (`wanted`) rather than its kernel's generic one,
/// given the kernel's variants compiled so far: yes when `wanted` is among them or generic, or
/// while fewer than [`MAX_VARIANTS`] of them are specialised (`is_specialised`). The device
/// chooses so, and the performance model mirrors it to count first launches.
pub fn keeps_variant<'k, K: PartialEq + 'k>(wanted: &K, is_specialised: impl Fn(&K) -> bool, compiled: impl IntoIterator<Item = &'k K>) -> bool {
    let mut specialised = 0;
    for k in compiled {
        if k == wanted {
            return true;
        }
        if is_specialised(k) {
            specialised += 1;
        }
    }
    !is_specialised(wanted) || specialised < MAX_VARIANTS
}

/// `Bits32` when 32-bit indexing is exact for a launch: its threads (the product over axes of
/// grid times block), and every array param's elements before and after where it points
/// (`extents`), number at most `i32::MAX`.
fn index_width(grid: [u32; 3], block: [u32; 3], extents: &[(i128, i128)]) -> IndexWidth {
    let limit = i32::MAX as i128;
    let threads: i128 = grid.iter().zip(&block).map(|(&g, &b)| g as i128 * b as i128).product();
    let fits = threads <= limit && extents.iter().all(|&(before, after)| before.abs() <= limit && after.abs() <= limit);
    if fits { IndexWidth::Bits32 } else { IndexWidth::Bits64 }
}

/// Device buffers of one launch (partials, scalar outputs): recycled when the launch succeeds,
/// freed when it fails (a fault may have broken the context they belong to).
struct Scratch(Vec<Buffer>);

impl Drop for Scratch {
    fn drop(&mut self) {
        for b in &self.0 {
            // SAFETY: allocated by `CudaDevice::scratch` and owned by this launch alone.
            unsafe { sys::cuMemFree_v2(b.ptr) };
        }
    }
}

/// Where the CUDA source of each compiled kernel is kept for reading what ran: `$YOSEGI_KEEP`,
/// else `sources/` in the kernel cache directory; either must be the user's alone
/// (`private_fs::check_trusted_dir`), never a fixed name in the temporary directory.
fn source_dir() -> Result<PathBuf, String> {
    let dir = match std::env::var_os("YOSEGI_KEEP").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => cache::trusted_dir().ok_or("no kernel cache directory is usable; set YOSEGI_KEEP=DIR to keep it")?.join("sources"),
    };
    crate::private_fs::create_private_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    crate::private_fs::check_trusted_dir(&dir)?;
    Ok(dir)
}

/// Writes the kernel's CUDA source to `<source_dir>/<stem>.cu` (for error reports and for
/// reading what ran), replacing what was there without following a link.
fn save_source(stem: &str, source: &str) -> Result<PathBuf, String> {
    let path = source_dir()?.join(format!("{stem}.cu"));
    crate::private_fs::replace_file(&path, source.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

impl Device for CudaDevice {
    fn name(&self) -> &str {
        "cuda"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn multiprocessors(&self) -> u32 {
        self.multiprocessors
    }

    /// The figures kept for this GPU model in the kernel cache directory, or measured now
    /// (about a second) and kept.
    fn machine(&mut self) -> crate::runtime::model::Machine {
        use crate::runtime::model::Machine;
        let dir = cache::trusted_dir();
        if let Some(known) = dir.as_deref().and_then(|d| Machine::load(d, &self.model)) {
            return known;
        }
        match self.measure_machine() {
            Ok(measured) => {
                if let Some(dir) = &dir {
                    measured.store(dir);
                }
                measured
            }
            Err(why) => {
                eprintln!("yosegi: warning: could not measure the GPU for the performance model ({why}); predictions use nominal figures");
                Machine::nominal(&self.model)
            }
        }
    }

    fn set_program(&mut self, module: &Arc<crate::ir::Module>, sources: Arc<crate::source::SourceSet>) {
        self.sources = Some(sources);
        // The executable's own images serve where they run here; the workers make the rest.
        if let Some(jit) = &self.jit
            && !embedded::serves(self.arch)
        {
            jit.request_prepared(module, self.sources.clone());
        }
    }

    fn shared_memory_per_block(&self) -> u64 {
        self.shared_per_block
    }

    fn allocate(&mut self, bytes: u64) -> DeviceAlloc {
        self.next_id += 1;
        let mut ptr: sys::CUdeviceptr = 0;
        if let Some(i) = self.pool.iter().position(|b| b.bytes == bytes).filter(|_| bytes > 0) {
            ptr = self.pool.swap_remove(i).ptr;
        } else if bytes > 0 && self.fault.is_none() {
            let mut allocated = self.make_current().and_then(|_| {
                // SAFETY: valid out-pointer.
                check("cuMemAlloc", unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes as usize) })
            });
            if allocated.is_err() && !self.pool.is_empty() {
                self.drain_pool(0);
                // SAFETY: as above.
                allocated = check("cuMemAlloc", unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes as usize) });
            }
            if let Err(e) = allocated {
                ptr = 0;
                self.memory_failure(format!("allocating {bytes} bytes: {e}"));
            }
        }
        self.buffers.insert(self.next_id, Buffer { ptr, bytes });
        DeviceAlloc(self.next_id)
    }

    fn free(&mut self, alloc: DeviceAlloc) {
        if let Some(buffer) = self.buffers.remove(&alloc.0)
            && buffer.ptr != 0
        {
            // Launches still using it are ahead of any later use on the one stream.
            self.pool.push(buffer);
            self.drain_pool(POOL_LIMIT);
        }
    }

    fn address(&self, alloc: DeviceAlloc) -> u64 {
        self.buffers.get(&alloc.0).map_or(0, |b| b.ptr)
    }

    fn memory(&mut self) -> (u64, u64) {
        let (mut free, mut total) = (0usize, 0usize);
        let queried = self.make_current().and_then(|_| {
            // SAFETY: valid out-pointers.
            check("cuMemGetInfo", unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) })
        });
        // The pool's blocks are free to the program: the next allocation that needs them gets them.
        let pooled: u64 = self.pool.iter().map(|b| b.bytes).sum();
        match queried {
            Ok(()) => (total as u64, free as u64 + pooled),
            Err(_) => (0, 0),
        }
    }

    fn description(&self) -> DeviceDescription {
        DeviceDescription {
            name: self.gpu_name.clone(),
            vendor: "NVIDIA".to_string(),
            driver: format!("CUDA driver {}.{}", self.driver_version / 1000, (self.driver_version % 1000) / 10),
        }
    }

    fn copy_within(&mut self, dst: DeviceAlloc, dst_offset: u64, src: DeviceAlloc, src_offset: u64, len: u64) {
        // Launches writing the source finish first (the copy is synchronous, on no stream).
        self.wait_in_flight();
        if len == 0 || self.fault.is_some() {
            return;
        }
        let (src_ptr, src_bytes) = {
            let b = self.buffer(src);
            (b.ptr, b.bytes)
        };
        let (dst_ptr, dst_bytes) = {
            let b = self.buffer(dst);
            (b.ptr, b.bytes)
        };
        if src_offset + len > src_bytes || dst_offset + len > dst_bytes {
            self.fatal(format!("a device copy of {len} bytes outside its allocations"));
        }
        let result = self.make_current().and_then(|_| {
            // SAFETY: both ranges lie inside live allocations (checked above).
            check("cuMemcpyDtoD", unsafe { sys::cuMemcpyDtoD_v2(dst_ptr + dst_offset, src_ptr + src_offset, len as usize) })
        });
        if let Err(e) = result {
            self.memory_failure(format!("copying {len} bytes on the device: {e}"));
        }
    }

    fn peer_memory(&self, alloc: DeviceAlloc, offset: u64) -> Option<PeerMemory> {
        self.lend_memory(alloc, offset)
    }

    fn copy_from_peer(&mut self, dst: DeviceAlloc, dst_offset: u64, src: &mut dyn Device, src_alloc: DeviceAlloc, src_offset: u64, len: u64) {
        let _range = crate::runtime::nvtx::range(|| format!("copy between GPUs {len} B"));
        self.copy_from_peer_device(dst, dst_offset, src, src_alloc, src_offset, len);
    }

    fn defer_copies(&mut self) {
        self.start_exchange();
    }

    fn deferred_copy_stream(&mut self, alloc: DeviceAlloc, offset: u64, len: u64, incoming: bool) -> Option<usize> {
        self.exchange_stream_for(alloc, offset, len, incoming)
    }

    fn join_copies(&mut self) -> Option<usize> {
        self.join_exchange()
    }

    fn mark(&mut self) -> Option<usize> {
        if self.fault.is_some() {
            return None;
        }
        self.record_mark(true)
    }

    fn mark_range(&mut self, alloc: DeviceAlloc, offset: u64, len: u64) -> Option<usize> {
        if self.fault.is_some() {
            return None;
        }
        let brought_in = self.exchange.brings(alloc.0, offset, len);
        self.record_mark(brought_in)
    }

    fn wait_for_mark(&mut self, mark: usize) {
        if self.fault.is_none() {
            self.wait_for(mark);
        }
    }

    fn drop_mark(&mut self, mark: usize) {
        self.destroy_mark(mark);
    }

    fn copy_to_device(&mut self, alloc: DeviceAlloc, offset: u64, src: &[u8]) {
        let _range = crate::runtime::nvtx::range(|| format!("copy to device {} B", src.len()));
        if src.is_empty() || self.fault.is_some() {
            return;
        }
        let (ptr, bytes) = {
            let b = self.buffer(alloc);
            (b.ptr, b.bytes)
        };
        if offset + src.len() as u64 > bytes {
            self.fatal(format!("a copy of {} bytes at offset {offset} into a {bytes}-byte allocation", src.len()));
        }
        if let Err(e) = self.make_current() {
            return self.memory_failure(e);
        }
        if self.upload_path == UploadPath::Staged && src.len() >= STAGED_UPLOAD_MIN && self.pinned.is_none() {
            // Without pinned memory the pageable path still works.
            self.pinned = PinnedStaging::create().ok();
        }
        let result = match self.pinned.as_mut() {
            Some(staging) if src.len() >= STAGED_UPLOAD_MIN => staging.upload(ptr + offset, src),
            // SAFETY: the destination range lies inside the allocation (checked above).
            _ => check("cuMemcpyHtoD", unsafe { sys::cuMemcpyHtoD_v2(ptr + offset, src.as_ptr() as *const c_void, src.len()) }),
        };
        if let Err(e) = result {
            self.memory_failure(format!("copying {} bytes to the device: {e}", src.len()));
        }
    }

    fn fill_zero(&mut self, alloc: DeviceAlloc, offset: u64, len: u64) {
        if len == 0 || self.fault.is_some() {
            return;
        }
        let (ptr, bytes) = {
            let b = self.buffer(alloc);
            (b.ptr, b.bytes)
        };
        if offset + len > bytes {
            self.fatal(format!("zeroing {len} bytes at offset {offset} of a {bytes}-byte allocation"));
        }
        if let Err(e) = self.make_current() {
            return self.memory_failure(e);
        }
        // On the legacy stream, which the launch stream (a blocking one) is ordered with.
        // SAFETY: the range lies inside the allocation (checked above).
        if let Err(e) = check("cuMemsetD8", unsafe { sys::cuMemsetD8_v2(ptr + offset, 0, len as usize) }) {
            self.memory_failure(format!("zeroing {len} bytes on the device: {e}"));
        }
    }

    fn copy_to_host(&mut self, alloc: DeviceAlloc, offset: u64, dst: &mut [u8]) {
        let _range = crate::runtime::nvtx::range(|| format!("copy to host {} B", dst.len()));
        // The launches that wrote the data must finish first, and a fault of theirs must be
        // reported as theirs, not as this copy's.
        self.wait_in_flight();
        if dst.is_empty() || self.fault.is_some() {
            return;
        }
        let (ptr, bytes) = {
            let b = self.buffer(alloc);
            (b.ptr, b.bytes)
        };
        if offset + dst.len() as u64 > bytes {
            self.fatal(format!("a copy of {} bytes at offset {offset} out of a {bytes}-byte allocation", dst.len()));
        }
        let len = dst.len();
        if let Err(e) = self.make_current() {
            return self.memory_failure(e);
        }
        if self.upload_path == UploadPath::Staged && len >= STAGED_UPLOAD_MIN && self.pinned.is_none() {
            self.pinned = PinnedStaging::create().ok();
        }
        let result = match self.pinned.as_mut() {
            Some(staging) if len >= STAGED_UPLOAD_MIN => staging.download(dst, ptr + offset),
            // SAFETY: the source range lies inside the allocation (checked above).
            _ => check("cuMemcpyDtoH", unsafe { sys::cuMemcpyDtoH_v2(dst.as_mut_ptr() as *mut c_void, ptr + offset, len) }),
        };
        if let Err(e) = result {
            self.memory_failure(format!("copying {len} bytes to the host: {e}"));
        }
    }

    fn launch(&mut self, launch: &Launch) -> Result<LaunchOutcome, KernelFault> {
        let (started, _) = self.enqueue(launch, ResultsWhen::Now)?;
        self.finish_launch(started)
    }

    fn idle(&self) -> bool {
        self.in_flight.is_empty()
    }

    fn queues_launches(&self) -> bool {
        true
    }

    fn start_launch(&mut self, launch: &Launch) -> Result<StartedLaunch, KernelFault> {
        self.enqueue(launch, ResultsWhen::Later).map(|(started, _)| started)
    }

    fn finish_launch(&mut self, started: StartedLaunch) -> Result<LaunchOutcome, KernelFault> {
        let token = match started {
            StartedLaunch::Finished(outcome) => return Ok(outcome),
            StartedLaunch::Pending(token) => token,
        };
        let Some(mut pending) = self.pending.remove(&token) else { return Err(KernelFault::not_started(token)) };
        if let Some(f) = self.fault.take() {
            return Err(f);
        }
        // Results copied to pinned memory wait only for their launch (see `landing`).
        if let Some(landing) = pending.landing.take() {
            return self.read_landed(pending, landing);
        }
        self.wait_in_flight();
        if let Some(f) = self.fault.take() {
            return Err(f);
        }
        self.read_results(pending)
    }

    fn launch_timed(&mut self, launch: &Launch) -> Result<(LaunchOutcome, Option<Duration>), KernelFault> {
        let (started, enqueued) = self.enqueue(launch, ResultsWhen::Now)?;
        let outcome = self.finish_launch(started)?;
        self.wait_in_flight();
        if let Some(f) = self.fault.take() {
            return Err(f);
        }
        // The launch was the newest in flight, so the last one resolved.
        let time = match enqueued {
            Enqueued::Kernel => self.completed.last().map(|c| c.device_time),
            Enqueued::Nothing => Some(Duration::ZERO),
        };
        Ok((outcome, time))
    }

    fn wait(&mut self) {
        self.wait_in_flight();
        self.wait_for_exchange();
    }

    fn take_fault(&mut self) -> Option<KernelFault> {
        self.fault.take()
    }

    fn take_completed(&mut self) -> Vec<CompletedLaunch> {
        std::mem::take(&mut self.completed)
    }
}


impl Drop for CudaDevice {
    fn drop(&mut self) {
        // Errors are ignored: at this point the process only gives resources back.
        let _ = self.make_current();
        // Launches still in flight finish before their memory and events go.
        if !self.in_flight.is_empty() {
            self.wait_in_flight();
        }
        if let Some(mut pinned) = self.pinned.take() {
            pinned.release();
        }
        self.exchange.release();
        self.landings.release();
        // SAFETY: every handle below was created by this device and is released once.
        unsafe {
            for b in self.pool.drain(..).chain(self.buffers.drain().map(|(_, b)| b)) {
                if b.ptr != 0 {
                    sys::cuMemFree_v2(b.ptr);
                }
            }
            for b in self.spare.drain(..) {
                sys::cuMemFree_v2(b.ptr);
            }
            self.staging.release();
            for (_, k) in self.kernels.drain() {
                sys::cuModuleUnload(k.module);
            }
            for (_, f) in self.folds.drain() {
                sys::cuModuleUnload(f.module);
            }
            for event in self.events.drain() {
                sys::cuEventDestroy_v2(event);
            }
        }
    }
}

#[cfg(test)]
mod tests;
