//! A readable, deterministic, C-like listing of the IR: kernels (params, parallel dims, locals,
//! body), grid kernels (plus shared arrays, launch shape and reductions), device functions and
//! regions (host args as C expressions, data sections). `yosegi emit` prints it and the golden
//! tests snapshot it, so its layout changes only on purpose.
//!
//! Expressions print fully bracketed where C precedence could be misread: a binary or `?:`
//! operand that is itself binary or `?:` is wrapped in parentheses. Locals print by name; when
//! two locals of a body share a name, both print as `name_<index>`.

use std::fmt::Write;

use crate::ir::*;

/// The whole module: functions, kernels, grid kernels and regions, in arena order.
pub fn module_text(module: &Module) -> String {
    let mut out = String::new();
    for (_, f) in module.functions.iter() {
        out.push_str(&function_text(module, f));
        out.push('\n');
    }
    for (_, k) in module.kernels.iter() {
        out.push_str(&kernel_text(module, k));
        out.push('\n');
    }
    for (_, g) in module.grid_kernels.iter() {
        out.push_str(&grid_kernel_text(module, g));
        out.push('\n');
    }
    for r in &module.regions {
        out.push_str(&region_text(module, r));
        out.push('\n');
    }
    out
}

/// One expression of a kernel's body, with param and local names (for messages).
pub fn expr_text(body: &Body, params: &[Param], expr: Handle<Expr>) -> String {
    Printer::new(body, params, &[], None).expr(expr)
}

pub fn kernel_text(module: &Module, kernel: &Kernel) -> String {
    let p = Printer::new(&kernel.body, &kernel.params, &[], Some(module));
    let mut out = String::new();
    let _ = writeln!(out, "kernel {} {{", kernel.name);
    p.params(&mut out);
    for d in &kernel.space {
        let level = match d.level {
            LoopLevel::Gang => "gang",
            LoopLevel::Worker => "worker",
            LoopLevel::Vector => "vector",
            LoopLevel::Auto => "auto",
        };
        let mut hint = d.size_hint.map(|h| format!(" size {h}")).unwrap_or_default();
        if let Some(g) = d.gang_dim {
            hint.push_str(&format!(" gang dim {g}"));
        }
        let _ = writeln!(
            out,
            "  parallel for {} in {}.. step {} (trip {}) [{level}]{hint}",
            p.local(d.var),
            p.expr(d.start),
            d.step,
            p.expr(d.trip_count)
        );
    }
    for (n, r) in kernel.reductions.iter().enumerate() {
        let _ = writeln!(
            out,
            "  reduction {n}: {} {} {} -> arg {}{}",
            r.op.symbol(),
            r.ty.c_name(),
            p.local(r.local),
            r.target_arg,
            part_text(r.part)
        );
    }
    p.scalar_outputs(&mut out, &kernel.scalar_outputs);
    if let Some(reason) = &kernel.sequential_reason {
        let _ = writeln!(out, "  sequential: {}", reason.message);
    }
    p.locals(&mut out);
    p.block(&mut out, &kernel.body.block, 1);
    out.push_str("}\n");
    out
}

pub fn grid_kernel_text(module: &Module, grid: &GridKernel) -> String {
    let p = Printer::new(&grid.body, &grid.params, &grid.shared, Some(module));
    let mut out = String::new();
    let source = if grid.source.index() < module.kernels.len() {
        module.kernels[grid.source].name.clone()
    } else {
        format!("{:?}", grid.source)
    };
    let _ = writeln!(out, "grid kernel {} (from kernel {source}) {{", grid.name);
    p.params(&mut out);
    let b = grid.launch.block;
    let _ = writeln!(
        out,
        "  launch block {}x{}x{} grid ({}) x ({}) x ({})",
        b[0],
        b[1],
        b[2],
        p.expr(grid.launch.grid[0]),
        p.expr(grid.launch.grid[1]),
        p.expr(grid.launch.grid[2])
    );
    for s in &grid.shared {
        let dims: String = s.dims.iter().map(|d| format!("[{d}]")).collect();
        let _ = writeln!(out, "  shared {} {}{dims}", s.elem.c_name(), s.name);
    }
    for (n, r) in grid.reductions.iter().enumerate() {
        let _ = writeln!(out, "  reduction {n}: {} {} partials{n} -> arg {}{}", r.op.symbol(), r.ty.c_name(), r.target_arg, part_text(r.part));
    }
    p.scalar_outputs(&mut out, &grid.scalar_outputs);
    p.locals(&mut out);
    p.block(&mut out, &grid.body.block, 1);
    out.push_str("}\n");
    out
}

