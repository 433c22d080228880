//! Distribution of a launch over several devices: along which parallel dim of a partitioned
//! kernel (`opt::partition`), which device runs which block of it, and whether the kernel may
//! be split at all.
//!
//! A launch is split when the runtime has several devices, the program has not taken the
//! devices in hand itself (`acc_set_device_num`, device addresses), the launch moves enough
//! bytes to gain ([`DEFAULT_MIN_SPLIT_BYTES`]), and the parts' DEF
//! sections are affine and pairwise disjoint: then no byte is written by two devices, and the
//! coherence manager (`coherence`) knows after the launch which device holds each written
//! byte. Before a part runs, its device's copies are made current for the part's USE sections:
//! a stencil's halo comes from the neighbouring device, device to device. A kernel whose parts
//! would write the same bytes, or whose writes are irregular (`a[idx[i]]`), runs whole on the
//! current device, which first gathers what the others wrote.
//!
//! Reductions: each part reduces its block; the runtime folds the parts' partial results in
//! device order with the host variable's value, once.
//!
//! Overlap ([`Runtime::overlap_split`]): a part whose device lacks only a halo (what its
//! neighbours wrote last) is launched as an interior, the iterations that read nothing it
//! lacks, and the boundary iterations on either side. The interior starts at once; the halo
//! comes in beside it ([`crate::runtime::device::Device::defer_copies`]), and the boundary
//! waits for it. A device then computes while the exchange runs, instead of waiting for the
//! exchange and then computing.

use std::sync::Arc;

use crate::analysis::access::{ParamSections, Section};
use crate::diag::Diagnostic;
use crate::ir::{Handle, Kernel, ParamKind, ParamValue, Region};

use super::abi::YosegiArg;
use super::device::Device;
use super::model::Machine;
use super::model::predict::{SplitBytes, split_pays};
use super::{Runtime, RuntimeError, param_value};

/// Bytes a launch's sections cover (what it reads and writes, summed over its arrays) below
/// which it stays whole on one device: such a launch takes a few microseconds on a GPU, which
/// splitting cannot shorten (launch latency and the wait for every part dominate), while the
/// copies it brings between devices cost more. 32 MiB is about 10 us of an H100's memory
/// bandwidth. NPB CG's vector updates (1.2 MB) stay whole and its matrix-vector product
/// (470 MB) is split. `YOSEGI_MIN_SPLIT_BYTES` overrides it; on the simulator, which exists to
/// check programs, the default is 0: every launch that can be split is.
pub const DEFAULT_MIN_SPLIT_BYTES: u64 = 32 << 20;

/// How the runtime decides whether a launch that can be split over the devices is.
#[derive(Clone, Debug)]
pub enum SplitRule {
    /// When its sections cover at least this many bytes (0: always): the simulator (which
    /// exists to check programs, so every launch that can be split is), `YOSEGI_MIN_SPLIT_BYTES`
    /// (for measuring), or a GPU whose figures could not be had ([`DEFAULT_MIN_SPLIT_BYTES`]).
    MinBytes(u64),
    /// When the performance model predicts the split faster, from the GPU's measured figures
    /// (`model::predict::split_pays`): the number of devices a launch runs on is one or all.
    Model(Machine),
}

/// The split rule for a runtime on these devices (see [`SplitRule`]); `machine` gives the
/// first GPU's figures (measured once per GPU model and kept), asked only when needed. The
/// link between the first two devices is measured here, at every start of a run on several
/// GPUs (a few milliseconds): the kept figures are per GPU model, and the links differ from
/// one machine to the next.
pub fn split_rule(simulated: bool, in_job: bool, devices: &mut [Box<dyn Device>], machine: impl FnOnce(&mut [Box<dyn Device>]) -> Machine) -> SplitRule {
    match std::env::var("YOSEGI_MIN_SPLIT_BYTES").ok().and_then(|v| v.trim().parse().ok()) {
        Some(bytes) => SplitRule::MinBytes(bytes),
        None if simulated => SplitRule::MinBytes(0),
        // The ranks of a job (`runtime::ranks`) decide alike without timing anything.
        None if devices.len() < 2 || in_job => SplitRule::MinBytes(DEFAULT_MIN_SPLIT_BYTES),
        None => {
            let mut machine = machine(devices);
            if !machine.measured {
                return SplitRule::MinBytes(DEFAULT_MIN_SPLIT_BYTES);
            }
            let (bytes_per_s, copy_s) = measure_peer_link(devices);
            machine.peer_bytes_per_s = bytes_per_s;
            machine.peer_copy_s = copy_s;
            SplitRule::Model(machine)
        }
    }
}

