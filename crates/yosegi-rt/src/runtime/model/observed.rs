//! Launch costs as the programs pay them, observed on the GPU and kept per GPU model beside the
//! machine file across runs; once [`MIN_OBSERVED`] are kept, the model takes their median
//! instead of the calibration's figure.
//!
//! * The first launch ([`super::Machine::first_launch`]): what loading a compiled kernel's code
//!   costs its first launch, as the model charges it. The calibration times it on five small
//!   modules, and that figure moved between 12 and 27 us from one H100 machine to the next,
//!   where the programs' kernels paid 18-25 us on each (bench/NOTES.md run 26). It is
//!   observed per kernel launched a few times per load, of little predicted work: its device
//!   time less all the model charged but the loads, per load. (Each kernel's first launch less
//!   its second, as kept before run 39, came to 11.7-15.6 us over nine passes where kernels
//!   launched once paid 20-22 beyond their other terms; what the model needs is the latter.)
//! * The steady launch ([`super::Machine::launch`]) and the idle launch's extra
//!   ([`super::Machine::idle_launch`]), fitted together: per kernel a program launched often
//!   whose predicted work is a small part of a launch, every launch predicted, its mean device
//!   time less the mean of that work and of what the model charged beyond a launch other than
//!   the idle extra (first launches, the first touch of uploaded data), kept with the share of
//!   its launches that started from idle (`model::Model::timing`). Such a residual is the
//!   steady launch plus that share of the idle extra, whatever figures the run used; over the
//!   kept pairs, the steady launch is the median of the mostly queued kernels' residuals less
//!   their idle shares, and the idle extra the median of the mostly idle kernels' residuals
//!   beyond it per idle launch, alternated until they settle. Observed one after the other
//!   against the figures of the moment, each drifted with the other: against a calibrated
//!   launch of an idle kernel (6 us) the idle extra came to 0.2 us, against a queued one
//!   (3.2 us) to 4.7 (bench/NOTES.md run 34). The calibration's empty kernel moved between
//!   4.1 and 6.8 us from one calibration to the next on H100s, where the programs' small
//!   kernels took 4.7-4.9 us in every run (run 28). The mean work, not the last launch's: NPB
//!   LU's wavefront kernels grow and shrink over a sweep, and their last, one point of the
//!   plane, took 0.1 us of predicted work where their mean took 10 (run 29). NPB LU's and CG's
//!   kernels all start from idle (their hosts spend 15-42 us a launch), SP's partly, BT's
//!   mostly not (run 34).

use std::path::{Path, PathBuf};

use super::Machine;

/// Observations before the model trusts their median over the calibration's figure.
pub const MIN_OBSERVED: usize = 20;
/// Observations kept (the latest): a machine's figure follows its recent runs.
pub const MAX_KEPT: usize = 400;

/// Launches a kernel needs in a run before its mean says what a steady launch costs.
pub const MIN_LAUNCHES: u64 = 10;
/// The share of a launch its predicted work may be for the kernel to observe the launch.
pub const SMALL_WORK: f64 = 0.25;

/// The files beside the machine file that keep the first launches and the launch pairs (the
/// first launches under a new name since run 39: those kept before measured something else).
const FIRST_LAUNCHES: &str = "first-launch-residuals.txt";
const LAUNCHES: &str = "launches.txt";

/// The launch observations of a run (see the module doc), from its stats on `machine` (the
/// figures the run predicted with): per kernel of little work launched often, its share of
/// launches from idle and its residual, seconds.
pub fn launch_residuals(stats: &crate::runtime::stats::Stats, machine: &Machine) -> Vec<(f64, f64)> {
    stats
        .launches
        .values()
        .filter(|k| k.count >= MIN_LAUNCHES && !k.device_time.is_zero() && k.predicted_launches == k.count)
        .filter_map(|k| {
            let count = k.count as f64;
            let busy = k.predicted_busy.as_secs_f64() / count;
            (busy < SMALL_WORK * machine.launch()).then(|| {
                let charged = k.predicted.as_secs_f64() - k.predicted_busy.as_secs_f64() - count * machine.launch() - k.predicted_idle_share * machine.idle_launch();
                (k.predicted_idle_share / count, (k.device_time.as_secs_f64() - charged.max(0.0)) / count - busy)
            })
        })
        .filter(|(share, residual)| share.is_finite() && residual.is_finite())
        .collect()
}

