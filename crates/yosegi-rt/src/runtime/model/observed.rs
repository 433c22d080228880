//! Launch costs as the programs pay them, observed on the GPU and kept per GPU model beside the
//! machine file across runs; once [`MIN_OBSERVED`] are kept, the model takes their median
//! instead of the calibration's figure.
//!
//! * The first launch ([`super::Machine::first_launch`]): what the first launch of a compiled
//!   kernel took beyond its second (both timed by the CUDA events around every launch). The
//!   calibration times it on five small modules, and that figure moved between 12 and 27 us
//!   from one H100 machine to the next, where the programs' kernels paid 18-25 us on each
//!   (bench/NOTES.md run 26).
//! * The steady launch ([`super::Machine::launch`]): per kernel a program launched often whose
//!   predicted work is a small part of a launch, every launch predicted, its mean device time
//!   less the mean of that work and of what the model charged beyond a steady launch (first
//!   launches, the first touch of uploaded data, launches on an idle device: bench/NOTES.md
//!   run 32, where kernels launched after the host read a reduction's result gave 7-11 us). The calibration's empty
//!   kernel, timed from idle, moved between 4.1 and 6.8 us from one calibration to the next on
//!   H100s, where such kernels took 4.7-4.9 us in every run (bench/NOTES.md run 28). The mean
//!   work, not the last launch's: NPB LU's wavefront kernels grow and shrink over a sweep, and
//!   their last, one point of the plane, took 0.1 us of predicted work where their mean took 10
//!   (bench/NOTES.md run 29: their 10-19 us per launch taken as launches pulled the median to
//!   6.3 us). Only kernels whose launches mostly queued behind others observe it.
//! * The idle launch ([`super::Machine::idle_launch`]): per kernel of the same kind whose
//!   launches mostly started on an idle device (`model::Model::timing`: the host waited for the
//!   device, or it was predicted to have finished the launches before), what its launches took
//!   beyond the steady launch, per idle launch. A variant's timed exploration launches are
//!   such launches too. Observed before on the timed launches against the same variant's
//!   other launches, it came to 0.6-1.6 us (bench/NOTES.md runs 30-33), where the same
//!   kernels of NPB SP took 1.5-3.9 us more from idle than queued, and LU's and CG's launches
//!   all started from idle with nothing waited for (run 34).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Machine;

/// Observations before the model trusts their median over the calibration's figure.
pub const MIN_OBSERVED: usize = 20;
/// Observations kept (the latest): a machine's figure follows its recent runs.
pub const MAX_KEPT: usize = 400;

/// The first two launches of each compiled kernel a device ran, paired as they finish.
#[derive(Debug, Default)]
pub struct FirstLaunches {
    /// Per compiled kernel (the device's handle): its first launch's device time, until its
    /// second finishes.
    firsts: HashMap<u64, Duration>,
    /// First minus second launch, seconds, per kernel that has both.
    samples: Vec<f64>,
}

impl FirstLaunches {
    /// Launch `nth` (1 or 2) of the compiled kernel `function` took `time` on the device (zero:
    /// the events could not tell).
    pub fn note(&mut self, function: u64, nth: u8, time: Duration) {
        match nth {
            1 if !time.is_zero() => {
                self.firsts.insert(function, time);
            }
            2 => {
                if let Some(first) = self.firsts.remove(&function)
                    && !time.is_zero()
                {
                    self.samples.push(first.as_secs_f64() - time.as_secs_f64());
                }
            }
            _ => {}
        }
    }

    pub fn samples(&self) -> &[f64] {
        &self.samples
    }
}

/// Launches a kernel needs in a run before its mean says what a steady launch costs.
pub const MIN_LAUNCHES: u64 = 10;
/// The share of a launch its predicted work may be for the kernel to observe the launch.
pub const SMALL_WORK: f64 = 0.25;

/// Which launch cost an observation is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observed {
    FirstLaunch,
    Launch,
    IdleLaunch,
}

