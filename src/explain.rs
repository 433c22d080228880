//! `yosegi explain`: a stable, human-readable account of each region of a compiled program:
//! where it is, its kernels (parallel dimensions or why a kernel runs sequentially, the grid
//! mapping), params, how each array is accessed (affine or irregular, read or write),
//! reductions, and what data moves where (data clauses, and the coherence moves the runtime
//! makes for arrays no clause names). Golden tests snapshot this text.

use std::fmt::Write;

use crate::analysis::access::{self, AccessKind, IndexForm};
use crate::back::ir_text::expr_text;
use crate::driver::CompiledProgram;
use crate::front::ast::DataClauseKind;
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
        implicit_moves(module, region, kernels, data, out);
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
            r.op.symbol(),
            body.locals[r.local].name,
            r.ty.c_name(),
            target
        );
    }
}

/// A data clause as the user wrote it (`a[0:n][0:m]`); the IR's linear element range is in
/// `yosegi emit`'s listing.
fn section_text(s: &DataSection) -> String {
    s.name.clone()
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
    region: &Region,
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
            match enclosing_data_region(module, region, &param.name) {
                Some(data_region) => {
                    let _ = writeln!(
                        out,
                        "  implicit: {}: {} -> present from data region {data_region}",
                        param.name,
                        match (reads, writes) {
                            (true, true) => "read and written by kernel",
                            (true, false) => "read by kernel",
                            (false, true) => "written by kernel",
                            (false, false) => "not accessed",
                        }
                    );
                }
                None => {
                    let _ = writeln!(out, "  implicit: {}: {text}", param.name);
                }
            }
        }
    }
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
        .filter(|r| matches!(&r.kind, RegionKind::Data { data } if data.iter().any(|d| d.name == name)))
        .max_by_key(|r| r.span.lo)
        .map(|r| r.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{B, array_param, kernel, scalar_param};
    use crate::diag::Span;
    use crate::front::source::{SourceSet, SourceUnit};
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
        });
        crate::opt::run_passes(&mut module, &crate::opt::PassConfig::default()).unwrap();
        CompiledProgram {
            files: vec!["prog.c".into()],
            sources: SourceSet { units: vec![SourceUnit { path: "prog.c".into(), text: "# 1 \"prog.c\"\nint main(void) { return 0; }\n".into() }] },
            units: vec![],
            module,
            warnings: vec![],
            staging: crate::opt::StagingMode::Auto,
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

    #[test]
    fn a_program_without_regions_says_so() {
        let mut program = saxpy_program();
        program.module = Module::default();
        assert_eq!(explain(&program), "no offloaded regions: the whole program runs on the host\n");
    }
}
