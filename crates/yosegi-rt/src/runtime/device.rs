//! The device interface the runtime drives: memory management, transfers and grid kernel
//! launches. The simulator (`sim`) is the first implementation; the trait stays small so that a
//! CUDA device can implement it next.

use std::borrow::Cow;

use crate::back::cuda::{ParamAliasing, param_aliasing, specialisable_params, writes_restrict};
use crate::diag::Span;
use crate::ir::{GridKernel, Module, ParamValue};

use super::stats::DeviceCounters;

/// A device allocation (opaque to the runtime).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceAlloc(pub u64);

/// A grid kernel parameter as the device sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceParam {
    Value(ParamValue),
    /// An array param: a byte offset (possibly past either end: only accesses are checked) into
    /// a device allocation.
    Array {
        alloc: DeviceAlloc,
        offset: i64,
    },
}

pub struct Launch<'a> {
    pub module: &'a Module,
    pub kernel: &'a GridKernel,
    /// One per `kernel.params`.
    pub params: Vec<DeviceParam>,
    /// `back::cuda::specialisable_params(kernel)`. The runtime computes it once per kernel and
    /// lends it: walking the kernel's expressions for it at every launch of a time-step loop
    /// cost microseconds a launch.
    pub specialisable: Cow<'a, [u32]>,
    /// `module.reaches_addresses(&kernel.body)`, lent by the runtime as `specialisable` is:
    /// the walk covers every device function of the module.
    pub reaches_addresses: bool,
}

impl<'a> Launch<'a> {
    /// A launch that works out `specialisable` itself.
    pub fn new(module: &'a Module, kernel: &'a GridKernel, params: Vec<DeviceParam>) -> Launch<'a> {
        Launch { module, kernel, params, specialisable: Cow::Owned(specialisable_params(kernel)), reaches_addresses: module.reaches_addresses(&kernel.body) }
    }

    /// What the launch's bindings promise about its array params (`back::cuda::param_aliasing`;
    /// never anything for a kernel that reaches memory at computed addresses, also in a device
    /// function).
    pub fn aliasing(&self) -> ParamAliasing {
        if self.reaches_addresses {
            return ParamAliasing::Unknown;
        }
        let allocations: Vec<Option<u64>> =
            self.params.iter().map(|p| if let DeviceParam::Array { alloc, .. } = p { Some(alloc.0) } else { None }).collect();
        param_aliasing(self.kernel, &allocations)
    }

    /// Per param of the kernel, whether the CUDA C of this launch declares it `__restrict__`.
    pub fn restrict_params(&self) -> Vec<bool> {
        let aliasing = self.aliasing();
        self.kernel.params.iter().map(|p| writes_restrict(&p.kind, aliasing)).collect()
    }
}

/// What a launch hands back besides its memory effects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchOutcome {
    /// Per `kernel.reductions`: raw values (see `ir::value`) whose fold in order is the
    /// launch's contribution: one per block in linear block order (the simulator), or the
    /// single value a device folded itself (the GPU).
    pub partials: Vec<Vec<u64>>,
    /// Per `kernel.scalar_outputs`: the raw final value of the local in thread 0.
    pub scalar_outputs: Vec<u64>,
    pub counters: DeviceCounters,
}

/// A launch whose results the host may not have read yet ([`Device::start_launch`]).
#[derive(Debug)]
pub enum StartedLaunch {
    /// Ran (or was enqueued) with its results already known.
    Finished(LaunchOutcome),
    /// Enqueued; the device reads its results back in [`Device::finish_launch`] (the token is
    /// the device's own).
    Pending(u64),
}

/// A fault of the user's kernel (out-of-bounds access, division by zero, barrier under
/// divergence): reported with the kernel's name and the source span of the culprit.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelFault {
    pub kernel: String,
    pub message: String,
    pub span: Span,
    pub help: Option<String>,
}