/// Bandwidth and fixed cost of a copy from device 0 to device 1: three 64 MiB copies and ten of
/// 4 KiB, after one of each to warm up, each timed from idle devices.
fn measure_peer_link(devices: &mut [Box<dyn Device>]) -> (f64, f64) {
    const BIG: u64 = 64 << 20;
    const SMALL: u64 = 4 << 10;
    let (first, rest) = devices.split_at_mut(1);
    let (src, dst) = (&mut first[0], &mut rest[0]);
    let from = src.allocate(BIG);
    let to = dst.allocate(BIG);
    let mut time = |len: u64, repeats: u32| {
        dst.copy_from_peer(to, 0, src.as_mut(), from, 0, len);
        dst.wait();
        let started = std::time::Instant::now();
        for _ in 0..repeats {
            dst.copy_from_peer(to, 0, src.as_mut(), from, 0, len);
        }
        dst.wait();
        src.wait();
        started.elapsed().as_secs_f64() / repeats as f64
    };
    let big = time(BIG, 3);
    let small = time(SMALL, 10);
    dst.free(to);
    src.free(from);
    let bytes_per_s = BIG as f64 / (big - small).max(1e-9);
    (bytes_per_s, small)
}

/// Iterations a part of a split launch must have to run its interior beside its halo
/// exchange: cutting a part adds one or two launches, and their results to read, which cost
/// the host some 40 us each at every step; that pays only where the part's kernel runs long
/// enough to hide them. Measured on four H100s (bench/NOTES.md, run 16): Himeno XL (67 M
/// iterations a part, a 1.4 ms kernel) 3.48x with the overlap against 3.43x without; Himeno L
/// (8 M, 0.2 ms) 1.16x with it, 2.41x without in the run before; a 8192^2 Jacobi (17 M) 1.38x
/// against 2.05x. (The parts' bytes mislead here: a section is a hull, and Himeno's `a[4]`
/// arrays make every part's hull the whole of them.)
pub const DEFAULT_MIN_OVERLAP_ITERATIONS: i64 = 48 << 20;

/// The overlap threshold (see [`DEFAULT_MIN_OVERLAP_ITERATIONS`]): `YOSEGI_OVERLAP=off` never
/// overlaps, `YOSEGI_OVERLAP_MIN_ITERATIONS` sets it; on the simulator, which exists to check
/// programs, every part that can overlaps.
pub fn min_overlap_iterations(simulated: bool) -> Option<i64> {
    if std::env::var("YOSEGI_OVERLAP").is_ok_and(|v| v.trim() == "off") {
        return None;
    }
    match std::env::var("YOSEGI_OVERLAP_MIN_ITERATIONS").ok().and_then(|v| v.trim().parse().ok()) {
        Some(iterations) => Some(iterations),
        None if simulated => Some(0),
        None => Some(DEFAULT_MIN_OVERLAP_ITERATIONS),
    }
}

/// One device's part of a launch: its args (the partition's `first` and `count` set) and the
/// sections its part reads and writes.
#[derive(Clone)]
pub(super) struct Part {
    pub device: usize,
    pub args: Vec<YosegiArg>,
    pub sections: Arc<Vec<ParamSections>>,
    /// The partition (index into `Kernel::partitions`) the part is a block of; `None` for a
    /// launch that is not split.
    pub along: Option<usize>,
}

