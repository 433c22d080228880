//! Counters of what the runtime and the device did: launches per kernel with time, global
//! memory transactions (32-byte sectors per warp access), shared-memory bank conflicts,
//! barriers, and host<->device transfers. `--stats` prints them at exit; tests and benchmarks
//! read [`Stats`] directly. The report ends with what measuring cost the run: the performance
//! model's sampling and timed exploration, each against its bound, and per kernel the launches
//! the model could not predict and why.
//!
//! On a GPU the device also reports, per kernel, its time from CUDA events, the bytes the access
//! analysis says its launches must move (hence an achieved bandwidth), and the time spent
//! getting it compiled (NVRTC, or the kernel cache); the program's transfers are timed too.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// What a device counted during one launch (summed over blocks).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceCounters {
    /// Distinct 32-byte sectors touched, summed over warps and memory instructions.
    pub global_transactions: u64,
    /// Distinct sectors each block touched over its whole run, those it read and those it
    /// wrote counted apart (as device memory moves them: a sector updated in place is read
    /// and written back), summed over blocks: what is left of `global_transactions` once a
    /// block's own reuse is served by its cache. Counted only for the performance model's
    /// sampled blocks (zero on the simulator device).
    pub block_sectors: u64,
    /// Sectors the L2 cache serves, summed over blocks: those a block's reads fetch past its
    /// share of the L1 cache (least recently used out first: `sim::cache`), and every sector
    /// written (the L1 cache writes through). Counted only for the performance model's
    /// sampled blocks.
    pub l2_sectors: u64,
    /// The requests those sectors go to L2 in: per warp access, the distinct 128-byte lines
    /// among them (a coalesced access asks for a few lines of four sectors, a strided one for
    /// a line per sector). Counted for the model's sampled blocks; the model's L2 term.
    pub l2_requests: u64,
    /// Elements loaded from global memory (one per active lane per load).
    pub global_loads: u64,
    /// Of those, the ones in warp loads that fetch a sector past the L1 cache (the block's
    /// share of it, as for `l2_sectors`): a thread waits for L2 or device memory on them.
    /// Counted only for the performance model's sampled blocks.
    pub far_loads: u64,
    /// The round trips to L2 or device memory a thread waits for, one after the other, in
    /// its loads (per active lane, like the loads): per iteration of a loop, one per two far
    /// loads (`sim::rounds::ITERATION_LOADS_A_ROUND`) or one per run of far loads between the
    /// warp's global stores, whichever is more (the kernel's body outside loops counts as one
    /// iteration), except in a loop whose iterations store nothing to global or shared memory
    /// and run no loop of their own, where the compiler issues the loads of a few iterations
    /// together (`sim::rounds::OVERLAPPED_ITERATIONS`) and a warp waits once per such group
    /// with a far load. Counted only for the model's sampled blocks.
    pub load_rounds: u64,
    /// Elements stored to global memory (atomics count as one load and one store).
    pub global_stores: u64,
    /// Warp-level shared-memory requests.
    pub shared_accesses: u64,
    /// Sum over shared requests of the conflict degree (1 = no conflict).
    pub bank_conflict_degree_sum: u64,
    /// The worst conflict degree seen.
    pub bank_conflict_max_degree: u64,
    /// The passes shared memory makes to serve the warp requests, summed: per request, the
    /// most distinct 4-byte words any bank holds among all the lanes' elements (32 consecutive
    /// doubles are two passes, though no half-warp conflicts; a broadcast is one).
    pub shared_wavefronts: u64,
    /// Barriers executed, counted once per block.
    pub barriers: u64,
    /// Floating-point arithmetic operations (`+ - * /` and comparisons) per active lane, on
    /// `float` and on `double` (and `long double`) operands.
    pub float_ops: u64,
    pub double_ops: u64,
    /// Calls of math functions (`sqrt`, `exp`, ...) per active lane.
    pub math_calls: u64,
    /// Of those, calls of functions that are an instruction or two (`fabs`, `fmin`, ...), and
    /// of `pow` (`ir::MathCost`).
    pub math_instructions: u64,
    pub math_pows: u64,
    /// Blocks launched (a small grid's blocks are narrowed and multiplied: `runtime::launch_shape`).
    pub blocks: u64,
    /// Kernel execution time measured on the device itself (CUDA events), in nanoseconds;
    /// zero on the simulator, which has no such clock.
    pub device_time_ns: u64,
    /// Time spent making the launch's kernel ready (NVRTC or the disk cache, and loading it);
    /// zero when it was already loaded.
    pub jit_time_ns: u64,
    /// Where the launch's kernel came from: already loaded, the disk cache, or compiled by
    /// NVRTC while the launch waited (`kernel_cache_misses`).
    pub kernel_cache_memory_hits: u64,
    pub kernel_cache_disk_hits: u64,
    pub kernel_cache_misses: u64,
    /// Compiled by NVRTC on a worker thread before the launch needed it (`cuda::jit`), and
    /// the time the worker took (off the program's path, not in `jit_time_ns`).
    pub kernel_worker_hits: u64,
    pub worker_jit_time_ns: u64,
    /// The executable's own cubin (`cuda::embedded`), and its PTX compiled by the driver.
    pub kernel_embedded_hits: u64,
    pub kernel_ptx_jits: u64,
    /// Launches that ran the prepared form of their kernel while a worker made their own
    /// specialised variant.
    pub kernel_prepared_stand_ins: u64,
}

impl DeviceCounters {
    /// The counts of `part` blocks scaled to `whole` blocks (rounded; the worst conflict degree
    /// and the device's times are not scaled: times are left out), `blocks` set to `whole`.
    pub fn scaled(&self, part: u64, whole: u64) -> DeviceCounters {
        let scale = |v: u64| if part == 0 { 0 } else { ((v as u128 * whole as u128 + part as u128 / 2) / part as u128) as u64 };
        DeviceCounters {
            global_transactions: scale(self.global_transactions),
            block_sectors: scale(self.block_sectors),
            l2_sectors: scale(self.l2_sectors),
            l2_requests: scale(self.l2_requests),
            global_loads: scale(self.global_loads),
            far_loads: scale(self.far_loads),
            load_rounds: scale(self.load_rounds),
            global_stores: scale(self.global_stores),
            shared_accesses: scale(self.shared_accesses),
            bank_conflict_degree_sum: scale(self.bank_conflict_degree_sum),
            bank_conflict_max_degree: self.bank_conflict_max_degree,
            shared_wavefronts: scale(self.shared_wavefronts),
            barriers: scale(self.barriers),
            float_ops: scale(self.float_ops),
            double_ops: scale(self.double_ops),
            math_calls: scale(self.math_calls),
            math_instructions: scale(self.math_instructions),
            math_pows: scale(self.math_pows),
            blocks: whole,
            ..DeviceCounters::default()
        }
    }

