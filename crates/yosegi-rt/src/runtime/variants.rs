//! Which variant of a kernel a launch runs, and the tuning cache that remembers measured winners.
//!
//! The optimisation passes may give a source kernel several grid kernels
//! ([`Module::variants_of`]): the plain `Global` one first, then `Staged` ones that read reused
//! arrays through shared-memory tiles. Every variant computes the same results, so the choice is
//! about speed only, and any launch may run any *usable* variant.
//!
//! # The rule
//!
//! * `--staging off` ([`StagingMode::Off`]): the plain variant, always.
//! * `--staging on` ([`StagingMode::Force`]): the usable `Staged` variants in turn, launch by
//!   launch (so that a run exercises every one), else the plain one.
//! * `--staging auto` ([`StagingMode::Auto`]):
//!   - on a device that cannot time launches (the simulator, whose
//!     [`launch_timed`](super::device::Device::launch_timed) gives no time), the usable variant
//!     with the lowest `estimated_ratio`, the plain one on ties. Whether a device times is
//!     learned from its first timed launch (a key's second), which already runs the lowest
//!     estimate;
//!   - on a device that times (a GPU), per kernel and [`LaunchKey`] (the values of the integer
//!     params that shape the launch, and the device): *explore, then exploit*. The launches
//!     after a key's first go round the candidates, lowest estimate first, each timed with
//!     `launch_timed`; these are the program's real launches, not extra runs, since every
//!     variant gives the same results. Once every candidate has been timed
//!     [`SAMPLES_PER_CANDIDATE`] times, the one with the lowest best time wins and later
//!     launches run it with the plain `launch`. A variant wins only when its best time beats
//!     the plain one's by more than [`WIN_MARGIN`] of it and by more than [`WIN_MARGIN_MIN`]:
//!     a tie, or a difference within the timing noise of a few-microsecond launch, keeps the
//!     plain variant. The winner is written to the tuning cache, and a winner found there
//!     skips exploration. A key's first launch runs the lowest estimate untimed: a timed
//!     launch makes the host wait for the GPU, which a pipelined time step pays in full, and
//!     shapes seen once per run (a split loop's first step, before its halo is in place) would
//!     pay it in every run. Exploration starts at the key's second launch. Every candidate's
//!     first launch for the key is an untimed warm-up, not a sample (the key's first launch
//!     warms the lowest estimate): a kernel's first launch loads its module, and its first
//!     two can run several microseconds slow, which made the candidate timed on its first
//!     launches lose to one timed on its second and third (bench/NOTES.md run 37). Where the
//!     performance model predicts every candidate, it leaves out those predicted over
//!     [`MODEL_FILTER`] times the fastest, and where its choice ([`model_choice`]: the plain
//!     variant unless another is predicted [`PLAIN_PREFERENCE`] faster) is predicted faster
//!     than every other candidate by [`MODEL_DECIDES`], that choice wins untimed and is not
//!     cached (`YOSEGI_MODEL_DECIDES=off` times the candidates anyway); so does it, on a
//!     device known to time, where every candidate is predicted under [`SHORT_LAUNCH`] a
//!     launch (timing would cost more than such variants can differ by). [`MODEL_FILTER`] is the
//!     model's error as measured over the benchmarks, not per kernel: when an exploration
//!     starts, none of its candidates has run at its key, and what `model::record` keeps of
//!     earlier runs is of whole kernels at other sizes too, so there is no measured error of
//!     the kernel at hand to filter by.
//!
//! # What exploring may cost
//!
//! Timed exploration is the program's own launches run one at a time, waited for, and some
//! of them slow: [`ExplorationBudget`] bounds it to [`EXPLORATION_SHARE`] of the time the
//! program has spent in the runtime (its regions, and host accesses that wait for a device:
//! about the device's busy time, not the host code's, which a long initialisation on the host
//! would otherwise make a large budget) plus [`EXPLORATION_ALLOWANCE`] (`YOSEGI_EXPLORE_BUDGET_MS` sets the
//! allowance, `off` lifts the bound). What is counted: the device time of each timed candidate
//! launch, the span of each timed sample of a fused chain or a step loop (`runtime::fused`,
//! `runtime::steps`: the device idle at both ends), and the cycles the device count runs on one
//! device (`runtime::device_count`). The budget is looked at before each timed launch or
//! sample, so the spend passes it by one of them at most. Once it is spent, a key whose
//! exploration has not ended takes the model's choice ([`model_choice`], when the model
//! predicted every candidate) or else the plain variant, untimed, and nothing goes to the
//! tuning cache for it, so that a later run measures it (`--stats` says "the exploration
//! budget was spent"); a fusion or step-loop choice runs the unfused launches (the model
//! predicts launches, not a chain's unfused side with its preparations), and the device count
//! keeps splitting. `--stats` reports the time timed exploration took, its share of the run
//! and how many choices the budget decided.
//!
//! # Usable variants
//!
//! A `Staged` variant reads its `staged_params` from tiles loaded before the loop that uses
//! them, which is correct only if no other array the kernel writes shares their memory: the
//! compiler cannot always see such aliasing, the runtime can. A launch therefore uses a staged
//! variant only when none of its staged params is bound to the same device allocation (hence
//! the same host object) as *another* array param the kernel stores to, and none it writes
//! through its tile (copied back at the end) to the same allocation as any other array param;
//! otherwise it runs the plain variant, silently. A variant needing more than [`SHARED_MEMORY_LIMIT`] bytes of shared
//! memory (what a block gets without opting in to more) is never launched. Variants share the
//! plain variant's params (the staging pass clones it), so one binding serves all of them; a
//! variant whose params differ is not used.
//!
//! # The tuning cache
//!
//! One text file, [`TUNING_CACHE_FILE`], in the kernel cache's directory
//! (`runtime::cuda::cache::default_dir`, `$YOSEGI_CACHE_DIR` first). A line holds a kernel's
//! name, the FNV-1a hash of the CUDA C of all its variants (a changed kernel or compiler does not
//! reuse an old winner), the device, the launch key, the winner and the times measured for every
//! candidate. Runs sharing the folder store winners together without losing each other's
//! ([`TuningCache::store`]). The cache only saves exploration: a missing, unreadable or corrupt
//! file, or a malformed or torn line, is ignored (and dropped by the next store).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::back::cuda::grid_kernel_cuda;
use crate::ir::{GridKernel, Handle, Kernel, Module, ParamValue, VariantKind};
use crate::opt::StagingMode;

use super::cuda::cache::{fnv1a64, trusted_dir};
use super::device::{DeviceAlloc, DeviceParam, KernelFault, Launch, StartedLaunch};
use super::stats::{Decided, VariantDecision};
use super::{Runtime, RuntimeError};

