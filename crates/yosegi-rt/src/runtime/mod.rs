//! The runtime: tracks host allocations, keeps host and device copies coherent, launches grid
//! kernels on a device (`sim`, or `cuda` on a GPU), and counts what happened (`--stats`).
//!
//! [`Runtime`] executes the program's regions (`ir::Region`) as the host code reaches them; the
//! C interface (`abi`) forwards to one process-wide instance. Errors come back as
//! [`RuntimeError`]s (a diagnostic and an exit code) so that tests can inspect them; the ABI
//! layer renders them and exits.

pub mod abi;
pub mod acc_api;
pub(crate) mod call_clock;
pub mod coherence;
pub mod cuda;
pub mod device;
pub mod launch_shape;
pub mod model;
pub mod device_count;
mod directives;
mod distribute;
pub use distribute::DEFAULT_MIN_OVERLAP_ITERATIONS;
mod launch;
pub mod nvtx;
pub mod progress;
pub mod ranks;
mod fused;
mod steps;
pub use device::DeviceCount;
pub mod registry;
mod settled_hooks;
mod rows;
pub mod sim;
pub mod stats;
pub mod trace;
pub mod start;
pub mod variants;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::analysis::access::{AccessSummary, ParamSections, Section, launch_sections_with, summarize};
use crate::diag::{Diagnostic, Span};
use crate::ir::DataClauseKind;
use crate::ir::value;
use crate::source::SourceSet;
use crate::ir::{
    ComplexPart, DataSection, GridReduction, Handle, HostArgKind, Kernel, Module, Param, ParamKind,
    ParamValue, ReductionOp, Region, RegionKind, ScalarType,
};

use abi::YosegiArg;
use launch::{Footprint, LaunchFootprint, check_overlaps, irregular_access_span, object_range};
use coherence::{Hold, Transfer};
use device::{Device, DeviceAlloc, KernelFault};
use registry::{Origin, Registry};
use stats::Stats;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    Sim,
    /// The GPU (`runtime::cuda`); building a runtime for it fails when there is none.
    Cuda,
    /// The GPU when one is usable, the simulator otherwise.
    Auto,
}

/// Opens the `count` devices a runtime of `kind` drives (`All`: one per GPU, one simulator).
/// `Err` says why there is no usable GPU (for `DeviceKind::Cuda`), or that no device was
/// asked for (a count of 0, for every kind).
pub fn open_devices(kind: DeviceKind, count: device::DeviceCount) -> Result<Vec<Box<dyn Device>>, String> {
    let sims = || -> Vec<Box<dyn Device>> {
        let n = match count {
            device::DeviceCount::All => 1,
            device::DeviceCount::Exactly(n) => n,
        };
        (0..n).map(|_| Box::new(sim::SimDevice::new()) as Box<dyn Device>).collect()
    };
    let gpus = || cuda::CudaDevice::probe_all(count).map(|g| g.into_iter().map(|d| Box::new(d) as Box<dyn Device>).collect());
    if count == device::DeviceCount::Exactly(0) {
        return Err("cannot run on 0 devices: at least one is needed".to_string());
    }
    match kind {
        DeviceKind::Sim => Ok(sims()),
        DeviceKind::Cuda => gpus().map_err(|why| format!("cannot use the cuda device: {why}")),
        DeviceKind::Auto => Ok(gpus().unwrap_or_else(|_| sims())),
    }
}

/// This rank's device in a job of several ranks (`runtime::ranks`): one per rank, the GPU of
/// its node its place among the node's ranks picks.
fn open_rank_device(kind: DeviceKind, count: device::DeviceCount, job: &ranks::Ranks) -> Result<Box<dyn Device>, String> {
    if let device::DeviceCount::Exactly(n) = count
        && n != 1
    {
        return Err(format!(
            "this process is rank {} of a job of {} ranks, and each rank drives one device: leave out --gpus {n} \
             (YOSEGI_GPUS), and start one rank per GPU",
            job.rank, job.size
        ));
    }
    let gpu = || -> Result<Box<dyn Device>, String> {
        let gpus = cuda::CudaDevice::gpu_count()?;
        Ok(Box::new(cuda::CudaDevice::open((job.local_rank % gpus) as i32, job.rank)?))
    };
    match kind {
        DeviceKind::Sim => Ok(Box::new(sim::SimDevice::new())),
        DeviceKind::Cuda => gpu().map_err(|why| format!("cannot use the cuda device: {why}")),
        DeviceKind::Auto => Ok(gpu().unwrap_or_else(|_| Box::new(sim::SimDevice::new()))),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsMode {
    Off,
    /// Print the counters to stderr at exit.
    Print,
    /// Print them as JSON (`Stats::to_json`) to stderr at exit.
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorMode {
    Never,
    Always,
}

#[derive(Clone, Copy, Debug)]
pub struct RuntimeConfig {
    pub device: DeviceKind,
    pub stats: StatsMode,
    pub color: ColorMode,
    /// How the compiler made staged variants, hence how the runtime chooses among them.
    pub staging: crate::opt::StagingMode,
    /// How many devices kernels are split over (`runtime::distribute`).
    pub gpus: DeviceCount,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            device: DeviceKind::Sim,
            stats: StatsMode::Off,
            color: ColorMode::Never,
            staging: crate::opt::StagingMode::Auto,
            gpus: DeviceCount::All,
        }
    }
}

/// How the process should end after an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The user's program did something wrong at run time (a kernel fault, `present` of an
    /// absent array): exit status 1.
    ProgramFault,
    /// The runtime cannot run the program as compiled (an array extent it cannot tell):
    /// exit status 2.
    Unsupported,
}

#[derive(Clone, Debug)]
pub struct RuntimeError {
    pub kind: ErrorKind,
    pub diagnostic: Diagnostic,
}

impl RuntimeError {
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::ProgramFault => 1,
            ErrorKind::Unsupported => 2,
        }
    }
    fn fault(diagnostic: Diagnostic) -> RuntimeError {
        RuntimeError { kind: ErrorKind::ProgramFault, diagnostic }
    }
    fn unsupported(diagnostic: Diagnostic) -> RuntimeError {
        RuntimeError { kind: ErrorKind::Unsupported, diagnostic }
    }
}

/// How far below the runtime's frame tracked objects count as dead stack memory. Other
/// mappings (heap, shared objects, thread stacks) start at least 128 MiB below the main
/// thread's stack on Linux, so a smaller window only ever covers the stack.
const DEAD_STACK_WINDOW: u64 = 64 << 20;

/// `acc_device_t` values (include/openacc.h).
pub mod acc_device {
    pub const NONE: i32 = 0;
    pub const DEFAULT: i32 = 1;
    pub const HOST: i32 = 2;
    pub const NOT_HOST: i32 = 3;
    pub const NVIDIA: i32 = 4;
    /// The types `acc_on_device` is true for in a kernel (a GPU, or the simulator playing one).
    pub const ON_DEVICE: [i32; 3] = [DEFAULT, NOT_HOST, NVIDIA];
}

