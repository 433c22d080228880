//! The brief account: one line per compute loop and per data movement, in the shape users of
//! nvc's `-Minfo=accel` read (`jacobi.c:48: parallel loop over j (n - 2), i (n - 2): gangs x
//! 32x8 threads, A staged with halo 1 (variant chosen at run time)`, `jacobi.c:44: copy A in
//! once, before the loop at line 46, out once after it`). `yosegi cc -Minfo=accel` prints it
//! at compile time and `yosegi explain --brief` prints it on demand: this one renderer serves
//! both. It reads what [`super`]'s full account reads (the module's kernels, variants,
//! fusions, data clauses and implicit moves) and only says it shorter, with expressions
//! simplified ([`crate::ir::simplify`]); what only a run decides is said as such.

use std::collections::BTreeSet;

use super::host_code::HostCode;
use super::{ImplicitUse, clause_variable, data_move, enclosing_data_region, implicit_uses, location_of};
use crate::analysis::access::{self, IndexForm};
use crate::diag::{Severity, Span};
use crate::driver::CompiledProgram;
use crate::ir::simplify::trip_text;
use crate::ir::{DataClauseKind, DataSection, Handle, Kernel, LoopLevel, Module, Region, RegionKind, VariantKind};
use crate::opt::StagingMode;
use crate::runtime::variants;

/// The brief account of `program`: `file:line: what` lines in source order (empty when the
/// program offloads nothing).
pub fn brief(program: &CompiledProgram) -> String {
    let host = HostCode::of(&program.units);
    let mut lines: Vec<(Span, String)> = Vec::new();
    for (index, region) in program.module.regions.iter().enumerate() {
        let brief = Brief { program, host: &host, region, index };
        brief.region_lines(&mut lines);
    }
    host_constructs(program, &host, &mut lines);
    // Stable: a region's data lines (its directive's line) stay before its loops' lines.
    lines.sort_by_key(|(span, _)| (span.tu, span.lo));
    let mut out = String::new();
    for (span, text) in lines {
        out.push_str(&location_of(program, span));
        out.push_str(": ");
        out.push_str(&text);
        out.push('\n');
    }
    out
}

/// Compute constructs the front end kept on the host (they have no region), with the warning
/// that said why.
fn host_constructs(program: &CompiledProgram, host: &HostCode, lines: &mut Vec<(Span, String)>) {
    for construct in &host.constructs {
        if HostCode::offloaded(construct, &program.module.regions) {
            continue;
        }
        let why = program
            .warnings
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .find(|d| d.span.is_some_and(|s| s.tu == construct.span.tu && construct.span.lo <= s.lo && s.hi <= construct.span.hi))
            .map(|d| format!(": {}", d.message))
            .unwrap_or_default();
        lines.push((construct.span, format!("{}: runs on the host{why}", construct.name)));
    }
}

struct Brief<'a> {
    program: &'a CompiledProgram,
    host: &'a HostCode,
    region: &'a Region,
    /// The region's index in [`Module::regions`].
    index: usize,
}

