//! `yosegi explain --format=json`: the account of [`super::explain`] as JSON, for tools. Each
//! region gives its place, kind, the host fallback condition, its kernels (name, whether and
//! why sequential, its variants by name and kind with their estimated cost, and the text form's
//! lines for the rest: parallel dims, partition, params, accesses, reductions, staging analysis
//! and the choice rule), its fused chains and the pairs not fused (the text lines), its data
//! moves and the implicit ones. The kernels and variants are the text form's, in its order.

use serde_json::{Value, json};

use super::{Context, data_move, fusion_text, implicit_moves, kernel_text, kind_text, variant_kind_text, variants_text};
use crate::driver::CompiledProgram;
use crate::ir::{Region, RegionKind};

/// `explain`'s facts for `program` (measured winners read from the tuning cache in `dir`).
pub fn explain_json(program: &CompiledProgram, dir: Option<std::path::PathBuf>) -> Value {
    let context = Context::new(program.staging, dir);
    let regions: Vec<Value> = program.module.regions.iter().map(|r| region_json(program, r, &context)).collect();
    let mut devices = String::new();
    super::model::device_count_text(&program.module, &context.learned, &mut devices);
    json!({ "regions": regions, "device_count": lines(&devices) })
}

/// `text` split into trimmed lines.
fn lines(text: &str) -> Vec<String> {
    text.lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect()
}

fn region_json(program: &CompiledProgram, region: &Region, context: &Context) -> Value {
    let module = &program.module;
    let loc = program.sources.location(region.span);
    let mut kernels = Vec::new();
    let mut data: &[crate::ir::DataSection] = &[];
    let mut fusion = Vec::new();
    let mut implicit = Vec::new();
    match &region.kind {
        RegionKind::Compute { kernels: handles, data: clauses } => {
            for &k in handles {
                let kernel = &module.kernels[k];
                let variants: Vec<Value> = module
                    .variants_of(k)
                    .into_iter()
                    .map(|v| {
                        let grid = &module.grid_kernels[v];
                        json!({
                            "name": grid.name,
                            "kind": variant_kind_text(grid.variant.kind),
                            "estimated_cost": grid.variant.estimated_ratio,
                            "shared_memory_bytes": grid.shared_memory_bytes(),
                        })
                    })
                    .collect();
                let mut details = String::new();
                kernel_text(module, region, k, &mut details);
                variants_text(module, k, context, &mut details);
                let sequential = kernel.sequential_reason.as_ref().map(|r| r.message.clone()).or_else(|| {
                    (kernel.space.is_empty() && kernel.explicit_grid.is_none()).then(|| "the body runs once, on one thread".to_string())
                });
                let per_thread = kernel.explicit_grid.as_ref().map(super::per_thread_text);
                kernels.push(json!({
                    "name": kernel.name,
                    "sequential": sequential,
                    "per_thread": per_thread,
                    "variants": variants,
                    "predictions": super::model::kernel_predictions_json(module, k, &context.learned),
                    // The first line names the kernel, as the record does.
                    "details": lines(&details).into_iter().skip(1).collect::<Vec<_>>(),
                }));
            }
            let mut text = String::new();
            fusion_text(module, region, &mut text);
            fusion = lines(&text);
            let mut text = String::new();
            implicit_moves(module, region, handles, clauses, &mut text);
            implicit = lines(&text);
            data = clauses.as_slice();
        }
        RegionKind::Data { data: d } | RegionKind::EnterData { data: d } | RegionKind::ExitData { data: d, .. } | RegionKind::Update { data: d } => {
            data = d.as_slice();
        }
        RegionKind::Wait | RegionKind::Runtime(_) => {}
    }
    json!({
        "id": region.id,
        "function": region.function,
        "file": loc.file.display().to_string(),
        "line": loc.line,
        "kind": kind_text(&region.kind),
        "host_if_false": region.if_arg.and_then(|i| region.args.get(i as usize)).map(|a| a.c_expr.clone()),
        "kernels": kernels,
        "fusion": fusion,
        "predicted_pass": match &region.kind {
            RegionKind::Compute { kernels: handles, .. } => super::model::region_prediction_json(module, handles, &context.learned),
            _ => Value::Array(Vec::new()),
        },
        "data": data.iter().map(|s| data_move(region, s)).collect::<Vec<_>>(),
        "implicit": implicit,
    })
}