impl KernelFault {
    /// `finish_launch` of a token this device never handed out (a runtime bug).
    pub fn not_started(token: u64) -> KernelFault {
        KernelFault {
            kernel: String::new(),
            message: format!("launch {token} was not started on this device (a runtime bug)"),
            span: Span::default(),
            help: None,
        }
    }
}

/// A launch the device ran without the host waiting for it, with its time on the device
/// (CUDA events), reported once the device knows it finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletedLaunch {
    pub kernel: String,
    pub device_time: std::time::Duration,
}

/// Another device's memory as a device of the same kind can copy from it directly: for a GPU,
/// the CUDA context it belongs to and its device address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerMemory {
    pub context: usize,
    pub address: u64,
}

/// How many devices a runtime drives (`runtime::open_devices`; `--gpus`, `YOSEGI_GPUS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DeviceCount {
    /// One per GPU of the machine (one simulator); kernels are split over them only when large
    /// enough to gain (`runtime::distribute`).
    #[default]
    All,
    /// This many. Beyond the GPUs there are, devices are logical: device `i` runs on GPU
    /// `i % gpus`, with allocations, kernels and launches of its own (see
    /// `cuda::CudaDevice::probe_all`), so that a program can be spread over more devices than
    /// the machine has.
    Exactly(usize),
}

impl DeviceCount {
    /// `all` or a positive count, as `--gpus` and `YOSEGI_GPUS` take it.
    pub fn parse(text: &str) -> Result<DeviceCount, String> {
        match text.trim() {
            "all" => Ok(DeviceCount::All),
            n => match n.parse::<usize>() {
                Ok(0) | Err(_) => Err(format!("`{n}` is not a number of GPUs: give a positive count or `all`")),
                Ok(n) => Ok(DeviceCount::Exactly(n)),
            },
        }
    }
}

/// What `acc_get_property_string` tells about a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceDescription {
    pub name: String,
    pub vendor: String,
    pub driver: String,
}

