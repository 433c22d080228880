//! The launch of one kernel of a compute region: the objects its arrays reach settled first
//! (pass 1), then per part (one, or one per device when the launch is split: `distribute`) the
//! device's copies made current for what the part reads and the writes gathered (pass 2), the
//! overlap check between arrays that share memory, the chosen variant launched on each part's
//! device, and the results (writes marked, reductions folded, scalar outputs written back).

use crate::analysis::access::{IndexForm, ParamSections, Section, summarize};
use crate::diag::{Diagnostic, Span};
use crate::ir::{GridKernel, Handle, Kernel, Module, ParamKind, Region};

use super::abi::YosegiArg;
use super::device::DeviceParam;
use super::registry::Origin;
use super::{ObjectRange, Runtime, RuntimeError, distribute, trace, fold_reductions, host_format, param_value, rows, write_host_scalar};
use crate::ir::value;

/// The host memory one array of a launch reaches: array param `param`, or row `row` of row
/// table `param` (`a[3]`), with its base address and the absolute byte ranges it reads and
/// writes.
pub(super) struct Footprint {
    pub(super) param: u32,
    pub(super) row: Option<i64>,
    pub(super) base: u64,
    pub(super) read: Option<(u64, u64)>,
    pub(super) write: Option<(u64, u64)>,
}

/// What pass 2 prepared for one part of a launch: its footprint, and the object each array
/// arg (by region arg index) is bound to.
pub(super) struct PreparedPart {
    pub(super) launch: LaunchFootprint,
    pub(super) bound_objects: Vec<(u32, u64)>,
}

/// One part of a launch ready to start on its device.
struct PreparedLaunch {
    device: usize,
    /// Its first iteration along the partition (the order its reductions fold in).
    first: i64,
    params: Vec<DeviceParam>,
    footprint: LaunchFootprint,
}

/// A kernel started on its devices whose results are not read yet ([`Runtime::finish_kernel`]).
pub(super) struct StartedKernel<'m> {
    parts: Vec<StartedPart<'m>>,
}

impl StartedKernel<'_> {
    /// The region args the kernel's results are written to (reduction variables, scalar
    /// outputs).
    fn result_args(&self) -> Vec<u32> {
        let Some(part) = self.parts.first() else { return Vec::new() };
        part.grid.reductions.iter().map(|r| r.target_arg).chain(part.grid.scalar_outputs.iter().map(|&(_, a)| a)).collect()
    }
}

/// The variable `&name` (or `&(name)`, as the front end writes it) names, when a region arg
/// is the address of a plain variable.
fn plain_variable(c_expr: &str) -> Option<&str> {
    let mut name = c_expr.trim().strip_prefix('&')?.trim();
    while let Some(inner) = name.strip_prefix('(').and_then(|n| n.strip_suffix(')')) {
        name = inner.trim();
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(name)
}

/// Whether `text` mentions `name` as a whole identifier.
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        let part_of_name = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !part_of_name(before) && !part_of_name(after)
    })
}

/// One part of a launch started on its device.
struct StartedPart<'m> {
    device: usize,
    first: i64,
    grid: &'m GridKernel,
    started: super::device::StartedLaunch,
    elapsed: std::time::Duration,
    footprint: LaunchFootprint,
}

/// What pass 2 of a launch gathers: the arrays' footprints (for the overlap check), the ranges
/// the launch writes, and the bytes it must move (for `--stats` bandwidth).
#[derive(Default)]
pub(super) struct LaunchFootprint {
    pub(super) footprints: Vec<Footprint>,
    pub(super) writes: Vec<ObjectRange>,
    pub(super) bytes_moved: u64,
}

impl LaunchFootprint {
    /// The byte ranges the launch reads, and those it writes.
    pub(super) fn ranges(&self) -> (Vec<(u64, u64)>, Vec<(u64, u64)>) {
        (self.footprints.iter().filter_map(|f| f.read).collect(), self.footprints.iter().filter_map(|f| f.write).collect())
    }
}