impl Part {
    /// The first iteration of the part along its partition (0 when not split): parts of one
    /// device fold their reductions in this order.
    pub fn first(&self, kernel: &Kernel) -> i64 {
        self.along.map_or(0, |p| self.args[kernel.partitions[p].first_arg as usize].i)
    }
}

/// A part cut for overlap: its interior, which reads only what its device holds, and the
/// boundary blocks, which wait for the halo.
pub(super) struct Overlap {
    pub interior: Part,
    pub boundary: Vec<Part>,
}

/// Boundary widths tried, in iterations along the partition, on the low and high side: a
/// halo on one side only (the first and last device), then on both; one to eight iterations
/// (a stencil's radius).
const BOUNDARY_WIDTHS: [i64; 4] = [1, 2, 4, 8];

/// The args and param values of a launch over the whole space: a partitioned kernel's `first`
/// and `count` cover each dim (the host passes zeros); other kernels' as the host gave them.
pub(super) fn whole_launch(region: &Region, kernel: &Kernel, args: &[YosegiArg]) -> Result<(Vec<YosegiArg>, Vec<ParamValue>), RuntimeError> {
    let mut whole = args.to_vec();
    let mut values: Vec<ParamValue> = kernel.params.iter().map(|p| param_value(region, p, args)).collect();
    if kernel.partitions.is_empty() {
        return Ok((whole, values));
    }
    // The trips read the other params only, so the zeros the host passed do not matter here.
    let trips = crate::opt::partition::whole_trips(kernel, &values).map_err(|why| {
        RuntimeError::unsupported(
            Diagnostic::error(kernel.span, format!("cannot evaluate the trip counts of kernel `{}`: {why}", kernel.name))
                .with_help("this is a compiler bug: a trip count is an expression of the kernel's params"),
        )
    })?;
    for (partition, trip) in kernel.partitions.iter().zip(trips) {
        for (arg, value) in [(partition.first_arg, 0), (partition.count_arg, trip)] {
            whole[arg as usize].i = value;
            for (param, slot) in kernel.params.iter().zip(values.iter_mut()) {
                if param.arg == arg {
                    *slot = param_value(region, param, &whole);
                }
            }
        }
    }
    Ok((whole, values))
}

/// How a launch would split along one dim.
enum Split {
    /// One block per device (at least two), the bytes each reads and moves, and what they
    /// read together.
    Parts { parts: Vec<Part>, bytes: Vec<SplitBytes>, read: u64 },
    /// Fewer than two iterations along the dim.
    TooShort,
    /// Two blocks would write the same memory, or a block writes irregularly.
    Overlapping,
}

/// Blocks of `0..trip` for `devices` devices, as (first, count), in device order: as even as
/// integers allow, the larger ones first. Devices beyond `trip` get empty blocks.
pub fn block_parts(trip: i64, devices: usize) -> Vec<(i64, i64)> {
    let n = devices.max(1) as i64;
    let trip = trip.max(0);
    (0..n)
        .map(|d| {
            let first = d * (trip / n) + d.min(trip % n);
            let count = trip / n + i64::from(d < trip % n);
            (first, count)
        })
        .collect()
}

/// Whether the write sections of the parts (absolute byte ranges, per part) overlap between
/// two parts. A part's own ranges may overlap each other (two params into one array).
pub fn parts_write_overlap(mut writes: Vec<(u64, u64, usize)>) -> bool {
    writes.retain(|&(lo, hi, _)| lo < hi);
    writes.sort_unstable();
    // The highest end seen so far and which part reached it; a range starting below an end
    // of another part overlaps it.
    let mut reach: Vec<(u64, usize)> = Vec::new();
    for &(lo, hi, part) in &writes {
        if reach.iter().any(|&(end, other)| other != part && lo < end) {
            return true;
        }
        reach.retain(|&(end, _)| end > lo);
        reach.push((hi, part));
    }
    false
}