/// Shared memory a block may use without opting in to more (CUDA's static limit), for a device
/// that does not say ([`super::device::Device::shared_memory_per_block`]).
pub const SHARED_MEMORY_LIMIT: u64 = 48 * 1024;

/// How many timed launches of each candidate exploration makes before choosing, after its
/// untimed warm-up ([`Trial::warmed_up`]): on the H200 a kernel's first launch took 17-20 us
/// more than its steady ones (loading its module) and its second sometimes 5-12 us more, so
/// the best of the second and third shows its speed.
pub const SAMPLES_PER_CANDIDATE: usize = 2;

/// A variant replaces the plain one only when faster by more than this fraction of the plain
/// one's best time...
pub const WIN_MARGIN: f64 = 0.02;
/// ...and by more than this. CUDA events resolve about half a microsecond, but launches of a
/// few microseconds spread by more from one to the next: on the H100 two launches of the same
/// 1-D stencil timed 9 and 6 us, a staged one timed 7 us against 8 for the plain one in
/// exploration and then ran 7.5 us per step against 6.1, and a radius-8 stencil's staged
/// variant kept for 7 us against 9 ran 0.96x.
pub const WIN_MARGIN_MIN: Duration = Duration::from_micros(3);

/// A fused kernel (a chain's, `runtime::fused`, or a step loop's, `runtime::steps`) replaces
/// the unfused launches only when its typical sample is faster by more than this fraction: a
/// fused kernel changes what stays in L2 from one launch to the next (second buffers, arrays
/// no longer stored) in ways a few samples show only partly. On the H100 a 4M-point radius-8
/// stencil's 4-step kernel won its exploration by 10% and then ran 6-11% slower.
pub const FUSION_WIN_MARGIN: f64 = 0.05;
/// While the two sides of a fusion comparison are within this fraction of each other, each is
/// sampled again, up to [`FUSION_MAX_SAMPLES`] samples or [`FUSION_SAMPLED_TIME`] of them: a
/// clear difference is settled by [`SAMPLES_PER_CANDIDATE`] samples, a close one by more.
pub const FUSION_CLOSE: f64 = 0.15;
/// See [`FUSION_CLOSE`].
pub const FUSION_MAX_SAMPLES: usize = 8;
/// See [`FUSION_CLOSE`].
pub const FUSION_SAMPLED_TIME: Duration = Duration::from_millis(2);

/// The typical one of a side's samples: the median (the lower middle one), which a lucky
/// sample (caches still warm from a copy) does not move as it moves the fastest.
pub fn typical_sample(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted.get(sorted.len().saturating_sub(1) / 2).copied().unwrap_or(Duration::MAX)
}

/// The typical sample of a side that has the samples a comparison needs at least
/// ([`SAMPLES_PER_CANDIDATE`]), else `None`.
pub fn settled_typical(times: &[Duration]) -> Option<Duration> {
    (times.len() >= SAMPLES_PER_CANDIDATE).then(|| typical_sample(times))
}

/// Whether one side of a fusion comparison needs another sample, given its rival's typical
/// time (`None`: the rival has too few samples to compare with yet).
pub fn fusion_needs_sample(times: &[Duration], rival: Option<Duration>) -> bool {
    if times.len() < SAMPLES_PER_CANDIDATE {
        return true;
    }
    let Some(rival) = rival else { return false };
    let (mine, rival) = (typical_sample(times).as_secs_f64(), rival.as_secs_f64());
    let close = (mine - rival).abs() < FUSION_CLOSE * mine.max(rival);
    close && times.len() < FUSION_MAX_SAMPLES && times.iter().sum::<Duration>() < FUSION_SAMPLED_TIME
}

/// Whether the fused side wins a comparison: typical times, by more than [`FUSION_WIN_MARGIN`].
pub fn fusion_wins(fused: &[Duration], unfused: &[Duration]) -> bool {
    typical_sample(fused).as_secs_f64() < typical_sample(unfused).as_secs_f64() * (1.0 - FUSION_WIN_MARGIN)
}

/// A candidate whose launches so far all took more than this times the plain variant's best,
/// plus [`CLEARLY_SLOWER_SLACK`], is not timed again: a first launch runs a little slow (cold
/// caches), not half as fast again, so its second sample could not make it win, and each sample
/// of a slow variant is a real launch the program waits for (on the H100, heat3d at 512^3 spent
/// 0.64 ms of a 41 ms run on the second launch of a staged variant that took 1.48 ms against 0.83).
/// Unless the performance model predicts the candidate faster than the plain variant: then one
/// slow sample does not overrule the prediction without a second (on an H100, NPB SP's staged
/// `x_solve_l215` took 126 us once, was dropped, and the plain one ran its 399 launches at 36 us
/// where other runs timed the staged one at 21; bench/NOTES.md run 27).
pub const CLEARLY_SLOWER: f64 = 1.5;
/// See [`CLEARLY_SLOWER`]: first launches of few-microsecond kernels can take 2-4 times their
/// later ones, so short kernels are always sampled fully.
pub const CLEARLY_SLOWER_SLACK: Duration = Duration::from_micros(20);

/// The tuning cache's file name in the kernel cache directory.
pub const TUNING_CACHE_FILE: &str = "variant-choices.txt";

/// An exploration leaves out a candidate the performance model predicts slower than this many
/// times the fastest candidate's prediction: measurement decides among the close ones. The
/// plain variant is always timed. (bench/NOTES.md run 20: at 1.5 the model left out 6 of 232
/// candidates, none of them the fastest measured.)
pub const MODEL_FILTER: f64 = 1.5;

/// The model's choice names a variant other than the plain one only when it predicts that
/// variant faster than the plain one by at least this fraction of the plain one's prediction:
/// its predictions are off by 15% at the median (bench/NOTES.md), and the staged variants it
/// misjudges (tile loops of few blocks, barriers) are the slow ones. Over runs 28-31, taking
/// the fastest prediction lost 4-43% against measurement, preferring the plain variant within
/// 10% lost 2.8-4.5%.
pub const PLAIN_PREFERENCE: f64 = 0.10;

/// The runtime takes the model's choice without timing any candidate when it is predicted
/// faster than every other candidate by at least this fraction of theirs: over runs 28-31 the
/// model decided 8-15 of 97 variant groups so, losing at most 0.5% against measurement (at
/// 0.2 it decided 16-28 and lost up to 3.4%).
pub const MODEL_DECIDES: f64 = 0.30;