/// Section `s` of an array at `base` (elements of `elem` bytes) as a byte range of the object
/// at `object`, `len` bytes long, clamped to it.
pub(super) fn object_range(s: Section, base: u64, elem: i128, object: u64, len: u64) -> Option<(u64, u64)> {
    let offset = |element: i64| (base as i128 + element as i128 * elem - object as i128).clamp(0, len as i128) as u64;
    match s {
        Section::None => None,
        Section::Whole => Some((0, len)),
        Section::Elements { lo, hi } => Some((offset(lo), offset(hi))),
    }
}

/// Two arrays of one launch whose memory overlaps, one of them written there through a
/// different base address (`copy(p[0:n], q[0:n-1])` with `q = p + 1`, or two rows of a table
/// that overlap): the kernel was compiled as if they were distinct, so its iterations may read
/// what others write, and the answer would depend on their order. The launch stops with the
/// names and the kernel's line. Arrays with the same base address are one array under two
/// names; the loop's own independence covers them. The ranges are sorted, so a launch with
/// many rows costs n log n, not a test per pair.
pub(super) fn check_overlaps(kernel: &Kernel, footprints: &[Footprint]) -> Result<(), RuntimeError> {
    // (lo, hi, footprint, written)
    let mut ranges: Vec<(u64, u64, usize, bool)> = Vec::new();
    for (i, f) in footprints.iter().enumerate() {
        ranges.extend(f.read.map(|(lo, hi)| (lo, hi, i, false)));
        ranges.extend(f.write.map(|(lo, hi)| (lo, hi, i, true)));
    }
    ranges.sort_unstable();
    // The pair reported is the first (writer, other) in footprint order, whatever the sort.
    let mut worst: Option<(usize, usize)> = None;
    for (k, &(_, hi, i, i_writes)) in ranges.iter().enumerate() {
        for &(lo_j, _, j, j_writes) in &ranges[k + 1..] {
            if lo_j >= hi {
                break;
            }
            if i == j || footprints[i].base == footprints[j].base {
                continue;
            }
            for (w, o, writes) in [(i, j, i_writes), (j, i, j_writes)] {
                if writes && worst.is_none_or(|best| (w, o) < best) {
                    worst = Some((w, o));
                }
            }
        }
    }
    let Some((w, o)) = worst else { return Ok(()) };
    let name = |f: &Footprint| {
        let array = &kernel.params[f.param as usize].name;
        f.row.map_or_else(|| array.clone(), |row| format!("{array}[{row}]"))
    };
    let (w, o) = (name(&footprints[w]), name(&footprints[o]));
    Err(RuntimeError::unsupported(
        Diagnostic::error(
            kernel.span,
            format!(
                "kernel `{}` writes `{w}` where it also accesses `{o}`: the two arrays share memory, so the iterations of the loop may depend on each other",
                kernel.name
            ),
        )
        .with_help(format!("make `{w}` and `{o}` point to separate arrays, or run this loop sequentially (`#pragma acc loop seq`)")),
    ))
}


impl Runtime {
    // -----------------------------------------------------------------------------------------
    // Launches

    /// Launches one kernel of a compute region and waits for its results.
    pub(super) fn launch_kernel(&mut self, region: &Region, kernel_handle: Handle<Kernel>, args: &[YosegiArg]) -> Result<(), RuntimeError> {
        let module = self.module.clone();
        let started = self.start_kernel(&module, region, kernel_handle, args)?;
        self.finish_kernel(region, started, args)
    }

