//! `yosegi explain`: a stable, human-readable account of each region of a compiled program:
//! where it is, its kernels (parallel dimensions or why a kernel runs sequentially, the grid
//! mapping), params, how each array is accessed (affine or irregular, read or write),
//! reductions, what data moves where (data clauses, and the coherence moves the runtime
//! makes for arrays no clause names), and each kernel's variants (global memory, shared-memory
//! staged) with the staging analysis behind them, the rule that picks one at run time, and the
//! winners measured so far (`runtime::variants`). Golden tests snapshot this text.
//! [`brief`] says the same in one line per compute loop and data movement (`explain --brief`,
//! `yosegi cc -Minfo=accel`).

pub mod brief;
mod host_code;
pub mod json;
mod model;

use std::fmt::Write;
use std::path::PathBuf;

use crate::analysis::access::{self, AccessKind, IndexForm};
use crate::ir::text::expr_text;
use crate::driver::CompiledProgram;
use crate::ir::DataClauseKind;
use crate::ir::{DataSection, GridKernel, Handle, Kernel, LoopLevel, Module, ParamKind, Region, RegionKind, VariantKind};
use crate::opt::StagingMode;
use crate::runtime::variants::{self, CachedChoice};

/// The account of `program`, with the measured winners of the tuning cache in its default
/// directory.
pub fn explain(program: &CompiledProgram) -> String {
    explain_with_tuning_cache(program, None)
}

/// [`explain`] reading measured winners from the tuning cache in `dir` (the default directory
/// when `None`); tests give an empty directory so that the text does not depend on the machine.
pub fn explain_with_tuning_cache(program: &CompiledProgram, dir: Option<PathBuf>) -> String {
    let mut out = String::new();
    if program.module.regions.is_empty() {
        out.push_str("no offloaded regions: the whole program runs on the host\n");
        return out;
    }
    let context = Context::new(program.staging, dir);
    model::device_count_text(&program.module, &context.learned, &mut out);
    for region in &program.module.regions {
        region_text(program, region, &context, &mut out);
    }
    out
}

/// What the account depends on besides the program.
struct Context {
    staging: StagingMode,
    tuning_cache: Option<PathBuf>,
    /// What earlier runs left beside the tuning cache, read once.
    learned: model::Learned,
}

impl Context {
    fn new(staging: StagingMode, tuning_cache: Option<PathBuf>) -> Context {
        let learned = model::Learned::load(&tuning_cache);
        Context { staging, tuning_cache, learned }
    }
}

fn location(program: &CompiledProgram, region: &Region) -> String {
    location_of(program, region.span)
}

/// `file.c:42`: the user's file (its name) and line where `span` starts.
fn location_of(program: &CompiledProgram, span: crate::diag::Span) -> String {
    let loc = program.sources.location(span);
    let file = loc.file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    format!("{file}:{}", loc.line)
}

fn kind_text(kind: &RegionKind) -> String {
    match kind {
        RegionKind::Compute { kernels, .. } => {
            format!("compute, {} kernel{}", kernels.len(), if kernels.len() == 1 { "" } else { "s" })
        }
        RegionKind::Data { .. } => "data".to_string(),
        RegionKind::EnterData { .. } => "enter data".to_string(),
        RegionKind::ExitData { finalize: false, .. } => "exit data".to_string(),
        RegionKind::ExitData { finalize: true, .. } => "exit data finalize".to_string(),
        RegionKind::Update { .. } => "update".to_string(),
        RegionKind::Wait => "wait".to_string(),
        RegionKind::Runtime(r) => runtime_directive_text(r),
    }
}

/// What an `init`, `shutdown` or `set` directive does on this runtime (one device type: the
/// GPU, or the simulator standing for it).
fn runtime_directive_text(r: &crate::ir::RuntimeDirective) -> String {
    use crate::ir::RuntimeOp;
    let types = if r.device_types.is_empty() { String::new() } else { format!(" device_type({})", r.device_types.join(", ")) };
    let what = match r.op {
        RuntimeOp::Init => "the devices are opened when the program starts, so this only checks the device number",
        RuntimeOp::Shutdown => "the devices stay open until the program ends (copies the program still uses stay coherent), so this only checks the device number",
        RuntimeOp::Set => "sets the current device (device_num, checked against the devices there are) and the default async queue (launches run in order, so queues only name them); other device types than the GPU are noted and change nothing",
    };
    format!("{}{types}: {what}", format!("{:?}", r.op).to_lowercase())
}

fn region_text(program: &CompiledProgram, region: &Region, context: &Context, out: &mut String) {
    let module = &program.module;
    let _ = writeln!(
        out,
        "region {} ({}, {}): {}",
        region.id,
        region.function,
        location(program, region),
        kind_text(&region.kind)
    );
    if let Some(arg) = region.if_arg.and_then(|i| region.args.get(i as usize)) {
        let _ = writeln!(out, "  runs on the host instead when `{}` is false", arg.c_expr);
    }
    let data = match &region.kind {
        RegionKind::Compute { kernels, data } => {
            for &k in kernels {
                kernel_text(module, region, k, out);
                variants_text(module, k, context, out);
                model::kernel_predictions_text(module, k, &context.learned, out);
            }
            fusion_text(module, region, out);
            model::region_prediction_text(module, kernels, &context.learned, out);
            data.as_slice()
        }
        RegionKind::Data { data }
        | RegionKind::EnterData { data }
        | RegionKind::ExitData { data, .. }
        | RegionKind::Update { data } => data.as_slice(),
        RegionKind::Wait | RegionKind::Runtime(_) => &[],
    };
    for section in data {
        let _ = writeln!(out, "  data: {}", data_move(region, section));
    }
    if let RegionKind::Compute { kernels, data } = &region.kind {
        implicit_moves(module, region, kernels, data, out);
    }
}

