//! Which consecutive kernels of a region one grid kernel may run, and how many redundant
//! iterations each needs at a block's edges: the dependence graph of the chain (flow
//! dependences with their distances per parallel dim, from the affine access forms), its
//! legality, and the extensions propagated in reverse order (the paper's left/right
//! extensions).

use std::collections::BTreeMap;

use crate::analysis::affine::{Affine, affine_of};
use crate::ir::*;

/// An access whose index along every array dim is one parallel dim's variable plus a constant
/// (`a[i-1][j+2]`): per array dim, outermost first, `(space dim, offset)`. Each space dim
/// appears once, so the array has as many dims as the space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitAccess {
    pub dims: Vec<(usize, i64)>,
}

impl UnitAccess {
    /// The offset along space dim `d`.
    pub fn offset(&self, d: usize) -> i64 {
        self.dims.iter().find(|(s, _)| *s == d).map(|(_, c)| *c).unwrap_or(0)
    }
    /// Whether both index the array's dims by the same space dims.
    fn same_layout(&self, other: &UnitAccess) -> bool {
        self.dims.len() == other.dims.len() && self.dims.iter().zip(&other.dims).all(|(a, b)| a.0 == b.0)
    }
}

/// What one kernel of a chain reads and writes, by region arg (arrays are the region's).
pub struct MemberAccesses {
    pub kernel: Handle<Kernel>,
    pub dims: usize,
    /// Every load of an array param; `None` where the index is not a [`UnitAccess`].
    pub reads: BTreeMap<u32, Vec<Option<UnitAccess>>>,
    /// Every store; the flag says whether it is a statement of the body's own block (run once
    /// by every iteration, not under a condition or in a loop).
    pub writes: BTreeMap<u32, Vec<(Option<UnitAccess>, bool)>>,
    /// A scalar param whose value an earlier kernel of the region computes (a reduction's
    /// result, a scalar a sequential kernel assigns), read at launch through its address: only
    /// the first kernel of a chain may have one.
    pub reads_earlier_results: Option<String>,
}

/// An array one kernel of the chain writes and a later one reads: the later ones read it from
/// an exchange array in shared memory.
#[derive(Clone, Debug)]
pub struct Intermediate {
    /// Index in the chain of the kernel that writes it.
    pub producer: usize,
    /// Where the producer stores it (one store per iteration).
    pub store: UnitAccess,
    /// Index in the chain of the last kernel that reads it.
    pub last_reader: usize,
    /// Per space dim: the redundant iterations `(left, right)` its readers need of it, within
    /// its producer's extension (the paper distributes a loop that defines several arrays so
    /// that each gets its own; here the producer computes and stores each array only where
    /// its readers need it, which comes to the same).
    pub needed: Vec<(i64, i64)>,
}

/// A flow dependence: `consumer` reads `arg`, which `producer` writes, at these distances per
/// space dim (reader's index minus writer's, smallest and largest).
#[derive(Clone, Debug)]
pub struct Edge {
    pub producer: usize,
    pub consumer: usize,
    pub arg: u32,
    pub distance: Vec<(i64, i64)>,
}

/// A legal chain.
#[derive(Clone, Debug)]
pub struct ChainPlan {
    pub members: Vec<Handle<Kernel>>,
    pub dims: usize,
    /// Per member, per space dim: the redundant iterations `(left, right)` it runs beyond its
    /// block so that the later kernels find in shared memory everything they read.
    pub extension: Vec<Vec<(i64, i64)>>,
    /// By region arg.
    pub intermediates: BTreeMap<u32, Intermediate>,
    pub edges: Vec<Edge>,
    /// How the members' arrays map to the region's (identity but for a chain of steps).
    pub versions: Versions,
}

/// For a chain whose members are a region's kernels repeated (the steps of a step loop,
/// `super::steps`): each store makes a new *version* of its array, keyed by an id past the
/// region's args, and each load reads the latest version before it (the region arg itself when
/// no member before wrote the array: global memory). The plan's accesses, intermediates and
/// edges are by version; an ordinary chain has no versions and every id is its region arg.
#[derive(Clone, Debug, Default)]
pub struct Versions {
    /// Version -> its region arg.
    pub real: BTreeMap<u32, u32>,
    /// Per member: region arg -> the version its loads read.
    pub reads: Vec<BTreeMap<u32, u32>>,
    /// Per member: region arg -> the version its stores make.
    pub writes: Vec<BTreeMap<u32, u32>>,
    /// Per member: region arg of one of its params -> the region arg whose array it stands for
    /// in that step, where it is not its own (a step loop that swaps two arrays).
    pub roles: Vec<BTreeMap<u32, u32>>,
}

