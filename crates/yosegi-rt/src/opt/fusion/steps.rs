//! Fusion across time steps: the region of a step loop (`Module::step_loops`) run `k` times in
//! one grid kernel, with `k`-deep halos of redundant iterations (overlapped tiling).
//!
//! The `k` steps are the chain of the region's kernels repeated `k` times, planned and built
//! by the chain fusion (`chain`, `build`) with one difference: a store makes a new *version*
//! of its array ([`chain::Versions`]), so one array may be written in every step and read in
//! the next. Values move between steps through the exchange arrays; only the last step's
//! values are stored to global memory (and none of a scratch array's). An array the steps
//! read from global memory before they write it (a stencil's input, `A` of `B = f(A); A = B`)
//! gets its final values through a second param bound to a second buffer of the same layout:
//! a block may not overwrite what its neighbours' redundant iterations still read. The
//! runtime alternates the two buffers and leaves the values where the unfused steps would
//! (`runtime::steps`).
//!
//! Legal when every kernel of the region may be in a chain (`chain::member_accesses`), has no
//! reduction and reads no value an earlier kernel computes, stores each array it writes once
//! per iteration at the top of its body at an index such as `a[i+c][j]` (so every step
//! writes the same elements and the last step's stores leave exactly what `k` unfused steps
//! leave), reads an array it writes only where it writes it, and no two kernels of the region
//! write one array; and when the chain of `k` steps is legal (`chain::plan_versioned`: distances
//! of the unit form, at most `MAX_EXTENSION` redundant iterations) and its exchange arrays fit
//! the shared-memory budget.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::*;
use crate::opt::PassConfig;

use super::FusionMode;
use super::build;
use super::chain::{self, MemberAccesses, Versions};

/// The step counts tried, in order: a larger one is tried only while the smaller are legal.
/// One step is a kernel only for a region of several kernels (its kernels as one launch, which
/// the chain fusion refuses where a kernel writes what an earlier one read: a stencil step of
/// two sweeps, `B = f(A); A = g(B)`).
pub const STEP_COUNTS: [u32; 4] = [1, 2, 4, 8];

/// Fuses the steps of every step loop's region (see the module doc).
pub fn fuse_steps(module: &mut Module, config: &PassConfig) {
    if config.fusion == FusionMode::Off {
        return;
    }
    let budget = config.shared.per_block() as u64;
    for l in module.step_loops.clone() {
        let region = l.region as usize;
        let RegionKind::Compute { kernels, .. } = &module.regions[region].kind else { continue };
        let kernels = kernels.clone();
        let base = match region_accesses(module, region, &kernels) {
            Ok(base) => base,
            Err(reason) => {
                module.steps_unfused.push((l.region, reason));
                continue;
            }
        };
        let mut made = 0;
        for k in STEP_COUNTS.into_iter().filter(|&k| k > 1 || kernels.len() > 1) {
            let (members, versions) = unrolled(&base, k, module.regions[region].args.len() as u32, l.swap);
            let planned = chain::plan_versioned(module, &members, versions)
                .and_then(|plan| build::choose_layout(module, &plan, budget).map(|layout| (plan, layout)));
            let (plan, layout) = match planned {
                Ok(p) => p,
                Err(reason) => {
                    module.steps_unfused.push((l.region, format!("{k} steps in one kernel: {reason}")));
                    break;
                }
            };
            if make_step_fusion(module, region, k, &plan, &layout, config.fusion) {
                made += 1;
            }
        }
        if made == 0 && !module.steps_unfused.iter().any(|(r, _)| *r == l.region) {
            module.steps_unfused.push((l.region, "no step count was found worth fusing".to_string()));
        }
    }
}

/// Each kernel's accesses, or why the region's steps cannot be fused.
fn region_accesses(module: &Module, region: usize, kernels: &[Handle<Kernel>]) -> Result<Vec<MemberAccesses>, String> {
    let mut writer: BTreeMap<u32, Handle<Kernel>> = BTreeMap::new();
    let mut out = Vec::new();
    for &h in kernels {
        let k = &module.kernels[h];
        let name = &k.name;
        let a = chain::member_accesses(module, &module.regions[region], h)?;
        if !k.reductions.is_empty() {
            return Err(format!("`{name}` has a reduction, whose value each step would need"));
        }
        if let Some(scalar) = &a.reads_earlier_results {
            return Err(format!("`{name}` reads `{scalar}`, which a kernel computes"));
        }
        for (&arg, stores) in &a.writes {
            let array = chain::param_of(module, &[h], arg).map(|p| p.name.clone()).unwrap_or_default();
            let [(Some(store), true)] = stores.as_slice() else {
                return Err(format!(
                    "`{name}` writes `{array}` other than once per iteration, unconditionally, at an index such as `{array}[i+c]`"
                ));
            };
            if let Some(other) = writer.insert(arg, h) {
                return Err(format!("`{}` and `{name}` both write `{array}`", module.kernels[other].name));
            }
            if a.reads.get(&arg).is_some_and(|reads| reads.iter().any(|r| r.as_ref() != Some(store))) {
                return Err(format!("`{name}` reads `{array}`, which it writes, elsewhere than where it writes it"));
            }
        }
        out.push(a);
    }
    Ok(out)
}

