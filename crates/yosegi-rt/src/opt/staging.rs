//! Shared-memory staging: for a mapped grid kernel whose read-only arrays are reused within a
//! block (stencil neighbours, a vector every thread scans) or read as columns, make a second
//! grid kernel, `<name>_staged`, whose threads first copy each selected group's per-block
//! footprint into a `__shared__` tile cooperatively (coalesced, innermost tile dim fastest),
//! wait at a barrier, then read the tile instead of global memory.
//!
//! The pass owns the *selection* (which groups of `analysis::footprint` are worth a tile and fit
//! the [`SharedMemoryBudget`]), the *transformation*, and the notes both variants carry for
//! `yosegi explain`. The analysis says what a block reads; this module decides and rewrites.
//!
//! What keeps it correct:
//! * a read-only array's tile never goes stale; the variant lists it in `staged_params` and the
//!   runtime launches the variant only when it aliases no written array;
//! * a written array is staged only when each element belongs to one thread (see
//!   `analysis::footprint`): the thread reads and writes its elements in the tile, and after a
//!   barrier that follows every thread's last write the block copies the tile back (copied in
//!   first when the kernel reads it or may leave elements unwritten, [`TileCopies`]); the
//!   runtime launches the variant only when that array aliases no other param;
//! * only loads that every guarded thread executes are rewritten; the others stay global;
//! * the copy-in loads a tile element only when its global index lies, per dim, in the hull of
//!   indices the original program reads (a mapped dim: `[start + lo, start + trip - 1 + hi]`), so
//!   staging never reads memory the program does not; elements outside stay unset and no
//!   rewritten load reads them;
//! * copies and barriers run at the top level of the body, outside the guard, so every thread
//!   of the block reaches every barrier.
//!
//! Data swapping: a group that follows a counted loop (`a[k]` in `for k < n`) and does not fit
//! whole is staged strip by strip. The loop must be a top-level statement of the guarded body
//! with block-uniform bounds and no `break`/`continue`; the guarded body is split around it:
//! `if (guard) { before }`, then `for (ks = lo; ks < hi; ks += S) { barrier; copy strip;
//! barrier; if (guard) { for (k = ks; k < min(ks + S, hi); k++) body } }`, then
//! `if (guard) { after }` (each guarded part re-runs the dim assignments; locals are per thread
//! and persist). Written tiles are never strip-mined.
//!
//! Coarsened variants ([`Coarsening`]) compute several points per thread: `<k>_staged_x4`
//! with tiles widened along `x`, and for 3-D stencils the streaming form `<k>_staged_z8`,
//! whose tiles are rings of planes sliding along `z` (a written tile's planes go back after
//! each point).
//!
//! The estimate is in global sectors per block (see `analysis::footprint`), plus a cost per
//! warp for each shared-memory access and each barrier; `estimated_ratio` is staged over plain.

use crate::analysis::affine::Affine;
use crate::analysis::footprint::{self, AccessFootprint, GroupDimKind, ReferenceGroup};
use crate::diag::Span;
use crate::ir::*;
use crate::opt::{PassConfig, StagingMode};

/// How much shared memory a block may use for tiles.
///
/// Defaults are for sm_90 (H100/H200): at most 48 KiB of static `__shared__` per block, 228 KiB
/// per SM of which the CUDA runtime reserves 1 KiB per resident block. We want 8 resident blocks
/// per SM (8 x 256 threads = 2048, the SM's thread limit) so staging does not cost occupancy:
/// the per-block budget is `min(48 KiB, 228 KiB / 8 - 1 KiB)` = 28 KiB. Existing shared arrays
/// (reduction trees) count against it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedMemoryBudget {
    pub static_per_block: u32,
    pub per_sm: u32,
    pub reserved_per_block: u32,
    pub resident_blocks_wanted: u32,
}

impl Default for SharedMemoryBudget {
    fn default() -> Self {
        SharedMemoryBudget { static_per_block: 48 * 1024, per_sm: 228 * 1024, reserved_per_block: 1024, resident_blocks_wanted: 8 }
    }
}

impl SharedMemoryBudget {
    /// Bytes of shared memory one block may use.
    pub fn per_block(&self) -> u32 {
        let share = self.per_sm / self.resident_blocks_wanted.max(1);
        self.static_per_block.min(share.saturating_sub(self.reserved_per_block))
    }
}

/// Sector-equivalents one warp's shared-memory access costs in the estimate: one wavefront,
/// without the tag lookup and address coalescing a global request (even an L1 hit) goes through,
/// so half of the one sector a broadcast global load costs.
const SHARED_ACCESS_COST: f64 = 0.5;
/// Sector-equivalents one warp's barrier costs in the estimate.
const BARRIER_COST: f64 = 2.0;

/// Adds a staged variant after every plain grid kernel where staging applies (see the module
/// doc), and writes the analysis into the plain variant's notes.
pub fn stage_module(module: &mut Module, config: &PassConfig) {
    let plain: Vec<Handle<GridKernel>> = module
        .grid_kernels
        .iter()
        .filter(|(_, g)| g.variant.kind == VariantKind::Global)
        .filter(|(_, g)| module.variants_of(g.source).iter().all(|v| module.grid_kernels[*v].variant.kind == VariantKind::Global))
        .map(|(h, _)| h)
        .collect();
    for h in plain {
        let grid = &module.grid_kernels[h];
        let space_dims = module.kernels[grid.source].space.len();
        let Some(fp) = footprint::analyse(grid, space_dims) else { continue };
        let plan = plan_staging(grid, &fp, config);
        let staged = (config.staging != StagingMode::Off && !plan.tiles.is_empty() && (config.staging == StagingMode::Force || plan.estimated_ratio < 1.0))
            .then(|| stage_kernel(grid, &fp, &plan, Coarsening::NONE));
        let budget = config.shared.per_block() as u64;
        let coarsened: Vec<GridKernel> = [Coarsening::wide_x(config.staged_points_per_thread), Coarsening::streaming_z(config.streamed_points_per_thread)]
            .into_iter()
            .filter(|&c| staged.is_some() && coarsening_applies(grid, &fp, &plan, c, budget))
            .map(|c| stage_kernel(grid, &fp, &plan, c))
            .collect();
        let mut notes = plan.analysis_notes.clone();
        notes.extend(plan.decision_notes.iter().cloned());
        notes.push(match (&staged, config.staging) {
            (_, StagingMode::Off) => "staging is off: no staged variant".to_string(),
            (None, _) if plan.tiles.is_empty() => "no staged variant".to_string(),
            (None, _) => format!("no staged variant: estimated {:.2}x the plain variant's memory cost (no gain)", plan.estimated_ratio),
            (Some(s), _) => format!("staged variant {} estimated at {:.2}x the plain variant's memory cost", s.name, plan.estimated_ratio),
        });
        module.grid_kernels[h].variant.notes.extend(notes);
        if let Some(s) = staged {
            module.grid_kernels.append(s);
        }
        for s in coarsened {
            module.grid_kernels.append(s);
        }
    }
}

/// How many points along one axis each thread of a staged variant computes, and how its tiles
/// serve them. With `n > 1` a block of `b` threads along `axis` covers `n * b` points there, and
/// each thread runs the kernel body `n` times, for the points `b` apart (so that a warp still
/// reads consecutive tile elements); the launch has `n` times fewer blocks along `axis`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coarsening {
    pub points_per_thread: u32,
    pub axis: Axis,
    pub tile: CoarsenedTile,
}

/// How a coarsened variant's tiles hold what its points read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoarsenedTile {
    /// Widened to all the block's points plus the halo, copied in once behind one barrier:
    /// the halo and the barrier are shared by `n` times the points, and each thread has `n`
    /// independent points' loads in flight.
    Wide,
    /// The streaming form of a 3-D stencil: along `axis` the tile keeps the one-point tile's
    /// `b + halo` planes as a ring (plane `u` of the covered range in slot `u % (b + halo)`),
    /// and each point copies in only the `b` planes it is the first to need, between two
    /// barriers. A plane is read from global memory once per `n * b` points instead of once
    /// per `b`, for twice the barriers of the one-point variant.
    SlidingRing,
}

impl Coarsening {
    pub const NONE: Coarsening = Coarsening { points_per_thread: 1, axis: Axis::X, tile: CoarsenedTile::Wide };

    pub fn wide_x(points_per_thread: u32) -> Coarsening {
        Coarsening { points_per_thread, axis: Axis::X, tile: CoarsenedTile::Wide }
    }

