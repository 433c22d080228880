//! The model's predictions of a run, kept for `yosegi explain`.
//!
//! A prediction needs the launch's sizes and the contents of the arrays it indexes through
//! (`model::sample` runs a few of its blocks), which only a run has. So a run with the model on
//! (`--stats`) leaves, at exit, one line per grid kernel it predicted in
//! [`PREDICTIONS_FILE`], beside the tuning cache: the kernel, the hash of its variants' CUDA (a
//! changed kernel does not show an old prediction), the device, the sizes, the grid kernel
//! (variant), the predicted steady time of one launch (without the first launch's loading of
//! the code), what it found the launch limited by, the measured mean device time where the
//! device times launches, and the launches. `explain` prints them per kernel and sums them per
//! region. Runs that share the folder add to the file together without losing each other's
//! lines ([`store`]). The file only informs: a missing, unreadable or corrupt file, or a
//! malformed or torn line, is ignored (and dropped by the next store).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::runtime::variants::KernelIdentity;

pub const PREDICTIONS_FILE: &str = "model-predictions.txt";

/// Marks the format of every line; a line with another tag is ignored.
const LINE_TAG: &str = "p1";

/// Lines kept: the newest, so that the file of a machine that runs many programs stays small.
const MAX_LINES: usize = 4000;

/// One grid kernel's prediction in one run.
#[derive(Clone, Debug, PartialEq)]
pub struct PredictionRecord {
    pub kernel: KernelIdentity,
    pub device: String,
    /// `n=4096,m=4096` (the tuning cache's spelling; `-` for none).
    pub sizes: String,
    /// The grid kernel predicted (a variant of `kernel`, or a fused kernel it heads).
    pub grid: String,
    /// One steady launch, in seconds.
    pub predicted_s: f64,
    /// What the launch was found limited by (`memory`, `latency`, ...).
    pub bound: String,
    /// The measured mean device time per launch, where the device times launches.
    pub measured_s: Option<f64>,
    pub launches: u64,
    /// One steady launch on 1, 2, ... devices of this kind (`Model::scaling`); empty when
    /// not predicted.
    pub scaling_s: Vec<f64>,
    /// One steady launch over the MPI ranks of `model::cluster::RANK_COUNTS` (strong scaling,
    /// `Model::ranks`); empty when not predicted.
    pub ranks_s: Vec<f64>,
}

/// Every record in `dir`'s file, oldest first (none without a directory).
pub fn load(dir: Option<&Path>) -> Vec<PredictionRecord> {
    dir.map(read_file).unwrap_or_default()
}

/// The records of `identity` among `records`, in their order.
pub fn records_of(records: &[PredictionRecord], identity: &KernelIdentity) -> Vec<PredictionRecord> {
    records.iter().filter(|r| &r.kernel == identity).cloned().collect()
}

/// Adds `records` to `dir`'s file, replacing those of the same kernel, device, sizes and grid
/// kernel. Several runs may store at once (runs sharing a cache folder, the ranks of an MPI
/// job): under the file's lock the file is read again and what it holds is kept beside the new
/// records (`private_fs::update_locked`), and a damaged line is dropped. A failure to write
/// costs only the account in `explain`, so it is not reported.
pub fn store(dir: &Path, records: &[PredictionRecord]) {
    if records.is_empty() {
        return;
    }
    let _ = crate::private_fs::update_locked(&dir.join(PREDICTIONS_FILE), |on_disk| Some(merged(on_disk, records)));
}

/// The file's text holding the records of `on_disk` and `records`, the latter replacing those
/// of the same key, the newest [`MAX_LINES`] kept.
fn merged(on_disk: &str, records: &[PredictionRecord]) -> String {
    let mut all = parse(on_disk);
    all.retain(|old| {
        !records.iter().any(|new| new.kernel == old.kernel && new.device == old.device && new.sizes == old.sizes && new.grid == old.grid)
    });
    all.extend(records.iter().cloned());
    let keep_from = all.len().saturating_sub(MAX_LINES);
    render(&all[keep_from..])
}