/// Launches per code load a kernel may have for its loads to be observed: beyond, the
/// errors of its other launches' predictions add up to more than a load.
pub const FEW_LAUNCHES_PER_LOAD: u64 = 3;
/// The share of the first launch a kernel's predicted work per launch may be for the kernel
/// to observe its loads.
pub const FIRST_SMALL_WORK: f64 = 0.25;

/// The first-launch observations of a run (see the module doc), from its stats on `machine`
/// (the figures the run predicted with): per kernel launched a few times per load, of little
/// work, what its launches took beyond all the model charged but the loads, per load, seconds.
pub fn first_launch_residuals(stats: &crate::runtime::stats::Stats, machine: &Machine) -> Vec<f64> {
    stats
        .launches
        .values()
        .filter(|k| k.predicted_code_loads > 0 && k.predicted_launches == k.count && !k.device_time.is_zero())
        .filter(|k| k.count <= FEW_LAUNCHES_PER_LOAD * k.predicted_code_loads)
        .filter_map(|k| {
            let loads = k.predicted_code_loads as f64;
            let busy = k.predicted_busy.as_secs_f64() / k.count as f64;
            (busy < FIRST_SMALL_WORK * machine.first_launch()).then(|| {
                let others = k.predicted.as_secs_f64() - k.predicted_first_launch.as_secs_f64();
                (k.device_time.as_secs_f64() - others) / loads
            })
        })
        .filter(|r| r.is_finite())
        .collect()
}

/// Kernels of each kind (mostly queued, mostly idle) kept before their median says what a
/// launch costs: a whole pass of NPB class A and the examples gives 17-25 queued and 31-35
/// idle (bench/NOTES.md run 34), so that at 20 the warm pass of run 34e had not learnt the
/// steady launch and the measured pass ran with the calibration's (3.2 us where programs paid
/// 3.7-3.9: 16.4% median error, 12.7% replayed at 3.9).
pub const MIN_LAUNCH_KERNELS: usize = 10;

/// The steady launch and the idle extra that `pairs` of (idle share, residual) say (see the
/// module doc), from `idle` as the idle extra's first guess: each once [`MIN_LAUNCH_KERNELS`]
/// kernels mostly queued (for the launch) and as many mostly idle (for the extra) are kept.
pub fn fit_launch(pairs: &[(f64, f64)], idle: f64) -> (Option<f64>, Option<f64>) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let queued: Vec<(f64, f64)> = pairs.iter().copied().filter(|&(share, _)| share <= 0.5).collect();
    let alone: Vec<(f64, f64)> = pairs.iter().copied().filter(|&(share, _)| share > 0.5).collect();
    if queued.len() < MIN_LAUNCH_KERNELS {
        return (None, None);
    }
    let launch_given = |extra: f64| median(queued.iter().map(|&(share, r)| r - share * extra).collect());
    if alone.len() < MIN_LAUNCH_KERNELS {
        return (Some(launch_given(idle).max(0.0)), None);
    }
    let (mut launch, mut extra) = (0.0, idle);
    for _ in 0..8 {
        launch = launch_given(extra);
        extra = median(alone.iter().map(|&(share, r)| (r - launch) / share).collect()).max(0.0);
    }
    (Some(launch.max(0.0)), Some(extra))
}

/// Adds the launch observations `pairs` of a run to those kept for `model` in `dir` (a line
/// `share residual` each) and writes what [`fit_launch`] makes of them into the machine file.
pub fn record_launches(dir: &Path, model: &str, pairs: &[(f64, f64)]) {
    let parse = |l: &str| {
        let mut fields = l.split_whitespace().map(|f| f.parse::<f64>().ok());
        let pair = (fields.next()??, fields.next()??);
        fields.next().is_none().then_some(pair)
    };
    let finite = |&(share, residual): &(f64, f64)| share.is_finite() && residual.is_finite();
    keep(dir, model, LAUNCHES, pairs, parse, finite, |(share, residual)| format!("{share} {residual:e}"), |kept| {
        Machine::update_kept(dir, model, |machine| {
            let (launch, idle) = fit_launch(kept, machine.idle_launch_s);
            if launch.is_none() {
                return false;
            }
            machine.launch_observed_s = launch;
            machine.idle_launch_observed_s = idle.or(machine.idle_launch_observed_s);
            true
        });
    });
}

