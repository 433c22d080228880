//! `yosegi-model-replay STATS OUT [--counters DIR]... [--set FIELD=VALUE]...`: the performance
//! model run again, offline, over the JSON stats a GPU run left (`bench/model.sh`'s `model`
//! folder), so that a change to the model can be judged against measurements already made.
//!
//! Every stats file below STATS is written to the same place below OUT with each kernel's
//! prediction made again by this build's model (`runtime::model::predict`) from the work the
//! run recorded (`last_prediction`: grid, counts, section bytes) and the run's machine figures.
//! A kernel's mean prediction keeps what the run charged beside the steady launch (the first
//! launch, the first touch of uploaded data): its launches' work moves in proportion to its last
//! launch's (so that a kernel launched at several sizes moves by its own mean), its launch part
//! by the change in the launch figure, and its idle extras by the shares of it its launches paid
//! times the change in the idle figure.
//! `bench/model_table.py OUT` then prints the accuracy and variant-choice tables as for a run.
//!
//! * `--counters DIR` (repeatable): stats of the same programs at the same sizes from another
//!   run, laid out as STATS is (`bench/model.sh --device sim` makes them on any machine): a
//!   kernel found there (same folder, program and kernel name, same grid) takes its counts and
//!   its section bytes from there, so that a count the GPU run did not yet make (a new counter,
//!   a changed access analysis) can be replayed.
//! * `--set FIELD=VALUE`: a machine figure for every file (one the run's machine lacked, since
//!   its calibration predates it, is taken from the nominal machine unless set; the round
//!   trips and `pow`'s rate are left out instead, so that such a run replays with the model
//!   its counts were made for).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use serde_json::Value;
use yosegi_rt::runtime::model::{Machine, predict::predict};
use yosegi_rt::runtime::stats::{counters_json, launch_work_from_json};

#[derive(Parser)]
#[command(name = "yosegi-model-replay", about = "Re-run the performance model over stored JSON stats")]
struct Args {
    /// The folder of JSON stats a run left.
    stats: PathBuf,
    /// Where to write the replayed stats (the same layout).
    out: PathBuf,
    /// Stats of the same programs whose counts replace the stored ones.
    #[arg(long = "counters")]
    counters: Vec<PathBuf>,
    /// A machine figure, FIELD=VALUE (seconds, bytes per second).
    #[arg(long = "set")]
    set: Vec<String>,
}

/// The time steps of a kernel from its name, for stats written before the stats said
/// (bench/NOTES.md run 39): a step fusion is named `<first kernel>_steps<k>`
/// (`opt::fusion::steps`).
fn time_steps_of_name(name: &str) -> u32 {
    name.rsplit_once("_steps").and_then(|(_, k)| k.parse().ok()).unwrap_or(1)
}

/// A kernel's place: the folder below the stats root, the program's file name, the kernel.
type KernelKey = (String, String, String);

fn main() -> ExitCode {
    let args = Args::parse();
    match replay(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("yosegi-model-replay: {why}");
            ExitCode::from(2)
        }
    }
}

