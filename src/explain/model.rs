//! What runs learned, in `explain`: per kernel, what recent runs with the performance model on
//! predicted for each variant at each size and device, beside what they measured; per region,
//! the predicted time of one pass over its kernels; for the program, the number of devices its
//! last multi-GPU run kept and why. They come from the files those runs left
//! (`runtime::model::record`, `runtime::device_count::record`): a prediction needs the
//! launch's sizes and data, and the device count a timed cycle, which only a run has.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::ir::{Handle, Kernel, Module};
use crate::runtime::model::record::{self, PredictionRecord};
use crate::runtime::variants::KernelIdentity;

/// What earlier runs left, read once per account: the predictions file's records, where they
/// came from, and each kernel's identity once computed (it prints the CUDA of every variant).
pub(super) struct Learned {
    dir: Option<PathBuf>,
    records: Vec<PredictionRecord>,
    identities: RefCell<HashMap<Handle<Kernel>, KernelIdentity>>,
}

impl Learned {
    /// The files in `dir`, else in the default cache directory.
    pub(super) fn load(dir: &Option<PathBuf>) -> Learned {
        let dir = dir.clone().or_else(record::default_dir);
        Learned { records: record::load(dir.as_deref()), dir, identities: RefCell::default() }
    }

    fn records(&self, module: &Module, kernel: Handle<Kernel>) -> Vec<PredictionRecord> {
        let mut identities = self.identities.borrow_mut();
        let identity = identities.entry(kernel).or_insert_with(|| KernelIdentity::of(module, kernel));
        record::records_of(&self.records, identity)
    }
}

/// `devices on <gpu>: kept ...` lines: the device-count choice of the program's last run on
/// several devices of each kind.
pub(super) fn device_count_text(module: &Module, learned: &Learned, out: &mut String) {
    let Some(dir) = &learned.dir else { return };
    for r in crate::runtime::device_count::record::recorded(dir, crate::runtime::variants::program_hash(module)) {
        let _ = writeln!(out, "devices on {} (the last run on several): {}", r.device, r.text());
    }
}

fn us(seconds: f64) -> String {
    format!("{:.1} us", seconds * 1e6)
}

fn measured_text(r: &PredictionRecord) -> String {
    match r.measured_s {
        Some(m) if m > 0.0 => format!(", measured {} ({:+.0}%)", us(m), (r.predicted_s - m) / m * 100.0),
        _ if r.launches == 0 => String::new(),
        _ => ", not timed on this device".to_string(),
    }
}

/// `    model: ...` lines for `kernel`: per device and sizes, each variant's predicted time.
pub(super) fn kernel_predictions_text(module: &Module, kernel: Handle<Kernel>, learned: &Learned, out: &mut String) {
    let found = learned.records(module, kernel);
    if found.is_empty() {
        let _ = writeln!(out, "    model: no prediction recorded yet (a run with --stats leaves the model's predictions for explain)");
        return;
    }
    let mut by_launch: BTreeMap<(&str, &str), Vec<&PredictionRecord>> = BTreeMap::new();
    for r in &found {
        by_launch.entry((r.device.as_str(), r.sizes.as_str())).or_default().push(r);
    }
    for ((device, sizes), rs) in by_launch {
        let sizes = if sizes == "-" { String::new() } else { format!(" for {sizes}") };
        let _ = writeln!(out, "    model on {device}{sizes} (a steady launch; recorded by a run with --stats):");
        for r in rs {
            let launches = match r.launches {
                0 => "not run (predicted while the variants were chosen)".to_string(),
                1 => "1 launch".to_string(),
                n => format!("{n} launches"),
            };
            let _ = writeln!(out, "      `{}`: predicted {} (limited by {}){}, {launches}", r.grid, us(r.predicted_s), r.bound, measured_text(r));
            if let Some(text) = scaling_text(&r.scaling_s) {
                let _ = writeln!(out, "        split over devices of this kind: {text}");
            }
            if let Some(text) = ranks_text(&r.ranks_s) {
                let _ = writeln!(out, "        {text}");
            }
        }
    }
}