    pub fn streaming_z(points_per_thread: u32) -> Coarsening {
        Coarsening { points_per_thread, axis: Axis::Z, tile: CoarsenedTile::SlidingRing }
    }
}

/// The tile dim of `g` a sliding ring slides along: its one thread dim on `coarsening.axis`.
fn ring_dim(grid: &GridKernel, g: &ReferenceGroup, coarsening: Coarsening) -> Option<usize> {
    if coarsening.tile != CoarsenedTile::SlidingRing {
        return None;
    }
    let on_axis: Vec<usize> = g
        .dims
        .iter()
        .enumerate()
        .filter(|(_, d)| matches!(d.kind, GroupDimKind::Thread { binding } if grid.axes[binding].axis == coarsening.axis))
        .map(|(i, _)| i)
        .collect();
    match on_axis[..] {
        [d] => Some(d),
        _ => None,
    }
}

/// Whether `grid`'s staged variant can also be made with `coarsening`: it must change
/// something, the kernel must map a dim onto the axis and read that axis's `blockIdx` only
/// where the mapping computes thread positions (before the guard), no loop may be strip-mined,
/// and the tiles must fit the budget. A sliding ring also needs every tile to follow the axis
/// (a tile that does not would be reloaded per point for nothing) and one to have a halo
/// along it (without one nothing is kept from point to point).
fn coarsening_applies(grid: &GridKernel, fp: &AccessFootprint, plan: &StagingPlan, coarsening: Coarsening, budget: u64) -> bool {
    let axis = coarsening.axis;
    if coarsening.points_per_thread <= 1 || plan.strip.is_some() || !grid.axes.iter().any(|a| a.axis == axis) {
        return false;
    }
    if coarsening.tile == CoarsenedTile::SlidingRing {
        let rings: Vec<Option<usize>> = plan.tiles.iter().map(|t| ring_dim(grid, &fp.groups[t.group], coarsening)).collect();
        let halo_along = |(t, d): (&StagedTile, &Option<usize>)| d.is_some_and(|d| fp.groups[t.group].dims[d].hi > fp.groups[t.group].dims[d].lo);
        if rings.iter().any(Option::is_none) || !plan.tiles.iter().zip(&rings).any(halo_along) {
            return false;
        }
    }
    let reads_block = |e: Handle<Expr>| mentions(&grid.body, e, &|k| matches!(k, ExprKind::BlockIdx(a) if *a == axis));
    let positions_only = grid.body.block[..fp.guard_position].iter().all(|s| match s {
        Stmt::Assign { .. } => true,
        other => !other.root_exprs().into_iter().any(reads_block),
    });
    if !positions_only || grid.body.block[fp.guard_position].root_exprs().into_iter().any(reads_block) {
        return false;
    }
    let existing = grid.shared_memory_bytes();
    let tiles: u64 = plan
        .tiles
        .iter()
        .map(|t| {
            let g = &fp.groups[t.group];
            array_bytes(&coarsened_dims(grid, g, t, coarsening), g.elem)
        })
        .sum();
    existing + tiles <= budget
}

/// What one block covers along `grid.axes[binding]`: its threads along that axis, times the
/// points per thread along the coarsened axis.
fn covered_extent(grid: &GridKernel, binding: usize, coarsening: Coarsening) -> u32 {
    let threads = footprint::block_extent(grid, binding);
    if grid.axes[binding].axis == coarsening.axis { threads * coarsening.points_per_thread } else { threads }
}

/// A tile's extents when each thread computes `coarsening`'s points: widened along the axis,
/// or for a sliding ring the one-point tile's.
fn coarsened_dims(grid: &GridKernel, g: &ReferenceGroup, tile: &StagedTile, coarsening: Coarsening) -> Vec<u32> {
    if coarsening.tile == CoarsenedTile::SlidingRing {
        return tile.dims.clone();
    }
    g.dims
        .iter()
        .zip(&tile.dims)
        .map(|(d, &extent)| match d.kind {
            GroupDimKind::Thread { binding } => extent - footprint::block_extent(grid, binding) + covered_extent(grid, binding, coarsening),
            _ => extent,
        })
        .collect()
}

/// Whether some node of the expression tree at `e` satisfies `test`.
fn mentions(body: &Body, e: Handle<Expr>, test: &dyn Fn(&ExprKind) -> bool) -> bool {
    let kind = &body.exprs[e].kind;
    test(kind) || kind.operands().into_iter().any(|o| mentions(body, o, test))
}


/// A selected group and its tile.
#[derive(Clone, Debug)]
pub struct StagedTile {
    pub group: usize,
    /// Tile extent per array dim (loop dims of a strip-mined loop: strip length plus halo).
    pub dims: Vec<u32>,
    /// Whether the tile is refilled per strip of the data-swapped loop.
    pub per_strip: bool,
    pub copies: TileCopies,
}

/// What a tile's cooperative copies move between global and shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileCopies {
    /// A read-only array: copied in before the first read.
    In,
    /// A written array every thread writes all of (one subscript form, no halo, stores
    /// unconditional, no `return` in the body) and never reads: copied back after the last
    /// write only.
    Back,
    /// A written array the kernel also reads, or whose tile may hold elements no store
    /// reaches: copied in first (so those go back unchanged), and back after the last write.
    InAndBack,
}

impl TileCopies {
    fn of(g: &ReferenceGroup, fp: &AccessFootprint) -> TileCopies {
        match g.written {
            false => TileCopies::In,
            true if g.loaded || fp.guard_may_return || g.dims.iter().any(|d| d.hi != d.lo) => TileCopies::InAndBack,
            true => TileCopies::Back,
        }
    }
    fn copies_in(self) -> bool {
        self != TileCopies::Back
    }
    fn copies_back(self) -> bool {
        self != TileCopies::In
    }
    /// How many times the tile crosses between global and shared memory.
    fn crossings(self) -> u64 {
        if self == TileCopies::InAndBack { 2 } else { 1 }
    }
}

impl StagedTile {
    fn bytes(&self, elem: ScalarType) -> u64 {
        array_bytes(&self.dims, elem)
    }
}

/// The data-swapped loop: `footprint.loops[lp]` runs in strips of `strip` iterations.
#[derive(Clone, Copy, Debug)]
pub struct StripPlan {
    pub lp: usize,
    pub strip: u32,
}

/// What the pass decided for one kernel.
#[derive(Clone, Debug, Default)]
pub struct StagingPlan {
    pub tiles: Vec<StagedTile>,
    pub strip: Option<StripPlan>,
    /// One line per group and per rejected read.
    pub analysis_notes: Vec<String>,
    /// What is staged and what is not, and why.
    pub decision_notes: Vec<String>,
    pub estimated_ratio: f64,
}

enum TileShape {
    /// The whole footprint, loaded once before the guard.
    Whole(Vec<u32>),
    /// Follows a strip-mined loop: extents with the loop dim left for the strip length.
    Strip { lp: usize, loop_dim: usize, other: Vec<u32> },
}

fn group_bytes_per_unit(g: &ReferenceGroup, other: &[u32], loop_dim: usize) -> (u64, u64) {
    let unit = other
        .iter()
        .enumerate()
        .filter(|(d, _)| *d != loop_dim)
        .fold(1u64, |u, (_, &e)| u.saturating_mul(e as u64))
        .saturating_mul(g.elem.size_bytes() as u64);
    let halo = (g.dims[loop_dim].hi - g.dims[loop_dim].lo) as u64;
    (unit, unit.saturating_mul(halo))
}