pub struct Runtime {
    module: Arc<Module>,
    sources: Arc<SourceSet>,
    config: RuntimeConfig,
    registry: Registry,
    devices: Vec<Box<dyn Device>>,
    current_device: usize,
    stats: Stats,
    /// Which parts of the runtime's work `--stats` times (`call_clock`).
    call_clock: call_clock::CallClock,
    /// Host byte ranges copied to a device since the last launch (`coherence::Transfer`), for
    /// the model's L2 history.
    uploads: Vec<(usize, u64, u64)>,
    /// A zero-byte allocation bound to array params a launch does not touch.
    empty_alloc: Option<DeviceAlloc>,
    /// Which variant of a kernel each launch runs.
    variants: variants::VariantChooser,
    /// `launch_sections` per kernel and param values: a time-step loop launches the same
    /// kernels with the same sizes, and the analysis costs tens of microseconds per launch.
    sections_cache: SectionsCache,
    /// `Stats::device_copies_allocated` when device memory was last checked for caches to free:
    /// with no copy allocated since, there is nothing new to check (the query costs
    /// microseconds, and a wavefront exits hundreds of thousands of regions).
    allocations_at_last_trim: Option<u64>,
    /// Per grid kernel (by handle index): `back::cuda::specialisable_params`, which every CUDA
    /// launch needs and which the module, fixed for the runtime's life, determines.
    specialisable: Vec<Vec<u32>>,
    /// Per grid kernel (by handle index): `Module::reaches_addresses` of its body, which every
    /// launch asks (`Launch::aliasing`) and which walks every device function of the module.
    grid_reaches_addresses: Vec<bool>,
    /// The same per kernel (by handle index), for the launch's split and pointer-table plan.
    kernel_reaches_addresses: Vec<bool>,
    /// Per grid kernel (by handle index): the region args of the arrays it stores, sorted
    /// (`GridKernel::written_array_params`), which a fused chain's device-memory bytes need at
    /// every launch (`fused::ChainTraffic`) and the module determines.
    stored_args: Vec<Vec<u32>>,
    /// The OpenACC API's own state: `acc_malloc` blocks, the default async queue (also set by
    /// the `set default_async` directive), the device type asked for.
    api: acc_api::ApiState,
    /// The program chose a device (`acc_set_device_num`) or handled device addresses: launches
    /// are no longer split over the devices (`distribute`).
    program_manages_devices: bool,
    /// Whether a launch that can be split over the devices is (`distribute::SplitRule`).
    split_rule: distribute::SplitRule,
    /// Iterations a split launch's part must have to run its interior while its halo comes
    /// in; `None`: never (`distribute::min_overlap_iterations`).
    min_overlap_iterations: Option<i64>,
    /// Per kernel and device, the boundary widths its last overlapped part was cut with.
    overlap_widths: std::collections::HashMap<(Handle<Kernel>, usize), (i64, i64)>,
    /// The program's fused chains and the choices made for them (`fused`).
    fusions: fused::FusionState,
    /// The program's step fusions and the choices made for them (`steps`).
    steps: steps::StepState,
    /// The performance model, which predicts every launch's time when stats are on.
    model: Option<model::Model>,
    /// Whether the program's repeating cycle of regions runs on all the devices or one
    /// (`device_count`).
    device_count: device_count::DeviceCount,
    /// When the runtime started: the run's elapsed time in the stats.
    started: Instant,
}

/// The region args of the arrays `grid` stores, sorted.
fn stored_args(grid: &crate::ir::GridKernel) -> Vec<u32> {
    let mut args: Vec<u32> = grid.written_array_params().into_iter().map(|p| grid.params[p as usize].arg).collect();
    args.sort_unstable();
    args.dedup();
    args
}

/// A byte range of one tracked object, offsets from the object's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ObjectRange {
    object: u64,
    lo: u64,
    hi: u64,
}

impl Runtime {
    /// A runtime on the device `config` names. For `DeviceKind::Cuda` without a usable GPU it
    /// prints why and ends the process with status 2; [`Runtime::try_new`] returns the reason.
    pub fn new(module: Arc<Module>, sources: Arc<SourceSet>, config: RuntimeConfig) -> Runtime {
        match Runtime::try_new(module, sources, config) {
            Ok(runtime) => runtime,
            Err(why) => {
                eprintln!("yosegi: error: {why}");
                ranks::end_job_on_error(2);
                std::process::exit(2)
            }
        }
    }

    /// A runtime on the device `config` names, or why that device cannot be used.
    pub fn try_new(module: Arc<Module>, sources: Arc<SourceSet>, config: RuntimeConfig) -> Result<Runtime, String> {
        let started = Instant::now();
        let job = ranks::join()?;
        let mut devices = match &job {
            Some(job) => ranks::RankDevice::job_devices(job, open_rank_device(config.device, config.gpus, job)?),
            None => open_devices(config.device, config.gpus)?,
        };
        let devices_len = devices.len();
        let simulated = devices.first().is_some_and(|d| d.name() == "sim");
        // The model predicts every launch for `--stats`, and on a GPU leaves candidates it
        // predicts far slower out of the variant explorations (`variants::MODEL_FILTER`).
        let explores = !simulated && config.staging == crate::opt::StagingMode::Auto && module.kernels.iter().any(|(k, _)| module.variants_of(k).len() > 1);
        let mut model = (config.stats != StatsMode::Off || explores).then(|| model::Model::from_env(devices.iter_mut().map(|d| d.machine()).collect()));
        let split_rule = distribute::split_rule(simulated, job.is_some(), &mut devices, |devices| match model.as_ref().and_then(|m| m.machine(0)) {
            Some(machine) => machine.clone(),
            None => devices[0].machine(),
        });
        // The peer link the split rule measured serves the model's scaling curves too.
        if let (Some(model), distribute::SplitRule::Model(measured)) = (&mut model, &split_rule) {
            model.set_peer_link(measured.peer_bytes_per_s, measured.peer_copy_s);
        }
        let mut variants = variants::VariantChooser::new(config.staging, variants::TuningCache::default_location());
        variants.set_budget(variants::ExplorationBudget::from_env());
        if job.is_some() {
            variants.choose_by_estimate_only();
        }
        // `YOSEGI_MODEL_DECIDES=off`: every candidate is timed (the model benchmark compares
        // the model's choice with measurement over all of them).
        if std::env::var("YOSEGI_MODEL_DECIDES").is_ok_and(|v| v.trim().eq_ignore_ascii_case("off")) {
            variants.time_every_candidate();
        }
        for device in &mut devices {
            variants.set_shared_memory_limit(device.model(), device.shared_memory_per_block());
            // A GPU times its launches, the simulator does not (`variants::SHORT_LAUNCH`).
            match device.name() {
                "cuda" => variants.device_times_launches(device.model(), true),
                "sim" => variants.device_times_launches(device.model(), false),
                _ => {}
            }
            device.set_program(&module, sources.clone());
        }
        let call_clock = call_clock::CallClock::new(config.stats != StatsMode::Off);
        Ok(Runtime {
            sources,
            config,
            registry: Registry::new(),
            devices,
            current_device: 0,
            // One entry per device from the start: `--stats` prints the devices' rows whenever
            // there are several, split launches or not.
            stats: Stats { per_device: vec![Default::default(); devices_len], ..Stats::default() },
            call_clock,
            uploads: Vec::new(),
            empty_alloc: None,
            variants,
            sections_cache: SectionsCache::default(),
            allocations_at_last_trim: None,
            specialisable: module.grid_kernels.iter().map(|(_, g)| crate::back::cuda::specialisable_params(g)).collect(),
            grid_reaches_addresses: module.grid_kernels.iter().map(|(_, g)| module.reaches_addresses(&g.body)).collect(),
            kernel_reaches_addresses: module.kernels.iter().map(|(_, k)| module.reaches_addresses(&k.body)).collect(),
            stored_args: module.grid_kernels.iter().map(|(_, g)| stored_args(g)).collect(),
            api: acc_api::ApiState::new(devices_len),
            program_manages_devices: false,
            split_rule,
            min_overlap_iterations: distribute::min_overlap_iterations(simulated),
            overlap_widths: Default::default(),
            fusions: fused::FusionState::new(&module.fusions),
            steps: steps::StepState::new(&module),
            device_count: device_count::DeviceCount::new(device_count::enabled(simulated, job.is_some(), devices_len)),
            model,
            module,
            started,
        })
    }