impl Runtime {
    /// Whether launches may be split over the devices now: several devices, and a program that
    /// has not chosen devices or handled device addresses itself.
    fn splitting_allowed(&self) -> bool {
        self.devices.len() > 1 && !self.program_manages_devices
    }

    /// The parts of a launch of `kernel` when it is split over the devices (see the module
    /// doc), or `None` when it runs whole on the current device. `args` cover the whole space.
    /// Of the dims whose blocks write disjoint memory, the one whose parts read the fewest
    /// bytes wins (the smallest halo), the outermost on a tie.
    /// `sections` are the whole launch's: one that covers too few bytes is not split at all,
    /// before any part is evaluated.
    pub(super) fn plan_parts(
        &mut self,
        region: &Region,
        handle: Handle<Kernel>,
        kernel: &Kernel,
        args: &[YosegiArg],
        sections: &[ParamSections],
    ) -> Option<Vec<Part>> {
        if kernel.partitions.is_empty() || !self.splitting_allowed() || !self.device_count.splits() {
            return None;
        }
        // A space no dim of which has two iterations has nothing to split.
        if kernel.partitions.iter().all(|p| args[p.count_arg as usize].i < 2) {
            return None;
        }
        let whole = self.section_bytes(kernel, args, sections);
        if let SplitRule::MinBytes(min) = self.split_rule
            && whole.1 < min
        {
            self.stats.small_launches += 1;
            return None;
        }
        let mut best: Option<(u64, Vec<Part>, Vec<SplitBytes>)> = None;
        let mut overlapping = false;
        for along in 0..kernel.partitions.len() {
            match self.split_along(region, handle, kernel, args, along, self.devices.len()) {
                Split::TooShort => {}
                Split::Overlapping => overlapping = true,
                Split::Parts { parts, bytes, read } => {
                    if best.as_ref().is_none_or(|(fewest, ..)| read < *fewest) {
                        best = Some((read, parts, bytes));
                    }
                }
            }
        }
        match best {
            Some((_, parts, bytes)) => {
                if let SplitRule::Model(machine) = &self.split_rule {
                    let (pays, whole_s, split_s) = split_pays(machine, SplitBytes { read: whole.0, total: whole.1 }, &bytes);
                    if !pays {
                        self.stats.small_launches += 1;
                        self.stats.kept_whole_by_model = Some((kernel.name.clone(), whole_s, split_s));
                        return None;
                    }
                }
                self.stats.distributed_launches += 1;
                self.device_count.split_seen(region.id as i32);
                Some(parts)
            }
            None => {
                if overlapping {
                    self.stats.undistributed_launches += 1;
                }
                None
            }
        }
    }

    /// For the model's scaling curve (`--stats`): how this launch of `kernel` would split over
    /// 2 to [`super::model::MAX_MODELLED_DEVICES`] devices, whatever the devices there are, by the rule
    /// [`Runtime::plan_parts`] follows (the dim whose parts read the fewest bytes). Taken once
    /// per kernel and sizes, for [`super::model::MAX_SPLIT_SHAPES`] sizes of a kernel.
    pub(super) fn record_split_shape(&mut self, region: &Region, handle: Handle<Kernel>, kernel: &Kernel, args: &[YosegiArg], sections: &[ParamSections]) {
        let Some(model) = &mut self.model else { return };
        if kernel.partitions.is_empty() {
            return;
        }
        let key: Vec<i64> = kernel.partitions.iter().map(|p| args[p.count_arg as usize].i).collect();
        // Every launch asks; only a new size builds anything.
        if model.recall_split_shape(&kernel.name, &key) {
            return;
        }
        let whole_reads = self.object_reads(kernel, args, sections);
        let mut parts = Vec::new();
        for devices in 2..=super::model::MAX_MODELLED_DEVICES {
            let best = (0..kernel.partitions.len())
                .filter_map(|along| match self.split_along(region, handle, kernel, args, along, devices) {
                    Split::Parts { parts, bytes, read } => Some((read, parts, bytes)),
                    Split::TooShort | Split::Overlapping => None,
                })
                .min_by_key(|(read, ..)| *read);
            let Some((_, split, bytes)) = best else { break };
            let n = split.len().max(1) as u64;
            let shares: Vec<super::model::PartBytes> = split
                .iter()
                .zip(bytes)
                .map(|(part, bytes)| {
                    // Per object: what the part reads beyond an even share of what the whole
                    // launch reads of it (a halo; most of a vector read whole).
                    let beyond = self
                        .object_reads(kernel, &part.args, &part.sections)
                        .into_iter()
                        .map(|(object, read)| (object, read.saturating_sub(whole_reads.iter().find(|(o, _)| *o == object).map_or(0, |(_, r)| r / n))))
                        .filter(|&(_, b)| b > 0)
                        .collect();
                    super::model::PartBytes { bytes, beyond_share: beyond }
                })
                .collect();
            parts.push(shares);
        }
        let shape = super::model::SplitShape { key, parts };
        if let Some(model) = &mut self.model {
            model.set_split_shape(kernel.name.clone(), shape);
        }
    }