/// The region's fused chains (their dependence graphs, redundant iterations, exchange arrays
/// and how the runtime chooses) and the pairs of kernels not fused, with the reason.
fn fusion_text(module: &Module, region: &Region, out: &mut String) {
    let Some(index) = module.regions.iter().position(|r| std::ptr::eq(r, region)) else { return };
    let name = |k: Handle<Kernel>| format!("`{}`", module.kernels[k].name);
    for fusion in module.fusions.iter().filter(|f| f.region as usize == index) {
        let members: Vec<String> = fusion.members.iter().map(|&k| name(k)).collect();
        let grid = &module.grid_kernels[fusion.grid];
        let _ = writeln!(
            out,
            "  fused: {} run as one kernel `{}` (estimated cost {:.2} of the unfused launches)",
            members.join(", "),
            grid.name,
            fusion.estimated_ratio
        );
        for note in &fusion.notes {
            let _ = writeln!(out, "    {note}");
        }
        let choice = if fusion.forced {
            "--fusion on: the fused kernel runs whenever usable (one device, arrays it writes apart from the others)"
        } else {
            "--fusion auto: on a GPU the first launches time the fused kernel against the unfused ones and keep the faster; on the simulator the estimate decides; YOSEGI_FUSION=off at run time keeps them unfused"
        };
        let _ = writeln!(out, "    choice ({choice})");
    }
    for refusal in module.unfused.iter().filter(|r| r.region as usize == index) {
        let _ = writeln!(out, "  not fused: {} and {}: {}", name(refusal.previous), name(refusal.next), refusal.reason);
    }
    let Some(step_loop) = module.step_loops.iter().find(|l| l.region as usize == index) else { return };
    let _ = writeln!(
        out,
        "  step loop: the whole body of the loop over `{}`: the runtime may run several of its steps in one launch",
        step_loop.counter
    );
    for f in module.step_fusions.iter().filter(|f| f.region as usize == index) {
        let plural = if f.steps == 1 { "" } else { "s" };
        let _ = writeln!(out, "  steps fused: {} step{plural} in one kernel `{}`", f.steps, module.grid_kernels[f.grid].name);
        for note in &f.notes {
            let _ = writeln!(out, "    {note}");
        }
    }
    if module.step_fusions.iter().any(|f| f.region as usize == index) {
        let choice = if module.step_fusions.iter().any(|f| f.region as usize == index && f.forced) {
            "--fusion on: the kernel of the most steps that fit in the steps left runs whenever usable"
        } else {
            "--fusion auto: on a GPU the first steps time each step kernel against one unfused step and keep the fastest per step; on the simulator the estimate decides"
        };
        let _ = writeln!(out, "    choice ({choice})");
    }
    for (_, reason) in module.steps_unfused.iter().filter(|(r, _)| *r as usize == index) {
        let _ = writeln!(out, "  steps not fused: {reason}");
    }
}

/// What became of the construct's `num_gangs` and its loops' `gang(dim: d)`.
fn gang_dimensions_text(kernel: &Kernel, grid: Option<&GridKernel>, out: &mut String) {
    let body = &kernel.body;
    if !kernel.num_gangs.is_empty() {
        let _ = writeln!(
            out,
            "    num_gangs({}): gangs asked for in {} dimension(s); the grid has as many blocks per axis as the trip counts need (every iteration runs once either way)",
            kernel.num_gangs.join(", "),
            kernel.num_gangs.len()
        );
    }
    for dim in &kernel.space {
        let Some(g) = dim.gang_dim else { continue };
        let name = &body.locals[dim.var].name;
        let axis = grid.and_then(|grid| grid.axes.iter().find(|a| a.var == dim.var)).map(|a| a.axis);
        let want = ["x", "y", "z"].get(g as usize - 1).copied().unwrap_or("?");
        let _ = match axis {
            Some(a) if a.name() == want => writeln!(out, "    gang(dim: {g}) on {name}: runs along grid axis {want}, as gang dimension {g}"),
            Some(a) => writeln!(
                out,
                "    gang(dim: {g}) on {name}: runs along grid axis {} (the loops of the nest take the axes innermost first; every iteration runs once either way)",
                a.name()
            ),
            None if kernel.sequential_reason.is_some() => writeln!(out, "    gang(dim: {g}) on {name}: runs sequentially, with the rest of the nest"),
            None => writeln!(out, "    gang(dim: {g}) on {name}: shares grid axis z with the other outer loops of the nest"),
        };
    }
}