    pub fn add(&mut self, other: &DeviceCounters) {
        self.global_transactions += other.global_transactions;
        self.block_sectors += other.block_sectors;
        self.l2_sectors += other.l2_sectors;
        self.l2_requests += other.l2_requests;
        self.global_loads += other.global_loads;
        self.far_loads += other.far_loads;
        self.load_rounds += other.load_rounds;
        self.global_stores += other.global_stores;
        self.shared_accesses += other.shared_accesses;
        self.bank_conflict_degree_sum += other.bank_conflict_degree_sum;
        self.bank_conflict_max_degree = self.bank_conflict_max_degree.max(other.bank_conflict_max_degree);
        self.shared_wavefronts += other.shared_wavefronts;
        self.barriers += other.barriers;
        self.float_ops += other.float_ops;
        self.double_ops += other.double_ops;
        self.math_calls += other.math_calls;
        self.math_instructions += other.math_instructions;
        self.math_pows += other.math_pows;
        self.blocks += other.blocks;
        self.device_time_ns += other.device_time_ns;
        self.jit_time_ns += other.jit_time_ns;
        self.kernel_cache_memory_hits += other.kernel_cache_memory_hits;
        self.kernel_cache_disk_hits += other.kernel_cache_disk_hits;
        self.kernel_cache_misses += other.kernel_cache_misses;
        self.kernel_worker_hits += other.kernel_worker_hits;
        self.worker_jit_time_ns += other.worker_jit_time_ns;
        self.kernel_embedded_hits += other.kernel_embedded_hits;
        self.kernel_ptx_jits += other.kernel_ptx_jits;
        self.kernel_prepared_stand_ins += other.kernel_prepared_stand_ins;
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelLaunches {
    pub count: u64,
    /// Host time of the launch calls (compilation included): on a GPU the time to enqueue
    /// them, since a launch runs while the host goes on and its results are read later (the
    /// device's own time is `device_time`); on the simulator the whole run.
    pub time: Duration,
    /// Time on the device (CUDA events); zero on the simulator.
    pub device_time: Duration,
    /// Bytes the launches must read and write (each array param's read and write sections).
    pub bytes_moved: u64,
    /// Time getting the kernel's variants ready (see `DeviceCounters::jit_time_ns`).
    pub jit_time: Duration,
    /// Variants compiled with NVRTC, and variants read from the disk cache.
    pub compiled: u64,
    pub from_disk: u64,
    /// The performance model's predicted device time, summed over the launches it predicted
    /// (`runtime::model`; made when stats are on).
    pub predicted: Duration,
    pub predicted_launches: u64,
    /// Of `predicted`, what the launches' work keeps the device busy beyond the launch itself
    /// (`Prediction::busy_s`, summed).
    pub predicted_busy: Duration,
    /// Of the predicted launches, those the model found starting on an idle device
    /// (`model::Timing::Alone`), and the shares of the idle extra they pay, summed.
    pub predicted_alone: u64,
    pub predicted_idle_share: f64,
    /// Of the predicted launches, those that load the kernel's code (`Prediction::loads_code`),
    /// and what the device sees of the loads, summed (`Prediction::first_launch_s`).
    pub predicted_code_loads: u64,
    pub predicted_first_launch: Duration,
    /// What the device counted over these launches, and what the model counted for the
    /// launches it predicted.
    pub counters: DeviceCounters,
    pub predicted_counters: DeviceCounters,
    /// The model's last prediction, with its parts.
    pub last_prediction: Option<crate::runtime::model::Prediction>,
    /// The launches the model made no prediction for, by why, and the latest one's reason.
    pub unpredicted: BTreeMap<crate::runtime::model::Unpredicted, u64>,
    pub last_unpredicted: Option<crate::runtime::model::Unpredicted>,
}

impl KernelLaunches {
    /// What the model found the last predicted launch limited by.
    pub fn limited_by(&self) -> Option<&'static str> {
        self.last_prediction.as_ref().map(|p| p.bound.name())
    }

    /// Where the kernel's code came from, over its variants: `embedded cubin`, `embedded
    /// PTX (driver JIT)`, `NVRTC on a worker`, `disk cache`, `NVRTC, waited for`, joined by
    /// `+`, and how many launches ran the prepared form while their own variant was made;
    /// empty on the simulator.
    pub fn code_origin(&self) -> String {
        let c = &self.counters;
        let mut parts: Vec<String> = [
            (c.kernel_embedded_hits, "embedded cubin"),
            (c.kernel_ptx_jits, "embedded PTX (driver JIT)"),
            (c.kernel_worker_hits, "NVRTC on a worker"),
            (c.kernel_cache_disk_hits, "disk cache"),
            (c.kernel_cache_misses, "NVRTC, waited for"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| if n > 1 { format!("{what} x{n}") } else { what.to_string() })
        .collect();
        if c.worker_jit_time_ns > 0 {
            parts.push(format!("{:.1} ms on workers", c.worker_jit_time_ns as f64 / 1e6));
        }
        if c.kernel_prepared_stand_ins > 0 {
            parts.push(format!("{} launches on the prepared form", c.kernel_prepared_stand_ins));
        }
        parts.join(" + ")
    }

    /// Launches the model made no prediction for.
    pub fn unpredicted_launches(&self) -> u64 {
        self.unpredicted.values().sum()
    }

    /// What `--stats=json` says of the kernel's predictions: `predicted` when every launch has
    /// one, else why the latest launch without one has none (`unfinished`, `not sampled`, `not
    /// countable`); `None` when the model saw none of its launches.
    pub fn prediction_status(&self) -> Option<&'static str> {
        match self.last_unpredicted {
            Some(why) => Some(why.status()),
            None => (self.predicted_launches > 0).then_some("predicted"),
        }
    }

    /// Mean device time per launch in seconds, when the device timed them.
    pub fn mean_device_time(&self) -> Option<f64> {
        (self.count > 0 && !self.device_time.is_zero()).then(|| self.device_time.as_secs_f64() / self.count as f64)
    }

    /// Achieved bandwidth in GB/s (`bytes_moved` over the device time), when both are known.
    pub fn achieved_gbps(&self) -> Option<f64> {
        let seconds = self.device_time.as_secs_f64();
        (seconds > 0.0 && self.bytes_moved > 0).then(|| self.bytes_moved as f64 / seconds / 1e9)
    }
}

/// How the runtime chose among a kernel's variants for one launch key (`runtime::variants`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantDecision {
    /// The source kernel.
    pub kernel: String,
    pub device: String,
    /// The launch's sizes (`n=4096,m=4096`).
    pub sizes: String,
    /// The grid kernel chosen.
    pub winner: String,
    /// Per candidate grid kernel: its measured device times.
    pub times: Vec<(String, Vec<Duration>)>,
    /// How the winner was found.
    pub how: Decided,
}

/// How a variant decision was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decided {
    /// Timed in this run's exploration.
    Measured,
    /// Taken from the tuning cache (measured in an earlier run).
    Cached,
    /// The performance model's choice, clear enough to need no timing (`variants::model_choice`).
    Predicted,
    /// The model's choice where every candidate is predicted shorter than
    /// `variants::SHORT_LAUNCH`: not worth the waits of timing.
    Short,
    /// Taken untimed once the run's exploration budget was spent (`variants::ExplorationBudget`):
    /// the model's choice where it predicted every candidate (`by_model`), else the plain
    /// variant (or the unfused launches).
    Budget { by_model: bool },
}

/// Per source kernel with several variants: which ran how often, and how the choice was made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VariantUse {
    /// Launches per grid kernel name.
    pub runs: BTreeMap<String, u64>,
    /// Device times of the exploration launches, per grid kernel name.
    pub timed: BTreeMap<String, Vec<Duration>>,
    pub decisions: Vec<VariantDecision>,
    /// Variants the model left out of an exploration (predicted too slow to time), with
    /// their predicted time and the fastest prediction, in seconds.
    pub left_out: Vec<(String, f64, f64)>,
}