/// On a device known to time launches (a GPU, or one whose launch was timed), candidates all predicted to run a
/// launch in less than this are not timed: the model's choice runs (the plain variant unless
/// another is predicted [`PLAIN_PREFERENCE`] faster), untimed and uncached. A timed launch makes the host wait for the GPU, which costs a
/// pipelined program some tens of microseconds of idle device each time, more than variants of
/// a launch this short can differ by; NPB MG's coarse levels had 600 such timed launches of
/// 3-300 us, and its first run took 1.4x its second (which found the winners cached).
pub const SHORT_LAUNCH: Duration = Duration::from_micros(100);

/// Timed exploration may take this share of the time the program spends in the runtime (see
/// the module doc)...
pub const EXPLORATION_SHARE: f64 = 0.02;
/// ...plus this (`YOSEGI_EXPLORE_BUDGET_MS` sets another, `off` lifts the bound): a kernel's
/// candidates at a millisecond a launch before the run has earned a share. (At 20 ms, NPB MG,
/// whose timed part runs 0.23 s, spent a tenth of it exploring in its first run.)
pub const EXPLORATION_ALLOWANCE: Duration = Duration::from_millis(5);

/// What timed exploration cost a run, and its bound (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExplorationCost {
    /// Time of the timed launches and samples.
    pub spent: Duration,
    /// Choices (variant keys, fusions, step loops, the device count) taken untimed once the
    /// budget was spent.
    pub decided_by_budget: u64,
    /// The bound's fixed allowance; `None`: unbounded.
    pub allowance: Option<Duration>,
}

/// The bound on timed exploration: the time the program has spent in the runtime (regions,
/// and host accesses that wait for the devices), and what exploring has cost.
#[derive(Clone, Debug)]
pub struct ExplorationBudget {
    busy: Duration,
    cost: ExplorationCost,
}

impl ExplorationBudget {
    /// A budget of [`EXPLORATION_SHARE`] of the time spent in the runtime plus `allowance`
    /// (`None`: unbounded).
    pub fn new(allowance: Option<Duration>) -> ExplorationBudget {
        ExplorationBudget { busy: Duration::ZERO, cost: ExplorationCost { spent: Duration::ZERO, decided_by_budget: 0, allowance } }
    }

    /// The budget `YOSEGI_EXPLORE_BUDGET_MS` sets.
    pub fn from_env() -> ExplorationBudget {
        ExplorationBudget::new(super::model::millis_from_env("YOSEGI_EXPLORE_BUDGET_MS", EXPLORATION_ALLOWANCE))
    }

    /// The program spent `time` in the runtime (a region, a host access that waited).
    pub fn note_busy(&mut self, time: Duration) {
        self.busy += time;
    }

    /// Whether another timed launch or sample may start.
    pub fn has_room(&self) -> bool {
        self.cost.allowance.is_none_or(|a| self.cost.spent < a + self.busy.mul_f64(EXPLORATION_SHARE))
    }

    /// A timed launch or sample took `time`.
    pub fn charge(&mut self, time: Duration) {
        self.cost.spent += time;
    }

    /// A choice was taken untimed because the budget was spent.
    pub fn decided(&mut self) {
        self.cost.decided_by_budget += 1;
    }

    pub fn cost(&self) -> ExplorationCost {
        self.cost
    }
}

/// The performance model's choice among candidates (the plain variant first) from their
/// predicted times: the fastest, or the plain variant where no other is predicted faster by
/// [`PLAIN_PREFERENCE`]; and whether the choice is clear enough to need no timing
/// ([`MODEL_DECIDES`]). `None` with no prediction.
pub fn model_choice(predicted: &[f64]) -> Option<(usize, bool)> {
    let (&plain, _) = predicted.split_first()?;
    let fastest = (0..predicted.len()).min_by(|&a, &b| predicted[a].total_cmp(&predicted[b]).then(a.cmp(&b)))?;
    let choice = if predicted[fastest] <= plain * (1.0 - PLAIN_PREFERENCE) { fastest } else { 0 };
    let clear = predicted.iter().enumerate().all(|(i, &p)| i == choice || predicted[choice] <= p * (1.0 - MODEL_DECIDES));
    Some((choice, clear))
}

/// Marks the format of every line; a line with another tag is ignored.
const LINE_TAG: &str = "v1";


/// Whether `variant` may run a launch whose array params are bound as `params` (one per
/// `variant.params`, as `Runtime::device_params` binds them): see the module doc. A `Global`
/// variant always may.
pub fn variant_is_usable(variant: &GridKernel, params: &[DeviceParam], shared_per_block: u64) -> bool {
    // The plain variant is what runs when nothing else can: it is always usable.
    if variant.variant.kind != VariantKind::Staged {
        return true;
    }
    if variant.shared_memory_bytes() > shared_per_block {
        return false;
    }
    let alloc_of = |p: u32| match params.get(p as usize) {
        Some(DeviceParam::Array { alloc, .. }) => Some(*alloc),
        _ => None,
    };
    let written: Vec<(u32, Option<DeviceAlloc>)> =
        variant.written_array_params().into_iter().map(|w| (w, alloc_of(w))).collect();
    variant.variant.staged_params.iter().all(|&staged| {
        // An unbound staged param cannot be checked, so the variant is not used.
        let Some(alloc) = alloc_of(staged) else { return false };
        if written.iter().any(|&(w, _)| w == staged) {
            // A tile copied back holds the kernel's writes until the end: no other param may
            // read or write that memory meanwhile.
            return (0..params.len() as u32).all(|p| p == staged || alloc_of(p) != Some(alloc));
        }
        // What the pass cannot see is a write through a different param into the same memory.
        written.iter().all(|&(_, w_alloc)| w_alloc != Some(alloc))
    })
}

/// What makes launches of one kernel comparable: the values of the integer params that shape
/// the iteration space (`back::cuda::specialisable_params` of the plain variant), and the device.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LaunchKey {
    pub device: String,
    /// `(param name, value)`, in param order.
    pub sizes: Vec<(String, i64)>,
}

impl LaunchKey {
    /// `specialisable` is `back::cuda::specialisable_params(plain)`.
    pub fn of(plain: &GridKernel, specialisable: &[u32], params: &[DeviceParam], device: &str) -> LaunchKey {
        let sizes = LaunchKey::size_values(specialisable, params)
            .map(|(p, v)| (plain.params[p as usize].name.clone(), v))
            .collect();
        LaunchKey { device: device.to_string(), sizes }
    }

    /// The `(param, value)` pairs a key holds, without naming them.
    fn size_values<'p>(specialisable: &'p [u32], params: &'p [DeviceParam]) -> impl Iterator<Item = (u32, i64)> + 'p {
        specialisable.iter().filter_map(|&p| match params.get(p as usize) {
            Some(DeviceParam::Value(ParamValue::Int(v))) => Some((p, *v)),
            _ => None,
        })
    }