/// What a kernel written per thread (a MESI-CUDA kernel with `__shared__` arrays or barriers)
/// runs as.
pub(crate) fn per_thread_text(explicit: &crate::ir::ExplicitGrid) -> String {
    let [x, y, z] = explicit.block;
    let shared: Vec<String> = explicit
        .shared
        .iter()
        .map(|s| format!("{}{} ({} B)", s.name, s.dims.iter().map(|d| format!("[{d}]")).collect::<String>(), s.bytes()))
        .collect();
    let arrays = if shared.is_empty() { "no __shared__ arrays".to_string() } else { format!("__shared__ {}", shared.join(", ")) };
    format!("the body runs as written on every thread of the launch, in blocks of {x}x{y}x{z} threads; {arrays}; no staged variant (its shared memory is the program's)")
}

/// The two params `opt::partition` added (told by the partition line, not among the params).
fn is_partition_param(kernel: &Kernel, param: &crate::ir::Param) -> bool {
    kernel.partitions.iter().any(|p| param.arg == p.first_arg || param.arg == p.count_arg)
}

/// How the kernel is split over several devices (`--gpus`): which dim, and per array what
/// each device's part reads and writes along it.
fn partition_text(kernel: &Kernel, out: &mut String) {
    let Some(partition) = kernel.partitions.first() else {
        let why = if kernel.explicit_grid.is_some() {
            "its threads work together in blocks of the launch's shape"
        } else {
            "a sequential kernel hands its scalars back from one thread"
        };
        let _ = writeln!(out, "    devices: runs whole on one device ({why})");
        return;
    };
    let var = &kernel.body.locals[kernel.space[partition.dim as usize].var].name;
    let others: Vec<String> = kernel.partitions[1..].iter().map(|p| kernel.body.locals[kernel.space[p.dim as usize].var].name.clone()).collect();
    let alternatives = if others.is_empty() { String::new() } else { format!(" (or along {}, where blocks of {var} would write the same memory or read more)", others.join(", ")) };
    let _ = writeln!(
        out,
        "    devices: split along {var}{alternatives} in equal blocks, one per device, when several devices are used and the launch writes no byte from two blocks (else it runs whole on one device, after gathering what the others wrote)"
    );
    let lines = crate::analysis::split::split_sections_text(kernel, partition);
    for line in &lines {
        let _ = writeln!(out, "      {line}");
    }
    if lines.iter().any(|line| line.contains("and a halo of")) {
        let _ = writeln!(
            out,
            "      overlap: a part of at least {} M iterations whose device lacks only its halo runs its interior first, while the halo comes in, and its boundary after (YOSEGI_OVERLAP_MIN_ITERATIONS; every part on sim)",
            crate::runtime::DEFAULT_MIN_OVERLAP_ITERATIONS >> 20
        );
    }
}

/// The outermost loops of a kernel's body (beneath its parallel dims), which each thread runs
/// in order: `the loop over `e``; those [`Kernel::inner_sequential`] gives a reason for are
/// told there.
fn in_thread_loops(kernel: &Kernel) -> Vec<String> {
    fn walk(kernel: &Kernel, block: &[crate::ir::Stmt], out: &mut Vec<String>) {
        for stmt in block {
            match stmt {
                crate::ir::Stmt::Loop { range, test_first, .. } => out.push(match range {
                    Some(r) => format!("the loop over `{}`", kernel.body.locals[r.var].name),
                    None if *test_first => "a `while` loop".to_string(),
                    None => "a `do` loop".to_string(),
                }),
                crate::ir::Stmt::If { then, otherwise, .. } => {
                    walk(kernel, then, out);
                    walk(kernel, otherwise, out);
                }
                _ => {}
            }
        }
    }
    if kernel.explicit_grid.is_some() || kernel.sequential_reason.is_some() {
        return Vec::new();
    }
    let mut loops = Vec::new();
    walk(kernel, &kernel.body.block, &mut loops);
    loops.retain(|l| !kernel.inner_sequential.iter().any(|r| r.message.starts_with(l.as_str())));
    let mut seen = std::collections::HashSet::new();
    loops.retain(|l| seen.insert(l.clone()));
    loops
}

fn level_text(level: LoopLevel) -> &'static str {
    match level {
        LoopLevel::Gang => "gang",
        LoopLevel::Worker => "worker",
        LoopLevel::Vector => "vector",
        LoopLevel::Auto => "auto",
    }
}