/// Devices counted in the scaling lines: powers of two up to the model's most.
fn shown_counts(scaling_s: &[f64]) -> impl Iterator<Item = usize> + '_ {
    (1..=scaling_s.len()).filter(|k| k.is_power_of_two())
}

/// `2: 21.0 us (1.95x), 4: ...; pays for 4 (...)`: the predicted time of one launch (or pass)
/// on several devices, its speedup over one, and the number of devices it pays for.
fn scaling_text(scaling_s: &[f64]) -> Option<String> {
    let one = *scaling_s.first()?;
    if scaling_s.len() < 2 || one <= 0.0 {
        return None;
    }
    let points: Vec<String> = shown_counts(scaling_s)
        .skip(1)
        .map(|k| format!("{k}: {} ({:.2}x)", us(scaling_s[k - 1]), one / scaling_s[k - 1]))
        .collect();
    Some(format!("{}; {}", points.join(", "), pays_for_text(scaling_s)))
}

/// Within this share of the fastest predicted count, the fewest devices are said to pay.
const PAYS_WITHIN: f64 = 0.05;

/// The fewest devices whose predicted time is within [`PAYS_WITHIN`] of the fastest count's.
fn pays_for_text(scaling_s: &[f64]) -> String {
    let best = scaling_s.iter().copied().fold(f64::INFINITY, f64::min);
    let k = scaling_s.iter().position(|&t| t <= best * (1.0 + PAYS_WITHIN)).map_or(1, |i| i + 1);
    match k {
        1 => "pays for one device: splitting is predicted to cost more than it saves".to_string(),
        k => format!("pays for {k} devices (the fewest within {:.0}% of the fastest predicted)", PAYS_WITHIN * 100.0),
    }
}

/// `over MPI ranks of one GPU (...): 2: ..., 64: ...; pays for N ranks`: the model's strong
/// scaling over the ranks of `runtime::model::cluster::RANK_COUNTS`, on nodes of the cluster the
/// environment describes.
fn ranks_text(ranks_s: &[f64]) -> Option<String> {
    use crate::runtime::model::cluster::{Cluster, RANK_COUNTS};
    let one = *ranks_s.first()?;
    if ranks_s.len() != RANK_COUNTS.len() || one <= 0.0 {
        return None;
    }
    let points: Vec<String> =
        RANK_COUNTS.iter().zip(ranks_s).skip(1).map(|(k, &t)| format!("{k}: {} ({:.2}x)", us(t), one / t)).collect();
    let best = ranks_s.iter().copied().fold(f64::INFINITY, f64::min);
    let pays = RANK_COUNTS.iter().zip(ranks_s).find(|&(_, &t)| t <= best * (1.0 + PAYS_WITHIN)).map_or(1, |(k, _)| *k);
    let cluster = Cluster::from_env();
    let pays = match pays {
        1 => "pays for one rank".to_string(),
        k => format!("pays for {k} ranks (the fewest within {:.0}% of the fastest predicted)", PAYS_WITHIN * 100.0),
    };
    Some(format!(
        "over MPI ranks of one GPU ({} a node, {:.0} GB/s and {:.0} us between nodes): {}; {pays}",
        cluster.gpus_per_node,
        cluster.network_bytes_per_s / 1e9,
        cluster.network_latency_s * 1e6,
        points.join(", ")
    ))
}

/// Adds one kernel's curve to a pass's sum: `None` once a kernel lacks one.
fn add_curve(sum: Option<Vec<f64>>, first: bool, curve: &[f64]) -> Option<Vec<f64>> {
    match sum {
        Some(_) if first && !curve.is_empty() => Some(curve.to_vec()),
        Some(sum) if sum.len() == curve.len() && !sum.is_empty() => Some(sum.iter().zip(curve).map(|(a, b)| a + b).collect()),
        _ => None,
    }
}

/// The variant that ran most of `kernel`'s launches on each device (its most used size).
fn most_run(found: Vec<PredictionRecord>) -> BTreeMap<String, PredictionRecord> {
    let mut best: BTreeMap<String, PredictionRecord> = BTreeMap::new();
    for r in found {
        match best.get(&r.device) {
            Some(b) if b.launches >= r.launches => {}
            _ => {
                best.insert(r.device.clone(), r);
            }
        }
    }
    best
}

