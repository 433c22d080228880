//! Loop fusion with redundant iterations: consecutive kernels of a compute region become one
//! grid kernel, so that an array one kernel writes and the next reads goes through shared
//! memory instead of a round trip through global memory.
//!
//! The method is the strip-mining fusion of the research (all loops tiled with one tile, a tile
//! per thread block; each kernel runs *redundant* iterations at its tile's edges so that the
//! later kernels find in the block everything they read; the values move between kernels in
//! shared-memory *exchange arrays*, a barrier between kernels), applied along every parallel
//! dim of 1-D, 2-D and 3-D nests:
//!
//! * [`chain`]: which kernels may share a launch (legality is checked, never assumed: a chain
//!   where a kernel reads an array a later one writes, two kernels write one array, or a reader
//!   indexes an intermediate other than as its writer does plus constants, is cut there), the
//!   dependence graph with its distances, and each kernel's extensions, propagated from the
//!   last kernel back;
//! * [`build`]: the tile, the exchange arrays (reused by later intermediates of the same type
//!   once their last reader has passed) and the fused grid kernel.
//!
//! A fused chain is a [`Fusion`] of the module: the runtime runs its grid kernel in place of
//! the chain's kernels when the choice says so (`runtime::fused`). Every array is still
//! written to global memory, at each block's own iterations, except intermediates that neither
//! the host nor any kernel outside the chain reads (scratch arrays): a second grid kernel
//! leaves out their stores, and runs instead of the first.
//!
//! The pass runs last: the members keep their own variants (staged, padded), which run when
//! the chain runs unfused.

pub mod build;
pub mod chain;
pub mod slice;
pub mod steps;

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::ir::*;
use crate::opt::PassConfig;

use chain::{ChainPlan, MemberAccesses};

/// Whether chains of kernels are fused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum FusionMode {
    /// No fused kernels are made (`--fusion off`).
    Off,
    /// Chains through which an array flows are fused when the estimate expects a gain; the
    /// runtime measures fused against unfused on the GPU and keeps the faster.
    #[default]
    Auto,
    /// Every legal chain of two or more kernels is fused and the fused kernel always runs where
    /// usable (for testing the transformation).
    On,
}

/// Fuses the chains of every compute region (see the module doc).
pub fn fuse_module(module: &mut Module, config: &PassConfig) {
    if config.fusion == FusionMode::Off {
        return;
    }
    let budget = config.shared.per_block() as u64;
    for r in 0..module.regions.len() {
        let RegionKind::Compute { kernels, .. } = &module.regions[r].kind else { continue };
        let kernels = kernels.clone();
        if kernels.len() < 2 {
            continue;
        }
        let mut i = 0;
        while i < kernels.len() {
            let first = match chain::member_accesses(module, &module.regions[r], kernels[i]) {
                Ok(first) => first,
                Err(reason) => {
                    if let Some(&next) = kernels.get(i + 1) {
                        refuse(module, r, kernels[i], next, reason);
                    }
                    i += 1;
                    continue;
                }
            };
            let mut members: Vec<MemberAccesses> = vec![first];
            let mut planned: Option<(ChainPlan, build::Layout)> = None;
            while let Some(&next) = kernels.get(i + members.len()) {
                let previous = members.last().expect("not empty").kernel;
                let attempt = chain::member_accesses(module, &module.regions[r], next).and_then(|access| {
                    members.push(access);
                    let plan = chain::plan_chain(module, &members)
                        .and_then(|plan| build::choose_layout(module, &plan, budget).map(|layout| (plan, layout)));
                    if plan.is_err() {
                        members.pop();
                    }
                    plan
                });
                match attempt {
                    Ok(p) => planned = Some(p),
                    Err(reason) => {
                        refuse(module, r, previous, next, reason);
                        break;
                    }
                }
            }
            let length = members.len();
            if let Some((plan, layout)) = planned {
                make_fusion(module, r, &plan, &layout, config.fusion);
            }
            i += length;
        }
    }
    steps::fuse_steps(module, config);
}

fn refuse(module: &mut Module, region: usize, previous: Handle<Kernel>, next: Handle<Kernel>, reason: String) {
    module.unfused.push(FusionRefusal { region: region as u32, previous, next, reason });
}