fn kernel_text(module: &Module, region: &Region, handle: Handle<Kernel>, out: &mut String) {
    let kernel = &module.kernels[handle];
    let body = &kernel.body;
    let _ = writeln!(out, "  kernel {}", kernel.name);
    if let Some(reason) = &kernel.sequential_reason {
        let _ = writeln!(out, "    sequential: {}", reason.message);
    } else if let Some(explicit) = &kernel.explicit_grid {
        let _ = writeln!(out, "    written per thread: {}", per_thread_text(explicit));
    } else if kernel.space.is_empty() {
        let _ = writeln!(out, "    sequential: the body runs once, on one thread");
    }
    let grid = module.grid_of(handle).map(|g| &module.grid_kernels[g]);
    for (n, dim) in kernel.space.iter().enumerate() {
        // A partitioned dim as the source wrote it; the split is told below.
        let (start, trip) = match kernel.partitions.iter().find(|p| p.dim as usize == n) {
            Some(p) => (p.start, p.trip),
            None => (dim.start, dim.trip_count),
        };
        let _ = writeln!(
            out,
            "    parallel: {} from {} step {}, {} iterations [{}]",
            body.locals[dim.var].name,
            expr_text(body, &kernel.params, start),
            dim.step,
            expr_text(body, &kernel.params, trip),
            level_text(dim.level)
        );
    }
    partition_text(kernel, out);
    for reason in &kernel.inner_sequential {
        let _ = writeln!(out, "    sequential inside each thread: {}", reason.message);
    }
    let in_thread = in_thread_loops(kernel);
    if !in_thread.is_empty() {
        let _ = writeln!(out, "    in order inside each thread: {}", in_thread.join(", "));
    }
    if !kernel.num_gangs.is_empty() || kernel.space.iter().any(|d| d.gang_dim.is_some()) {
        gang_dimensions_text(kernel, grid, out);
    }
    if !kernel.auto_private.is_empty() {
        let names: Vec<String> = kernel.auto_private.iter().map(|n| format!("`{n}`")).collect();
        let _ = writeln!(
            out,
            "    private (automatic): {} (each iteration assigns before reading; nothing reads them after the loop)",
            names.join(", ")
        );
    }
    for note in &kernel.implicit {
        let _ = writeln!(out, "    implicit: {note}");
    }
    if let Some(grid) = module.grid_of(handle) {
        let grid = &module.grid_kernels[grid];
        let dims: Vec<String> = grid.launch.grid.iter().map(|&e| expr_text(&grid.body, &grid.params, e)).collect();
        let _ = writeln!(
            out,
            "    mapping: blocks of {}x{}x{} threads, grid ({})",
            grid.launch.block[0],
            grid.launch.block[1],
            grid.launch.block[2],
            dims.join(", ")
        );
    }
    if !kernel.params.is_empty() {
        let params: Vec<String> = kernel
            .params
            .iter()
            .filter(|p| !is_partition_param(kernel, p))
            .map(|p| match &p.kind {
                ParamKind::Scalar(t) => format!("{} ({})", p.name, t.c_name()),
                ParamKind::Array { elem, dims, .. } => format!("{} ({} array, {} dims)", p.name, elem.c_name(), dims.len()),
                ParamKind::RowTable { elem, .. } => format!("{} (table of {} rows)", p.name, elem.c_name()),
            })
            .collect();
        let _ = writeln!(out, "    params: {}", params.join(", "));
    }
    let summary = access::summarize(kernel);
    for (index, param) in kernel.params.iter().enumerate() {
        if !param.kind.is_indexed() {
            continue;
        }
        let accesses: Vec<String> = summary
            .of_param(index as u32)
            .map(|a| {
                let subscripts: String =
                    a.index_exprs.iter().map(|&e| format!("[{}]", expr_text(body, &kernel.params, e))).collect();
                let form = if a.indices.iter().all(|i| matches!(i, IndexForm::Affine(_))) { "affine" } else { "irregular" };
                let kind = match a.kind {
                    AccessKind::Read => "read",
                    AccessKind::Write => "write",
                    AccessKind::AtomicUpdate => "atomic update",
                };
                format!("{kind} {}{subscripts} {form}", param.name)
            })
            .collect();
        if accesses.is_empty() {
            let _ = writeln!(out, "    array {}: not accessed", param.name);
        } else {
            let _ = writeln!(out, "    array {}: {}", param.name, accesses.join("; "));
        }
    }
    for r in &kernel.reductions {
        let target = region.args.get(r.target_arg as usize).map(|a| a.c_expr.as_str()).unwrap_or("?");
        let name = &body.locals[r.local].name;
        match r.part {
            None => {
                let _ = writeln!(out, "    reduction {}: {} ({}) into {}", r.op.symbol(), name, r.ty.c_name(), target);
            }
            // The imaginary part's line would repeat the real part's.
            Some(crate::ir::ComplexPart::Imag) => {}
            Some(crate::ir::ComplexPart::Real) => {
                let variable = name.strip_suffix(".re").unwrap_or(name);
                let how = if r.op == crate::ir::ReductionOp::Mul { "the parts multiplied as complex numbers" } else { "each part on its own" };
                let _ = writeln!(
                    out,
                    "    reduction {}: {variable} ({} _Complex: real and imaginary parts, {how}) into {variable}",
                    r.op.symbol(),
                    r.ty.c_name(),
                );
            }
        }
    }
}

/// How the flag that selects `mode` is spelled.
fn staging_flag(mode: StagingMode) -> &'static str {
    match mode {
        StagingMode::Off => "--staging off",
        StagingMode::Auto => "--staging auto",
        StagingMode::Force => "--staging on",
    }
}

fn variant_kind_text(kind: VariantKind) -> &'static str {
    match kind {
        VariantKind::Global => "global",
        VariantKind::Staged => "staged",
        VariantKind::Fused => "fused",
    }
}

