//! The performance model: the predicted time of a launch on one device and on several, from
//! what the compiler and the runtime know of it, and the machine's measured figures.
//!
//! * [`machine`]: the device's figures, measured once per GPU model and kept in a file
//!   (nominal H100 figures on the simulator, which has no clock);
//! * [`sample`]: what a launch does (global sectors, loads and stores, float and double
//!   operations, math calls, shared requests and their bank conflicts, barriers), counted by
//!   running a few of its blocks in the simulator's interpreter and scaling to the grid;
//! * [`predict`]: time = launch + the longest of memory, caches, arithmetic and shared memory,
//!   each at the rate the launch's resident warps can reach.
//!
//! The runtime asks for a prediction per launch when `--stats` is on, and prints it beside the
//! measured device time; predictions are kept per launch *shape* ([`PredictionKey`]: the
//! kernel, the device, the params that decide its work, the bytes it moves), so a time-step
//! loop pays for one, and so does a loop that passes its iteration to the kernel as a value.
//!
//! # What measuring costs
//!
//! `--stats` must not change what it measures: the model's sampling is bounded to a small
//! share of the run. A sample stops at its deadline ([`sample::SAMPLE_DEADLINE`], or
//! `YOSEGI_MODEL_SAMPLE_MS`) as well as at a block's statement budget, and the model's
//! sampling time altogether may not pass [`SAMPLING_SHARE`] of the time the program has spent
//! in the runtime (as `variants::ExplorationBudget` counts it: a long initialisation on the
//! host earns no sampling for the timed loop after it) plus [`SAMPLING_ALLOWANCE`]
//! (`YOSEGI_MODEL_BUDGET_MS` sets the allowance, `off` lifts the cap): a launch is not sampled
//! while the cap leaves less than [`MIN_SAMPLE_ROOM`], and a sample runs to the earlier of its
//! deadline and the cap. At most [`MAX_SAMPLED_SHAPES`] shapes of a grid kernel are sampled. A launch
//! the model could not predict ([`Unpredicted`]) is counted as such in the stats (`--stats`
//! names it, `--stats=json` says `"prediction": "unfinished"` or `"not sampled"`), and the
//! stats report the sampling time spent ([`SamplingCost`]). An unfinished sample (deadline,
//! statement budget) stands for its shape: sampling it again would take as long. One refused
//! or cut short by the cap does not: a later launch of the shape may find room, since the cap
//! grows with the run (once cut short, room for its whole deadline). The bound is on wall
//! time, looked at every `sim::interp::CLOCK_EVERY` statements: a sample passes its limit by
//! that look, its set-up, and any time the system takes the thread away meanwhile.
//!
//! Sampling runs on the program's thread, at the launch, not on a worker thread: the sampled
//! blocks read the program's host arrays in place (`SimBuffer::host_view`), and the program
//! goes on writing them as soon as the launch call returns, so a worker would need a copy of
//! every array a kernel reads, made at the launch, on the program's thread: as much memory
//! again, and copying time that grows with the arrays where the sample's is bounded. A
//! prediction is also used at once: a variant exploration leaves out candidates by their
//! predictions before its first launch, and each launch's predicted end feeds the next's
//! (`Model::timing`).

pub mod cluster;
pub mod machine;
pub mod observed;
pub mod predict;
pub mod record;
pub mod residency;
pub mod sample;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::ir::{GridKernel, Handle, Kernel, Module};
use crate::runtime::device::{Device, DeviceAlloc, DeviceParam, Launch};
use crate::runtime::registry::Registry;
use crate::runtime::sim::memory::SimBuffer;
use crate::runtime::variants::{KernelIdentity, LaunchKey};

pub use machine::Machine;
pub use predict::{LaunchWork, Prediction, SplitBytes};
pub use residency::ResidentBytes;

/// What a launch moves in device memory: the bytes its arrays' sections cover, and of those
/// the ones the launches before it on its device left in the L2 cache (`None` where those are
/// not tracked).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Traffic {
    pub bytes: u64,
    pub resident: Option<ResidentBytes>,
}

/// What identifies a launch's prediction, its *shape*: the grid kernel, the device, the values
/// of the params that decide the launch's work ([`shape_scalars`]) and the bytes its sections
/// cover.
///
/// A sample's counts follow from the launch's geometry (its grid, from the grid's expressions,
/// and its block, the kernel's spread over the device's multiprocessors), from the way its
/// loops and branches go, and from the addresses its threads reach. The params that decide the
/// first two are those the grid, the axes' starts, the arrays' dims and the conditions of its
/// loops and `if`s read: the integer ones are `Launch::specialisable` (what the CUDA back end
/// specialises for and a variant exploration keys on, `variants::LaunchKey`), the floating ones
/// matter only where the grid reads them (a condition's floating values change every time
/// step of many programs and decide no size). Any other scalar changes only the values the
/// threads compute and where in the arrays they reach; with the same sections' bytes that is the
/// same sectors in the same pattern, so the prediction of the shape's first launch stands for
/// the others as it is: nothing needs scaling. NPB EP passes its outer iteration so (`koff`, the
/// offset of its random numbers), and sampling each of its 32 launches again took 25 s of a 2 s
/// run (H200). Such a scalar can still steer the work through a local (EP's offset sets how many
/// halvings its seed's loop makes); the first launch's sample then stands for the shape as a
/// sampled block stands for the grid.
///
/// The key is split by kernel name ([`KernelShapes`]) so that a launch looks its shape up
/// without copying the name, and the params that decide the shape are found once per kernel:
/// a launch of a time-step loop spends no allocation on the lookup where the shape has no
/// scalars (NPB LU makes 636,000 launches, and `--stats` may cost at most 5% of their time).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PredictionKey {
    device: usize,
    shape: Vec<u64>,
    dram_bytes: u64,
}