    /// The name of the device kernels run on (`sim` or `cuda`): what `DeviceKind::Auto` chose.
    pub fn device_name(&self) -> &str {
        self.devices.get(self.current_device).map(|d| d.name()).unwrap_or("none")
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// The start of a part of the runtime's own work to time, when `--stats` prints the times
    /// ([`Stats::runtime_calls`]): the clock stays off the hot path otherwise, and is read for
    /// a sample of the parts once there are many (`call_clock`).
    pub fn clock(&self) -> call_clock::CallTimer {
        self.call_clock.start()
    }
    /// Adds the part `started` (from [`Runtime::clock`]) to `entry`'s calls and time.
    pub fn record_runtime_call(&mut self, entry: &'static str, started: call_clock::CallTimer) {
        if let Some(time) = started.stop() {
            self.stats.record_runtime_call(entry, time);
        }
    }
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }
    pub fn sources(&self) -> &SourceSet {
        &self.sources
    }
    pub fn registry(&self) -> &Registry {
        &self.registry
    }
    pub fn device_count(&self) -> usize {
        self.devices.len()
    }
    pub fn current_device(&self) -> usize {
        self.current_device
    }
    /// `acc_set_device_num`: the caller validated `num`.
    pub fn set_current_device(&mut self, num: usize) {
        self.stop_splitting();
        self.current_device = num.min(self.devices.len() - 1);
    }

    /// The text `--stats` prints at exit (`None` when stats are off), with what measuring
    /// cost the run so far (the model's sampling, timed exploration).
    pub fn exit_report(&mut self) -> Option<String> {
        self.stats.model_sampling = self.model.as_ref().map(|m| m.sampling_cost());
        self.stats.exploration = Some(self.variants.budget().cost());
        self.stats.elapsed = Some(self.started.elapsed());
        self.stats.runtime_calls.sampled = self.call_clock.sampled();
        let traffic = ranks::current().map(|r| r.traffic());
        match self.config.stats {
            StatsMode::Print => Some(match traffic {
                None => self.stats.render(),
                Some(t) => format!(
                    "{}rank {} of {}: sent {} bytes in {} messages to other ranks' devices, received {} bytes, broadcast {} bytes\n",
                    self.stats.render(),
                    t.rank,
                    t.size,
                    t.sent_bytes,
                    t.sent_messages,
                    t.received_bytes,
                    t.broadcast_bytes
                ),
            }),
            StatsMode::Json => {
                let mut json = self.stats.to_json();
                json["rank"] = serde_json::json!(traffic.map(|t| serde_json::json!({
                    "rank": t.rank,
                    "size": t.size,
                    "sent_bytes": t.sent_bytes,
                    "sent_messages": t.sent_messages,
                    "received_bytes": t.received_bytes,
                    "broadcast_bytes": t.broadcast_bytes,
                })));
                let files: Vec<String> = self.sources.units.iter().map(|u| u.path.display().to_string()).collect();
                json["program"] = serde_json::json!(files);
                json["device"] = serde_json::json!(self.devices.first().map(|d| d.model().to_string()));
                json["machine"] = serde_json::json!(self.model.as_ref().and_then(|m| m.machine(0)));
                // The model's scaling curve per kernel: one steady launch on 1, 2, ... devices.
                if let (Some(model), Some(kernels)) = (&self.model, json["kernels"].as_array_mut()) {
                    let cluster = model::cluster::Cluster::from_env();
                    for k in kernels {
                        let scaling = k["name"].as_str().and_then(|name| model.scaling(&self.module, name, 0));
                        k["predicted_scaling_s"] = serde_json::json!(scaling);
                        // Over MPI ranks of one GPU on nodes of `cluster` (`model::cluster`).
                        let ranks = k["name"].as_str().and_then(|name| model.ranks(&self.module, name, 0, &cluster));
                        k["predicted_ranks"] = serde_json::json!(ranks.map(|(strong, weak)| serde_json::json!({
                            "ranks": model::cluster::RANK_COUNTS,
                            "strong_s": strong,
                            "weak_s": weak,
                            "gpus_per_node": cluster.gpus_per_node,
                            "network_bytes_per_s": cluster.network_bytes_per_s,
                            "network_latency_s": cluster.network_latency_s,
                        })));
                    }
                }
                Some(serde_json::to_string_pretty(&json).unwrap_or_default() + "\n")
            }
            StatsMode::Off => None,
        }
    }

    /// Renders an error as the user sees it.
    pub fn render_error(&self, error: &RuntimeError) -> String {
        crate::diag::formats::DiagnosticsFormat::current().render(
            &self.sources,
            std::slice::from_ref(&error.diagnostic),
            self.config.color == ColorMode::Always,
        )
    }

    /// Region `id` of `module` (the runtime's own, cloned out of `self` by the caller so that the
    /// region can be borrowed while the runtime changes: a time-step loop enters the same region
    /// every step, and copying it each time cost more than the launch).
    fn region_of(module: &Module, id: i32) -> Result<&Region, RuntimeError> {
        usize::try_from(id).ok().and_then(|i| module.regions.get(i)).ok_or_else(|| {
            RuntimeError::unsupported(Diagnostic::global_error(format!(
                "the program called region {id}, which this compilation does not have (stale program object?)"
            )))
        })
    }

    // -----------------------------------------------------------------------------------------
    // Regions

    /// Runs a compute region, or an enter/exit data, update or wait directive.
    pub fn region(&mut self, id: i32, args: &[YosegiArg]) -> Result<(), RuntimeError> {
        self.run_region(id, args, |rt, region, kernels, args| rt.launch_kernels(region, kernels, args))
    }

    /// [`Runtime::region`] with `launch` running a compute region's kernels, between its data
    /// clauses' entry and exit (a step loop's region runs several steps there: `steps`); what
    /// `launch` returns comes back (the default for other regions).
    pub(super) fn run_region<T: Default>(
        &mut self,
        id: i32,
        args: &[YosegiArg],
        launch: impl FnOnce(&mut Runtime, &Region, &[Handle<Kernel>], &[YosegiArg]) -> Result<T, RuntimeError>,
    ) -> Result<T, RuntimeError> {
        let started = Instant::now();
        let result = self.run_region_timed(id, args, launch);
        self.note_busy(started.elapsed());
        result
    }

    fn run_region_timed<T: Default>(
        &mut self,
        id: i32,
        args: &[YosegiArg],
        launch: impl FnOnce(&mut Runtime, &Region, &[Handle<Kernel>], &[YosegiArg]) -> Result<T, RuntimeError>,
    ) -> Result<T, RuntimeError> {
        let module = self.module.clone();
        let region = Runtime::region_of(&module, id)?;
        check_args(region, args)?;
        // Device addresses of objects' copies (`acc_deviceptr`) stand for the objects.
        let args = &self.host_view_of_device_pointers(region, args);
        self.adopt_sized_args(region, args);
        let _range = nvtx::range(|| self.range_name(region, None));
        let mut launched = T::default();
        let ran = match &region.kind {
            RegionKind::Compute { kernels, data } => {
                self.count_devices_at(id)?;
                let started = self.clock();
                self.enter_data(region, data, args, Hold::Structured)?;
                self.record_runtime_call("region: data clauses in", started);
                launched = launch(self, region, kernels, args)?;
                let started = self.clock();
                let exited = self.exit_data(region, data, args, Hold::Structured, false);
                self.record_runtime_call("region: data clauses out", started);
                exited
            }
            RegionKind::Data { data } => self.enter_data(region, data, args, Hold::Structured),
            RegionKind::EnterData { data } => self.enter_data(region, data, args, Hold::Dynamic),
            RegionKind::ExitData { data, finalize } => self.exit_data(region, data, args, Hold::Dynamic, *finalize),
            RegionKind::Update { data } => self.update(region, data, args),
            RegionKind::Wait => self.synchronize_devices(),
            RegionKind::Runtime(directive) => self.runtime_directive(region, directive, args),
        };
        ran.and_then(|_| self.collect_device_reports())?;
        Ok(launched)
    }

