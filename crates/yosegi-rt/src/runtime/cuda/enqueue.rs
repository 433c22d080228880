//! The launch path of the GPU device: a grid kernel's launch values, variant and arguments
//! worked out, the kernel enqueued between the events that time it, its reductions folded on
//! the GPU (`fold`), and its results (reduction values, scalar outputs) read back then or,
//! for a launch whose results are wanted later, landed in pinned memory (`landing`).

use std::ffi::c_void;
use std::time::{Duration, Instant};

use cudarc::driver::sys;

use super::*;
impl CudaDevice {
    /// Puts the launch on the stream; waits for it only when it hands values back (reductions,
    /// scalar outputs) or launches are synchronous (`LaunchSync`). A launch that fails while
    /// others are in flight (loading its module, allocating its buffers, launching) most
    /// likely failed because one of them broke the context: that one's fault is reported.
    pub(super) fn enqueue(&mut self, launch: &Launch, results: ResultsWhen) -> Result<(StartedLaunch, Enqueued), KernelFault> {
        if let Some(f) = self.fault.take() {
            return Err(f);
        }
        self.enqueue_on_stream(launch, results).map_err(|own| {
            self.wait_in_flight();
            self.fault.take().unwrap_or(own)
        })
    }

    pub(super) fn enqueue_on_stream(&mut self, launch: &Launch, results_when: ResultsWhen) -> Result<(StartedLaunch, Enqueued), KernelFault> {
        let kernel = launch.kernel;
        let fault = |message: String| KernelFault { kernel: kernel.name.clone(), message, span: kernel.span, help: None };
        self.make_current().map_err(fault)?;

        // Launch-time values: the grid size is an expression of the scalar params.
        let values: Vec<ParamValue> = launch
            .params
            .iter()
            .map(|p| match p {
                DeviceParam::Value(v) => *v,
                DeviceParam::Array { .. } => ParamValue::Pointer(0),
            })
            .collect();
        let mut grid = [1u32; 3];
        for (axis, &e) in kernel.launch.grid.iter().enumerate() {
            let blocks = match eval_uniform(&kernel.body, e, &values) {
                Ok(ParamValue::Int(v)) => v.max(0),
                Ok(other) => return Err(fault(format!("the grid size evaluated to {other:?}, not an integer"))),
                Err(e) => return Err(fault(format!("cannot evaluate the grid size: {e}"))),
            };
            if blocks > MAX_GRID[axis] {
                return Err(fault(format!(
                    "a grid of {blocks} blocks on axis {axis} is more than the GPU accepts ({})",
                    MAX_GRID[axis]
                )));
            }
            grid[axis] = blocks as u32;
        }
        let (block, spread_grid) = launch_shape::spread(launch.module, kernel, grid.map(u64::from), self.multiprocessors, MAX_GRID.map(|m| m as u64));
        let grid = spread_grid.map(|g| g as u32);
        let threads: u64 = block.iter().map(|&b| b as u64).product();
        if threads > MAX_BLOCK_THREADS {
            return Err(fault(format!("a block of {threads} threads is more than the GPU accepts ({MAX_BLOCK_THREADS})")));
        }
        let blocks: u64 = grid.iter().map(|&g| g as u64).product();
        if blocks == 0 || threads == 0 {
            let outcome = LaunchOutcome {
                partials: vec![Vec::new(); kernel.reductions.len()],
                scalar_outputs: Vec::new(),
                counters: DeviceCounters::default(),
            };
            return Ok((StartedLaunch::Finished(outcome), Enqueued::Nothing));
        }

        let width = self.index_width_for(kernel, &launch.params, grid, block);
        let aliasing = launch.aliasing();
        let key = self.variant_for(launch, width, aliasing);
        // A specialised variant not worth compiling yet runs on the prepared form (`gate`).
        let work = blocks.saturating_mul(threads);
        let gate = if key.constants.is_empty() { Gate::Open } else { self.gate.before_launch(&key, work) };
        let wanted = match gate {
            Gate::Held => key.prepared(&super::jit::ahead_variants(launch.module, kernel)),
            Gate::Open | Gate::Due => key.clone(),
        };
        let jit_started = Instant::now();
        let (function, origin, used) = self.function(launch.module, kernel, wanted, &values, (work, gate))?;
        let mut counters = DeviceCounters { blocks, ..DeviceCounters::default() };
        match origin {
            KernelSource::Memory => counters.kernel_cache_memory_hits = 1,
            KernelSource::Disk => counters.kernel_cache_disk_hits = 1,
            KernelSource::Compiled => counters.kernel_cache_misses = 1,
            KernelSource::Worker { took_ns } => {
                counters.kernel_worker_hits = 1;
                counters.worker_jit_time_ns = took_ns;
            }
            KernelSource::Embedded => counters.kernel_embedded_hits = 1,
            KernelSource::PtxJit => counters.kernel_ptx_jits = 1,
        }
        if used != key {
            // Its own variant is still being made: the prepared form ran it.
            counters.kernel_prepared_stand_ins = 1;
        }
        if origin != KernelSource::Memory {
            counters.jit_time_ns = jit_started.elapsed().as_nanos() as u64;
        }
        let saved_note = self.kernels.get(&used).and_then(|k| k.saved_at.clone());

        // One 8-byte slot per argument, holding the value's memory representation in its low
        // bytes (the driver reads the parameter's own size from it; the GPU is little-endian).
        let mut slots: Vec<u64> = Vec::with_capacity(kernel.params.len() + kernel.reductions.len() + kernel.scalar_outputs.len());
        for (param, bound) in kernel.params.iter().zip(&launch.params) {
            match (&param.kind, bound) {
                (ParamKind::Scalar(ty), DeviceParam::Value(v)) => slots.push(value::to_memory(*ty, value::from_param(*ty, *v))),
                (ParamKind::Array { .. } | ParamKind::RowTable { .. }, DeviceParam::Array { alloc, offset }) => match self.buffers.get(&alloc.0) {
                    Some(b) => slots.push(b.ptr.wrapping_add_signed(*offset)),
                    None => return Err(fault(format!("parameter `{}` is bound to a device allocation that is not live", param.name))),
                },
                _ => return Err(fault(format!("parameter `{}` was bound to the wrong kind of value", param.name))),
            }
        }
        if launch.params.len() != kernel.params.len() {
            return Err(fault(format!("{} parameters were bound for {} kernel parameters", launch.params.len(), kernel.params.len())));
        }
        let mut scratch = Scratch(Vec::new());
        // Per reduction: the partials (one per block, or one per thread of a one-block launch)
        // and, when the GPU folds them, the fold kernel and where it writes.
        let mut partial_buffers = Vec::new();
        for r in &kernel.reductions {
            let count = partials_handed_back(r, blocks, threads);
            let ptr = self.scratch(count.max(blocks) * r.ty.size_bytes() as u64, &mut scratch).map_err(fault)?;
            let fold = if count == 1 {
                let folded = self.scratch(r.ty.size_bytes() as u64, &mut scratch).map_err(fault)?;
                let fold_started = Instant::now();
                let (fold, fold_origin) = self.fold_function(r.op, r.ty).map_err(fault)?;
                if fold_origin != KernelSource::Memory {
                    counters.jit_time_ns += fold_started.elapsed().as_nanos() as u64;
                }
                Some((fold, folded))
            } else {
                None
            };
            partial_buffers.push((ptr, count, fold));
            slots.push(ptr);
        }
        let mut output_buffers = Vec::new();
        for (local, _) in &kernel.scalar_outputs {
            let ty = kernel.body.locals.iter().find(|(h, _)| h == local).map(|(_, l)| l.ty).unwrap_or(ScalarType::I64);
            let ptr = self.scratch(ty.size_bytes() as u64, &mut scratch).map_err(fault)?;
            output_buffers.push((ptr, ty));
            slots.push(ptr);
        }
        let mut args: Vec<*mut c_void> = slots.iter_mut().map(|s| s as *mut u64 as *mut c_void).collect();

        self.trace_reference();
        let start = self.events.take(CudaDevice::new_event).map_err(fault)?;
        let stop = match self.events.take(CudaDevice::new_event) {
            Ok(stop) => stop,
            Err(e) => {
                self.events.give_back(start);
                return Err(fault(e));
            }
        };
        // SAFETY: `function` is a loaded kernel whose parameters are, in order, exactly the
        // slots built above (the same order `back::cuda` writes them); the driver copies the
        // argument values when the launch is enqueued, so the slots need not outlive it.
        let enqueued = unsafe {
            check("cuEventRecord", sys::cuEventRecord(start, std::ptr::null_mut()))
                .and_then(|_| {
                    check(
                        "cuLaunchKernel",
                        sys::cuLaunchKernel(
                            function,
                            grid[0],
                            grid[1],
                            grid[2],
                            block[0],
                            block[1],
                            block[2],
                            0,
                            std::ptr::null_mut(),
                            args.as_mut_ptr(),
                            std::ptr::null_mut(),
                        ),
                    )
                })
                .and_then(|_| check("cuEventRecord", sys::cuEventRecord(stop, std::ptr::null_mut())))
        };
        let enqueued = enqueued.and_then(|_| {
            partial_buffers.iter().try_for_each(|&(partials, _, fold)| match fold {
                Some((fold, folded)) => self.enqueue_fold(fold, partials, blocks, folded),
                None => Ok(()),
            })
        });
        if let Err(e) = enqueued {
            self.events.give_back(start);
            self.events.give_back(stop);
            return Err(fault(e));
        }
        self.in_flight.push(InFlight { kernel: kernel.name.clone(), span: kernel.span, saved_source: saved_note, start, stop });
        let hands_back = !kernel.reductions.is_empty() || !kernel.scalar_outputs.is_empty();
        let results = PendingResults {
            kernel: kernel.name.clone(),
            span: kernel.span,
            reductions: kernel.reductions.iter().zip(&partial_buffers).map(|(r, &(partials, count, fold))| match fold {
                Some((_, folded)) => (folded, r.ty, 1),
                None => (partials, r.ty, count),
            }).collect(),
            outputs: output_buffers,
            scratch,
            counters,
            stop,
            landing: None,
        };
        if hands_back && results_later(results_when, self.sync) && self.in_flight.len() < MAX_IN_FLIGHT {
            let mut results = results;
            results.landing = self.land_results(&results);
            let token = self.next_pending;
            self.next_pending += 1;
            self.pending.insert(token, results);
            return Ok((StartedLaunch::Pending(token), Enqueued::Kernel));
        }
        if hands_back || self.sync == LaunchSync::EachLaunch || self.in_flight.len() >= MAX_IN_FLIGHT {
            self.wait_in_flight();
            if let Some(f) = self.fault.take() {
                return Err(f);
            }
        }
        self.read_results(results).map(|outcome| (StartedLaunch::Finished(outcome), Enqueued::Kernel))
    }