/// The chain of `steps` runs of the region's kernels (`base`), its accesses by version; new
/// versions are numbered from `first_id` (past the region's args). With `swap`, the two args
/// stand for each other in every other step.
fn unrolled(base: &[MemberAccesses], steps: u32, first_id: u32, swap: Option<(u32, u32)>) -> (Vec<MemberAccesses>, Versions) {
    let mut versions = Versions::default();
    let mut current: BTreeMap<u32, u32> = BTreeMap::new();
    let mut next = first_id;
    let mut members = Vec::new();
    for step in 0..steps {
        let roles: BTreeMap<u32, u32> = match swap {
            Some((x, y)) if step % 2 == 1 => BTreeMap::from([(x, y), (y, x)]),
            _ => BTreeMap::new(),
        };
        let role = |arg: u32| roles.get(&arg).copied().unwrap_or(arg);
        for a in base {
            let read_map: BTreeMap<u32, u32> =
                a.reads.keys().map(|&arg| (arg, current.get(&role(arg)).copied().unwrap_or(role(arg)))).collect();
            let mut write_map = BTreeMap::new();
            for &arg in a.writes.keys() {
                versions.real.insert(next, role(arg));
                write_map.insert(arg, next);
                next += 1;
            }
            members.push(MemberAccesses {
                kernel: a.kernel,
                dims: a.dims,
                reads: a.reads.iter().map(|(arg, r)| (read_map[arg], r.clone())).collect(),
                writes: a.writes.iter().map(|(arg, w)| (write_map[arg], w.clone())).collect(),
                reads_earlier_results: None,
            });
            current.extend(write_map.iter().map(|(&a, &v)| (role(a), v)));
            versions.reads.push(read_map);
            versions.writes.push(write_map);
            versions.roles.push(roles.clone());
        }
    }
    (members, versions)
}

/// Builds the grid kernel of `steps` steps; `false` when it is not worth making (auto mode, no
/// gain expected).
fn make_step_fusion(module: &mut Module, region: usize, steps: u32, plan: &chain::ChainPlan, layout: &build::Layout, mode: FusionMode) -> bool {
    let versions = &plan.versions;
    // The last version of each array, and the arrays read from global memory before written.
    let mut last: BTreeMap<u32, u32> = BTreeMap::new();
    for w in &versions.writes {
        last.extend(w.values().map(|&v| (versions.real(v), v)));
    }
    let read_first: BTreeSet<u32> =
        versions.reads.iter().flat_map(|r| r.values().copied()).filter(|v| !versions.real.contains_key(v)).collect();
    let renamed: BTreeSet<u32> = last.keys().copied().filter(|a| read_first.contains(a)).collect();
    let outputs: BTreeSet<u32> = renamed.iter().map(|a| last[a]).collect();
    let one_step = &plan.members[..plan.members.len() / steps as usize];
    let scratch: BTreeSet<u32> =
        super::scratch_arrays(module, region, one_step, last.keys().copied().filter(|a| !renamed.contains(a))).into_iter().collect();
    let final_versions: BTreeSet<u32> = last.iter().filter(|(a, _)| !scratch.contains(a)).map(|(_, &v)| v).collect();
    let dropped: BTreeSet<u32> = versions.real.keys().copied().filter(|v| !final_versions.contains(v)).collect();
    let ratio = super::estimate(module, plan, layout, &dropped);
    if mode == FusionMode::Auto && ratio >= 1.0 {
        module.steps_unfused.push((region as u32, format!("{steps} steps in one kernel: the estimate expects no gain (fused {ratio:.2} of unfused)")));
        return false;
    }
    let names: Vec<String> = one_step.iter().map(|&h| module.kernels[h].name.clone()).collect();
    let array = |arg: u32| chain::param_of(module, one_step, arg).map(|p| format!("`{}`", p.name)).unwrap_or_default();
    let plural = if steps == 1 { "" } else { "s" };
    let mut notes = vec![format!("{steps} step{plural} of {} in one kernel", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))];
    let ext: Vec<String> = plan.extension[0].iter().map(|(l, r)| format!("{l} left, {r} right")).collect();
    notes.push(format!("redundant iterations of the first step's first kernel: {}", ext.join("; ")));
    let tile: Vec<String> = layout.tile.iter().map(|t| t.to_string()).collect();
    notes.push(format!(
        "tile: {} iterations per block, {} threads; {} exchange arrays, {} bytes of shared memory",
        tile.join(" x "),
        build::THREADS,
        layout.buffers.len(),
        layout.shared_bytes()
    ));
    if !renamed.is_empty() {
        let list: Vec<String> = renamed.iter().map(|&a| array(a)).collect();
        notes.push(format!("read before written, so stored into a second buffer that the runtime alternates with the first: {}", list.join(", ")));
    }
    if !scratch.is_empty() {
        let list: Vec<String> = scratch.iter().map(|&a| array(a)).collect();
        notes.push(format!("never stored (scratch arrays nothing else reads): {}", list.join(", ")));
    }
    notes.push(format!("estimated cost of a step: {ratio:.2} of an unfused step"));
    let name = format!("{}_steps{steps}", names[0]);
    let (grid, pairs) = build::build_steps(module, plan, layout, &dropped, &outputs, name, ratio, notes.clone());
    let grid = module.grid_kernels.append(grid);
    module.step_fusions.push(StepFusion {
        region: region as u32,
        steps,
        grid,
        renamed: pairs,
        forced: mode == FusionMode::On,
        estimated_ratio: ratio,
        notes,
    });
    true
}
