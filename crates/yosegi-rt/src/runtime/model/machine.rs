//! What the performance model knows of a device: its hardware figures (multiprocessors, the
//! limits that decide occupancy) and the rates Yosegi measured on it once (memory bandwidth,
//! launch cost, arithmetic rates, host and peer copies), kept in a file per GPU model so that
//! later runs read them instead of measuring again. Runs that share the folder update the file
//! under its lock, each keeping what the others wrote ([`Machine::store`],
//! [`Machine::update_kept`]).
//!
//! The simulator has no clock: its machine is [`Machine::nominal`], an H100 SXM's figures from
//! the data sheet, marked as not measured, so that predictions on `sim` have the shape of a
//! GPU's and tests can check the model's arithmetic against the simulator's counters.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The figures the model predicts from; rates per second, times in seconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// The device model (`NVIDIA H100 80GB HBM3`, or `sim`).
    pub name: String,
    /// Whether the rates were measured on this machine (`false`: nominal figures).
    pub measured: bool,
    pub multiprocessors: u32,
    pub max_threads_per_multiprocessor: u32,
    pub max_blocks_per_multiprocessor: u32,
    pub shared_bytes_per_multiprocessor: u64,
    pub registers_per_multiprocessor: u32,
    pub l2_bytes: u64,
    /// Device time of an empty kernel enqueued behind other work, between its own two events
    /// as the runtime times launches (the median of 21).
    pub launch_s: f64,
    /// What a launch on an idle device costs beyond one queued behind others: the median of
    /// single launches of an empty kernel each after the host waited for the device, less
    /// the median of such launches enqueued behind a running kernel, each between its own
    /// events as the runtime times launches.
    #[serde(default)]
    pub idle_launch_s: f64,
    /// What the first launch of a kernel costs beyond the others (host time of the driver's
    /// first launch of a function, which an idle device waits for).
    pub first_launch_s: f64,
    /// What a launch costs beyond its steady time when it is the first to touch data the host
    /// just copied to the device (measured 13-30 us on an H100 for one array of 64 MiB to
    /// 1 GiB, where data a memset wrote costs nothing more; bench/NOTES.md run 26). Paid once
    /// per launch, however many such arrays it touches.
    pub upload_touch_s: f64,
    /// The median first launch the runtime observed in programs on this GPU model (what
    /// kernels launched a few times per code load took beyond everything else the model
    /// charged, per load, [`super::observed`]), once enough were; the model prefers it to
    /// `first_launch_s`. A machine file from before bench/NOTES.md run 39 holds each kernel's
    /// first launch less its second here until enough of the new observations are kept.
    #[serde(default)]
    pub first_launch_observed_s: Option<f64>,
    /// The median steady launch the runtime observed in programs on this GPU model (kernels
    /// whose predicted work is a small part of their launch, [`super::observed`]), once
    /// enough were; the model prefers it to `launch_s` (an empty kernel's: timed from idle
    /// before calibration 8, it moved between 4.1 and 6.8 us from one calibration to the next
    /// on H100s, bench/NOTES.md run 28, where such kernels took 4.7-4.9 us in every run).
    #[serde(default)]
    pub launch_observed_s: Option<f64>,
    /// The median cost the runtime observed in programs for a launch on an idle device beyond
    /// a queued one ([`super::observed`]: kernels of little work whose launches mostly started
    /// from idle, against the steady launch); the model prefers it to `idle_launch_s` once
    /// enough were. (Before calibration 8 it was observed on variants' timed launches, against
    /// the same kernel's other launches, and named `timed_launch_observed_s`.)
    #[serde(default)]
    pub idle_launch_observed_s: Option<f64>,
    /// Time per global load or store of a thread when the grid is too small to hide memory
    /// latency behind other warps (a warp walking a row of a large matrix, one warp per
    /// multiprocessor): a kernel takes at least its waves times its per-thread accesses
    /// times this.
    pub serial_access_s: f64,
    /// The same for a shared-memory request of a thread.
    pub serial_shared_s: f64,
    /// A load's round trip when nothing overlaps it (a warp per multiprocessor chasing a
    /// chain of dependent loads) through memory the L1 cache holds, the L2 cache holds, and
    /// neither holds. Measured since calibration 9; `0` in older figures, whose latency term
    /// charges every load `serial_access_s` instead.
    #[serde(default)]
    pub l1_round_trip_s: f64,
    #[serde(default)]
    pub l2_round_trip_s: f64,
    #[serde(default)]
    pub dram_round_trip_s: f64,
    /// How many multiprocessors' share of the memory bandwidth one busy multiprocessor can
    /// draw: a grid of fewer blocks than multiprocessors reaches `blocks * this / multiprocessors`
    /// of the bandwidth.
    pub multiprocessor_bandwidth_share: f64,
    /// Streaming bandwidth of device memory (a large copy's bytes read plus written).
    pub dram_bytes_per_s: f64,
    /// Bandwidth of the 32-byte sectors the memory instructions touch when they hit the
    /// caches (a copy over an array that fits in L2, repeated).
    pub cache_bytes_per_s: f64,
    /// What the L2 cache serves the multiprocessors: a request (a line asked for by one warp
    /// access, a read past L1 or a write) costs `1 / l2_requests_per_s` and each 32-byte
    /// sector it carries `32 / l2_bytes_per_s`. Measured by two copies over arrays that fit in
    /// L2 and skip L1, one asking for whole lines, one for a sector of each line
    /// (`cuda::calibrate`).
    pub l2_bytes_per_s: f64,
    #[serde(default = "nominal_l2_requests_per_s")]
    pub l2_requests_per_s: f64,
    /// The share of the L2 cache that keeps the bytes recent launches touched for the next
    /// ones ([`super::residency`]); not measured: 0.5 lies between the shares replayed over
    /// runs 29-30 (bench/NOTES.md), where smaller ones gave a lower median error and larger
    /// ones a lower 90th percentile.
    #[serde(default = "nominal_l2_resident_share")]
    pub l2_resident_share: f64,
    pub float_ops_per_s: f64,
    pub double_ops_per_s: f64,
    pub math_calls_per_s: f64,
    /// Calls of `pow` per second (two chains of it at full occupancy); `0` in figures measured
    /// before calibration 10, where `pow` counts as any math function.
    #[serde(default)]
    pub pow_calls_per_s: f64,
    /// Warp-level shared-memory requests per second over the device (a conflict of degree d
    /// costs d requests).
    pub shared_requests_per_s: f64,
    pub host_to_device_bytes_per_s: f64,
    pub device_to_host_bytes_per_s: f64,
    /// Fixed cost of one host<->device copy.
    pub host_copy_s: f64,
    /// Bandwidth and fixed cost of a copy between two devices (peer access over NVLink where
    /// the GPUs have it); `0` when the machine has one device.
    pub peer_bytes_per_s: f64,
    pub peer_copy_s: f64,
}