/// Chooses the groups to stage (see [`StagingMode`]) and estimates the staged variant.
pub fn plan_staging(grid: &GridKernel, fp: &AccessFootprint, config: &PassConfig) -> StagingPlan {
    let mut plan = StagingPlan { estimated_ratio: 1.0, ..Default::default() };
    let elem_name = |t: ScalarType| t.c_name().to_string();
    for g in &fp.groups {
        let refs = if g.refs.len() == 1 { "1 ref".to_string() } else { format!("{} refs", g.refs.len()) };
        let verb = if g.refs.len() == 1 { "forms" } else { "form" };
        let unknown: Vec<String> = g
            .dims
            .iter()
            .filter_map(|d| match d.kind {
                GroupDimKind::Loop { lp } if fp.loops[lp].trip.is_none() => Some(format!(
                    " (loop {} trip unknown, taken as {})",
                    grid.body.locals[fp.loops[lp].var].name,
                    footprint::UNKNOWN_TRIP_ESTIMATE
                )),
                _ => None,
            })
            .collect();
        let extents: Vec<String> = extents_estimate(grid, fp, g).iter().map(|e| e.to_string()).collect();
        plan.analysis_notes.push(format!(
            "{}: {} {} {} one group, halo {}; block footprint {} {}s ({} B){}, {} accesses -> reuse {:.1}{}",
            grid.params[g.param as usize].name,
            refs,
            fp.group_pattern(grid, g),
            verb,
            AccessFootprint::halo_text(g),
            extents.join("x"),
            elem_name(g.elem),
            g.footprint_elems.saturating_mul(g.elem.size_bytes() as u64),
            unknown.concat(),
            g.accesses,
            g.reuse(),
            if g.uncoalesced(&grid.axes) { ", uncoalesced (column access)" } else { "" }
        ));
    }
    plan.analysis_notes.extend(fp.rejections.iter().cloned());

    let existing = grid.shared_memory_bytes();
    let budget = config.shared.per_block() as u64;
    let mut left = budget.saturating_sub(existing);
    let threads = fp.threads_per_block;

    // Most global traffic saved first: sectors the group's loads cost, less the copy and the
    // shared-memory accesses that replace them.
    let benefit = |g: &ReferenceGroup| {
        let copied = g.footprint_elems.saturating_mul(g.elem.size_bytes() as u64).saturating_mul(TileCopies::of(g, fp).crossings());
        g.plain_sectors - copied as f64 / 32.0 - g.accesses as f64 / 32.0 * SHARED_ACCESS_COST
    };
    let mut order: Vec<usize> = (0..fp.groups.len()).collect();
    order.sort_by(|a, b| benefit(&fp.groups[*b]).total_cmp(&benefit(&fp.groups[*a])));
    let mut strip_groups: Vec<(usize, usize, Vec<u32>)> = Vec::new();
    let mut strip_lp: Option<usize> = None;
    for gi in order {
        let g = &fp.groups[gi];
        let name = &grid.params[g.param as usize].name;
        let pattern = fp.group_pattern(grid, g);
        if config.staging != StagingMode::Force && g.reuse() <= 1.0 && !g.uncoalesced(&grid.axes) {
            let verb = if g.written { "accessed" } else { "read" };
            plan.decision_notes.push(format!("{pattern}: each element {verb} once per block and coalesced: not staged"));
            continue;
        }
        let copies = TileCopies::of(g, fp);
        let one_element_per_thread = g.dims.iter().all(|d| d.hi == d.lo && !matches!(d.kind, GroupDimKind::Loop { .. }));
        if config.staging != StagingMode::Force && g.written && one_element_per_thread {
            // `c[i] += ...` in a loop: the compiler keeps the element in a register (the
            // params are `__restrict__` when the launch finds them disjoint); a tile would
            // turn each access into a shared-memory one.
            plan.decision_notes.push(format!("{pattern}: not staged: one element per thread, which a register holds between its accesses"));
            continue;
        }
        if config.staging != StagingMode::Force && g.written && benefit(g) <= 0.0 {
            plan.decision_notes.push(format!("{pattern}: not staged: copying its tile in and back would cost more global traffic than its accesses"));
            continue;
        }
        let shape = match tile_shape(grid, fp, g) {
            Ok(s) => s,
            Err(why) => {
                plan.decision_notes.push(format!("{pattern}: not staged: {why}"));
                continue;
            }
        };
        let (lp, loop_dim, other) = match shape {
            TileShape::Whole(dims) => {
                let bytes = array_bytes(&dims, g.elem);
                if bytes <= left {
                    left -= bytes;
                    let back = match copies {
                        TileCopies::In => "",
                        TileCopies::Back => ", copied back after the last write",
                        TileCopies::InAndBack if g.loaded => ", copied in and back after the last write (the kernel reads and writes it)",
                        TileCopies::InAndBack => ", copied in and back after the last write (some of its elements may not be written)",
                    };
                    plan.decision_notes.push(format!("staged {name} ({pattern}) as tile {} ({bytes} B per block){back}", dims_text(&dims)));
                    plan.tiles.push(StagedTile { group: gi, dims, per_strip: false, copies });
                    continue;
                }
                if g.written {
                    plan.decision_notes.push(format!(
                        "{pattern}: not staged: its tile {} needs {bytes} B, over the {left} B left of the {budget} B budget (a written tile is copied back whole, never swapped in strips)",
                        dims_text(&dims)
                    ));
                    continue;
                }
                // A loop dim that does not fit whole may still be swapped in strips.
                match loop_strip_shape(grid, fp, g, &dims) {
                    Some(TileShape::Strip { lp, loop_dim, other }) => (lp, loop_dim, other),
                    _ => {
                        plan.decision_notes.push(format!(
                            "{pattern}: not staged: its tile {} needs {bytes} B, over the {left} B left of the {budget} B budget",
                            dims_text(&dims)
                        ));
                        continue;
                    }
                }
            }
            TileShape::Strip { .. } if g.written => {
                plan.decision_notes.push(format!("{pattern}: not staged: a written tile is copied back whole, never swapped in strips"));
                continue;
            }
            TileShape::Strip { lp, loop_dim, other } => (lp, loop_dim, other),
        };
        if strip_lp.is_none_or(|l| l == lp) {
            strip_lp = Some(lp);
            strip_groups.push((gi, loop_dim, other));
        } else {
            plan.decision_notes.push(format!("{pattern}: not staged: only one loop per kernel is strip-mined"));
        }
    }
    if let Some(lp) = strip_lp {
        // Strip length for the groups kept; the least beneficial go until a strip of 32 fits.
        let strip_for = |groups: &[(usize, usize, Vec<u32>)]| {
            let (unit, halo): (u64, u64) = groups
                .iter()
                .map(|(gi, loop_dim, other)| group_bytes_per_unit(&fp.groups[*gi], other, *loop_dim))
                .fold((0u64, 0u64), |a, b| (a.0.saturating_add(b.0), a.1.saturating_add(b.1)));
            let fit = left.saturating_sub(halo) / unit.max(1);
            let cap = 4 * threads as u64;
            if fit >= threads as u64 { (fit.min(cap) / threads as u64) * threads as u64 } else { (fit / 32) * 32 }
        };
        let mut strip = strip_for(&strip_groups);
        while strip == 0 && !strip_groups.is_empty() {
            let (gi, _, _) = strip_groups.pop().expect("not empty");
            plan.decision_notes.push(format!(
                "{}: not staged: with it not even a strip of 32 fits the {left} B left",
                fp.group_pattern(grid, &fp.groups[gi])
            ));
            strip = strip_for(&strip_groups);
        }
        let var = &grid.body.locals[fp.loops[lp].var].name;
        if strip > 0 {
            plan.strip = Some(StripPlan { lp, strip: strip as u32 });
            plan.decision_notes.push(format!("data swapping: loop {var} runs in strips of {strip}, each strip's data copied in between two barriers"));
            for (gi, loop_dim, other) in strip_groups {
                let g = &fp.groups[gi];
                let mut dims = other.clone();
                dims[loop_dim] = strip as u32 + (g.dims[loop_dim].hi - g.dims[loop_dim].lo) as u32;
                let tile = StagedTile { group: gi, dims, per_strip: true, copies: TileCopies::In };
                plan.decision_notes.push(format!(
                    "staged {} ({}) as tile {} ({} B per block), refilled per strip of {var}",
                    grid.params[g.param as usize].name,
                    fp.group_pattern(grid, g),
                    dims_text(&tile.dims),
                    tile.bytes(g.elem)
                ));
                plan.tiles.push(tile);
            }
        }
    }
    plan.estimated_ratio = estimate(grid, fp, &plan, Coarsening::NONE);
    plan
}

fn dims_text(dims: &[u32]) -> String {
    dims.iter().map(|d| format!("[{d}]")).collect()
}

/// Per dim the footprint extent as the analysis estimates it.
fn extents_estimate(grid: &GridKernel, fp: &AccessFootprint, g: &ReferenceGroup) -> Vec<u64> {
    g.dims
        .iter()
        .map(|d| {
            let halo = (d.hi - d.lo) as u64;
            match d.kind {
                GroupDimKind::Thread { binding } => footprint::block_extent(grid, binding) as u64 + halo,
                GroupDimKind::Loop { lp } => fp.loops[lp].trip_estimate() as u64 + halo,
                GroupDimKind::Uniform { .. } => halo + 1,
            }
        })
        .collect()
}