    /// Whether a launch with `params` on `device` has this key, found without building one.
    fn matches(&self, specialisable: &[u32], params: &[DeviceParam], device: &str) -> bool {
        self.device == device && self.sizes.iter().map(|(_, v)| *v).eq(LaunchKey::size_values(specialisable, params).map(|(_, v)| v))
    }

    /// The decision for `kernel` at this key: `winner`, with the candidates' `times`.
    fn decision(&self, kernel: String, winner: String, times: Vec<(String, Vec<Duration>)>, how: Decided) -> VariantDecision {
        VariantDecision { kernel, device: self.device.clone(), sizes: self.sizes_text(), winner, times, how }
    }

    /// `n=4096,m=4096` (`-` when the kernel has no size params); the cache's spelling.
    pub fn sizes_text(&self) -> String {
        if self.sizes.is_empty() {
            return "-".to_string();
        }
        self.sizes.iter().map(|(name, v)| format!("{name}={v}")).collect::<Vec<_>>().join(",")
    }
}

/// One candidate of an exploration and the device times measured for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    pub variant: Handle<GridKernel>,
    pub name: String,
    pub estimated_ratio: f64,
    /// The performance model's steady time for the launch, where it made one.
    pub predicted_s: Option<f64>,
    pub times: Vec<Duration>,
    /// Whether the candidate has run once for this key: its first launch is an untimed
    /// warm-up, never a sample (see the module doc).
    pub warmed_up: bool,
}

impl Trial {
    /// A candidate not yet launched for its key.
    pub fn new(variant: Handle<GridKernel>, name: String, estimated_ratio: f64) -> Trial {
        Trial { variant, name, estimated_ratio, predicted_s: None, times: Vec::new(), warmed_up: false }
    }

    pub fn best(&self) -> Option<Duration> {
        self.times.iter().min().copied()
    }
}

/// Gives each of `trials` its prediction, then drops (the plain variant first, never dropped)
/// every candidate `predict` puts over [`MODEL_FILTER`] times the fastest prediction, and
/// returns them with their prediction and the fastest, in seconds. Nothing is dropped unless
/// every candidate has a prediction.
fn leave_out_predicted_slow(trials: &mut Vec<Trial>, predict: &mut dyn FnMut(Handle<GridKernel>) -> Option<f64>) -> Vec<(String, f64, f64)> {
    if trials.len() < 2 {
        return Vec::new();
    }
    for t in trials.iter_mut() {
        t.predicted_s = predict(t.variant);
    }
    let Some(predicted) = trials.iter().map(|t| t.predicted_s).collect::<Option<Vec<f64>>>() else { return Vec::new() };
    let fastest = predicted.iter().copied().fold(f64::INFINITY, f64::min);
    let mut left_out = Vec::new();
    let mut i = 0;
    trials.retain(|t| {
        let p = predicted[i];
        i += 1;
        let keep = i == 1 || p <= fastest * MODEL_FILTER;
        if !keep {
            left_out.push((t.name.clone(), p, fastest));
        }
        keep
    });
    left_out
}

/// The explore-then-exploit state of one (kernel, launch key). The plain variant is trial 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Exploration {
    pub trials: Vec<Trial>,
    /// Set once every trial has its samples (or from the tuning cache).
    pub winner: Option<usize>,
}

impl Exploration {
    /// `candidates` start with the plain variant.
    pub fn new(candidates: Vec<Trial>) -> Exploration {
        Exploration { trials: candidates, winner: None }
    }

    /// Whether trial `i` still needs timing: fewer than [`SAMPLES_PER_CANDIDATE`] samples, and
    /// not a variant already measured clearly slower than the plain one ([`CLEARLY_SLOWER`]).
    fn needs_samples(&self, i: usize) -> bool {
        let t = &self.trials[i];
        if t.times.len() >= SAMPLES_PER_CANDIDATE {
            return false;
        }
        match (i, t.best(), self.trials[0].best()) {
            (1.., Some(best), Some(plain)) => {
                best <= plain.mul_f64(CLEARLY_SLOWER) + CLEARLY_SLOWER_SLACK || self.predicted_faster_than_plain(i)
            }
            _ => true,
        }
    }

    /// Whether the model predicts trial `i` faster than the plain one (both predicted).
    fn predicted_faster_than_plain(&self, i: usize) -> bool {
        matches!((self.trials[i].predicted_s, self.trials[0].predicted_s), (Some(mine), Some(plain)) if mine < plain)
    }

    /// The trial the next launch should time (or warm up, when it has not run yet: see
    /// [`Trial::warmed_up`]): among the usable ones that need samples and have the fewest, the
    /// lowest estimate (the plain one on ties). `None` when nothing usable needs timing.
    pub fn next_to_time(&self, usable: impl Fn(Handle<GridKernel>) -> bool) -> Option<usize> {
        if self.winner.is_some() {
            return None;
        }
        self.trials
            .iter()
            .enumerate()
            .filter(|(i, t)| self.needs_samples(*i) && usable(t.variant))
            .min_by(|(ia, a), (ib, b)| {
                a.times
                    .len()
                    .cmp(&b.times.len())
                    .then(a.estimated_ratio.total_cmp(&b.estimated_ratio))
                    .then(ia.cmp(ib))
            })
            .map(|(i, _)| i)
    }

    /// Ends the exploration untimed, the exploration budget being spent: the model's choice
    /// where every trial has a prediction ([`model_choice`]), else the plain variant. Returns
    /// the winner and whether the model chose it.
    pub fn settle_untimed(&mut self) -> (usize, bool) {
        let predicted: Option<Vec<f64>> = self.trials.iter().map(|t| t.predicted_s).collect();
        let (winner, by_model) = match predicted.as_deref().and_then(model_choice) {
            Some((choice, _)) => (choice, true),
            None => (0, false),
        };
        self.winner = Some(winner);
        (winner, by_model)
    }

    /// Adds a measurement; chooses the winner once every trial has its samples.
    pub fn record(&mut self, trial: usize, time: Duration) {
        if let Some(t) = self.trials.get_mut(trial) {
            t.times.push(time);
        }
        if self.winner.is_none() && (0..self.trials.len()).all(|i| !self.needs_samples(i)) {
            self.winner = Some(self.fastest());
        }
    }

    /// The trial with the lowest best time among the variants, when it beats the plain one
    /// (trial 0) by the margins ([`WIN_MARGIN`], [`WIN_MARGIN_MIN`]); else the plain one.
    fn fastest(&self) -> usize {
        let Some(plain) = self.trials.first().and_then(Trial::best) else { return 0 };
        let challenger = self
            .trials
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(|(i, t)| t.best().map(|b| (i, b)))
            .min_by_key(|&(_, best)| best);
        let margin = plain.mul_f64(WIN_MARGIN).max(WIN_MARGIN_MIN);
        match challenger {
            Some((i, best)) if best + margin < plain => i,
            _ => 0,
        }
    }
}

