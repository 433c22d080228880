//! The first launch as the programs pay it, observed on the GPU: what the first launch of a
//! compiled kernel took beyond its second (both timed by the CUDA events around every launch),
//! kept per GPU model beside the machine file across runs. The calibration times the first
//! launch on five small modules, and that figure moved between 12 and 27 us from one H100
//! machine to the next, where the programs' kernels paid 18-25 us on each (bench/NOTES.md run
//! 26); once [`MIN_OBSERVED`] launches are kept, the model takes their median instead
//! ([`super::Machine::first_launch`]).

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

/// The file that keeps `model`'s observations in `dir` (one number of seconds per line).
fn file_in(dir: &Path, model: &str) -> PathBuf {
    let machine = Machine::file_in(dir, model);
    machine.with_extension("first-launches.txt")
}

/// Adds `samples` to the observations kept for `model` in `dir` and, once there are
/// [`MIN_OBSERVED`], writes their median into the machine file as the first launch the model
/// uses. Nothing without a machine file measured on this GPU model; a failure to write only
/// loses the samples.
pub fn record(dir: &Path, model: &str, samples: &[f64]) {
    if samples.is_empty() {
        return;
    }
    let Some(mut machine) = Machine::load(dir, model) else { return };
    let path = file_in(dir, model);
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
        machine.first_launch_observed_s = Some(sorted[sorted.len() / 2].max(0.0));
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
        record(dir.path(), model, &[20e-6]);
        assert!(!file_in(dir.path(), model).exists());
        let mut machine = Machine::nominal(model);
        machine.measured = true;
        machine.first_launch_s = 12e-6;
        machine.store(dir.path());
        // Fewer than MIN_OBSERVED: the calibration's figure stays.
        record(dir.path(), model, &vec![24e-6; MIN_OBSERVED - 1]);
        let loaded = Machine::load(dir.path(), model).unwrap();
        assert_eq!(loaded.first_launch_observed_s, None);
        assert_eq!(loaded.first_launch(), 12e-6);
        // The next run's samples reach it: the median of all kept.
        record(dir.path(), model, &[30e-6, 30e-6]);
        let loaded = Machine::load(dir.path(), model).unwrap();
        assert_eq!(loaded.first_launch_observed_s, Some(24e-6));
        assert_eq!(loaded.first_launch(), 24e-6);
        // Only the latest MAX_KEPT are kept.
        record(dir.path(), model, &vec![18e-6; MAX_KEPT]);
        let kept = std::fs::read_to_string(file_in(dir.path(), model)).unwrap();
        assert_eq!(kept.lines().count(), MAX_KEPT);
        assert_eq!(Machine::load(dir.path(), model).unwrap().first_launch(), 18e-6);
    }
}