/// The tile a group needs, or why it cannot have one.
fn tile_shape(grid: &GridKernel, fp: &AccessFootprint, g: &ReferenceGroup) -> Result<TileShape, String> {
    match &grid.params[g.param as usize].kind {
        ParamKind::Array { dims, .. } if dims.iter().skip(1).any(Option::is_none) => {
            return Err("an inner dim of the array has no known extent".to_string());
        }
        // Its rows are separate objects, so no tile of neighbouring rows exists.
        ParamKind::RowTable { .. } => return Err("the array is a table of row pointers".to_string()),
        _ => {}
    }
    let loop_dims: Vec<usize> = g.dims.iter().enumerate().filter(|(_, d)| matches!(d.kind, GroupDimKind::Loop { .. })).map(|(i, _)| i).collect();
    let mut dims = Vec::new();
    for d in &g.dims {
        let halo = (d.hi - d.lo) as u32;
        dims.push(match d.kind {
            GroupDimKind::Thread { binding } => footprint::block_extent(grid, binding) + halo,
            GroupDimKind::Uniform { .. } => halo + 1,
            GroupDimKind::Loop { lp } => match fp.loops[lp].trip {
                Some(t) if (0..=1 << 20).contains(&t) => (t as u32).max(1) + halo,
                _ => 0,
            },
        });
    }
    if dims.contains(&0) {
        return match loop_dims[..] {
            [_] => loop_strip_shape(grid, fp, g, &dims).ok_or_else(|| "its loop is not a top-level loop of the kernel body, so it cannot be strip-mined".to_string()),
            _ => Err("it follows more than one sequential loop of unknown trip".to_string()),
        };
    }
    Ok(TileShape::Whole(dims))
}

/// The strip-mined shape of a group with exactly one loop dim, when that loop can be swapped.
fn loop_strip_shape(_grid: &GridKernel, fp: &AccessFootprint, g: &ReferenceGroup, dims: &[u32]) -> Option<TileShape> {
    let loop_dims: Vec<(usize, usize)> = g
        .dims
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match d.kind {
            GroupDimKind::Loop { lp } => Some((i, lp)),
            _ => None,
        })
        .collect();
    let [(loop_dim, lp)] = loop_dims[..] else { return None };
    let l = &fp.loops[lp];
    (l.top_level_position.is_some() && l.enclosing.is_empty()).then(|| TileShape::Strip { lp, loop_dim, other: dims.to_vec() })
}

/// Staged cost over plain cost, in sector-equivalents per block of the plain variant (a
/// coarsened block's copies and barrier are shared by `points_per_thread` such blocks).
fn estimate(grid: &GridKernel, fp: &AccessFootprint, plan: &StagingPlan, coarsening: Coarsening) -> f64 {
    if plan.tiles.is_empty() || fp.plain_sectors <= 0.0 {
        return 1.0;
    }
    let warps = fp.threads_per_block.div_ceil(32) as f64;
    let mut staged = fp.plain_sectors;
    let mut barriers = 0.0;
    if plan.tiles.iter().any(|t| !t.per_strip) {
        barriers += 1.0;
    }
    for t in &plan.tiles {
        let g = &fp.groups[t.group];
        staged -= g.plain_sectors;
        staged += g.accesses as f64 / 32.0 * SHARED_ACCESS_COST;
        let copied = if t.per_strip {
            let s = plan.strip.expect("per-strip tiles have a strip");
            let l = &fp.loops[s.lp];
            let strips = (l.trip_estimate() as f64 / s.strip as f64).ceil().max(1.0);
            // Per strip: the other dims' extents times the iterations it covers plus the halo.
            let loop_dim = g.dims.iter().position(|d| matches!(d.kind, GroupDimKind::Loop { lp } if lp == s.lp)).unwrap_or(0);
            let halo = (g.dims[loop_dim].hi - g.dims[loop_dim].lo) as f64;
            let other: f64 = t.dims.iter().enumerate().filter(|(d, _)| *d != loop_dim).map(|(_, &e)| e as f64).product();
            barriers = 2.0 * strips;
            other * (l.trip_estimate() as f64 + halo * strips)
        } else if let Some(d) = ring_dim(grid, g, coarsening) {
            // Per point its new planes, plus the first point's halo planes shared by all.
            let ring = t.dims[d] as f64;
            let planes = grid.launch.block[coarsening.axis.index()] as f64;
            let plane: f64 = t.dims.iter().map(|&e| e as f64).product::<f64>() / ring;
            plane * (planes + (ring - planes) / coarsening.points_per_thread as f64)
        } else {
            coarsened_dims(grid, g, t, coarsening).iter().map(|&d| d as f64).product::<f64>() / coarsening.points_per_thread as f64
        };
        staged += copied * t.copies.crossings() as f64 * g.elem.size_bytes() as f64 / 32.0;
    }
    match coarsening.tile {
        _ if plan.strip.is_some() => {}
        // One before and one after each point's reads of the ring.
        CoarsenedTile::SlidingRing if coarsening.points_per_thread > 1 => barriers = 2.0,
        _ => barriers /= coarsening.points_per_thread as f64,
    }
    staged += barriers * warps * BARRIER_COST;
    staged / fp.plain_sectors
}

