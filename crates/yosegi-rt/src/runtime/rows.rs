//! Tables of row pointers on the device (`double **a`, or an array of pointers): OpenACC's
//! deep copy of `copyin(a[0:n][0:m])`, and the binding of a kernel's row-table params.
//!
//! The table and each row are separate tracked objects with their own coherence state and
//! reference counts. A clause with rows ([`DataSection::rows`]) applies to each row it names
//! what a plain clause does to an array (`copyin` copies the row's section in, `copyout` copies
//! it back, `present` checks it, each raises or lowers the row's counts); the table itself is
//! only held (made present, counted like the rows), never copied either way: its device copy
//! holds device addresses, which must never reach the host's table, and the host's pointers
//! mean nothing on the device. After a clause's entry, and at every launch, the device table
//! holds the device address of every row it touched (the pointer is "attached"); coherence
//! counts those bytes as not holding the table's value, so it never copies them to the host
//! (what it may copy to the device over them, the next launch attaches again).
//!
//! A launch reads the rows it touches from the host's table (the host is the only writer of
//! pointers: kernels cannot store them), makes those rows current on the device for what it
//! reads, writes their device addresses into the table's device copy, and binds the param to
//! that copy. A table in the program's own device memory (`acc_malloc`, filled by the program
//! with device addresses) is bound as it is.

use super::*;

/// Bytes of one row pointer in a table.
const POINTER: u64 = 8;

/// Reads `count` row pointers starting at `first` of the host table at `table`.
///
/// # Safety
/// `table + first*8 .. table + (first+count)*8` is host memory of the program: a tracked
/// object, or the section a data clause or a launch named in one.
unsafe fn host_rows(table: u64, first: i64, count: usize) -> Vec<u64> {
    let start = table.wrapping_add_signed(first.wrapping_mul(POINTER as i64));
    // SAFETY: per the contract; unaligned tables are read bytewise.
    (0..count).map(|k| unsafe { std::ptr::read_unaligned((start + k as u64 * POINTER) as *const u64) }).collect()
}

/// What one row of a clause's table is: its index, and the bytes the clause names in its
/// tracked object (`None` for a null row pointer or an empty section).
struct ClauseRow {
    index: i64,
    pointer: u64,
    range: Option<ObjectRange>,
}

/// The row-table param of one launch, between the passes of `launch_kernel`.
pub(super) struct TablePlan {
    pub(super) param: u32,
    table: u64,
    first: i64,
    rows: Vec<u64>,
}

/// `a[0:n][0:m]` -> `a`, for naming rows (`a[3]`).
fn base_name(name: &str) -> &str {
    name.split('[').next().unwrap_or(name).trim()
}

fn contains(section: Section, index: i64) -> bool {
    match section {
        Section::None => false,
        Section::Whole => true,
        Section::Elements { lo, hi } => lo <= index && index < hi,
    }
}

impl Runtime {
    /// The rows a deep-copy clause names, registered as tracked objects.
    fn clause_rows(&mut self, region: &Region, section: &DataSection, args: &[YosegiArg], table: ObjectRange) -> Result<Vec<ClauseRow>, RuntimeError> {
        let rows = section.rows.as_ref().expect("a clause with rows");
        let ptr = args[section.base as usize].ptr as u64;
        let first = section.lo.map(|a| args[a as usize].i).unwrap_or(0);
        let count = (table.hi - table.lo) / POINTER;
        // SAFETY: `table` is the range `data_range` registered for exactly these pointers.
        let pointers = unsafe { host_rows(ptr, first, count as usize) };
        let row_lo = rows.lo.map(|a| args[a as usize].i).unwrap_or(0);
        let row_len = rows.len.map(|a| args[a as usize].i);
        // Absolute byte ranges first: registering a later row may grow the object of an
        // earlier one (rows overlapping in memory the runtime did not track).
        let mut absolute = Vec::with_capacity(pointers.len());
        for (k, &row) in pointers.iter().enumerate() {
            let index = first + k as i64;
            let name = format!("{}[{index}]", base_name(&section.name));
            let range = self.section_range(region, section.span, &name, row, row_lo, row_len, rows.elem_size)?;
            absolute.push((index, row, range.map(|r| (r.object + r.lo, r.object + r.hi))));
        }
        Ok(absolute
            .into_iter()
            .map(|(index, pointer, bytes)| {
                let range = bytes.and_then(|(lo, hi)| {
                    let object = self.registry.find(lo)?;
                    Some(ObjectRange { object, lo: lo - object, hi: hi - object })
                });
                ClauseRow { index, pointer, range }
            })
            .collect())
    }

