//! The device-count choice of a program's last multi-GPU run, kept for `yosegi explain`.
//!
//! The choice is made by timing the program's cycle (the parent module), which only a run on
//! several GPUs can do; at exit such a run leaves one line per program and device kind in
//! [`DEVICE_COUNTS_FILE`], beside the tuning cache: the program (a hash of its kernels'
//! identities, so a changed program shows no old choice), the device, how many devices there
//! were, what was kept, and the cycle times it was kept from. Runs that share the folder add
//! to the file together without losing each other's lines ([`store`]). A missing or malformed
//! file or line, or a torn one, is ignored.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::Decision;

pub const DEVICE_COUNTS_FILE: &str = "device-counts.txt";

/// Marks the format of every line; a line with another tag is ignored.
const LINE_TAG: &str = "d1";

/// Lines kept: the newest.
const MAX_LINES: usize = 1000;

/// One program's choice on one kind of device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceCountRecord {
    /// `runtime::variants::program_hash` of the program's module.
    pub program: u64,
    pub device: String,
    pub devices: usize,
    pub decision: Decision,
}

impl DeviceCountRecord {
    /// `kept all 4 devices: a cycle of the program's regions took 0.426 ms split, 0.852 ms on one`.
    pub fn text(&self) -> String {
        let ms = |t: Duration| format!("{:.3} ms", t.as_secs_f64() * 1e3);
        let d = &self.decision;
        let kept = if d.one_device { "kept one device".to_string() } else { format!("kept all {} devices", self.devices) };
        let one = match d.one {
            Some(one) => format!("{} on one", ms(one)),
            None => format!("one device not tried: the kernels alone take {} a cycle on one", ms(d.work)),
        };
        format!("{kept}: a cycle of the program's regions took {} split over {} devices, {one}", ms(d.split), self.devices)
    }
}

/// The record of `program` on `device` in `dir`'s file, if any (the newest).
pub fn recorded(dir: &Path, program: u64) -> Vec<DeviceCountRecord> {
    let mut found: Vec<DeviceCountRecord> = Vec::new();
    for r in read_file(dir).into_iter().filter(|r| r.program == program) {
        found.retain(|old| old.device != r.device);
        found.push(r);
    }
    found
}

/// Adds `record`, replacing the program's earlier one on the same device. Several runs may
/// store at once (runs sharing a cache folder, the ranks of an MPI job): under the file's lock
/// the file is read again and its other lines kept (`private_fs::update_locked`; a damaged line
/// is dropped). A failure to write costs only the account in `explain`, so it is not reported.
pub fn store(dir: &Path, record: &DeviceCountRecord) {
    let _ = crate::private_fs::update_locked(&dir.join(DEVICE_COUNTS_FILE), |on_disk| Some(merged(on_disk, record)));
}

/// The file's text holding the records of `on_disk` and `record`, the latter replacing the
/// program's on the same device, the newest [`MAX_LINES`] kept.
fn merged(on_disk: &str, record: &DeviceCountRecord) -> String {
    let mut all = parse(on_disk);
    all.retain(|old| !(old.program == record.program && old.device == record.device));
    all.push(record.clone());
    let keep_from = all.len().saturating_sub(MAX_LINES);
    let mut text = String::from(
        "# yosegi: the number of devices chosen by the last multi-GPU run of each program. Fields (tab-separated): \
         format, program hash, device, devices, kept (one or all), split cycle ns, one-device cycle ns (- when not \
         tried), kernel ns of a split cycle summed over the devices\n",
    );
    for r in &all[keep_from..] {
        let d = &r.decision;
        let one = d.one.map_or_else(|| "-".to_string(), |t| t.as_nanos().to_string());
        let kept = if d.one_device { "one" } else { "all" };
        let _ = writeln!(text, "{LINE_TAG}\t{:016x}\t{}\t{}\t{kept}\t{}\t{one}\t{}", r.program, r.device, r.devices, d.split.as_nanos(), d.work.as_nanos());
    }
    text
}