    /// The program spent `time` in the runtime: what the exploration budget and the model's
    /// sampling cap are shares of.
    fn note_busy(&mut self, time: Duration) {
        self.variants.budget_mut().note_busy(time);
        if let Some(model) = &mut self.model {
            model.note_busy(time);
        }
    }

    /// What the devices learnt since the last look: launches that finished (their device
    /// times go into the stats), and a fault of a launch that had returned before it ran.
    fn collect_device_reports(&mut self) -> Result<(), RuntimeError> {
        for d in 0..self.devices.len() {
            for done in self.devices[d].take_completed() {
                self.stats.device.device_time_ns += done.device_time.as_nanos() as u64;
                if self.devices.len() > 1 {
                    self.stats.of_device(d).kernel_time += done.device_time;
                }
                self.stats.launches.entry(done.kernel).or_default().device_time += done.device_time;
            }
            if let Some(fault) = self.devices[d].take_fault() {
                return Err(self.fault_error(fault));
            }
        }
        Ok(())
    }

    /// Waits for every launch on every device, so that the stats hold their times and a fault
    /// of any of them is reported.
    pub fn synchronize_devices(&mut self) -> Result<(), RuntimeError> {
        for device in &mut self.devices {
            device.wait();
        }
        self.collect_device_reports()
    }

    /// For the entry points that return no error (host accesses, the end of the program): a
    /// fault found while they waited for the device ends the program here, reported as a
    /// region would report it, before the host computes with data the kernel never finished.
    fn exit_on_device_fault(&mut self) {
        if let Err(error) = self.collect_device_reports() {
            eprint!("{}", self.render_error(&error));
            unsafe extern "C" {
                fn fflush(stream: *mut std::ffi::c_void) -> std::ffi::c_int;
                fn _exit(status: std::ffi::c_int) -> !;
            }
            // The runtime's lock is held by our caller, and `exit` would run the program's
            // atexit handlers, which call back into the runtime: flush the C streams and end
            // without them.
            // SAFETY: plain C library calls; `fflush(NULL)` flushes every output stream.
            ranks::end_job_on_error(error.exit_code());
            unsafe {
                fflush(std::ptr::null_mut());
                _exit(error.exit_code())
            }
        }
    }

    /// At the end of the program: every launch finished, its time in the stats.
    pub fn settle_at_exit(&mut self) {
        for device in &mut self.devices {
            device.wait();
        }
        trace::write();
        self.exit_on_device_fault();
        let _ = self.collect_device_reports();
        self.store_for_explain();
        // The steady launch, the idle extra and the first launch, from the stats: one device, so
        // that each kernel's times are one GPU's.
        if self.config.stats != StatsMode::Off
            && self.devices.len() == 1
            && let Some(machine) = self.model.as_ref().and_then(|m| m.machine(0)).filter(|m| m.measured)
            && let Some(dir) = crate::runtime::cuda::cache::trusted_dir()
        {
            let pairs = model::observed::launch_residuals(&self.stats, machine);
            model::observed::record_launches(&dir, self.devices[0].model(), &pairs);
            let loads = model::observed::first_launch_residuals(&self.stats, machine);
            model::observed::record_first_launches(&dir, self.devices[0].model(), &loads);
        }
    }

    /// Leaves what this run learned for `explain` beside the tuning cache: the model's
    /// predictions (`model::record`, with `--stats`) and the number of devices chosen
    /// (`device_count::record`).
    pub fn store_for_explain(&self) {
        let predictions = self.model.as_ref().filter(|_| self.config.stats != StatsMode::Off);
        if predictions.is_none() && self.device_count.decision.is_none() {
            // Nothing to keep: the cache folder is not even looked up (nor made).
            return;
        }
        let Some(dir) = self.variants.cache_dir() else { return };
        if let Some(model) = predictions {
            model::record::store(dir, &model.records(&self.module, &self.stats));
        }
        if let Some(decision) = self.device_count.decision {
            let record = device_count::record::DeviceCountRecord {
                program: variants::program_hash(&self.module),
                device: self.devices.first().map(|d| d.model().to_string()).unwrap_or_default(),
                devices: self.devices.len(),
                decision,
            };
            device_count::record::store(dir, &record);
        }
    }

    /// The NVTX range of a region (`runtime::nvtx`): where it is in the user's code and what it
    /// runs (`jacobi2d.c:42 main_l42`, `jacobi2d.c:30 data`).
    fn range_name(&self, region: &Region, data_construct: Option<&str>) -> String {
        let location = self.sources.location(region.span);
        let file = location.file.file_name().map_or_else(|| location.file.display().to_string(), |f| f.to_string_lossy().into_owned());
        let what = match (&region.kind, data_construct) {
            (_, Some(edge)) => edge.to_string(),
            (RegionKind::Compute { kernels, .. }, None) => {
                kernels.iter().map(|&k| self.module.kernels[k].name.as_str()).collect::<Vec<_>>().join(" ")
            }
            (RegionKind::Data { .. }, None) => "data".to_string(),
            (RegionKind::EnterData { .. }, None) => "enter data".to_string(),
            (RegionKind::ExitData { .. }, None) => "exit data".to_string(),
            (RegionKind::Update { .. }, None) => "update".to_string(),
            (RegionKind::Wait, None) => "wait".to_string(),
            (RegionKind::Runtime(_), None) => "runtime call".to_string(),
        };
        format!("{file}:{} {what}", location.line)
    }

    /// Start of a structured `data` construct.
    pub fn data_enter(&mut self, id: i32, args: &[YosegiArg]) -> Result<(), RuntimeError> {
        let module = self.module.clone();
        let region = Runtime::region_of(&module, id)?;
        check_args(region, args)?;
        self.adopt_sized_args(region, args);
        match &region.kind {
            RegionKind::Data { data } | RegionKind::Compute { data, .. } => {
                // Open until the construct's exit (`data_exit`): its transfers and kernels
                // nest in it.
                nvtx::push(|| self.range_name(region, Some("data")));
                self.enter_data(region, data, args, Hold::Structured).and_then(|_| self.collect_device_reports())
            }
            _ => self.region(id, args),
        }
    }

    /// End of a structured `data` construct.
    pub fn data_exit(&mut self, id: i32, args: &[YosegiArg]) -> Result<(), RuntimeError> {
        let module = self.module.clone();
        let region = Runtime::region_of(&module, id)?;
        check_args(region, args)?;
        match &region.kind {
            RegionKind::Data { data } | RegionKind::Compute { data, .. } => {
                // The construct's own range (`data_enter`) closes after its exit's (dropped last).
                let _construct = nvtx::Range::closing_a_push();
                let _range = nvtx::range(|| self.range_name(region, Some("data exit")));
                self.exit_data(region, data, args, Hold::Structured, false).and_then(|_| self.collect_device_reports())
            }
            _ => Ok(()),
        }
    }