/// Identifies a kernel's set of variants in the tuning cache: its name and a hash of the CUDA C
/// of every variant, in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelIdentity {
    pub name: String,
    pub hash: u64,
}

impl KernelIdentity {
    pub fn of(module: &Module, kernel: Handle<Kernel>) -> KernelIdentity {
        let mut text = String::new();
        for v in module.variants_of(kernel) {
            let grid = &module.grid_kernels[v];
            // NUL never occurs in the emitted text, so different splits never hash alike.
            let _ = write!(text, "{}\0{}\0", grid.name, grid_kernel_cuda(module, grid));
        }
        KernelIdentity { name: module.kernels[kernel].name.clone(), hash: fnv1a64(text.as_bytes()) }
    }
}

/// What identifies a program across runs: a hash of its kernels' identities, in order (a
/// changed kernel or compiler changes it).
pub fn program_hash(module: &Module) -> u64 {
    let mut text = String::new();
    for (k, _) in module.kernels.iter() {
        let id = KernelIdentity::of(module, k);
        let _ = write!(text, "{}\0{:016x}\0", id.name, id.hash);
    }
    fnv1a64(text.as_bytes())
}

/// A measured winner as the tuning cache holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct CachedChoice {
    pub device: String,
    /// As [`LaunchKey::sizes_text`] writes it.
    pub sizes: String,
    /// The winning grid kernel's name.
    pub winner: String,
    /// Per candidate (grid kernel name): the times measured.
    pub times: Vec<(String, Vec<Duration>)>,
}

impl CachedChoice {
    pub fn best_time(&self, variant: &str) -> Option<Duration> {
        self.times.iter().find(|(n, _)| n == variant).and_then(|(_, t)| t.iter().min().copied())
    }
}

/// The tuning cache file (see the module doc), read once, rewritten whole when a winner is added.
#[derive(Debug)]
pub struct TuningCache {
    /// The file (`None`: nothing is read or kept). The default location is looked up on first
    /// use, so that a run that never reads or keeps a winner (on the simulator) makes no cache
    /// folder.
    path: std::sync::OnceLock<Option<PathBuf>>,
    /// Lines by (kernel name, variants hash), loaded on first use.
    entries: Option<Vec<(KernelIdentity, CachedChoice)>>,
}

impl TuningCache {
    /// The cache in `dir` (`None`: nothing is read or kept).
    pub fn in_dir(dir: Option<PathBuf>) -> TuningCache {
        let path = std::sync::OnceLock::new();
        let _ = path.set(dir.map(|d| d.join(TUNING_CACHE_FILE)));
        TuningCache { path, entries: None }
    }

    fn path(&self) -> Option<&PathBuf> {
        self.path.get_or_init(|| trusted_dir().map(|d| d.join(TUNING_CACHE_FILE))).as_ref()
    }

    /// The directory the cache lives in (`None`: nothing is kept).
    pub fn dir(&self) -> Option<&Path> {
        self.path().and_then(|p| p.parent())
    }

    /// The cache next to the kernel disk cache, when that directory is trusted (looked up
    /// when first used).
    pub fn default_location() -> TuningCache {
        TuningCache { path: std::sync::OnceLock::new(), entries: None }
    }

    fn entries(&mut self) -> &mut Vec<(KernelIdentity, CachedChoice)> {
        let path = self.path().cloned();
        self.entries.get_or_insert_with(|| path.map(|p| read_cache_file(&p)).unwrap_or_default())
    }

    /// Every cached winner of `identity`, all devices and sizes.
    pub fn choices_of(&mut self, identity: &KernelIdentity) -> Vec<CachedChoice> {
        self.entries().iter().filter(|(id, _)| id == identity).map(|(_, c)| c.clone()).collect()
    }

    fn lookup(&mut self, identity: &KernelIdentity, key: &LaunchKey) -> Option<CachedChoice> {
        self.lookup_sizes(identity, &key.device, &key.sizes_text())
    }

    /// The cached winner of `identity` on `device` at `sizes` (as [`LaunchKey::sizes_text`]
    /// writes them).
    pub fn lookup_sizes(&mut self, identity: &KernelIdentity, device: &str, sizes: &str) -> Option<CachedChoice> {
        self.entries().iter().find(|(id, c)| id == identity && c.device == device && c.sizes == sizes).map(|(_, c)| c.clone())
    }

    /// Adds (or replaces) a winner and rewrites the file. Several runs may store at once (runs
    /// sharing a cache folder, the ranks of an MPI job): under the file's lock the file is read
    /// again and the winners it holds are kept beside this one (`private_fs::update_locked`;
    /// a damaged line is dropped), and this process's view becomes that union. A failure to
    /// write costs only a later exploration, so it is not reported.
    pub fn store(&mut self, identity: KernelIdentity, choice: CachedChoice) {
        let add = |mut entries: Vec<(KernelIdentity, CachedChoice)>| {
            entries.retain(|(id, c)| !(id == &identity && c.device == choice.device && c.sizes == choice.sizes));
            entries.push((identity.clone(), choice.clone()));
            entries
        };
        let Some(path) = self.path().cloned() else {
            let entries = add(std::mem::take(self.entries()));
            self.entries = Some(entries);
            return;
        };
        let mut merged = None;
        let written = crate::private_fs::update_locked(&path, |on_disk| {
            let entries = add(parse_cache_text(on_disk));
            let text = render_cache_file(&entries);
            merged = Some(entries);
            Some(text)
        });
        // Unwritten (or unreadable), the winner is still this run's to use.
        self.entries = Some(match (written, merged) {
            (Ok(()), Some(entries)) => entries,
            _ => add(std::mem::take(self.entries())),
        });
    }
}

fn render_cache_file(entries: &[(KernelIdentity, CachedChoice)]) -> String {
    let mut out = String::from(
        "# yosegi: measured winners among kernel variants. Fields (tab-separated): format, kernel, \
         hash of its variants' CUDA, device, sizes, winner, nanoseconds per candidate\n",
    );
    for (id, c) in entries {
        let times: Vec<String> = c
            .times
            .iter()
            .map(|(name, ts)| {
                let ns: Vec<String> = ts.iter().map(|t| t.as_nanos().to_string()).collect();
                format!("{name}={}", ns.join("/"))
            })
            .collect();
        let _ = writeln!(
            out,
            "{LINE_TAG}\t{}\t{:016x}\t{}\t{}\t{}\t{}",
            id.name,
            id.hash,
            c.device,
            c.sizes,
            c.winner,
            times.join(",")
        );
    }
    out
}