/// How the figures are measured: 10 adds the rate of `pow`; 9 adds the round trips of a chase of dependent loads
/// through L1, L2 and device memory; 8 times the launch queued behind other work and adds the idle
/// launch's extra (observed on kernels launched from idle, not on timed variants); 7 splits the L2 cache's rate into requests and sectors (a
/// copy of whole lines and one of a sector a line); 6 adds the L2 cache's bandwidth; 5 adds the first touch of uploaded data and times the first
/// launch against the same kernel's second, on a kernel touching memory; 4 takes a launch's median time (1 took the least) and the
/// median first launch of five modules of distinct code, each loaded fresh (1 timed one; 2
/// timed five kernels of one module, whose first launches after the module's first cost
/// little; 3 loaded one module's image five times, which the driver does almost for free).
pub const CALIBRATION: u32 = 10;

fn nominal_l2_resident_share() -> f64 {
    0.5
}

/// An H100's L2 requests per second, for machine figures that predate the split (their
/// `l2_bytes_per_s` was a whole-line rate: bench/NOTES.md run 28).
fn nominal_l2_requests_per_s() -> f64 {
    9.0e10
}

impl Machine {
    /// An H100 SXM's published figures, for devices that cannot measure (the simulator).
    pub fn nominal(name: &str) -> Machine {
        Machine {
            name: name.to_string(),
            measured: false,
            multiprocessors: 132,
            max_threads_per_multiprocessor: 2048,
            max_blocks_per_multiprocessor: 32,
            shared_bytes_per_multiprocessor: 228 << 10,
            registers_per_multiprocessor: 65536,
            l2_bytes: 50 << 20,
            launch_s: 4e-6,
            idle_launch_s: 2e-6,
            first_launch_s: 20e-6,
            upload_touch_s: 15e-6,
            first_launch_observed_s: None,
            launch_observed_s: None,
            idle_launch_observed_s: None,
            serial_access_s: 35e-9,
            serial_shared_s: 40e-9,
            l1_round_trip_s: 20e-9,
            l2_round_trip_s: 150e-9,
            dram_round_trip_s: 350e-9,
            multiprocessor_bandwidth_share: 2.0,
            dram_bytes_per_s: 3.0e12,
            cache_bytes_per_s: 9.0e12,
            l2_bytes_per_s: 1.3e13,
            l2_requests_per_s: nominal_l2_requests_per_s(),
            l2_resident_share: nominal_l2_resident_share(),
            float_ops_per_s: 60e12,
            double_ops_per_s: 30e12,
            math_calls_per_s: 4e12,
            pow_calls_per_s: 4e11,
            shared_requests_per_s: 132.0 * 1.7e9,
            host_to_device_bytes_per_s: 25e9,
            device_to_host_bytes_per_s: 25e9,
            host_copy_s: 10e-6,
            peer_bytes_per_s: 150e9,
            peer_copy_s: 10e-6,
        }
    }