/// The file that keeps `model`'s observations in `dir`, named by `extension`.
fn observations_file(dir: &Path, model: &str, extension: &str) -> PathBuf {
    Machine::file_in(dir, model).with_extension(extension)
}

/// Adds `new` to the observations kept for `model` in `dir` (the file named by `extension`,
/// a line each, the latest [`MAX_KEPT`], those `usable` only), then hands every observation kept
/// to `settle`, which writes what they make into the machine file. Nothing without new
/// observations, without a machine file measured on this GPU model, or when the file cannot be
/// written (the new ones are lost).
///
/// Runs sharing the folder may add at once: the file is read and replaced under its lock
/// (`private_fs::LockedFile`), which is held through `settle` too, so that the machine file's
/// figure is always made of the latest observations (the observations' lock is taken before
/// the machine file's, always in that order). Only whole lines are read, each parsed in full:
/// a torn or garbled line is dropped.
#[allow(clippy::too_many_arguments)]
fn keep<T: Copy>(
    dir: &Path,
    model: &str,
    extension: &str,
    new: &[T],
    parse: impl Fn(&str) -> Option<T>,
    usable: impl Fn(&T) -> bool,
    line: impl Fn(&T) -> String,
    settle: impl FnOnce(&[T]),
) {
    if new.is_empty() || Machine::load(dir, model).is_none() {
        return;
    }
    let Ok(file) = crate::private_fs::LockedFile::lock(&observations_file(dir, model, extension)) else { return };
    let Ok(on_disk) = file.read_text() else { return };
    let mut kept: Vec<T> = crate::private_fs::complete_lines(&on_disk).filter_map(&parse).filter(&usable).collect();
    kept.extend(new.iter().copied().filter(&usable));
    let drop = kept.len().saturating_sub(MAX_KEPT);
    kept.drain(..drop);
    let text: String = kept.iter().map(|o| line(o) + "\n").collect();
    if file.replace(&text).is_ok() {
        settle(&kept);
    }
}