/// The kernel's variants with the analysis notes of each, then how the runtime picks one.
fn variants_text(module: &Module, handle: Handle<Kernel>, context: &Context, out: &mut String) {
    let variants: Vec<&GridKernel> = module.variants_of(handle).into_iter().map(|v| &module.grid_kernels[v]).collect();
    let Some(plain) = variants.first() else { return };
    let staged: Vec<&GridKernel> = variants.iter().copied().filter(|g| g.variant.kind == VariantKind::Staged).collect();
    // The staging pass writes its analysis of the kernel into the plain variant's notes; a
    // staged variant's own notes repeat the decisions it implements, so only new lines are shown.
    if !plain.variant.notes.is_empty() {
        let _ = writeln!(out, "    staging analysis:");
        for note in &plain.variant.notes {
            let _ = writeln!(out, "      {note}");
        }
    }
    if staged.is_empty() {
        let why = match context.staging {
            StagingMode::Off => "staging is off",
            StagingMode::Auto | StagingMode::Force => "no staged variant was made",
        };
        let _ = writeln!(out, "    variants: one, global memory ({why})");
        return;
    }
    let _ = writeln!(out, "    variants: {}", variants.len());
    for grid in &variants {
        let info = &grid.variant;
        let estimate = match info.kind {
            VariantKind::Global => "every access to global memory, the reference (estimated cost 1.00)".to_string(),
            // Never among a kernel's variants: a fused kernel replaces several (`fusion_text`).
            VariantKind::Fused => format!("several kernels in one (estimated cost {:.2})", info.estimated_ratio),
            VariantKind::Staged => {
                let written = grid.written_array_params();
                let names = |copied_back: bool| -> Vec<&str> {
                    info.staged_params
                        .iter()
                        .filter(|p| written.contains(p) == copied_back)
                        .filter_map(|&p| grid.params.get(p as usize))
                        .map(|p| p.name.as_str())
                        .collect()
                };
                let (read, back) = (names(false), names(true));
                let what = match (read.is_empty(), back.is_empty()) {
                    (false, true) => format!("reads {}", read.join(", ")),
                    (true, false) => format!("writes {}", back.join(", ")),
                    _ => format!("reads {} and writes {}", read.join(", "), back.join(", ")),
                };
                format!("{what} through shared-memory tiles (estimated cost {:.2} of global)", info.estimated_ratio)
            }
        };
        let _ = writeln!(out, "      {} `{}`: {estimate}", variant_kind_text(info.kind), grid.name);
        let shared = grid.shared_memory_bytes();
        if info.kind == VariantKind::Staged && shared > variants::SHARED_MEMORY_LIMIT {
            let _ = writeln!(
                out,
                "        never launched: its tiles need {shared} bytes of shared memory, more than the {} a block gets",
                variants::SHARED_MEMORY_LIMIT
            );
        }
        if info.kind == VariantKind::Global {
            continue;
        }
        for note in info.notes.iter().filter(|n| !plain.variant.notes.contains(n)) {
            let _ = writeln!(out, "        {note}");
        }
    }
    let flag = staging_flag(context.staging);
    match context.staging {
        StagingMode::Off => {
            let _ = writeln!(out, "    choice ({flag}): the global variant always runs");
        }
        StagingMode::Force => {
            let last = staged.last().map(|g| g.name.as_str()).unwrap_or_default();
            let _ = writeln!(out, "    choice ({flag}): `{last}` runs whenever it is usable, else the global variant");
            usability_text(out);
        }
        StagingMode::Auto => {
            let by_estimate = variants
                .iter()
                .copied()
                .filter(|g| g.variant.kind == VariantKind::Global || g.shared_memory_bytes() <= variants::SHARED_MEMORY_LIMIT)
                .min_by(|a, b| a.variant.estimated_ratio.total_cmp(&b.variant.estimated_ratio))
                .unwrap_or(plain);
            let _ = writeln!(out, "    choice ({flag}):");
            let samples = match variants::SAMPLES_PER_CANDIDATE {
                1 => "once".to_string(),
                2 => "twice".to_string(),
                n => format!("{n} times"),
            };
            let _ = writeln!(
                out,
                "      on a GPU: the first launches of each size time every variant {samples} (once when that launch is over {}x global's); the fastest is kept if it beats global by more than {}% and {} us, else global",
                variants::CLEARLY_SLOWER,
                variants::WIN_MARGIN * 100.0,
                variants::WIN_MARGIN_MIN.as_micros()
            );
            let _ = writeln!(
                out,
                "      on the simulator (which cannot time): the lowest estimate, `{}` ({:.2})",
                by_estimate.name, by_estimate.variant.estimated_ratio
            );
            usability_text(out);
            let cached = variants::cached_choices(module, handle, context.tuning_cache.clone());
            if cached.is_empty() {
                let _ = writeln!(out, "      no measured winner cached yet: the choice is made at run time by timing");
            }
            for choice in &cached {
                let _ = writeln!(out, "      {}", cached_choice_text(&variants, choice));
            }
        }
    }
}

/// The condition every staged launch checks.
fn usability_text(out: &mut String) {
    let _ = writeln!(
        out,
        "      a staged variant is used only when no array it stages shares memory with an array the kernel writes, nor one it writes through a tile with any other array (checked at each launch)"
    );
}

/// `winner on <device> for n=4096: staged (0.61 ms vs global 0.82 ms, measured)`.
fn cached_choice_text(variants: &[&GridKernel], choice: &CachedChoice) -> String {
    let ms = |t: std::time::Duration| format!("{:.3} ms", t.as_secs_f64() * 1e3);
    let kind_of = |name: &str| {
        variants.iter().find(|g| g.name == name).map(|g| variant_kind_text(g.variant.kind)).unwrap_or("variant")
    };
    let winner = &choice.winner;
    let winner_time = choice.best_time(winner).map(ms).unwrap_or_else(|| "-".into());
    let others: Vec<String> = choice
        .times
        .iter()
        .filter(|(name, _)| name != winner)
        .map(|(name, _)| {
            let time = choice.best_time(name).map(ms).unwrap_or_else(|| "-".into());
            format!("{} `{name}` {time}", kind_of(name))
        })
        .collect();
    let sizes = if choice.sizes == "-" { String::new() } else { format!(" for {}", choice.sizes) };
    format!(
        "winner on {}{sizes}: {} `{winner}` ({winner_time} vs {}, measured)",
        choice.device,
        kind_of(winner),
        others.join(", ")
    )
}

