//! Launches of fused chains (`opt::fusion`): when a compute region reaches the first kernel of
//! a [`Fusion`], whether its fused grid kernel runs in place of the chain's kernels, and that
//! launch.
//!
//! # The rule
//!
//! The fused kernel is *usable* when the runtime has one device (several devices split the
//! chain's kernels instead: `distribute`), `YOSEGI_FUSION=off` is not set, no kernel of the
//! chain binds a table of row pointers or the program's own device memory, the arrays the
//! chain writes share no memory with any other array it names (the fusion pass assumed
//! distinct arrays; the runtime sees the addresses), and its exchange arrays fit in the
//! device's shared memory. Then:
//!
//! * a fusion made by `--fusion on` (`Fusion::forced`) always runs fused;
//! * otherwise, on a device that cannot time (the simulator), the estimate decides (below 1
//!   runs fused);
//! * on a GPU, per fusion and launch sizes, the first launches alternate unfused and fused,
//!   each timed from an idle device to the end of its last kernel (so the unfused side pays its
//!   launches and preparations, as the program would), two of each, more while the two are
//!   close (`variants::fusion_needs_sample`); then the faster runs, fused only when its typical
//!   time is lower by more than `variants::FUSION_WIN_MARGIN`. The samples spend the run's
//!   exploration budget (`variants::ExplorationBudget`); once it is spent, a comparison not
//!   yet made runs unfused from then on, untimed.
//!
//! The grid kernel that leaves out intermediates' global stores (`Fusion::without_stores`:
//! scratch arrays nothing outside the chain reads, which the fusion pass proved) runs instead
//! of the plain fused one whenever there is one.
//!
//! Coherence: the chain's kernels' USE and DEF sections, each from its own analysis, are made
//! current one kernel after the other, each kernel's writes marked before the next is prepared
//! (the next reads them on the device, where the fused kernel leaves them), exactly as the
//! unfused launches would.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::ir::{Fusion, Handle, Kernel, Module, ParamKind, Region};

use super::coherence::IntervalSet;
use super::abi::YosegiArg;
use super::device::Launch;
use super::stats::{Decided, VariantDecision};
use super::launch::StartedKernel;
use super::{Runtime, RuntimeError, check_overlaps, distribute, fold_reductions};
use super::variants::{fusion_needs_sample, fusion_wins, settled_typical};


/// When a timed sample began, and how many exploring launches had run by then.
#[derive(Clone, Copy)]
pub(super) struct SampleStart {
    at: Instant,
    exploring: u64,
}

/// The integer args of kernels `kernels`: what makes their launches comparable.
pub(super) fn launch_sizes(module: &Module, kernels: &[Handle<Kernel>], args: &[YosegiArg]) -> Vec<i64> {
    kernels
        .iter()
        .flat_map(|&k| module.kernels[k].params.iter())
        .filter(|p| matches!(p.kind, ParamKind::Scalar(t) if !t.is_float()))
        .map(|p| args[p.arg as usize].i)
        .collect()
}

/// What the runtime knows of the program's fusions.
#[derive(Default)]
pub(super) struct FusionState {
    /// The fusion whose chain starts at each kernel.
    at: HashMap<Handle<Kernel>, usize>,
    /// `YOSEGI_FUSION=off`.
    disabled: bool,
    /// Per fusion and launch sizes (the members' integer args): the times measured so far and
    /// the choice once made.
    explorations: HashMap<(usize, Vec<i64>), Exploration>,
}

#[derive(Default)]
struct Exploration {
    unfused: Vec<Duration>,
    fused: Vec<Duration>,
    fuse: Option<bool>,
}

impl FusionState {
    pub(super) fn new(fusions: &[Fusion]) -> FusionState {
        let disabled = std::env::var("YOSEGI_FUSION").is_ok_and(|v| v.trim().eq_ignore_ascii_case("off"));
        FusionState { at: fusions.iter().enumerate().map(|(n, f)| (f.members[0], n)).collect(), disabled, explorations: HashMap::new() }
    }
}