/// One grid kernel's predictions, per [`PredictionKey`], and the params that decide its
/// shapes ([`shape_params`]).
#[derive(Debug, Default)]
struct KernelShapes {
    params: Option<Vec<u32>>,
    /// [`countable`], found once: it walks the kernel's body.
    countable: Option<bool>,
    predictions: HashMap<PredictionKey, Result<Prediction, Unpredicted>>,
    /// The shapes whose sample the cap cut short ([`Sampler::predict`]).
    cut_short: HashSet<PredictionKey>,
}

/// `map`'s entry for `name`, made (with its default) the first time: the name is copied then
/// only.
fn by_name<'m, V: Default>(map: &'m mut HashMap<String, V>, name: &str) -> &'m mut V {
    if !map.contains_key(name) {
        map.insert(name.to_string(), V::default());
    }
    map.get_mut(name).expect("inserted above")
}

/// Shapes of one grid kernel the model samples: a launch of another shape goes unpredicted
/// (`Unpredicted::Shapes`). A wavefront's kernel has a shape per hyperplane (NPB LU class C:
/// some 160 per kernel, 496 samples, 0.8 s of a 16 s timed loop under `--stats`), and what
/// the stats say of a kernel, its predicted time per launch against its measured one, a few
/// dozen of its shapes say as well.
pub const MAX_SAMPLED_SHAPES: usize = 32;

/// The model's sampling time may not pass this share of the time the program has spent in
/// the runtime (its regions, and host accesses that wait for a device)...
pub const SAMPLING_SHARE: f64 = 0.02;
/// ...plus this (`YOSEGI_MODEL_BUDGET_MS` sets another, `off` lifts the cap): enough for a few
/// samples at their deadline before the run has earned any share, and 2.4% of a 2 s run.
pub const SAMPLING_ALLOWANCE: Duration = Duration::from_millis(50);
/// A launch is not sampled while the cap leaves less than this (or its deadline, when
/// shorter): a sample cut short by the cap is not kept, so starting one with almost no room
/// would only spend the room again at the next launch of its shape.
pub const MIN_SAMPLE_ROOM: Duration = Duration::from_millis(1);

/// Why the model made no prediction of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unpredicted {
    /// Its sample ran past its deadline ([`sample::SAMPLE_DEADLINE`]).
    Deadline,
    /// A sampled block ran past [`sample::STATEMENT_BUDGET`] statements.
    Statements,
    /// Not sampled, or stopped short, because the model's sampling time was spent
    /// ([`SAMPLING_SHARE`], [`SAMPLING_ALLOWANCE`]).
    TimeBudget,
    /// Not sampled: [`MAX_SAMPLED_SHAPES`] shapes of its grid kernel were.
    Shapes,
    /// Its blocks cannot run over host views (row tables, computed addresses, memory the views
    /// do not cover), or the model has no figures for its device.
    Uncountable,
}

impl Unpredicted {
    /// What `--stats=json` says of the launch's prediction (`"prediction"`).
    pub fn status(self) -> &'static str {
        match self {
            Unpredicted::Deadline | Unpredicted::Statements => "unfinished",
            Unpredicted::TimeBudget | Unpredicted::Shapes => "not sampled",
            Unpredicted::Uncountable => "not countable",
        }
    }

    /// The reason's key in `--stats=json` (`"unpredicted_launches"`).
    pub fn key(self) -> &'static str {
        match self {
            Unpredicted::Deadline => "deadline",
            Unpredicted::Statements => "statement_budget",
            Unpredicted::TimeBudget => "time_budget",
            Unpredicted::Shapes => "shapes",
            Unpredicted::Uncountable => "not_countable",
        }
    }
}

/// What the model's sampling cost a run, and its bounds (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplingCost {
    /// Wall time spent sampling, and the samples run (finished or not).
    pub spent: Duration,
    pub samples: u64,
    /// Samples stopped by their deadline or a block's statement budget.
    pub unfinished: u64,
    /// Launches not sampled, or whose sample was cut short, because the cap was reached.
    pub not_sampled: u64,
    /// One sample's deadline; `None`: none (`YOSEGI_MODEL_SAMPLE_MS=off`).
    pub deadline: Option<Duration>,
    /// The cap's fixed allowance; `None`: no cap (`YOSEGI_MODEL_BUDGET_MS=off`).
    pub allowance: Option<Duration>,
}

/// The model's sampling within its bounds: the time the program has spent in the runtime,
/// what sampling has cost, and the shapes sampled per grid kernel.
#[derive(Clone, Debug)]
struct Sampler {
    busy: Duration,
    cost: SamplingCost,
    shapes_sampled: HashMap<String, usize>,
}

impl Sampler {
    fn new(deadline: Option<Duration>, allowance: Option<Duration>) -> Sampler {
        Sampler {
            busy: Duration::ZERO,
            cost: SamplingCost { spent: Duration::ZERO, samples: 0, unfinished: 0, not_sampled: 0, deadline, allowance },
            shapes_sampled: HashMap::new(),
        }
    }