    /// Pointer args whose size the host knows (`sizeof` of an array object) name exact C
    /// objects: tracking them at their real extent keeps conservative launch sections from
    /// reaching past them into neighbouring variables.
    fn adopt_sized_args(&mut self, region: &Region, args: &[YosegiArg]) {
        for (host_arg, arg) in region.args.iter().zip(args) {
            if host_arg.kind != HostArgKind::Pointer || arg.ptr.is_null() || arg.size <= 0 {
                continue;
            }
            let (lo, hi) = (arg.ptr as u64, arg.ptr as u64 + arg.size as u64);
            // Already covered (the same object, or a row of a larger array): nothing to learn.
            if self.registry.find(lo).and_then(|s| self.registry.get(s)).is_some_and(|o| hi <= o.end()) {
                continue;
            }
            // Two live C objects never overlap partially: a tracked object reaching outside
            // this one belonged to a stack frame that has returned. Its memory now holds other
            // variables, so its device data is dropped, not copied back.
            for start in self.registry.overlapping(lo, hi) {
                let Some(object) = self.registry.get(start) else { continue };
                let partial = object.start < lo || object.end() > hi;
                if partial && !matches!(object.origin, Origin::Static | Origin::Malloc) {
                    let (s, e) = (object.start, object.end());
                    self.forget(s, e);
                }
            }
            // Only fails when it overlaps a static array or a heap block; the launch then
            // works within that object.
            let _ = self.ensure_object(lo, hi, &host_arg.c_expr, Origin::Sized, region.span);
        }
    }

    fn transfer_for(&mut self, object: u64) -> Option<(&mut coherence::CopyState, Transfer<'_>)> {
        let obj = self.registry.get_mut(object)?;
        let t = Transfer { host: obj.start as *mut u8, devices: &mut self.devices, stats: &mut self.stats, uploads: &mut self.uploads };
        Some((&mut obj.copies, t))
    }

    /// The entry actions of data clauses: `hold` says whose reference count they raise (a data
    /// construct's or an `enter data`'s).
    fn enter_data(
        &mut self,
        region: &Region,
        data: &[DataSection],
        args: &[YosegiArg],
        hold: Hold,
    ) -> Result<(), RuntimeError> {
        let device = self.current_device;
        for section in data {
            if section.rows.is_some() {
                self.enter_rows(region, section, args, hold)?;
                continue;
            }
            if names_device_memory(section.kind) || self.enter_without_copy(section, args).is_some() {
                continue;
            }
            let Some(range) = self.data_range(region, section, args)? else { continue };
            if section.kind == DataClauseKind::Present
                && !self.registry.get(range.object).is_some_and(|o| o.copies.is_present(device))
            {
                return Err(RuntimeError::fault(
                    Diagnostic::error(section.span, format!("present clause: `{}` is not on the device", section.name))
                        .with_help("put the array on the device first (an enclosing `data` region, `enter data copyin` or `acc_copyin`), or use `copyin`/`copy` instead of `present`"),
                ));
            }
            let Some((copies, mut t)) = self.transfer_for(range.object) else { continue };
            copies.enter_clause(section.kind, section.zero, device, hold, range.lo, range.hi, &mut t);
        }
        Ok(())
    }

    /// The exit actions of data clauses, lowering `hold`'s reference count (to zero for a
    /// dynamic one with `finalize`).
    fn exit_data(
        &mut self,
        region: &Region,
        data: &[DataSection],
        args: &[YosegiArg],
        hold: Hold,
        finalize: bool,
    ) -> Result<(), RuntimeError> {
        let device = self.current_device;
        // In reverse, so that nested clauses on one object unwind in order.
        for section in data.iter().rev() {
            if section.rows.is_some() {
                self.exit_rows(region, section, args, hold, finalize)?;
                continue;
            }
            if names_device_memory(section.kind) || directives::exits_without_copy(section.kind) {
                continue;
            }
            let Some(range) = self.data_range(region, section, args)? else { continue };
            let Some((copies, mut t)) = self.transfer_for(range.object) else { continue };
            if copies.exit_clause(section.kind, device, hold, finalize, range.lo, range.hi, &mut t) {
                self.after_release(range.object, device, section.dead_on_host);
            }
        }
        self.trim_device_caches();
        Ok(())
    }

    /// After `object`'s copy on `device` stopped being present (`CopyState::release`): it
    /// stays as a cache only for arrays whose lifetime the runtime sees (file-scope arrays, heap
    /// blocks); a stack array's copy would outlive its frame, so it is freed, saving what only
    /// it holds, or dropped when nothing can read that (`dead_on_host`).
    fn after_release(&mut self, object: u64, device: usize, dead_on_host: bool) {
        let cacheable = self.registry.get(object).is_some_and(|o| matches!(o.origin, Origin::Static | Origin::Malloc));
        if cacheable && !dead_on_host {
            return;
        }
        let Some((copies, mut t)) = self.transfer_for(object) else { return };
        // The copies split launches left on the other devices are caches too: they go with it.
        let others = (0..copies.devices.len()).filter(|&d| d != device && copies.has_device_copy(d) && !copies.is_present(d));
        let released: Vec<usize> = std::iter::once(device).chain(others).collect();
        for d in released {
            if dead_on_host {
                copies.drop_device_copy(d, &mut t);
            } else {
                copies.free_device_copy(d, &mut t);
            }
        }
    }

    /// Frees copies no region holds (caches: [`coherence::CopyState::release`]) on every device
    /// that has less than a quarter of its memory free ([`caches_to_free`]), saving what
    /// only they hold.
    fn trim_device_caches(&mut self) {
        // Device memory is checked only after a copy was allocated since the last check (the
        // query costs microseconds, and a wavefront exits hundreds of thousands of regions).
        if self.allocations_at_last_trim == Some(self.stats.device_copies_allocated) {
            return;
        }
        self.allocations_at_last_trim = Some(self.stats.device_copies_allocated);
        for device in 0..self.devices.len() {
            self.trim_caches_of(device);
        }
    }

    /// [`Runtime::trim_device_caches`] for one device.
    fn trim_caches_of(&mut self, device: usize) {
        let (total, free) = self.devices[device].memory();
        if free >= total / 4 {
            return;
        }
        let cached: Vec<(u64, u64)> = self
            .registry
            .starts()
            .into_iter()
            .filter_map(|start| {
                let copies = &self.registry.get(start)?.copies;
                (copies.has_device_copy(device) && !copies.is_present(device)).then_some((start, copies.len))
            })
            .collect();
        for start in caches_to_free(total, free, cached) {
            if let Some((copies, mut t)) = self.transfer_for(start) {
                copies.free_device_copy(device, &mut t);
            }
        }
    }

    fn update(&mut self, region: &Region, data: &[DataSection], args: &[YosegiArg]) -> Result<(), RuntimeError> {
        let device = self.current_device;
        for section in data {
            if section.rows.is_some() {
                self.enter_rows(region, section, args, Hold::Structured)?;
                continue;
            }
            let Some(range) = self.data_range(region, section, args)? else { continue };
            let Some((copies, mut t)) = self.transfer_for(range.object) else { continue };
            match section.kind {
                DataClauseKind::Device => copies.update_device(device, range.lo, range.hi, &mut t),
                _ => copies.make_host_valid(range.lo, range.hi, &mut t),
            }
        }
        Ok(())
    }