fn read_cache_file(path: &Path) -> Vec<(KernelIdentity, CachedChoice)> {
    let Ok(bytes) = std::fs::read(path) else { return Vec::new() };
    parse_cache_text(&String::from_utf8_lossy(&bytes))
}

/// The winners of a cache file's text: whole lines only (`private_fs::complete_lines`), each
/// checked field by field, so that a torn or garbled line is never taken for a winner.
fn parse_cache_text(text: &str) -> Vec<(KernelIdentity, CachedChoice)> {
    crate::private_fs::complete_lines(text).filter_map(parse_cache_line).collect()
}

fn parse_cache_line(line: &str) -> Option<(KernelIdentity, CachedChoice)> {
    let fields: Vec<&str> = line.split('\t').collect();
    let [tag, name, hash, device, sizes, winner, times] = fields.as_slice() else { return None };
    if *tag != LINE_TAG || name.is_empty() || device.is_empty() || winner.is_empty() {
        return None;
    }
    let hash = u64::from_str_radix(hash, 16).ok()?;
    let mut parsed = Vec::new();
    for candidate in times.split(',') {
        let (variant, ns) = candidate.split_once('=')?;
        let ts = ns.split('/').map(|t| t.parse::<u64>().ok().map(Duration::from_nanos)).collect::<Option<Vec<_>>>()?;
        parsed.push((variant.to_string(), ts));
    }
    if !parsed.iter().any(|(v, _)| v == winner) {
        return None;
    }
    let choice = CachedChoice {
        device: device.to_string(),
        sizes: sizes.to_string(),
        winner: winner.to_string(),
        times: parsed,
    };
    Some((KernelIdentity { name: name.to_string(), hash }, choice))
}

/// The measured winners of `kernel`'s variants in the tuning cache in `dir` (the default cache
/// directory when `None`), for explain: every device and size measured so far. Empty for a
/// kernel with one variant (there is nothing to choose).
pub fn cached_choices(module: &Module, kernel: Handle<Kernel>, dir: Option<PathBuf>) -> Vec<CachedChoice> {
    if module.variants_of(kernel).len() < 2 {
        return Vec::new();
    }
    let mut cache = TuningCache::in_dir(dir.or_else(trusted_dir));
    cache.choices_of(&KernelIdentity::of(module, kernel))
}

/// A launch to time for an exploration: report its time with [`VariantChooser::record_time`].
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    kernel: Handle<Kernel>,
    key: LaunchKey,
    trial: usize,
}

/// What a launch runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Pick {
    pub variant: Handle<GridKernel>,
    /// `Some`: launch with `launch_timed` and report the time.
    pub measure: Option<Measurement>,
}

/// The per-runtime chooser: modes, explorations in progress, what each device can time, and
/// the tuning cache.
#[derive(Debug)]
pub struct VariantChooser {
    mode: StagingMode,
    cache: TuningCache,
    explorations: HashMap<(Handle<Kernel>, LaunchKey), Exploration>,
    /// Per device name: whether `launch_timed` gives times (learned from its first answer).
    device_times: HashMap<String, bool>,
    /// Whether launches are timed to choose (explorations, the tuning cache): not in a job of
    /// several ranks (`runtime::ranks`), where every rank must pick the same variant for every
    /// part of a launch (the parts' results are gathered under the variant's name) and a rank
    /// can time only its own device; there every rank takes the compiler's estimate.
    timed: bool,
    identities: HashMap<Handle<Kernel>, KernelIdentity>,
    /// Under `--staging on`: per kernel, how many launches have run a staged variant so far.
    forced_launches: HashMap<Handle<Kernel>, usize>,
    /// Per device name: the shared memory a block may use there, as the device reported it.
    shared_per_block: HashMap<String, u64>,
    /// Candidates the model left out of explorations, not yet taken into the stats.
    left_out: Vec<(Handle<Kernel>, String, f64, f64)>,
    /// Per kernel: the launch key of its latest launch whose exploration had ended, and the
    /// winner. A time-step loop launches each kernel with the same key every step; this answers
    /// those launches without building a key and hashing its strings.
    settled: HashMap<Handle<Kernel>, (LaunchKey, Handle<GridKernel>)>,
    /// How many launches so far ran while their kernel's exploration had not ended (a first
    /// sighting, a timed candidate): a fusion sample during which this grows timed the variant
    /// exploration too, not the unfused launches as they will run.
    exploring_launches: u64,
    /// Whether a clear choice of the model settles an exploration untimed ([`model_choice`]).
    model_decides: bool,
    /// What timed exploration may cost, and has (also spent by fused chains', step loops' and
    /// the device count's samples).
    budget: ExplorationBudget,
}

impl VariantChooser {
    /// The variants the model left out of explorations since the last call: (kernel,
    /// variant, predicted seconds, fastest predicted seconds).
    pub fn take_left_out(&mut self) -> Vec<(Handle<Kernel>, String, f64, f64)> {
        std::mem::take(&mut self.left_out)
    }

