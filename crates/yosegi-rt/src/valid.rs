//! The IR verifier: checks the invariants every pass must keep (handles in range, types
//! consistent, grid-only constructs only in grid kernels). Runs between passes.
//!
//! A failure is a compiler bug, not a user error, so the result is a plain message naming the
//! kernel (or function or region) and the broken rule; the driver reports it as an internal
//! error. Type rules checked: binary operands have the same type (shift counts excepted) and
//! arithmetic yields it; comparisons, `!`, `&&` and `||` yield `Bool`; `?:` arms have the
//! node's type; loads have the element's value type and stores and assignments store values of
//! it. `F80` (the host's `long double` in memory) is only an element type: no expression, local,
//! scalar param, shared array, atomic element or reduction has it.

use crate::ir::*;

pub fn verify_module(module: &Module) -> Result<(), String> {
    for (_, f) in module.functions.iter() {
        verify_function(module, f)?;
    }
    for (_, k) in module.kernels.iter() {
        verify_kernel(module, k)?;
    }
    for (_, g) in module.grid_kernels.iter() {
        verify_grid_kernel(module, g)?;
    }
    for r in &module.regions {
        verify_region(module, r)?;
    }
    for f in &module.fusions {
        verify_fusion(module, f)?;
    }
    for l in &module.step_loops {
        if !module.regions.get(l.region as usize).is_some_and(|r| matches!(r.kind, RegionKind::Compute { .. })) {
            return Err(format!("step loop over `{}`: region {} is not a compute region", l.counter, l.region));
        }
    }
    for f in &module.step_fusions {
        verify_step_fusion(module, f)?;
    }
    Ok(())
}

/// A step fusion belongs to a step loop's region, and its grid kernel is a fused kernel of the
/// region's first kernel whose params are region args, each renamed pair two array params of
/// one arg.
pub fn verify_step_fusion(module: &Module, fusion: &StepFusion) -> Result<(), String> {
    let what = format!("{} steps of region {}", fusion.steps, fusion.region);
    if !module.step_loops.iter().any(|l| l.region == fusion.region) {
        return Err(format!("{what}: the region is not a step loop's"));
    }
    let Some(RegionKind::Compute { kernels, .. }) = module.regions.get(fusion.region as usize).map(|r| &r.kind) else {
        return Err(format!("{what}: not a compute region"));
    };
    let Some(grid) = module.grid_kernels.iter().find(|(h, _)| *h == fusion.grid).map(|(_, g)| g) else {
        return Err(format!("{what}: its grid kernel is out of range"));
    };
    if grid.variant.kind != VariantKind::Fused || Some(&grid.source) != kernels.first() {
        return Err(format!("{what}: `{}` is not a fused grid kernel of the region's first kernel", grid.name));
    }
    let nargs = module.regions[fusion.region as usize].args.len();
    if let Some(p) = grid.params.iter().find(|p| p.arg as usize >= nargs) {
        return Err(format!("{what}: param `{}` names arg {}, out of range", p.name, p.arg));
    }
    for &(out, input) in &fusion.renamed {
        let (Some(o), Some(i)) = (grid.params.get(out as usize), grid.params.get(input as usize)) else {
            return Err(format!("{what}: renamed params {out} and {input} are out of range"));
        };
        if o.arg != i.arg || !o.kind.is_indexed() || out == input {
            return Err(format!("{what}: `{}` and `{}` are not two params of one array", o.name, i.name));
        }
    }
    Ok(())
}