fn replay(args: &Args) -> Result<(), String> {
    let mut overrides = serde_json::Map::new();
    for s in &args.set {
        let (field, value) = s.split_once('=').ok_or_else(|| format!("--set {s}: give FIELD=VALUE"))?;
        let value: f64 = value.parse().map_err(|_| format!("--set {s}: the value is not a number"))?;
        overrides.insert(field.to_string(), Value::from(value));
    }
    let mut counted = HashMap::new();
    for dir in &args.counters {
        for (path, stats) in stats_files(dir)? {
            for kernel in stats["kernels"].as_array().into_iter().flatten() {
                if let (Some(name), Some(last)) = (kernel["name"].as_str(), kernel.get("last_prediction").filter(|v| !v.is_null())) {
                    counted.insert(key_of(dir, &path, &stats, name), last.clone());
                }
            }
        }
    }
    let (mut files, mut kernels, mut recounted) = (0, 0, 0);
    for (path, mut stats) in stats_files(&args.stats)? {
        let machine = machine_of(&stats["machine"], &overrides).map_err(|e| format!("{}: {e}", path.display()))?;
        let recorded = machine_of(&stats["machine"], &serde_json::Map::new()).ok();
        let recorded_launch_s = recorded.as_ref().map_or(machine.launch(), |m| m.launch());
        let recorded_idle_s = recorded.as_ref().map_or(machine.idle_launch(), |m| m.idle_launch());
        let keys: Vec<Option<KernelKey>> = stats["kernels"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|k| k["name"].as_str().map(|name| key_of(&args.stats, &path, &stats, name)))
            .collect();
        for (kernel, key) in stats["kernels"].as_array_mut().into_iter().flatten().zip(keys) {
            let Some(last) = kernel.get("last_prediction").filter(|v| !v.is_null()) else { continue };
            let Some(mut work) = launch_work_from_json(last) else { continue };
            if last["time_steps"].is_null() {
                work.time_steps = time_steps_of_name(kernel["name"].as_str().unwrap_or_default());
            }
            let old = last["seconds"].as_f64().unwrap_or(0.0);
            if let Some(other) = key.and_then(|k| counted.get(&k)).and_then(launch_work_from_json)
                && other.blocks == work.blocks
                && other.threads_per_block == work.threads_per_block
            {
                work.counters = other.counters;
                work.dram_bytes = other.dram_bytes;
                recounted += 1;
            }
            let p = predict(&machine, &work);
            // What the run charged the last launch beyond a steady one (its first launch, the
            // first touch of uploaded data) stays in its launch part: the part over the run's
            // own launch figure, so that a changed launch figure shows.
            let extra = last["launch_s"].as_f64().map_or(0.0, |l| (l - recorded_launch_s).max(0.0));
            let seconds = p.seconds + extra;
            // The idle extras the run charged, at a changed idle figure (`--set`): the shares
            // of it its launches paid (runs before 36 kept only how many started from idle).
            let idle_shares = kernel["predicted_idle_share"].as_f64().or_else(|| kernel["predicted_alone"].as_f64()).unwrap_or(0.0);
            let launches = kernel["predicted_launches"].as_f64().unwrap_or(0.0).max(1.0);
            let idle_moved = idle_shares / launches * (machine.idle_launch() - recorded_idle_s);
            // The launches' work moves in proportion to the last launch's (a kernel launched at
            // several sizes, MG's grids, has a mean far from its last launch); the launch part
            // by the change in it.
            let old_launch = last["launch_s"].as_f64().unwrap_or(0.0);
            let (old_busy, new_busy) = (old - old_launch, p.busy_s());
            let mean_busy = kernel["predicted_busy_s"].as_f64().map(|busy| busy / launches);
            let busy_moved = match mean_busy {
                Some(mean_busy) if old_busy > 0.0 => mean_busy * (new_busy / old_busy - 1.0),
                _ => new_busy - old_busy,
            };
            if let Some(mean) = kernel["mean_predicted_s"].as_f64() {
                kernel["mean_predicted_s"] = Value::from(mean + (p.launch_s + extra - old_launch) + busy_moved + idle_moved);
            }
            kernel["limited_by"] = Value::from(p.bound.name());
            let last = &mut kernel["last_prediction"];
            last["seconds"] = Value::from(seconds);
            last["launch_s"] = Value::from(p.launch_s + extra);
            for (part, value) in [
                ("memory_s", p.memory_s),
                ("cache_s", p.cache_s),
                ("l2_s", p.l2_s),
                ("compute_s", p.compute_s),
                ("shared_s", p.shared_s),
                ("latency_s", p.latency_s),
                ("barrier_s", p.barrier_s),
                ("occupancy", p.occupancy),
            ] {
                last[part] = Value::from(value);
            }
            last["counters"] = counters_json(&work.counters);
            last["section_bytes"] = Value::from(work.dram_bytes);
            last["dram_bytes"] = Value::from(p.dram_bytes);
            kernels += 1;
        }
        let target = args.out.join(path.strip_prefix(&args.stats).expect("below the stats folder"));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let text = serde_json::to_string_pretty(&stats).expect("JSON");
        std::fs::write(&target, text).map_err(|e| format!("{}: {e}", target.display()))?;
        files += 1;
    }
    println!("replayed {kernels} kernels in {files} files ({recounted} with counts from --counters) into {}", args.out.display());
    Ok(())
}

/// Figures whose absence (0) keeps the model a run's calibration predates: the latency term
/// without round trips (calibration 9), `pow` at the math functions' rate (10). A run that
/// lacks them is replayed with that model, not with the nominal machine's figures (its counts
/// lack the far loads those figures are charged on).
const OLDER_MODEL_WHEN_MISSING: [&str; 4] = ["l1_round_trip_s", "l2_round_trip_s", "dram_round_trip_s", "pow_calls_per_s"];

/// The run's machine, a figure it lacks taken from the nominal machine (or 0, for
/// [`OLDER_MODEL_WHEN_MISSING`]), then `overrides`.
fn machine_of(recorded: &Value, overrides: &serde_json::Map<String, Value>) -> Result<Machine, String> {
    let mut figures = serde_json::to_value(Machine::nominal("replay")).expect("JSON");
    for field in OLDER_MODEL_WHEN_MISSING {
        figures[field] = Value::from(0.0);
    }
    for (field, value) in recorded.as_object().ok_or("the stats name no machine")?.iter().chain(overrides) {
        // Runs before calibration 8 named the idle launch's extra for the timed launches it
        // was observed on.
        let field = if field == "timed_launch_observed_s" { "idle_launch_observed_s" } else { field };
        figures[field] = value.clone();
    }
    serde_json::from_value(figures).map_err(|e| format!("the machine figures do not read: {e}"))
}

fn key_of(root: &Path, file: &Path, stats: &Value, kernel: &str) -> KernelKey {
    let folder = file.parent().and_then(|p| p.strip_prefix(root).ok()).map(|p| p.display().to_string()).unwrap_or_default();
    let program = stats["program"][0].as_str().map(|p| Path::new(p).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()).unwrap_or_default();
    (folder, program, kernel.to_string())
}

/// The JSON files below `dir` that read as stats (an object with kernels), in path order.
fn stats_files(dir: &Path) -> Result<Vec<(PathBuf, Value)>, String> {
    let mut paths = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let path = entry.map_err(|e| format!("{}: {e}", d.display()))?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    Ok(paths
        .into_iter()
        .filter_map(|p| {
            let stats: Value = serde_json::from_str(&std::fs::read_to_string(&p).ok()?).ok()?;
            stats["kernels"].is_array().then_some((p, stats))
        })
        .collect())
}