    /// Iterations `first..first + count` along partition `along` of a launch whose args are
    /// `args`, on `device`, with their sections.
    #[allow(clippy::too_many_arguments)]
    fn block_of(&mut self, region: &Region, handle: Handle<Kernel>, kernel: &Kernel, args: &[YosegiArg], along: usize, device: usize, first: i64, count: i64) -> Part {
        let partition = &kernel.partitions[along];
        let mut part_args = args.to_vec();
        part_args[partition.first_arg as usize].i = first;
        part_args[partition.count_arg as usize].i = count;
        let part_values: Vec<ParamValue> = kernel.params.iter().map(|p| param_value(region, p, &part_args)).collect();
        let sections = self.sections_cache.sections(handle, kernel, &part_values);
        Part { device, args: part_args, sections, along: Some(along) }
    }

    /// The blocks of a launch along partition `along`'s dim, one per device, with their
    /// sections.
    fn split_along(&mut self, region: &Region, handle: Handle<Kernel>, kernel: &Kernel, args: &[YosegiArg], along: usize, devices: usize) -> Split {
        let partition = &kernel.partitions[along];
        let trip = args[partition.count_arg as usize].i;
        if trip < 2 {
            return Split::TooShort;
        }
        let mut parts = Vec::new();
        let mut writes = Vec::new();
        let mut bytes = Vec::new();
        let mut read: u64 = 0;
        for (device, (first, count)) in block_parts(trip, devices).into_iter().enumerate() {
            if count == 0 {
                continue;
            }
            let part = self.block_of(region, handle, kernel, args, along, device, first, count);
            let (part_read, part_total) = self.section_bytes(kernel, &part.args, &part.sections);
            read = read.saturating_add(part_read);
            bytes.push(SplitBytes { read: part_read, total: part_total });
            for s in part.sections.iter() {
                let param = &kernel.params[s.param as usize];
                let ParamKind::Array { elem, .. } = &param.kind else { return Split::Overlapping };
                let ptr = part.args[param.arg as usize].ptr as u64;
                let elem = elem.size_bytes() as i64;
                match s.write {
                    Section::None => {}
                    Section::Whole => return Split::Overlapping,
                    Section::Elements { lo, hi } => {
                        writes.push((ptr.wrapping_add_signed(lo.wrapping_mul(elem)), ptr.wrapping_add_signed(hi.wrapping_mul(elem)), device));
                    }
                }
            }
            parts.push(part);
        }
        if parts.len() < 2 {
            return Split::TooShort;
        }
        if parts_write_overlap(writes) {
            return Split::Overlapping;
        }
        Split::Parts { parts, bytes, read }
    }