/// Builds the staged variant of `grid` that `plan` describes: `<name>_staged`, or with
/// `coarsening` (see [`Coarsening`]) `<name>_staged_x<n>`.
pub fn stage_kernel(grid: &GridKernel, fp: &AccessFootprint, plan: &StagingPlan, coarsening: Coarsening) -> GridKernel {
    let points = coarsening.points_per_thread;
    let mut out = grid.clone();
    out.name = if points > 1 { format!("{}_staged_{}{points}", grid.name, coarsening.axis.name()) } else { format!("{}_staged", grid.name) };
    let tiles: Vec<StagedTile> = plan
        .tiles
        .iter()
        .map(|t| StagedTile { dims: coarsened_dims(grid, &fp.groups[t.group], t, coarsening), ..t.clone() })
        .collect();
    let estimated_ratio = if points > 1 { estimate(grid, fp, plan, coarsening) } else { plan.estimated_ratio };
    let mut staged_params: Vec<u32> = tiles.iter().map(|t| fp.groups[t.group].param).collect();
    staged_params.sort_unstable();
    staged_params.dedup();
    let mut notes = plan.decision_notes.clone();
    if points > 1 {
        let apart = grid.launch.block[coarsening.axis.index()];
        let axis = coarsening.axis.name();
        let shapes: Vec<String> = tiles
            .iter()
            .map(|t| format!("{} {}", grid.params[fp.groups[t.group].param as usize].name, dims_text(&t.dims)))
            .collect();
        notes.push(match coarsening.tile {
            CoarsenedTile::Wide => format!(
                "each thread computes {points} points along {axis}, {apart} apart: a block covers {} and shares one copy-in and barrier among them (tiles {})",
                points * apart,
                shapes.join(", ")
            ),
            CoarsenedTile::SlidingRing => format!(
                "streaming form: each thread computes {points} points along {axis}, {apart} apart; the tiles ({}) keep their planes along {axis} as a ring that slides with the points, and each point copies in only the {apart} planes it is the first to need, between two barriers",
                shapes.join(", ")
            ),
        });
    }
    out.variant = VariantInfo { kind: VariantKind::Staged, estimated_ratio, notes, staged_params };
    out.variant.notes.push(format!("estimated at {estimated_ratio:.2}x the plain variant's memory cost"));

    let mut e = Emitter { grid: &mut out, block: grid.launch.block, coarsening, point: None };
    let threads = grid.launch.block.iter().product::<u32>() as i64;
    let point = (points > 1).then(|| e.local("_st_p", ScalarType::I32));
    e.point = point;
    // Tile positions fit in `int` (a tile is at most 48 KiB): 32-bit arithmetic is far cheaper.
    let t_local = e.local("_st_t", ScalarType::I32);
    let ks_local = plan.strip.map(|_| e.local("_st_ks", ScalarType::I64));
    let mut head = Vec::new();
    let linear = e.linear_thread_id();
    head.push(Stmt::Assign { local: t_local, value: linear });

    let mut tile_arrays = Vec::new();
    for t in &tiles {
        let g = &fp.groups[t.group];
        let n = e.grid.shared.len() as u32;
        e.grid.shared.push(SharedArray { name: format!("{}_tile", grid.params[g.param as usize].name), elem: g.elem, dims: t.dims.clone() });
        tile_arrays.push(n);
    }

    // Rewrite every reference of every staged group to its tile (stores once the body is built).
    let mut store_sites = Vec::new();
    for (t, &n) in tiles.iter().zip(&tile_arrays) {
        let g = &fp.groups[t.group];
        let ring = ring_dim(grid, g, coarsening);
        for &r in &g.refs {
            let reference = &fp.references[r];
            let mut indices = Vec::new();
            for (dim, (d, s)) in g.dims.iter().zip(&reference.subscripts).enumerate() {
                let shift = s.form.offset() - d.lo;
                let base = match (&d.kind, &s.form) {
                    (&GroupDimKind::Thread { binding }, footprint::SubscriptForm::Thread { shift: Some(lp), .. }) => {
                        // `z + dz`: the tile index follows the loop over neighbour offsets too.
                        let position = e.thread_position(binding);
                        let var = fp.loops[*lp].var;
                        let ty = e.grid.body.locals[var].ty;
                        let value = e.expr(ExprKind::Local(var), ty);
                        let value = e.cast(value, ScalarType::I32);
                        e.bin(BinaryOp::Add, position, value)
                    }
                    (&GroupDimKind::Thread { binding }, _) => e.thread_position(binding),
                    (GroupDimKind::Uniform { .. }, _) => e.int32(0),
                    (&GroupDimKind::Loop { lp }, _) => {
                        let var = e.local_value(fp.loops[lp].var);
                        let origin = match (plan.strip, ks_local) {
                            // Only a per-strip tile starts at the strip; a whole tile along
                            // the same loop starts at the loop's start.
                            (Some(s), Some(ks)) if s.lp == lp && t.per_strip => e.local_value(ks),
                            _ => e.affine(&fp.loops[lp].start),
                        };
                        e.bin(BinaryOp::Sub, var, origin)
                    }
                };
                let index = e.offset(base, shift);
                indices.push(if ring == Some(dim) {
                    let slots = e.int32(t.dims[dim] as i64);
                    e.bin(BinaryOp::Rem, index, slots)
                } else {
                    index
                });
            }
            match &reference.site {
                footprint::ReferenceSite::Load(expr) => e.grid.body.exprs[*expr].kind = ExprKind::Load { array: ArrayRef::Shared(n), indices },
                footprint::ReferenceSite::Store { indices: global } => store_sites.push(StoreSite { param: g.param, global: global.clone(), shared: n, tile: indices }),
            }
        }
    }

    // The copies: whole tiles' copy-ins go before the guard, per-strip tiles' into the strip
    // loop, ring tiles' into the point loop, and copy-backs after the guarded body.
    let mut whole_copies = Vec::new();
    let mut strip_copies = Vec::new();
    // A sliding ring's copies: its halo planes once (`ring_first`), then each point's new
    // planes (`ring_per_point`, at tile plane `p * b + halo` of the covered range).
    let mut ring_first = Vec::new();
    let mut ring_per_point = Vec::new();
    let mut copies_back = Vec::new();
    let mut ring_back_per_point = Vec::new();
    for (t, &n) in tiles.iter().zip(&tile_arrays) {
        let g = &fp.groups[t.group];
        if let (Some(d), Some(p)) = (ring_dim(grid, g, coarsening), point) {
            let slots = t.dims[d];
            let planes = grid.launch.block[coarsening.axis.index()];
            let halo = slots - planes;
            if halo > 0 {
                let first = e.int32(0);
                ring_first.extend(e.copy_tile(fp, g, t, n, t_local, CopyWindow::Ring { dim: d, first, planes: halo }, CopyDirection::In, threads));
            }
            let p_value = e.expr(ExprKind::Local(p), ScalarType::I32);
            let step = e.int32(planes as i64);
            let passed = e.bin(BinaryOp::Mul, p_value, step);
            let first = e.offset(passed, halo as i64);
            let window = CopyWindow::Ring { dim: d, first, planes };
            if t.copies.copies_in() {
                ring_per_point.extend(e.copy_tile(fp, g, t, n, t_local, window, CopyDirection::In, threads));
            }
            if t.copies.copies_back() {
                // A written tile has no halo along the axis: each point's planes go back after
                // its body, each thread copying the elements it copies in for the next point.
                ring_back_per_point.extend(e.copy_tile(fp, g, t, n, t_local, window, CopyDirection::Back, threads));
            }
            continue;
        }
        let window = match ks_local {
            Some(ks) if t.per_strip => CopyWindow::Strip { start: ks },
            _ => CopyWindow::Whole,
        };
        if t.copies.copies_back() {
            copies_back.extend(e.copy_tile(fp, g, t, n, t_local, window, CopyDirection::Back, threads));
        }
        if !t.copies.copies_in() {
            continue;
        }
        let copy = e.copy_tile(fp, g, t, n, t_local, window, CopyDirection::In, threads);
        if t.per_strip {
            strip_copies.extend(copy);
        } else {
            whole_copies.extend(copy);
        }
    }
    let prefix = &grid.body.block[..fp.guard_position];
    let mut block: Vec<Stmt> = prefix.to_vec();
    block.extend(head);
    if !whole_copies.is_empty() {
        block.extend(whole_copies);
        block.push(Stmt::Barrier);
    }
    // The first point's barrier, after its own planes are in, also covers these.
    block.extend(ring_first);
    let Stmt::If { cond: guard, then, .. } = &grid.body.block[fp.guard_position] else {
        unreachable!("the analysis found the guard here")
    };
    match (plan.strip, ks_local, point) {
        (Some(s), Some(ks), _) => {
            let l = &fp.loops[s.lp];
            let pos = l.top_level_position.expect("strip-mined loops are top-level");
            let dims = then[..fp.dim_assignments].to_vec();
            let before = then[..pos].to_vec();
            let after: Vec<Stmt> = dims.iter().cloned().chain(then[pos + 1..].iter().cloned()).collect();
            let Stmt::Loop { body, continuing, .. } = &then[pos] else { unreachable!("the analysis found a loop here") };
            let start = e.affine(&l.start);
            let end = e.affine(&l.end);
            let var_ty = e.grid.body.locals[l.var].ty;
            // for (k = ks; k < min(ks + S, end); k++) body
            let ks_e = e.local_value(ks);
            let strip_len = e.int64(s.strip as i64);
            let strip_end = e.bin(BinaryOp::Add, ks_e, strip_len);
            let inner_end = e.bin(BinaryOp::Min, strip_end, end);
            let k_value = e.local_value(l.var);
            let k_wide = e.cast(k_value, ScalarType::I64);
            let inner_cond = e.bin(BinaryOp::Lt, k_wide, inner_end);
            let k_start = e.cast(ks_e, var_ty);
            let k_end = e.cast(inner_end, var_ty);
            let inner_loop = Stmt::Loop {
                cond: Some(inner_cond),
                test_first: true,
                body: body.clone(),
                continuing: continuing.clone(),
                range: Some(LoopRange { var: l.var, start: k_start, end: k_end, step: 1 }),
            };
            let mut strip_guarded = dims.clone();
            strip_guarded.push(Stmt::Assign { local: l.var, value: k_start });
            strip_guarded.push(inner_loop);
            let mut strip_body = vec![Stmt::Barrier];
            strip_body.extend(strip_copies);
            strip_body.push(Stmt::Barrier);
            strip_body.push(Stmt::If { cond: *guard, then: strip_guarded, otherwise: Vec::new() });
            let outer_cond = e.bin(BinaryOp::Lt, ks_e, end);
            let next = e.bin(BinaryOp::Add, ks_e, strip_len);
            block.push(Stmt::If { cond: *guard, then: before, otherwise: Vec::new() });
            block.push(Stmt::Assign { local: ks, value: start });
            block.push(Stmt::Loop { cond: Some(outer_cond), test_first: true, body: strip_body, continuing: vec![Stmt::Assign { local: ks, value: next }], range: None });
            block.push(Stmt::If { cond: *guard, then: after, otherwise: Vec::new() });
        }
        (_, _, Some(p)) => {
            // for (p = 0; p < points; p++) { positions of virtual block blockIdx.a * points + p; guard }
            // with a sliding ring: { new planes; barrier; positions; guard; barrier }
            let axis = coarsening.axis;
            let zero = e.int32(0);
            let count = e.int32(points as i64);
            let one = e.int32(1);
            let p_value = e.expr(ExprKind::Local(p), ScalarType::I32);
            let more = e.bin(BinaryOp::Lt, p_value, count);
            let next = e.bin(BinaryOp::Add, p_value, one);
            let block_index = e.expr(ExprKind::BlockIdx(axis), ScalarType::I32);
            let scaled = e.bin(BinaryOp::Mul, block_index, count);
            let virtual_block = e.bin(BinaryOp::Add, scaled, p_value);
            let mut per_point = Vec::new();
            if !ring_per_point.is_empty() {
                per_point.extend(ring_per_point);
                per_point.push(Stmt::Barrier);
            }
            for s in prefix {
                if let Stmt::Assign { local, value } = s
                    && mentions(&e.grid.body, *value, &|k| matches!(k, ExprKind::BlockIdx(a) if *a == axis))
                {
                    per_point.push(Stmt::Assign { local: *local, value: e.replace_block_index(axis, *value, virtual_block) });
                }
            }
            per_point.push(grid.body.block[fp.guard_position].clone());
            if coarsening.tile == CoarsenedTile::SlidingRing {
                // The next point's copy overwrites the planes this one read.
                per_point.push(Stmt::Barrier);
                per_point.extend(ring_back_per_point);
            }
            block.push(Stmt::Assign { local: p, value: zero });
            block.push(Stmt::Loop {
                cond: Some(more),
                test_first: true,
                body: per_point,
                continuing: vec![Stmt::Assign { local: p, value: next }],
                range: Some(LoopRange { var: p, start: zero, end: count, step: 1 }),
            });
            // The launch has `points` times fewer blocks along the axis.
            let blocks = e.grid.launch.grid[axis.index()];
            let ty = e.grid.body.exprs[blocks].ty;
            let round_up = e.expr(ExprKind::ConstInt(points as i64 - 1), ty);
            let divisor = e.expr(ExprKind::ConstInt(points as i64), ty);
            let padded = e.bin(BinaryOp::Add, blocks, round_up);
            e.grid.launch.grid[axis.index()] = e.bin(BinaryOp::Div, padded, divisor);
        }
        _ => block.push(grid.body.block[fp.guard_position].clone()),
    }
    if !copies_back.is_empty() {
        // Every thread's last write is in before any goes back.
        block.push(Stmt::Barrier);
        block.extend(copies_back);
    }
    block.extend(grid.body.block[fp.guard_position + 1..].iter().cloned());
    rewrite_stores(&mut block, &store_sites);
    out.body.block = block;
    crate::opt::fold::fold_body(&mut out.body);
    out
}