impl Observed {
    fn extension(self) -> &'static str {
        match self {
            Observed::FirstLaunch => "first-launches.txt",
            Observed::Launch => "launches.txt",
            Observed::IdleLaunch => "idle-launches.txt",
        }
    }

    fn set(self, machine: &mut Machine, median: f64) {
        match self {
            Observed::FirstLaunch => machine.first_launch_observed_s = Some(median),
            Observed::Launch => machine.launch_observed_s = Some(median),
            Observed::IdleLaunch => machine.idle_launch_observed_s = Some(median),
        }
    }
}

/// A kernel of a run that says what its launches cost beyond their work: launched often,
/// every launch predicted, its mean predicted work a small part of a launch. Its launches'
/// mean device time less that work and less what the model charged beyond a steady launch
/// other than an idle launch's extra (first launches, the first touch of uploaded data), and
/// the share of its launches that started from idle.
fn launch_residual(k: &crate::runtime::stats::KernelLaunches, machine: &Machine) -> Option<(f64, f64)> {
    if k.count < MIN_LAUNCHES || k.device_time.is_zero() || k.predicted_launches != k.count {
        return None;
    }
    let count = k.count as f64;
    let busy = k.predicted_busy.as_secs_f64() / count;
    if busy >= SMALL_WORK * machine.launch() {
        return None;
    }
    let charged = k.predicted.as_secs_f64() - k.predicted_busy.as_secs_f64() - count * machine.launch() - k.predicted_alone as f64 * machine.idle_launch();
    let residual = (k.device_time.as_secs_f64() - charged.max(0.0)) / count - busy;
    Some((residual, k.predicted_alone as f64 / count))
}

/// The steady-launch observations of a run (see the module doc), from its stats on `machine`:
/// kernels whose launches mostly queued, less the idle extra of those that did not.
pub fn steady_launches(stats: &crate::runtime::stats::Stats, machine: &Machine) -> Vec<f64> {
    stats
        .launches
        .values()
        .filter_map(|k| launch_residual(k, machine))
        .filter(|&(_, alone)| alone <= 0.5)
        .map(|(residual, alone)| residual - alone * machine.idle_launch())
        .filter(|s| *s > 0.0)
        .collect()
}

/// The idle-launch observations of a run (see the module doc), from its stats on `machine`:
/// kernels whose launches mostly started from idle, what they took beyond the steady launch
/// per idle launch.
pub fn idle_launches(stats: &crate::runtime::stats::Stats, machine: &Machine) -> Vec<f64> {
    stats
        .launches
        .values()
        .filter_map(|k| launch_residual(k, machine))
        .filter(|&(_, alone)| alone > 0.5)
        .map(|(residual, alone)| (residual - machine.launch()) / alone)
        .collect()
}

/// The file that keeps `model`'s observations of `what` in `dir` (one number of seconds per
/// line).
fn file_in(dir: &Path, model: &str, what: Observed) -> PathBuf {
    let machine = Machine::file_in(dir, model);
    machine.with_extension(what.extension())
}

