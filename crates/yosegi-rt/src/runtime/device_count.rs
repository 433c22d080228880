//! How many devices the program's repeating work runs on: all of them (its launches split as
//! `distribute` and the model decide) or one, chosen by timing the program's own cycle of
//! compute regions both ways.
//!
//! Whether one launch gains from a split is a question of that launch
//! (`model::predict::split_pays`); whether the program gains is not. A conjugate-gradient
//! iteration splits its sparse product, then reads the dot product's partial results from
//! every device and gathers the vectors the next launches read whole: on two H100s it ran
//! 0.84x of one, though each split launch alone was predicted faster. So the runtime measures
//! the cycle itself:
//!
//! * the *cycle* is the span between two calls of the same compute region, the first region
//!   whose launch was split and that then ran again (a time step's first region);
//! * once it is known: one cycle warms up and [`MIN_CYCLES`] cycles (at least
//!   [`MIN_SAMPLED`] of them) are timed with splitting as usual, then the same on one device
//!   (the first cycle gathers the data there and is not kept);
//! * the median cycles compare, and one device stays only when faster by more than
//!   [`ONE_DEVICE_MARGIN`]; else splitting resumes (the first cycles redistribute the data);
//! * but one device is not tried at all when the split cycle is already well below the
//!   kernels' device time in it summed over the devices ([`ONE_DEVICE_WORK_SHARE`]): one
//!   device would run those kernels one after the other. (Measured on four H100s before this
//!   filter: trying cost Himeno L 83 ms of 0.32 s, heat-3d 48 ms of 0.50 s.)
//!
//! A cycle's time is from one call of the region to the next, each taken once the devices are
//! idle: it holds the host code between the regions, every wait the program makes for results,
//! and the devices' work, as the program's own time does. (Without the waits, a cycle on one
//! device measured how fast the host queued a stencil's launches: 0.011 ms against 4.1 split.) Off on the simulator (it has no clock: every launch that can be split is),
//! with one device, with `YOSEGI_DEVICE_COUNT=all` (never one) and under
//! `YOSEGI_MIN_SPLIT_BYTES` (measuring a byte rule).
//!
//! The cycles run on one device spend the run's exploration budget
//! (`variants::ExplorationBudget`): the whole of each, since on one device the program runs
//! the cycles the splitting would have run, possibly slower, and gathers its data there. The
//! split side's cycles are the program as it runs anyway. Once the budget is spent, a choice
//! not yet made keeps splitting, as usual, and `--stats` counts it among the choices the
//! budget decided.

pub mod record;

use std::time::{Duration, Instant};

use super::variants::typical_sample;
use super::{Runtime, RuntimeError};

/// Timed cycles of each side.
pub const MIN_CYCLES: usize = 3;
/// Time the timed cycles of a side must add up to, at least (more cycles while below).
pub const MIN_SAMPLED: Duration = Duration::from_millis(5);
/// At most this many timed cycles a side, whatever they add up to.
pub const MAX_CYCLES: usize = 50;
/// Cycles a side may take, kept or dropped, before the choice gives up and splits as usual
/// (a program whose kernels meet new sizes at every cycle never stops exploring variants).
pub const MAX_SEEN_CYCLES: usize = 200;
/// One device is not tried when the split cycle is below this share of the kernels' device
/// time in it, summed over the devices: one device runs the same iterations, so its cycle
/// takes about that sum (a part's fixed costs, a few microseconds a launch, make the sum
/// somewhat more than one whole launch takes: hence 0.8). Trying costs a cycle's data gathered
/// onto one device and spread again: on four H100s 83 ms of Himeno L's 0.32 s.
pub const ONE_DEVICE_WORK_SHARE: f64 = 0.8;
/// One device must beat all of them by this fraction of the cycle to stay.
pub const ONE_DEVICE_MARGIN: f64 = 0.05;