/// A data clause as the user wrote it (`a[0:n][0:m]`); the IR's linear element range is in
/// `yosegi emit`'s listing.
fn section_text(s: &DataSection) -> String {
    match s.rows {
        // A deep copy: what happens to the rows; the table of pointers is only made present.
        Some(_) => format!("{} (each row; the pointer table is attached on the device)", s.name),
        None => s.name.clone(),
    }
}

fn data_move(region: &Region, s: &DataSection) -> String {
    let what = section_text(s);
    let exit = match region.kind {
        RegionKind::Compute { .. } | RegionKind::Data { .. } => "region exit",
        _ => "this directive",
    };
    match s.kind {
        DataClauseKind::Copy => format!("copy {what} -> device at region entry, back to the host at {exit}"),
        DataClauseKind::CopyIn => format!("copyin {what} -> device at region entry"),
        DataClauseKind::CopyOut if s.zero => format!("copyout(zero:) {what}: zeroed on the device when not already there, -> host at {exit}"),
        DataClauseKind::CopyOut => format!("copyout {what} -> host at {exit}"),
        DataClauseKind::Create if s.zero => format!("create(zero:) {what}: allocated on the device and zeroed when not already there"),
        DataClauseKind::Create => format!("create {what}: allocated on the device, not copied"),
        DataClauseKind::Present => format!("present {what}: must already be on the device"),
        DataClauseKind::Delete => format!("delete {what}: the device copy is released"),
        DataClauseKind::DevicePtr => format!("deviceptr {what}: a device address, used as is"),
        DataClauseKind::Host => format!("update host {what}: device -> host now"),
        DataClauseKind::Device => format!("update device {what}: host -> device now"),
        DataClauseKind::UseDevice => format!("use_device {what}: the host code sees the device address"),
        DataClauseKind::NoCreate => format!("no_create {what}: nothing moves here; launches move what they touch"),
        DataClauseKind::Attach => format!("attach {what}: the object it points into gets a device copy when it is tracked; kernels translate the pointer themselves"),
        DataClauseKind::Detach => format!("detach {what}: nothing to undo (pointers are translated per launch)"),
        DataClauseKind::DeviceResident => format!("device_resident {what}: a placement hint"),
        DataClauseKind::Link => format!("link {what}: a placement hint"),
    }
}

/// An array a compute region's kernels touch that no data clause of the region names: the
/// runtime moves it on demand (coherence), or it is present from an enclosing data region.
struct ImplicitUse {
    name: String,
    reads: bool,
    writes: bool,
    /// The innermost structured data region around the compute region that names the array.
    data_region: Option<u32>,
}

/// The region's [`ImplicitUse`]s, in order of first use.
fn implicit_uses(module: &Module, region: &Region, kernels: &[Handle<Kernel>], data: &[DataSection]) -> Vec<ImplicitUse> {
    // Per array the region's kernels use without a clause, in order of first use: whether
    // any of its kernels reads it and whether any writes it.
    let clauses: Vec<u32> = data.iter().map(|d| d.base).collect();
    let mut uses: Vec<(u32, ImplicitUse)> = Vec::new();
    for &k in kernels {
        let kernel = &module.kernels[k];
        let summary = access::summarize(kernel);
        for (index, param) in kernel.params.iter().enumerate() {
            if !param.kind.is_indexed() || clauses.contains(&param.arg) {
                continue;
            }
            let reads = summary.of_param(index as u32).any(|a| a.kind != AccessKind::Write);
            let writes = summary.of_param(index as u32).any(|a| a.kind != AccessKind::Read);
            match uses.iter_mut().find(|u| u.0 == param.arg) {
                Some((_, u)) => {
                    u.reads |= reads;
                    u.writes |= writes;
                }
                None => uses.push((param.arg, ImplicitUse { name: param.name.clone(), reads, writes, data_region: None })),
            }
        }
    }
    uses.into_iter()
        .map(|(_, mut u)| {
            u.data_region = enclosing_data_region(module, region, &u.name);
            u
        })
        .collect()
}

/// Arrays the kernels touch that no data clause of the region names: the runtime moves them
/// on demand.
fn implicit_moves(
    module: &Module,
    region: &Region,
    kernels: &[Handle<Kernel>],
    data: &[DataSection],
    out: &mut String,
) {
    for ImplicitUse { name, reads, writes, data_region } in implicit_uses(module, region, kernels, data) {
        let text = match (reads, writes) {
            (true, true) => "read and written by kernel -> copied to the device when stale; the host copy refreshed when the host touches it (coherence)",
            (true, false) => "read by kernel -> copied to the device when stale (coherence)",
            (false, true) => "written by kernel -> the host copy refreshed when the host touches it (coherence)",
            (false, false) => "not accessed",
        };
        match data_region {
            Some(data_region) => {
                let _ = writeln!(
                    out,
                    "  implicit: {name}: {} -> present from data region {data_region}",
                    match (reads, writes) {
                        (true, true) => "read and written by kernel",
                        (true, false) => "read by kernel",
                        (false, true) => "written by kernel",
                        (false, false) => "not accessed",
                    }
                );
            }
            None => {
                let _ = writeln!(out, "  implicit: {name}: {text}");
            }
        }
    }
}