    /// What the model may still spend sampling; `None`: no cap.
    fn room(&self) -> Option<Duration> {
        let cap = self.cost.allowance? + self.busy.mul_f64(SAMPLING_SHARE);
        Some(cap.saturating_sub(self.cost.spent))
    }

    /// `launch` predicted from a sample within the bounds, and whether the outcome stands for
    /// the later launches of its shape (not when the cap refused the sample or cut it short).
    /// `cut_before`: the cap cut a sample of this shape short before, so it is sampled again
    /// only with room for its whole deadline (it would most likely be cut short again).
    fn predict(
        &mut self,
        machine: &Machine,
        launch: &Launch,
        traffic: Traffic,
        multiprocessors: u32,
        host_view_of: &dyn Fn(DeviceAlloc) -> Option<Arc<SimBuffer>>,
        cut_before: bool,
        countable: bool,
    ) -> (Result<Prediction, Unpredicted>, bool) {
        if !countable {
            return (Err(Unpredicted::Uncountable), true);
        }
        if self.shapes_sampled.get(&launch.kernel.name).is_some_and(|&n| n >= MAX_SAMPLED_SHAPES) {
            self.cost.not_sampled += 1;
            return (Err(Unpredicted::Shapes), true);
        }
        let now = Instant::now();
        let room = self.room();
        let deadline = self.cost.deadline;
        let least = match deadline {
            Some(d) if cut_before => d,
            Some(d) => d.min(MIN_SAMPLE_ROOM),
            None => MIN_SAMPLE_ROOM,
        };
        if room.is_some_and(|r| r < least) {
            self.cost.not_sampled += 1;
            return (Err(Unpredicted::TimeBudget), false);
        }
        // The cap cuts the sample short where it leaves less than the deadline.
        let cut_by_cap = room.is_some_and(|r| deadline.is_none_or(|d| r < d));
        let limit = match (deadline, room) {
            (Some(d), Some(r)) => Some(d.min(r)),
            (d, r) => d.or(r),
        };
        let made = predict_with(machine, launch, traffic, multiprocessors, host_view_of, limit.map(|l| now + l));
        self.cost.spent += now.elapsed();
        self.cost.samples += 1;
        *self.shapes_sampled.entry(launch.kernel.name.clone()).or_default() += 1;
        match made {
            Err(Unpredicted::Deadline) if cut_by_cap => {
                self.cost.not_sampled += 1;
                (Err(Unpredicted::TimeBudget), false)
            }
            Err(Unpredicted::Deadline | Unpredicted::Statements) => {
                self.cost.unfinished += 1;
                (made, true)
            }
            made => (made, true),
        }
    }
}

/// A duration in milliseconds from the environment variable `name`: `default` when it is
/// unset or not a number of milliseconds, `None` for `off`.
pub fn millis_from_env(name: &str, default: Duration) -> Option<Duration> {
    match std::env::var(name) {
        Ok(v) if v.trim().eq_ignore_ascii_case("off") => None,
        Ok(v) => Some(v.trim().parse::<f64>().ok().filter(|ms| ms.is_finite() && *ms >= 0.0).map_or(default, |ms| Duration::from_secs_f64(ms / 1e3))),
        Err(_) => Some(default),
    }
}

/// The runtime's model: one machine per device, the predictions made so far, and which
/// kernels each device has launched (a first launch also loads the kernel's code).
pub struct Model {
    machines: Vec<Machine>,
    /// Per grid kernel (by name), per launch shape: its prediction, or why there is none.
    predictions: HashMap<String, KernelShapes>,
    /// The samples' bounds and what they cost so far.
    sampler: Sampler,
    /// Per grid kernel (by name) and device: the compiled variants already launched, by the
    /// values they are specialised for (empty: the generic one), whose code is loaded.
    launched: HashMap<String, HashMap<usize, HashSet<Vec<i64>>>>,
    /// Per grid kernel (by name) and device: the device's name, the launch's sizes and the
    /// steady prediction made last, which the run leaves for `explain` ([`record`]).
    latest: HashMap<String, HashMap<usize, (String, String, Prediction)>>,
    /// Per kernel (by name): how its launches would split over several devices, per size
    /// taken ([`Model::recall_split_shape`]), and which is the latest.
    split_shapes: HashMap<String, KernelSplits>,
    /// Tracked objects (by start) a kernel has written: what a split exchanges.
    written_objects: HashSet<u64>,
    /// Per device: the ranges its recent launches touched, for what each finds in L2.
    histories: Vec<residency::L2History>,
    /// Per device whose launches queue: when (on the host's clock) it is predicted to finish
    /// the launches enqueued so far ([`Model::timing`]).
    drained_at: HashMap<usize, Instant>,
}

/// The most devices the scaling curve goes to.
pub const MAX_MODELLED_DEVICES: usize = 8;

/// Where a launch is predicted: the device (its index and name) and its multiprocessors, what
/// the launch moves in device memory, the host view of the allocation an array param is bound
/// to, whether the launch is the first to touch data the host copied in since a launch
/// last touched it, and how the runtime times it.
#[derive(Clone, Copy)]
pub struct Placement<'a> {
    pub device: usize,
    pub device_name: &'a str,
    pub multiprocessors: u32,
    pub traffic: Traffic,
    pub host_view_of: &'a dyn Fn(DeviceAlloc) -> Option<Arc<SimBuffer>>,
    pub touches_upload: bool,
    pub timing: Timing,
}