/// A store of the plain kernel that writes a tile in the staged one.
struct StoreSite {
    param: u32,
    /// The store's index expressions (what identifies it in the cloned statements).
    global: Vec<Handle<Expr>>,
    shared: u32,
    tile: Vec<Handle<Expr>>,
}

/// Points every store listed in `sites` at its tile.
fn rewrite_stores(block: &mut [Stmt], sites: &[StoreSite]) {
    for_each_stmt_mut(block, &mut |stmt| {
        if let Stmt::Store { array, indices, .. } = stmt
            && let Some(site) = sites.iter().find(|s| *array == ArrayRef::Param(s.param) && *indices == s.global)
        {
            *array = ArrayRef::Shared(site.shared);
            *indices = site.tile.clone();
        }
    });
}

/// Which way a cooperative copy loop moves a tile.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CopyDirection {
    /// Global memory into the tile.
    In,
    /// The tile back to global memory.
    Back,
}

/// Which part of a tile one cooperative copy loop fills.
#[derive(Clone, Copy)]
enum CopyWindow {
    /// All of it, from the footprint's origin.
    Whole,
    /// All of it, the strip-mined loop's dim from the strip's first iteration (the local).
    Strip { start: Handle<Local> },
    /// `planes` planes of a sliding ring's dim `dim`, from plane `first` (an `int`) of the
    /// range the block covers, plane `u` into slot `u % slots`.
    Ring { dim: usize, first: Handle<Expr>, planes: u32 },
}

/// Builds expressions in the staged kernel's arena (all index arithmetic in `long long`).
struct Emitter<'a> {
    grid: &'a mut GridKernel,
    block: [u32; 3],
    coarsening: Coarsening,
    /// The coarsened variant's point loop variable (`0..points`), when there is one.
    point: Option<Handle<Local>>,
}