    /// The entry actions of a deep-copy clause (see the module doc), and `update host/device`
    /// of one.
    pub(super) fn enter_rows(&mut self, region: &Region, section: &DataSection, args: &[YosegiArg], hold: Hold) -> Result<(), RuntimeError> {
        let device = self.current_device;
        let Some(table) = self.data_range(region, section, args)? else { return Ok(()) };
        let rows = self.clause_rows(region, section, args, table)?;
        // Registering the rows may have grown the object holding the table (a table among its
        // rows in memory the runtime did not track): find it again.
        let Some(table) = self.data_range(region, section, args)? else { return Ok(()) };
        if section.kind == DataClauseKind::Present {
            let absent = std::iter::once((None, Some(table)))
                .chain(rows.iter().map(|r| (Some(r.index), r.range)))
                .find(|(_, range)| range.is_some_and(|r| !self.registry.get(r.object).is_some_and(|o| o.copies.is_present(device))));
            if let Some((index, _)) = absent {
                let what = match index {
                    None => format!("the pointer table of `{}`", section.name),
                    Some(i) => format!("row `{}[{i}]` of `{}`", base_name(&section.name), section.name),
                };
                return Err(RuntimeError::fault(
                    Diagnostic::error(section.span, format!("present clause: {what} is not on the device"))
                        .with_help("put the rows on the device first (an enclosing `data` region or `enter data copyin(a[0:n][0:m])`), or use `copyin`/`copy` instead of `present`"),
                ));
            }
        }
        let holds = matches!(
            section.kind,
            DataClauseKind::Copy | DataClauseKind::CopyIn | DataClauseKind::CopyOut | DataClauseKind::Create | DataClauseKind::Present
        );
        for row in &rows {
            let Some(range) = row.range else { continue };
            let Some((copies, mut t)) = self.transfer_for(range.object) else { continue };
            copies.enter_clause(section.kind, section.zero, device, hold, range.lo, range.hi, &mut t);
        }
        if holds && let Some((copies, mut t)) = self.transfer_for(table.object) {
            copies.acquire(device, hold, &mut t);
        }
        if holds {
            let attached: Vec<(i64, Option<(u64, u64)>)> =
                rows.iter().map(|r| (r.index, r.range.map(|range| (r.pointer, range.object)))).collect();
            let first = rows.first().map_or(0, |r| r.index);
            self.attach_rows(table, first, &attached);
        }
        Ok(())
    }

    /// The exit actions of a deep-copy clause: the rows' data back for `copy`/`copyout`, then
    /// every count lowered (the table's last, so it outlives its rows).
    pub(super) fn exit_rows(
        &mut self,
        region: &Region,
        section: &DataSection,
        args: &[YosegiArg],
        hold: Hold,
        finalize: bool,
    ) -> Result<(), RuntimeError> {
        let device = self.current_device;
        let Some(table) = self.data_range(region, section, args)? else { return Ok(()) };
        let rows = self.clause_rows(region, section, args, table)?;
        let Some(table) = self.data_range(region, section, args)? else { return Ok(()) };
        for row in rows.iter().rev() {
            let Some(range) = row.range else { continue };
            let Some((copies, mut t)) = self.transfer_for(range.object) else { continue };
            if copies.exit_clause(section.kind, device, hold, finalize, range.lo, range.hi, &mut t) {
                self.after_release(range.object, device, false);
            }
        }
        let releases = matches!(
            section.kind,
            DataClauseKind::Copy
                | DataClauseKind::CopyIn
                | DataClauseKind::CopyOut
                | DataClauseKind::Create
                | DataClauseKind::Present
                | DataClauseKind::Delete
        );
        if releases
            && let Some((copies, _)) = self.transfer_for(table.object)
            && copies.release(device, hold, finalize)
        {
            self.after_release(table.object, device, false);
        }
        self.trim_device_caches();
        Ok(())
    }