/// A fusion names consecutive kernels of a compute region and fused grid kernels whose params
/// are region args of that region.
pub fn verify_fusion(module: &Module, fusion: &Fusion) -> Result<(), String> {
    let what = format!("fusion of region {}", fusion.region);
    let Some(region) = module.regions.get(fusion.region as usize) else {
        return Err(format!("{what}: the region is out of range"));
    };
    let RegionKind::Compute { kernels, .. } = &region.kind else {
        return Err(format!("{what}: not a compute region"));
    };
    if fusion.members.len() < 2 || !kernels.windows(fusion.members.len()).any(|w| w == fusion.members.as_slice()) {
        return Err(format!("{what}: its kernels are not consecutive kernels of the region"));
    }
    let grids = std::iter::once(fusion.grid).chain(fusion.without_stores);
    for g in grids {
        let Some(grid) = module.grid_kernels.iter().find(|(h, _)| *h == g).map(|(_, grid)| grid) else {
            return Err(format!("{what}: grid kernel {g:?} is out of range"));
        };
        if grid.variant.kind != VariantKind::Fused || grid.source != fusion.members[0] {
            return Err(format!("{what}: `{}` is not a fused grid kernel of its first kernel", grid.name));
        }
        if let Some(p) = grid.params.iter().find(|p| p.arg as usize >= region.args.len()) {
            return Err(format!("{what}: param `{}` names arg {}, out of range", p.name, p.arg));
        }
    }
    Ok(())
}

pub fn verify_kernel(module: &Module, kernel: &Kernel) -> Result<(), String> {
    // A kernel written per thread is checked as the grid kernel it already is.
    let (level, shared) = match &kernel.explicit_grid {
        Some(g) => (Level::Grid, g.shared.as_slice()),
        None => (Level::Kernel, &[][..]),
    };
    let ctx = Ctx { module, what: format!("kernel `{}`", kernel.name), body: &kernel.body, params: &kernel.params, level, shared, reductions: &[] };
    if let Some(g) = &kernel.explicit_grid {
        if !kernel.space.is_empty() || !kernel.reductions.is_empty() {
            return ctx.err("a kernel written per thread has parallel dims or reductions".to_string());
        }
        for e in g.grid {
            ctx.expr(e)?;
        }
    }
    ctx.params()?;
    for d in &kernel.space {
        ctx.local_in_range(d.var)?;
        if kernel.body.locals[d.var].kind != LocalKind::LoopIndex {
            return ctx.err(format!("parallel dim variable `{}` is not a loop index", kernel.body.locals[d.var].name));
        }
        ctx.expr(d.start)?;
        ctx.expr(d.trip_count)?;
        if d.step == 0 {
            return ctx.err("a parallel dim has step 0".to_string());
        }
    }
    for (n, r) in kernel.reductions.iter().enumerate() {
        ctx.local_in_range(r.local)?;
        if kernel.body.locals[r.local].kind != LocalKind::Reduction(n as u32) {
            return ctx.err(format!("reduction {n}'s local is not of kind Reduction({n})"));
        }
    }
    for (l, _) in &kernel.scalar_outputs {
        ctx.local_in_range(*l)?;
    }
    for partition in &kernel.partitions {
        if partition.dim as usize >= kernel.space.len() {
            return ctx.err(format!("the partition's dim {} is out of range", partition.dim));
        }
        ctx.expr(partition.start)?;
        ctx.expr(partition.trip)?;
    }
    ctx.block(&kernel.body.block, Nesting::Outside)
}

pub fn verify_grid_kernel(module: &Module, grid: &GridKernel) -> Result<(), String> {
    let ctx = Ctx {
        module,
        what: format!("grid kernel `{}`", grid.name),
        body: &grid.body,
        params: &grid.params,
        level: Level::Grid,
        shared: &grid.shared,
        reductions: &grid.reductions,
    };
    if grid.source.index() >= module.kernels.len() {
        return ctx.err(format!("source kernel {:?} is out of range", grid.source));
    }
    ctx.params()?;
    let threads: u64 = grid.launch.block.iter().map(|b| *b as u64).product();
    if grid.launch.block.contains(&0) || threads > 1024 {
        return ctx.err(format!("block shape {:?} is empty or over 1024 threads", grid.launch.block));
    }
    for g in grid.launch.grid {
        ctx.expr(g)?;
        if contains_grid_index(&grid.body, g) {
            return ctx.err("a grid size depends on thread or block indices".to_string());
        }
    }
    for s in &grid.shared {
        if s.dims.is_empty() || s.dims.contains(&0) {
            return ctx.err(format!("shared array `{}` has no elements", s.name));
        }
    }
    for (l, _) in &grid.scalar_outputs {
        ctx.local_in_range(*l)?;
    }
    ctx.block(&grid.body.block, Nesting::Outside)
}