    /// Starts one kernel of a compute region on its devices: its parts prepared and launched,
    /// what they write marked as theirs; the results (reductions, scalar outputs) are read by
    /// [`Runtime::finish_kernel`], which may come after the next kernel started.
    pub(super) fn start_kernel<'m>(&mut self, module: &'m Module, region: &Region, kernel_handle: Handle<Kernel>, args: &[YosegiArg]) -> Result<StartedKernel<'m>, RuntimeError> {
        let prepared = self.clock();
        let traced = trace::now();
        let kernel = &module.kernels[kernel_handle];
        let Some(grid_handle) = module.grid_of(kernel_handle) else {
            return Err(RuntimeError::unsupported(
                Diagnostic::error(kernel.span, format!("kernel `{}` was not mapped to a grid kernel", kernel.name))
                    .with_help("this is a compiler bug: the mapping pass must run before the program runs"),
            ));
        };
        let grid = &module.grid_kernels[grid_handle];
        let device = self.current_device;
        // The whole iteration space: a partitioned kernel's `first` and `count` cover its dims.
        // The host's `args` serve everything else (pointers, reduction targets).
        let (whole, kernel_params) = distribute::whole_launch(region, kernel, args)?;

        // Pass 1 (`settle_objects`): every array param's object, before any range is made valid.
        let sections = self.sections_cache.sections(kernel_handle, kernel, &kernel_params);
        self.record_runtime_call("region: launch preparation: access sections", prepared);
        let part = self.clock();
        let (tables, raw_memory) = self.settle_objects(kernel, &sections, args)?;
        let reaches_addresses = self.kernel_reaches_addresses[kernel_handle.index()];

        // Which devices run which part of the space (one part on the current device unless
        // the kernel is split: `distribute`).
        let splittable = tables.is_empty() && !reaches_addresses && !raw_memory;
        let parts = if splittable { self.plan_parts(region, kernel_handle, kernel, &whole, &sections) } else { None };
        if splittable && self.model.is_some() && self.config.stats != super::StatsMode::Off {
            self.record_split_shape(region, kernel_handle, kernel, &whole, &sections);
        }
        let parts = parts.unwrap_or_else(|| vec![distribute::Part { device, args: whole, sections: sections.clone(), along: None }]);

        // Memory at addresses the kernel computes may be any object's device copy: every one
        // is made current first (before the rows of pointer tables are attached below) and
        // counted as written after.
        let address_writes = if reaches_addresses { self.device_copies_made_current() } else { Vec::new() };
        self.record_runtime_call("region: launch preparation: objects", part);

        // Pass 2, part by part: each device's copies made current for what its part reads.
        // Every part's copies are asked for before any part is launched: a copy between
        // devices waits for the work already on both of them, so a copy made after a launch
        // would wait for that launch and run the parts one after the other. A part that lacks
        // only its halo is cut (`distribute::overlap_split`): its interior, which needs no
        // copy, is prepared with the whole parts; the boundaries after them all, with their
        // devices' copies deferred to run beside the interiors' launches. (Copies made in
        // order come first so that none reads bytes a deferred copy has not brought yet.)
        let mut early = Vec::new();
        let mut late = Vec::with_capacity(parts.len());
        let mut boundaries = Vec::new();
        for (n, part) in parts.iter().enumerate() {
            let prepared_part = self.clock();
            match if parts.len() > 1 { self.overlap_split(region, kernel_handle, kernel, part) } else { None } {
                Some(overlap) => {
                    early.push(self.prepare_launch(region, grid, kernel, &overlap.interior, &[], &[])?);
                    boundaries.push(overlap.boundary);
                }
                None => {
                    let (tables, address_writes): (&[rows::TablePlan], &[ObjectRange]) = if n == 0 { (&tables, &address_writes) } else { (&[], &[]) };
                    late.push(self.prepare_launch(region, grid, kernel, part, tables, address_writes)?);
                }
            }
            self.record_runtime_call("region: launch preparation: device copies current", prepared_part);
        }
        let mut exchanging = Vec::with_capacity(boundaries.len());
        let deferred = self.prepare_boundaries(region, grid, kernel, boundaries, &mut late, &mut exchanging);
        self.record_runtime_call("region: launch preparation", prepared);

        // The interiors start first; then each exchanging device's later work (its boundary)
        // waits for the copies it asked for, and so does every other device's (a source's
        // later launches may overwrite what is being copied); then the rest. The parts'
        // results are read once every part is started, so that the devices run together.
        trace::host(|| format!("prepare {}", kernel.name), traced);
        let traced = trace::now();
        let mut started_parts = Vec::with_capacity(early.len() + late.len());
        let started_early = if deferred.is_ok() { self.start_parts(module, kernel_handle, early, &mut started_parts) } else { Ok(()) };
        for &device in &exchanging {
            if let Some(mark) = self.devices[device].join_copies() {
                for other in (0..self.devices.len()).filter(|&d| d != device) {
                    self.devices[other].wait_for_mark(mark);
                }
                self.devices[device].drop_mark(mark);
            }
        }
        deferred?;
        started_early?;
        self.start_parts(module, kernel_handle, late, &mut started_parts)?;
        trace::host(|| format!("start {}", kernel.name), traced);
        // Partial results fold in iteration order within a device, whatever order started them.
        started_parts.sort_by_key(|p| (p.device, p.first));
        // What the parts write is theirs from now on: any later copy or read of it waits for
        // the launches (copies between devices and host reads are ordered after them).
        for part in &started_parts {
            self.mark_written(part.device, &part.footprint.writes);
        }
        Ok(StartedKernel { parts: started_parts })
    }

    /// Ranges a launch on `device` writes are that device's from now on.
    pub(super) fn mark_written(&mut self, device: usize, writes: &[ObjectRange]) {
        if self.config.stats != super::StatsMode::Off
            && let Some(model) = &mut self.model
        {
            writes.iter().for_each(|w| model.note_written(w.object));
        }
        for w in writes {
            if let Some(object) = self.registry.get_mut(w.object) {
                object.copies.device_wrote(device, w.lo, w.hi);
            }
        }
    }

    /// Whether `next` may start before `earlier`'s results are read: each result goes to a
    /// plain variable of the host (`&x`: no array element, no member, nothing the runtime
    /// tracks as device data) that `next` does not mention among its args. A kernel that
    /// reads the value, or data it may lie in, starts after it.
    pub(super) fn may_start_before_results(&self, region: &Region, earlier: &StartedKernel<'_>, next: &Kernel, args: &[YosegiArg]) -> bool {
        earlier.result_args().into_iter().all(|target| {
            let Some(name) = region.args.get(target as usize).and_then(|a| plain_variable(&a.c_expr)) else { return false };
            self.registry.find(args[target as usize].ptr as u64).is_none()
                && next.params.iter().all(|p| p.arg != target && region.args.get(p.arg as usize).is_some_and(|a| !mentions(&a.c_expr, name)))
        })
    }

    /// Waits for a started kernel's parts: their stats, the reductions folded into the host's
    /// variables, the scalar outputs written back.
    pub(super) fn finish_kernel(&mut self, region: &Region, started: StartedKernel<'_>, args: &[YosegiArg]) -> Result<(), RuntimeError> {
        let traced = trace::now();
        let name = traced.and(started.parts.first()).map(|p| p.grid.name.clone()).unwrap_or_default();
        let finished = self.finish_parts(region, started, args);
        trace::host(|| format!("results {name}"), traced);
        finished
    }

    fn finish_parts(&mut self, region: &Region, started: StartedKernel<'_>, args: &[YosegiArg]) -> Result<(), RuntimeError> {
        let mut launched = Vec::with_capacity(started.parts.len());
        for StartedPart { device, grid, started, elapsed, footprint, .. } in started.parts {
            let outcome = self.devices[device].finish_launch(started).map_err(|f| self.fault_error(f))?;
            self.stats.record_launch(&grid.name, elapsed, &outcome.counters);
            self.stats.record_bytes_moved(&grid.name, footprint.bytes_moved);
            if self.devices.len() > 1 {
                self.stats.record_device_launch(device, &outcome.counters);
            }
            launched.push((grid, outcome, device));
        }
        let Some(&(grid, ..)) = launched.first() else { return Ok(()) };
        // In a job of several ranks each part's results are known on its device's rank only.
        if (!grid.reductions.is_empty() || !grid.scalar_outputs.is_empty())
            && let Some(job) = super::ranks::current()
        {
            let owners: Vec<usize> = launched.iter().map(|&(_, _, d)| self.devices[d].rank().unwrap_or(job.rank)).collect();
            let mut outcomes: Vec<&mut super::device::LaunchOutcome> = launched.iter_mut().map(|(_, o, _)| o).collect();
            job.share_results(&owners, &mut outcomes, &grid.name);
        }
        let mut partials: Vec<Vec<u64>> = vec![Vec::new(); grid.reductions.len()];
        for (_, outcome, _) in &launched {
            for (all, mine) in partials.iter_mut().zip(&outcome.partials) {
                all.extend_from_slice(mine);
            }
        }
        fold_reductions(region, &grid.reductions, &partials, args);
        let outcome = &launched[0].1;
        for ((local, arg), &raw) in grid.scalar_outputs.iter().zip(&outcome.scalar_outputs) {
            let target = args[*arg as usize].ptr as *mut u8;
            if !target.is_null() {
                let ty = grid.body.locals[*local].ty;
                let format = host_format(region, *arg, ty);
                // SAFETY: the host passed `&x` of a live scalar of this format (HostArgKind::ScalarOut).
                unsafe { write_host_scalar(target, format, value::cast(ty, format, raw)) };
            }
        }
        Ok(())
    }

    /// What a launch on `device` reading `reads` and writing `writes` moves, `bytes` in all;
    /// with the model on, the launch is remembered for what the launches after it find in the
    /// L2 cache, after the copies to the devices since the launch before.
    pub(super) fn note_traffic(&mut self, device: usize, reads: &[(u64, u64)], writes: &[(u64, u64)], bytes: u64) -> super::model::Traffic {
        let uploads = std::mem::take(&mut self.uploads);
        match self.model.as_mut() {
            Some(model) => {
                for (to, lo, hi) in uploads {
                    model.note_upload(to, lo, hi);
                }
                model.note_launch(device, reads, writes, bytes)
            }
            None => super::model::Traffic { bytes, resident: None },
        }
    }

    /// Pass 2 for one part ([`Runtime::prepare_part`]), the overlap check, and the grid
    /// kernel's params bound on the part's device. `tables` and `address_writes` belong to the
    /// part that binds the launch's pointer tables (the first).
    fn prepare_launch(&mut self, region: &Region, grid: &GridKernel, kernel: &Kernel, part: &distribute::Part, tables: &[rows::TablePlan], address_writes: &[ObjectRange]) -> Result<PreparedLaunch, RuntimeError> {
        let mut footprint = self.prepare_part(kernel, part, tables)?;
        check_overlaps(kernel, &footprint.launch.footprints)?;
        if !tables.is_empty() || !address_writes.is_empty() {
            let tables: Vec<u64> = tables.iter().filter_map(|plan| footprint.bound_objects.iter().find(|(arg, _)| *arg == kernel.params[plan.param as usize].arg)).map(|&(_, o)| o).collect();
            footprint.launch.writes.extend(address_writes.iter().copied().filter(|w| !tables.contains(&w.object)));
        }
        let params = self.device_params(region, grid, &part.args, &footprint.bound_objects, part.device);
        Ok(PreparedLaunch { device: part.device, first: part.first(kernel), params, footprint: footprint.launch })
    }

    /// Prepares the boundary blocks of the cut parts (one list per part, of one device each),
    /// each device's copies deferred first; the devices that defer go to `exchanging` (to
    /// join, whatever this returns).
    fn prepare_boundaries(&mut self, region: &Region, grid: &GridKernel, kernel: &Kernel, boundaries: Vec<Vec<distribute::Part>>, late: &mut Vec<PreparedLaunch>, exchanging: &mut Vec<usize>) -> Result<(), RuntimeError> {
        // Every exchanging device defers its copies before any boundary's copy is asked for:
        // in a job of ranks a halo sent from this rank's device to another's is one of its
        // copies too, and goes beside its interior only once its own copies are deferred.
        for boundary in &boundaries {
            let Some(device) = boundary.first().map(|piece| piece.device) else { continue };
            self.devices[device].defer_copies();
            exchanging.push(device);
            self.stats.overlapped_parts += 1;
        }
        for boundary in boundaries {
            for piece in &boundary {
                late.push(self.prepare_launch(region, grid, kernel, piece, &[], &[])?);
            }
        }
        Ok(())
    }

    /// Starts the prepared launches in order, appending them to `started` (also those started
    /// before a failure, so that their device work is accounted for).
    fn start_parts<'m>(&mut self, module: &'m Module, kernel: Handle<Kernel>, prepared: Vec<PreparedLaunch>, started: &mut Vec<StartedPart<'m>>) -> Result<(), RuntimeError> {
        for PreparedLaunch { device, first, params, footprint } in prepared {
            // The variant that ran owns the reductions and scalar outputs.
            // The ranges feed only the model's L2 history: two vectors a launch spared without it.
            let (reads, writes) = if self.model.is_some() { footprint.ranges() } else { (Vec::new(), Vec::new()) };
            let traffic = self.note_traffic(device, &reads, &writes, footprint.bytes_moved);
            let (grid, launch, elapsed) = self.launch_chosen_variant(module, kernel, params, device, traffic)?;
            started.push(StartedPart { device, first, grid, started: launch, elapsed, footprint });
        }
        Ok(())
    }

    /// Launch pass 1: every array param's object, created or grown to cover its access hull.
    /// All objects are settled before any range is made valid, because growing one for a later
    /// param (two params into one array) replaces an object an earlier param resolved. Returns
    /// the pointer tables to bind and whether some array is the program's own device memory.
    pub(super) fn settle_objects(&mut self, kernel: &Kernel, sections: &[ParamSections], args: &[YosegiArg]) -> Result<(Vec<rows::TablePlan>, bool), RuntimeError> {
        let device = self.current_device;
        let mut tables = Vec::new();
        let mut raw_memory = false;
        for sections in sections {
            let param = &kernel.params[sections.param as usize];
            if let ParamKind::RowTable { .. } = param.kind {
                let ptr = args[param.arg as usize].ptr as u64;
                tables.extend(self.plan_table(kernel, sections.param, ptr, sections)?);
                continue;
            }
            let ParamKind::Array { elem, .. } = &param.kind else { continue };
            let ptr = args[param.arg as usize].ptr as u64;
            match sections.read.hull(sections.write) {
                Section::None => {}
                Section::Elements { lo, hi } if hi <= lo => {}
                _ if self.exact_object_at(ptr).is_some() => {}
                // The program's own device memory (`acc_malloc`): bound as it is, no host side.
                _ if self.registry.find(ptr).is_none() && self.api.is_raw_address(device, ptr) => raw_memory = true,
                Section::Whole => {
                    if self.registry.find(ptr).is_none() {
                        return Err(RuntimeError::unsupported(
                            Diagnostic::error(
                                irregular_access_span(kernel, sections.param),
                                format!(
                                    "cannot tell the extent of `{}`, which kernel `{}` indexes irregularly",
                                    param.name, kernel.name
                                ),
                            )
                            .with_help(format!(
                                "add a data clause such as {}({}[0:n])",
                                if sections.write == Section::None { "copyin" } else { "copy" },
                                param.name
                            )),
                        ));
                    }
                }
                Section::Elements { lo, hi } => {
                    let elem = elem.size_bytes() as i64;
                    let lo_byte = ptr.wrapping_add_signed(lo.wrapping_mul(elem));
                    let hi_byte = ptr.wrapping_add_signed(hi.wrapping_mul(elem));
                    self.ensure_object(lo_byte, hi_byte, &param.name, Origin::LaunchExtent, kernel.span)?;
                }
            }
        }
        Ok((tables, raw_memory))
    }

    /// Launch pass 2 for one part: makes device `part.device`'s copies current for what the
    /// part reads; gathers what it writes, which object each array arg is bound to and the
    /// bytes it must move.
    pub(super) fn prepare_part(&mut self, kernel: &Kernel, part: &distribute::Part, tables: &[rows::TablePlan]) -> Result<PreparedPart, RuntimeError> {
        let device = part.device;
        let args = part.args.as_slice();
        let mut launch = LaunchFootprint::default();
        let mut bound_objects: Vec<(u32, u64)> = Vec::new();
        for plan in tables {
            let param = &kernel.params[plan.param as usize];
            let sections = part.sections.iter().find(|s| s.param == plan.param).expect("planned from these sections");
            if let Some(table) = self.bind_table(kernel, plan, sections, &mut launch) {
                bound_objects.push((param.arg, table));
            }
        }
        for sections in part.sections.iter() {
            let param = &kernel.params[sections.param as usize];
            let ParamKind::Array { elem, .. } = &param.kind else { continue };
            let ptr = args[param.arg as usize].ptr as u64;
            let elem = elem.size_bytes() as i128;
            let Some(object) = self.object_reached(ptr, sections, elem) else { continue };
            bound_objects.push((param.arg, object));
            let (copies, mut t) = self.transfer_for(object).expect("resolved in pass 1");
            let len = copies.len;
            let to_range = |s: Section| object_range(s, ptr, elem, object, len);
            copies.ensure_allocated(device, &mut t);
            let absolute = |r: Option<(u64, u64)>| r.map(|(lo, hi)| (object + lo, object + hi)).filter(|(lo, hi)| lo < hi);
            launch.footprints.push(Footprint {
                param: sections.param,
                row: None,
                base: ptr,
                read: absolute(to_range(sections.read)),
                write: absolute(to_range(sections.write)),
            });
            for (lo, hi) in [to_range(sections.read), to_range(sections.write)].into_iter().flatten() {
                launch.bytes_moved += hi.saturating_sub(lo);
            }
            if let Some((lo, hi)) = to_range(sections.read) {
                copies.make_device_valid(device, lo, hi, &mut t);
            }
            if let Some((lo, hi)) = to_range(sections.write) {
                launch.writes.push(ObjectRange { object, lo, hi });
            }
        }
        Ok(PreparedPart { launch, bound_objects })
    }

    /// The tracked object an array at `base` (elements of `elem` bytes) with `sections`
    /// reaches: the exact object at `base`, else the one holding the first element accessed;
    /// `None` when nothing is accessed or no object holds it. Within an exact object the
    /// sections are clamped to it ([`object_range`]): they may over-approximate (a guarded
    /// `a[i+1]`), and real out-of-bounds accesses fault in the kernel.
    pub(super) fn object_reached(&self, base: u64, sections: &ParamSections, elem: i128) -> Option<u64> {
        match sections.read.hull(sections.write) {
            Section::None => None,
            Section::Elements { lo, hi } if hi <= lo => None,
            _ if self.exact_object_at(base).is_some() => self.exact_object_at(base),
            Section::Whole => self.registry.find(base),
            Section::Elements { lo, .. } => self.registry.find(base.wrapping_add_signed((lo as i128 * elem) as i64)),
        }
    }

    /// Every object with a copy on the current device, that copy made current over the whole
    /// object (what a kernel accessing memory by computed addresses may reach).
    pub(super) fn device_copies_made_current(&mut self) -> Vec<ObjectRange> {
        let device = self.current_device;
        let mut ranges = Vec::new();
        for start in self.registry.starts_in_registration_order() {
            let Some((copies, mut t)) = self.transfer_for(start) else { continue };
            if !copies.has_device_copy(device) {
                continue;
            }
            let len = copies.len;
            copies.make_device_valid(device, 0, len, &mut t);
            ranges.push(ObjectRange { object: start, lo: 0, hi: len });
        }
        ranges
    }

    /// Binds the grid kernel's params: scalars by value, arrays to their object's device copy.
    pub(super) fn device_params(
        &mut self,
        region: &Region,
        grid: &GridKernel,
        args: &[YosegiArg],
        bound_objects: &[(u32, u64)],
        device: usize,
    ) -> Vec<DeviceParam> {
        let mut params = Vec::with_capacity(grid.params.len());
        for param in &grid.params {
            let value = param_value(region, param, args);
            // A row table binds like an array: to its table's device copy.
            if !param.kind.is_indexed() {
                params.push(DeviceParam::Value(value));
                continue;
            }
            let ptr = args[param.arg as usize].ptr as u64;
            let resolved = bound_objects.iter().find(|(arg, _)| *arg == param.arg).map(|&(_, object)| object);
            let object = resolved.or_else(|| self.registry.find(ptr)).or_else(|| {
                // A pointer one past its object's end (only negative offsets are accessed).
                ptr.checked_sub(1).and_then(|p| self.registry.find(p))
            });
            let bound = object.and_then(|start| {
                let (copies, mut t) = self.transfer_for(start)?;
                copies.ensure_allocated(device, &mut t);
                let (alloc, base) = copies.placement(device)?;
                Some(DeviceParam::Array { alloc, offset: ptr.wrapping_sub(start).wrapping_add(base) as i64 })
            });
            // `acc_malloc` memory (a `deviceptr` of the program's own device memory).
            let bound = bound.or_else(|| {
                let (alloc, offset) = self.api.raw_binding(device, ptr)?;
                Some(DeviceParam::Array { alloc, offset })
            });
            params.push(bound.unwrap_or_else(|| {
                let alloc = *self.empty_alloc.get_or_insert_with(|| self.devices[device].allocate(0));
                DeviceParam::Array { alloc, offset: 0 }
            }));
        }
        params
    }

    /// The Static/Malloc object containing `addr`.
    pub(super) fn exact_object_at(&self, addr: u64) -> Option<u64> {
        self.registry.find(addr).filter(|&s| self.registry.get(s).is_some_and(|o| o.origin.is_exact()))
    }

}