fn read_file(dir: &Path) -> Vec<DeviceCountRecord> {
    let Ok(bytes) = std::fs::read(dir.join(DEVICE_COUNTS_FILE)) else { return Vec::new() };
    parse(&String::from_utf8_lossy(&bytes))
}

/// The records of a file's text: whole lines only (`private_fs::complete_lines`), each checked
/// field by field, so that a torn or garbled line is never taken for a record.
fn parse(text: &str) -> Vec<DeviceCountRecord> {
    crate::private_fs::complete_lines(text).filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<DeviceCountRecord> {
    let fields: Vec<&str> = line.split('\t').collect();
    let [tag, program, device, devices, kept, split, one, work] = fields.as_slice() else { return None };
    if *tag != LINE_TAG || device.is_empty() {
        return None;
    }
    let duration = |ns: &str| ns.parse::<u64>().ok().map(Duration::from_nanos);
    let one_device = match *kept {
        "one" => true,
        "all" => false,
        _ => return None,
    };
    Some(DeviceCountRecord {
        program: u64::from_str_radix(program, 16).ok()?,
        device: device.to_string(),
        devices: devices.parse().ok().filter(|&n: &usize| n > 1)?,
        decision: Decision {
            one_device,
            split: duration(split)?,
            one: match *one {
                "-" => None,
                t => Some(duration(t)?),
            },
            work: duration(work)?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(program: u64, one_device: bool) -> DeviceCountRecord {
        DeviceCountRecord {
            program,
            device: "NVIDIA H100".into(),
            devices: 4,
            decision: Decision {
                one_device,
                split: Duration::from_micros(426),
                one: Some(Duration::from_micros(852)),
                work: Duration::from_micros(850),
            },
        }
    }

    #[test]
    fn a_choice_round_trips_and_the_newest_wins() {
        let dir = tempfile::tempdir().expect("temp dir");
        store(dir.path(), &record(7, true));
        store(dir.path(), &record(7, false));
        store(dir.path(), &record(8, true));
        let got = recorded(dir.path(), 7);
        assert_eq!(got, vec![record(7, false)]);
        assert_eq!(
            got[0].text(),
            "kept all 4 devices: a cycle of the program's regions took 0.426 ms split over 4 devices, 0.852 ms on one"
        );
        assert!(recorded(dir.path(), 9).is_empty());
        // A malformed line is skipped.
        let path = dir.path().join(DEVICE_COUNTS_FILE);
        let text = std::fs::read_to_string(&path).expect("written") + "d1\t7\tgpu\t1\tall\t1\t-\t1\nd1\tzz\n";
        std::fs::write(&path, text).expect("write");
        assert_eq!(recorded(dir.path(), 7), vec![record(7, false)]);
    }

    /// A torn last line (no newline) is not taken for a record, even one whose fields would
    /// parse, and the next store drops it; another program's record is kept.
    #[test]
    fn a_torn_line_is_ignored_and_other_programs_are_kept() {
        let dir = tempfile::tempdir().expect("temp dir");
        store(dir.path(), &record(7, true));
        let path = dir.path().join(DEVICE_COUNTS_FILE);
        let cut = merged("", &record(9, true)).lines().last().expect("a line").to_string();
        assert!(parse_line(&cut).is_some());
        let text = std::fs::read_to_string(&path).expect("written") + &cut;
        std::fs::write(&path, text).expect("write");
        assert!(recorded(dir.path(), 9).is_empty());
        store(dir.path(), &record(8, false));
        assert_eq!(recorded(dir.path(), 7), vec![record(7, true)]);
        assert_eq!(recorded(dir.path(), 8), vec![record(8, false)]);
        assert!(recorded(dir.path(), 9).is_empty());
        assert!(!std::fs::read_to_string(&path).expect("written").contains(&cut));
    }
}