/// The sizes of one kernel whose split shapes are taken: beyond, a launch of another size
/// keeps the latest shape taken. Taking one costs the launch a few of the launch preparation's
/// passes per device count (some 130,000 instructions on the simulator), which a wavefront's
/// kernel, of a new size at nearly every launch (NPB LU's hyperplanes: 160 of them), paid at
/// every launch: `--stats` made LU 27-35% slower (bench/NOTES.md run 43).
pub const MAX_SPLIT_SHAPES: usize = 8;

/// A kernel's split shapes, at most [`MAX_SPLIT_SHAPES`], and which is the latest launch's.
#[derive(Clone, Debug)]
struct KernelSplits {
    shapes: Vec<SplitShape>,
    latest: usize,
}

/// How a launch splits over 2, 3, ... devices: the bytes of each part.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitShape {
    /// The partitioned dims' trip counts of the launch it was taken from.
    pub key: Vec<i64>,
    /// `parts[k - 2]`: the parts on `k` devices; empty where the launch cannot split (too
    /// short, or blocks that would write the same memory): it runs whole on one.
    pub parts: Vec<Vec<PartBytes>>,
}

/// One device's part of a split launch, for the scaling curve.
#[derive(Clone, Debug, PartialEq)]
pub struct PartBytes {
    pub bytes: SplitBytes,
    /// Per object (its start): the bytes the part reads beyond an even share of the whole
    /// launch's reads of it. In a time step's steady state only objects kernels write are
    /// exchanged; the others stay where the first step put them.
    pub beyond_share: Vec<(u64, u64)>,
}

impl Model {
    /// A model for `machines`, with the default bounds on sampling.
    pub fn new(machines: Vec<Machine>) -> Model {
        Model::bounded(machines, Some(sample::SAMPLE_DEADLINE), Some(SAMPLING_ALLOWANCE))
    }

    /// A model with the bounds on sampling the environment sets (`YOSEGI_MODEL_SAMPLE_MS`,
    /// `YOSEGI_MODEL_BUDGET_MS`; see the module doc).
    pub fn from_env(machines: Vec<Machine>) -> Model {
        let deadline = millis_from_env("YOSEGI_MODEL_SAMPLE_MS", sample::SAMPLE_DEADLINE);
        let allowance = millis_from_env("YOSEGI_MODEL_BUDGET_MS", SAMPLING_ALLOWANCE);
        Model::bounded(machines, deadline, allowance)
    }

    /// A model whose samples stop at `deadline` and take at most [`SAMPLING_SHARE`] of the
    /// time spent in the runtime plus `allowance` together (`None`: unbounded).
    pub fn bounded(machines: Vec<Machine>, deadline: Option<Duration>, allowance: Option<Duration>) -> Model {
        let histories = machines.iter().map(|_| residency::L2History::default()).collect();
        Model {
            machines,
            predictions: HashMap::new(),
            sampler: Sampler::new(deadline, allowance),
            launched: HashMap::new(),
            latest: HashMap::new(),
            split_shapes: HashMap::new(),
            written_objects: HashSet::new(),
            histories,
            drained_at: HashMap::new(),
        }
    }

    /// The program spent `time` in the runtime (a region, a host access that waited): the
    /// sampling cap grows by its share.
    pub fn note_busy(&mut self, time: Duration) {
        self.sampler.busy += time;
    }

    /// What sampling has cost so far, with its bounds.
    pub fn sampling_cost(&self) -> SamplingCost {
        self.sampler.cost
    }

    pub fn machine(&self, device: usize) -> Option<&Machine> {
        self.machines.get(device)
    }

    /// The peer link measured at the start of a run on several GPUs (`distribute::split_rule`),
    /// for every device's figures: the kept figures hold a nominal one, since links differ
    /// from one machine to the next.
    pub fn set_peer_link(&mut self, bytes_per_s: f64, copy_s: f64) {
        for m in &mut self.machines {
            m.peer_bytes_per_s = bytes_per_s;
            m.peer_copy_s = copy_s;
        }
    }

    /// How the latest launch of `kernel` would split (see [`Model::recall_split_shape`]).
    pub fn split_shape(&self, kernel: &str) -> Option<&SplitShape> {
        self.split_shapes.get(kernel).map(|k| &k.shapes[k.latest])
    }

    /// Whether the split shape of `kernel` at trip counts `key` is known, and made the latest
    /// if so; `false`: it is to be taken ([`Model::set_split_shape`]). A kernel whose launches
    /// came in [`MAX_SPLIT_SHAPES`] sizes already keeps the latest of those for the others.
    pub fn recall_split_shape(&mut self, kernel: &str, key: &[i64]) -> bool {
        let Some(known) = self.split_shapes.get_mut(kernel) else { return false };
        if let Some(i) = known.shapes.iter().position(|s| s.key == key) {
            known.latest = i;
            return true;
        }
        known.shapes.len() >= MAX_SPLIT_SHAPES
    }

    /// The split shape of `kernel` at the sizes `shape.key`, now its latest.
    pub fn set_split_shape(&mut self, kernel: String, shape: SplitShape) {
        let known = self.split_shapes.entry(kernel).or_insert_with(|| KernelSplits { shapes: Vec::new(), latest: 0 });
        match known.shapes.iter().position(|s| s.key == shape.key) {
            Some(i) => {
                known.shapes[i] = shape;
                known.latest = i;
            }
            None => {
                known.latest = known.shapes.len();
                known.shapes.push(shape);
            }
        }
    }