/// A chain's data made current for its one grid kernel ([`Runtime::prepare_chain`]).
pub(super) struct PreparedChain {
    /// The region's args with every member's whole space.
    pub args: Vec<YosegiArg>,
    /// Region arg -> the object it was bound to.
    pub bound_objects: Vec<(u32, u64)>,
    /// Bytes the grid kernel must move in device memory ([`ChainTraffic`]).
    pub bytes_moved: u64,
    /// The byte ranges it reads there, and those it writes.
    pub reads: Vec<(u64, u64)>,
    pub writes: Vec<(u64, u64)>,
}

/// What a chain's grid kernel reads and writes in device memory, member by member: a member
/// reads from device memory only what no earlier member read or wrote (the chain hands
/// earlier members' values on in shared memory, and reads an array's element once), and the
/// grid kernel writes only the arrays it stores (a variant without the intermediates' stores
/// writes none of them). Summing the members' sections counted NPB BT's `y_solve` chain, fused
/// without its intermediates' stores, at 1476 MB where it moves 940 (bench/NOTES.md run 39).
#[derive(Default)]
struct ChainTraffic {
    /// Byte ranges earlier members read or wrote.
    reached: IntervalSet,
    reads: IntervalSet,
    writes: IntervalSet,
}

impl ChainTraffic {
    /// One member's byte ranges: those it reads, and those it writes with whether the grid
    /// kernel stores them.
    fn add_member(&mut self, reads: &[(u64, u64)], writes: &[((u64, u64), bool)]) {
        for &(lo, hi) in reads {
            for (a, b) in self.reached.missing(lo, hi) {
                self.reads.insert(a, b);
            }
        }
        for &((lo, hi), stored) in writes {
            if stored {
                self.writes.insert(lo, hi);
            }
        }
        for &(lo, hi) in reads.iter().chain(writes.iter().map(|(r, _)| r)) {
            self.reached.insert(lo, hi);
        }
    }

    fn bytes(&self) -> u64 {
        self.reads.ranges().iter().chain(self.writes.ranges()).map(|(lo, hi)| hi - lo).sum()
    }
}

/// What this launch of a chain does.
enum Plan {
    Unfused { timed: Option<(usize, Vec<i64>)> },
    Fused { timed: Option<(usize, Vec<i64>)> },
}

impl Runtime {
    /// Runs the kernels of a compute region in order, each fused chain that starts among them
    /// as the choice says. A kernel's results (a reduction's value) are read after the next
    /// kernel started, unless that one reads them: the devices run it while the host waits
    /// for the values, folds them and goes on (a solver's residual kernel followed by its
    /// copy kernel no longer leaves the devices idle between the two).
    pub(super) fn launch_kernels(&mut self, region: &Region, kernels: &[Handle<Kernel>], args: &[YosegiArg]) -> Result<(), RuntimeError> {
        let module = self.module.clone();
        let mut unread: Option<StartedKernel<'_>> = None;
        let mut next = 0;
        while next < kernels.len() {
            let fusion = self.fusions.at.get(&kernels[next]).copied().filter(|&f| {
                let members = &self.module.fusions[f].members;
                kernels[next..].starts_with(members)
            });
            let Some(f) = fusion else {
                let kernel = &module.kernels[kernels[next]];
                if let Some(earlier) = unread.take_if(|u| !self.may_start_before_results(region, u, kernel, args)) {
                    self.finish_kernel(region, earlier, args)?;
                }
                let started = self.start_kernel(&module, region, kernels[next], args);
                if let Some(earlier) = unread.take() {
                    self.finish_kernel(region, earlier, args)?;
                }
                unread = Some(started?);
                next += 1;
                continue;
            };
            if let Some(earlier) = unread.take() {
                self.finish_kernel(region, earlier, args)?;
            }
            let module = self.module.clone();
            let members = &module.fusions[f].members;
            match self.plan_chain(f, args) {
                Plan::Fused { timed } => {
                    let started = self.timing_start(timed.is_some());
                    if self.launch_fused(region, f, args)? {
                        self.timing_end(f, timed, started, true);
                    } else {
                        // Not usable for these arrays (aliasing, row tables, shared memory):
                        // exploring it further would only time the unfused launches again.
                        if let Some(exploration) = timed.and_then(|key| self.fusions.explorations.get_mut(&key)) {
                            exploration.fuse = Some(false);
                        }
                        self.launch_each(region, members, args)?;
                    }
                }
                Plan::Unfused { timed } => {
                    let started = self.timing_start(timed.is_some());
                    self.launch_each(region, members, args)?;
                    self.timing_end(f, timed, started, false);
                }
            }
            next += members.len();
        }
        match unread {
            Some(last) => self.finish_kernel(region, last, args),
            None => Ok(()),
        }
    }