/// Adds the first-launch observations `samples` to those kept for `model` in `dir` and, once
/// there are [`MIN_OBSERVED`], writes their median into the machine file as the figure the
/// model uses.
pub fn record_first_launches(dir: &Path, model: &str, samples: &[f64]) {
    let parse = |l: &str| l.trim().parse().ok();
    keep(dir, model, FIRST_LAUNCHES, samples, parse, |s| s.is_finite(), |s| format!("{s:e}"), |kept| {
        if kept.len() < MIN_OBSERVED {
            return;
        }
        let mut sorted = kept.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2].max(0.0);
        Machine::update_kept(dir, model, |machine| {
            machine.first_launch_observed_s = Some(median);
            true
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A load is observed from a kernel launched a few times per load, of little work: what it
    /// took beyond everything else charged. Whatever first launch the run used, the
    /// observation is the same.
    #[test]
    fn kernels_launched_a_few_times_say_what_a_load_costs() {
        let (launch, idle, load, busy) = (3.5e-6, 3.5e-6, 21e-6, 1e-6);
        let observe = |charged: f64| {
            let mut machine = Machine::nominal("test");
            machine.launch_s = launch;
            machine.idle_launch_s = idle;
            machine.first_launch_s = charged;
            let mut stats = crate::runtime::stats::Stats::default();
            // Once from idle; three times from idle; twice per load of two variants.
            stats.launches.insert("once".into(), kernel_on(&machine, 1, launch + idle + busy + load, 1, 1, busy));
            stats.launches.insert("thrice".into(), kernel_on(&machine, 3, launch + idle + busy + load / 3.0, 1, 3, busy));
            stats.launches.insert("two_variants".into(), kernel_on(&machine, 4, launch + idle + busy + load / 2.0, 2, 4, busy));
            // Not observed: too many launches per load, too much work, launches not predicted.
            stats.launches.insert("often".into(), kernel_on(&machine, 10, launch + idle + busy + load / 10.0, 1, 10, busy));
            stats.launches.insert("busy".into(), kernel_on(&machine, 1, launch + idle + 40e-6 + load, 1, 1, 40e-6));
            let mut unpredicted = kernel_on(&machine, 1, launch + idle + busy + load, 1, 1, busy);
            unpredicted.predicted_launches = 0;
            stats.launches.insert("unpredicted".into(), unpredicted);
            let mut seen = first_launch_residuals(&stats, &machine);
            seen.sort_by(f64::total_cmp);
            seen
        };
        for charged in [12e-6, 30e-6] {
            let seen = observe(charged);
            assert_eq!(seen.len(), 3, "{seen:?}");
            assert!(seen.iter().all(|s| (s - load).abs() < 1e-12), "{seen:?}");
        }
    }

    #[test]
    fn the_median_of_enough_observations_becomes_the_machines_first_launch() {
        let dir = tempfile::tempdir().unwrap();
        let model = "NVIDIA Test GPU, sm_90";
        // No measured machine: nothing is kept.
        record_first_launches(dir.path(), model, &[20e-6]);
        assert!(!observations_file(dir.path(), model, FIRST_LAUNCHES).exists());
        let mut machine = Machine::nominal(model);
        machine.measured = true;
        machine.first_launch_s = 12e-6;
        machine.store(dir.path());
        // Fewer than MIN_OBSERVED: the calibration's figure stays.
        record_first_launches(dir.path(), model, &vec![24e-6; MIN_OBSERVED - 1]);
        let loaded = Machine::load(dir.path(), model).unwrap();
        assert_eq!(loaded.first_launch_observed_s, None);
        assert_eq!(loaded.first_launch(), 12e-6);
        // The next run's samples reach it: the median of all kept.
        record_first_launches(dir.path(), model, &[30e-6, 30e-6]);
        let loaded = Machine::load(dir.path(), model).unwrap();
        assert_eq!(loaded.first_launch_observed_s, Some(24e-6));
        assert_eq!(loaded.first_launch(), 24e-6);
        // Only the latest MAX_KEPT are kept.
        record_first_launches(dir.path(), model, &vec![18e-6; MAX_KEPT]);
        let kept = std::fs::read_to_string(observations_file(dir.path(), model, FIRST_LAUNCHES)).unwrap();
        assert_eq!(kept.lines().count(), MAX_KEPT);
        assert_eq!(Machine::load(dir.path(), model).unwrap().first_launch(), 18e-6);
        // Launches are kept apart and leave the first launch alone.
        record_launches(dir.path(), model, &vec![(0.0, 4.7e-6); MIN_LAUNCH_KERNELS]);
        let loaded = Machine::load(dir.path(), model).unwrap();
        assert_eq!((loaded.launch(), loaded.first_launch()), (4.7e-6, 18e-6));
    }

    /// A calibration kept while other runs' programs added observations keeps theirs.
    #[test]
    fn a_calibration_keeps_what_programs_observed_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let model = "NVIDIA Test GPU, sm_90";
        let mut machine = Machine::nominal(model);
        machine.measured = true;
        machine.store(dir.path());
        record_first_launches(dir.path(), model, &vec![22e-6; MIN_OBSERVED]);
        record_launches(dir.path(), model, &vec![(0.0, 4.7e-6); MIN_LAUNCH_KERNELS]);
        let mut calibrated = Machine::nominal(model);
        calibrated.measured = true;
        calibrated.dram_bytes_per_s = 2.5e12;
        calibrated.store(dir.path());
        let loaded = Machine::load(dir.path(), model).unwrap();
        assert_eq!(loaded.dram_bytes_per_s, 2.5e12);
        assert_eq!((loaded.first_launch_observed_s, loaded.launch_observed_s), (Some(22e-6), Some(4.7e-6)));
    }

    /// Runs recording at once (threads here, each taking the files' locks as a process does)
    /// keep every observation, and the machine file's figure is the median of all of them.
    #[test]
    fn concurrent_runs_keep_every_observation() {
        let dir = tempfile::tempdir().unwrap();
        let model = "NVIDIA Test GPU, sm_90";
        let mut machine = Machine::nominal(model);
        machine.measured = true;
        machine.store(dir.path());
        std::thread::scope(|scope| {
            for run in 0..8 {
                let dir = dir.path();
                scope.spawn(move || record_first_launches(dir, model, &[(10 + 3 * run) as f64 * 1e-6, (11 + 3 * run) as f64 * 1e-6, (12 + 3 * run) as f64 * 1e-6]));
            }
        });
        let text = std::fs::read_to_string(observations_file(dir.path(), model, FIRST_LAUNCHES)).unwrap();
        let mut kept: Vec<f64> = text.lines().map(|l| l.parse().unwrap()).collect();
        kept.sort_by(f64::total_cmp);
        let expected: Vec<f64> = (10..34).map(|us| us as f64 * 1e-6).collect();
        assert_eq!(kept, expected);
        assert_eq!(Machine::load(dir.path(), model).unwrap().first_launch_observed_s, Some(expected[expected.len() / 2]));
    }

    /// A torn observations file keeps its whole lines; the cut one is dropped.
    #[test]
    fn a_torn_observation_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let model = "NVIDIA Test GPU, sm_90";
        let mut machine = Machine::nominal(model);
        machine.measured = true;
        machine.store(dir.path());
        let path = observations_file(dir.path(), model, LAUNCHES);
        // The last pair lost its residual's exponent: `4.7` would parse, as 4.7 seconds.
        std::fs::write(&path, "0 4.7e-6\n0.5 4.7").unwrap();
        record_launches(dir.path(), model, &[(0.0, 5e-6)]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "0 4.7e-6\n0 5e-6\n");
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
                p.loads_code = true;
                p.first_launch_s = machine.first_launch();
            }
            let timing = if n < alone { crate::runtime::model::Timing::IDLE } else { crate::runtime::model::Timing::Queued };
            p.launch_s += timing.idle_share() * machine.idle_launch();
            p.seconds += timing.idle_share() * machine.idle_launch();
            stats.record_prediction("k", &p, timing);
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
        let pairs = launch_residuals(&stats, &machine);
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        assert_eq!(pairs[0].0, 0.0);
        assert!((pairs[0].1 - (5e-6 - 20e-6 / 100.0 - 0.5e-6)).abs() < 1e-12, "{pairs:?}");
    }

    /// A residual is the steady launch plus its idle share of the idle extra, whatever
    /// figures the run predicted with; the fit finds both from kernels mostly queued and
    /// kernels mostly idle, and neither from too few.
    #[test]
    fn the_steady_launch_and_the_idle_extra_are_fitted_together() {
        let (launch, extra) = (4e-6, 2.8e-6);
        let residuals = |machine: &Machine| {
            let mut stats = crate::runtime::stats::Stats::default();
            // Per kernel: launches from idle out of 100, 0.5 us of work, one first launch.
            for (n, alone) in [0u64, 10, 20, 30, 40, 50, 75, 90, 100].into_iter().enumerate() {
                let mean = launch + alone as f64 / 100.0 * extra + 0.5e-6 + machine.first_launch() / 100.0;
                stats.launches.insert(format!("k{n}"), kernel_on(machine, 100, mean, 1, alone, 0.5e-6));
            }
            let mut pairs = launch_residuals(&stats, machine);
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            pairs
        };
        // Two runs with different figures see the same residuals.
        let mut one = Machine::nominal("test");
        one.launch_s = 6e-6;
        one.idle_launch_s = 0.2e-6;
        let mut other = Machine::nominal("test");
        other.launch_s = 3e-6;
        other.idle_launch_s = 4.7e-6;
        let (a, b) = (residuals(&one), residuals(&other));
        assert_eq!(a.len(), 9, "{a:?}");
        for ((sa, ra), (sb, rb)) in a.iter().zip(&b) {
            assert_eq!(sa, sb);
            assert!((ra - rb).abs() < 1e-12, "{ra} {rb}");
        }
        // Too few kernels mostly queued: nothing; enough of both: both figures.
        let pairs: Vec<(f64, f64)> = a.iter().copied().cycle().take(4 * 9).collect();
        assert_eq!(fit_launch(&pairs[..9], 1e-6), (None, None));
        let (fitted_launch, fitted_extra) = fit_launch(&pairs, 1e-6);
        assert!((fitted_launch.unwrap() - launch).abs() < 1e-9, "{fitted_launch:?}");
        assert!((fitted_extra.unwrap() - extra).abs() < 1e-9, "{fitted_extra:?}");
        // Only kernels mostly queued: the launch, from the first guess of the extra.
        let queued: Vec<(f64, f64)> = pairs.iter().copied().filter(|p| p.0 <= 0.5).collect();
        let (only_launch, no_extra) = fit_launch(&queued, extra);
        assert!((only_launch.unwrap() - launch).abs() < 1e-9 && no_extra.is_none(), "{only_launch:?} {no_extra:?}");
    }
}