    /// A launch on `device` reading `reads` and writing `writes` (byte ranges of the tracked
    /// objects), `bytes` in all: what it moves, with what the launches before it left in the
    /// device's L2 cache. Remembered for the launches after it.
    pub fn note_launch(&mut self, device: usize, reads: &[(u64, u64)], writes: &[(u64, u64)], bytes: u64) -> Traffic {
        let resident = match (self.histories.get_mut(device), self.machines.get(device)) {
            (Some(history), Some(machine)) => Some(history.touch(reads, writes, machine.l2_bytes)),
            _ => None,
        };
        Traffic { bytes, resident }
    }

    /// The host copied its bytes `lo..hi` (of a tracked object) to `device`: the copy writes
    /// through the device's L2 cache, so the launches after it find those bytes there as they
    /// would a launch's that wrote them.
    pub fn note_upload(&mut self, device: usize, lo: u64, hi: u64) {
        if let (Some(history), Some(machine)) = (self.histories.get_mut(device), self.machines.get(device)) {
            history.touch(&[], &[(lo, hi)], machine.l2_bytes);
        }
    }

    /// A kernel wrote into the tracked object starting at `object`.
    pub fn note_written(&mut self, object: u64) {
        self.written_objects.insert(object);
    }

    /// The predicted time of one steady launch of grid kernel `grid` (its latest sizes, on
    /// `device`'s machine) on 1 to [`MAX_MODELLED_DEVICES`] devices of that machine: the
    /// scaling curve. A launch that cannot split keeps its one-device time.
    pub fn scaling(&self, module: &Module, grid: &str, device: usize) -> Option<Vec<f64>> {
        let (_, _, whole) = self.latest.get(grid)?.get(&device)?;
        let machine = self.machines.get(device)?;
        let source = module.grid_kernels.iter().find(|(_, g)| g.name == grid)?.1.source;
        let shape = self.split_shape(&module.kernels[source].name);
        Some(
            (1..=MAX_MODELLED_DEVICES)
                .map(|k| match (shape, k.checked_sub(2)) {
                    (Some(shape), Some(i)) if i < shape.parts.len() => {
                        let parts = &shape.parts[i];
                        let exchange = parts
                            .iter()
                            .map(|p| p.beyond_share.iter().filter(|(o, _)| self.written_objects.contains(o)).map(|(_, b)| b).sum::<u64>())
                            .max()
                            .unwrap_or(0);
                        let bytes: Vec<SplitBytes> = parts.iter().map(|p| p.bytes).collect();
                        predict::predict_parts(machine, whole, &bytes, exchange)
                    }
                    _ => whole.seconds,
                })
                .collect(),
        )
    }

    /// The predicted time of one steady launch of grid kernel `grid` over 1 to 64 MPI ranks
    /// of one GPU each, on nodes of the cluster `cluster` describes (`model::cluster`): the
    /// strong-scaling curve (the launch's size split over the ranks) and the weak-scaling one
    /// (every rank with a launch of this size), at [`cluster::RANK_COUNTS`].
    pub fn ranks(&self, module: &Module, grid: &str, device: usize, cluster: &cluster::Cluster) -> Option<(Vec<f64>, Vec<f64>)> {
        let (_, _, whole) = self.latest.get(grid)?.get(&device)?;
        let machine = self.machines.get(device)?;
        let grid_kernel = module.grid_kernels.iter().find(|(_, g)| g.name == grid)?.1;
        let shape = self.split_shape(&module.kernels[grid_kernel.source].name);
        // An interior part's halo: the middle of three parts (two neighbours), else a part of
        // two (one).
        let written = |p: &PartBytes| p.beyond_share.iter().filter(|(o, _)| self.written_objects.contains(o)).map(|(_, b)| b).sum::<u64>();
        let halo = match shape.map(|s| s.parts.as_slice()) {
            Some([_, three, ..]) if three.len() == 3 => cluster::Halo { bytes: written(&three[1]), copies: 2 },
            Some([two, ..]) => cluster::Halo { bytes: two.iter().map(written).max().unwrap_or(0), copies: 1 },
            _ => cluster::Halo::default(),
        };
        let splits = shape.is_some_and(|s| !s.parts.is_empty());
        let reductions = !grid_kernel.reductions.is_empty();
        Some((
            cluster::strong_s(machine, cluster, whole, splits, halo, reductions),
            cluster::weak_s(machine, cluster, whole, splits, halo, reductions),
        ))
    }

    /// The predicted time of `launch` at `at`, or why there is none ([`Unpredicted`]: its
    /// sample ran out of time or statements, the model's sampling time was spent, or it reaches
    /// memory the host views do not cover).
    /// The first launch of a grid kernel on a device also pays for loading its code, from
    /// idle ([`Timing::of_launch`]), and the first launch to touch data the host copied in pays
    /// for that touch (bench/NOTES.md run 26: both measured where a program's kernels launched
    /// once paid 24 us over their steady time, and the code's load alone 16).
    pub fn predict_launch(&mut self, launch: &Launch, at: &Placement) -> Result<Prediction, Unpredicted> {
        let prediction = self.predict_steady(launch, at);
        let first = self.loads_code(launch, at.device);
        let machine = self.machines.get(at.device).ok_or(Unpredicted::Uncountable)?;
        let first_launch_s = if first { machine.first_launch() } else { 0.0 };
        let timing = Timing::of_launch(first, at.timing);
        let extra = first_launch_s + if at.touches_upload { machine.upload_touch_s } else { 0.0 } + timing.idle_share() * machine.idle_launch();
        prediction.map(|mut p| {
            p.launch_s += extra;
            p.seconds += extra;
            p.loads_code = first;
            p.first_launch_s = first_launch_s;
            p
        })
    }