    /// The chain's kernels, each its own launch.
    fn launch_each(&mut self, region: &Region, members: &[Handle<Kernel>], args: &[YosegiArg]) -> Result<(), RuntimeError> {
        members.iter().try_for_each(|&k| self.launch_kernel(region, k, args))
    }

    fn plan_chain(&mut self, f: usize, args: &[YosegiArg]) -> Plan {
        let fusion = &self.module.fusions[f];
        if self.fusions.disabled || self.devices.len() > 1 {
            return Plan::Unfused { timed: None };
        }
        if fusion.forced {
            return Plan::Fused { timed: None };
        }
        // The simulator gives no device time: the estimate decides there.
        if self.devices[self.current_device].name() == "sim" {
            return if fusion.estimated_ratio < 1.0 { Plan::Fused { timed: None } } else { Plan::Unfused { timed: None } };
        }
        let sizes = launch_sizes(&self.module, &fusion.members, args);
        let key = (f, sizes);
        let exploration = self.fusions.explorations.entry(key.clone()).or_default();
        if exploration.fuse.is_none() && !self.variants.budget().has_room() {
            // The budget is spent: the unfused launches, the program as written (the model
            // predicts launches, not the unfused side's preparations).
            exploration.fuse = Some(false);
            let grid = &self.module.grid_kernels[fusion.grid].name;
            let times = [("unfused", &exploration.unfused), (grid.as_str(), &exploration.fused)]
                .into_iter()
                .filter(|(_, t)| !t.is_empty())
                .map(|(name, t)| (name.to_string(), t.clone()))
                .collect();
            let decision = VariantDecision {
                kernel: grid.clone(),
                device: self.devices[self.current_device].model().to_string(),
                sizes: String::new(),
                winner: "unfused".to_string(),
                times,
                how: Decided::Budget { by_model: false },
            };
            self.variants.budget_mut().decided();
            self.stats.record_variant_decision(decision);
            return Plan::Unfused { timed: None };
        }
        match exploration.fuse {
            Some(true) => Plan::Fused { timed: None },
            Some(false) => Plan::Unfused { timed: None },
            None if exploration.unfused.len() <= exploration.fused.len() => Plan::Unfused { timed: Some(key) },
            None => Plan::Fused { timed: Some(key) },
        }
    }

    /// When `timed`: waits for the device to be idle and returns when it was.
    pub(super) fn timing_start(&mut self, timed: bool) -> Option<SampleStart> {
        if !timed {
            return None;
        }
        self.devices[self.current_device].wait();
        Some(SampleStart { at: Instant::now(), exploring: self.variants.exploring_launches() })
    }

    /// The time of a sample begun at `start`, once the device is idle again; `None` when a
    /// kernel's variant exploration ran during it (its timed candidates and waits are not what
    /// the launches will cost once it has ended: on the H100, heat-3d's unfused step timed
    /// 0.38 ms so, against 0.23 ms when settled, and a slower step kernel won). Kept or not,
    /// the sample's time is spent from the exploration budget.
    pub(super) fn timing_stop(&mut self, start: SampleStart) -> Option<Duration> {
        self.devices[self.current_device].wait();
        let time = start.at.elapsed();
        self.variants.budget_mut().charge(time);
        (self.variants.exploring_launches() == start.exploring).then_some(time)
    }