pub fn function_text(module: &Module, function: &Function) -> String {
    let p = Printer::new(&function.body, &[], &[], Some(module));
    let mut out = String::new();
    let params: Vec<String> = function
        .params
        .iter()
        .map(|l| {
            let ty = if l.index() < function.body.locals.len() { function.body.locals[*l].ty.c_name() } else { "?" };
            format!("{ty} {}", p.local(*l))
        })
        .collect();
    let result = function.result.map_or("void", |t| t.c_name());
    let _ = writeln!(out, "function {result} {}({}) {{", function.name, params.join(", "));
    p.locals(&mut out);
    p.block(&mut out, &function.body.block, 1);
    out.push_str("}\n");
    out
}

pub fn region_text(module: &Module, region: &Region) -> String {
    let mut out = String::new();
    let kind = match &region.kind {
        RegionKind::Compute { kernels, .. } => {
            let names: Vec<String> = kernels
                .iter()
                .map(|k| if k.index() < module.kernels.len() { module.kernels[*k].name.clone() } else { format!("{k:?}") })
                .collect();
            format!("compute [{}]", names.join(", "))
        }
        RegionKind::Data { .. } => "data".to_string(),
        RegionKind::EnterData { .. } => "enter data".to_string(),
        RegionKind::ExitData { finalize: false, .. } => "exit data".to_string(),
        RegionKind::ExitData { finalize: true, .. } => "exit data finalize".to_string(),
        RegionKind::Update { .. } => "update".to_string(),
        RegionKind::Wait => "wait".to_string(),
        RegionKind::Runtime(r) => {
            let mut t = format!("{:?}", r.op).to_lowercase();
            if !r.device_types.is_empty() {
                t.push_str(&format!(" device_type({})", r.device_types.join(", ")));
            }
            if let Some(a) = r.device_num {
                t.push_str(&format!(" device_num(arg {a})"));
            }
            if let Some(a) = r.default_async {
                t.push_str(&format!(" default_async(arg {a})"));
            }
            t
        }
    };
    let _ = writeln!(out, "region {} in {}: {kind} {{", region.id, region.function);
    for (n, a) in region.args.iter().enumerate() {
        let kind = match a.kind {
            HostArgKind::Int => "int".to_string(),
            HostArgKind::Float => "float".to_string(),
            HostArgKind::Pointer => "pointer".to_string(),
            HostArgKind::ScalarOut(t) => format!("out {}", t.c_name()),
        };
        let size = a.size_expr.as_ref().map(|s| format!(" (size {s})")).unwrap_or_default();
        let _ = writeln!(out, "  arg {n}: {kind} {}{size}", a.c_expr);
    }
    if let Some(i) = region.if_arg {
        let _ = writeln!(out, "  if arg {i}");
    }
    let data = match &region.kind {
        RegionKind::Compute { data, .. }
        | RegionKind::Data { data }
        | RegionKind::EnterData { data }
        | RegionKind::ExitData { data, .. }
        | RegionKind::Update { data } => data.as_slice(),
        RegionKind::Wait | RegionKind::Runtime(_) => &[],
    };
    for d in data {
        let lo = d.lo.map_or("0".to_string(), |a| format!("arg {a}"));
        let len = d.len.map_or("all".to_string(), |a| format!("arg {a}"));
        let _ = write!(out, "  data {:?} {} = arg {} [{lo} : {len}] elem {}", d.kind, d.name, d.base, d.elem_size);
        if let Some(rows) = &d.rows {
            let lo = rows.lo.map_or("0".to_string(), |a| format!("arg {a}"));
            let len = rows.len.map_or("all".to_string(), |a| format!("arg {a}"));
            let _ = write!(out, " rows [{lo} : {len}] elem {}", rows.elem_size);
        }
        out.push('\n');
    }
    out.push_str("}\n");
    out
}