/// Where the choice stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    /// No cycle known yet (no split launch's region has run twice), or nothing to choose.
    Waiting,
    /// Timing cycles with splitting (`one_device: false`) or on one device; the first cycle
    /// of each side is a warm-up.
    Timing { one_device: bool, warm: bool, times: Vec<Duration> },
    /// Chosen: one device, or all.
    Chosen { one_device: bool },
}

/// What was chosen, and from what.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    pub one_device: bool,
    /// The typical split cycle.
    pub split: Duration,
    /// The typical cycle on one device, when it was tried.
    pub one: Option<Duration>,
    /// The typical kernel time of a split cycle, summed over the devices.
    pub work: Duration,
}

/// The choice's state (see the module doc).
#[derive(Clone, Debug)]
pub struct DeviceCount {
    enabled: bool,
    /// The region whose calls bound the cycle.
    head: Option<i32>,
    /// Regions whose launches were split, seen once.
    split_regions: Vec<i32>,
    phase: Phase,
    /// When the current cycle began, the variant chooser's count of exploring launches then
    /// (`VariantChooser::exploring_launches`) and the devices' kernel time so far.
    cycle_started: Option<(Instant, u64, Duration)>,
    /// The split side's timed cycles, once the one-device side is timing.
    split_times: Vec<Duration>,
    /// The kernels' device time in each of the split side's timed cycles, summed over devices.
    split_work: Vec<Duration>,
    /// The decision, for `--stats`.
    pub decision: Option<Decision>,
    /// Cycles the current side has taken, kept or not.
    seen: usize,
}

impl DeviceCount {
    pub fn new(enabled: bool) -> DeviceCount {
        DeviceCount { enabled, head: None, split_regions: Vec::new(), phase: Phase::Waiting, cycle_started: None, split_times: Vec::new(), split_work: Vec::new(), decision: None, seen: 0 }
    }

    /// Whether launches may be split now (`false`: the whole program's launches run on one
    /// device, while that side is timed or once it was chosen).
    pub fn splits(&self) -> bool {
        !matches!(self.phase, Phase::Timing { one_device: true, .. } | Phase::Chosen { one_device: true })
    }

    /// A launch of compute region `region` was split over the devices.
    pub fn split_seen(&mut self, region: i32) {
        if !self.enabled || self.head.is_some() || self.split_regions.contains(&region) {
            return;
        }
        self.split_regions.push(region);
    }

    /// Whether a call of compute region `region` begins or ends a timed cycle: the devices are
    /// then made idle before its time is taken, so that a cycle's time is the work it ran, not
    /// how fast the host queued it (on one device the host queues a stencil's launches far
    /// ahead of the GPU; split, it waits for exchanges).
    pub fn times_call(&self, region: i32) -> bool {
        if !self.enabled {
            return false;
        }
        match self.head {
            None => self.split_regions.contains(&region),
            Some(head) => head == region && matches!(self.phase, Phase::Timing { .. }),
        }
    }