    fn timing_end(&mut self, f: usize, timed: Option<(usize, Vec<i64>)>, started: Option<SampleStart>, fused: bool) {
        let (Some(key), Some(started)) = (timed, started) else { return };
        let Some(time) = self.timing_stop(started) else { return };
        let Some(exploration) = self.fusions.explorations.get_mut(&key) else { return };
        if fused { exploration.fused.push(time) } else { exploration.unfused.push(time) }
        let (unfused, fused) = (&exploration.unfused, &exploration.fused);
        if fusion_needs_sample(unfused, settled_typical(fused)) || fusion_needs_sample(fused, settled_typical(unfused)) {
            return;
        }
        let fuse = fusion_wins(fused, unfused);
        exploration.fuse = Some(fuse);
        let fusion = &self.module.fusions[f];
        let grid = &self.module.grid_kernels[fusion.grid];
        let decision = VariantDecision {
            kernel: grid.name.clone(),
            device: self.devices[self.current_device].model().to_string(),
            sizes: String::new(),
            winner: if fuse { grid.name.clone() } else { "unfused".to_string() },
            times: vec![("unfused".to_string(), exploration.unfused.clone()), (grid.name.clone(), exploration.fused.clone())],
            how: Decided::Measured,
        };
        self.stats.record_variant_decision(decision);
    }

    /// Launches fusion `f`'s grid kernel for the chain; `false` (having launched nothing) when
    /// it is not usable for these arrays.
    fn launch_fused(&mut self, region: &Region, f: usize, args: &[YosegiArg]) -> Result<bool, RuntimeError> {
        let prepared = self.clock();
        let module = self.module.clone();
        let fusion = &module.fusions[f];
        let device = self.current_device;
        let grid_handle = self.fused_grid(fusion);
        let grid = &module.grid_kernels[grid_handle];
        let Some(chain) = self.prepare_chain(region, &fusion.members, grid_handle, args)? else { return Ok(false) };
        let params = self.device_params(region, grid, &chain.args, &chain.bound_objects, device);
        self.record_runtime_call("region: launch preparation", prepared);
        let traffic = self.note_traffic(device, &chain.reads, &chain.writes, chain.bytes_moved);
        let started = Instant::now();
        let launch = Launch {
            module: &module,
            kernel: grid,
            params,
            specialisable: Cow::Borrowed(&self.specialisable[grid_handle.index()]),
            reaches_addresses: self.grid_reaches_addresses[grid_handle.index()],
        };
        if self.config.stats != super::StatsMode::Off {
            super::model::record_prediction(&mut self.model, &mut self.stats, &launch, device, traffic, false, self.devices[device].as_ref(), &mut self.registry, started);
        }
        let outcome = self.devices[device].launch(&launch).map_err(|fault| self.fault_error(fault))?;
        let elapsed = started.elapsed();
        self.stats.record_launch(&grid.name, elapsed, &outcome.counters);
        self.stats.record_bytes_moved(&grid.name, chain.bytes_moved);
        // The members' reductions, in order: each folds its partials after the host value.
        fold_reductions(region, &grid.reductions, &outcome.partials, args);
        Ok(true)
    }