    /// Where the tuning cache lives; the model's predictions go beside it.
    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache.dir()
    }

    pub fn new(mode: StagingMode, cache: TuningCache) -> VariantChooser {
        VariantChooser {
            mode,
            cache,
            explorations: HashMap::new(),
            device_times: HashMap::new(),
            timed: true,
            identities: HashMap::new(),
            forced_launches: HashMap::new(),
            shared_per_block: HashMap::new(),
            left_out: Vec::new(),
            settled: HashMap::new(),
            exploring_launches: 0,
            model_decides: true,
            budget: ExplorationBudget::new(Some(EXPLORATION_ALLOWANCE)),
        }
    }

    /// The bound on timed exploration.
    pub fn budget(&self) -> &ExplorationBudget {
        &self.budget
    }

    pub fn budget_mut(&mut self) -> &mut ExplorationBudget {
        &mut self.budget
    }

    pub fn set_budget(&mut self, budget: ExplorationBudget) {
        self.budget = budget;
    }

    /// See [`VariantChooser::exploring_launches`] (the field).
    pub fn exploring_launches(&self) -> u64 {
        self.exploring_launches
    }

    /// Chooses every variant by the compiler's estimate, the same on every rank of a job
    /// (see the `timed` field).
    pub fn choose_by_estimate_only(&mut self) {
        self.timed = false;
    }

    /// Explorations time every candidate the model keeps, however clear its choice.
    pub fn time_every_candidate(&mut self) {
        self.model_decides = false;
    }

    /// Says whether `device` times its launches (a GPU does, the simulator does not) before
    /// any was timed: a GPU's short keys need not wait for a first timed launch, and the
    /// simulator's choices read no tuning cache.
    pub fn device_times_launches(&mut self, device: &str, times: bool) {
        self.device_times.insert(device.to_string(), times);
    }

    /// Records what `device` says a block may use of shared memory; until then
    /// [`SHARED_MEMORY_LIMIT`] holds.
    pub fn set_shared_memory_limit(&mut self, device: &str, bytes: u64) {
        self.shared_per_block.insert(device.to_string(), bytes);
    }

    fn shared_memory_limit(&self, device: &str) -> u64 {
        self.shared_per_block.get(device).copied().unwrap_or(SHARED_MEMORY_LIMIT)
    }

    /// The variant a launch of `kernel` on `device` runs. `params` are the launch's params as
    /// bound for the plain variant (variants share their params with it), `specialisable` the
    /// plain variant's `specialisable_params`. Also returns the decision taken from the tuning
    /// cache, the first time one is used (for `--stats`).
    pub fn choose(
        &mut self,
        module: &Module,
        kernel: Handle<Kernel>,
        device: &str,
        params: &[DeviceParam],
        specialisable: &[u32],
        predict: &mut dyn FnMut(Handle<GridKernel>) -> Option<f64>,
    ) -> (Pick, Option<VariantDecision>) {
        let variants = module.variants_of(kernel);
        let plain = Pick { variant: variants[0], measure: None };
        if variants.len() < 2 || self.mode == StagingMode::Off {
            return (plain, None);
        }
        let plain_params = &module.grid_kernels[variants[0]].params;
        let shared_limit = self.shared_memory_limit(device);
        // `params` are bound for the plain variant: a variant whose params differ from its
        // (which the staging pass does not make) cannot be launched with them.
        let usable = |v: Handle<GridKernel>| {
            let grid = &module.grid_kernels[v];
            grid.params.len() == plain_params.len()
                && grid.params.iter().zip(plain_params).all(|(a, b)| a.arg == b.arg)
                && variant_is_usable(grid, params, shared_limit)
        };
        if self.mode == StagingMode::Force {
            // The usable staged variants take turns, so that a run exercises every one.
            let staged: Vec<Handle<GridKernel>> =
                variants.iter().copied().filter(|&v| module.grid_kernels[v].variant.kind == VariantKind::Staged && usable(v)).collect();
            if staged.is_empty() {
                return (plain, None);
            }
            let turn = self.forced_launches.entry(kernel).or_default();
            let variant = staged[*turn % staged.len()];
            *turn += 1;
            return (Pick { variant, measure: None }, None);
        }
        let by_estimate = || {
            let variant = variants
                .iter()
                .copied()
                .filter(|&v| usable(v))
                .min_by(|&a, &b| {
                    let (ra, rb) =
                        (module.grid_kernels[a].variant.estimated_ratio, module.grid_kernels[b].variant.estimated_ratio);
                    // `variants` is in order, plain first, so on ties the earlier one stays.
                    ra.total_cmp(&rb)
                })
                .unwrap_or(variants[0]);
            Pick { variant, measure: None }
        };
        if !self.timed || self.device_times.get(device) == Some(&false) {
            return (by_estimate(), None);
        }

        let plain_grid = &module.grid_kernels[variants[0]];
        if let Some((key, winner)) = self.settled.get(&kernel)
            && key.matches(specialisable, params, device)
        {
            return (Pick { variant: if usable(*winner) { *winner } else { variants[0] }, measure: None }, None);
        }
        let slot = (kernel, LaunchKey::of(plain_grid, specialisable, params, device));
        let mut decision = None;
        if !self.explorations.contains_key(&slot) {
            let mut trials: Vec<Trial> = variants
                .iter()
                .filter(|&&v| v == variants[0] || module.grid_kernels[v].shared_memory_bytes() <= shared_limit)
                .map(|&v| {
                    let g = &module.grid_kernels[v];
                    Trial::new(v, g.name.clone(), g.variant.estimated_ratio)
                })
                .collect();
            self.left_out.extend(leave_out_predicted_slow(&mut trials, predict).into_iter().map(|(name, p, f)| (kernel, name, p, f)));
            let mut exploration = Exploration::new(trials);
            // A device that cannot time never stores winners, so the lookup finds nothing there.
            decision = self.adopt_cached_winner(module, kernel, &slot.1, &mut exploration);
            if decision.is_none() && self.model_decides {
                // Short launches go untimed only where timing is known to work (a device
                // that cannot time takes the estimate, below).
                let times = self.device_times.get(device) == Some(&true);
                decision = self.adopt_predicted_winner(module, kernel, &slot.1, &mut exploration, times);
            }
            if decision.is_none() && !self.budget.has_room() {
                decision = Some(self.settle_by_budget(module, kernel, &slot.1, &mut exploration));
            }
            // A key's first launch (unless the cache or the model settled it) runs the lowest
            // estimate untimed, which warms that candidate up.
            let first = exploration.winner.is_none().then(by_estimate);
            if let Some(first) = &first
                && let Some(t) = exploration.trials.iter_mut().find(|t| t.variant == first.variant)
            {
                t.warmed_up = true;
            }
            self.explorations.insert(slot.clone(), exploration);
            if let Some(first) = first {
                self.exploring_launches += 1;
                return (first, decision);
            }
        }
        if self.explorations[&slot].winner.is_none() && !self.budget.has_room() {
            let mut ended = self.explorations.remove(&slot).expect("inserted above");
            decision = Some(self.settle_by_budget(module, kernel, &slot.1, &mut ended));
            self.explorations.insert(slot.clone(), ended);
        }
        let exploration = self.explorations.get_mut(&slot).expect("inserted above");
        if let Some(winner) = exploration.winner {
            let variant = exploration.trials[winner].variant;
            self.settled.insert(kernel, (slot.1, variant));
            return (Pick { variant: if usable(variant) { variant } else { variants[0] }, measure: None }, decision);
        }
        self.exploring_launches += 1;
        match exploration.next_to_time(usable) {
            // A candidate's first launch is its warm-up, untimed.
            Some(trial) => {
                let t = &mut exploration.trials[trial];
                let measure = t.warmed_up.then(|| Measurement { kernel, key: slot.1, trial });
                t.warmed_up = true;
                (Pick { variant: t.variant, measure }, decision)
            }
            // What remains to time cannot run this launch (aliasing): the plain variant runs.
            None => (plain, decision),
        }
    }

    fn identity(&mut self, module: &Module, kernel: Handle<Kernel>) -> KernelIdentity {
        self.identities.entry(kernel).or_insert_with(|| KernelIdentity::of(module, kernel)).clone()
    }

    fn adopt_cached_winner(
        &mut self,
        module: &Module,
        kernel: Handle<Kernel>,
        key: &LaunchKey,
        exploration: &mut Exploration,
    ) -> Option<VariantDecision> {
        let identity = self.identity(module, kernel);
        let cached = self.cache.lookup(&identity, key)?;
        let winner = exploration.trials.iter().position(|t| t.name == cached.winner)?;
        exploration.winner = Some(winner);
        Some(key.decision(identity.name, cached.winner.clone(), cached.times, Decided::Cached))
    }

    /// The model's choice as the winner, where every candidate has a prediction and the
    /// choice is clear ([`model_choice`]): nothing is timed, and nothing goes to the tuning
    /// cache (the next run predicts the same).
    fn adopt_predicted_winner(
        &mut self,
        module: &Module,
        kernel: Handle<Kernel>,
        key: &LaunchKey,
        exploration: &mut Exploration,
        device_times: bool,
    ) -> Option<VariantDecision> {
        let predicted: Vec<f64> = exploration.trials.iter().map(|t| t.predicted_s).collect::<Option<_>>()?;
        let (winner, clear) = model_choice(&predicted)?;
        let short = device_times && predicted.iter().all(|&p| p < SHORT_LAUNCH.as_secs_f64());
        let how = match (clear, short) {
            (true, _) => Decided::Predicted,
            (false, true) => Decided::Short,
            (false, false) => return None,
        };
        exploration.winner = Some(winner);
        Some(key.decision(self.identity(module, kernel).name, exploration.trials[winner].name.clone(), Vec::new(), how))
    }

    /// Ends `exploration` untimed, the budget being spent ([`Exploration::settle_untimed`]):
    /// nothing goes to the tuning cache.
    fn settle_by_budget(&mut self, module: &Module, kernel: Handle<Kernel>, key: &LaunchKey, exploration: &mut Exploration) -> VariantDecision {
        let (winner, by_model) = exploration.settle_untimed();
        self.budget.decided();
        let times: Vec<(String, Vec<Duration>)> =
            exploration.trials.iter().filter(|t| !t.times.is_empty()).map(|t| (t.name.clone(), t.times.clone())).collect();
        key.decision(self.identity(module, kernel).name, exploration.trials[winner].name.clone(), times, Decided::Budget { by_model })
    }

    /// Reports the time of a launch made for `measurement` (`None`: the device cannot time, and
    /// from now on the estimate decides on it). Returns the decision when this measurement
    /// completed the exploration; the winner is then in the tuning cache.
    pub fn record_time(
        &mut self,
        module: &Module,
        measurement: Measurement,
        time: Option<Duration>,
    ) -> Option<VariantDecision> {
        let Measurement { kernel, key, trial } = measurement;
        let Some(time) = time else {
            self.device_times.insert(key.device.clone(), false);
            self.explorations.retain(|(_, k), _| k.device != key.device);
            return None;
        };
        self.device_times.insert(key.device.clone(), true);
        self.budget.charge(time);
        let exploration = self.explorations.get_mut(&(kernel, key.clone()))?;
        exploration.record(trial, time);
        let winner = exploration.winner?;
        let times: Vec<(String, Vec<Duration>)> =
            exploration.trials.iter().map(|t| (t.name.clone(), t.times.clone())).collect();
        let winner_name = exploration.trials[winner].name.clone();
        let identity = self.identity(module, kernel);
        let choice = CachedChoice {
            device: key.device.clone(),
            sizes: key.sizes_text(),
            winner: winner_name.clone(),
            times: times.clone(),
        };
        self.cache.store(identity.clone(), choice);
        Some(key.decision(identity.name, winner_name, times, Decided::Measured))
    }
}