    /// Whether `launch` on `device` is the first of its compiled variant, which loads the
    /// variant's code: a GPU compiles a variant per distinct values of the kernel's
    /// specialisable params, up to `cuda::MAX_VARIANTS`, then the generic one
    /// (`cuda::specialised_constants`). Counted as launched.
    fn loads_code(&mut self, launch: &Launch, device: usize) -> bool {
        let variants = by_name(&mut self.launched, &launch.kernel.name).entry(device).or_default();
        let constants = crate::runtime::cuda::specialised_constants(launch).unwrap_or_default();
        let kept = crate::runtime::cuda::keeps_variant(&constants, |c: &Vec<i64>| !c.is_empty(), variants.iter());
        variants.insert(if kept { constants } else { Vec::new() })
    }

    /// [`Model::predict_launch`] without the first launch's cost, and without counting the
    /// launch as made: what a launch costs once its code is loaded.
    pub fn predict_steady(&mut self, launch: &Launch, at: &Placement) -> Result<Prediction, Unpredicted> {
        let Placement { device, device_name, multiprocessors, traffic, host_view_of, .. } = *at;
        let machine = self.machines.get(device).ok_or(Unpredicted::Uncountable)?;
        let shapes = by_name(&mut self.predictions, &launch.kernel.name);
        let params = shapes.params.get_or_insert_with(|| shape_params(launch.kernel, &launch.specialisable));
        let key = PredictionKey { device, shape: shape_values(launch, params), dram_bytes: traffic.bytes };
        if let Some(known) = shapes.predictions.get(&key) {
            // The counts are the shape's; what the cache holds for it is this time's.
            let known = known.as_ref().map_err(|why| *why)?;
            let p = if known.work.resident_bytes == traffic.resident {
                known.clone()
            } else {
                predict::predict(machine, &LaunchWork { resident_bytes: traffic.resident, ..known.work.clone() })
            };
            // The latest prediction of this launch (not one of other sizes) follows the cache.
            if let Some(latest) = self.latest.get_mut(launch.kernel.name.as_str()).and_then(|l| l.get_mut(&device))
                && latest.2.work.resident_bytes != p.work.resident_bytes
                && (latest.2.work.blocks, latest.2.work.dram_bytes, &latest.2.work.counters) == (p.work.blocks, p.work.dram_bytes, &p.work.counters)
            {
                latest.2 = p.clone();
            }
            return Ok(p);
        }
        let samples_before = self.sampler.cost.samples;
        let cut_before = shapes.cut_short.contains(&key);
        let countable = *shapes.countable.get_or_insert_with(|| countable(launch.module, launch.kernel));
        let (made, stands) = self.sampler.predict(machine, launch, traffic, multiprocessors, host_view_of, cut_before, countable);
        let shapes = by_name(&mut self.predictions, &launch.kernel.name);
        if matches!(made, Err(Unpredicted::TimeBudget)) && self.sampler.cost.samples > samples_before {
            shapes.cut_short.insert(key.clone());
        }
        if stands {
            shapes.predictions.insert(key, made.clone());
        }
        if let Ok(p) = &made {
            let sizes = LaunchKey::of(launch.kernel, &launch.specialisable, &launch.params, device_name).sizes_text();
            by_name(&mut self.latest, &launch.kernel.name).insert(device, (device_name.to_string(), sizes, p.clone()));
        }
        made
    }
}

impl Model {
    /// The latest prediction of every grid kernel of `module` this model predicted, per
    /// device, with the mean device time `stats` measured for it, as [`record`] keeps them.
    pub fn records(&self, module: &Module, stats: &crate::runtime::stats::Stats) -> Vec<record::PredictionRecord> {
        let mut identities: HashMap<Handle<Kernel>, KernelIdentity> = HashMap::new();
        let cluster = cluster::Cluster::from_env();
        let mut records: Vec<record::PredictionRecord> = self
            .latest
            .iter()
            .flat_map(|(grid, per_device)| per_device.iter().map(move |(device_index, latest)| (grid, device_index, latest)))
            .filter_map(|(grid, device_index, (device, sizes, p))| {
                let source = module.grid_kernels.iter().find(|(_, g)| &g.name == grid)?.1.source;
                let kernel = identities.entry(source).or_insert_with(|| KernelIdentity::of(module, source)).clone();
                let launches = stats.launches.get(grid);
                Some(record::PredictionRecord {
                    kernel,
                    device: device.clone(),
                    sizes: sizes.clone(),
                    grid: grid.clone(),
                    predicted_s: p.seconds,
                    bound: p.bound.name().to_string(),
                    measured_s: launches.and_then(|l| l.mean_device_time()),
                    launches: launches.map_or(0, |l| l.count),
                    scaling_s: self.scaling(module, grid, *device_index).unwrap_or_default(),
                    ranks_s: self.ranks(module, grid, *device_index, &cluster).map(|(strong, _)| strong).unwrap_or_default(),
                })
            })
            .collect();
        records.sort_by(|a, b| (&a.kernel.name, &a.grid, &a.device).cmp(&(&b.kernel.name, &b.grid, &b.device)));
        records
    }