pub fn verify_function(module: &Module, function: &Function) -> Result<(), String> {
    let ctx = Ctx { module, what: format!("function `{}`", function.name), body: &function.body, params: &[], level: Level::Function, shared: &[], reductions: &[] };
    for p in &function.params {
        ctx.local_in_range(*p)?;
    }
    ctx.block(&function.body.block, Nesting::Outside)
}

pub fn verify_region(module: &Module, region: &Region) -> Result<(), String> {
    let what = format!("region {}", region.id);
    let nargs = region.args.len() as u32;
    let arg_ok = |a: u32| if a < nargs { Ok(()) } else { Err(format!("{what}: arg {a} is out of range ({nargs} args)")) };
    if let Some(a) = region.if_arg {
        arg_ok(a)?;
    }
    let data = match &region.kind {
        RegionKind::Compute { kernels, data } => {
            for k in kernels {
                if k.index() >= module.kernels.len() {
                    return Err(format!("{what}: kernel {k:?} is out of range"));
                }
                for p in &module.kernels[*k].params {
                    arg_ok(p.arg)?;
                }
                for r in &module.kernels[*k].reductions {
                    arg_ok(r.target_arg)?;
                }
                for partition in &module.kernels[*k].partitions {
                    for a in [partition.first_arg, partition.count_arg] {
                        arg_ok(a)?;
                        if region.args[a as usize].kind != HostArgKind::Int {
                            return Err(format!("{what}: partition arg {a} is not an Int"));
                        }
                    }
                }
            }
            data.as_slice()
        }
        RegionKind::Data { data } | RegionKind::EnterData { data } | RegionKind::ExitData { data, .. } | RegionKind::Update { data } => {
            data.as_slice()
        }
        RegionKind::Wait => &[],
        RegionKind::Runtime(r) => {
            for a in r.device_num.iter().chain(&r.default_async) {
                arg_ok(*a)?;
            }
            &[]
        }
    };
    for d in data {
        arg_ok(d.base)?;
        if let Some(lo) = d.lo {
            arg_ok(lo)?;
        }
        if let Some(len) = d.len {
            arg_ok(len)?;
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Kernel,
    Grid,
    Function,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Nesting {
    Outside,
    InLoop,
}

struct Ctx<'a> {
    module: &'a Module,
    what: String,
    body: &'a Body,
    params: &'a [Param],
    level: Level,
    shared: &'a [SharedArray],
    reductions: &'a [GridReduction],
}

fn contains_grid_index(body: &Body, h: Handle<Expr>) -> bool {
    let e = &body.exprs[h];
    match &e.kind {
        ExprKind::ThreadIdx(_) | ExprKind::BlockIdx(_) | ExprKind::BlockDim(_) | ExprKind::GridDim(_) => true,
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => contains_grid_index(body, *arg),
        ExprKind::Binary { lhs, rhs, .. } => contains_grid_index(body, *lhs) || contains_grid_index(body, *rhs),
        ExprKind::Select { cond, then, otherwise } => [cond, then, otherwise].iter().any(|x| contains_grid_index(body, **x)),
        ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => args.iter().any(|x| contains_grid_index(body, *x)),
        ExprKind::Load { indices, .. } => indices.iter().any(|x| contains_grid_index(body, *x)),
        ExprKind::ConstInt(_) | ExprKind::ConstFloat(_) | ExprKind::Param(_) | ExprKind::Local(_) => false,
    }
}

impl Ctx<'_> {
    fn err<T>(&self, message: String) -> Result<T, String> {
        Err(format!("{}: {message}", self.what))
    }

    fn local_in_range(&self, l: Handle<Local>) -> Result<(), String> {
        if l.index() >= self.body.locals.len() {
            return self.err(format!("local {l:?} is out of range"));
        }
        if self.body.locals[l].ty == ScalarType::F80 {
            return self.err(format!("local `{}` has the memory format F80", self.body.locals[l].name));
        }
        Ok(())
    }

    fn params(&self) -> Result<(), String> {
        if self.shared.iter().any(|s| s.elem == ScalarType::F80) || self.reductions.iter().any(|r| r.ty == ScalarType::F80) {
            return self.err("a shared array or a reduction of the memory format F80".to_string());
        }
        for p in self.params {
            if p.kind == ParamKind::Scalar(ScalarType::F80) {
                return self.err(format!("scalar param `{}` has the memory format F80", p.name));
            }
            if let ParamKind::Array { dims, .. } = &p.kind {
                if dims.is_empty() {
                    return self.err(format!("array param `{}` has no dimensions", p.name));
                }
                for d in dims.iter().skip(1) {
                    match d {
                        Some(h) => self.expr(*h)?,
                        None => return self.err(format!("array param `{}` has an unknown inner dimension", p.name)),
                    }
                }
            }
        }
        Ok(())
    }

    /// The element type of an array, checking the reference and its index count.
    fn array(&self, array: ArrayRef, nindices: usize) -> Result<ScalarType, String> {
        let (elem, want) = match array {
            ArrayRef::Param(n) => match self.params.get(n as usize).map(|p| &p.kind) {
                Some(ParamKind::Array { elem, dims, .. }) => (*elem, Some(dims.len())),
                // `a[i][j]`: the row pointer, then the element of the row.
                Some(ParamKind::RowTable { elem, .. }) => (*elem, Some(2)),
                Some(ParamKind::Scalar(_)) => return self.err(format!("param {n} is a scalar, indexed as an array")),
                None => return self.err(format!("array param {n} is out of range")),
            },
            ArrayRef::Local(l) => {
                self.local_in_range(l)?;
                let local = &self.body.locals[l];
                match &local.array_dims {
                    Some(dims) => (local.ty, Some(dims.len())),
                    None => return self.err(format!("local `{}` is a scalar, indexed as an array", local.name)),
                }
            }
            ArrayRef::Shared(n) => {
                if self.level != Level::Grid {
                    return self.err("shared memory outside a grid kernel".to_string());
                }
                match self.shared.get(n as usize) {
                    Some(s) => (s.elem, Some(s.dims.len())),
                    None => return self.err(format!("shared array {n} is out of range")),
                }
            }
            ArrayRef::Address(ty) => (ty, Some(1)),
            ArrayRef::Partials(n) => {
                if self.level != Level::Grid {
                    return self.err("reduction partials outside a grid kernel".to_string());
                }
                let Some(r) = self.reductions.get(n as usize) else {
                    return self.err(format!("partials of reduction {n}, which does not exist"));
                };
                return if nindices == 1 { Ok(r.ty) } else { self.err("partials take one index".to_string()) };
            }
        };
        if nindices == 0 || want.is_some_and(|w| w != nindices) {
            return self.err(format!("array indexed with {nindices} subscripts, expected {}", want.unwrap_or(1)));
        }
        Ok(elem)
    }

    fn ty(&self, h: Handle<Expr>) -> ScalarType {
        self.body.exprs[h].ty
    }

    fn expr(&self, h: Handle<Expr>) -> Result<(), String> {
        if h.index() >= self.body.exprs.len() {
            return self.err(format!("expression {h:?} is out of range"));
        }
        let e = &self.body.exprs[h];
        let mismatch = |what: &str| self.err(format!("{what} in expression {h:?}"));
        if e.ty == ScalarType::F80 {
            return mismatch("a value of the memory format F80");
        }
        match &e.kind {
            ExprKind::ConstInt(_) => {
                if e.ty.is_float() {
                    return mismatch("integer constant of a floating type");
                }
            }
            ExprKind::ConstFloat(_) => {
                if !e.ty.is_float() {
                    return mismatch("floating constant of an integer type");
                }
            }
            ExprKind::Param(n) => match self.params.get(*n as usize).map(|p| &p.kind) {
                Some(ParamKind::Scalar(_)) => {}
                Some(ParamKind::Array { .. } | ParamKind::RowTable { .. }) => {
                    return self.err(format!("array param {n} used as a scalar"));
                }
                None => return self.err(format!("param {n} is out of range")),
            },
            ExprKind::Local(l) => {
                self.local_in_range(*l)?;
                let local = &self.body.locals[*l];
                if local.array_dims.is_some() {
                    return self.err(format!("local array `{}` used as a scalar", local.name));
                }
                if local.ty != e.ty {
                    return mismatch("local read at a different type");
                }
            }
            ExprKind::Load { array, indices } => {
                for i in indices {
                    self.expr(*i)?;
                }
                let elem = self.array(*array, indices.len())?;
                if elem.value_type() != e.ty {
                    return mismatch("load typed differently from its element");
                }
            }
            ExprKind::Unary { op, arg } => {
                self.expr(*arg)?;
                let ok = match op {
                    UnaryOp::Not => e.ty == ScalarType::Bool,
                    UnaryOp::Neg => e.ty == self.ty(*arg),
                    UnaryOp::BitNot => e.ty == self.ty(*arg) && !e.ty.is_float(),
                };
                if !ok {
                    return mismatch("unary operator with the wrong type");
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.expr(*lhs)?;
                self.expr(*rhs)?;
                let (l, r) = (self.ty(*lhs), self.ty(*rhs));
                match op {
                    BinaryOp::LogAnd | BinaryOp::LogOr => {
                        if e.ty != ScalarType::Bool {
                            return mismatch("logical operator not yielding Bool");
                        }
                    }
                    BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne => {
                        if l != r {
                            return mismatch("comparison of operands of different types");
                        }
                        if e.ty != ScalarType::Bool {
                            return mismatch("comparison not yielding Bool");
                        }
                    }
                    BinaryOp::Shl | BinaryOp::Shr => {
                        if l != e.ty || l.is_float() || r.is_float() {
                            return mismatch("shift with the wrong types");
                        }
                    }
                    _ => {
                        if l != r || l != e.ty {
                            return mismatch("binary operands and result of different types");
                        }
                    }
                }
            }
            ExprKind::Select { cond, then, otherwise } => {
                self.expr(*cond)?;
                self.expr(*then)?;
                self.expr(*otherwise)?;
                if self.ty(*then) != e.ty || self.ty(*otherwise) != e.ty {
                    return mismatch("`?:` arms of a different type");
                }
            }
            ExprKind::Cast { arg } => self.expr(*arg)?,
            ExprKind::Math { args, .. } => {
                for a in args {
                    self.expr(*a)?;
                }
            }
            ExprKind::Call { func, args } => {
                for a in args {
                    self.expr(*a)?;
                }
                if func.index() >= self.module.functions.len() {
                    return self.err(format!("call of function {func:?}, out of range"));
                }
                let f = &self.module.functions[*func];
                if f.params.len() != args.len() {
                    return self.err(format!("call of `{}` with {} arguments, expected {}", f.name, args.len(), f.params.len()));
                }
            }
            ExprKind::ThreadIdx(_) | ExprKind::BlockIdx(_) | ExprKind::BlockDim(_) | ExprKind::GridDim(_) => {
                if self.level != Level::Grid {
                    return self.err("thread or block index outside a grid kernel".to_string());
                }
            }
        }
        Ok(())
    }

    fn block(&self, block: &[Stmt], nesting: Nesting) -> Result<(), String> {
        for s in block {
            self.stmt(s, nesting)?;
        }
        Ok(())
    }

    fn stmt(&self, s: &Stmt, nesting: Nesting) -> Result<(), String> {
        match s {
            Stmt::Assign { local, value } => {
                self.local_in_range(*local)?;
                self.expr(*value)?;
                let l = &self.body.locals[*local];
                if l.array_dims.is_some() {
                    return self.err(format!("assignment to local array `{}`", l.name));
                }
                if l.ty != self.ty(*value) {
                    return self.err(format!("assignment to `{}` of a value of another type", l.name));
                }
            }
            Stmt::Store { array, indices, value, .. } => {
                for i in indices {
                    self.expr(*i)?;
                }
                self.expr(*value)?;
                let elem = self.array(*array, indices.len())?;
                if elem.value_type() != self.ty(*value) {
                    return self.err("store of a value of another type than the element".to_string());
                }
            }
            Stmt::Atomic { op, array, indices, value, capture, .. } => {
                for i in indices {
                    self.expr(*i)?;
                }
                self.expr(*value)?;
                let elem = self.array(*array, indices.len())?;
                if elem == ScalarType::F80 {
                    return self.err("an atomic on an element of the memory format F80".to_string());
                }
                let integer_only = matches!(
                    op.binary(),
                    Some(BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor | BinaryOp::Shl | BinaryOp::Shr)
                );
                if integer_only && (elem.is_float() || self.ty(*value).is_float()) {
                    return self.err("a bit or shift atomic on a floating-point value".to_string());
                }
                if let Some(c) = capture {
                    self.local_in_range(*c)?;
                }
            }
            Stmt::If { cond, then, otherwise } => {
                self.expr(*cond)?;
                self.block(then, nesting)?;
                self.block(otherwise, nesting)?;
            }
            Stmt::Loop { cond, body, continuing, range, .. } => {
                if let Some(c) = cond {
                    self.expr(*c)?;
                }
                if let Some(r) = range {
                    self.local_in_range(r.var)?;
                    self.expr(r.start)?;
                    self.expr(r.end)?;
                    if r.step == 0 {
                        return self.err("a counted loop has step 0".to_string());
                    }
                }
                self.block(body, Nesting::InLoop)?;
                self.block(continuing, Nesting::InLoop)?;
            }
            Stmt::Break | Stmt::Continue => {
                if nesting != Nesting::InLoop {
                    return self.err("break or continue outside a loop".to_string());
                }
            }
            Stmt::Return(value) => {
                if self.level != Level::Function {
                    return self.err("return outside a device function".to_string());
                }
                if let Some(v) = value {
                    self.expr(*v)?;
                }
            }
            Stmt::Eval(e) => self.expr(*e)?,
            Stmt::Barrier => {
                if self.level != Level::Grid {
                    return self.err("barrier outside a grid kernel".to_string());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{B, array_param, kernel, scalar_param};

    fn module_with(k: Kernel) -> Module {
        let mut m = Module::default();
        m.kernels.append(k);
        m
    }

    fn simple() -> (B, Handle<Local>) {
        let mut b = B::new();
        let i = b.loop_var("i");
        (b, i)
    }

    #[test]
    fn a_well_formed_kernel_passes() {
        let (mut b, i) = simple();
        let zero = b.int(0);
        let n = b.param(0);
        let d = b.dim(i, zero, n);
        let ie = b.local(i);
        let v = b.float(1.0, ScalarType::F64);
        let st = b.store(1, vec![ie], v);
        b.body.block.push(st);
        let m = module_with(kernel("k", vec![scalar_param("n", 0), array_param("a", vec![None], 1)], vec![d], b.body));
        assert_eq!(verify_module(&m), Ok(()));
    }

    #[test]
    fn long_double_is_a_memory_format_only() {
        let mut b = B::new();
        let zero = b.int(0);
        let mut ld = array_param("a", vec![None], 0);
        if let ParamKind::Array { elem, .. } = &mut ld.kind {
            *elem = ScalarType::F80;
        }
        // A load of an F80 element yields an F64 value, which a store takes back.
        let load = b.add_expr(ExprKind::Load { array: ArrayRef::Param(0), indices: vec![zero] }, ScalarType::F64);
        let zero2 = b.int(0);
        b.body.block.push(Stmt::Store { array: ArrayRef::Param(0), indices: vec![zero2], value: load, span: Default::default() });
        assert_eq!(verify_module(&module_with(kernel("k", vec![ld.clone()], vec![], b.body.clone()))), Ok(()));
        // No value, local or atomic has the format itself.
        let bad = b.add_expr(ExprKind::Load { array: ArrayRef::Param(0), indices: vec![zero] }, ScalarType::F80);
        b.body.block.push(Stmt::Eval(bad));
        let err = verify_module(&module_with(kernel("k", vec![ld.clone()], vec![], b.body.clone()))).unwrap_err();
        assert!(err.contains("memory format F80"), "{err}");
        let mut c = B::new();
        let x = c.new_local("x", ScalarType::F80, LocalKind::Var);
        let one = c.float(1.0, ScalarType::F64);
        c.body.block.push(Stmt::Assign { local: x, value: one });
        let err = verify_module(&module_with(kernel("k", vec![], vec![], c.body))).unwrap_err();
        assert!(err.contains("memory format F80"), "{err}");
    }

    #[test]
    fn mixed_operand_types_are_refused() {
        let (mut b, i) = simple();
        let zero = b.int(0);
        let one = b.float(1.0, ScalarType::F64);
        let bad = b.add_expr(ExprKind::Binary { op: BinaryOp::Add, lhs: zero, rhs: one }, ScalarType::F64);
        let x = b.new_local("x", ScalarType::F64, LocalKind::Var);
        b.body.block.push(Stmt::Assign { local: x, value: bad });
        let _ = i;
        let err = verify_module(&module_with(kernel("k", vec![], vec![], b.body))).unwrap_err();
        assert!(err.contains("binary operands and result of different types"), "{err}");
    }

    #[test]
    fn grid_only_constructs_are_refused_in_kernels() {
        let (mut b, _) = simple();
        let t = b.add_expr(ExprKind::ThreadIdx(Axis::X), ScalarType::I32);
        let x = b.new_local("x", ScalarType::I32, LocalKind::Var);
        b.body.block.push(Stmt::Assign { local: x, value: t });
        let err = verify_module(&module_with(kernel("k", vec![], vec![], b.body.clone()))).unwrap_err();
        assert!(err.contains("thread or block index outside a grid kernel"), "{err}");
        let (mut b, _) = simple();
        b.body.block.push(Stmt::Barrier);
        let err = verify_module(&module_with(kernel("k", vec![], vec![], b.body))).unwrap_err();
        assert!(err.contains("barrier outside a grid kernel"), "{err}");
    }

    #[test]
    fn out_of_range_handles_and_params_are_refused() {
        let (mut b, _) = simple();
        let p = b.param(3);
        let x = b.new_local("x", ScalarType::I32, LocalKind::Var);
        b.body.block.push(Stmt::Assign { local: x, value: p });
        let err = verify_module(&module_with(kernel("k", vec![scalar_param("n", 0)], vec![], b.body))).unwrap_err();
        assert_eq!(err, "kernel `k`: param 3 is out of range");
        let (mut b, _) = simple();
        b.body.block.push(Stmt::Eval(Handle::new(99)));
        let err = verify_module(&module_with(kernel("k", vec![], vec![], b.body))).unwrap_err();
        assert!(err.contains("out of range"), "{err}");
    }

    #[test]
    fn local_arrays_need_their_dims_and_return_needs_a_function() {
        let (mut b, _) = simple();
        let tmp = b.body.locals.append(Local {
            name: "tmp".into(),
            ty: ScalarType::F64,
            array_dims: Some(vec![3, 3]),
            kind: LocalKind::Var,
            span: Default::default(),
        });
        let zero = b.int(0);
        let v = b.float(0.0, ScalarType::F64);
        b.body.block.push(Stmt::Store { array: ArrayRef::Local(tmp), indices: vec![zero], value: v, span: Default::default() });
        let err = verify_module(&module_with(kernel("k", vec![], vec![], b.body))).unwrap_err();
        assert!(err.contains("indexed with 1 subscripts, expected 2"), "{err}");
        let (mut b, _) = simple();
        b.body.block.push(Stmt::Return(None));
        let err = verify_module(&module_with(kernel("k", vec![], vec![], b.body))).unwrap_err();
        assert!(err.contains("return outside a device function"), "{err}");
    }
}
