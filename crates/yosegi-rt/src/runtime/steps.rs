//! Runs of a step loop's region (`Module::step_loops`): the host asks for the iterations left
//! and the runtime runs one step as an ordinary region, or as many as it can with a grid
//! kernel of `k` steps (`Module::step_fusions`), and says how many it ran.
//!
//! # The choice
//!
//! The step kernels are usable when the runtime has one device, `YOSEGI_FUSION=off` is not set,
//! the chain's data can be prepared as for a fused chain (`Runtime::prepare_chain`), and each
//! renamed array's device copy is an allocation of its own. Then:
//!
//! * made by `--fusion on` (`StepFusion::forced`): the most steps that fit in what is left;
//! * `YOSEGI_STEPS=k` (for measuring): the kernel of `k` steps whenever `k` steps are left,
//!   no other (`1`: none);
//! * on the simulator: the candidate with the lowest estimate, when below 1;
//! * on a GPU, per region and launch sizes: samples of as many unfused steps as the largest
//!   candidate runs, and of two launches of each candidate, each timed from an idle device
//!   (the first sample of each side only warms it up: kernels loaded, the unfused kernels'
//!   own variants explored; a fused sample's clock starts after its second buffers are
//!   filled, which a decided run of many launches pays once), two samples each, more while a
//!   candidate and the unfused steps are close (`variants::fusion_needs_sample`); then the
//!   lowest typical time per step runs, a step kernel only when faster than the unfused steps
//!   by more than `variants::FUSION_WIN_MARGIN`.
//!
//! The samples spend the run's exploration budget (`variants::ExplorationBudget`); once it
//! is spent, a choice not yet made runs the steps unfused from then on, untimed and not cached.
//!
//! A measured choice goes into the tuning cache (`variants::TuningCache`, under the region's
//! first kernel's name with `~steps` and a hash of the step kernels' CUDA), and a later run of
//! the program at the same sizes on the same device takes it from there without exploring.
//!
//! # The second buffers
//!
//! A renamed array (`StepFusion::renamed`) is read through one param and written through
//! another: a launch reads the array's device copy and writes a second buffer of the same
//! size, which starts as a copy of the first (the elements the steps do not write are then the
//! same in both), and the next launch goes the other way. After an odd number of launches the
//! second buffer holds the values, and is copied back, so the device copy is where coherence
//! expects it. Second buffers are kept for the next run of the loop.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::ir::{Handle, Kernel, Module, Region, RegionKind, StepFusion};

use super::abi::YosegiArg;
use super::device::{DeviceAlloc, DeviceParam, Launch};
use super::stats::{Decided, VariantDecision};
use super::variants::{CachedChoice, KernelIdentity, TuningCache, fusion_needs_sample, fusion_wins, settled_typical};
use super::fused::{SampleStart, launch_sizes};
use super::{Runtime, RuntimeError};

/// What the runtime knows of the program's step fusions.
#[derive(Default)]
pub(super) struct StepState {
    /// Per region: its step fusions (indices into `Module::step_fusions`), fewest steps first.
    by_region: HashMap<u32, Vec<usize>>,
    /// `YOSEGI_FUSION=off`.
    disabled: bool,
    /// `YOSEGI_STEPS=k`: only the step kernels of `k` steps, always (1: none).
    only: Option<u32>,
    /// Per region whose loop swaps two pointers after it, their args (`StepLoop::swap`): the
    /// host skips the swap unless one step ran, so a call runs one step or an even number.
    swaps: HashMap<u32, (u32, u32)>,
    /// Per region and launch sizes.
    explorations: HashMap<(u32, Vec<i64>), Exploration>,
    /// Second buffers not in use, by device and size.
    spare: HashMap<(usize, u64), Vec<DeviceAlloc>>,
    /// Measured choices of earlier runs (read when a choice is first needed).
    cache: Option<TuningCache>,
}

struct Exploration {
    /// Whether the first unfused sample ran (its time is not kept: the single-step kernels'
    /// own variants are explored and loaded then).
    unfused_warm: bool,
    /// Times of one step.
    unfused: Vec<Duration>,
    /// Per candidate (index into `Module::step_fusions`): whether its warm-up ran, and times of
    /// one step (a timed run's time over its steps).
    fused: HashMap<usize, (bool, Vec<Duration>)>,
    /// `Some(None)`: unfused; `Some(Some(f))`: step fusion `f`.
    choice: Option<Option<usize>>,
    /// Where the tuning cache keeps the choice (`Runtime::cache_entry`), made once: the
    /// identity hashes the step kernels' CUDA.
    entry: (KernelIdentity, String, String),
}