    /// `part` cut into an interior that its device can run before the halo comes in, and the
    /// boundary blocks that wait for it (see the module doc); `None` when the part has too
    /// few iterations to gain ([`DEFAULT_MIN_OVERLAP_ITERATIONS`]), lacks nothing, lacks more than a halo (a quarter of what it reads or more: the first
    /// distribution, a vector gathered whole), or has no interior of at least half its
    /// iterations that reads only what its device holds.
    pub(super) fn overlap_split(&mut self, region: &Region, handle: Handle<Kernel>, kernel: &Kernel, part: &Part) -> Option<Overlap> {
        let along = part.along?;
        let min_iterations = self.min_overlap_iterations?;
        let iterations = kernel.partitions.iter().fold(1i64, |n, p| n.saturating_mul(part.args[p.count_arg as usize].i.max(0)));
        if iterations < min_iterations {
            return None;
        }
        let (missing, read) = self.bytes_missing(kernel, part);
        if missing == 0 || missing.saturating_mul(4) >= read {
            return None;
        }
        let partition = &kernel.partitions[along];
        let first = part.args[partition.first_arg as usize].i;
        let count = part.args[partition.count_arg as usize].i;
        // The widths that served this kernel on this device last time first: a time step
        // finds the same ones at every launch.
        let last = self.overlap_widths.get(&(handle, part.device)).copied();
        let candidates = BOUNDARY_WIDTHS.iter().take_while(|&&w| 4 * w <= count).flat_map(|&w| [(0, w), (w, 0), (w, w)]);
        for (low, high) in last.into_iter().filter(|&(l, h)| 2 * (l + h) <= count).chain(candidates) {
            let interior = self.block_of(region, handle, kernel, &part.args, along, part.device, first + low, count - low - high);
            if self.bytes_missing(kernel, &interior).0 > 0 {
                continue;
            }
            self.overlap_widths.insert((handle, part.device), (low, high));
            let mut boundary = Vec::new();
            if low > 0 {
                boundary.push(self.block_of(region, handle, kernel, &part.args, along, part.device, first, low));
            }
            if high > 0 {
                boundary.push(self.block_of(region, handle, kernel, &part.args, along, part.device, first + count - high, high));
            }
            return Some(Overlap { interior, boundary });
        }
        None
    }

    /// The bytes `part` reads that its device's copies lack, and the bytes it reads.
    fn bytes_missing(&self, kernel: &Kernel, part: &Part) -> (u64, u64) {
        let (mut missing, mut read) = (0u64, 0u64);
        for sections in part.sections.iter() {
            let param = &kernel.params[sections.param as usize];
            let ParamKind::Array { elem, .. } = &param.kind else { continue };
            let ptr = part.args[param.arg as usize].ptr as u64;
            let elem = elem.size_bytes() as i128;
            let Some(start) = self.object_reached(ptr, sections, elem) else { continue };
            let Some(object) = self.registry.get(start) else { continue };
            let Some((lo, hi)) = super::launch::object_range(sections.read, ptr, elem, start, object.copies.len) else { continue };
            read += hi.saturating_sub(lo);
            missing += match &object.copies.devices[part.device] {
                Some(copy) => copy.valid.missing(lo, hi).iter().map(|(a, b)| b - a).sum(),
                None => hi.saturating_sub(lo),
            };
        }
        (missing, read)
    }

    /// The bytes `sections` read, per tracked object (by its start), summed over the params
    /// bound into it.
    fn object_reads(&self, kernel: &Kernel, args: &[YosegiArg], sections: &[ParamSections]) -> Vec<(u64, u64)> {
        let mut reads: Vec<(u64, u64)> = Vec::new();
        for s in sections {
            let param = &kernel.params[s.param as usize];
            let ParamKind::Array { elem, .. } = &param.kind else { continue };
            let ptr = args[param.arg as usize].ptr as u64;
            let Some(start) = self.registry.find(ptr) else { continue };
            let bytes = self.section_len(s.read, elem.size_bytes(), ptr);
            match reads.iter_mut().find(|(o, _)| *o == start) {
                Some((_, r)) => *r = r.saturating_add(bytes),
                None => reads.push((start, bytes)),
            }
        }
        reads
    }