impl Versions {
    /// The region arg of version `id`.
    pub fn real(&self, id: u32) -> u32 {
        self.real.get(&id).copied().unwrap_or(id)
    }
    /// The region arg whose array member `m`'s param bound to `arg` stands for.
    pub fn role(&self, m: usize, arg: u32) -> u32 {
        self.roles.get(m).and_then(|r| r.get(&arg)).copied().unwrap_or(arg)
    }
    /// The version member `m` reads where it loads region arg `arg`.
    pub fn read(&self, m: usize, arg: u32) -> u32 {
        self.reads.get(m).and_then(|r| r.get(&arg)).copied().unwrap_or(arg)
    }
    /// The version member `m` makes where it stores to region arg `arg`.
    pub fn write(&self, m: usize, arg: u32) -> u32 {
        self.writes.get(m).and_then(|w| w.get(&arg)).copied().unwrap_or(arg)
    }
}

/// The first param of `kernels` bound to region arg `arg` (an array is one region arg, seen by
/// each kernel that names it through a param of its own).
pub fn param_of<'m>(module: &'m Module, kernels: &[Handle<Kernel>], arg: u32) -> Option<&'m Param> {
    kernels.iter().flat_map(|&k| module.kernels[k].params.iter()).find(|p| p.arg == arg)
}

/// The element type of the array at region arg `arg` in `kernels`.
pub fn elem_of(module: &Module, kernels: &[Handle<Kernel>], arg: u32) -> Option<ScalarType> {
    match &param_of(module, kernels, arg)?.kind {
        ParamKind::Array { elem, .. } => Some(*elem),
        _ => None,
    }
}

/// The largest number of redundant iterations a kernel may take along one dim, both sides
/// together: beyond it the recomputation outweighs what the chain saves.
pub const MAX_EXTENSION: i64 = 16;

/// The same for a chain of steps (`super::steps`), which saves a whole step's traffic per step
/// fused: the tile bounds it too (a kernel's redundant iterations fit in the tile), and the
/// runtime measures the step kernels against the unfused step.
pub const MAX_STEP_EXTENSION: i64 = 64;

/// What `handle` reads and writes, or why it cannot be in a fused chain.
pub fn member_accesses(module: &Module, region: &Region, handle: Handle<Kernel>) -> Result<MemberAccesses, String> {
    let k = &module.kernels[handle];
    let reads_earlier_results = k
        .params
        .iter()
        .find(|p| !p.kind.is_indexed() && matches!(region.args[p.arg as usize].kind, HostArgKind::ScalarOut(_)))
        .map(|p| p.name.clone());
    let name = &k.name;
    if k.space.is_empty() || k.sequential_reason.is_some() || !k.scalar_outputs.is_empty() {
        return Err(format!("`{name}` runs sequentially"));
    }
    if k.space.len() > 3 {
        return Err(format!("`{name}` has more than three parallel dims"));
    }
    if k.space.iter().any(|d| d.step != 1) {
        return Err(format!("`{name}` has a parallel loop whose step is not 1"));
    }
    if module.reaches_addresses(&k.body) {
        return Err(format!("`{name}` accesses memory at computed addresses"));
    }
    if leaves_its_iteration(&k.body.block) {
        return Err(format!("`{name}` has a `break` or `continue` of its parallel loop"));
    }
    let dim_of = |v: Handle<Local>| k.space.iter().position(|d| d.var == v);
    let unit = |indices: &[Handle<Expr>]| -> Option<UnitAccess> {
        let mut dims = Vec::new();
        for &index in indices {
            let form: Affine = affine_of(&k.body, index)?;
            let [(1, mono)] = form.terms.as_slice() else { return None };
            if !mono.params.is_empty() {
                return None;
            }
            let d = dim_of(mono.var?)?;
            if dims.iter().any(|(e, _)| *e == d) {
                return None;
            }
            dims.push((d, form.constant));
        }
        (dims.len() == k.space.len()).then_some(UnitAccess { dims })
    };
    let array_arg = |p: u32| -> Result<u32, String> {
        let param = &k.params[p as usize];
        match &param.kind {
            ParamKind::Array { elem: ScalarType::F80, .. } => Err(format!("`{name}` accesses `{}`, of type long double", param.name)),
            ParamKind::Array { .. } => Ok(param.arg),
            _ => Err(format!("`{name}` indexes `{}` through a table of row pointers", param.name)),
        }
    };
    let mut reads: BTreeMap<u32, Vec<Option<UnitAccess>>> = BTreeMap::new();
    for (_, e) in k.body.exprs.iter() {
        if let ExprKind::Load { array: ArrayRef::Param(p), indices } = &e.kind {
            reads.entry(array_arg(*p)?).or_default().push(unit(indices));
        }
    }
    let mut writes: BTreeMap<u32, Vec<(Option<UnitAccess>, bool)>> = BTreeMap::new();
    let mut atomic = false;
    let mut stores: Vec<(u32, Option<UnitAccess>, bool)> = Vec::new();
    for stmt in &k.body.block {
        if let Stmt::Store { array: ArrayRef::Param(p), indices, .. } = stmt {
            stores.push((*p, unit(indices), true));
            continue;
        }
        for_each_stmt(std::slice::from_ref(stmt), &mut |s| match s {
            Stmt::Store { array: ArrayRef::Param(p), indices, .. } => stores.push((*p, unit(indices), false)),
            Stmt::Atomic { .. } => atomic = true,
            _ => {}
        });
    }
    if atomic {
        return Err(format!("`{name}` updates memory atomically"));
    }
    for (p, access, top_level) in stores {
        writes.entry(array_arg(p)?).or_default().push((access, top_level));
    }
    Ok(MemberAccesses { kernel: handle, dims: k.space.len(), reads, writes, reads_earlier_results })
}