/// What this call does.
enum Plan {
    Unfused { timed: Option<(u32, Vec<i64>)> },
    Fused { fusion: usize, launches: i64, timed: Option<(u32, Vec<i64>)> },
}

impl StepState {
    pub(super) fn new(module: &Module) -> StepState {
        let disabled = std::env::var("YOSEGI_FUSION").is_ok_and(|v| v.trim().eq_ignore_ascii_case("off"));
        let mut by_region: HashMap<u32, Vec<usize>> = HashMap::new();
        for (n, f) in module.step_fusions.iter().enumerate() {
            by_region.entry(f.region).or_default().push(n);
        }
        for list in by_region.values_mut() {
            list.sort_by_key(|&n| module.step_fusions[n].steps);
        }
        let only = std::env::var("YOSEGI_STEPS").ok().and_then(|v| v.trim().parse().ok());
        let swaps = module.step_loops.iter().filter_map(|l| Some((l.region, l.swap?))).collect();
        StepState { by_region, disabled, only, swaps, ..StepState::default() }
    }
}

impl Runtime {
    /// Runs at least one and at most `left` steps of step-loop region `id`; returns how many.
    pub fn region_steps(&mut self, id: i32, args: &[YosegiArg], left: i64) -> Result<i64, RuntimeError> {
        let plan = self.plan_steps(id, args, left);
        let Plan::Fused { fusion, launches, timed } = plan else {
            let Plan::Unfused { timed } = plan else { unreachable!("matched above") };
            // A timed sample runs as many steps as the largest step kernel, so that the wait
            // before and after it weighs on both sides alike. Once unfused is settled (or the
            // only way), the call runs every step left: the host loop's body is this region
            // (and a swap), so returning to it between steps would only add the host's work
            // per call, which `--fusion off` and `auto` then pay alike.
            let steps = match timed {
                Some(_) => self.unfused_sample_steps(id, left),
                None => self.unfused_run_steps(id, left),
            };
            let swap = self.steps.swaps.get(&(id as u32)).copied();
            let started = self.timing_start(timed.is_some());
            for step in 0..steps {
                match swap {
                    // The host swaps the two pointers after each step it runs itself.
                    Some(pair) if step % 2 == 1 => self.region(id, &swapped_args(args, pair))?,
                    _ => self.region(id, args)?,
                }
            }
            self.steps_timing_end(timed, None, started, steps);
            return Ok(steps);
        };
        let module = self.module.clone();
        let fusion_of_steps = &module.step_fusions[fusion];
        let steps = fusion_of_steps.steps as i64;
        self.run_region(id, args, |rt, region, kernels, args| match rt.launch_steps(region, kernels, fusion_of_steps, args, launches, timed.is_some())? {
            Some(started) => {
                rt.steps_timing_end(timed, Some(fusion), started, launches * steps);
                Ok(launches * steps)
            }
            None => {
                // Not usable for these arrays: one step as the region.
                if let Some(exploration) = timed.and_then(|key| rt.steps.explorations.get_mut(&key)) {
                    exploration.choice = Some(None);
                }
                rt.launch_kernels(region, kernels, args)?;
                Ok(1)
            }
        })
    }