struct Printer<'a> {
    body: &'a Body,
    params: &'a [Param],
    shared: &'a [SharedArray],
    module: Option<&'a Module>,
    local_names: Vec<String>,
}

impl<'a> Printer<'a> {
    fn new(body: &'a Body, params: &'a [Param], shared: &'a [SharedArray], module: Option<&'a Module>) -> Printer<'a> {
        // Counted once (a body may declare tens of thousands of locals).
        let mut uses: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (_, l) in body.locals.iter() {
            *uses.entry(l.name.as_str()).or_default() += 1;
        }
        let local_names = body
            .locals
            .iter()
            .map(|(h, l)| {
                if uses[l.name.as_str()] > 1 {
                    format!("{}_{}", l.name, h.index())
                } else {
                    l.name.clone()
                }
            })
            .collect();
        Printer { body, params, shared, module, local_names }
    }

    fn local(&self, l: Handle<Local>) -> String {
        self.local_names.get(l.index()).cloned().unwrap_or_else(|| format!("local{}", l.index()))
    }

    fn param_name(&self, n: u32) -> String {
        self.params.get(n as usize).map_or_else(|| format!("param{n}"), |p| p.name.clone())
    }

    fn array(&self, a: ArrayRef) -> String {
        match a {
            ArrayRef::Param(n) => self.param_name(n),
            ArrayRef::Local(l) => self.local(l),
            ArrayRef::Shared(n) => self.shared.get(n as usize).map_or_else(|| format!("shared{n}"), |s| s.name.clone()),
            ArrayRef::Partials(n) => format!("partials{n}"),
            ArrayRef::Address(ty) => format!("({} at address)", ty.c_name()),
        }
    }

    fn indices(&self, indices: &[Handle<Expr>]) -> String {
        let mut out = String::new();
        self.write_indices(indices, &mut out);
        out
    }

    fn write_indices(&self, indices: &[Handle<Expr>], out: &mut String) {
        for &i in indices {
            out.push('[');
            self.write_expr(i, out);
            out.push(']');
        }
    }

    /// Whether [`Self::write_operand`] brackets `h`: a binary (not `max`/`min`) or a `?:`.
    fn bracketed(&self, h: Handle<Expr>) -> bool {
        h.index() < self.body.exprs.len()
            && match self.body.exprs[h].kind {
                ExprKind::Binary { op, .. } => !matches!(op, BinaryOp::Max | BinaryOp::Min),
                ExprKind::Select { .. } => true,
                _ => false,
            }
    }

    /// An operand of a binary or `?:`: bracketed when it is one itself.
    fn write_operand(&self, h: Handle<Expr>, out: &mut String) {
        let bracket = self.bracketed(h);
        if bracket {
            out.push('(');
        }
        self.write_expr(h, out);
        if bracket {
            out.push(')');
        }
    }

    fn expr(&self, h: Handle<Expr>) -> String {
        let mut out = String::new();
        self.write_expr(h, &mut out);
        out
    }

    /// Writes `h` at the end of `out`. Everything goes into the one buffer: a tree built of
    /// strings returned by each node copies every operand's text again at each level above it,
    /// which is quadratic in a chain of thousands of terms (`a < b < c < ...` took seconds).
    fn write_expr(&self, h: Handle<Expr>, out: &mut String) {
        if h.index() >= self.body.exprs.len() {
            let _ = write!(out, "<bad expr {h:?}>");
            return;
        }
        let e = &self.body.exprs[h];
        match &e.kind {
            ExprKind::ConstInt(v) => {
                let _ = match e.ty {
                    ScalarType::I32 => write!(out, "{v}"),
                    ScalarType::U32 => write!(out, "{v}u"),
                    ScalarType::I64 => write!(out, "{v}ll"),
                    ScalarType::U64 => write!(out, "{}ull", *v as u64),
                    other => write!(out, "({}){v}", other.c_name()),
                };
            }
            ExprKind::ConstFloat(f) => {
                let _ = if e.ty == ScalarType::F32 { write!(out, "{f:?}f") } else { write!(out, "{f:?}") };
            }
            ExprKind::Param(n) => out.push_str(&self.param_name(*n)),
            ExprKind::Local(l) => out.push_str(&self.local(*l)),
            ExprKind::Load { array, indices } => {
                out.push_str(&self.array(*array));
                self.write_indices(indices, out);
            }
            ExprKind::Unary { op, arg } => {
                out.push_str(match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Not => "!",
                    UnaryOp::BitNot => "~",
                });
                self.write_operand(*arg, out);
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let Some(sym) = op.c_operator() else {
                    out.push_str(if *op == BinaryOp::Max { "max(" } else { "min(" });
                    self.write_expr(*lhs, out);
                    out.push_str(", ");
                    self.write_expr(*rhs, out);
                    out.push(')');
                    return;
                };
                self.write_operand(*lhs, out);
                let _ = write!(out, " {sym} ");
                self.write_operand(*rhs, out);
            }
            ExprKind::Select { cond, then, otherwise } => {
                self.write_operand(*cond, out);
                out.push_str(" ? ");
                self.write_operand(*then, out);
                out.push_str(" : ");
                self.write_operand(*otherwise, out);
            }
            ExprKind::Cast { arg } => {
                let _ = write!(out, "({})", e.ty.c_name());
                self.write_operand(*arg, out);
            }
            ExprKind::Math { func, args } => {
                let mut name = format!("{func:?}").to_lowercase();
                if e.ty == ScalarType::F32 && *func != MathFn::Abs {
                    name.push('f');
                }
                out.push_str(&name);
                self.write_args(args, out);
            }
            ExprKind::Call { func, args } => {
                let name = self
                    .module
                    .filter(|m| func.index() < m.functions.len())
                    .map_or_else(|| format!("function{}", func.index()), |m| m.functions[*func].name.clone());
                out.push_str(&name);
                self.write_args(args, out);
            }
            ExprKind::ThreadIdx(a) => {
                let _ = write!(out, "threadIdx.{}", a.name());
            }
            ExprKind::BlockIdx(a) => {
                let _ = write!(out, "blockIdx.{}", a.name());
            }
            ExprKind::BlockDim(a) => {
                let _ = write!(out, "blockDim.{}", a.name());
            }
            ExprKind::GridDim(a) => {
                let _ = write!(out, "gridDim.{}", a.name());
            }
        }
    }

    /// `(a, b, c)`.
    fn write_args(&self, args: &[Handle<Expr>], out: &mut String) {
        out.push('(');
        for (k, &a) in args.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            self.write_expr(a, out);
        }
        out.push(')');
    }

    fn params(&self, out: &mut String) {
        for (n, p) in self.params.iter().enumerate() {
            let decl = match &p.kind {
                ParamKind::Scalar(t) => format!("{} {}", t.c_name(), p.name),
                ParamKind::Array { elem, dims, restrict, read_only } => {
                    let dims: String = dims
                        .iter()
                        .map(|d| d.map_or_else(|| "[]".to_string(), |d| format!("[{}]", self.expr(d))))
                        .collect();
                    let mut flags = Vec::new();
                    if *restrict {
                        flags.push("restrict");
                    }
                    if *read_only {
                        flags.push("read-only");
                    }
                    let flags = if flags.is_empty() { String::new() } else { format!(" ({})", flags.join(", ")) };
                    format!("{} {}{dims}{flags}", elem.c_name(), p.name)
                }
                ParamKind::RowTable { elem, read_only } => {
                    let flags = if *read_only { " (read-only)" } else { "" };
                    format!("{} *{}[] (row table){flags}", elem.c_name(), p.name)
                }
            };
            let _ = writeln!(out, "  param {n}: {decl} = arg {}", p.arg);
        }
    }

    fn scalar_outputs(&self, out: &mut String, outputs: &[(Handle<Local>, u32)]) {
        for (l, arg) in outputs {
            let _ = writeln!(out, "  scalar output {} -> arg {arg}", self.local(*l));
        }
    }

    fn locals(&self, out: &mut String) {
        for (h, l) in self.body.locals.iter() {
            let dims: String = l.array_dims.iter().flatten().map(|d| format!("[{d}]")).collect();
            let kind = match l.kind {
                LocalKind::Var => String::new(),
                LocalKind::LoopIndex => " (loop index)".to_string(),
                LocalKind::Private => " (private)".to_string(),
                LocalKind::FirstPrivate(n) => format!(" (firstprivate {})", self.param_name(n)),
                LocalKind::Reduction(n) => format!(" (reduction {n})"),
            };
            let _ = writeln!(out, "  local {} {}{dims}{kind}", l.ty.c_name(), self.local(h));
        }
    }

    fn block(&self, out: &mut String, block: &[Stmt], depth: usize) {
        for s in block {
            self.stmt(out, s, depth);
        }
    }

    fn stmt(&self, out: &mut String, s: &Stmt, depth: usize) {
        let pad = "  ".repeat(depth);
        match s {
            Stmt::Assign { local, value } => {
                let _ = writeln!(out, "{pad}{} = {};", self.local(*local), self.expr(*value));
            }
            Stmt::Store { array, indices, value, .. } => {
                let _ = writeln!(out, "{pad}{}{} = {};", self.array(*array), self.indices(indices), self.expr(*value));
            }
            Stmt::Atomic { op, array, indices, value, capture, .. } => {
                let sym = match op {
                    AtomicOp::Write => "=",
                    AtomicOp::Add => "+=",
                    AtomicOp::Sub => "-=",
                    AtomicOp::Mul => "*=",
                    AtomicOp::Div => "/=",
                    AtomicOp::Max => "max=",
                    AtomicOp::Min => "min=",
                    AtomicOp::BitAnd => "&=",
                    AtomicOp::BitOr => "|=",
                    AtomicOp::BitXor => "^=",
                    AtomicOp::Shl => "<<=",
                    AtomicOp::Shr => ">>=",
                    AtomicOp::SubRev => "=rev-",
                    AtomicOp::DivRev => "=rev/",
                    AtomicOp::ShlRev => "=rev<<",
                    AtomicOp::ShrRev => "=rev>>",
                    AtomicOp::LogAnd => "&&=",
                    AtomicOp::LogOr => "||=",
                };
                let capture = capture.map(|c| format!("{} = ", self.local(c))).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{pad}atomic {capture}{}{} {sym} {};",
                    self.array(*array),
                    self.indices(indices),
                    self.expr(*value)
                );
            }
            Stmt::If { cond, then, otherwise } => {
                let _ = writeln!(out, "{pad}if ({}) {{", self.expr(*cond));
                self.block(out, then, depth + 1);
                if !otherwise.is_empty() {
                    let _ = writeln!(out, "{pad}}} else {{");
                    self.block(out, otherwise, depth + 1);
                }
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Loop { cond, test_first, body, continuing, range } => {
                let range = range
                    .as_ref()
                    .map(|r| {
                        format!(" [{} in {}..{} step {}]", self.local(r.var), self.expr(r.start), self.expr(r.end), r.step)
                    })
                    .unwrap_or_default();
                let cond_text = cond.map(|c| self.expr(c));
                match (test_first, &cond_text) {
                    (true, Some(c)) => {
                        let _ = writeln!(out, "{pad}while ({c}){range} {{");
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}{}{range} {{", if *test_first { "loop" } else { "do" });
                    }
                }
                self.block(out, body, depth + 1);
                if !continuing.is_empty() {
                    let _ = writeln!(out, "{pad}}} continuing {{");
                    self.block(out, continuing, depth + 1);
                }
                match (test_first, cond_text) {
                    (false, Some(c)) => {
                        let _ = writeln!(out, "{pad}}} while ({c});");
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}}}");
                    }
                }
            }
            Stmt::Break => {
                let _ = writeln!(out, "{pad}break;");
            }
            Stmt::Continue => {
                let _ = writeln!(out, "{pad}continue;");
            }
            Stmt::Return(None) => {
                let _ = writeln!(out, "{pad}return;");
            }
            Stmt::Return(Some(e)) => {
                let _ = writeln!(out, "{pad}return {};", self.expr(*e));
            }
            Stmt::Eval(e) => {
                let _ = writeln!(out, "{pad}{};", self.expr(*e));
            }
            Stmt::Barrier => {
                let _ = writeln!(out, "{pad}barrier();");
            }
        }
    }
}