/// What one device did, when a program runs on several (`--gpus`): its launches, their time
/// on the device, and the bytes it received from and sent to the host and received from the
/// other devices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceTraffic {
    pub launches: u64,
    /// Device time of its launches (CUDA events; zero on the simulator).
    pub kernel_time: Duration,
    pub bytes_from_host: u64,
    pub bytes_to_host: u64,
    /// Bytes copied into this device's memory from another device's.
    pub peer_bytes_in: u64,
    pub peer_transfers_in: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferDirection {
    ToDevice,
    ToHost,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Per grid kernel name.
    pub launches: BTreeMap<String, KernelLaunches>,
    pub device: DeviceCounters,
    pub bytes_to_device: u64,
    pub transfers_to_device: u64,
    pub bytes_to_host: u64,
    pub transfers_to_host: u64,
    /// Wall time of the copies each way (copies are synchronous).
    pub time_to_device: Duration,
    pub time_to_host: Duration,
    /// Per source kernel that has several variants.
    pub variants: BTreeMap<String, VariantUse>,
    /// Per entry point of the runtime the program calls (`region`, `data enter`, ...): calls
    /// and the wall time spent in them, launches and transfers included. What a region spends
    /// beyond its launches' time is the runtime's own work.
    pub runtime_calls: RuntimeCalls,
    /// Device copies allocated (not printed: the runtime checks device memory only after it
    /// changed).
    pub device_copies_allocated: u64,
    /// Bytes copied from one device's memory to another's (peer to peer on GPUs), and copies.
    pub peer_bytes: u64,
    pub peer_transfers: u64,
    /// Wall time of the copies between devices (each waits for the work on both devices
    /// first, so this is an upper bound of the copying itself).
    pub peer_time: Duration,
    /// Per device, by index; grown as devices are seen (printed when there are several).
    pub per_device: Vec<DeviceTraffic>,
    /// Launches split over several devices, and launches that could have been but ran on one
    /// device because their parts would write the same memory (or write it irregularly).
    pub distributed_launches: u64,
    pub undistributed_launches: u64,
    /// Launches that could have been split but move too few bytes to gain
    /// (`runtime::distribute::DEFAULT_MIN_SPLIT_BYTES`).
    pub small_launches: u64,
    /// The last launch the performance model kept on one device (`distribute::SplitRule::Model`),
    /// with its predicted time whole and split, in seconds.
    pub kept_whole_by_model: Option<(String, f64, f64)>,
    /// The choice between all devices and one for the program's repeating cycle of regions
    /// (`runtime::device_count`): one device or not, and the typical cycle each way.
    pub device_count: Option<super::device_count::Decision>,
    /// Parts of split launches whose interior ran while their halo came in
    /// (`runtime::distribute::overlap_split`).
    pub overlapped_parts: u64,
    /// What the performance model's sampling cost (`runtime::model`), and timed exploration
    /// (`runtime::variants::ExplorationBudget`), and the run's time since the runtime started
    /// that their shares are of: filled in for the report at exit.
    pub model_sampling: Option<crate::runtime::model::SamplingCost>,
    pub exploration: Option<crate::runtime::variants::ExplorationCost>,
    pub elapsed: Option<Duration>,
}

/// Per entry point of the runtime ([`Stats::runtime_calls`]): calls and wall time, in the
/// order first seen. A launch records some ten of them, so each is found by a short scan of
/// names that are mostly the same `&'static str` (a pointer comparison) rather than by a
/// tree's string comparisons. Past the first few thousand calls the times are estimates from
/// a sample of them (`runtime::call_clock`), and `sampled` says so.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RuntimeCalls {
    calls: Vec<(&'static str, u64, Duration)>,
    pub sampled: bool,
}

impl RuntimeCalls {
    pub fn add(&mut self, entry: &'static str, time: Duration) {
        let calls = &mut self.calls;
        let found = calls.iter().position(|(name, ..)| std::ptr::eq(*name, entry)).or_else(|| calls.iter().position(|(name, ..)| *name == entry));
        match found {
            Some(i) => {
                calls[i].1 += 1;
                calls[i].2 += time;
            }
            None => calls.push((entry, 1, time)),
        }
    }
    /// Every entry point with its calls and time, by name.
    pub fn sorted(&self) -> Vec<(&'static str, u64, Duration)> {
        let mut all = self.calls.clone();
        all.sort_by_key(|(name, ..)| *name);
        all
    }
}

impl Stats {
    /// `kernel`'s entry, made the first time (its name copied then only: this runs at every
    /// launch).
    fn launch_entry(&mut self, kernel: &str) -> &mut KernelLaunches {
        if !self.launches.contains_key(kernel) {
            self.launches.insert(kernel.to_string(), KernelLaunches::default());
        }
        self.launches.get_mut(kernel).expect("inserted above")
    }

    pub fn record_launch(&mut self, kernel: &str, time: Duration, counters: &DeviceCounters) {
        let entry = self.launch_entry(kernel);
        entry.count += 1;
        entry.time += time;
        entry.device_time += Duration::from_nanos(counters.device_time_ns);
        entry.jit_time += Duration::from_nanos(counters.jit_time_ns);
        entry.compiled += counters.kernel_cache_misses;
        entry.from_disk += counters.kernel_cache_disk_hits;
        entry.counters.add(counters);
        self.device.add(counters);
    }
    /// The model's prediction for one launch of `kernel`, run as `timing` says.
    pub fn record_prediction(&mut self, kernel: &str, prediction: &crate::runtime::model::Prediction, timing: crate::runtime::model::Timing) {
        let entry = self.launch_entry(kernel);
        entry.predicted += Duration::from_secs_f64(prediction.seconds);
        entry.predicted_launches += 1;
        entry.predicted_alone += u64::from(timing != crate::runtime::model::Timing::Queued);
        entry.predicted_idle_share += timing.idle_share();
        entry.predicted_code_loads += u64::from(prediction.loads_code);
        entry.predicted_first_launch += Duration::from_secs_f64(prediction.first_launch_s);
        entry.predicted_busy += Duration::from_secs_f64(prediction.busy_s());
        entry.predicted_counters.add(&prediction.work.counters);
        entry.last_prediction = Some(prediction.clone());
    }
    /// A launch of `kernel` the model made no prediction for, and why.
    pub fn record_unpredicted(&mut self, kernel: &str, why: crate::runtime::model::Unpredicted) {
        let entry = self.launch_entry(kernel);
        *entry.unpredicted.entry(why).or_default() += 1;
        entry.last_unpredicted = Some(why);
    }
    /// Adds the bytes one launch of `kernel` must move (see `KernelLaunches::bytes_moved`).
    pub fn record_bytes_moved(&mut self, kernel: &str, bytes: u64) {
        self.launch_entry(kernel).bytes_moved += bytes;
    }
    /// A launch of `kernel` (the source kernel) ran its variant `variant`.
    /// The model left `variant` of `kernel` out of an exploration.
    pub fn record_variant_left_out(&mut self, kernel: &str, variant: &str, predicted_s: f64, fastest_s: f64) {
        self.variants.entry(kernel.to_string()).or_default().left_out.push((variant.to_string(), predicted_s, fastest_s));
    }