/// Per device: the predicted and measured time of one pass over `kernels` (each kernel's
/// variant that ran most), and how many of the kernels have a prediction.
struct Pass {
    predicted_s: f64,
    measured_s: Option<f64>,
    kernels: usize,
    /// Summed over the kernels, where every one has a scaling curve.
    scaling_s: Option<Vec<f64>>,
    /// The same over MPI ranks.
    ranks_s: Option<Vec<f64>>,
}

fn passes(module: &Module, kernels: &[Handle<Kernel>], learned: &Learned) -> BTreeMap<String, Pass> {
    let mut passes: BTreeMap<String, Pass> = BTreeMap::new();
    // One size per device: the first kernel's most-run one; the other kernels count where a
    // record has the same sizes (a pass mixes no sizes of different runs).
    let mut sizes_of: BTreeMap<String, String> = BTreeMap::new();
    for (i, &k) in kernels.iter().enumerate() {
        let found = learned.records(module, k);
        let chosen: BTreeMap<String, PredictionRecord> = if i == 0 {
            let best = most_run(found);
            for (device, r) in &best {
                sizes_of.insert(device.clone(), r.sizes.clone());
            }
            best
        } else {
            most_run(found.into_iter().filter(|r| sizes_of.get(&r.device) == Some(&r.sizes)).collect())
        };
        for (device, r) in chosen {
            let pass = passes
                .entry(device)
                .or_insert(Pass { predicted_s: 0.0, measured_s: Some(0.0), kernels: 0, scaling_s: Some(Vec::new()), ranks_s: Some(Vec::new()) });
            pass.predicted_s += r.predicted_s;
            pass.measured_s = pass.measured_s.zip(r.measured_s).map(|(a, b)| a + b);
            pass.scaling_s = add_curve(pass.scaling_s.take(), pass.kernels == 0, &r.scaling_s);
            pass.ranks_s = add_curve(pass.ranks_s.take(), pass.kernels == 0, &r.ranks_s);
            pass.kernels += 1;
        }
    }
    passes
}

/// `  model: ...` lines for a compute region of `kernels`.
pub(super) fn region_prediction_text(module: &Module, kernels: &[Handle<Kernel>], learned: &Learned, out: &mut String) {
    for (device, pass) in passes(module, kernels, learned) {
        let measured = pass.measured_s.map_or_else(String::new, |m| format!(", measured {}", us(m)));
        let partial = if pass.kernels < kernels.len() { format!(" ({} of its {} kernels predicted)", pass.kernels, kernels.len()) } else { String::new() };
        let _ = writeln!(
            out,
            "  model on {device}: one pass over the region's kernels predicted {}{measured}{partial} (at the first kernel's most-run size; each kernel's variant that ran most there)",
            us(pass.predicted_s)
        );
        if let Some(text) = pass.scaling_s.as_deref().and_then(scaling_text) {
            let _ = writeln!(out, "    split over devices of this kind: {text}");
        }
        if let Some(text) = pass.ranks_s.as_deref().and_then(ranks_text) {
            let _ = writeln!(out, "    {text}");
        }
    }
}

pub(super) fn kernel_predictions_json(module: &Module, kernel: Handle<Kernel>, learned: &Learned) -> Value {
    let found = learned.records(module, kernel);
    Value::Array(
        found
            .iter()
            .map(|r| {
                json!({
                    "device": r.device,
                    "sizes": r.sizes,
                    "variant": r.grid,
                    "predicted_s": r.predicted_s,
                    "limited_by": r.bound,
                    "measured_s": r.measured_s,
                    "launches": r.launches,
                    "scaling_s": r.scaling_s,
                    "ranks_s": r.ranks_s,
                })
            })
            .collect(),
    )
}

pub(super) fn region_prediction_json(module: &Module, kernels: &[Handle<Kernel>], learned: &Learned) -> Value {
    Value::Array(
        passes(module, kernels, learned)
            .into_iter()
            .map(|(device, p)| json!({ "device": device, "predicted_s": p.predicted_s, "measured_s": p.measured_s, "kernels_predicted": p.kernels, "scaling_s": p.scaling_s, "ranks_s": p.ranks_s }))
            .collect(),
    )
}