impl Emitter<'_> {
    fn expr(&mut self, kind: ExprKind, ty: ScalarType) -> Handle<Expr> {
        self.grid.body.add_expr(kind, ty, Span::default())
    }
    fn int64(&mut self, v: i64) -> Handle<Expr> {
        self.expr(ExprKind::ConstInt(v), ScalarType::I64)
    }
    fn bin(&mut self, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        self.grid.body.add_binary(op, lhs, rhs)
    }
    fn cast(&mut self, arg: Handle<Expr>, ty: ScalarType) -> Handle<Expr> {
        self.grid.body.add_cast(arg, ty)
    }
    /// `base + c`, written `base - |c|` for a negative `c` (but `i64::MIN`, which has no
    /// `|c|`) and `base` for zero.
    fn offset(&mut self, base: Handle<Expr>, c: i64) -> Handle<Expr> {
        match c {
            0 => base,
            c if c < 0 && c != i64::MIN => {
                let k = self.constant(-c, base);
                self.bin(BinaryOp::Sub, base, k)
            }
            c => {
                let k = self.constant(c, base);
                self.bin(BinaryOp::Add, base, k)
            }
        }
    }
    fn const_value(&self, e: Handle<Expr>) -> Option<i64> {
        match self.grid.body.exprs[e].kind {
            ExprKind::ConstInt(v) => Some(v),
            _ => None,
        }
    }
    /// `a * b` (`long long`), `None` when it is zero; a factor of one is left out.
    fn product(&mut self, a: Handle<Expr>, b: Handle<Expr>) -> Option<Handle<Expr>> {
        match (self.const_value(a), self.const_value(b)) {
            (Some(0), _) | (_, Some(0)) => None,
            (Some(1), _) => Some(b),
            (_, Some(1)) => Some(a),
            _ => Some(self.bin(BinaryOp::Mul, a, b)),
        }
    }
    /// The constant `v` at the type of `like`.
    fn constant(&mut self, v: i64, like: Handle<Expr>) -> Handle<Expr> {
        let ty = self.grid.body.exprs[like].ty;
        self.expr(ExprKind::ConstInt(v), ty)
    }
    fn int32(&mut self, v: i64) -> Handle<Expr> {
        self.expr(ExprKind::ConstInt(v), ScalarType::I32)
    }
    fn thread_idx(&mut self, axis: Axis) -> Handle<Expr> {
        self.expr(ExprKind::ThreadIdx(axis), ScalarType::I32)
    }
    /// The thread's position within what its block covers along `grid.axes[binding]`:
    /// `threadIdx.a + p * blockDim.a` at point `p` of a coarsened variant's axis `a`.
    fn thread_position(&mut self, binding: usize) -> Handle<Expr> {
        let axis = self.grid.axes[binding].axis;
        let tid = self.thread_idx(axis);
        match self.point {
            Some(p) if axis == self.coarsening.axis => {
                let p_value = self.expr(ExprKind::Local(p), ScalarType::I32);
                let width = self.int32(footprint::block_extent(self.grid, binding) as i64);
                let skip = self.bin(BinaryOp::Mul, p_value, width);
                self.bin(BinaryOp::Add, tid, skip)
            }
            _ => tid,
        }
    }
    /// A copy of the expression tree at `e` that reads `by` wherever it read `blockIdx.<axis>`.
    fn replace_block_index(&mut self, axis: Axis, e: Handle<Expr>, by: Handle<Expr>) -> Handle<Expr> {
        let node = self.grid.body.exprs[e].clone();
        let mut kind = node.kind;
        let rebuilt = |em: &mut Self, h: &mut Handle<Expr>| *h = em.replace_block_index(axis, *h, by);
        match &mut kind {
            ExprKind::BlockIdx(a) if *a == axis => return self.cast(by, node.ty),
            ExprKind::Load { indices: hs, .. } | ExprKind::Math { args: hs, .. } | ExprKind::Call { args: hs, .. } => {
                hs.iter_mut().for_each(|h| rebuilt(self, h))
            }
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => rebuilt(self, arg),
            ExprKind::Binary { lhs, rhs, .. } => {
                rebuilt(self, lhs);
                rebuilt(self, rhs);
            }
            ExprKind::Select { cond, then, otherwise } => {
                rebuilt(self, cond);
                rebuilt(self, then);
                rebuilt(self, otherwise);
            }
            _ => return e,
        }
        self.grid.body.add_expr(kind, node.ty, node.span)
    }
    fn grid_index(&mut self, kind: ExprKind) -> Handle<Expr> {
        let e = self.expr(kind, ScalarType::I32);
        self.cast(e, ScalarType::I64)
    }
    fn local(&mut self, name: &str, ty: ScalarType) -> Handle<Local> {
        let span = self.grid.span;
        self.grid.body.locals.append(Local { name: name.to_string(), ty, array_dims: None, kind: LocalKind::Var, span })
    }
    fn local_value(&mut self, l: Handle<Local>) -> Handle<Expr> {
        let ty = self.grid.body.locals[l].ty;
        let v = self.expr(ExprKind::Local(l), ty);
        self.cast(v, ScalarType::I64)
    }
    /// `threadIdx.x + bx * threadIdx.y + bx * by * threadIdx.z`, without the axes of extent 1.
    fn linear_thread_id(&mut self) -> Handle<Expr> {
        let mut id = self.thread_idx(Axis::X);
        let mut below = self.block[0] as i64;
        for (axis, extent) in [(Axis::Y, self.block[1]), (Axis::Z, self.block[2])] {
            if extent > 1 {
                let t = self.thread_idx(axis);
                let scale = self.int32(below);
                let term = self.bin(BinaryOp::Mul, t, scale);
                id = self.bin(BinaryOp::Add, id, term);
            }
            below *= extent as i64;
        }
        id
    }
    /// A params-only affine form as a `long long` expression.
    fn affine(&mut self, form: &Affine) -> Handle<Expr> {
        let mut sum: Option<Handle<Expr>> = None;
        for (c, m) in &form.terms {
            let mut product = (*c != 1).then(|| self.int64(*c));
            for &p in &m.params {
                let ty = match self.grid.params[p as usize].kind {
                    ParamKind::Scalar(t) => t,
                    ParamKind::Array { .. } | ParamKind::RowTable { .. } => ScalarType::I64,
                };
                let v = self.expr(ExprKind::Param(p), ty);
                let v = self.cast(v, ScalarType::I64);
                product = Some(match product {
                    None => v,
                    Some(q) => self.bin(BinaryOp::Mul, q, v),
                });
            }
            let product = product.unwrap_or_else(|| self.int64(*c));
            sum = Some(match sum {
                None => product,
                Some(s) => self.bin(BinaryOp::Add, s, product),
            });
        }
        match sum {
            None => self.int64(form.constant),
            Some(s) => self.offset(s, form.constant),
        }
    }

    /// `lo <= address(element) <= hi`, where `[lo, hi]` is the range of linear element offsets
    /// the group's references read over the whole launch.
    fn linear_range_check(&mut self, fp: &AccessFootprint, g: &ReferenceGroup, extremes: &[(Handle<Expr>, Handle<Expr>, Handle<Expr>)]) -> Handle<Expr> {
        let row_strides = self.row_strides(g.param);
        let strides: Vec<Handle<Expr>> = g
            .dims
            .iter()
            .map(|d| {
                let row = row_strides[d.array_dim];
                match d.stride.as_constant() {
                    Some(1) => row,
                    _ => {
                        let s = self.affine(&d.stride);
                        self.bin(BinaryOp::Mul, row, s)
                    }
                }
            })
            .collect();
        let dot = |e: &mut Self, values: &mut dyn Iterator<Item = Handle<Expr>>| {
            let mut sum: Option<Handle<Expr>> = None;
            for (v, &s) in values.zip(&strides) {
                let Some(term) = e.product(s, v) else { continue };
                sum = Some(match sum {
                    None => term,
                    Some(acc) => e.bin(BinaryOp::Add, acc, term),
                });
            }
            sum.unwrap_or_else(|| e.int64(0))
        };
        let element = dot(self, &mut extremes.iter().map(|x| x.0));
        let first = dot(self, &mut extremes.iter().map(|x| x.1));
        let last = dot(self, &mut extremes.iter().map(|x| x.2));
        let mut low: Option<Handle<Expr>> = None;
        let mut high: Option<Handle<Expr>> = None;
        // The linear address grows with each subscript: its extremes are at the corners of
        // each reference's range of offsets.
        let mut shifts: Vec<Vec<i64>> = Vec::new();
        for &r in &g.refs {
            let mut corners: Vec<Vec<i64>> = vec![Vec::new()];
            for s in &fp.references[r].subscripts {
                let (lo, hi) = s.form.offset_range(&fp.loops);
                corners = corners.into_iter().flat_map(|c| [lo, hi].map(|o| c.iter().copied().chain([o]).collect::<Vec<i64>>())).collect();
            }
            shifts.extend(corners);
        }
        shifts.sort();
        shifts.dedup();
        for shift in shifts {
            let offsets: Vec<Handle<Expr>> = shift.iter().map(|&o| self.int64(o)).collect();
            let shift = dot(self, &mut offsets.into_iter());
            low = Some(low.map_or(shift, |l| self.bin(BinaryOp::Min, l, shift)));
            high = Some(high.map_or(shift, |h| self.bin(BinaryOp::Max, h, shift)));
        }
        let lo = self.bin(BinaryOp::Add, first, low.expect("a group has references"));
        let hi = self.bin(BinaryOp::Add, last, high.expect("a group has references"));
        let ge = self.bin(BinaryOp::Ge, element, lo);
        let le = self.bin(BinaryOp::Le, element, hi);
        self.bin(BinaryOp::LogAnd, ge, le)
    }

    /// Per array dim of param `p`, its elements' distance in the row-major layout (the product
    /// of the inner dims' extents; `tile_shape` refuses arrays with an unknown inner dim).
    fn row_strides(&mut self, p: u32) -> Vec<Handle<Expr>> {
        let dims = match &self.grid.params[p as usize].kind {
            ParamKind::Array { dims, .. } => dims.clone(),
            ParamKind::Scalar(_) | ParamKind::RowTable { .. } => Vec::new(),
        };
        let mut strides = vec![self.int64(1); dims.len().max(1)];
        for a in (0..dims.len().saturating_sub(1)).rev() {
            let inner = match dims[a + 1] {
                Some(e) => self.cast(e, ScalarType::I64),
                None => self.int64(1),
            };
            strides[a] = self.product(strides[a + 1], inner).unwrap_or(inner);
        }
        strides
    }

    /// The cooperative copy of one tile. Thread `t` takes tile elements `t`, `t + THREADS`, ...
    /// (innermost dim fastest, so a warp reads consecutive addresses); it keeps the element's
    /// tile coordinates in one `int` local per dim and steps them by the digits of `THREADS` in
    /// the tile's mixed radix, with a carry, so the loop divides only once per thread, before
    /// it starts. An element is loaded when its global index lies, per dim, in the hull of
    /// indices the program reads: the hull's bounds are turned into tile coordinates (clamped
    /// to the tile, so they fit `int`) once, before the loop.
    #[allow(clippy::too_many_arguments)]
    fn copy_tile(
        &mut self,
        fp: &AccessFootprint,
        g: &ReferenceGroup,
        tile: &StagedTile,
        shared: u32,
        t_local: Handle<Local>,
        window: CopyWindow,
        direction: CopyDirection,
        threads: i64,
    ) -> Vec<Stmt> {
        let mut extents: Vec<i64> = tile.dims.iter().map(|&d| d as i64).collect();
        let strip_start = match window {
            CopyWindow::Strip { start } => Some(start),
            _ => None,
        };
        let ring = match window {
            CopyWindow::Ring { dim, first, planes } => {
                extents[dim] = planes as i64;
                Some((dim, first, tile.dims[dim] as i64))
            }
            _ => None,
        };
        let rank = extents.len();
        let mut strides = vec![1i64; rank];
        for d in (0..rank.saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * extents[d + 1];
        }
        let digit = |value: i64, d: usize| if d == 0 { value / strides[0] } else { (value / strides[d]) % extents[d] };
        let mut stmts = Vec::new();
        let coord_locals: Vec<Handle<Local>> = (0..rank).map(|d| self.local(&format!("_st_c{d}"), ScalarType::I32)).collect();
        for (d, &c) in coord_locals.iter().enumerate() {
            let t_value = self.expr(ExprKind::Local(t_local), ScalarType::I32);
            let q = if strides[d] == 1 {
                t_value
            } else {
                let s = self.int32(strides[d]);
                self.bin(BinaryOp::Div, t_value, s)
            };
            let value = if d == 0 {
                q
            } else {
                let ext = self.int32(extents[d]);
                self.bin(BinaryOp::Rem, q, ext)
            };
            stmts.push(Stmt::Assign { local: c, value });
        }
        let coords: Vec<Handle<Expr>> = coord_locals.iter().map(|&c| self.expr(ExprKind::Local(c), ScalarType::I32)).collect();
        // Per dim the element's position in the covered range (for a ring's dim, its plane
        // `first + c`), the range's extent, and the tile index it is stored at.
        let mut positions = coords.clone();
        let mut spans: Vec<i64> = tile.dims.iter().map(|&d| d as i64).collect();
        let mut slots = coords.clone();
        if let Some((dim, first, ring_slots)) = ring {
            if let GroupDimKind::Thread { binding } = g.dims[dim].kind {
                spans[dim] += covered_extent(self.grid, binding, self.coarsening) as i64 - footprint::block_extent(self.grid, binding) as i64;
            }
            if self.const_value(first) != Some(0) {
                positions[dim] = self.bin(BinaryOp::Add, first, coords[dim]);
                let modulus = self.int32(ring_slots);
                slots[dim] = self.bin(BinaryOp::Rem, positions[dim], modulus);
            }
        }

        let mut globals: Vec<(usize, Handle<Expr>)> = Vec::new();
        let mut inside: Option<Handle<Expr>> = None;
        // Per tile dim: the element's coordinate, and the first and last value of its variable.
        let mut extremes: Vec<(Handle<Expr>, Handle<Expr>, Handle<Expr>)> = Vec::new();
        for (d, gd) in g.dims.iter().enumerate() {
            let (origin, hull) = match &gd.kind {
                GroupDimKind::Thread { binding } => {
                    let b = self.grid.axes[*binding].clone();
                    let extent = covered_extent(self.grid, *binding, self.coarsening) as i64;
                    let bid = self.grid_index(ExprKind::BlockIdx(b.axis));
                    let bdim = self.int64(extent);
                    let first = self.bin(BinaryOp::Mul, bid, bdim);
                    let origin = self.bin(BinaryOp::Add, b.start, first);
                    let end = self.bin(BinaryOp::Add, b.start, b.trip);
                    let last = self.offset(end, -1);
                    (origin, Some((b.start, last)))
                }
                GroupDimKind::Loop { lp } => {
                    let l = &fp.loops[*lp];
                    let origin = match strip_start {
                        Some(ks) => self.local_value(ks),
                        None => self.affine(&l.start),
                    };
                    let start = self.affine(&l.start);
                    let end = self.affine(&l.end);
                    let last = self.offset(end, -1);
                    (origin, Some((start, last)))
                }
                GroupDimKind::Uniform { base } => (self.affine(base), None),
            };
            let at = self.offset(origin, gd.lo);
            let coord = self.cast(positions[d], ScalarType::I64);
            let global = self.bin(BinaryOp::Add, at, coord);
            let (var_first, var_last) = hull.unwrap_or((origin, origin));
            extremes.push((global, var_first, var_last));
            if let Some((first, last)) = hull {
                // origin + lo + c >= first + lo  <=>  c >= first - origin;
                // origin + lo + c <= last + hi   <=>  c <= last - origin + (hi - lo).
                let low = self.bin(BinaryOp::Sub, first, origin);
                let high = self.bin(BinaryOp::Sub, last, origin);
                let high = self.offset(high, gd.hi - gd.lo);
                let low = self.tile_bound(low, spans[d], &format!("_st_lo{d}"), &mut stmts);
                let high = self.tile_bound(high, spans[d], &format!("_st_hi{d}"), &mut stmts);
                let ge = self.bin(BinaryOp::Ge, positions[d], low);
                let le = self.bin(BinaryOp::Le, positions[d], high);
                let both = self.bin(BinaryOp::LogAnd, ge, le);
                inside = Some(match inside {
                    None => both,
                    Some(prev) => self.bin(BinaryOp::LogAnd, prev, both),
                });
            }
            let scaled = match gd.stride.as_constant() {
                Some(1) => global,
                _ => {
                    let stride = self.affine(&gd.stride);
                    self.bin(BinaryOp::Mul, stride, global)
                }
            };
            // Tile dims of one array dim (a linearised index) add up to its subscript.
            match globals.last_mut() {
                Some((array_dim, sum)) if *array_dim == gd.array_dim => *sum = self.bin(BinaryOp::Add, *sum, scaled),
                _ => globals.push((gd.array_dim, scaled)),
            }
        }
        // With a halo in two or more dims the box has corners no reference reads, and in a
        // row-major (or linearised) array a corner can fall outside the range of addresses the
        // kernel touches (`a[j][i-1]` at i = 0 reads the previous row's end, the corner
        // `a[j-1][i-1]` at j = 0 lies before the array): load only inside that address range.
        if g.dims.iter().filter(|d| d.hi > d.lo).count() >= 2 {
            let range = self.linear_range_check(fp, g, &extremes);
            inside = Some(match inside {
                None => range,
                Some(prev) => self.bin(BinaryOp::LogAnd, prev, range),
            });
        }
        let indices: Vec<Handle<Expr>> = globals.into_iter().map(|(_, index)| index).collect();
        let store = match direction {
            CopyDirection::In => {
                let value = self.expr(ExprKind::Load { array: ArrayRef::Param(g.param), indices }, g.elem);
                Stmt::Store { array: ArrayRef::Shared(shared), indices: slots, value, span: Span::default() }
            }
            CopyDirection::Back => {
                let value = self.expr(ExprKind::Load { array: ArrayRef::Shared(shared), indices: slots }, g.elem);
                Stmt::Store { array: ArrayRef::Param(g.param), indices, value, span: Span::default() }
            }
        };
        let copy = match inside {
            Some(cond) => Stmt::If { cond, then: vec![store], otherwise: Vec::new() },
            None => store,
        };

        // Step: add THREADS's digits, then carry from the innermost dim outwards (a digit and a
        // carry add up to less than twice the extent, so one subtraction is enough).
        let mut continuing = Vec::new();
        for d in 0..rank {
            let delta = digit(threads, d);
            if delta != 0 {
                let step = self.int32(delta);
                let next = self.bin(BinaryOp::Add, coords[d], step);
                continuing.push(Stmt::Assign { local: coord_locals[d], value: next });
            }
        }
        let mut may_overflow = vec![false; rank];
        for d in (1..rank).rev() {
            may_overflow[d] = digit(threads, d) != 0 || (d + 1 < rank && may_overflow[d + 1]);
            if !may_overflow[d] {
                continue;
            }
            let extent = self.int32(extents[d]);
            let over = self.bin(BinaryOp::Ge, coords[d], extent);
            let wrapped = self.bin(BinaryOp::Sub, coords[d], extent);
            let one = self.int32(1);
            let carried = self.bin(BinaryOp::Add, coords[d - 1], one);
            continuing.push(Stmt::If {
                cond: over,
                then: vec![Stmt::Assign { local: coord_locals[d], value: wrapped }, Stmt::Assign { local: coord_locals[d - 1], value: carried }],
                otherwise: Vec::new(),
            });
        }
        let outer = self.int32(extents[0]);
        let more = self.bin(BinaryOp::Lt, coords[0], outer);
        stmts.push(Stmt::Loop { cond: Some(more), test_first: true, body: vec![copy], continuing, range: None });
        stmts
    }

    /// `bound` (a `long long` tile coordinate) clamped to `[-1, extent]` in an `int` local
    /// assigned by a statement appended to `stmts`: comparing a coordinate in `0..extent`
    /// with it gives what comparing with `bound` gives.
    fn tile_bound(&mut self, bound: Handle<Expr>, extent: i64, name: &str, stmts: &mut Vec<Stmt>) -> Handle<Expr> {
        let below = self.int64(-1);
        let above = self.int64(extent);
        let raised = self.bin(BinaryOp::Max, bound, below);
        let clamped = self.bin(BinaryOp::Min, raised, above);
        let narrow = self.cast(clamped, ScalarType::I32);
        let local = self.local(name, ScalarType::I32);
        stmts.push(Stmt::Assign { local, value: narrow });
        self.expr(ExprKind::Local(local), ScalarType::I32)
    }
}

#[cfg(test)]
mod tests;