    /// The bytes a data clause names, registered as (part of) a tracked object. `None` for an
    /// empty section or a null pointer.
    fn data_range(
        &mut self,
        region: &Region,
        section: &DataSection,
        args: &[YosegiArg],
    ) -> Result<Option<ObjectRange>, RuntimeError> {
        let base = &args[section.base as usize];
        let ptr = base.ptr as u64;
        if ptr == 0 {
            return Ok(None);
        }
        let first = section.lo.map(|a| args[a as usize].i).unwrap_or(0);
        match section.len {
            Some(len_arg) => {
                let len = args[len_arg as usize].i;
                self.section_range(region, section.span, &section.name, ptr, first, Some(len), section.elem_size)
            }
            None if base.size > 0 => {
                let object = self.ensure_object(ptr, ptr + base.size as u64, &section.name, Origin::DataClause, section.span)?;
                let start = self.registry.get(object).expect("ensured").start;
                Ok(Some(ObjectRange { object, lo: ptr - start, hi: ptr + base.size as u64 - start }))
            }
            None => self.section_range(region, section.span, &section.name, ptr, first, None, section.elem_size),
        }
    }

    /// Elements `first..first + len` of `elem_size` bytes from `ptr` (to the end of the tracked
    /// object holding `ptr` when `len` is `None`), registered as (part of) a tracked object
    /// named `name`. `None` for an empty section or a null pointer.
    #[allow(clippy::too_many_arguments)]
    fn section_range(
        &mut self,
        region: &Region,
        span: Span,
        name: &str,
        ptr: u64,
        first: i64,
        len: Option<i64>,
        elem_size: u32,
    ) -> Result<Option<ObjectRange>, RuntimeError> {
        if ptr == 0 {
            return Ok(None);
        }
        let elem = elem_size.max(1) as i64;
        let (lo, hi) = match len {
            Some(len) => {
                if len <= 0 {
                    return Ok(None);
                }
                let lo = ptr.wrapping_add_signed(first.wrapping_mul(elem));
                (lo, lo.wrapping_add_signed(len.wrapping_mul(elem)))
            }
            None => match self.registry.find(ptr) {
                Some(start) => (ptr.wrapping_add_signed(first.wrapping_mul(elem)), self.registry.get(start).expect("found").end()),
                None => {
                    return Err(RuntimeError::unsupported(
                        Diagnostic::error(
                            span,
                            format!(
                                "cannot tell how many elements `{name}` has (in function `{}`): it points to memory that was not allocated with malloc, calloc, realloc, posix_memalign or aligned_alloc, nor is it a file-scope array",
                                region.function
                            ),
                        )
                        .with_help(format!("give the section's bounds in the clause (`{name}[0:n]`), or allocate the memory with malloc")),
                    ));
                }
            },
        };
        if hi <= lo {
            return Ok(None);
        }
        let object = self.ensure_object(lo, hi, name, Origin::DataClause, span)?;
        let start = self.registry.get(object).expect("ensured").start;
        Ok(Some(ObjectRange { object, lo: lo - start, hi: hi - start }))
    }

    /// The tracked object covering `lo..hi`, created (or grown, for objects whose extent was
    /// only inferred) as needed.
    fn ensure_object(&mut self, lo: u64, hi: u64, name: &str, origin: Origin, span: Span) -> Result<u64, RuntimeError> {
        if let Some(start) = self.registry.find(lo) {
            let object = self.registry.get(start).expect("found");
            if hi <= object.end() {
                return Ok(start);
            }
        }
        let overlapping = self.registry.overlapping(lo, hi);
        let (mut new_lo, mut new_hi) = (lo, hi);
        for &start in &overlapping {
            let object = self.registry.get(start).expect("found");
            // A sized object may absorb smaller views of itself (earlier launch extents).
            let absorbed = origin == Origin::Sized && lo <= object.start && object.end() <= hi;
            if object.origin.is_exact() && !absorbed {
                return Err(RuntimeError::fault(
                    Diagnostic::error(
                        span,
                        format!(
                            "`{}` covers bytes {}..{} of `{}`, which has only {} bytes",
                            name,
                            lo as i128 - start as i128,
                            hi as i128 - start as i128,
                            object.name,
                            object.len
                        ),
                    )
                    .with_help("check the section bounds in the data clause and the loop bounds of the kernel"),
                ));
            }
            new_lo = new_lo.min(object.start);
            new_hi = new_hi.max(object.end());
        }
        // Inferred extents grow: save what only devices hold, then replace them by the hull,
        // which every data region holding a part holds. Memory `acc_map_data` lent cannot grow.
        let device = self.current_device;
        for &start in &overlapping {
            let object = self.registry.get(start).expect("found");
            if object.copies.devices.iter().flatten().any(|c| c.mapped) {
                return Err(RuntimeError::fault(
                    Diagnostic::error(
                        span,
                        format!(
                            "`{}` reaches outside `{}` ({} bytes), which acc_map_data mapped to device memory of that size",
                            name, object.name, object.len
                        ),
                    )
                    .with_help("map the whole array with acc_map_data, or keep the accesses within the mapped bytes"),
                ));
            }
        }
        let (mut structured, mut dynamic) = (0u32, 0u32);
        for start in overlapping {
            if let Some((copies, mut t)) = self.transfer_for(start) {
                if let Some(copy) = copies.devices[device].as_ref() {
                    structured = structured.max(copy.structured);
                    dynamic = dynamic.max(copy.dynamic);
                }
                for d in 0..copies.devices.len() {
                    copies.free_device_copy(d, &mut t);
                }
            }
            self.registry.remove(start);
        }
        let devices = self.devices.len();
        self.registry.insert(new_lo, new_hi - new_lo, name, origin, devices);
        if structured > 0 || dynamic > 0 {
            let (copies, mut t) = self.transfer_for(new_lo).expect("inserted");
            copies.ensure_allocated(device, &mut t);
            if let Some(copy) = copies.devices[device].as_mut() {
                copy.structured = structured;
                copy.dynamic = dynamic;
            }
        }
        Ok(new_lo)
    }

    fn fault_error(&self, fault: KernelFault) -> RuntimeError {
        let location = self.sources.location(fault.span);
        let mut message = format!("kernel `{}` faulted: {}", fault.kernel, fault.message);
        if location.line > 0 {
            message = format!(
                "kernel `{}` faulted at {}:{}: {}",
                fault.kernel,
                location.file.display(),
                location.line,
                fault.message
            );
        }
        let mut d = Diagnostic::error(fault.span, message);
        if let Some(help) = fault.help {
            d = d.with_help(help);
        }
        RuntimeError::fault(d)
    }

    // -----------------------------------------------------------------------------------------
    // Host accesses and allocations

    /// The host is about to read (`abi::READ`) and/or write (`abi::WRITE`) the objects
    /// containing these addresses. Returns whether any of them is tracked.
    pub fn host_access(&mut self, ptrs: &[u64], modes: &[i32]) -> bool {
        self.host_access_bytes(ptrs, None, modes)
    }

    /// [`Runtime::host_access`] for `bytes[k]` bytes at `ptrs[k]`: only those bytes of the
    /// objects that contain them are made valid on the host, or stale on the devices when
    /// written (a host statement storing one element of a shared array).
    pub fn host_access_range(&mut self, ptrs: &[u64], bytes: &[u64], modes: &[i32]) -> bool {
        self.host_access_bytes(ptrs, Some(bytes), modes)
    }