    pub fn record_variant_run(&mut self, kernel: &str, variant: &str) {
        // Called at every launch: the names are copied only the first time.
        let runs = match self.variants.get_mut(kernel) {
            Some(v) => &mut v.runs,
            None => &mut self.variants.entry(kernel.to_string()).or_default().runs,
        };
        match runs.get_mut(variant) {
            Some(count) => *count += 1,
            None => {
                runs.insert(variant.to_string(), 1);
            }
        }
    }
    /// The device time of an exploration launch of `variant`.
    pub fn record_variant_time(&mut self, kernel: &str, variant: &str, time: Duration) {
        self.variants.entry(kernel.to_string()).or_default().timed.entry(variant.to_string()).or_default().push(time);
    }
    pub fn record_variant_decision(&mut self, decision: VariantDecision) {
        self.variants.entry(decision.kernel.clone()).or_default().decisions.push(decision);
    }
    pub fn record_runtime_call(&mut self, entry: &'static str, time: Duration) {
        self.runtime_calls.add(entry, time);
    }
    pub fn record_transfer_time(&mut self, direction: TransferDirection, time: Duration) {
        match direction {
            TransferDirection::ToDevice => self.time_to_device += time,
            TransferDirection::ToHost => self.time_to_host += time,
        }
    }
    /// Device `device`'s entry, created with the ones before it.
    pub fn of_device(&mut self, device: usize) -> &mut DeviceTraffic {
        if self.per_device.len() <= device {
            self.per_device.resize(device + 1, DeviceTraffic::default());
        }
        &mut self.per_device[device]
    }
    pub fn record_to_device(&mut self, device: usize, bytes: u64) {
        self.bytes_to_device += bytes;
        self.transfers_to_device += 1;
        self.of_device(device).bytes_from_host += bytes;
    }
    pub fn record_to_host(&mut self, device: usize, bytes: u64) {
        self.bytes_to_host += bytes;
        self.transfers_to_host += 1;
        self.of_device(device).bytes_to_host += bytes;
    }
    /// `bytes` copied from device `from`'s memory to device `to`'s.
    pub fn record_peer(&mut self, _from: usize, to: usize, bytes: u64) {
        self.peer_bytes += bytes;
        self.peer_transfers += 1;
        let entry = self.of_device(to);
        entry.peer_bytes_in += bytes;
        entry.peer_transfers_in += 1;
    }
    /// A launch on device `device` (a part of a distributed launch, or a whole one).
    pub fn record_device_launch(&mut self, device: usize, counters: &DeviceCounters) {
        let entry = self.of_device(device);
        entry.launches += 1;
        entry.kernel_time += Duration::from_nanos(counters.device_time_ns);
    }
    pub fn total_launches(&self) -> u64 {
        self.launches.values().map(|l| l.count).sum()
    }