    /// [`Model::predict_launch`] for `launch` on `device`, its array params read through
    /// read-only views of the host memory of the objects `registry` tracks; `steady`: without
    /// the first launch's cost ([`Model::predict_steady`]); `touches_upload`: see
    /// [`Placement`].
    #[allow(clippy::too_many_arguments)]
    pub fn predict_on(
        &mut self,
        launch: &Launch,
        device: usize,
        traffic: Traffic,
        on: &dyn Device,
        registry: &Registry,
        steady: bool,
        touches_upload: bool,
        timing: Timing,
    ) -> Result<Prediction, Unpredicted> {
        // Looked up only when the launch is sampled (a prediction not made before).
        let host_view_of = |alloc: DeviceAlloc| {
            let object = registry.iter().find(|o| o.copies.placement(device) == Some((alloc, 0)))?;
            // SAFETY: a tracked object is host memory the program keeps alive while the
            // runtime works for it; the view is dropped before this call returns.
            Some(Arc::new(unsafe { SimBuffer::host_view(object.start as *const u8, object.len as usize) }))
        };
        let at = Placement { device, device_name: on.model(), multiprocessors: on.multiprocessors(), traffic, host_view_of: &host_view_of, touches_upload, timing };
        if steady { self.predict_steady(launch, &at) } else { self.predict_launch(launch, &at) }
    }
}

/// How a launch runs: queued behind the others, or on an idle device, which costs more
/// ([`Machine::idle_launch`]: the device waits for the host to enqueue the launch where a
/// queued one is there when the launch before it ends).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Timing {
    Queued,
    /// On a device that ran out of launches before this one came: `idle_share` of the idle
    /// extra is paid (1 after the host waited for the device, less after a short gap; see
    /// [`IDLE_SETTLE_S`]).
    Alone { idle_share: f64 },
}

impl Timing {
    /// A launch on a device idle long enough to pay the whole idle extra.
    pub const IDLE: Timing = Timing::Alone { idle_share: 1.0 };

    /// How a launch that `loads_code` (the first of its compiled kernel) runs where the others
    /// would run as `timing` says: from idle. The host gets its code ready first (compiled, or
    /// read from the disk cache, and loaded: a millisecond or more), and the device runs dry
    /// meanwhile; the code's load is then the driver's time in the launch call, all of it
    /// seen (bench/NOTES.md run 39: a fresh module's first launch queued behind 5 us of work
    /// or more took no longer than a queued launch, from idle 1.5-6 us longer than its second).
    pub fn of_launch(loads_code: bool, timing: Timing) -> Timing {
        if loads_code { Timing::IDLE } else { timing }
    }

    /// The share of [`Machine::idle_launch`] the launch pays.
    pub fn idle_share(self) -> f64 {
        match self {
            Timing::Queued => 0.0,
            Timing::Alone { idle_share } => idle_share,
        }
    }
}

/// How long a device idles before a launch pays the whole idle extra: the share paid after a
/// gap of `g` is `1 - exp(-g / IDLE_SETTLE_S)`. Measured on an H200 (bench/NOTES.md run 36,
/// bench/experiments/idle_gap.cu): a small kernel enqueued with the host spinning 0, 1, 2, 4,
/// 8 and 12+ us between launches took 4.7, 5.3, 6.3, 6.7, 7.4 and 7.5 us between its events
/// (the same 7.5 after the host waited for the device); SP's kernels, enqueued a few
/// microseconds after the device ran dry, paid about the queued launch where LU's, CG's and
/// MG's, tens of microseconds after, paid 3-4 us more.
pub const IDLE_SETTLE_S: f64 = 2.5e-6;

impl Model {
    /// How a launch the host enqueues on `device` (`on`) at `now` runs: on its own when it is
    /// `timed` (a variant's exploration waits for the launches before it), when the host has
    /// waited for every launch before it (the whole idle extra), and when the device is
    /// predicted to have finished them by `now`, with the share of the extra its predicted
    /// idle gap says (bench/NOTES.md runs 34 and 36: NPB LU's and CG's hosts spend 15-42 us
    /// on each launch, so their kernels of a few microseconds all start from idle, with
    /// nothing waited for).
    pub fn timing(&self, device: usize, timed: bool, on: &dyn Device, now: Instant) -> Timing {
        if timed || on.idle() {
            return Timing::IDLE;
        }
        if !on.queues_launches() {
            return Timing::Queued;
        }
        match self.drained_at.get(&device) {
            None => Timing::IDLE,
            Some(&at) if at <= now => Timing::Alone { idle_share: 1.0 - (-(now - at).as_secs_f64() / IDLE_SETTLE_S).exp() },
            Some(_) => Timing::Queued,
        }
    }

    /// The device `device` has a launch predicted to take `seconds` enqueued at `now`, behind
    /// those before it; a launch that starts from idle starts now.
    pub fn enqueued(&mut self, device: usize, now: Instant, timing: Timing, seconds: f64) {
        let start = match (timing, self.drained_at.get(&device)) {
            (Timing::Queued, Some(&at)) => at.max(now),
            _ => now,
        };
        self.drained_at.insert(device, start + Duration::from_secs_f64(seconds.max(0.0)));
    }
}