    /// Makes the data of kernels `members` current on the device for one grid kernel `grid`
    /// that runs them all (a fused chain, or the steps of a step loop), each member's writes
    /// marked before the next is prepared; `None` (having moved nothing) when the grid kernel
    /// is not usable for these arrays.
    pub(super) fn prepare_chain(
        &mut self,
        region: &Region,
        members: &[Handle<Kernel>],
        grid_handle: Handle<crate::ir::GridKernel>,
        args: &[YosegiArg],
    ) -> Result<Option<PreparedChain>, RuntimeError> {
        let module = self.module.clone();
        let device = self.current_device;
        let grid = &module.grid_kernels[grid_handle];

        // Every member's whole space: its `first`/`count` args set in one args vector.
        let mut merged = args.to_vec();
        let mut member_sections = Vec::with_capacity(members.len());
        for &h in members {
            let kernel = &module.kernels[h];
            let (whole, values) = distribute::whole_launch(region, kernel, args)?;
            for p in &kernel.partitions {
                merged[p.first_arg as usize] = whole[p.first_arg as usize];
                merged[p.count_arg as usize] = whole[p.count_arg as usize];
            }
            member_sections.push(self.sections_cache.sections(h, kernel, &values));
        }
        // Pass 1 for every member; the chain runs unfused where a member needs what only its own
        // launch does (row tables, the program's device memory).
        for (&h, sections) in members.iter().zip(&member_sections) {
            let (tables, raw_memory) = self.settle_objects(&module.kernels[h], sections, args)?;
            if !tables.is_empty() || raw_memory {
                return Ok(None);
            }
        }
        // The arrays the chain writes must not share memory with any other array it names.
        let mut objects: Vec<(u32, u64, bool)> = Vec::new();
        for (&h, sections) in members.iter().zip(&member_sections) {
            let kernel = &module.kernels[h];
            for s in sections.iter() {
                let param = &kernel.params[s.param as usize];
                let ptr = args[param.arg as usize].ptr as u64;
                let Some(object) = self.registry.find(ptr).or_else(|| ptr.checked_sub(1).and_then(|p| self.registry.find(p))) else { continue };
                let written = !matches!(s.write, crate::analysis::access::Section::None);
                objects.push((param.arg, object, written));
            }
        }
        let shares = objects.iter().any(|&(arg, object, written)| written && objects.iter().any(|&(a, o, _)| a != arg && o == object));
        if shares || grid.shared_memory_bytes() > self.devices[device].shared_memory_per_block() {
            return Ok(None);
        }

        // Pass 2, member by member, each one's writes marked before the next is prepared.
        let mut bound_objects: Vec<(u32, u64)> = Vec::new();
        let mut traffic = ChainTraffic::default();
        for (&h, sections) in members.iter().zip(&member_sections) {
            let kernel = &module.kernels[h];
            let part = distribute::Part { device, args: merged.clone(), sections: sections.clone(), along: None };
            let footprint = self.prepare_part(kernel, &part, &[])?;
            check_overlaps(kernel, &footprint.launch.footprints)?;
            self.mark_written(device, &footprint.launch.writes);
            let reads: Vec<(u64, u64)> = footprint.launch.footprints.iter().filter_map(|f| f.read).collect();
            let stored = &self.stored_args[grid_handle.index()];
            let writes: Vec<((u64, u64), bool)> =
                footprint.launch.footprints.iter().filter_map(|f| f.write.map(|w| (w, stored.binary_search(&kernel.params[f.param as usize].arg).is_ok()))).collect();
            traffic.add_member(&reads, &writes);
            for b in footprint.bound_objects {
                if !bound_objects.iter().any(|(arg, _)| *arg == b.0) {
                    bound_objects.push(b);
                }
            }
        }
        let bytes_moved = traffic.bytes();
        let (reads, writes) = (traffic.reads.ranges().to_vec(), traffic.writes.ranges().to_vec());
        Ok(Some(PreparedChain { args: merged, bound_objects, bytes_moved, reads, writes }))
    }

    /// The fused grid kernel to run: the one without intermediates' stores when there is one.
    fn fused_grid(&self, fusion: &Fusion) -> Handle<crate::ir::GridKernel> {
        fusion.without_stores.unwrap_or(fusion.grid)
    }
}

#[cfg(test)]
mod chain_traffic_tests {
    use super::ChainTraffic;

    /// A member reads from device memory what no earlier member read or wrote; the grid kernel
    /// writes the ranges it stores.
    #[test]
    fn a_chain_reads_each_byte_once_and_writes_what_it_stores() {
        let (a, f, l) = ((0, 100), (200, 300), (400, 500));
        let traffic = |f_stored: bool| {
            let mut t = ChainTraffic::default();
            // Member 1 reads a, writes f; member 2 reads f and a again (and 50 bytes past a),
            // writes l.
            t.add_member(&[a], &[(f, f_stored)]);
            t.add_member(&[f, (0, 150)], &[(l, true)]);
            t
        };
        let nostore = traffic(false);
        assert_eq!(nostore.reads.ranges(), &[(0, 150)]);
        assert_eq!(nostore.writes.ranges(), &[l]);
        assert_eq!(nostore.bytes(), 150 + 100);
        let stored = traffic(true);
        assert_eq!(stored.writes.ranges(), &[f, l]);
        assert_eq!(stored.bytes(), 150 + 200);
        // A member that reads and writes one range in place moves it both ways.
        let mut in_place = ChainTraffic::default();
        in_place.add_member(&[a], &[(a, true)]);
        assert_eq!(in_place.bytes(), 200);
    }
}