    fn plan_steps(&mut self, id: i32, args: &[YosegiArg], left: i64) -> Plan {
        let only = self.steps.only;
        let candidates: Vec<usize> = match self.steps.by_region.get(&(id as u32)) {
            Some(list) if !self.steps.disabled && self.devices.len() == 1 => list
                .iter()
                .copied()
                .filter(|&f| {
                    let steps = self.module.step_fusions[f].steps;
                    steps as i64 <= left && only.is_none_or(|k| k == steps)
                })
                .collect(),
            _ => Vec::new(),
        };
        let Some(&most) = candidates.last() else { return Plan::Unfused { timed: None } };
        let swapped = self.steps.swaps.contains_key(&(id as u32));
        let all = |f: usize, module: &Module| {
            let steps = module.step_fusions[f].steps as i64;
            if swapped && steps % 2 == 1 { 1 } else { left / steps }
        };
        if self.module.step_fusions[most].forced || only.is_some() {
            return Plan::Fused { fusion: most, launches: all(most, &self.module), timed: None };
        }
        if self.devices[self.current_device].name() == "sim" {
            let best = candidates.iter().copied().min_by(|&a, &b| {
                self.module.step_fusions[a].estimated_ratio.total_cmp(&self.module.step_fusions[b].estimated_ratio)
            });
            return match best.filter(|&f| self.module.step_fusions[f].estimated_ratio < 1.0) {
                Some(f) => Plan::Fused { fusion: f, launches: all(f, &self.module), timed: None },
                None => Plan::Unfused { timed: None },
            };
        }
        let region = &self.module.regions[id as usize];
        let RegionKind::Compute { kernels, .. } = &region.kind else { return Plan::Unfused { timed: None } };
        let sizes = launch_sizes(&self.module, kernels, args);
        let key = (id as u32, sizes);
        if !self.steps.explorations.contains_key(&key) {
            let (identity, device, sizes_text) = self.cache_entry(&key);
            let cached = self.steps.cache.get_or_insert_with(TuningCache::default_location).lookup_sizes(&identity, &device, &sizes_text);
            let mut exploration = Exploration {
                unfused_warm: false,
                unfused: Vec::new(),
                fused: HashMap::new(),
                choice: None,
                entry: (identity, device.clone(), sizes_text.clone()),
            };
            if let Some(c) = cached {
                let fusions = self.steps.by_region.get(&(id as u32)).cloned().unwrap_or_default();
                let found = fusions.into_iter().find(|&f| self.module.grid_kernels[self.module.step_fusions[f].grid].name == c.winner);
                if found.is_some() || c.winner == "unfused" {
                    exploration.choice = Some(found);
                    let kernel = format!("{} (steps)", self.module.kernels[kernels[0]].name);
                    let decision = VariantDecision { kernel, device: device.clone(), sizes: sizes_text.clone(), winner: c.winner, times: c.times, how: Decided::Cached };
                    self.stats.record_variant_decision(decision);
                }
            }
            self.steps.explorations.insert(key.clone(), exploration);
        }
        let exploration = self.steps.explorations.get_mut(&key).expect("inserted above");
        if exploration.choice.is_none() && !self.variants.budget().has_room() {
            // The budget is spent: the steps unfused, as written, and nothing cached.
            exploration.choice = Some(None);
            let mut times = vec![("unfused".to_string(), exploration.unfused.clone())];
            let mut measured: Vec<(&usize, &(bool, Vec<Duration>))> = exploration.fused.iter().filter(|(_, (_, t))| !t.is_empty()).collect();
            measured.sort_by_key(|(f, _)| **f);
            times.extend(measured.into_iter().map(|(&f, (_, t))| (self.module.grid_kernels[self.module.step_fusions[f].grid].name.clone(), t.clone())));
            times.retain(|(_, t)| !t.is_empty());
            let (_, device, sizes) = exploration.entry.clone();
            let first = &self.module.kernels[kernels[0]].name;
            let decision = VariantDecision { kernel: format!("{first} (steps)"), device, sizes, winner: "unfused".to_string(), times, how: Decided::Budget { by_model: false } };
            self.variants.budget_mut().decided();
            self.stats.record_variant_decision(decision);
            return Plan::Unfused { timed: None };
        }
        match exploration.choice {
            Some(Some(f)) if self.module.step_fusions[f].steps as i64 <= left => {
                return Plan::Fused { fusion: f, launches: all(f, &self.module), timed: None };
            }
            Some(_) => return Plan::Unfused { timed: None },
            None => {}
        }
        // Explore: the side with the fewest samples, among those that need one (two samples
        // each, more while a candidate and the unfused steps are close) and, for a candidate,
        // have two launches' steps left.
        let unfused_typical = settled_typical(&exploration.unfused);
        let best_fused = candidates.iter().filter_map(|f| exploration.fused.get(f).and_then(|(_, t)| settled_typical(t))).min();
        let needing: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|f| {
                let steps = self.module.step_fusions[*f].steps as i64;
                let times = exploration.fused.get(f).map_or(&[][..], |(_, t)| t.as_slice());
                left >= 2 * steps && fusion_needs_sample(times, unfused_typical)
            })
            .collect();
        let unfused_needs = fusion_needs_sample(&exploration.unfused, best_fused);
        let fewest_fused = needing.iter().map(|f| exploration.fused.get(f).map_or(0, |(_, t)| t.len())).min();
        if unfused_needs && fewest_fused.is_none_or(|n| exploration.unfused.len() <= n) {
            return Plan::Unfused { timed: Some(key) };
        }
        if let Some(&f) = needing.first() {
            let (warm, _) = exploration.fused.entry(f).or_default();
            return Plan::Fused { fusion: f, launches: if *warm { 2 } else { 1 }, timed: Some(key) };
        }
        // Every candidate that could run is measured: choose.
        let mut choice = None;
        let mut fastest = exploration.unfused.clone();
        for (&f, (_, times)) in &exploration.fused {
            if settled_typical(times).is_some() && fusion_wins(times, &fastest) {
                fastest = times.clone();
                choice = Some(f);
            }
        }
        exploration.choice = Some(choice);
        let mut times = vec![("unfused".to_string(), exploration.unfused.clone())];
        let mut measured: Vec<(&usize, &(bool, Vec<Duration>))> = exploration.fused.iter().collect();
        measured.sort_by_key(|(f, _)| **f);
        for (&f, (_, t)) in measured {
            times.push((self.module.grid_kernels[self.module.step_fusions[f].grid].name.clone(), t.clone()));
        }
        let first = &self.module.kernels[kernels[0]].name;
        let winner = choice.map_or("unfused".to_string(), |f| self.module.grid_kernels[self.module.step_fusions[f].grid].name.clone());
        let (identity, device, sizes_text) = exploration.entry.clone();
        let choice_to_keep = CachedChoice { device: device.clone(), sizes: sizes_text.clone(), winner: winner.clone(), times: times.clone() };
        self.steps.cache.get_or_insert_with(TuningCache::default_location).store(identity, choice_to_keep);
        let decision = VariantDecision { kernel: format!("{first} (steps)"), device, sizes: sizes_text, winner, times, how: Decided::Measured };
        self.stats.record_variant_decision(decision);
        match choice {
            Some(f) if self.module.step_fusions[f].steps as i64 <= left => {
                Plan::Fused { fusion: f, launches: all(f, &self.module), timed: None }
            }
            _ => Plan::Unfused { timed: None },
        }
    }

    /// Where the tuning cache keeps the choice for `key`: the identity of its region's step
    /// kernels, the device, the sizes. (The identity hashes the step kernels' CUDA: made once
    /// per region and sizes, when the exploration starts, never per step.)
    fn cache_entry(&self, key: &(u32, Vec<i64>)) -> (KernelIdentity, String, String) {
        let device = self.devices[self.current_device].model().to_string();
        (steps_identity(&self.module, key.0), device, sizes_text(&key.1))
    }

    /// Steps of a timed unfused sample: those of the largest step kernel that fits in `left`
    /// (an even number, or one, where the loop swaps two pointers).
    fn unfused_sample_steps(&self, id: i32, left: i64) -> i64 {
        let most = self.steps.by_region.get(&(id as u32)).into_iter().flatten().map(|&f| self.module.step_fusions[f].steps as i64).filter(|&k| k <= left).max();
        self.steps_one_call_may_run(id, most.unwrap_or(1).min(left))
    }

    /// Steps of an untimed unfused run: every step left (see
    /// [`Runtime::steps_one_call_may_run`]). The plan is then the same for every step left: no
    /// step kernel fits what is left, or unfused is settled (measured, the estimate, one of
    /// several devices, fusion off), and the region's args are the same at every step (the
    /// loop's body is the region).
    fn unfused_run_steps(&self, id: i32, left: i64) -> i64 {
        self.steps_one_call_may_run(id, left)
    }

    /// At most `steps` (at least one) steps that one call of region `id` may run: an even
    /// number, or one, where the loop swaps two pointers, since the host swaps only after a
    /// call that ran one step.
    fn steps_one_call_may_run(&self, id: i32, steps: i64) -> i64 {
        let steps = steps.max(1);
        if self.steps.swaps.contains_key(&(id as u32)) && steps % 2 == 1 { (steps - 1).max(1) } else { steps }
    }

    /// Records a timed run of `steps` steps (unfused when `fusion` is `None`); the first run of
    /// each side only warms it up (kernels loaded, the unfused kernels' own variants explored)
    /// and is not kept.
    fn steps_timing_end(&mut self, timed: Option<(u32, Vec<i64>)>, fusion: Option<usize>, started: Option<SampleStart>, steps: i64) {
        let (Some(key), Some(started)) = (timed, started) else { return };
        // A sample during which a kernel's variants were still explored is a warm-up too.
        let Some(time) = self.timing_stop(started) else { return };
        let per_step = time / steps.max(1) as u32;
        let Some(exploration) = self.steps.explorations.get_mut(&key) else { return };
        let (warm, times) = match fusion {
            None => (&mut exploration.unfused_warm, &mut exploration.unfused),
            Some(f) => {
                let (warm, times) = exploration.fused.entry(f).or_default();
                (warm, times)
            }
        };
        if *warm {
            times.push(per_step);
        } else {
            *warm = true;
        }
    }

    /// `launches` launches of step fusion `f`; `None` (having launched nothing) when it is not
    /// usable for these arrays. `timed`: the device is idle when the first launch starts (after
    /// the second buffers are filled, which a run of many launches pays once), and that time
    /// comes back.
    fn launch_steps(
        &mut self,
        region: &Region,
        kernels: &[Handle<Kernel>],
        f: &StepFusion,
        args: &[YosegiArg],
        launches: i64,
        timed: bool,
    ) -> Result<Option<Option<SampleStart>>, RuntimeError> {
        let prepared = self.clock();
        let module = self.module.clone();
        let device = self.current_device;
        let grid = &module.grid_kernels[f.grid];
        let Some(chain) = self.prepare_chain(region, kernels, f.grid, args)? else { return Ok(None) };
        // With two arrays swapped after each step, every other step writes what the kernels
        // write through the other pointer: both are made current and marked written.
        if let Some(&pair) = self.steps.swaps.get(&region.id)
            && f.steps > 1
            && self.prepare_chain(region, kernels, f.grid, &swapped_args(args, pair))?.is_none()
        {
            return Ok(None);
        }
        let mut params = self.device_params(region, grid, &chain.args, &chain.bound_objects, device);
        // Each renamed array: its own allocation, and a second buffer like it.
        let mut pairs: Vec<(u32, u32, DeviceAlloc, DeviceAlloc, u64)> = Vec::new();
        for &(out, input) in &f.renamed {
            let DeviceParam::Array { alloc, offset } = params[input as usize] else { return Ok(None) };
            let ptr = chain.args[grid.params[input as usize].arg as usize].ptr as u64;
            let object = chain.bound_objects.iter().find(|(a, _)| *a == grid.params[input as usize].arg).map(|&(_, o)| o);
            let Some(object) = object.or_else(|| self.registry.find(ptr)) else { return Ok(None) };
            let Some((copies, _)) = self.transfer_for(object) else { return Ok(None) };
            let len = copies.len;
            if copies.placement(device) != Some((alloc, 0)) || copies.devices[device].as_ref().is_none_or(|c| c.mapped) {
                return Ok(None);
            }
            let second = match self.steps.spare.get_mut(&(device, len)).and_then(Vec::pop) {
                Some(a) => a,
                None => self.devices[device].allocate(len),
            };
            params[out as usize] = DeviceParam::Array { alloc: second, offset };
            pairs.push((out, input, alloc, second, len));
        }
        for &(_, _, first, second, len) in &pairs {
            self.devices[device].copy_within(second, 0, first, 0, len);
        }
        self.record_runtime_call("region: launch preparation", prepared);
        let started = self.timing_start(timed);
        for launch_number in 0..launches {
            // Even launches read the first buffers and write the second; odd ones the reverse.
            let forward = launch_number % 2 == 0;
            for &(out, input, first, second, _) in &pairs {
                let (from, to) = if forward { (first, second) } else { (second, first) };
                for (p, buffer) in [(input, from), (out, to)] {
                    if let DeviceParam::Array { alloc, .. } = &mut params[p as usize] {
                        *alloc = buffer;
                    }
                }
            }
            let traffic = self.note_traffic(device, &chain.reads, &chain.writes, chain.bytes_moved);
            let started = Instant::now();
            let launch = Launch {
                module: &module,
                kernel: grid,
                params: params.clone(),
                specialisable: Cow::Borrowed(&self.specialisable[f.grid.index()]),
                reaches_addresses: self.grid_reaches_addresses[f.grid.index()],
            };
            // Predictions are for the stats: without them a launch pays for none.
            if self.config.stats != super::StatsMode::Off {
                // Every launch moves the chain's arrays once. The model samples blocks over the
                // host's copies: a second buffer has none, so the prediction reads and writes
                // the array's own allocation, whichever buffer this launch reads.
                let mut seen = launch.params.clone();
                for &(out, input, first, ..) in &pairs {
                    for p in [input, out] {
                        if let DeviceParam::Array { alloc, .. } = &mut seen[p as usize] {
                            *alloc = first;
                        }
                    }
                }
                let predicted = Launch { module: &module, kernel: grid, params: seen, specialisable: launch.specialisable.clone(), reaches_addresses: launch.reaches_addresses };
                super::model::record_prediction(&mut self.model, &mut self.stats, &predicted, device, traffic, false, self.devices[device].as_ref(), &mut self.registry, started);
            }
            let outcome = self.devices[device].launch(&launch).map_err(|fault| self.fault_error(fault))?;
            self.stats.record_launch(&grid.name, started.elapsed(), &outcome.counters);
            if launch_number == 0 {
                self.stats.record_bytes_moved(&grid.name, chain.bytes_moved);
            }
        }
        for (_, _, first, second, len) in pairs {
            if launches % 2 == 1 {
                self.devices[device].copy_within(first, 0, second, 0, len);
            }
            self.steps.spare.entry((device, len)).or_default().push(second);
        }
        Ok(Some(started))
    }
}