    /// The two above: `bytes` `None` covers each whole object.
    fn host_access_bytes(&mut self, ptrs: &[u64], bytes: Option<&[u64]>, modes: &[i32]) -> bool {
        let mut tracked = false;
        // Timed only when tracked: untracked hooks run in the program's host loops.
        let mut started = None;
        for (k, (&ptr, &mode)) in ptrs.iter().zip(modes).enumerate() {
            let Some(start) = self.registry.find(ptr) else { continue };
            tracked = true;
            started.get_or_insert_with(Instant::now);
            let (copies, mut t) = self.transfer_for(start).expect("found");
            let (lo, hi) = match bytes.and_then(|b| b.get(k)) {
                Some(&n) => {
                    let lo = (ptr - start).min(copies.len);
                    (lo, lo.saturating_add(n).min(copies.len))
                }
                None => (0, copies.len),
            };
            if mode & abi::YOSEGI_WRITE != 0 {
                copies.host_writes(lo, hi, &mut t);
            } else {
                copies.make_host_valid(lo, hi, &mut t);
            }
        }
        // Memory the runtime does not track (a host scalar behind a pointer, most hooks in a
        // program's host loops) involves no device: nothing to report from them either.
        if tracked {
            self.exit_on_device_fault();
        }
        if let Some(started) = started {
            // Copies back wait for the device: its busy time, which the exploration budget
            // and the model's sampling cap are shares of.
            self.note_busy(started.elapsed());
        }
        tracked
    }

    pub fn host_access_all(&mut self) {
        for start in self.registry.starts_in_registration_order() {
            if let Some((copies, mut t)) = self.transfer_for(start) {
                let len = copies.len;
                copies.host_writes(0, len, &mut t);
            }
        }
        self.exit_on_device_fault();
    }

    /// Forgets whatever was tracked in `lo..hi` (memory being reused): device copies are dropped
    /// without saving them.
    fn forget(&mut self, lo: u64, hi: u64) {
        for start in self.registry.overlapping(lo, hi) {
            if let Some((copies, mut t)) = self.transfer_for(start) {
                copies.discard_device_copies(&mut t);
            }
            self.registry.remove(start);
        }
    }

    /// Forgets objects in the stack below `frame`, an address in the runtime's own frame: every
    /// live frame of the program is above it, so what lies below belongs to functions that have
    /// returned. Their device copies must not be copied back over memory the stack now uses for
    /// something else, nor their extents clamp the arrays of later frames at the same address.
    pub fn forget_dead_stack_objects(&mut self, frame: u64) {
        let lowest = frame.saturating_sub(DEAD_STACK_WINDOW);
        for start in self.registry.overlapping(lowest, frame) {
            let Some(object) = self.registry.get(start) else { continue };
            // A file-scope array or a heap block is not in the stack, wherever the loader or
            // the allocator put it (a program's statics can lie beside a thread's stack).
            if object.origin.is_outside_the_stack() {
                continue;
            }
            if object.start >= lowest && object.end() <= frame {
                self.forget(object.start, object.end());
            }
        }
    }

    /// After a region: stack objects above `frame` (the runtime's frame; the program's live
    /// frames) that no data region holds get their host copies made valid. A stack array
    /// outlives nothing: once its function returns, its bytes belong to other variables, and
    /// a device copy holding the only current value could never be copied back safely.
    pub fn settle_stack_objects(&mut self, frame: u64) {
        let highest = frame.saturating_add(DEAD_STACK_WINDOW);
        for start in self.registry.overlapping(frame, highest) {
            if self.registry.get(start).is_some_and(|o| o.origin.is_outside_the_stack()) {
                continue;
            }
            let Some((copies, mut t)) = self.transfer_for(start) else { continue };
            if start < frame || copies.is_held() {
                continue;
            }
            let len = copies.len;
            copies.make_host_valid(0, len, &mut t);
        }
        self.exit_on_device_fault();
    }

    /// A new heap block (from the malloc wrappers).
    pub fn track_malloc(&mut self, ptr: u64, bytes: u64) {
        if ptr == 0 || bytes == 0 {
            return;
        }
        self.forget(ptr, ptr + bytes);
        let devices = self.devices.len();
        self.registry.insert(ptr, bytes, "heap block", Origin::Malloc, devices);
    }

    /// Before `realloc(ptr)`: the host copy must be complete for the C library to move it.
    pub fn before_realloc(&mut self, ptr: u64) {
        if let Some(start) = self.registry.find(ptr).filter(|&s| s == ptr) {
            let (copies, mut t) = self.transfer_for(start).expect("found");
            let len = copies.len;
            copies.make_host_valid(0, len, &mut t);
            copies.discard_device_copies(&mut t);
            self.registry.remove(start);
        }
        self.exit_on_device_fault();
    }

    /// `free(ptr)`: the block and its device copies are gone.
    pub fn track_free(&mut self, ptr: u64) {
        if let Some(start) = self.registry.find(ptr).filter(|&s| s == ptr) {
            let end = self.registry.get(start).expect("found").end();
            self.forget(start, end);
        }
    }

    /// A file-scope array of the program.
    pub fn register_static(&mut self, ptr: u64, bytes: u64, name: &str) {
        if ptr == 0 || bytes == 0 {
            return;
        }
        self.forget(ptr, ptr + bytes);
        let devices = self.devices.len();
        self.registry.insert(ptr, bytes, name, Origin::Static, devices);
    }
}

/// `deviceptr` and `use_device` name device addresses: nothing to enter or exit (a device
/// address of an object's copy stands for the object at the launch).
fn names_device_memory(kind: DataClauseKind) -> bool {
    matches!(kind, DataClauseKind::DevicePtr | DataClauseKind::UseDevice)
}

fn check_args(region: &Region, args: &[YosegiArg]) -> Result<(), RuntimeError> {
    if args.len() < region.args.len() {
        return Err(RuntimeError::unsupported(Diagnostic::error(
            region.span,
            format!(
                "region {} expects {} arguments but the program passed {}",
                region.id,
                region.args.len(),
                args.len()
            ),
        )));
    }
    Ok(())
}

/// Which cached copies (object start, bytes) to free, largest first, so that at least a
/// quarter of a device's `total` bytes are free again (all of them if that is not enough).
fn caches_to_free(total: u64, mut free: u64, mut cached: Vec<(u64, u64)>) -> Vec<u64> {
    cached.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut chosen = Vec::new();
    for (start, len) in cached {
        if free >= total / 4 {
            break;
        }
        chosen.push(start);
        free += len;
    }
    chosen
}

/// The memory format of the host scalar that arg `arg` points to (`HostArgKind::ScalarOut`),
/// for a value of type `ty`.
fn host_format(region: &Region, arg: u32, ty: ScalarType) -> ScalarType {
    match region.args.get(arg as usize).map(|a| a.kind) {
        Some(HostArgKind::ScalarOut(format)) => format,
        _ => ty,
    }
}

/// Folds each reduction's per-block partials, in block order, into its host variable. The two
/// parts of a complex `*` reduction fold together: `(a + bi)(c + di)`, each operation rounded
/// to the parts' type as C computes it.
fn fold_reductions(region: &Region, reductions: &[GridReduction], partials: &[Vec<u64>], args: &[YosegiArg]) {
    let target = |r: &GridReduction| (args[r.target_arg as usize].ptr as *mut u8, host_format(region, r.target_arg, r.ty));
    let mut n = 0;
    while n < reductions.len() {
        let r = &reductions[n];
        let pair = (r.op == ReductionOp::Mul && r.part == Some(ComplexPart::Real))
            .then(|| reductions.get(n + 1).filter(|i| i.part == Some(ComplexPart::Imag)))
            .flatten();
        let Some(imag) = pair else {
            let (ptr, format) = target(r);
            if !ptr.is_null() {
                // SAFETY: the host passed `&x` of a live scalar of this format (HostArgKind::ScalarOut).
                unsafe {
                    let mut acc = value::cast(format, r.ty, read_host_scalar(ptr, format));
                    for &p in &partials[n] {
                        acc = value::reduce(r.op, r.ty, acc, p);
                    }
                    write_host_scalar(ptr, format, value::cast(r.ty, format, acc));
                }
            }
            n += 1;
            continue;
        };
        let ((re_ptr, re_format), (im_ptr, im_format)) = (target(r), target(imag));
        if !re_ptr.is_null() && !im_ptr.is_null() {
            let ty = r.ty;
            // SAFETY: as above, one pointer per part.
            unsafe {
                let mut re = value::cast(re_format, ty, read_host_scalar(re_ptr, re_format));
                let mut im = value::cast(im_format, ty, read_host_scalar(im_ptr, im_format));
                for (&pr, &pi) in partials[n].iter().zip(&partials[n + 1]) {
                    (re, im) = value::complex_mul(ty, (re, im), (pr, pi));
                }
                write_host_scalar(re_ptr, re_format, value::cast(ty, re_format, re));
                write_host_scalar(im_ptr, im_format, value::cast(ty, im_format, im));
            }
        }
        n += 2;
    }
}