    /// Writes, for each row `(index, Some((row pointer, start of the object holding the row)))`
    /// of the table range `table` (whose first pointer is row `first`), the device address the
    /// pointer has in the object's device copy into the table's device copy; rows without a
    /// device copy, and `None` rows, get 0. Nothing when the table has no device copy. (The
    /// object may start after the pointer when the row's first elements are never used.)
    fn attach_rows(&mut self, table: ObjectRange, first: i64, rows: &[(i64, Option<(u64, u64)>)]) {
        let device = self.current_device;
        let Some((table_alloc, table_base)) = self.registry.get(table.object).and_then(|o| o.copies.placement(device)) else {
            return;
        };
        let mut entries = vec![0u8; rows.len() * POINTER as usize];
        for &(index, row) in rows {
            let Some((pointer, start)) = row else { continue };
            let Some((alloc, base)) = self.registry.get(start).and_then(|o| o.copies.placement(device)) else { continue };
            let address = self.devices[device].address(alloc).wrapping_add(base).wrapping_add(pointer.wrapping_sub(start));
            let at = (index - first) as usize * POINTER as usize;
            if let Some(slot) = entries.get_mut(at..at + POINTER as usize) {
                slot.copy_from_slice(&address.to_le_bytes());
            }
        }
        if !entries.is_empty() {
            // Coherence must never take these bytes for the table's value (and copy device
            // addresses over the host's pointers).
            if let Some((copies, mut t)) = self.transfer_for(table.object) {
                copies.device_overwrote(device, table.lo, table.lo + entries.len() as u64, &mut t);
            }
            self.devices[device].copy_to_device(table_alloc, table_base + table.lo, &entries);
            self.stats.record_to_device(device, entries.len() as u64);
        }
    }

    /// Launch pass 1 for a row-table param: registers the table range and every row the
    /// launch may touch as tracked objects. `None` when the launch touches no row, or the table
    /// is the program's own device memory.
    pub(super) fn plan_table(
        &mut self,
        kernel: &Kernel,
        param: u32,
        ptr: u64,
        sections: &ParamSections,
    ) -> Result<Option<TablePlan>, RuntimeError> {
        let device = self.current_device;
        let Some(rows) = sections.rows else { return Ok(None) };
        let name = &kernel.params[param as usize].name;
        let touched = rows.read.hull(rows.write);
        if ptr == 0 || matches!(touched, Section::None) || matches!(touched, Section::Elements { lo, hi } if hi <= lo) {
            return Ok(None);
        }
        if self.registry.find(ptr).is_none() && self.api.is_raw_address(device, ptr) {
            return Ok(None);
        }
        let cannot_tell = |what: String| {
            RuntimeError::unsupported(
                Diagnostic::error(irregular_access_span(kernel, param), format!("cannot tell the extent of {what}, which kernel `{}` indexes irregularly", kernel.name))
                    .with_help(format!("add a data clause such as copyin({name}[0:n][0:m])")),
            )
        };
        // The rows of an exact object are clamped to it: the sections may over-approximate (a
        // guarded `a[i+1][j]`), and reading pointers past the table could fault on the host.
        let (first, last) = match (touched, self.exact_object_at(ptr).or_else(|| self.registry.find(ptr))) {
            (Section::Elements { lo, hi }, None) => {
                let lo_byte = ptr.wrapping_add_signed(lo.wrapping_mul(POINTER as i64));
                let hi_byte = ptr.wrapping_add_signed(hi.wrapping_mul(POINTER as i64));
                self.ensure_object(lo_byte, hi_byte, name, Origin::LaunchExtent, kernel.span)?;
                (lo, hi)
            }
            (Section::Whole, None) => return Err(cannot_tell(format!("the pointer table `{name}`"))),
            (Section::None, None) => return Ok(None),
            (section, Some(start)) => {
                let object = self.registry.get(start).expect("found");
                let lowest = -(((ptr - object.start) / POINTER) as i64);
                let highest = ((object.end() - ptr) / POINTER) as i64;
                match section {
                    Section::Elements { lo, hi } if !object.origin.is_exact() => {
                        let lo_byte = ptr.wrapping_add_signed(lo.wrapping_mul(POINTER as i64));
                        let hi_byte = ptr.wrapping_add_signed(hi.wrapping_mul(POINTER as i64));
                        self.ensure_object(lo_byte, hi_byte, name, Origin::LaunchExtent, kernel.span)?;
                        (lo, hi)
                    }
                    Section::Elements { lo, hi } => (lo.max(lowest), hi.min(highest)),
                    _ => (lowest, highest),
                }
            }
        };
        if last <= first {
            return Ok(None);
        }
        // SAFETY: `ptr + first*8 .. ptr + last*8` lies in a tracked object (registered above).
        let pointers = unsafe { host_rows(ptr, first, (last - first) as usize) };
        let elem = match kernel.params[param as usize].kind {
            ParamKind::RowTable { elem, .. } => elem.size_bytes() as i64,
            _ => 1,
        };
        for (k, &row) in pointers.iter().enumerate() {
            let index = first + k as i64;
            if row == 0 || (!contains(rows.read, index) && !contains(rows.write, index)) || self.exact_object_at(row).is_some() {
                continue;
            }
            match sections.read.hull(sections.write) {
                Section::None => {}
                Section::Elements { lo, hi } if hi <= lo => {}
                Section::Whole => {
                    if self.registry.find(row).is_none() {
                        return Err(cannot_tell(format!("the row `{name}[{index}]`")));
                    }
                }
                Section::Elements { lo, hi } => {
                    let lo_byte = row.wrapping_add_signed(lo.wrapping_mul(elem));
                    let hi_byte = row.wrapping_add_signed(hi.wrapping_mul(elem));
                    self.ensure_object(lo_byte, hi_byte, &format!("{name}[{index}]"), Origin::LaunchExtent, kernel.span)?;
                }
            }
        }
        Ok(Some(TablePlan { param, table: ptr, first, rows: pointers }))
    }