    /// The `--stats` table.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "=== yosegi stats ===");
        let _ = writeln!(out, "{:<40} {:>10} {:>14}", "kernel", "launches", "host (ms)");
        for (name, l) in &self.launches {
            let _ = writeln!(out, "{:<40} {:>10} {:>14.3}", name, l.count, l.time.as_secs_f64() * 1e3);
        }
        let d = &self.device;
        let rows: [(&str, u64); 15] = [
            ("global memory transactions (32B sectors)", d.global_transactions),
            ("global loads (elements)", d.global_loads),
            ("global stores (elements)", d.global_stores),
            ("shared memory accesses (warp requests)", d.shared_accesses),
            ("shared bank conflict degree (sum)", d.bank_conflict_degree_sum),
            ("shared bank conflict degree (max)", d.bank_conflict_max_degree),
            ("barriers (per block)", d.barriers),
            ("float operations", d.float_ops),
            ("double operations", d.double_ops),
            ("math function calls", d.math_calls),
            ("blocks launched", d.blocks),
            ("host->device bytes", self.bytes_to_device),
            ("host->device transfers", self.transfers_to_device),
            ("device->host bytes", self.bytes_to_host),
            ("device->host transfers", self.transfers_to_host),
        ];
        for (label, value) in rows {
            let _ = writeln!(out, "{:<42} {:>22}", label, value);
        }
        if let Some(d) = self.device_count {
            let ms = |t: Duration| t.as_secs_f64() * 1e3;
            let one = match d.one {
                Some(one) => format!("{:.3} ms on one", ms(one)),
                None => format!("one device not tried: its kernels alone take {:.3} ms a cycle", ms(d.work)),
            };
            let _ = writeln!(
                out,
                "device count chosen: {} (a cycle of the program's regions took {:.3} ms split over the devices, {one})",
                if d.one_device { "one device" } else { "all devices" },
                ms(d.split)
            );
        }
        if let Some((kernel, whole, split)) = &self.kept_whole_by_model {
            let _ = writeln!(
                out,
                "  (the model keeps a launch whole when splitting is predicted slower: last {kernel}, {:.1} us whole against {:.1} us split)",
                whole * 1e6,
                split * 1e6
            );
        }
        if self.per_device.len() > 1 {
            self.render_per_device(&mut out);
        }
        if d.device_time_ns > 0 {
            let _ = writeln!(out, "{:<42} {:>22.3}", "kernel time on the device (ms)", d.device_time_ns as f64 / 1e6);
            self.render_device_rows(&mut out);
        }
        for (entry, calls, time) in self.runtime_calls.sorted() {
            let label = format!("runtime: {entry} calls / ms");
            let _ = writeln!(out, "{:<52} {:>10} {:>11.3}", label, calls, time.as_secs_f64() * 1e3);
        }
        if self.runtime_calls.sampled {
            let _ = writeln!(
                out,
                "runtime: calls all counted; times past the first {} parts estimated from one part in {}, drawn at random",
                crate::runtime::call_clock::TIMED_IN_FULL,
                crate::runtime::call_clock::SAMPLE_EVERY
            );
        }
        self.render_variants(&mut out);
        self.render_predictions(&mut out);
        self.render_costs(&mut out);
        out
    }

    /// What measuring cost the run: the model's sampling and timed exploration, each with its
    /// share of the run and its cap.
    fn render_costs(&self, out: &mut String) {
        let ms = |t: Duration| t.as_secs_f64() * 1e3;
        let of_run = |t: Duration| match self.elapsed {
            Some(run) if !run.is_zero() => format!("{:.2}% of the run's {:.3} s", t.as_secs_f64() / run.as_secs_f64() * 100.0, run.as_secs_f64()),
            _ => "of a run of unknown length".to_string(),
        };
        let cap = |share: f64, allowance: Option<Duration>| match allowance {
            Some(a) => format!("at most {}% of the run + {} ms", share * 100.0, ms(a)),
            None => "not capped".to_string(),
        };
        if let Some(c) = &self.model_sampling {
            let deadline = match c.deadline {
                Some(d) => format!("{} ms a sample", ms(d)),
                None => "no deadline".to_string(),
            };
            let _ = writeln!(
                out,
                "model sampling: {:.3} ms in {} samples ({}; {} unfinished, {} not sampled for time; {}, {deadline})",
                ms(c.spent),
                c.samples,
                of_run(c.spent),
                c.unfinished,
                c.not_sampled,
                cap(crate::runtime::model::SAMPLING_SHARE, c.allowance),
            );
        }
        if let Some(e) = &self.exploration {
            let _ = writeln!(
                out,
                "exploration: {:.3} ms timed ({}; {}), {} choices decided untimed when the budget ran out",
                ms(e.spent),
                of_run(e.spent),
                cap(crate::runtime::variants::EXPLORATION_SHARE, e.allowance),
                e.decided_by_budget,
            );
        }
    }

    /// The model's predicted mean time per launch beside the measured one, per kernel it
    /// predicted.
    fn render_predictions(&self, out: &mut String) {
        let predicted: Vec<(&String, &KernelLaunches)> =
            self.launches.iter().filter(|(_, l)| l.predicted_launches > 0 || l.unpredicted_launches() > 0).collect();
        if predicted.is_empty() {
            return;
        }
        let _ = writeln!(out, "{:<40} {:>14} {:>14} {:>9} {:>14}", "model (per launch)", "predicted (us)", "measured (us)", "error", "limited by");
        for (name, l) in &predicted {
            let measured_us = l.mean_device_time().map(|m| m * 1e6);
            let measured = measured_us.map_or_else(|| "-".to_string(), |m| format!("{m:.1}"));
            if l.predicted_launches == 0 {
                let status = l.prediction_status().unwrap_or("-");
                let _ = writeln!(out, "{:<40} {:>14} {:>14} {:>9} {:>14}", name, "-", measured, "-", status);
                continue;
            }
            let mean_predicted = l.predicted.as_secs_f64() * 1e6 / l.predicted_launches as f64;
            let error = measured_us.map_or_else(|| "-".to_string(), |m| format!("{:+.0}%", (mean_predicted - m) / m * 100.0));
            let _ = writeln!(out, "{:<40} {:>14.1} {:>14} {:>9} {:>14}", name, mean_predicted, measured, error, l.limited_by().unwrap_or("-"));
        }
        let deadline = self.model_sampling.and_then(|c| c.deadline);
        for (name, l) in predicted {
            for (&why, &n) in &l.unpredicted {
                let _ = writeln!(out, "  {name}: {n} of {} launches not predicted: {}", l.count.max(n), unpredicted_text(why, deadline));
            }
        }
    }

    /// The same facts as [`Stats::render`], as JSON (`--stats=json`), for tools: per kernel
    /// its launches, times (seconds), the model's prediction, bytes and compile time; the
    /// device's counters; the transfers; per device its traffic; the variant choices.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let secs = |t: Duration| t.as_secs_f64();
        let kernels: Vec<serde_json::Value> = self
            .launches
            .iter()
            .map(|(name, l)| {
                let mut kernel = json!({
                    "name": name,
                    "launches": l.count,
                    "wall_s": secs(l.time),
                    "device_s": secs(l.device_time),
                    "mean_device_s": l.mean_device_time(),
                    "predicted_s": secs(l.predicted),
                    "predicted_launches": l.predicted_launches,
                    "predicted_busy_s": secs(l.predicted_busy),
                    "predicted_alone": l.predicted_alone,
                    "predicted_idle_share": l.predicted_idle_share,
                    "predicted_code_loads": l.predicted_code_loads,
                    "predicted_first_launch_s": secs(l.predicted_first_launch),
                    "mean_predicted_s": (l.predicted_launches > 0).then(|| secs(l.predicted) / l.predicted_launches as f64),
                    "limited_by": l.limited_by(),
                    "bytes_moved": l.bytes_moved,
                    "jit_s": secs(l.jit_time),
                    "compiled": l.compiled,
                    "from_disk": l.from_disk,
                    "counters": counters_json(&l.counters),
                    "predicted_counters": counters_json(&l.predicted_counters),
                    "last_prediction": l.last_prediction.as_ref().map(|p| json!({
                        "seconds": p.seconds,
                        "launch_s": p.launch_s,
                        "memory_s": p.memory_s,
                        "cache_s": p.cache_s,
                        "l2_s": p.l2_s,
                        "compute_s": p.compute_s,
                        "shared_s": p.shared_s,
                        "latency_s": p.latency_s,
                        "barrier_s": p.barrier_s,
                        "occupancy": p.occupancy,
                        "dram_bytes": p.dram_bytes,
                        "blocks": p.work.blocks,
                        "threads_per_block": p.work.threads_per_block,
                        "shared_bytes_per_block": p.work.shared_bytes_per_block,
                        "registers_per_thread": p.work.registers_per_thread,
                        "section_bytes": p.work.dram_bytes,
                        "resident_bytes": p.work.resident_bytes,
                        "time_steps": p.work.time_steps,
                        "counters": counters_json(&p.work.counters),
                    })),
                });
                // Where its code came from, and why launches have no prediction (beside the
                // rest: one `json!` of every field passes the macro's recursion limit).
                kernel["code"] = json!(l.code_origin());
                kernel["prediction"] = json!(l.prediction_status());
                kernel["unpredicted_launches"] =
                    serde_json::Value::Object(l.unpredicted.iter().map(|(why, n)| (why.key().to_string(), json!(n))).collect());
                kernel
            })
            .collect();
        let d = &self.device;
        let devices: Vec<serde_json::Value> = self
            .per_device
            .iter()
            .map(|t| {
                json!({
                    "launches": t.launches,
                    "kernel_s": secs(t.kernel_time),
                    "bytes_from_host": t.bytes_from_host,
                    "bytes_to_host": t.bytes_to_host,
                    "peer_bytes_in": t.peer_bytes_in,
                    "peer_transfers_in": t.peer_transfers_in,
                })
            })
            .collect();
        let variants: serde_json::Map<String, serde_json::Value> = self
            .variants
            .iter()
            .map(|(kernel, u)| {
                let decisions: Vec<serde_json::Value> = u
                    .decisions
                    .iter()
                    .map(|d| {
                        json!({
                            "device": d.device,
                            "sizes": d.sizes,
                            "winner": d.winner,
                            "from_cache": d.how == Decided::Cached,
                            "by_model": matches!(d.how, Decided::Predicted | Decided::Short | Decided::Budget { by_model: true }),
                            "by_budget": matches!(d.how, Decided::Budget { .. }),
                        })
                    })
                    .collect();
                let timed: serde_json::Map<String, serde_json::Value> =
                    u.timed.iter().map(|(v, ts)| (v.clone(), json!(ts.iter().map(|t| t.as_secs_f64()).collect::<Vec<_>>()))).collect();
                let left_out: Vec<serde_json::Value> =
                    u.left_out.iter().map(|(v, p, f)| json!({"variant": v, "predicted_s": p, "fastest_predicted_s": f})).collect();
                (kernel.clone(), json!({"runs": u.runs, "decisions": decisions, "timed_s": timed, "left_out_by_model": left_out}))
            })
            .collect();
        json!({
            "kernels": kernels,
            "counters": counters_json(d),
            "transfers": {
                "bytes_to_device": self.bytes_to_device,
                "transfers_to_device": self.transfers_to_device,
                "to_device_s": secs(self.time_to_device),
                "bytes_to_host": self.bytes_to_host,
                "transfers_to_host": self.transfers_to_host,
                "to_host_s": secs(self.time_to_host),
                "peer_bytes": self.peer_bytes,
                "peer_transfers": self.peer_transfers,
                "peer_s": secs(self.peer_time),
            },
            "devices": devices,
            "distributed_launches": self.distributed_launches,
            "device_count": self.device_count.map(|d| json!({
                "one_device": d.one_device,
                "split_cycle_ms": d.split.as_secs_f64() * 1e3,
                "one_device_cycle_ms": d.one.map(|t| t.as_secs_f64() * 1e3),
                "split_cycle_kernel_ms": d.work.as_secs_f64() * 1e3,
            })),
            "undistributed_launches": self.undistributed_launches,
            "small_launches": self.small_launches,
            "overlapped_parts": self.overlapped_parts,
            "variants": variants,
            "elapsed_s": self.elapsed.map(secs),
            "model_sampling": self.model_sampling.map(|c| json!({
                "sampling_s": secs(c.spent),
                "share_of_run": self.elapsed.filter(|e| !e.is_zero()).map(|e| c.spent.as_secs_f64() / e.as_secs_f64()),
                "samples": c.samples,
                "unfinished": c.unfinished,
                "not_sampled": c.not_sampled,
                "deadline_s": c.deadline.map(secs),
                "cap_share": c.allowance.map(|_| crate::runtime::model::SAMPLING_SHARE),
                "cap_allowance_s": c.allowance.map(secs),
            })),
            "exploration": self.exploration.map(|e| json!({
                "timed_s": secs(e.spent),
                "share_of_run": self.elapsed.filter(|t| !t.is_zero()).map(|t| e.spent.as_secs_f64() / t.as_secs_f64()),
                "decided_by_budget": e.decided_by_budget,
                "cap_share": e.allowance.map(|_| crate::runtime::variants::EXPLORATION_SHARE),
                "cap_allowance_s": e.allowance.map(secs),
            })),
        })
    }

    /// The devices' own rows, when the program ran on several.
    fn render_per_device(&self, out: &mut String) {
        let rows: [(&str, u64); 6] = [
            ("peer bytes (device to device)", self.peer_bytes),
            ("peer transfers", self.peer_transfers),
            ("launches split over the devices", self.distributed_launches),
            ("launches kept on one device", self.undistributed_launches),
            ("launches too small to gain from a split", self.small_launches),
            ("parts run beside their halo exchange", self.overlapped_parts),
        ];
        for (label, value) in rows {
            let _ = writeln!(out, "{:<42} {:>22}", label, value);
        }
        let seconds = self.peer_time.as_secs_f64();
        let _ = writeln!(out, "{:<42} {:>22.3}", "peer copy time, waits included (ms)", seconds * 1e3);
        if seconds > 0.0 {
            let _ = writeln!(out, "{:<42} {:>22.2}", "peer GB/s, waits included", self.peer_bytes as f64 / seconds / 1e9);
        }
        let _ = writeln!(
            out,
            "{:<8} {:>10} {:>14} {:>16} {:>16} {:>16}",
            "device", "launches", "kernel (ms)", "host->dev bytes", "dev->host bytes", "peer bytes in"
        );
        for (n, d) in self.per_device.iter().enumerate() {
            let _ = writeln!(
                out,
                "{:<8} {:>10} {:>14.3} {:>16} {:>16} {:>16}",
                n,
                d.launches,
                d.kernel_time.as_secs_f64() * 1e3,
                d.bytes_from_host,
                d.bytes_to_host,
                d.peer_bytes_in
            );
        }
    }

    /// Per kernel with several variants: launches per variant, then each choice with the times
    /// behind it.
    fn render_variants(&self, out: &mut String) {
        if self.variants.is_empty() {
            return;
        }
        let ms = |t: &Duration| format!("{:.3}", t.as_secs_f64() * 1e3);
        let _ = writeln!(out, "variant choice (launches per variant; device times in ms):");
        for (kernel, use_) in &self.variants {
            let runs: Vec<String> = use_.runs.iter().map(|(v, n)| format!("{v} x{n}")).collect();
            let _ = writeln!(out, "  {kernel}: {}", runs.join(", "));
            for (variant, times) in &use_.timed {
                let times: Vec<String> = times.iter().map(ms).collect();
                let _ = writeln!(out, "    timed {variant}: {}", times.join(", "));
            }
            for (variant, predicted, fastest) in &use_.left_out {
                let _ = writeln!(
                    out,
                    "    not timed {variant}: the model predicts {:.1} us, over {}x the fastest candidate's {:.1} us",
                    predicted * 1e6,
                    super::variants::MODEL_FILTER,
                    fastest * 1e6
                );
            }
            for d in &use_.decisions {
                let times: Vec<String> = d
                    .times
                    .iter()
                    .map(|(v, ts)| match ts.iter().min() {
                        Some(best) => format!("{v} best {}, typical {} of {}", ms(best), ms(&super::variants::typical_sample(ts)), ts.len()),
                        None => format!("{v} -"),
                    })
                    .collect();
                let how = match d.how {
                    Decided::Measured => ", measured",
                    Decided::Cached => ", measured in an earlier run",
                    Decided::Predicted => "predicted clearly fastest by the model, not timed",
                    Decided::Short => "the model's choice: every candidate is predicted under 100 us a launch, not worth timing",
                    Decided::Budget { by_model: true } => "; the exploration budget was spent: the model's choice, not timed",
                    Decided::Budget { by_model: false } => "; the exploration budget was spent: the plain one, not timed",
                };
                let _ = writeln!(
                    out,
                    "    {} on {} ({}): {} ({}{how})",
                    if d.how == Decided::Cached { "cached winner" } else { "winner" },
                    d.device,
                    d.sizes,
                    d.winner,
                    times.join(", "),
                );
            }
        }
    }

    /// The rows only a real device has: per-kernel device time and bandwidth, compilation and
    /// the kernel cache, transfer times.
    fn render_device_rows(&self, out: &mut String) {
        let d = &self.device;
        let ms = |t: Duration| t.as_secs_f64() * 1e3;
        let _ = writeln!(
            out,
            "{:<40} {:>12} {:>12} {:>14} {:>10} {:>12}",
            "kernel (on the device)", "device (ms)", "mean (us)", "moved (MB)", "GB/s", "jit (ms)"
        );
        for (name, l) in &self.launches {
            let mean_us = if l.count > 0 { l.device_time.as_secs_f64() * 1e6 / l.count as f64 } else { 0.0 };
            let gbps = l.achieved_gbps().map(|g| format!("{g:.1}")).unwrap_or_else(|| "-".into());
            let _ = writeln!(
                out,
                "{:<40} {:>12.3} {:>12.1} {:>14.3} {:>10} {:>12.1}",
                name,
                ms(l.device_time),
                mean_us,
                l.bytes_moved as f64 / 1e6,
                gbps,
                ms(l.jit_time)
            );
        }
        let compiled: Vec<String> = self
            .launches
            .iter()
            .filter_map(|(name, l)| {
                let origin = l.code_origin();
                (!origin.is_empty()).then(|| format!("{name} {:.1} ({origin})", ms(l.jit_time)))
            })
            .collect();
        let rate = |bytes: u64, t: Duration| {
            if t.is_zero() { "-".to_string() } else { format!("{:.2}", bytes as f64 / t.as_secs_f64() / 1e9) }
        };
        let rows: [(&str, String); 12] = [
            ("jit time, launches waiting for code (ms)", format!("{:.1}", d.jit_time_ns as f64 / 1e6)),
            ("kernels compiled (NVRTC), waited for", d.kernel_cache_misses.to_string()),
            ("kernels compiled (NVRTC) on workers", d.kernel_worker_hits.to_string()),
            ("kernels embedded in the executable", d.kernel_embedded_hits.to_string()),
            ("kernels from embedded PTX (driver JIT)", d.kernel_ptx_jits.to_string()),
            ("launches on a prepared form", d.kernel_prepared_stand_ins.to_string()),
            ("kernels from the disk cache", d.kernel_cache_disk_hits.to_string()),
            ("launches of an already loaded kernel", d.kernel_cache_memory_hits.to_string()),
            ("host->device time (ms)", format!("{:.3}", ms(self.time_to_device))),
            ("host->device GB/s", rate(self.bytes_to_device, self.time_to_device)),
            ("device->host time (ms)", format!("{:.3}", ms(self.time_to_host))),
            ("device->host GB/s", rate(self.bytes_to_host, self.time_to_host)),
        ];
        for (label, value) in rows {
            let _ = writeln!(out, "{:<42} {:>22}", label, value);
        }
        if !compiled.is_empty() {
            let _ = writeln!(out, "jit time per kernel (ms): {}", compiled.join(", "));
        }
    }
}