/// The launch value of `param` from its host arg.
fn param_value(region: &Region, param: &Param, args: &[YosegiArg]) -> ParamValue {
    let arg = &args[param.arg as usize];
    let host_kind = region.args.get(param.arg as usize).map(|a| a.kind).unwrap_or(HostArgKind::Int);
    match &param.kind {
        ParamKind::Array { .. } | ParamKind::RowTable { .. } => ParamValue::Pointer(arg.ptr as u64),
        ParamKind::Scalar(ty) => match host_kind {
            HostArgKind::Int if ty.is_float() => {
                ParamValue::Float(value::as_f64(value::cast(ScalarType::I64, *ty, arg.i as u64)))
            }
            HostArgKind::Int => ParamValue::Int(value::wrap_int(*ty, arg.i) as i64),
            HostArgKind::Float if ty.is_float() => ParamValue::Float(value::as_f64(value::from_f64(*ty, arg.f))),
            HostArgKind::Float => ParamValue::Int(value::cast(ScalarType::F64, *ty, arg.f.to_bits()) as i64),
            HostArgKind::Pointer => ParamValue::Pointer(arg.ptr as u64),
            // A scalar an earlier kernel of the region assigned: its value now, read through
            // its address (see the front end's `bind_scalars_assigned_earlier`).
            HostArgKind::ScalarOut(host_ty) if !arg.ptr.is_null() => {
                // SAFETY: the host passed `&x` of a live scalar of type `host_ty`.
                let raw = value::cast(host_ty, *ty, unsafe { read_host_scalar(arg.ptr as *const u8, host_ty) });
                if ty.is_float() { ParamValue::Float(value::as_f64(raw)) } else { ParamValue::Int(raw as i64) }
            }
            HostArgKind::ScalarOut(_) => ParamValue::Pointer(arg.ptr as u64),
        },
    }
}

/// # Safety
/// `ptr` points to a live, aligned host scalar of type `ty`.
unsafe fn read_host_scalar(ptr: *const u8, ty: ScalarType) -> u64 {
    let size = ty.size_bytes() as usize;
    // SAFETY: per the contract.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, size) };
    value::from_bytes(ty, bytes)
}

/// # Safety
/// As for [`read_host_scalar`], writable.
unsafe fn write_host_scalar(ptr: *mut u8, ty: ScalarType, raw: u64) {
    let size = ty.size_bytes() as usize;
    let bytes = value::to_bytes(ty, raw);
    // SAFETY: per the contract.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, size) };
}

/// Launch sections already computed, by kernel and the bit patterns of its param values
/// (the sections are a function of exactly those).
#[derive(Default)]
struct SectionsCache {
    entries: std::collections::HashMap<SectionsKey, Arc<Vec<ParamSections>>>,
    /// Each kernel's accesses, analysed once: a kernel launched with new values every time
    /// (a wavefront's plane number) only evaluates them.
    summaries: std::collections::HashMap<Handle<Kernel>, Arc<AccessSummary>>,
}

/// A kernel and the bit patterns of its param values (tagged by kind).
type SectionsKey = (Handle<Kernel>, Vec<(u8, u64)>);

impl SectionsCache {
    /// Entries kept before the cache starts over: enough for every launch of a time step
    /// whose kernels take a plane number (NPB LU's wavefronts: 4 kernels by 2 sweeps by about
    /// 480 hyperplanes at class C; BT's line solves: 3 by 162 planes), small enough (a few MB)
    /// that a loop whose sizes change at every launch does not grow it without bound.
    const CAPACITY: usize = 8192;

    fn key_of(values: &[ParamValue]) -> Vec<(u8, u64)> {
        values
            .iter()
            .map(|v| match *v {
                ParamValue::Int(i) => (0, i as u64),
                ParamValue::Float(f) => (1, f.to_bits()),
                ParamValue::Pointer(p) => (2, p),
            })
            .collect()
    }

    fn sections(&mut self, handle: Handle<Kernel>, kernel: &Kernel, values: &[ParamValue]) -> Arc<Vec<ParamSections>> {
        let key = (handle, SectionsCache::key_of(values));
        if let Some(found) = self.entries.get(&key) {
            return found.clone();
        }
        if self.entries.len() >= SectionsCache::CAPACITY {
            self.entries.clear();
        }
        let summary = self.summaries.entry(handle).or_insert_with(|| Arc::new(summarize(kernel))).clone();
        let computed = Arc::new(launch_sections_with(kernel, &summary, values));
        self.entries.insert(key, computed.clone());
        computed
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod rows_tests;

#[cfg(test)]
mod sections_cache_tests {
    use super::*;
    use crate::analysis::access::launch_sections;
    use crate::analysis::testing::{B, array_param, kernel as make_kernel, scalar_param};

    /// `b[i] = a[i + 1]` for `i < n`.
    fn shift_kernel() -> Kernel {
        let mut b = B::new();
        let i = b.loop_var("i");
        let zero = b.int(0);
        let n = b.param(0);
        let dim = b.dim(i, zero, n);
        let shifted = b.var_plus(i, 1);
        let load = b.load(1, vec![shifted]);
        let iv = b.local(i);
        let store = b.store(2, vec![iv], load);
        b.body.block = vec![store];
        let params = vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)];
        make_kernel("shift", params, vec![dim], b.body)
    }

    #[test]
    fn cached_sections_equal_the_analysis_and_follow_the_param_values() {
        let mut module = Module::default();
        let handle = module.kernels.append(shift_kernel());
        let kernel = &module.kernels[handle];
        let mut cache = SectionsCache::default();
        let values = |n: i64| vec![ParamValue::Int(n), ParamValue::Pointer(0x1000), ParamValue::Pointer(0x2000)];
        let first = cache.sections(handle, kernel, &values(100));
        assert_eq!(*first, launch_sections(kernel, &values(100)));
        assert_eq!(first[0].read, Section::Elements { lo: 1, hi: 101 });
        let again = cache.sections(handle, kernel, &values(100));
        assert!(Arc::ptr_eq(&first, &again), "the second launch with equal values is served from the cache");
        let other = cache.sections(handle, kernel, &values(50));
        assert_eq!(*other, launch_sections(kernel, &values(50)));
        assert_ne!(*other, *first, "other sizes get their own sections");
    }

    #[test]
    fn the_cache_starts_over_when_full() {
        let mut module = Module::default();
        let handle = module.kernels.append(shift_kernel());
        let kernel = &module.kernels[handle];
        let mut cache = SectionsCache::default();
        for n in 0..(SectionsCache::CAPACITY as i64 + 1) {
            cache.sections(handle, kernel, &[ParamValue::Int(n), ParamValue::Pointer(1), ParamValue::Pointer(2)]);
        }
        assert_eq!(cache.entries.len(), 1);
    }
}