fn render(records: &[PredictionRecord]) -> String {
    let mut out = String::from(
        "# yosegi: the performance model's predictions of recent runs. Fields (tab-separated): format, kernel, \
         hash of its variants' CUDA, device, sizes, grid kernel, predicted seconds per launch, limited by, \
         measured seconds per launch (- when not timed), launches, \
         seconds per launch on 1, 2, ... devices (- when not predicted), \
         seconds per launch on 1, 2, 4, ... 64 MPI ranks (- when not predicted)\n",
    );
    for r in records {
        let measured = r.measured_s.map_or_else(|| "-".to_string(), |m| format!("{m:e}"));
        let list = |v: &[f64]| if v.is_empty() { "-".to_string() } else { v.iter().map(|t| format!("{t:e}")).collect::<Vec<_>>().join(",") };
        let (scaling, ranks) = (list(&r.scaling_s), list(&r.ranks_s));
        let _ = writeln!(
            out,
            "{LINE_TAG}\t{}\t{:016x}\t{}\t{}\t{}\t{:e}\t{}\t{measured}\t{}\t{scaling}\t{ranks}",
            r.kernel.name, r.kernel.hash, r.device, r.sizes, r.grid, r.predicted_s, r.bound, r.launches
        );
    }
    out
}

fn read_file(dir: &Path) -> Vec<PredictionRecord> {
    let Ok(bytes) = std::fs::read(dir.join(PREDICTIONS_FILE)) else { return Vec::new() };
    parse(&String::from_utf8_lossy(&bytes))
}