/// Adds `samples` to the observations of `what` kept for `model` in `dir` and, once there are
/// [`MIN_OBSERVED`], writes their median into the machine file as the figure the model uses.
/// Nothing without a machine file measured on this GPU model; a failure to write only loses
/// the samples.
pub fn record(dir: &Path, model: &str, what: Observed, samples: &[f64]) {
    if samples.is_empty() {
        return;
    }
    let Some(mut machine) = Machine::load(dir, model) else { return };
    let path = file_in(dir, model, what);
    let mut kept: Vec<f64> = std::fs::read_to_string(&path).unwrap_or_default().lines().filter_map(|l| l.trim().parse().ok()).filter(|s: &f64| s.is_finite()).collect();
    kept.extend(samples.iter().copied().filter(|s| s.is_finite()));
    let drop = kept.len().saturating_sub(MAX_KEPT);
    kept.drain(..drop);
    let text: String = kept.iter().map(|s| format!("{s:e}\n")).collect();
    if crate::private_fs::replace_file(&path, text.as_bytes()).is_err() {
        return;
    }
    if kept.len() >= MIN_OBSERVED {
        let mut sorted = kept;
        sorted.sort_by(f64::total_cmp);
        what.set(&mut machine, sorted[sorted.len() / 2].max(0.0));
        machine.store(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kernels_first_launch_is_paired_with_its_second() {
        let mut seen = FirstLaunches::default();
        let us = Duration::from_micros;
        seen.note(1, 1, us(30));
        seen.note(2, 1, us(50));
        seen.note(2, 2, us(20));
        seen.note(1, 2, us(8));
        // A second launch without a first, a third, and a first timed as zero add nothing.
        seen.note(3, 2, us(9));
        seen.note(1, 3, us(8));
        seen.note(4, 1, Duration::ZERO);
        seen.note(4, 2, us(7));
        let samples: Vec<f64> = seen.samples().iter().map(|s| (s * 1e6).round()).collect();
        assert_eq!(samples, vec![30.0, 22.0]);
    }

    #[test]
    fn the_median_of_enough_observations_becomes_the_machines_first_launch() {
        let dir = tempfile::tempdir().unwrap();
        let model = "NVIDIA Test GPU, sm_90";
        // No measured machine: nothing is kept.
        record(dir.path(), model, Observed::FirstLaunch, &[20e-6]);
        assert!(!file_in(dir.path(), model, Observed::FirstLaunch).exists());
        let mut machine = Machine::nominal(model);
        machine.measured = true;
        machine.first_launch_s = 12e-6;
        machine.store(dir.path());
        // Fewer than MIN_OBSERVED: the calibration's figure stays.
        record(dir.path(), model, Observed::FirstLaunch, &vec![24e-6; MIN_OBSERVED - 1]);
        let loaded = Machine::load(dir.path(), model).unwrap();
        assert_eq!(loaded.first_launch_observed_s, None);
        assert_eq!(loaded.first_launch(), 12e-6);
        // The next run's samples reach it: the median of all kept.
        record(dir.path(), model, Observed::FirstLaunch, &[30e-6, 30e-6]);
        let loaded = Machine::load(dir.path(), model).unwrap();
        assert_eq!(loaded.first_launch_observed_s, Some(24e-6));
        assert_eq!(loaded.first_launch(), 24e-6);
        // Only the latest MAX_KEPT are kept.
        record(dir.path(), model, Observed::FirstLaunch, &vec![18e-6; MAX_KEPT]);
        let kept = std::fs::read_to_string(file_in(dir.path(), model, Observed::FirstLaunch)).unwrap();
        assert_eq!(kept.lines().count(), MAX_KEPT);
        assert_eq!(Machine::load(dir.path(), model).unwrap().first_launch(), 18e-6);
        // Steady launches are kept apart and leave the first launch alone.
        record(dir.path(), model, Observed::Launch, &vec![4.7e-6; MIN_OBSERVED]);
        let loaded = Machine::load(dir.path(), model).unwrap();
        assert_eq!((loaded.launch(), loaded.first_launch()), (4.7e-6, 18e-6));
    }

    /// Kernel stats of `count` launches taking `mean` each on the device, `compiled` variants
    /// of it compiled (the first launch of each predicted with `machine`'s first launch),
    /// `alone` of them predicted to start from idle (with `machine`'s idle extra), the
    /// predicted busy `busy` each, on `machine`.
    fn kernel_on(machine: &Machine, count: u64, mean: f64, compiled: u64, alone: u64, busy: f64) -> crate::runtime::stats::KernelLaunches {
        let work = crate::runtime::model::LaunchWork { blocks: 1, threads_per_block: 32, ..Default::default() };
        let mut prediction = crate::runtime::model::predict::predict(machine, &work);
        prediction.memory_s = busy;
        prediction.seconds = prediction.launch_s + busy;
        let mut stats = crate::runtime::stats::Stats::default();
        for n in 0..count {
            let mut p = prediction.clone();
            if n < compiled {
                p.launch_s += machine.first_launch();
                p.seconds += machine.first_launch();
            }
            let from_idle = n < alone;
            if from_idle {
                p.launch_s += machine.idle_launch();
                p.seconds += machine.idle_launch();
            }
            stats.record_prediction("k", &p, from_idle);
        }
        crate::runtime::stats::KernelLaunches {
            count,
            compiled,
            device_time: Duration::from_secs_f64(mean * count as f64),
            ..stats.launches.remove("k").unwrap()
        }
    }

    #[test]
    fn kernels_of_little_work_launched_often_say_what_a_launch_costs() {
        let mut machine = Machine::nominal("test");
        machine.launch_s = 6e-6;
        machine.first_launch_s = 20e-6;
        let kernel = |count, mean, compiled, busy| kernel_on(&machine, count, mean, compiled, 0, busy);
        let mut stats = crate::runtime::stats::Stats::default();
        // 100 launches of 5 us, one variant compiled: the first launch's 20 us spread over
        // them, and 0.5 us of predicted work.
        stats.launches.insert("tiny".into(), kernel(100, 5e-6, 1, 0.5e-6));
        // Too few launches, too much work, no prediction: no observation.
        stats.launches.insert("rare".into(), kernel(5, 5e-6, 1, 0.5e-6));
        stats.launches.insert("busy".into(), kernel(100, 50e-6, 1, 40e-6));
        let mut unpredicted = kernel(100, 5e-6, 1, 0.0);
        unpredicted.predicted_launches = 0;
        stats.launches.insert("unpredicted".into(), unpredicted);
        // A kernel whose last launch was small and whose others were not: its mean work is
        // too much.
        let mut growing = kernel(100, 15e-6, 1, 0.1e-6);
        growing.predicted_busy = Duration::from_secs_f64(100.0 * 10e-6);
        stats.launches.insert("growing".into(), growing);
        let samples = steady_launches(&stats, &machine);
        assert_eq!(samples.len(), 1, "{samples:?}");
        assert!((samples[0] - (5e-6 - 20e-6 / 100.0 - 0.5e-6)).abs() < 1e-12, "{samples:?}");
        assert!(idle_launches(&stats, &machine).is_empty(), "no kernel started mostly from idle");
    }

    #[test]
    fn launches_from_idle_say_what_idle_costs_and_not_what_a_launch_does() {
        let mut machine = Machine::nominal("test");
        machine.launch_s = 4e-6;
        machine.idle_launch_s = 1e-6;
        machine.first_launch_s = 20e-6;
        let mut stats = crate::runtime::stats::Stats::default();
        // A fifth of the launches from idle, 4.8 us each on average with 0.5 us of work: the
        // steady launch is what is left once the first launch and the charged idle extra
        // (a fifth of 1 us) are taken off.
        stats.launches.insert("mostly queued".into(), kernel_on(&machine, 100, 4.8e-6, 1, 20, 0.5e-6));
        // Every launch from idle, 7.5 us with 0.5 us of work and the first launch's 0.2 us:
        // 2.8 us beyond the 4 us launch.
        stats.launches.insert("always idle".into(), kernel_on(&machine, 100, 7.5e-6, 1, 100, 0.5e-6));
        // Three quarters from idle, 6.8 us: 2.1 us beyond the launch, 2.8 per idle launch.
        stats.launches.insert("mostly idle".into(), kernel_on(&machine, 100, 6.8e-6, 1, 75, 0.5e-6));
        let steady = steady_launches(&stats, &machine);
        assert_eq!(steady.len(), 1, "{steady:?}");
        assert!((steady[0] - (4.8e-6 - 20e-6 / 100.0 - 0.2 * 1e-6 - 0.5e-6)).abs() < 1e-12, "{steady:?}");
        let mut idle = idle_launches(&stats, &machine);
        idle.sort_by(f64::total_cmp);
        assert_eq!(idle.len(), 2, "{idle:?}");
        assert!(idle.iter().all(|e| (e - 2.8e-6).abs() < 1e-12), "{idle:?}");
    }
}