/// Bytes one iteration of member `m` moves to and from global memory, unfused and fused (each
/// array counted once per iteration: a stencil's neighbours come from the caches), and the
/// fused kernel's extra cost of its redundant iterations.
fn traffic(module: &Module, plan: &ChainPlan, layout: &build::Layout, m: usize, dropped: &BTreeSet<u32>) -> (f64, f64) {
    let k = &module.kernels[plan.members[m]];
    let versions = &plan.versions;
    let elem = |id: u32| chain::elem_of(module, &plan.members[m..=m], versions.real(id)).map_or(8.0, |e| e.size_bytes() as f64);
    let mut read = BTreeSet::new();
    let mut written = BTreeSet::new();
    for (_, e) in k.body.exprs.iter() {
        if let ExprKind::Load { array: ArrayRef::Param(p), .. } = e.kind {
            read.insert(versions.read(m, k.params[p as usize].arg));
        }
    }
    for_each_stmt(&k.body.block, &mut |s| {
        if let Stmt::Store { array: ArrayRef::Param(p), .. } = s {
            written.insert(versions.write(m, k.params[*p as usize].arg));
        }
    });
    let unfused: f64 = read.iter().chain(&written).map(|&a| elem(a)).sum();
    let from_tiles = |a: &u32| plan.intermediates.get(a).is_some_and(|i| i.producer < m);
    let global_reads: f64 = read.iter().filter(|a| !from_tiles(a)).map(|&a| elem(a)).sum();
    let stores: f64 = written.iter().filter(|a| !dropped.contains(a)).map(|&a| elem(a)).sum();
    let own: f64 = layout.tile.iter().map(|&t| t as f64).product();
    let widened: f64 = layout.tile.iter().zip(&plan.extension[m]).map(|(&t, &(l, r))| (t as i64 + l + r) as f64).product();
    // Redundant iterations read mostly what the block's own ones read (cache hits) and compute
    // again: counted at half their global reads.
    let redundant = (widened / own - 1.0) * global_reads * 0.5;
    (unfused, global_reads + stores + redundant)
}

pub(crate) fn estimate(module: &Module, plan: &ChainPlan, layout: &build::Layout, dropped: &BTreeSet<u32>) -> f64 {
    let (mut unfused, mut fused) = (0.0, 0.0);
    for m in 0..plan.members.len() {
        let (u, f) = traffic(module, plan, layout, m, dropped);
        unfused += u;
        fused += f;
    }
    if unfused == 0.0 { 1.0 } else { fused / unfused }
}

/// Intermediates whose global stores a fused kernel may leave out: arrays the host never
/// reads ([`Region::unread_on_host`]) that no kernel outside the chain names, in any region of
/// the function (they are its locals, so no other function's kernels reach them but through
/// a pointer the host would name). Every read of such an array is then a read of the chain's
/// own kernels, which take from the exchange arrays whatever the chain wrote, and from global
/// memory only elements nothing writes.
fn store_free_candidates(module: &Module, region: usize, plan: &ChainPlan) -> Vec<u32> {
    scratch_arrays(module, region, &plan.members, plan.intermediates.keys().copied())
}

/// Those of region args `args` that are scratch arrays of kernels `members` (see
/// [`store_free_candidates`]).
pub(crate) fn scratch_arrays(module: &Module, region: usize, members: &[Handle<Kernel>], args: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let here = &module.regions[region];
    let mut named_elsewhere: BTreeSet<&str> = BTreeSet::new();
    for r in module.regions.iter().filter(|r| r.function == here.function) {
        let RegionKind::Compute { kernels, .. } = &r.kind else { continue };
        for k in kernels.iter().filter(|k| !members.contains(k)) {
            named_elsewhere.extend(module.kernels[*k].params.iter().map(|p| r.args[p.arg as usize].c_expr.as_str()));
        }
    }
    args.into_iter()
        .filter(|&arg| here.unread_on_host.contains(&arg) && !named_elsewhere.contains(here.args[arg as usize].c_expr.as_str()))
        .collect()
}

fn make_fusion(module: &mut Module, region: usize, plan: &ChainPlan, layout: &build::Layout, mode: FusionMode) {
    let names: Vec<String> = plan.members.iter().map(|&k| module.kernels[k].name.clone()).collect();
    let ratio = estimate(module, plan, layout, &BTreeSet::new());
    if mode == FusionMode::Auto {
        let reason = if plan.intermediates.is_empty() {
            Some("no array flows from one to the next, so fusing saves no memory traffic".to_string())
        } else if ratio >= 1.0 {
            Some(format!("the estimate expects no gain (fused {ratio:.2} of unfused)"))
        } else {
            None
        };
        if let Some(reason) = reason {
            let (a, b) = (plan.members[0], plan.members[1]);
            refuse(module, region, a, b, reason);
            return;
        }
    }
    let candidates = store_free_candidates(module, region, plan);
    let notes = fusion_notes(module, plan, layout, &names);
    let name = format!("{}_fused", names[0]);
    let grid = build::build_fused(module, plan, layout, &BTreeSet::new(), name.clone(), ratio, notes.clone());
    let grid = module.grid_kernels.append(grid);
    let without_stores = if candidates.is_empty() {
        None
    } else {
        let dropped: BTreeSet<u32> = candidates.iter().copied().collect();
        let ratio = estimate(module, plan, layout, &dropped);
        let lean = build::build_fused(module, plan, layout, &dropped, format!("{name}_nostore"), ratio, notes.clone());
        Some(module.grid_kernels.append(lean))
    };
    let mut notes = notes;
    if let Some(lean) = &without_stores {
        let arrays: Vec<String> = candidates.iter().map(|&a| format!("`{}`", module.regions[region].args[a as usize].c_expr)).collect();
        notes.push(format!(
            "without stores: `{}` runs instead, leaving out the global stores of {}, which neither the host nor another kernel reads (estimated cost {:.2})",
            module.grid_kernels[*lean].name,
            arrays.join(", "),
            module.grid_kernels[*lean].variant.estimated_ratio
        ));
    }
    module.fusions.push(Fusion {
        region: region as u32,
        members: plan.members.clone(),
        grid,
        forced: mode == FusionMode::On,
        estimated_ratio: ratio,
        without_stores,
        notes,
    });
}