/// The variable a data clause names (`a` of `a[0:n][0:m]`).
fn clause_variable(name: &str) -> &str {
    name.split(['[', ' ', '(']).next().unwrap_or(name).trim()
}

/// The innermost structured data region around `region` with a clause naming `name`.
fn enclosing_data_region(module: &Module, region: &Region, name: &str) -> Option<u32> {
    module
        .regions
        .iter()
        .filter(|r| {
            r.id != region.id
                && r.span.tu == region.span.tu
                && r.span.lo <= region.span.lo
                && region.span.hi <= r.span.hi
        })
        .filter(|r| matches!(&r.kind, RegionKind::Data { data } if data.iter().any(|d| clause_variable(&d.name) == clause_variable(name))))
        .max_by_key(|r| r.span.lo)
        .map(|r| r.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{B, array_param, kernel, scalar_param};
    use crate::diag::Span;
    use crate::source::{SourceSet, SourceUnit};
    use crate::ir::{HostArg, HostArgKind, Stmt};

    /// `y[i] = x[i] + y[i]` for `i < n`, with `copyin(x[0:n])` and `y` left to coherence.
    fn saxpy_program() -> CompiledProgram {
        let mut b = B::new();
        let i = b.loop_var("i");
        let zero = b.int(0);
        let n = b.param(0);
        let dim = b.dim(i, zero, n);
        let xi = b.var_plus(i, 0);
        let x = b.load(1, vec![xi]);
        let yi = b.var_plus(i, 0);
        let y = b.load(2, vec![yi]);
        let sum = b.add(x, y);
        let yi2 = b.var_plus(i, 0);
        let store: Stmt = b.store(2, vec![yi2], sum);
        b.body.block.push(store);
        let k = kernel(
            "main_l5",
            vec![scalar_param("n", 0), array_param("x", vec![None], 1), array_param("y", vec![None], 2)],
            vec![dim],
            b.body,
        );
        let mut module = Module::default();
        let handle = module.kernels.append(k);
        let arg = |e: &str, kind| HostArg { c_expr: e.into(), kind, size_expr: None };
        module.regions.push(Region {
            id: 0,
            span: Span::new(0, 0, 1),
            body_span: None,
            kind: RegionKind::Compute {
                kernels: vec![handle],
                data: vec![DataSection {
                    kind: DataClauseKind::CopyIn,
                    base: 1,
                    lo: Some(3),
                    len: Some(0),
                    elem_size: 8,
                    name: "x[0:n]".into(),
                    span: Span::new(0, 0, 1),
                    zero: false,
                    rows: None,
                    dead_on_host: false,
                }],
            },
            args: vec![
                arg("n", HostArgKind::Int),
                arg("x", HostArgKind::Pointer),
                arg("y", HostArgKind::Pointer),
                arg("0", HostArgKind::Int),
            ],
            if_arg: None,
            function: "main".into(),
            unread_on_host: Vec::new(),
            host_after: Vec::new(),
            settle_after: Vec::new(),
        });
        crate::opt::run_passes(&mut module, &crate::opt::PassConfig::default()).unwrap();
        CompiledProgram {
            files: vec!["prog.c".into()],
            sources: SourceSet { units: vec![SourceUnit::new("prog.c".into(), "# 1 \"prog.c\"\nint main(void) { return 0; }\n".into())] },
            units: vec![],
            module,
            warnings: vec![],
            staging: crate::opt::StagingMode::Auto,
            openmp: crate::driver::OpenMpUse::default(),
        }
    }

    #[test]
    fn explains_kernels_accesses_and_data_moves() {
        let text = explain(&saxpy_program());
        assert!(text.starts_with("region 0 (main, "), "{text}");
        assert!(text.contains("): compute, 1 kernel\n"), "{text}");
        assert!(text.contains("  kernel main_l5\n"), "{text}");
        assert!(text.contains("    parallel: i from 0 step 1, n iterations [auto]\n"), "{text}");
        assert!(text.contains("    mapping: blocks of 256x1x1 threads"), "{text}");
        assert!(text.contains("    array x: read x[i] affine\n"), "{text}");
        assert!(text.contains("    array y: read y[i] affine; write y[i] affine\n"), "{text}");
        assert!(text.contains("  data: copyin x[0:n] -> device at region entry\n"), "{text}");
        assert!(text.contains("  implicit: y: read and written by kernel"), "{text}");
        assert!(!text.contains("implicit: x"), "x has a data clause:\n{text}");
    }

    /// saxpy with a staged clone of its grid kernel (the runtime and explain cannot tell it
    /// from a real staged variant).
    fn saxpy_with_staged_variant(staging: StagingMode) -> CompiledProgram {
        let mut program = saxpy_program();
        program.staging = staging;
        let kernel = program.module.kernels.iter().next().map(|(h, _)| h).expect("one kernel");
        let plain = program.module.grid_of(kernel).expect("mapped");
        program.module.grid_kernels[plain].variant.notes = vec!["x: read once per element, not staged".into()];
        let mut staged = program.module.grid_kernels[plain].clone();
        staged.name = "main_l5_staged".into();
        staged.variant = crate::ir::VariantInfo {
            kind: VariantKind::Staged,
            estimated_ratio: 0.61,
            notes: vec!["group y: 1 reference, footprint 256 elements per block".into(), "bank degree 2 -> 1 after padding".into()],
            staged_params: vec![1, 2],
        };
        program.module.grid_kernels.append(staged);
        program
    }

    fn empty_cache() -> tempfile::TempDir {
        tempfile::tempdir().expect("temp dir")
    }

    #[test]
    fn one_variant_says_why_and_shows_its_notes() {
        let dir = empty_cache();
        let text = explain_with_tuning_cache(&saxpy_program(), Some(dir.path().to_path_buf()));
        assert!(text.contains("    variants: one, global memory (no staged variant was made)\n"), "{text}");
        let mut off = saxpy_program();
        off.staging = StagingMode::Off;
        let text = explain_with_tuning_cache(&off, Some(dir.path().to_path_buf()));
        assert!(text.contains("    variants: one, global memory (staging is off)\n"), "{text}");
    }

    #[test]
    fn staged_variants_are_listed_with_their_notes_and_the_rule_in_force() {
        let dir = empty_cache();
        let cache = Some(dir.path().to_path_buf());
        let auto = explain_with_tuning_cache(&saxpy_with_staged_variant(StagingMode::Auto), cache.clone());
        for line in [
            "    staging analysis:\n      x: read once per element, not staged\n    variants: 2\n",
            "      global `main_l5`: every access to global memory, the reference (estimated cost 1.00)\n",
            "      staged `main_l5_staged`: reads x and writes y through shared-memory tiles (estimated cost 0.61 of global)\n",
            "        group y: 1 reference, footprint 256 elements per block\n        bank degree 2 -> 1 after padding\n",
            "    choice (--staging auto):\n",
            "      on the simulator (which cannot time): the lowest estimate, `main_l5_staged` (0.61)\n",
            "      no measured winner cached yet: the choice is made at run time by timing\n",
        ] {
            assert!(auto.contains(line), "missing {line:?} in\n{auto}");
        }
        let on = explain_with_tuning_cache(&saxpy_with_staged_variant(StagingMode::Force), cache.clone());
        assert!(on.contains("    choice (--staging on): `main_l5_staged` runs whenever it is usable, else the global variant\n"), "{on}");
        let off = explain_with_tuning_cache(&saxpy_with_staged_variant(StagingMode::Off), cache);
        assert!(off.contains("    choice (--staging off): the global variant always runs\n"), "{off}");
        assert!(!off.contains("by timing"), "{off}");
    }

    #[test]
    fn a_cached_winner_is_shown_with_its_measured_times() {
        let dir = empty_cache();
        let program = saxpy_with_staged_variant(StagingMode::Auto);
        let kernel = program.module.kernels.iter().next().map(|(h, _)| h).expect("one kernel");
        let identity = crate::runtime::variants::KernelIdentity::of(&program.module, kernel);
        let line = format!(
            "v1\tmain_l5\t{:016x}\tcuda:0 (NVIDIA H100)\tn=4096\tmain_l5_staged\tmain_l5=820000/830000,main_l5_staged=610000/640000\n",
            identity.hash
        );
        std::fs::write(dir.path().join(crate::runtime::variants::TUNING_CACHE_FILE), line).expect("write cache");
        let text = explain_with_tuning_cache(&program, Some(dir.path().to_path_buf()));
        assert!(
            text.contains("      winner on cuda:0 (NVIDIA H100) for n=4096: staged `main_l5_staged` (0.610 ms vs global `main_l5` 0.820 ms, measured)\n"),
            "{text}"
        );
        assert!(!text.contains("no measured winner"), "{text}");
    }

    #[test]
    fn the_last_multi_gpu_runs_device_count_is_shown() {
        let dir = empty_cache();
        let program = saxpy_program();
        let text = explain_with_tuning_cache(&program, Some(dir.path().to_path_buf()));
        assert!(!text.contains("devices on"), "{text}");
        let decision = crate::runtime::device_count::Decision {
            one_device: true,
            split: std::time::Duration::from_micros(589),
            one: Some(std::time::Duration::from_micros(354)),
            work: std::time::Duration::from_micros(260),
        };
        let record = crate::runtime::device_count::record::DeviceCountRecord {
            program: crate::runtime::variants::program_hash(&program.module),
            device: "NVIDIA H100".into(),
            devices: 4,
            decision,
        };
        crate::runtime::device_count::record::store(dir.path(), &record);
        let text = explain_with_tuning_cache(&program, Some(dir.path().to_path_buf()));
        assert!(
            text.starts_with("devices on NVIDIA H100 (the last run on several): kept one device: a cycle of the program's regions took 0.589 ms split over 4 devices, 0.354 ms on one\n"),
            "{text}"
        );
        // Another program does not see it.
        let other = saxpy_with_staged_variant(StagingMode::Auto);
        assert!(!explain_with_tuning_cache(&other, Some(dir.path().to_path_buf())).contains("devices on"));
    }

    #[test]
    fn a_program_without_regions_says_so() {
        let mut program = saxpy_program();
        program.module = Module::default();
        assert_eq!(explain(&program), "no offloaded regions: the whole program runs on the host\n");
    }
}