    /// Compute region `region` is called, at `now` (after the devices were made idle when
    /// [`DeviceCount::times_call`] says so).
    /// `exploring` is the variant chooser's count of launches made while their kernel's
    /// variants were still being explored: a cycle during which it grew timed that exploration
    /// (candidates compiled and timed one by one) and is not kept.
    /// `work` is the devices' kernel time so far, summed over them (complete: the devices are
    /// idle at the calls that bound a timed cycle).
    /// Returns the time of the cycle this call ended when it ran on one device, which the
    /// exploration budget pays (see the module doc).
    pub fn region_called(&mut self, region: i32, now: Instant, exploring: u64, work: Duration) -> Option<Duration> {
        if !self.enabled {
            return None;
        }
        if self.head.is_none() && self.split_regions.contains(&region) {
            self.head = Some(region);
            self.phase = Phase::Timing { one_device: false, warm: false, times: Vec::new() };
            self.cycle_started = Some((now, exploring, work));
            return None;
        }
        if self.head != Some(region) {
            return None;
        }
        let (started, explored_before, work_before) = self.cycle_started.replace((now, exploring, work))?;
        let cycle = now.saturating_duration_since(started);
        let cycle_work = work.saturating_sub(work_before);
        let Phase::Timing { one_device, warm, times } = &mut self.phase else { return None };
        let spent = one_device.then_some(cycle);
        self.seen += 1;
        if self.seen > MAX_SEEN_CYCLES {
            self.phase = Phase::Chosen { one_device: false };
            return spent;
        }
        if !*warm {
            *warm = true;
            return spent;
        }
        if exploring != explored_before {
            return spent;
        }
        times.push(cycle);
        if !*one_device {
            self.split_work.push(cycle_work);
        }
        let total: Duration = times.iter().sum();
        if times.len() < MAX_CYCLES && (times.len() < MIN_CYCLES || total < MIN_SAMPLED) {
            return spent;
        }
        let work = typical_sample(&self.split_work);
        if !*one_device {
            let split = typical_sample(times);
            if split.as_secs_f64() < ONE_DEVICE_WORK_SHARE * work.as_secs_f64() {
                self.decision = Some(Decision { one_device: false, split, one: None, work });
                self.phase = Phase::Chosen { one_device: false };
                return spent;
            }
            self.seen = 0;
            self.split_times = std::mem::take(times);
            self.phase = Phase::Timing { one_device: true, warm: false, times: Vec::new() };
            return spent;
        }
        let (split, one) = (typical_sample(&self.split_times), typical_sample(times));
        let one_device = one.as_secs_f64() < split.as_secs_f64() * (1.0 - ONE_DEVICE_MARGIN);
        self.decision = Some(Decision { one_device, split, one: Some(one), work });
        self.phase = Phase::Chosen { one_device };
        spent
    }

    /// Ends a choice not yet made, the exploration budget being spent: splitting, as usual.
    /// Returns whether there was one to end.
    pub fn stop_exploring(&mut self) -> bool {
        if !matches!(self.phase, Phase::Timing { .. }) {
            return false;
        }
        self.phase = Phase::Chosen { one_device: false };
        true
    }

    #[cfg(test)]
    pub fn phase(&self) -> &Phase {
        &self.phase
    }
}

impl Runtime {
    /// Compute region `id` is called: the choice learns of it (the devices made idle first
    /// when the call bounds a timed cycle), and `--stats` of a decision it makes.
    pub(super) fn count_devices_at(&mut self, id: i32) -> Result<(), RuntimeError> {
        if self.device_count.times_call(id) {
            self.synchronize_devices()?;
        }
        let work = Duration::from_nanos(self.stats.device.device_time_ns);
        let decided = self.device_count.decision.is_some();
        let now = Instant::now();
        if let Some(spent) = self.device_count.region_called(id, now, self.variants.exploring_launches(), work) {
            self.variants.budget_mut().charge(spent);
        }
        if !self.variants.budget().has_room() && self.device_count.stop_exploring() {
            self.variants.budget_mut().decided();
        }
        if !decided {
            self.stats.device_count = self.device_count.decision;
        }
        Ok(())
    }
}