    /// Launch pass 2 for a row-table param: makes the rows current on the device for what the
    /// launch reads, records what it writes, attaches the rows in the table's device copy and
    /// returns the table's object (what the param binds to).
    pub(super) fn bind_table(
        &mut self,
        kernel: &Kernel,
        plan: &TablePlan,
        sections: &ParamSections,
        launch: &mut LaunchFootprint,
    ) -> Option<u64> {
        let device = self.current_device;
        let rows = sections.rows?;
        let elem = match kernel.params[plan.param as usize].kind {
            ParamKind::RowTable { elem, .. } => elem.size_bytes() as i128,
            _ => 1,
        };
        let mut attached = Vec::with_capacity(plan.rows.len());
        for (k, &row) in plan.rows.iter().enumerate() {
            let index = plan.first + k as i64;
            let (reads, writes) = (contains(rows.read, index), contains(rows.write, index));
            if row == 0 || !(reads || writes) {
                attached.push((index, None));
                continue;
            }
            let Some(object) = self.object_reached(row, sections, elem) else {
                attached.push((index, None));
                continue;
            };
            let (copies, mut t) = self.transfer_for(object).expect("resolved in pass 1");
            let len = copies.len;
            let to_range = |s: Section| object_range(s, row, elem, object, len);
            copies.ensure_allocated(device, &mut t);
            let read = if reads { to_range(sections.read) } else { None };
            let write = if writes { to_range(sections.write) } else { None };
            if let Some((lo, hi)) = read {
                copies.make_device_valid(device, lo, hi, &mut t);
            }
            let absolute = |r: Option<(u64, u64)>| r.map(|(lo, hi)| (object + lo, object + hi)).filter(|(lo, hi)| lo < hi);
            launch.footprints.push(Footprint { param: plan.param, row: Some(index), base: row, read: absolute(read), write: absolute(write) });
            for (lo, hi) in [read, write].into_iter().flatten() {
                launch.bytes_moved += hi.saturating_sub(lo);
            }
            if let Some((lo, hi)) = write {
                launch.writes.push(ObjectRange { object, lo, hi });
            }
            attached.push((index, Some((row, object))));
        }
        let table = self.registry.find(plan.table.wrapping_add_signed(plan.first.wrapping_mul(POINTER as i64)))?;
        if let Some((copies, mut t)) = self.transfer_for(table) {
            copies.ensure_allocated(device, &mut t);
        }
        let lo = plan.table.wrapping_add_signed(plan.first.wrapping_mul(POINTER as i64)) - table;
        let count = plan.rows.len() as u64;
        self.attach_rows(ObjectRange { object: table, lo, hi: lo + count * POINTER }, plan.first, &attached);
        Some(table)
    }
}