    /// Reads a launch's reduction results and scalar outputs back (the launch finished) and
    /// keeps its buffers for the next launches.
    pub(super) fn read_results(&mut self, results: PendingResults) -> Result<LaunchOutcome, KernelFault> {
        let PendingResults { kernel, span, reductions, outputs, scratch, counters, .. } = results;
        let fault = |message: String| KernelFault { kernel: kernel.clone(), message, span, help: None };
        let partials = reductions
            .iter()
            .map(|&(ptr, ty, count)| self.read_back(ptr, ty, count))
            .collect::<Result<Vec<_>, _>>()
            .map_err(fault)?;
        let scalar_outputs = outputs
            .iter()
            .map(|&(ptr, ty)| self.read_back(ptr, ty, 1).map(|v| v.first().copied().unwrap_or(0)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(fault)?;
        self.recycle(scratch);
        Ok(LaunchOutcome { partials, scalar_outputs, counters })
    }
}

/// The device time between the events recorded around one launch, which completed.
pub(super) fn device_time(start: &sys::CUevent, stop: &sys::CUevent) -> Option<Duration> {
    let mut ms = 0f32;
    // SAFETY: both events were recorded around one launch, which completed.
    let ok = unsafe { sys::cuEventElapsedTime_v2(&mut ms, *start, *stop) } == sys::CUresult::CUDA_SUCCESS;
    ok.then(|| Duration::from_secs_f64(ms.max(0.0) as f64 / 1e3))
}

/// [`device_time`], and with a trace reference the launch's span on the trace's clock.
pub(super) fn traced_time(reference: Option<(sys::CUevent, f64)>, spans: &mut Vec<(f64, f64)>, start: &sys::CUevent, stop: &sys::CUevent) -> Option<Duration> {
    if let Some(reference) = reference {
        spans.push((on_trace_clock(reference, start), on_trace_clock(reference, stop)));
    }
    device_time(start, stop)
}

/// When the completed `event` happened on the trace's clock, from the device's reference
/// event and the trace time it was recorded at (`CudaDevice::trace_reference`).
pub(super) fn on_trace_clock((reference, at): (sys::CUevent, f64), event: &sys::CUevent) -> f64 {
    device_time(&reference, event).map_or(0.0, |d| at + d.as_secs_f64() * 1e6)
}

/// When a launch's results (reductions, scalar outputs) are read back: at once, or when the
/// runtime asks for them (`Device::start_launch`), after starting the other devices' parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ResultsWhen {
    Now,
    Later,
}

/// Whether a launch's results wait for `finish_launch`: asked for, and launches are not
/// synchronous (`YOSEGI_SYNC_LAUNCHES=1` reads them at once, naming a fault's kernel).
pub(super) fn results_later(when: ResultsWhen, sync: LaunchSync) -> bool {
    when == ResultsWhen::Later && sync == LaunchSync::Deferred
}

/// What a launch hands back, on the device until [`CudaDevice::read_results`] reads it.
pub(super) struct PendingResults {
    pub(super) kernel: String,
    pub(super) span: crate::diag::Span,
    /// Per reduction: where its values are, their type and how many.
    pub(super) reductions: Vec<(sys::CUdeviceptr, ScalarType, u64)>,
    /// Per scalar output: where it is and its type.
    pub(super) outputs: Vec<(sys::CUdeviceptr, ScalarType)>,
    pub(super) scratch: Scratch,
    pub(super) counters: DeviceCounters,
    /// The event recorded after the launch (its place among the launches in flight).
    pub(super) stop: sys::CUevent,
    /// Where the results are being copied, when they are read after later launches started.
    pub(super) landing: Option<landing::Landing>,
}

/// How many partials of reduction `r` a launch of `blocks` blocks of `threads` threads hands
/// back to the runtime: one per thread of a one-block launch (the runtime folds them in thread
/// order, see `opt::mapping`), one per block for the two parts of a complex product (they
/// combine together, which the per-type fold kernel cannot do), else the one value the fold
/// kernel leaves.
pub(super) fn partials_handed_back(r: &GridReduction, blocks: u64, threads: u64) -> u64 {
    if blocks == 1 {
        threads
    } else if r.op == ReductionOp::Mul && r.part.is_some() {
        blocks
    } else {
        1
    }
}