/// The prediction for `launch` on device `device` (`on`), enqueued by the host at `now`,
/// `timed` on its own or not, recorded in `stats`, when the model is on (stats are). `now` is
/// the launch's own start time, read once for its measured time too: a clock read costs some
/// 0.3 us on some hosts, a launch-bound program makes hundreds of thousands of launches.
#[allow(clippy::too_many_arguments)]
pub fn record_prediction(
    model: &mut Option<Model>,
    stats: &mut crate::runtime::stats::Stats,
    launch: &Launch,
    device: usize,
    traffic: Traffic,
    timed: bool,
    on: &dyn Device,
    registry: &mut Registry,
    now: Instant,
) {
    let Some(model) = model.as_mut() else { return };
    let touches_upload = take_uploads(launch, device, registry);
    let timing = model.timing(device, timed, on, now);
    match model.predict_on(launch, device, traffic, on, registry, false, touches_upload, timing) {
        Ok(prediction) => {
            let timing = Timing::of_launch(prediction.loads_code, timing);
            model.enqueued(device, now, timing, prediction.seconds);
            stats.record_prediction(&launch.kernel.name, &prediction, timing);
        }
        Err(why) => stats.record_unpredicted(&launch.kernel.name, why),
    }
}

/// Whether `launch` on `device` touches an object whose copy there the host wrote since a
/// launch last touched it; the launch touches them now, so their flags are cleared.
fn take_uploads(launch: &Launch, device: usize, registry: &mut Registry) -> bool {
    let mut touches = false;
    for object in registry.iter_mut() {
        if let Some(copy) = object.copies.devices.get_mut(device).and_then(Option::as_mut)
            && copy.uploaded
            && launch.params.iter().any(|p| matches!(p, DeviceParam::Array { alloc, .. } if *alloc == copy.alloc))
        {
            copy.uploaded = false;
            touches = true;
        }
    }
    touches
}

/// The prediction for `launch` on `machine` (see [`Model::predict_launch`]), its sample
/// stopped once the host's clock passes `deadline`.
pub fn predict_with(
    machine: &Machine,
    launch: &Launch,
    traffic: Traffic,
    multiprocessors: u32,
    host_view_of: &dyn Fn(DeviceAlloc) -> Option<Arc<SimBuffer>>,
    deadline: Option<Instant>,
) -> Result<Prediction, Unpredicted> {
    if !countable(launch.module, launch.kernel) {
        return Err(Unpredicted::Uncountable);
    }
    let sampled = sample::sample_launch(launch, host_view_of, multiprocessors, machine, deadline).map_err(|fault| match fault.message.as_str() {
        crate::runtime::sim::interp::DEADLINE_PASSED => Unpredicted::Deadline,
        crate::runtime::sim::interp::BUDGET_SPENT => Unpredicted::Statements,
        _ => Unpredicted::Uncountable,
    })?;
    let work = LaunchWork {
        blocks: sampled.blocks,
        threads_per_block: sampled.block.iter().product(),
        shared_bytes_per_block: launch.kernel.shared_memory_bytes(),
        registers_per_thread: predict::DEFAULT_REGISTERS,
        counters: sampled.counters,
        dram_bytes: traffic.bytes,
        resident_bytes: traffic.resident,
        time_steps: time_steps(launch.module, launch.kernel),
    };
    Ok(predict::predict(machine, &work))
}

/// The time steps `kernel` runs per launch: its step fusion's count, else 1.
fn time_steps(module: &Module, kernel: &GridKernel) -> u32 {
    module.step_fusions.iter().find(|s| module.grid_kernels[s.grid].name == kernel.name).map_or(1, |s| s.steps)
}

/// Whether sampled blocks can run over host views: not when the kernel reads rows through
/// device addresses (row tables) or computes addresses, which the views do not have.
fn countable(module: &Module, kernel: &GridKernel) -> bool {
    !kernel.params.iter().any(|p| matches!(p.kind, crate::ir::ParamKind::RowTable { .. })) && !module.reaches_addresses(&kernel.body)
}

/// The raw values of the params that decide `launch`'s work (see [`PredictionKey`]): its
/// specialisable integer params, and the floating ones its grid reads, in param order.
#[cfg(test)]
fn shape_scalars(launch: &Launch) -> Vec<u64> {
    shape_values(launch, &shape_params(launch.kernel, &launch.specialisable))
}

/// The params whose values decide the shape of `kernel`'s launches ([`shape_scalars`]), in
/// param order: the same for every launch of the kernel.
fn shape_params(kernel: &GridKernel, specialisable: &[u32]) -> Vec<u32> {
    let mut params = specialisable.to_vec();
    let mut pending = kernel.launch.grid.to_vec();
    while let Some(e) = pending.pop() {
        let Some(expr) = kernel.body.exprs.get(e) else { continue };
        match &expr.kind {
            crate::ir::ExprKind::Param(p) => {
                if matches!(kernel.params.get(*p as usize).map(|p| &p.kind), Some(crate::ir::ParamKind::Scalar(t)) if t.is_float()) {
                    params.push(*p);
                }
            }
            kind => pending.extend(kind.operands()),
        }
    }
    params.sort_unstable();
    params.dedup();
    params
}

/// The raw values `launch` passes for `params` ([`shape_params`]).
fn shape_values(launch: &Launch, params: &[u32]) -> Vec<u64> {
    let kernel = launch.kernel;
    params
        .iter()
        .filter_map(|&p| match (kernel.params.get(p as usize).map(|p| &p.kind), launch.params.get(p as usize)) {
            (Some(crate::ir::ParamKind::Scalar(ty)), Some(DeviceParam::Value(v))) => Some(crate::ir::value::from_param(*ty, *v)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests;