impl Runtime {
    /// Launches the variant of `kernel` the chooser picks (see the module doc) on device
    /// `device`. `params` are bound for the plain variant. Returns the grid kernel that ran,
    /// the started launch (whose outcome `Device::finish_launch` gives) and the launch's wall
    /// time.
    pub(super) fn launch_chosen_variant<'m>(
        &mut self,
        module: &'m Module,
        kernel: Handle<Kernel>,
        params: Vec<DeviceParam>,
        device: usize,
        traffic: super::model::Traffic,
    ) -> Result<(&'m GridKernel, StartedLaunch, Duration), RuntimeError> {
        let variants = module.variants_of(kernel);
        // The model's steady prediction of a candidate, asked only when an exploration starts.
        let (model, devices, registry, specialisable, addresses) = (&mut self.model, &self.devices, &self.registry, &self.specialisable, &self.grid_reaches_addresses);
        let mut predict = |v: Handle<GridKernel>| {
            let launch = Launch {
                module,
                kernel: &module.grid_kernels[v],
                params: params.clone(),
                specialisable: Cow::Borrowed(&specialisable[v.index()]),
                reaches_addresses: addresses[v.index()],
            };
            model.as_mut()?.predict_on(&launch, device, traffic, devices[device].as_ref(), registry, true, false, super::model::Timing::Queued).ok().map(|p| p.seconds)
        };
        let (pick, cached) =
            self.variants.choose(module, kernel, self.devices[device].model(), &params, &self.specialisable[variants[0].index()], &mut predict);
        let grid = &module.grid_kernels[pick.variant];
        let source_name = &module.kernels[kernel].name;
        if let Some(decision) = cached {
            self.stats.record_variant_decision(decision);
        }
        for (k, variant, predicted, fastest) in self.variants.take_left_out() {
            self.stats.record_variant_left_out(&module.kernels[k].name, &variant, predicted, fastest);
        }
        if variants.len() > 1 {
            self.stats.record_variant_run(source_name, &grid.name);
        }
        let started = Instant::now();
        let launch = Launch {
            module,
            kernel: grid,
            params,
            specialisable: Cow::Borrowed(&self.specialisable[pick.variant.index()]),
            reaches_addresses: self.grid_reaches_addresses[pick.variant.index()],
        };
        if self.config.stats != super::StatsMode::Off {
            super::model::record_prediction(&mut self.model, &mut self.stats, &launch, device, traffic, pick.measure.is_some(), self.devices[device].as_ref(), &mut self.registry, started);
        }
        let result: Result<(StartedLaunch, Option<Duration>), KernelFault> = match &pick.measure {
            Some(_) => self.devices[device].launch_timed(&launch).map(|(o, t)| (StartedLaunch::Finished(o), t)),
            None => self.devices[device].start_launch(&launch).map(|s| (s, None)),
        };
        let elapsed = started.elapsed();
        let (outcome, time) = result.map_err(|f| self.fault_error(f))?;
        if let Some(measurement) = pick.measure
            && let Some(decision) = self.variants.record_time(module, measurement, time)
        {
            self.stats.record_variant_decision(decision);
        }
        if let Some(time) = time {
            self.stats.record_variant_time(source_name, &grid.name, time);
        }
        Ok((grid, outcome, elapsed))
    }
}

#[cfg(test)]
mod tests;