    /// A multiprocessor's L1 cache when its blocks use no shared memory: the L1 and shared
    /// memory are one array, of which the driver lets shared memory take this much (228 KiB
    /// of an H100's 256), and what shared memory does not take the L1 cache holds.
    pub fn l1_bytes(&self) -> u64 {
        self.shared_bytes_per_multiprocessor
    }

    /// What the first launch of a kernel costs beyond the others: as programs paid it on this
    /// GPU model once observed, else as calibrated.
    pub fn first_launch(&self) -> f64 {
        self.first_launch_observed_s.unwrap_or(self.first_launch_s)
    }

    /// What a launch costs beside its work: as programs paid it on this GPU model once
    /// observed, else as calibrated.
    pub fn launch(&self) -> f64 {
        self.launch_observed_s.unwrap_or(self.launch_s)
    }

    /// What a launch on an idle device costs beyond a queued one: as programs paid it on this
    /// GPU model once observed, else as calibrated.
    pub fn idle_launch(&self) -> f64 {
        self.idle_launch_observed_s.unwrap_or(self.idle_launch_s)
    }

    /// The file that keeps `model`'s measured figures in `dir`; a change in how a figure is
    /// measured changes [`CALIBRATION`], so figures measured the old way are measured again.
    pub fn file_in(dir: &Path, model: &str) -> PathBuf {
        let stem: String = model.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
        dir.join(format!("machine-{stem}-c{CALIBRATION}.json"))
    }

    /// The figures kept for `model` in `dir`, if a readable file of this format is there.
    pub fn load(dir: &Path, model: &str) -> Option<Machine> {
        Machine::parse(&std::fs::read_to_string(Machine::file_in(dir, model)).ok()?, model)
    }

    /// The measured figures of `model` in a machine file's text; `None` for anything else (a
    /// torn or garbled file is not valid JSON, or lacks fields, and is measured again).
    fn parse(text: &str, model: &str) -> Option<Machine> {
        serde_json::from_str::<Machine>(text).ok().filter(|m| m.name == model && m.measured)
    }

    /// Keeps newly measured figures for later runs (a failure to write only costs a
    /// measurement later). Under the file's lock (`private_fs::update_locked`: another run may
    /// be keeping its own, or adding what it observed), the figures programs observed that
    /// these lack are taken from the file: a run that calibrated at the same time as another
    /// does not wipe what the other's programs observed since.
    pub fn store(&self, dir: &Path) {
        let _ = crate::private_fs::update_locked(&Machine::file_in(dir, &self.name), |on_disk| {
            let mut merged = self.clone();
            if let Some(kept) = Machine::parse(on_disk, &self.name) {
                merged.first_launch_observed_s = merged.first_launch_observed_s.or(kept.first_launch_observed_s);
                merged.launch_observed_s = merged.launch_observed_s.or(kept.launch_observed_s);
                merged.idle_launch_observed_s = merged.idle_launch_observed_s.or(kept.idle_launch_observed_s);
            }
            serde_json::to_string_pretty(&merged).ok()
        });
    }

    /// Changes the figures kept for `model` in `dir` as the file holds them now, under its lock,
    /// and writes them back; `change` returns whether it changed anything. Nothing without
    /// measured figures kept (the observations are relative to them).
    pub fn update_kept(dir: &Path, model: &str, change: impl FnOnce(&mut Machine) -> bool) {
        let _ = crate::private_fs::update_locked(&Machine::file_in(dir, model), |on_disk| {
            let mut machine = Machine::parse(on_disk, model)?;
            if !change(&mut machine) {
                return None;
            }
            serde_json::to_string_pretty(&machine).ok()
        });
    }
}