impl Brief<'_> {
    fn module(&self) -> &Module {
        &self.program.module
    }

    fn line_of(&self, span: Span) -> u32 {
        self.program.sources.location(span).line
    }

    fn region_lines(&self, lines: &mut Vec<(Span, String)>) {
        let region = self.region;
        match &region.kind {
            RegionKind::Compute { kernels, data } => {
                self.data_lines(data, "", lines);
                self.implicit_lines(kernels, data, lines);
                for (n, &k) in kernels.iter().enumerate() {
                    let kernel = &self.module().kernels[k];
                    lines.push((kernel.span, self.kernel_line(k, n == 0)));
                }
            }
            RegionKind::Data { data } => self.data_lines(data, "", lines),
            RegionKind::EnterData { data } => self.data_lines(data, "enter data ", lines),
            RegionKind::ExitData { data, .. } => self.data_lines(data, "exit data ", lines),
            RegionKind::Update { data } => self.data_lines(data, "update ", lines),
            RegionKind::Wait | RegionKind::Runtime(_) => {}
        }
    }

    // ---------------------------------------------------------------------------------------
    // Compute loops

    fn kernel_line(&self, handle: Handle<Kernel>, first: bool) -> String {
        let module = self.module();
        let kernel = &module.kernels[handle];
        let construct = self.host.construct_around(kernel.span);
        let mut head = construct.map_or("compute", |c| c.name).to_string();
        if !head.ends_with("loop") && !kernel.space.is_empty() {
            head.push_str(" loop");
        }
        if let Some(n) = construct.and_then(|c| c.collapse).filter(|&n| n > 1) {
            head.push_str(&format!(" collapse({n})"));
        }
        let mut parts: Vec<String> = Vec::new();
        if let Some(reason) = &kernel.sequential_reason {
            parts.push(format!("runs sequentially on one GPU thread: {}", short_reason(&reason.message)));
        } else if let Some(explicit) = &kernel.explicit_grid {
            let [x, y, z] = explicit.block;
            parts.push(format!("written per thread, blocks of {x}x{y}x{z} threads"));
        } else if kernel.space.is_empty() {
            parts.push("runs once, on one GPU thread".to_string());
        } else {
            let dims: Vec<String> = kernel
                .space
                .iter()
                .enumerate()
                .map(|(n, dim)| {
                    let trip = kernel.partitions.iter().find(|p| p.dim as usize == n).map_or(dim.trip_count, |p| p.trip);
                    let level = match dim.level {
                        LoopLevel::Auto => String::new(),
                        level => format!(", {}", super::level_text(level)),
                    };
                    format!("{} ({}{level})", kernel.body.locals[dim.var].name, trip_text(&kernel.body, &kernel.params, trip))
                })
                .collect();
            head.push_str(&format!(" over {}", dims.join(", ")));
            if let Some(grid) = module.grid_of(handle).map(|g| &module.grid_kernels[g]) {
                let block: Vec<String> = grid.launch.block.iter().filter(|&&b| b > 1).map(u32::to_string).collect();
                let block = if block.is_empty() { "1".to_string() } else { block.join("x") };
                parts.push(format!("gangs x {block} threads"));
            }
        }
        for reason in &kernel.inner_sequential {
            parts.push(format!("{} sequential in each thread", short_reason(&reason.message)));
        }
        let in_thread = super::in_thread_loops(kernel);
        if !in_thread.is_empty() && !kernel.space.is_empty() {
            parts.push(format!("{} in order in each thread", in_thread.join(", ")));
        }
        // `reduction(+:a,b)`, one per operator, as the clause is written.
        let mut reductions: Vec<(&str, Vec<&str>)> = Vec::new();
        for r in kernel.reductions.iter().filter(|r| r.part != Some(crate::ir::ComplexPart::Imag)) {
            let name = kernel.body.locals[r.local].name.as_str();
            let name = name.strip_suffix(".re").unwrap_or(name);
            match reductions.iter_mut().find(|(op, _)| *op == r.op.symbol()) {
                Some((_, names)) => names.push(name),
                None => reductions.push((r.op.symbol(), vec![name])),
            }
        }
        for (op, names) in reductions {
            parts.push(format!("reduction({op}:{})", names.join(",")));
        }
        if let Some(staged) = self.staged_text(handle) {
            parts.push(staged);
        }
        if let Some(fused) = self.fused_text(handle) {
            parts.push(fused);
        }
        if first {
            parts.extend(self.step_text());
            if let Some(arg) = self.region.if_arg.and_then(|i| self.region.args.get(i as usize)) {
                parts.push(format!("on the host when `{}` is false", arg.c_expr));
            }
        }
        if parts.is_empty() { head } else { format!("{head}: {}", parts.join(", ")) }
    }

    /// `A staged with halo 1 (variant chosen at run time)`: the arrays the kernel's usable
    /// staged variants read through shared-memory tiles.
    fn staged_text(&self, handle: Handle<Kernel>) -> Option<String> {
        let module = self.module();
        let kernel = &module.kernels[handle];
        let mut names: Vec<String> = Vec::new();
        for grid in module.variants_of(handle).into_iter().map(|v| &module.grid_kernels[v]) {
            if grid.variant.kind != VariantKind::Staged || grid.shared_memory_bytes() > variants::SHARED_MEMORY_LIMIT {
                continue;
            }
            for p in grid.variant.staged_params.iter().filter_map(|&p| grid.params.get(p as usize)) {
                if !names.contains(&p.name) {
                    names.push(p.name.clone());
                }
            }
        }
        if names.is_empty() {
            return None;
        }
        let summary = access::summarize(kernel);
        let staged: Vec<String> = names
            .iter()
            .map(|name| {
                let halo = kernel.params.iter().position(|p| &p.name == name).and_then(|index| halo(&summary, index as u32));
                match halo {
                    Some(h) if h > 0 => format!("{name} staged with halo {h}"),
                    _ => format!("{name} staged"),
                }
            })
            .collect();
        let choice = match self.program.staging {
            StagingMode::Auto => " (variant chosen at run time)",
            StagingMode::Force => " (staged variant runs where usable)",
            StagingMode::Off => "",
        };
        Some(format!("{}{choice}", staged.join(", ")))
    }

    /// `fused with the loop at line 56 (chosen at run time)`.
    fn fused_text(&self, handle: Handle<Kernel>) -> Option<String> {
        let module = self.module();
        let fusion = module.fusions.iter().find(|f| f.region as usize == self.index && f.members.contains(&handle))?;
        let others: Vec<String> =
            fusion.members.iter().filter(|&&m| m != handle).map(|&m| self.line_of(module.kernels[m].span).to_string()).collect();
        let plural = if others.len() == 1 { "" } else { "s" };
        let choice = if fusion.forced { "" } else { " (chosen at run time)" };
        Some(format!("fused with the loop{plural} at line{plural} {}{choice}", others.join(", ")))
    }

    /// `up to 4 steps of the loop over `it` in one launch (chosen at run time)`.
    fn step_text(&self) -> Option<String> {
        let module = self.module();
        let step_loop = module.step_loops.iter().find(|l| l.region as usize == self.index)?;
        let fusions: Vec<_> = module.step_fusions.iter().filter(|f| f.region as usize == self.index).collect();
        let steps = fusions.iter().map(|f| f.steps).max()?;
        let choice = if fusions.iter().any(|f| f.forced) { "" } else { " (chosen at run time)" };
        Some(format!("up to {steps} steps of the loop over `{}` in one launch{choice}", step_loop.counter))
    }

    // ---------------------------------------------------------------------------------------
    // Data movements

    /// Where the data moves that a clause of this region moves in (`entry`) or out.
    fn moment(&self, entry: bool) -> String {
        let region = self.region;
        let around = self.host.loop_around(region.span).map(|l| self.line_of(l));
        match (&region.kind, around) {
            (RegionKind::Data { .. }, around) => {
                let computes: Vec<Span> =
                    self.module().regions.iter().filter(|r| matches!(r.kind, RegionKind::Compute { .. })).map(|r| r.span).collect();
                let inside: Vec<String> =
                    region.body_span.map(|body| self.host.loops_inside(body, &computes)).unwrap_or_default().into_iter().map(|l| self.line_of(l).to_string()).collect();
                let once = match (inside.as_slice(), entry) {
                    ([line], true) => format!("once before the loop at line {line}"),
                    ([_], false) => "once after it".to_string(),
                    ([], true) => "at region entry".to_string(),
                    ([], false) => "at region exit".to_string(),
                    (lines, true) => format!("once before the loops at lines {}", lines.join(", ")),
                    (_, false) => "once after them".to_string(),
                };
                match around {
                    Some(line) => format!("{once}, per iteration of the loop at line {line}"),
                    None => once,
                }
            }
            (RegionKind::Compute { .. }, Some(line)) => format!("at every launch, per iteration of the loop at line {line}"),
            (RegionKind::Compute { .. }, None) if entry => "at region entry".to_string(),
            (RegionKind::Compute { .. }, None) => "at region exit".to_string(),
            (_, Some(line)) => format!("per iteration of the loop at line {line}"),
            (_, None) => "at the directive".to_string(),
        }
    }

    /// The line for each group of consecutive clauses that move alike.
    fn data_lines(&self, data: &[DataSection], directive: &str, lines: &mut Vec<(Span, String)>) {
        let mut groups: Vec<(String, Vec<String>, String)> = Vec::new();
        for section in data {
            let (verb, how) = self.movement(section);
            match groups.last_mut() {
                Some(last) if last.0 == verb && last.2 == how => last.1.push(section.name.clone()),
                _ => groups.push((verb, vec![section.name.clone()], how)),
            }
        }
        for (verb, names, how) in groups {
            let names = names.join(", ");
            let text = if verb.is_empty() { how } else { format!("{directive}{verb} {names}{how}") };
            lines.push((self.region.span, text));
        }
    }

    /// A clause's verb and what it does when (or, with an empty verb, the whole line).
    fn movement(&self, section: &DataSection) -> (String, String) {
        let region = self.region;
        let structured = matches!(region.kind, RegionKind::Compute { .. } | RegionKind::Data { .. });
        let present_from = structured.then(|| enclosing_data_region(self.module(), region, clause_variable(&section.name))).flatten();
        use DataClauseKind::*;
        let verb = match section.kind {
            Copy | CopyIn | CopyOut | Create | Present | Delete | Host | Device => section.kind.keyword(),
            _ => return (String::new(), data_move(region, section)),
        };
        let moves = matches!(section.kind, DataClauseKind::Copy | DataClauseKind::CopyIn | DataClauseKind::CopyOut | DataClauseKind::Create);
        if let (true, Some(id)) = (moves, present_from) {
            let line = self.module().regions.iter().find(|r| r.id == id).map_or(0, |r| self.line_of(r.span));
            return (verb.into(), format!(": already present (data region at line {line}), nothing moves"));
        }
        let how = match section.kind {
            DataClauseKind::Copy => match (self.moment(true), self.moment(false)) {
                (entry, exit) if entry == exit => format!(": in and out {entry}"),
                (entry, exit) => format!(": in {entry}, out {exit}"),
            },
            DataClauseKind::CopyIn => format!(" {}", self.moment(true)),
            DataClauseKind::CopyOut => format!(" {}", self.moment(false)),
            DataClauseKind::Create => ": on the device only, nothing copied".to_string(),
            DataClauseKind::Present => ": must already be on the device, nothing moves".to_string(),
            DataClauseKind::Delete => format!(": the device copy released {}", self.moment(false)),
            DataClauseKind::Host => format!(": device -> host {}", self.moment(true)),
            _ => format!(": host -> device {}", self.moment(true)),
        };
        (verb.into(), how)
    }

    /// Arrays the region's kernels use without a clause: present from a data region, or moved
    /// by the runtime's coherence when stale (a run-time check).
    fn implicit_lines(&self, kernels: &[Handle<Kernel>], data: &[DataSection], lines: &mut Vec<(Span, String)>) {
        let uses = implicit_uses(self.module(), self.region, kernels, data);
        let mut present: Vec<(u32, Vec<String>)> = Vec::new();
        let mut moved: [Vec<String>; 3] = Default::default();
        for ImplicitUse { name, reads, writes, data_region } in uses {
            match (data_region, reads, writes) {
                (Some(id), ..) => match present.iter_mut().find(|p| p.0 == id) {
                    Some(p) => p.1.push(name),
                    None => present.push((id, vec![name])),
                },
                (None, true, false) => moved[0].push(name),
                (None, false, true) => moved[1].push(name),
                (None, true, true) => moved[2].push(name),
                (None, false, false) => {}
            }
        }
        for (id, names) in present {
            let line = self.module().regions.iter().find(|r| r.id == id).map_or(0, |r| self.line_of(r.span));
            lines.push((self.region.span, format!("implicit present {} (data region at line {line}), nothing moves", names.join(", "))));
        }
        let texts = [
            "copyin {}: to the device when stale (coherence, checked at run time)",
            "copyout {}: back to the host when the host touches it (coherence, checked at run time)",
            "copy {}: to the device when stale, back when the host touches it (coherence, checked at run time)",
        ];
        for (names, text) in moved.iter().zip(texts) {
            if !names.is_empty() {
                lines.push((self.region.span, format!("implicit {}", text.replace("{}", &names.join(", ")))));
            }
        }
    }
}

/// A reason without its witness (`...: iterations i = 0 and i = 1 both write a[0]`).
fn short_reason(message: &str) -> &str {
    message.split(": iteration").next().unwrap_or(message)
}

/// The widest constant offset of the kernel's affine references to array `param` from the
/// common part of each subscript (`a[i-1]`, `a[i]`, `a[i+1]`: 1); `None` where the
/// subscripts differ in more than a constant.
fn halo(summary: &access::AccessSummary, param: u32) -> Option<i64> {
    let accesses: Vec<_> = summary.of_param(param).collect();
    let dims = accesses.first()?.indices.len();
    let mut widest = 0;
    for d in 0..dims {
        let forms: Vec<_> = accesses.iter().map(|a| a.indices.get(d).and_then(IndexForm::as_affine)).collect::<Option<_>>()?;
        let terms: BTreeSet<String> = forms.iter().map(|f| format!("{:?}", f.terms)).collect();
        if terms.len() != 1 {
            return None;
        }
        widest = forms.iter().map(|f| f.constant.checked_abs()).collect::<Option<Vec<_>>>()?.into_iter().fold(widest, i64::max);
    }
    Some(widest)
}