    /// The bytes `section` of an array of `elem_bytes` elements at `ptr` covers.
    fn section_len(&self, section: Section, elem_bytes: u32, ptr: u64) -> u64 {
        match section {
            Section::None => 0,
            Section::Elements { lo, hi } => (hi - lo).max(0).saturating_mul(elem_bytes as i64) as u64,
            // An irregular access (NPB CG's `a[k]` over `rowstr[j]..rowstr[j+1]`) may reach the
            // whole object, as large as it is.
            Section::Whole => self.registry.find(ptr).and_then(|start| self.registry.get(start)).map_or(0, |o| o.len),
        }
    }

    /// The bytes `sections` read, and read and write together.
    fn section_bytes(&self, kernel: &Kernel, args: &[YosegiArg], sections: &[ParamSections]) -> (u64, u64) {
        let (mut read, mut total): (u64, u64) = (0, 0);
        for s in sections {
            let param = &kernel.params[s.param as usize];
            let ParamKind::Array { elem, .. } = &param.kind else { continue };
            let ptr = args[param.arg as usize].ptr as u64;
            let reads = self.section_len(s.read, elem.size_bytes(), ptr);
            read = read.saturating_add(reads);
            total = total.saturating_add(reads).saturating_add(self.section_len(s.write, elem.size_bytes(), ptr));
        }
        (read, total)
    }

    /// The program takes devices in hand (chooses one, or handles device addresses): launches
    /// are no longer split, and the current device's copies are made current wherever another
    /// device holds newer bytes, so that what the program reads through device addresses is
    /// the object's value.
    pub(super) fn stop_splitting(&mut self) {
        if self.program_manages_devices {
            return;
        }
        self.program_manages_devices = true;
        if self.devices.len() < 2 {
            return;
        }
        let device = self.current_device;
        for start in self.registry.starts_in_registration_order() {
            let Some((copies, mut t)) = self.transfer_for(start) else { continue };
            if !copies.has_device_copy(device) {
                continue;
            }
            let elsewhere: Vec<(u64, u64)> = copies
                .devices
                .iter()
                .enumerate()
                .filter(|&(d, _)| d != device)
                .filter_map(|(_, c)| c.as_ref())
                .flat_map(|c| c.valid.ranges().to_vec())
                .collect();
            for (lo, hi) in elsewhere {
                copies.make_device_valid(device, lo, hi, &mut t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_trip_in_order_and_evenly() {
        assert_eq!(block_parts(10, 3), vec![(0, 4), (4, 3), (7, 3)]);
        assert_eq!(block_parts(8, 2), vec![(0, 4), (4, 4)]);
        // Fewer iterations than devices: the last devices get nothing.
        assert_eq!(block_parts(2, 4), vec![(0, 1), (1, 1), (2, 0), (2, 0)]);
        assert_eq!(block_parts(0, 2), vec![(0, 0), (0, 0)]);
        for trip in 0..40 {
            for devices in 1..6 {
                let parts = block_parts(trip, devices);
                assert_eq!(parts.iter().map(|p| p.1).sum::<i64>(), trip);
                let mut next = 0;
                for (first, count) in parts {
                    assert_eq!(first, next);
                    next += count;
                }
            }
        }
    }

    #[test]
    fn overlapping_writes_of_two_parts_are_found() {
        assert!(!parts_write_overlap(vec![(0, 8, 0), (8, 16, 1)]));
        assert!(parts_write_overlap(vec![(0, 9, 0), (8, 16, 1)]));
        // One part's own ranges may overlap.
        assert!(!parts_write_overlap(vec![(0, 8, 0), (4, 12, 0), (12, 20, 1)]));
        // A long range of part 0 spanning part 1's.
        assert!(parts_write_overlap(vec![(0, 100, 0), (10, 20, 0), (50, 60, 1)]));
        // Empty ranges write nothing.
        assert!(!parts_write_overlap(vec![(0, 8, 0), (4, 4, 1)]));
    }

}