/// Where a kernel indexes array param `param` irregularly (the place an extent error points
/// at); the kernel itself when no single access is to blame.
pub(super) fn irregular_access_span(kernel: &Kernel, param: u32) -> Span {
    summarize(kernel)
        .of_param(param)
        .find(|access| access.indices.iter().any(|index| matches!(index, IndexForm::Irregular)))
        .map_or(kernel.span, |access| access.span)
}

#[cfg(test)]
mod tests {
    use super::{mentions, plain_variable};

    #[test]
    fn plain_variables_are_told_from_elements_and_members() {
        assert_eq!(plain_variable("&gosa"), Some("gosa"));
        assert_eq!(plain_variable(" & err_2 "), Some("err_2"));
        assert_eq!(plain_variable("&(gosa)"), Some("gosa"));
        assert_eq!(plain_variable("&((gosa))"), Some("gosa"));
        for other in ["&errors[k]", "&(errors[k])", "&s.sum", "&p->x", "gosa", "&", "&2x", "&(x", "&(a)+1"] {
            assert_eq!(plain_variable(other), None, "{other}");
        }
    }

    #[test]
    fn mentions_match_whole_identifiers_only() {
        assert!(mentions("gosa", "gosa"));
        assert!(mentions("&gosa", "gosa"));
        assert!(mentions("(float)gosa * 2", "gosa"));
        assert!(!mentions("gosa2", "gosa"));
        assert!(!mentions("my_gosa", "gosa"));
        assert!(!mentions("n", "gosa"));
    }
}