/// The part of a complex variable a reduction accumulates, as the listing says it.
fn part_text(part: Option<crate::ir::ComplexPart>) -> &'static str {
    match part {
        None => "",
        Some(crate::ir::ComplexPart::Real) => " (real part)",
        Some(crate::ir::ComplexPart::Imag) => " (imaginary part)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{B, array_param, kernel, scalar_param};
    use crate::ir::DataClauseKind;

    /// `#pragma acc parallel loop reduction(+:sum) copyin(a[0:n]) copyout(b[0:n])`
    /// `for (i = 1; i < n - 1; i++) { b[i] = 0.5 * (a[i-1] + a[i+1]); sum += b[i]; }`
    fn smooth_module() -> Module {
        let mut b = B::new();
        let i = b.loop_var("i");
        let sum = b.new_local("sum", ScalarType::F64, LocalKind::Reduction(0));
        let one = b.int(1);
        let n = b.param(0);
        let two = b.int(2);
        let trip = b.bin(BinaryOp::Sub, n, two);
        let d = b.dim(i, one, trip);
        let im1 = b.var_plus(i, -1);
        let ip1 = b.var_plus(i, 1);
        let l = b.load(1, vec![im1]);
        let r = b.load(1, vec![ip1]);
        let s = b.add(l, r);
        let half = b.float(0.5, ScalarType::F64);
        let v = b.mul(half, s);
        let ie = b.local(i);
        let st = b.store(2, vec![ie], v);
        b.body.block.push(st);
        let bi = b.load(2, vec![ie]);
        let acc = b.local(sum);
        let add = b.add(acc, bi);
        b.body.block.push(Stmt::Assign { local: sum, value: add });
        let mut k = kernel(
            "smooth_l4",
            vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)],
            vec![d],
            b.body,
        );
        k.reductions.push(Reduction { op: ReductionOp::Add, ty: ScalarType::F64, local: sum, target_arg: 3, span: Default::default(), part: None });
        let mut m = Module::default();
        let kh = m.kernels.append(k);
        let arg = |c: &str, kind| HostArg { c_expr: c.to_string(), kind, size_expr: None };
        let section = |kind, base, name: &str| DataSection { kind, base, lo: None, len: Some(0), elem_size: 8, name: name.into(), span: Default::default(), zero: false, rows: None, dead_on_host: false };
        m.regions.push(Region {
            id: 0,
            span: Default::default(),
            body_span: None,
            kind: RegionKind::Compute {
                kernels: vec![kh],
                data: vec![section(DataClauseKind::CopyIn, 1, "a"), section(DataClauseKind::CopyOut, 2, "b")],
            },
            args: vec![
                arg("n", HostArgKind::Int),
                arg("a", HostArgKind::Pointer),
                arg("b", HostArgKind::Pointer),
                arg("&sum", HostArgKind::ScalarOut(ScalarType::F64)),
            ],
            if_arg: None,
            function: "main".into(),
            unread_on_host: Vec::new(),
            host_after: Vec::new(),
            settle_after: Vec::new(),
        });
        m
    }

    #[test]
    fn kernel_and_grid_kernel_listing() {
        let mut m = smooth_module();
        crate::opt::run_passes(&mut m, &crate::opt::PassConfig::default()).unwrap();
        insta::assert_snapshot!(module_text(&m));
    }

    #[test]
    fn shared_local_names_are_disambiguated() {
        let mut b = B::new();
        let x1 = b.new_local("x", ScalarType::I32, LocalKind::Var);
        let x2 = b.new_local("x", ScalarType::I32, LocalKind::Var);
        let e = b.local(x1);
        b.body.block.push(Stmt::Assign { local: x2, value: e });
        let m = Module::default();
        let text = kernel_text(&m, &kernel("k", vec![], vec![], b.body));
        assert!(text.contains("  x_1 = x_0;\n"), "{text}");
    }
}