/// Why a launch has no prediction, as `--stats` says it (`deadline`: the model's deadline per
/// sample, when it has one).
fn unpredicted_text(why: crate::runtime::model::Unpredicted, deadline: Option<Duration>) -> String {
    use crate::runtime::model::Unpredicted;
    match why {
        Unpredicted::Deadline => match deadline {
            Some(d) => format!("unfinished: its sample ran past the deadline of {} ms", d.as_secs_f64() * 1e3),
            None => "unfinished: its sample ran past its deadline".to_string(),
        },
        Unpredicted::Statements => {
            format!("unfinished: a sampled block ran past {} statements", crate::runtime::model::sample::STATEMENT_BUDGET)
        }
        Unpredicted::TimeBudget => "not sampled: time budget (the model's sampling time was spent)".to_string(),
        Unpredicted::Shapes => format!("not sampled: {} shapes of the kernel were", crate::runtime::model::MAX_SAMPLED_SHAPES),
        Unpredicted::Uncountable => "not countable over the host's arrays (row tables, computed addresses)".to_string(),
    }
}

/// The counts [`counters_json`] wrote (the times left out); a count the JSON lacks (stats
/// written before it was counted) reads 0.
pub fn counters_from_json(v: &serde_json::Value) -> DeviceCounters {
    let n = |key: &str| v[key].as_u64().unwrap_or(0);
    DeviceCounters {
        global_transactions: n("global_transactions"),
        block_sectors: n("block_sectors"),
        l2_sectors: n("l2_sectors"),
        l2_requests: n("l2_requests"),
        global_loads: n("global_loads"),
        far_loads: n("far_loads"),
        load_rounds: n("load_rounds"),
        global_stores: n("global_stores"),
        shared_accesses: n("shared_accesses"),
        bank_conflict_degree_sum: n("bank_conflict_degree_sum"),
        bank_conflict_max_degree: n("bank_conflict_max_degree"),
        shared_wavefronts: n("shared_wavefronts"),
        barriers: n("barriers"),
        float_ops: n("float_ops"),
        double_ops: n("double_ops"),
        math_calls: n("math_calls"),
        math_instructions: n("math_instructions"),
        math_pows: n("math_pows"),
        blocks: n("blocks"),
        ..DeviceCounters::default()
    }
}