/// The records of a file's text: whole lines only (`private_fs::complete_lines`), each checked
/// field by field, so that a torn or garbled line is never taken for a record.
fn parse(text: &str) -> Vec<PredictionRecord> {
    crate::private_fs::complete_lines(text).filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<PredictionRecord> {
    let fields: Vec<&str> = line.split('\t').collect();
    // Lines written before the ranks' field have one field less.
    let (fields, ranks) = match fields.as_slice() {
        [rest @ .., ranks] if rest.len() == 11 => (rest, *ranks),
        rest => (rest, "-"),
    };
    let [tag, name, hash, device, sizes, grid, predicted, bound, measured, launches, scaling] = fields else { return None };
    let list = |text: &str| -> Option<Vec<f64>> {
        match text {
            "-" => Some(Vec::new()),
            list => list.split(',').map(|t| t.parse::<f64>().ok().filter(|t| t.is_finite() && *t >= 0.0)).collect::<Option<Vec<_>>>(),
        }
    };
    if *tag != LINE_TAG || name.is_empty() || device.is_empty() || grid.is_empty() {
        return None;
    }
    let predicted_s: f64 = predicted.parse().ok().filter(|p: &f64| p.is_finite() && *p >= 0.0)?;
    let measured_s = match *measured {
        "-" => None,
        m => Some(m.parse::<f64>().ok().filter(|m| m.is_finite() && *m >= 0.0)?),
    };
    Some(PredictionRecord {
        kernel: KernelIdentity { name: name.to_string(), hash: u64::from_str_radix(hash, 16).ok()? },
        device: device.to_string(),
        sizes: sizes.to_string(),
        grid: grid.to_string(),
        predicted_s,
        bound: bound.to_string(),
        measured_s,
        launches: launches.parse().ok()?,
        scaling_s: list(scaling)?,
        ranks_s: list(ranks)?,
    })
}

/// Where the records are read from: the tuning cache's directory, when there is one (never
/// made here: a reader has nothing to keep).
pub fn default_dir() -> Option<PathBuf> {
    crate::runtime::cuda::cache::existing_trusted_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(grid: &str, sizes: &str, predicted_s: f64) -> PredictionRecord {
        PredictionRecord {
            kernel: KernelIdentity { name: "main_l48".into(), hash: 0xabc },
            device: "NVIDIA H100".into(),
            sizes: sizes.into(),
            grid: grid.into(),
            predicted_s,
            bound: "memory".into(),
            measured_s: Some(predicted_s * 1.1),
            launches: 100,
            scaling_s: vec![predicted_s, predicted_s / 1.9],
            ranks_s: vec![predicted_s, predicted_s / 1.8, predicted_s / 3.0, predicted_s / 4.0, predicted_s / 3.5, predicted_s / 3.0, predicted_s / 2.0],
        }
    }

    #[test]
    fn records_round_trip_and_replace_their_own_key() {
        let dir = tempfile::tempdir().expect("temp dir");
        store(dir.path(), &[record("main_l48", "n=4096", 4.1e-5), record("main_l48_staged", "n=4096", 3.0e-5)]);
        store(dir.path(), &[record("main_l48", "n=4096", 4.5e-5), record("main_l48", "n=1024", 3.0e-6)]);
        let identity = KernelIdentity { name: "main_l48".into(), hash: 0xabc };
        let got = records_of(&load(Some(dir.path())), &identity);
        assert_eq!(got, vec![record("main_l48_staged", "n=4096", 3.0e-5), record("main_l48", "n=4096", 4.5e-5), record("main_l48", "n=1024", 3.0e-6)]);
        // Another hash (a changed kernel) sees none of them.
        assert!(records_of(&load(Some(dir.path())), &KernelIdentity { name: "main_l48".into(), hash: 0xabd }).is_empty());
    }

    #[test]
    fn a_malformed_line_is_skipped() {
        let dir = tempfile::tempdir().expect("temp dir");
        store(dir.path(), &[record("main_l48", "n=4096", 4.1e-5)]);
        let path = dir.path().join(PREDICTIONS_FILE);
        let text = std::fs::read_to_string(&path).expect("written");
        let broken = text.clone() + "p1\tmain_l48\tabc\tgpu\tn=1\tmain_l48\tNaN\tmemory\t-\t1\t-\np1\tshort\n";
        std::fs::write(&path, broken).expect("write");
        assert_eq!(records_of(&load(Some(dir.path())), &KernelIdentity { name: "main_l48".into(), hash: 0xabc }).len(), 1);
    }

    /// A file cut short inside its last line: the cut line still parses (it lacks only the
    /// ranks' field, as lines of an older format do) but has no newline, so it is not taken
    /// for a record, and the next store rewrites the file without it.
    #[test]
    fn a_torn_last_line_is_ignored_and_dropped_by_the_next_store() {
        let dir = tempfile::tempdir().expect("temp dir");
        store(dir.path(), &[record("main_l48", "n=4096", 4.1e-5)]);
        let path = dir.path().join(PREDICTIONS_FILE);
        let whole = std::fs::read_to_string(&path).expect("written");
        let torn_line = render(&[record("main_l48", "n=8", 1e-6)]).lines().last().expect("a line").to_string();
        let cut = &torn_line[..torn_line.rfind('\t').expect("fields")];
        assert!(parse_line(cut).is_some(), "the cut line would parse on its own: {cut}");
        std::fs::write(&path, format!("{whole}{cut}")).expect("write");
        let identity = KernelIdentity { name: "main_l48".into(), hash: 0xabc };
        assert_eq!(records_of(&load(Some(dir.path())), &identity), vec![record("main_l48", "n=4096", 4.1e-5)]);
        store(dir.path(), &[record("main_l48", "n=1024", 3.0e-6)]);
        assert_eq!(records_of(&load(Some(dir.path())), &identity), vec![record("main_l48", "n=4096", 4.1e-5), record("main_l48", "n=1024", 3.0e-6)]);
        let text = std::fs::read_to_string(&path).expect("written");
        assert!(!text.contains("n=8\t"), "{text}");
    }

    /// Runs storing at once (threads here, each taking the file's lock as a process does) keep
    /// every one's records.
    #[test]
    fn concurrent_stores_keep_every_record() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::thread::scope(|scope| {
            for run in 0..8 {
                let dir = dir.path();
                scope.spawn(move || {
                    for k in 0..5 {
                        store(dir, &[record("main_l48", &format!("n={run}{k}"), 1e-6), record("main_l56", &format!("n={run}{k}"), 2e-6)]);
                    }
                });
            }
        });
        let all = load(Some(dir.path()));
        assert_eq!(all.len(), 8 * 5 * 2);
        for run in 0..8 {
            for k in 0..5 {
                for grid in ["main_l48", "main_l56"] {
                    assert!(all.iter().any(|r| r.grid == grid && r.sizes == format!("n={run}{k}")), "lost {grid} n={run}{k}");
                }
            }
        }
    }
}