fn fusion_notes(module: &Module, plan: &ChainPlan, layout: &build::Layout, names: &[String]) -> Vec<String> {
    let var = |m: usize, d: usize| {
        let k = &module.kernels[plan.members[m]];
        k.body.locals[k.space[d].var].name.clone()
    };
    let array = |arg: u32| chain::param_of(module, &plan.members, arg).map(|p| p.name.clone()).unwrap_or_default();
    let mut notes = Vec::new();
    for e in &plan.edges {
        let mut text = format!("`{}` -> `{}` through `{}`, distance", names[e.producer], names[e.consumer], array(e.arg));
        for (d, &(lo, hi)) in e.distance.iter().enumerate() {
            let sep = if d == 0 { " " } else { ", " };
            if lo == hi {
                let _ = write!(text, "{sep}{lo} along {}", var(e.consumer, d));
            } else {
                let _ = write!(text, "{sep}{lo}..{hi} along {}", var(e.consumer, d));
            }
        }
        notes.push(text);
    }
    if plan.edges.is_empty() {
        notes.push("no array flows between the kernels".to_string());
    }
    for (m, ext) in plan.extension.iter().enumerate() {
        let parts: Vec<String> = ext
            .iter()
            .enumerate()
            .filter(|(_, (l, r))| *l != 0 || *r != 0)
            .map(|(d, (l, r))| format!("{} {l} left, {r} right", var(m, d)))
            .collect();
        let text = if parts.is_empty() { "none".to_string() } else { parts.join("; ") };
        notes.push(format!("redundant iterations of `{}`: {text}", names[m]));
    }
    for (&arg, inter) in &plan.intermediates {
        if inter.needed == plan.extension[inter.producer] {
            continue;
        }
        let parts: Vec<String> = inter.needed.iter().enumerate().map(|(d, (l, r))| format!("{} {l} left, {r} right", var(inter.producer, d))).collect();
        notes.push(format!("`{}` computes `{}` only where its readers need it: {}", names[inter.producer], array(arg), parts.join("; ")));
    }
    for (m, &member) in plan.members.iter().enumerate() {
        let k = &module.kernels[member];
        for (stmt, range) in k.body.block.iter().zip(slice::statement_ranges(module, plan, m)) {
            let (Stmt::Assign { local, .. }, Some(range)) = (stmt, range) else { continue };
            let parts: Vec<String> = range.iter().enumerate().map(|(d, (l, r))| format!("{} {l} left, {r} right", var(m, d))).collect();
            notes.push(format!("`{}` computes its local `{}` only where its statements need it: {}", names[m], k.body.locals[*local].name, parts.join("; ")));
        }
    }
    let tile: Vec<String> = layout.tile.iter().map(|t| t.to_string()).collect();
    notes.push(format!("tile: {} iterations per block, {} threads", tile.join(" x "), build::THREADS));
    for (n, buffer) in layout.buffers.iter().enumerate() {
        let held: Vec<String> = layout.buffer_of.iter().filter(|(_, b)| **b == n).map(|(a, _)| format!("`{}`", array(*a))).collect();
        notes.push(format!(
            "exchange array {} ({} x {}, {} bytes) holds {}",
            buffer.name,
            buffer.dims[0],
            buffer.elem.c_name(),
            buffer.bytes(),
            held.join(", then ")
        ));
    }
    let tile_reads: usize = plan
        .members
        .iter()
        .enumerate()
        .map(|(m, &h)| {
            let k = &module.kernels[h];
            k.body
                .exprs
                .iter()
                .filter(|(_, e)| match e.kind {
                    ExprKind::Load { array: ArrayRef::Param(p), .. } => {
                        plan.intermediates.get(&k.params[p as usize].arg).is_some_and(|i| i.producer < m)
                    }
                    _ => false,
                })
                .count()
        })
        .sum();
    notes.push(format!("saved per iteration: {tile_reads} global loads become shared-memory loads"));
    notes
}