/// The work a kernel's `last_prediction` in the JSON stats was made from; `None` where the
/// object lacks the launch's shape.
pub fn launch_work_from_json(v: &serde_json::Value) -> Option<crate::runtime::model::LaunchWork> {
    Some(crate::runtime::model::LaunchWork {
        blocks: v["blocks"].as_u64()?,
        threads_per_block: v["threads_per_block"].as_u64()? as u32,
        shared_bytes_per_block: v["shared_bytes_per_block"].as_u64()?,
        registers_per_thread: v["registers_per_thread"].as_u64()? as u32,
        counters: counters_from_json(&v["counters"]),
        dram_bytes: v["section_bytes"].as_u64()?,
        resident_bytes: serde_json::from_value(v["resident_bytes"].clone()).ok(),
        time_steps: v["time_steps"].as_u64().unwrap_or(1) as u32,
    })
}

/// A device's counts as JSON (device and compile times in seconds).
pub fn counters_json(d: &DeviceCounters) -> serde_json::Value {
    serde_json::json!({
        "global_transactions": d.global_transactions,
        "block_sectors": d.block_sectors,
        "l2_sectors": d.l2_sectors,
        "l2_requests": d.l2_requests,
        "global_loads": d.global_loads,
        "far_loads": d.far_loads,
        "load_rounds": d.load_rounds,
        "global_stores": d.global_stores,
        "shared_accesses": d.shared_accesses,
        "bank_conflict_degree_sum": d.bank_conflict_degree_sum,
        "bank_conflict_max_degree": d.bank_conflict_max_degree,
        "shared_wavefronts": d.shared_wavefronts,
        "barriers": d.barriers,
        "float_ops": d.float_ops,
        "double_ops": d.double_ops,
        "math_calls": d.math_calls,
        "math_instructions": d.math_instructions,
        "math_pows": d.math_pows,
        "blocks": d.blocks,
        "device_s": d.device_time_ns as f64 / 1e9,
        "jit_s": d.jit_time_ns as f64 / 1e9,
        "kernels_compiled_waited": d.kernel_cache_misses,
        "kernels_compiled_on_workers": d.kernel_worker_hits,
        "worker_jit_s": d.worker_jit_time_ns as f64 / 1e9,
        "kernels_embedded": d.kernel_embedded_hits,
        "kernels_embedded_ptx": d.kernel_ptx_jits,
        "kernels_from_disk": d.kernel_cache_disk_hits,
        "launches_on_prepared_forms": d.kernel_prepared_stand_ins,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entry points are counted by name, also when two copies of a name are not the same
    /// `&'static str`, and printed sorted by name whatever order they came in.
    #[test]
    fn runtime_calls_count_by_name_and_print_sorted() {
        let mut calls = RuntimeCalls::default();
        let copy: &'static str = String::from("region").leak();
        calls.add("update", Duration::from_millis(1));
        calls.add("region", Duration::from_millis(2));
        calls.add(copy, Duration::from_millis(3));
        calls.add("update", Duration::from_millis(4));
        assert_eq!(calls.sorted(), vec![("region", 2, Duration::from_millis(5)), ("update", 2, Duration::from_millis(5))]);
        let mut stats = Stats::default();
        stats.runtime_calls = calls;
        let text = stats.render();
        let region = text.find("runtime: region calls").expect("the region line");
        let update = text.find("runtime: update calls").expect("the update line");
        assert!(region < update, "{text}");
        assert!(!text.contains("estimated"), "every call timed: {text}");
        stats.runtime_calls.sampled = true;
        assert!(stats.render().contains("times past the first 4096 parts estimated from one part in 16"));
    }

    #[test]
    fn counts_read_back_as_written() {
        let c = DeviceCounters {
            global_transactions: 1,
            block_sectors: 2,
            l2_sectors: 3,
            l2_requests: 14,
            global_loads: 4,
            far_loads: 16,
            load_rounds: 17,
            global_stores: 5,
            shared_accesses: 6,
            bank_conflict_degree_sum: 7,
            bank_conflict_max_degree: 8,
            shared_wavefronts: 15,
            barriers: 9,
            float_ops: 10,
            double_ops: 11,
            math_calls: 12,
            math_instructions: 20,
            math_pows: 21,
            blocks: 13,
            ..DeviceCounters::default()
        };
        assert_eq!(counters_from_json(&counters_json(&c)), c);
        // Stats written before a count existed read it as 0.
        assert_eq!(counters_from_json(&serde_json::json!({"global_loads": 4})), DeviceCounters { global_loads: 4, ..DeviceCounters::default() });
    }

    #[test]
    fn launches_are_summed_per_kernel() {
        let mut stats = Stats::default();
        let c = DeviceCounters { global_transactions: 4, bank_conflict_max_degree: 2, ..Default::default() };
        stats.record_launch("k", Duration::from_millis(1), &c);
        stats.record_launch("k", Duration::from_millis(2), &c);
        stats.record_to_device(0, 100);
        assert_eq!(stats.launches["k"].count, 2);
        assert_eq!(stats.device.global_transactions, 8);
        assert_eq!(stats.device.bank_conflict_max_degree, 2);
        assert!(stats.render().contains("host->device bytes"));
        // The simulator's table has no device rows.
        assert!(!stats.render().contains("GB/s"));
        // One device: no per-device table.
        assert!(!stats.render().contains("peer bytes"));
    }

    #[test]
    fn several_devices_get_their_own_rows() {
        let mut stats = Stats::default();
        stats.record_to_device(0, 100);
        stats.record_peer(0, 1, 40);
        stats.record_peer(0, 1, 2);
        stats.record_to_host(1, 8);
        assert_eq!(stats.peer_bytes, 42);
        assert_eq!(stats.per_device[1].peer_bytes_in, 42);
        assert_eq!(stats.per_device[1].bytes_to_host, 8);
        assert_eq!(stats.per_device[0].bytes_from_host, 100);
        let text = stats.render();
        assert!(text.lines().any(|l| l.starts_with("peer bytes (device to device)") && l.ends_with(" 42")), "{text}");
        assert!(text.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["1", "0", "0.000", "0", "8", "42"]), "{text}");
    }

    /// A kernel the model could not predict says why, in the text and in the JSON; the costs
    /// of measuring are reported with their shares of the run.
    #[test]
    fn launches_without_a_prediction_and_the_costs_of_measuring_are_reported() {
        use crate::runtime::model::{SamplingCost, Unpredicted};
        let mut stats = Stats::default();
        for _ in 0..3 {
            stats.record_launch("long", Duration::from_millis(1), &DeviceCounters::default());
            stats.record_unpredicted("long", Unpredicted::Deadline);
        }
        stats.record_launch("late", Duration::from_millis(1), &DeviceCounters::default());
        stats.record_unpredicted("late", Unpredicted::TimeBudget);
        stats.record_launch("fine", Duration::from_millis(1), &DeviceCounters::default());
        stats.elapsed = Some(Duration::from_secs(2));
        stats.model_sampling = Some(SamplingCost {
            spent: Duration::from_millis(40),
            samples: 2,
            unfinished: 1,
            not_sampled: 1,
            deadline: Some(Duration::from_millis(20)),
            allowance: Some(Duration::from_millis(50)),
        });
        stats.exploration = Some(crate::runtime::variants::ExplorationCost { spent: Duration::from_millis(10), decided_by_budget: 3, allowance: Some(Duration::from_millis(20)) });
        assert_eq!(stats.launches["long"].prediction_status(), Some("unfinished"));
        assert_eq!(stats.launches["late"].prediction_status(), Some("not sampled"));
        assert_eq!(stats.launches["fine"].prediction_status(), None, "the model saw none of its launches");

        let text = stats.render();
        assert!(text.lines().any(|l| l.starts_with("long ") && l.trim_end().ends_with("unfinished")), "{text}");
        assert!(text.contains("  long: 3 of 3 launches not predicted: unfinished: its sample ran past the deadline of 20 ms"), "{text}");
        assert!(text.contains("  late: 1 of 1 launches not predicted: not sampled: time budget"), "{text}");
        assert!(text.contains("model sampling: 40.000 ms in 2 samples (2.00% of the run's 2.000 s; 1 unfinished, 1 not sampled for time; at most 2% of the run + 50 ms, 20 ms a sample)"), "{text}");
        assert!(text.contains("exploration: 10.000 ms timed (0.50% of the run's 2.000 s; at most 2% of the run + 20 ms), 3 choices decided untimed when the budget ran out"), "{text}");

        let json = stats.to_json();
        let kernel = |name: &str| json["kernels"].as_array().unwrap().iter().find(|k| k["name"] == name).cloned().unwrap();
        assert_eq!(kernel("long")["prediction"], "unfinished");
        assert_eq!(kernel("long")["unpredicted_launches"]["deadline"], 3);
        assert_eq!(kernel("late")["unpredicted_launches"]["time_budget"], 1);
        assert_eq!(kernel("fine")["prediction"], serde_json::Value::Null);
        assert_eq!(json["model_sampling"]["sampling_s"], 0.04);
        assert_eq!(json["model_sampling"]["share_of_run"], 0.02);
        assert_eq!(json["model_sampling"]["deadline_s"], 0.02);
        assert_eq!(json["exploration"]["timed_s"], 0.01);
        assert_eq!(json["exploration"]["decided_by_budget"], 3);
        assert_eq!(json["exploration"]["cap_share"], crate::runtime::variants::EXPLORATION_SHARE);
    }

    #[test]
    fn device_launches_give_bandwidth_and_compile_rows() {
        let mut stats = Stats::default();
        let first = DeviceCounters { device_time_ns: 2_000_000, jit_time_ns: 300_000_000, kernel_cache_misses: 1, ..Default::default() };
        let again = DeviceCounters { device_time_ns: 2_000_000, kernel_cache_memory_hits: 1, ..Default::default() };
        stats.record_launch("k", Duration::from_millis(300), &first);
        stats.record_bytes_moved("k", 4_000_000);
        stats.record_launch("k", Duration::from_millis(2), &again);
        stats.record_bytes_moved("k", 4_000_000);
        stats.record_to_device(0, 1_000_000);
        stats.record_transfer_time(TransferDirection::ToDevice, Duration::from_millis(1));
        let k = &stats.launches["k"];
        assert_eq!(k.device_time, Duration::from_millis(4));
        assert_eq!(k.bytes_moved, 8_000_000);
        assert_eq!(k.compiled, 1);
        // 8 MB in 4 ms.
        assert!((k.achieved_gbps().unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(stats.device.kernel_cache_memory_hits, 1);
        let text = stats.render();
        assert!(text.contains("jit time, launches waiting for code (ms)"), "{text}");
        assert!(text.contains("jit time per kernel (ms): k 300.0 (NVRTC, waited for)"), "{text}");
        assert!(text.lines().any(|l| l.starts_with("host->device GB/s") && l.ends_with("1.00")), "{text}");
    }
}