/// Whether `block` has a `break`, `continue` or `return` outside any loop of its own (one that
/// would leave the parallel loop's iteration).
fn leaves_its_iteration(block: &[Stmt]) -> bool {
    block.iter().any(|s| match s {
        Stmt::Break | Stmt::Continue | Stmt::Return(_) => true,
        Stmt::If { then, otherwise, .. } => leaves_its_iteration(then) || leaves_its_iteration(otherwise),
        _ => false,
    })
}

/// The chain's dependence graph and extensions, or why the kernels may not run as one.
pub fn plan_chain(module: &Module, members: &[MemberAccesses]) -> Result<ChainPlan, String> {
    plan_versioned(module, members, Versions::default())
}

/// [`plan_chain`] for members whose accesses are by version (`versions`).
pub fn plan_versioned(module: &Module, members: &[MemberAccesses], versions: Versions) -> Result<ChainPlan, String> {
    let name = |m: usize| module.kernels[members[m].kernel].name.clone();
    let dims = members[0].dims;
    if let Some(m) = members.iter().position(|m| m.dims != dims) {
        return Err(format!("`{}` has {} parallel dims and `{}` {}", name(0), dims, name(m), members[m].dims));
    }
    let array_name =
        |m: usize, arg: u32| param_of(module, &[members[m].kernel], versions.real(arg)).map(|p| p.name.clone()).unwrap_or_default();
    if let Some((m, scalar)) = members.iter().enumerate().skip(1).find_map(|(m, a)| a.reads_earlier_results.as_ref().map(|s| (m, s))) {
        return Err(format!("`{}` reads `{scalar}`, which a kernel before it computes", name(m)));
    }
    let mut writer: BTreeMap<u32, usize> = BTreeMap::new();
    for (m, member) in members.iter().enumerate() {
        for &arg in member.writes.keys() {
            if let Some(&other) = writer.get(&arg) {
                return Err(format!("`{}` and `{}` both write `{}`", name(other), name(m), array_name(m, arg)));
            }
            writer.insert(arg, m);
        }
    }
    let mut intermediates = BTreeMap::new();
    let mut edges = Vec::new();
    for (&arg, &p) in &writer {
        let x = array_name(p, arg);
        if let Some(r) = (0..p).find(|&r| members[r].reads.contains_key(&arg)) {
            return Err(format!(
                "`{}` reads `{x}` before `{}` writes it: another block's redundant iterations could read the new values",
                name(r),
                name(p)
            ));
        }
        let readers: Vec<usize> = (p + 1..members.len()).filter(|&r| members[r].reads.contains_key(&arg)).collect();
        let Some(&last_reader) = readers.last() else { continue };
        let stores = &members[p].writes[&arg];
        let store = match stores.as_slice() {
            [(Some(access), true)] => access.clone(),
            _ => {
                return Err(format!(
                    "`{}` writes `{x}`, which `{}` reads, other than once per iteration at an index such as `{x}[i+c]`",
                    name(p),
                    name(readers[0])
                ));
            }
        };
        for &r in &readers {
            let mut distance = vec![(i64::MAX, i64::MIN); dims];
            for access in &members[r].reads[&arg] {
                let Some(access) = access.as_ref().filter(|a| a.same_layout(&store)) else {
                    return Err(format!(
                        "`{}` reads `{x}`, which `{}` writes, at an index other than the writer's plus constants",
                        name(r),
                        name(p)
                    ));
                };
                for (d, span) in distance.iter_mut().enumerate() {
                    // Offsets near the ends of i64 (the program's constants) are not planned
                    // with wrapped values: such a chain is not fused.
                    let Some(dist) = access.offset(d).checked_sub(store.offset(d)) else {
                        return Err(format!("`{}` reads `{x}` at an offset too far from where `{}` writes it to fuse them", name(r), name(p)));
                    };
                    *span = (span.0.min(dist), span.1.max(dist));
                }
            }
            edges.push(Edge { producer: p, consumer: r, arg, distance });
        }
        intermediates.insert(arg, Intermediate { producer: p, store, last_reader, needed: vec![(0, 0); dims] });
    }

    // Extensions, last kernel first: a consumer that runs iterations `[lo - L, hi + R)` and
    // reads at distance `e` needs its producer to have run `[lo - L + e, hi + R + e)`.
    let mut extension = vec![vec![(0i64, 0i64); dims]; members.len()];
    for consumer in (0..members.len()).rev() {
        for edge in edges.iter().filter(|e| e.consumer == consumer) {
            for (d, &(lo, hi)) in edge.distance.iter().enumerate() {
                let (left, right) = extension[consumer][d];
                let (Some(need_left), Some(need_right)) = (left.checked_sub(lo), right.checked_add(hi)) else {
                    return Err(format!("`{}` would need more redundant iterations along its dim {} than can be counted", name(edge.producer), d + 1));
                };
                let producer = &mut extension[edge.producer][d];
                producer.0 = producer.0.max(need_left);
                producer.1 = producer.1.max(need_right);
                let needed = &mut intermediates.get_mut(&edge.arg).expect("an edge's array is an intermediate").needed[d];
                needed.0 = needed.0.max(need_left);
                needed.1 = needed.1.max(need_right);
            }
        }
    }
    let limit = if versions.real.is_empty() { MAX_EXTENSION } else { MAX_STEP_EXTENSION };
    for (m, ext) in extension.iter().enumerate() {
        if let Some(d) = ext.iter().position(|(l, r)| l.checked_add(*r).is_none_or(|n| n > limit)) {
            return Err(format!(
                "`{}` would need {} redundant iterations along its dim {}, more than {limit}",
                name(m),
                ext[d].0 as i128 + ext[d].1 as i128,
                d + 1
            ));
        }
    }
    // A reduction counts each iteration once: its kernel runs no redundant iteration.
    for (m, member) in members.iter().enumerate() {
        if !module.kernels[member.kernel].reductions.is_empty() && extension[m].iter().any(|&(l, r)| l != 0 || r != 0) {
            return Err(format!(
                "`{}` has a reduction, and the kernels after it read what it writes at other iterations (it would need redundant iterations)",
                name(m)
            ));
        }
    }
    // A kernel that reads an array it writes is fused only when it reads exactly where it
    // writes and runs no redundant iteration (which could read another block's new values).
    for (&arg, &p) in &writer {
        let Some(reads) = members[p].reads.get(&arg) else { continue };
        let store = match members[p].writes[&arg].as_slice() {
            [(Some(access), _)] => Some(access),
            _ => None,
        };
        let in_place = store.is_some_and(|s| reads.iter().all(|r| r.as_ref() == Some(s)));
        if !in_place || extension[p].iter().any(|&(l, r)| l != 0 || r != 0) {
            return Err(format!(
                "`{}` reads `{}`, which it writes, elsewhere than where it writes it or with redundant iterations",
                name(p),
                array_name(p, arg)
            ));
        }
    }
    Ok(ChainPlan { members: members.iter().map(|m| m.kernel).collect(), dims, extension, intermediates, edges, versions })
}