pub trait Device: Send {
    fn name(&self) -> &str;
    /// What identifies the hardware in the tuning cache (`runtime::variants`): the GPU model
    /// for a GPU, so that a winner measured on one model is not reused on another.
    fn model(&self) -> &str {
        self.name()
    }
    /// Bytes of shared memory one block may declare statically (a staged variant needing more
    /// is not launched there).
    fn shared_memory_per_block(&self) -> u64 {
        super::variants::SHARED_MEMORY_LIMIT
    }
    /// The program, once, before its first launch: its sources, for the line information of
    /// compiled kernels (a GPU writes `#line` directives into the CUDA it compiles:
    /// `back::cuda::CudaOptions::sources`), and its kernels, which a GPU starts getting ready
    /// on worker threads (`cuda::jit`) while the host code runs.
    fn set_program(&mut self, _module: &std::sync::Arc<crate::ir::Module>, _sources: std::sync::Arc<crate::source::SourceSet>) {}
    /// What small grids are spread over (`runtime::launch_shape`): the GPU's multiprocessors.
    fn multiprocessors(&self) -> u32 {
        0
    }
    /// The performance model's figures for this device (`runtime::model::machine`): measured
    /// once per GPU model and kept, or nominal on a device that cannot time.
    fn machine(&mut self) -> crate::runtime::model::Machine {
        crate::runtime::model::Machine::nominal(self.model())
    }
    fn allocate(&mut self, bytes: u64) -> DeviceAlloc;
    fn free(&mut self, alloc: DeviceAlloc);
    /// The address of `alloc`'s first byte in the device's address space: what the OpenACC API
    /// hands the program as a device pointer (`acc_malloc`, `acc_deviceptr`). It lies outside
    /// every host object, and no two live allocations share an address (a zero-byte allocation
    /// may have none: 0).
    fn address(&self, alloc: DeviceAlloc) -> u64;
    /// Total and free bytes of device memory (`acc_get_property`).
    fn memory(&mut self) -> (u64, u64);
    /// The device's name, vendor and driver (`acc_get_property_string`).
    fn description(&self) -> DeviceDescription {
        DeviceDescription { name: self.model().to_string(), vendor: "Yosegi".to_string(), driver: String::new() }
    }
    /// Copies `len` bytes from one allocation of this device to another (or within one; the
    /// ranges do not overlap).
    fn copy_within(&mut self, dst: DeviceAlloc, dst_offset: u64, src: DeviceAlloc, src_offset: u64, len: u64) {
        let mut bounce = vec![0u8; len as usize];
        self.copy_to_host(src, src_offset, &mut bounce);
        self.copy_to_device(dst, dst_offset, &bounce);
    }
    fn copy_to_device(&mut self, alloc: DeviceAlloc, offset: u64, src: &[u8]);
    /// `offset` bytes into `alloc`, as another device of the same kind reads it in
    /// [`Device::copy_from_peer`]; `None` where copies between devices go through the host.
    fn peer_memory(&self, _alloc: DeviceAlloc, _offset: u64) -> Option<PeerMemory> {
        None
    }
    /// Marks the work enqueued on this device so far, for work of another device to wait for
    /// ([`Device::wait_for_mark`]); `None` on a device whose work is done when its calls
    /// return (the simulator).
    fn mark(&mut self) -> Option<usize> {
        None
    }
    /// [`Device::mark`] for a copy out of `len` bytes at `offset` of `alloc`: it need not
    /// wait for copies deferred into this device ([`Device::defer_copies`]) that bring other
    /// bytes.
    fn mark_range(&mut self, _alloc: DeviceAlloc, _offset: u64, _len: u64) -> Option<usize> {
        self.mark()
    }
    /// Work enqueued on this device from now on waits first for `mark`, another device's.
    fn wait_for_mark(&mut self, _mark: usize) {}
    /// Frees a mark this device made once no more waits for it will be enqueued (those
    /// enqueued still hold).
    fn drop_mark(&mut self, _mark: usize) {}
    /// Copies `len` bytes at `src_offset` of `src_alloc` on another device, `src`, to
    /// `dst_offset` of `dst` on this one, after the work already enqueued on both devices and
    /// before any work enqueued on either later. A GPU copies directly (peer to peer) from
    /// memory [`Device::peer_memory`] describes; the default goes through host memory.
    fn copy_from_peer(&mut self, dst: DeviceAlloc, dst_offset: u64, src: &mut dyn Device, src_alloc: DeviceAlloc, src_offset: u64, len: u64) {
        let mut bounce = vec![0u8; len as usize];
        src.copy_to_host(src_alloc, src_offset, &mut bounce);
        self.copy_to_device(dst, dst_offset, &bounce);
    }
    /// Copies from other devices ([`Device::copy_from_peer`]) made from now until
    /// [`Device::join_copies`] run beside the launches enqueued here meanwhile: still after the
    /// work enqueued so far on both devices, but no longer before this device's later
    /// launches, which therefore must not read or write the bytes being copied (a split
    /// launch's interior, while its halo comes in). A device that cannot copies in order, as
    /// before, which is also correct.
    fn defer_copies(&mut self) {}
    /// Where a copy between this device and another process's (`runtime::ranks`, through
    /// NCCL) goes while copies are deferred ([`Device::defer_copies`]): a stream of this
    /// device's (as a handle), already ordered after the work enqueued here so far, whose copy
    /// [`Device::join_copies`] then joins, as the device's own deferred copies. `incoming`: the
    /// copy brings `len` bytes at `offset` of `alloc` (else it reads them). `None` when copies
    /// are not deferred, or the device has no such stream: the copy then goes in order with
    /// the launches.
    fn deferred_copy_stream(&mut self, _alloc: DeviceAlloc, _offset: u64, _len: u64, _incoming: bool) -> Option<usize> {
        None
    }
    /// Ends [`Device::defer_copies`]: work enqueued here from now on comes after the deferred
    /// copies. Returns a mark of their completion (see [`Device::mark`]) when some are still
    /// running, for the source devices' later work to wait for: it may overwrite what is being
    /// copied.
    fn join_copies(&mut self) -> Option<usize> {
        None
    }
    /// Sets `len` bytes of `alloc` from `offset` to zero, after the launches enqueued so far.
    fn fill_zero(&mut self, alloc: DeviceAlloc, offset: u64, len: u64) {
        const CHUNK: u64 = 1 << 24;
        let zeros = vec![0u8; len.min(CHUNK) as usize];
        let mut done = 0;
        while done < len {
            let n = (len - done).min(CHUNK);
            self.copy_to_device(alloc, offset + done, &zeros[..n as usize]);
            done += n;
        }
    }
    fn copy_to_host(&mut self, alloc: DeviceAlloc, offset: u64, dst: &mut [u8]);
    /// In a job of several ranks (`runtime::ranks`), the rank whose process drives this device;
    /// `None` for a device of a process that runs alone.
    fn rank(&self) -> Option<usize> {
        None
    }
    /// [`Device::copy_to_host`] for this process alone: a rank's device copies to its own
    /// host memory, for a message to one other rank, without sharing the bytes with every rank.
    fn read_here(&mut self, alloc: DeviceAlloc, offset: u64, dst: &mut [u8]) {
        self.copy_to_host(alloc, offset, dst);
    }
    fn launch(&mut self, launch: &Launch) -> Result<LaunchOutcome, KernelFault>;
    /// Starts the launch without waiting for results it hands back (reductions, scalar
    /// outputs), so that the parts of a launch split over several devices run together; the
    /// caller hands it to [`Device::finish_launch`] of the same device before any other launch
    /// there. The default runs it to completion.
    fn start_launch(&mut self, launch: &Launch) -> Result<StartedLaunch, KernelFault> {
        self.launch(launch).map(StartedLaunch::Finished)
    }
    /// The outcome of a launch [`Device::start_launch`] started, waiting for it if needed.
    fn finish_launch(&mut self, started: StartedLaunch) -> Result<LaunchOutcome, KernelFault> {
        match started {
            StartedLaunch::Finished(outcome) => Ok(outcome),
            StartedLaunch::Pending(token) => Err(KernelFault::not_started(token)),
        }
    }
    /// Runs the launch, waits for it to finish and gives its device time (CUDA events); `None`
    /// on devices whose time says nothing about a GPU (the simulator). Used to choose among
    /// the variants of a kernel.
    fn launch_timed(&mut self, launch: &Launch) -> Result<(LaunchOutcome, Option<std::time::Duration>), KernelFault> {
        self.launch(launch).map(|outcome| (outcome, None))
    }
    /// Whether the host waited for every launch enqueued so far, so that the next one starts
    /// on an idle device (paying what a launch behind others hides); `false` where launches
    /// are not queued.
    fn idle(&self) -> bool {
        false
    }
    /// Whether launches queue on the device behind the ones enqueued before them, running
    /// while the host goes on (a GPU's stream), so that a launch enqueued after the device
    /// finished them starts from idle; `false` where each launch runs as it is made.
    fn queues_launches(&self) -> bool {
        false
    }
    /// Waits for every launch enqueued so far (a device whose launches run to completion
    /// before `launch` returns has nothing to wait for). A fault found while waiting is kept
    /// for [`Device::take_fault`].
    fn wait(&mut self) {}
    /// A fault of an earlier launch found after that launch returned (while waiting, or by a
    /// memory operation), once.
    fn take_fault(&mut self) -> Option<KernelFault> {
        None
    }
    /// Launches known to have finished since the last call, with their device times (their
    /// `LaunchOutcome` counters did not hold them).
    fn take_completed(&mut self) -> Vec<CompletedLaunch> {
        Vec::new()
    }
}

#[cfg(test)]
mod count_tests {
    use super::DeviceCount;

    #[test]
    fn device_counts_parse() {
        assert_eq!(DeviceCount::parse("all"), Ok(DeviceCount::All));
        assert_eq!(DeviceCount::parse(" 3"), Ok(DeviceCount::Exactly(3)));
        assert!(DeviceCount::parse("0").unwrap_err().contains("`0`"));
        assert!(DeviceCount::parse("two").is_err());
    }
}