/// Whether the choice runs for a runtime: several devices that can time, and no override. Not
/// in a job of several ranks (`runtime::ranks`): each rank would time its own cycles and decide
/// apart from the others.
pub fn enabled(simulated: bool, in_job: bool, devices: usize) -> bool {
    !simulated
        && !in_job
        && devices > 1
        && std::env::var_os("YOSEGI_MIN_SPLIT_BYTES").is_none()
        && !std::env::var("YOSEGI_DEVICE_COUNT").is_ok_and(|v| v.trim() == "all")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// Drives `count` through `cycles` calls of region 1 (split when splitting is on) and 2,
    /// `split_ms` a cycle while splitting and `one_ms` on one device, the clock at `now`; a
    /// split cycle's kernels take `work_ms` of device time, summed over the devices.
    fn drive(count: &mut DeviceCount, now: &mut Instant, cycles: usize, (split_ms, one_ms, work_ms): (u64, u64, u64)) {
        for _ in 0..cycles {
            let work = WORK.with(|w| w.get());
            count.region_called(1, *now, 0, work);
            if count.splits() {
                count.split_seen(1);
            }
            count.region_called(2, *now, 0, work);
            let splits = count.splits();
            *now += ms(if splits { split_ms } else { one_ms });
            WORK.with(|w| w.set(w.get() + ms(if splits { work_ms } else { one_ms })));
        }
    }

    thread_local! {
        /// The devices' kernel time so far in a test.
        static WORK: std::cell::Cell<Duration> = const { std::cell::Cell::new(Duration::ZERO) };
    }

    #[test]
    fn a_cycle_faster_on_one_device_keeps_one_and_a_slower_one_splits_again() {
        let now = &mut Instant::now();
        let mut cg = DeviceCount::new(true);
        drive(&mut cg, now, 30, (4, 3, 0));
        assert_eq!(cg.phase(), &Phase::Chosen { one_device: true });
        assert!(!cg.splits());
        assert_eq!(cg.decision, Some(Decision { one_device: true, split: ms(4), one: Some(ms(3)), work: Duration::ZERO }));

        let mut stencil = DeviceCount::new(true);
        drive(&mut stencil, now, 30, (2, 3, 0));
        assert_eq!(stencil.phase(), &Phase::Chosen { one_device: false });
        assert!(stencil.splits());
        assert_eq!(stencil.decision, Some(Decision { one_device: false, split: ms(2), one: Some(ms(3)), work: Duration::ZERO }));

        // Within the margin, splitting stays.
        let mut close = DeviceCount::new(true);
        drive(&mut close, now, 30, (100, 97, 0));
        assert_eq!(close.phase(), &Phase::Chosen { one_device: false });
    }

    #[test]
    fn one_device_is_not_tried_when_the_split_cycle_is_well_below_its_kernels_summed_time() {
        let now = &mut Instant::now();
        // Four devices, 2 ms a cycle split, 7 ms of kernels in it summed over them.
        let mut stencil = DeviceCount::new(true);
        drive(&mut stencil, now, 12, (2, 9, 7));
        assert_eq!(stencil.phase(), &Phase::Chosen { one_device: false });
        assert_eq!(stencil.decision, Some(Decision { one_device: false, split: ms(2), one: None, work: ms(7) }));
        // 2 ms split against 2 ms of kernels: one device may win, so it is tried.
        let mut cg = DeviceCount::new(true);
        drive(&mut cg, now, 30, (2, 1, 2));
        assert_eq!(cg.decision, Some(Decision { one_device: true, split: ms(2), one: Some(ms(1)), work: ms(2) }));
    }

    #[test]
    fn each_side_times_a_warm_up_then_at_least_three_cycles_and_enough_time() {
        let now = &mut Instant::now();
        let mut count = DeviceCount::new(true);
        // Region 1's launch splits in the first call; its second call starts the first cycle.
        drive(&mut count, now, 2, (1, 1, 0));
        assert_eq!(count.phase(), &Phase::Timing { one_device: false, warm: false, times: vec![] });
        drive(&mut count, now, 1, (1, 1, 0));
        assert_eq!(count.phase(), &Phase::Timing { one_device: false, warm: true, times: vec![] });
        // 1 ms cycles: five are needed to reach MIN_SAMPLED, not three.
        drive(&mut count, now, 4, (1, 1, 0));
        assert_eq!(count.phase(), &Phase::Timing { one_device: false, warm: true, times: vec![ms(1); 4] });
        assert!(count.splits());
        drive(&mut count, now, 1, (1, 1, 0));
        assert_eq!(count.phase(), &Phase::Timing { one_device: true, warm: false, times: vec![] });
        assert!(!count.splits(), "the one-device side runs whole");
    }

    /// The cycles run on one device are what the exploration budget pays, warm-up included;
    /// once it is spent, a choice not yet made splits again.
    #[test]
    fn one_device_cycles_are_charged_and_a_spent_budget_ends_the_choice_splitting() {
        let mut now = Instant::now();
        let mut count = DeviceCount::new(true);
        count.region_called(1, now, 0, Duration::ZERO);
        count.split_seen(1);
        let mut charged = Vec::new();
        // The split side: the cycle's start, a warm-up and five 1 ms cycles (MIN_SAMPLED),
        // charging nothing.
        for _ in 0..7 {
            charged.push(count.region_called(1, now, 0, Duration::ZERO));
            now += ms(1);
        }
        assert!(charged.iter().all(Option::is_none), "{charged:?}");
        assert_eq!(count.phase(), &Phase::Timing { one_device: true, warm: false, times: vec![] });
        // On one device, 3 ms cycles: each is charged.
        now += ms(2);
        assert_eq!(count.region_called(1, now, 0, Duration::ZERO), Some(ms(3)), "the warm-up, gathering the data");
        now += ms(3);
        assert_eq!(count.region_called(1, now, 0, Duration::ZERO), Some(ms(3)));
        assert!(!count.splits());
        assert!(count.stop_exploring());
        assert_eq!(count.phase(), &Phase::Chosen { one_device: false });
        assert!(count.splits() && count.decision.is_none());
        assert!(!count.stop_exploring(), "nothing left to end");
    }

    #[test]
    fn a_cycle_during_which_variants_were_explored_is_not_kept() {
        let mut now = Instant::now();
        let mut count = DeviceCount::new(true);
        count.region_called(1, now, 0, Duration::ZERO);
        count.split_seen(1);
        // The exploring count at each later call: the first starts the warm-up cycle, the
        // second ends it, the next two end cycles during which variants were explored
        // (0 -> 5, 5 -> 9), and only the last cycle (9 -> 9) is kept.
        for exploring in [0, 0, 5, 9, 9] {
            count.region_called(1, now, exploring, Duration::ZERO);
            now += ms(2);
        }
        assert_eq!(count.phase(), &Phase::Timing { one_device: false, warm: true, times: vec![ms(2)] });
    }

    #[test]
    fn a_side_that_never_settles_gives_up_and_splits() {
        let mut now = Instant::now();
        let mut count = DeviceCount::new(true);
        count.region_called(1, now, 0, Duration::ZERO);
        count.split_seen(1);
        for exploring in 0..=MAX_SEEN_CYCLES as u64 + 1 {
            count.region_called(1, now, exploring, Duration::ZERO);
            now += ms(1);
        }
        assert_eq!(count.phase(), &Phase::Chosen { one_device: false });
        assert!(count.splits() && count.decision.is_none() && !count.times_call(1));
    }

    #[test]
    fn the_calls_that_bound_timed_cycles_wait_for_the_devices() {
        let now = &mut Instant::now();
        let mut count = DeviceCount::new(true);
        assert!(!count.times_call(1));
        drive(&mut count, now, 1, (1, 1, 0));
        // Region 1 split and will start the first cycle; region 2 never bounds one.
        assert!(count.times_call(1) && !count.times_call(2));
        drive(&mut count, now, 40, (2, 3, 0));
        assert!(matches!(count.phase(), Phase::Chosen { .. }));
        assert!(!count.times_call(1), "no waits once chosen");
        assert!(!DeviceCount::new(false).times_call(1));
    }

    #[test]
    fn nothing_is_chosen_without_a_repeating_split_region_or_when_disabled() {
        let now = Instant::now();
        let mut once = DeviceCount::new(true);
        once.region_called(1, now, 0, Duration::ZERO);
        once.split_seen(1);
        once.region_called(2, now, 0, Duration::ZERO);
        assert_eq!(once.phase(), &Phase::Waiting);
        assert!(once.splits());
        let mut off = DeviceCount::new(false);
        drive(&mut off, &mut Instant::now(), 40, (4, 1, 0));
        assert_eq!(off.phase(), &Phase::Waiting);
        assert!(off.splits());
    }
}