/// The tuning cache's name for the choice among region `region`'s step kernels: the first
/// kernel's name with `~steps`, and a hash of the step kernels' CUDA (a changed program or
/// compiler explores again).
fn steps_identity(module: &Module, region: u32) -> KernelIdentity {
    let mut text = String::new();
    for f in module.step_fusions.iter().filter(|f| f.region == region) {
        let grid = &module.grid_kernels[f.grid];
        text.push_str(&grid.name);
        text.push('\0');
        text.push_str(&crate::back::cuda::grid_kernel_cuda(module, grid));
        text.push('\0');
    }
    let first = match &module.regions[region as usize].kind {
        RegionKind::Compute { kernels, .. } => kernels.first().map(|&k| module.kernels[k].name.clone()).unwrap_or_default(),
        _ => String::new(),
    };
    KernelIdentity { name: format!("{first}~steps"), hash: super::cuda::cache::fnv1a64(text.as_bytes()) }
}

/// The sizes of a choice as the cache spells them (`-` when there are none).
fn sizes_text(sizes: &[i64]) -> String {
    if sizes.is_empty() { "-".to_string() } else { sizes.iter().map(i64::to_string).collect::<Vec<_>>().join(",") }
}

/// `args` with the two of `pair` exchanged: what the region sees after the host swapped them.
fn swapped_args(args: &[YosegiArg], (x, y): (u32, u32)) -> Vec<YosegiArg> {
    let mut swapped = args.to_vec();
    swapped.swap(x as usize, y as usize);
    swapped
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A choice stored under a region's step identity is found again by a second cache reading
    /// the same directory (a later run), and not at other sizes.
    #[test]
    fn a_step_choice_is_found_by_a_later_run_at_the_same_sizes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let identity = KernelIdentity { name: "main_l41~steps".to_string(), hash: 7 };
        let choice = CachedChoice {
            device: "H100".to_string(),
            sizes: sizes_text(&[8192, 1]),
            winner: "main_l41_steps8".to_string(),
            times: vec![("unfused".to_string(), vec![Duration::from_micros(20)]), ("main_l41_steps8".to_string(), vec![Duration::from_micros(3)])],
        };
        TuningCache::in_dir(Some(dir.path().to_path_buf())).store(identity.clone(), choice.clone());
        let mut later = TuningCache::in_dir(Some(dir.path().to_path_buf()));
        assert_eq!(later.lookup_sizes(&identity, "H100", "8192,1"), Some(choice));
        assert_eq!(later.lookup_sizes(&identity, "H100", "4096,1"), None);
        assert_eq!(sizes_text(&[]), "-");
    }
}
