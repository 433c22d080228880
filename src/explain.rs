//! `yosegi explain`: a stable, human-readable account of each region of a compiled program:
//! where it is, its kernels (parallel dimensions or why a kernel runs sequentially, the grid
//! mapping), params, how each array is accessed (affine or irregular, read or write),
//! reductions, and what data moves where (data clauses, and the coherence moves the runtime
//! makes for arrays no clause names). Golden tests snapshot this text.

use std::fmt::Write;

use crate::analysis::access::{self, AccessKind, IndexForm};
use crate::back::ir_text::expr_text;
use crate::driver::CompiledProgram;
use crate::front::ast::{DataClauseKind, ReductionOp};
use crate::ir::{DataSection, Handle, Kernel, LoopLevel, Module, ParamKind, Region, RegionKind};

pub fn explain(program: &CompiledProgram) -> String {
    let mut out = String::new();
    if program.module.regions.is_empty() {
        out.push_str("no offloaded regions: the whole program runs on the host\n");
        return out;
    }
    for region in &program.module.regions {
        region_text(program, region, &mut out);
    }
    out
}

fn location(program: &CompiledProgram, region: &Region) -> String {
    let loc = program.sources.location(region.span);
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
        RegionKind::ExitData { .. } => "exit data".to_string(),
        RegionKind::Update { .. } => "update".to_string(),
        RegionKind::Wait => "wait".to_string(),
    }
}

fn region_text(program: &CompiledProgram, region: &Region, out: &mut String) {
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
            }
            data.as_slice()
        }
        RegionKind::Data { data }
        | RegionKind::EnterData { data }
        | RegionKind::ExitData { data }
        | RegionKind::Update { data } => data.as_slice(),
        RegionKind::Wait => &[],
    };
    for section in data {
        let _ = writeln!(out, "  data: {}", data_move(region, section));
    }
    if let RegionKind::Compute { kernels, data } = &region.kind {
        implicit_moves(module, kernels, data, out);
    }
}

fn level_text(level: LoopLevel) -> &'static str {
    match level {
        LoopLevel::Gang => "gang",
        LoopLevel::Worker => "worker",
        LoopLevel::Vector => "vector",
        LoopLevel::Auto => "auto",
    }
}

fn reduction_op_text(op: ReductionOp) -> &'static str {
    match op {
        ReductionOp::Add => "+",
        ReductionOp::Mul => "*",
        ReductionOp::Max => "max",
        ReductionOp::Min => "min",
        ReductionOp::BitAnd => "&",
        ReductionOp::BitOr => "|",
        ReductionOp::BitXor => "^",
        ReductionOp::LogAnd => "&&",
        ReductionOp::LogOr => "||",
    }
}

fn kernel_text(module: &Module, region: &Region, handle: Handle<Kernel>, out: &mut String) {
    let kernel = &module.kernels[handle];
    let body = &kernel.body;
    let _ = writeln!(out, "  kernel {}", kernel.name);
    if let Some(reason) = &kernel.sequential_reason {
        let _ = writeln!(out, "    sequential: {}", reason.message);
    } else if kernel.space.is_empty() {
        let _ = writeln!(out, "    sequential: the body runs once, on one thread");
    }
    for dim in &kernel.space {
        let _ = writeln!(
            out,
            "    parallel: {} from {} step {}, {} iterations [{}]",
            body.locals[dim.var].name,
            expr_text(body, &kernel.params, dim.start),
            dim.step,
            expr_text(body, &kernel.params, dim.trip_count),
            level_text(dim.level)
        );
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
            .map(|p| match &p.kind {
                ParamKind::Scalar(t) => format!("{} ({})", p.name, t.c_name()),
                ParamKind::Array { elem, dims, .. } => format!("{} ({} array, {} dims)", p.name, elem.c_name(), dims.len()),
            })
            .collect();
        let _ = writeln!(out, "    params: {}", params.join(", "));
    }
    let summary = access::summarize(kernel);
    for (index, param) in kernel.params.iter().enumerate() {
        if !matches!(param.kind, ParamKind::Array { .. }) {
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
        let _ = writeln!(
            out,
            "    reduction {}: {} ({}) into {}",
            reduction_op_text(r.op),
            body.locals[r.local].name,
            r.ty.c_name(),
            target
        );
    }
}

fn section_text(region: &Region, s: &DataSection) -> String {
    let arg = |i: Option<u32>| i.and_then(|i| region.args.get(i as usize)).map(|a| a.c_expr.clone());
    match (arg(s.lo), arg(s.len)) {
        (None, None) => s.name.clone(),
        (lo, len) => format!("{}[{}:{}]", s.name, lo.unwrap_or_else(|| "0".into()), len.unwrap_or_default()),
    }
}

fn data_move(region: &Region, s: &DataSection) -> String {
    let what = section_text(region, s);
    let exit = match region.kind {
        RegionKind::Compute { .. } | RegionKind::Data { .. } => "region exit",
        _ => "this directive",
    };
    match s.kind {
        DataClauseKind::Copy => format!("copy {what} -> device at region entry, back to the host at {exit}"),
        DataClauseKind::CopyIn => format!("copyin {what} -> device at region entry"),
        DataClauseKind::CopyOut => format!("copyout {what} -> host at {exit}"),
        DataClauseKind::Create => format!("create {what}: allocated on the device, not copied"),
        DataClauseKind::Present => format!("present {what}: must already be on the device"),
        DataClauseKind::Delete => format!("delete {what}: the device copy is released"),
        DataClauseKind::DevicePtr => format!("deviceptr {what}: a device address, used as is"),
        DataClauseKind::Host => format!("update host {what}: device -> host now"),
        DataClauseKind::Device => format!("update device {what}: host -> device now"),
        DataClauseKind::UseDevice => format!("use_device {what}: the host code sees the device address"),
    }
}

/// Arrays the kernels touch that no data clause of the region names: the runtime moves them
/// on demand.
fn implicit_moves(
    module: &Module,
    kernels: &[Handle<Kernel>],
    data: &[DataSection],
    out: &mut String,
) {
    let mut seen: Vec<u32> = data.iter().map(|d| d.base).collect();
    for &k in kernels {
        let kernel = &module.kernels[k];
        let summary = access::summarize(kernel);
        for (index, param) in kernel.params.iter().enumerate() {
            if !matches!(param.kind, ParamKind::Array { .. }) || seen.contains(&param.arg) {
                continue;
            }
            seen.push(param.arg);
            let reads = summary.of_param(index as u32).any(|a| a.kind != AccessKind::Write);
            let writes = summary.of_param(index as u32).any(|a| a.kind != AccessKind::Read);
            let text = match (reads, writes) {
                (true, true) => "read and written by kernel -> copied to the device when stale; the host copy refreshed when the host touches it (coherence)",
                (true, false) => "read by kernel -> copied to the device when stale (coherence)",
                (false, true) => "written by kernel -> the host copy refreshed when the host touches it (coherence)",
                (false, false) => "not accessed",
            };
            let _ = writeln!(out, "  implicit: {}: {text}", param.name);
        }
    }
}
