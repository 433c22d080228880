//! Lowering: from the syntax tree to the IR. Resolves names and types, turns every OpenACC
//! compute construct into kernels and every data directive into a region, and decides what the
//! host must pass in (params bound to host args).
//!
//! The walk over each function keeps a [`Sema`] in step with the host code, so that at every
//! directive the host scope (what a kernel may read as a param) is exactly the C scope there.

mod atomic;
mod data;
mod executable;
mod gang;
mod kernel;
mod loops;
mod private;
mod routines;
mod steps;
mod treatments;
#[cfg(test)]
mod tests;
pub(crate) mod walk;

use std::collections::{HashMap, HashSet};

use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::front::ast::{
    self, Clause, ClauseKind, DataClauseKind, DataRef, Directive, DirectiveKind, ExprKind as AE, ExternalDecl, ReductionOp, Stmt,
    StmtKind, TranslationUnit,
};
use crate::front::linkage::{Definitions, FunctionKey};
use crate::front::sema::{ArrayLen, CType, Sema, Storage, Symbol};
use crate::source::SourceSet;
use crate::ir::{
    BinaryOp, DataSection, ExplicitGrid, Function, Handle, HostArg, HostArgKind, Kernel, LocalKind, LoopLevel, Module, ParallelDim, ParamKind,
    Region, RegionKind, ScalarType, SequentialReason,
};

use data::push_arg;
use kernel::{Context, DefaultNone, KernelBuilder, Mode, RoutineInfo, Treatment};
use treatments::{add_treatments, classify_scalar, declared_in};
use loops::{Cmp, NestPolicy};

/// Lowers all translation units into one module (kernels and regions; no grid kernels yet).
/// Returns the warnings with the module (for example: a `kernels` loop left sequential, and why).
pub fn lower_program<'u>(sources: &'u SourceSet, units: &'u [TranslationUnit]) -> Result<(Module, Vec<Diagnostic>), Diagnostics> {
    let definitions = Definitions::new(units);
    let routines::Routines { ir: routines, inline: inline_routines } = routines::collect(units, &definitions);
    let mut lowerer = Lowerer {
        sources,
        module: Module::default(),
        diags: routines::defined_twice(&definitions, sources),
        functions: vec![None; routines.len()],
        routines,
        inline_routines,
        definitions,
        current_unit: 0,
        kernel_names: HashSet::new(),
        next_kernel_suffix: HashMap::new(),
        current_function: None,
        declared_globals: HashSet::new(),
        locals_the_host_never_names: HashSet::new(),
        locals_the_host_never_reads: HashSet::new(),
    };
    for unit in units {
        lowerer.unit(unit);
    }
    let mut seen = HashSet::new();
    lowerer.diags.retain(|d| seen.insert((d.message.clone(), d.span)));
    if lowerer.diags.iter().any(Diagnostic::is_error) {
        return Err(Diagnostics(lowerer.diags));
    }
    for f in lowerer.functions.into_iter().flatten() {
        lowerer.module.functions.append(f);
    }
    Ok((lowerer.module, lowerer.diags))
}

fn function_name(f: &ast::FunctionDef) -> Option<&str> {
    f.declarator.name.as_deref()
}

struct Lowerer<'a> {
    sources: &'a SourceSet,
    module: Module,
    diags: Vec<Diagnostic>,
    /// The routines lowered to IR functions and those inlined at each call (`routines.rs`).
    routines: HashMap<FunctionKey, RoutineInfo>,
    inline_routines: HashMap<FunctionKey, &'a ast::FunctionDef>,
    /// Every function the program defines, by C's linkage: which one a call names.
    definitions: Definitions<'a>,
    /// The translation unit being lowered.
    current_unit: u32,
    functions: Vec<Option<Function>>,
    kernel_names: HashSet<String>,
    /// Per base name, the suffix to try next: thousands of kernels on one line get their
    /// names in linear time.
    next_kernel_suffix: HashMap<String, usize>,
    /// The function whose body is being walked (for what host code does after a construct).
    current_function: Option<&'a ast::FunctionDef>,
    /// Variables a file-scope `declare` names (present for the whole run).
    declared_globals: HashSet<String>,
    /// `walk::locals_the_host_never_names` of the function being lowered.
    locals_the_host_never_names: HashSet<String>,
    /// `walk::locals_the_host_never_reads` of the function being lowered.
    locals_the_host_never_reads: HashSet<String>,
}

/// The sizing clauses of one of several adjacent constructs lowered as one region
/// ([`Lowerer::compute_run`]): its kernel's, not the region's.
struct ConstructSizes {
    vector_hint: Option<u32>,
    num_gangs: Vec<String>,
}

/// The clauses of a compute construct, as they apply to each of its kernels.
struct RegionState {
    args: Vec<HostArg>,
    treatments: HashMap<String, Treatment>,
    default_none: DefaultNone,
    vector_hint: Option<u32>,
    /// The `num_gangs` values as written (see `Kernel::num_gangs`).
    num_gangs: Vec<String>,
    /// What the host runs after the region (see `Region::host_after`).
    host_after: Vec<String>,
}

/// What one kernel of a construct is made from.
enum Plan<'s> {
    /// A loop nest whose loops become parallel dimensions; `policy` says how deep to look.
    Parallel { outer: &'s Stmt, clauses: Vec<&'s Clause>, policy: NestPolicy, checked: Checked },
    /// Statements run once, by one thread.
    Single { stmts: Vec<&'s Stmt>, span: Span },
    /// A MESI-CUDA kernel written per thread: its body runs on every thread of `launch`.
    PerThread { stmts: Vec<&'s Stmt>, span: Span, launch: &'s ast::CudaLaunch },
}

/// Where a construct's kernels are made: the declarations at the top of its body (lowered
/// into every kernel), the host scope, and the enclosing function.
struct Site<'s, 'p> {
    /// The compute construct's statement.
    construct: &'p Stmt,
    prelude: &'p [&'s Stmt],
    sema: &'p Sema,
    function: &'p str,
}

/// Whether `line` is a preprocessor line marker that stays in the same file (`# 10 "f.c"`,
/// which the preprocessor writes after a `#pragma` line; one with flags enters or leaves an
/// included file).
fn is_line_marker_here(line: &str) -> bool {
    let Some(rest) = line.trim().strip_prefix('#') else { return false };
    let mut words = rest.split_whitespace();
    let number = words.next().is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()));
    let file = words.next().is_some_and(|w| w.starts_with('"'));
    number && file && words.next().is_none()
}

/// How a loop nest becomes parallel dimensions.
#[derive(Clone, Copy)]
struct NestPlan {
    policy: NestPolicy,
    checked: Checked,
    /// At most this many loops of the nest (fewer after a dependence on an inner one).
    max_dims: usize,
}

/// Whether the dependence test decides if a loop nest runs in parallel (`kernels`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Checked {
    Trusted,
    ByAnalysis,
}

fn norm(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn has_clause(clauses: &[&Clause], f: impl Fn(&ClauseKind) -> bool) -> bool {
    clauses.iter().any(|c| f(&c.kind))
}

/// A dim of a loop nest the user called independent whose iterations are not: the
/// outermost one, of a store every iteration makes to one element and a dependence the
/// analysis has a witness for.
struct MisplacedIndependence {
    dim: usize,
    span: Span,
    message: String,
    help: &'static str,
}

fn misplaced_independence(kernel: &Kernel) -> Option<MisplacedIndependence> {
    let race = crate::analysis::races::outermost_racing_store(kernel).map(|race| {
        let name = &kernel.params[race.param as usize].name;
        let var = &kernel.body.locals[kernel.space[race.dim].var].name;
        MisplacedIndependence {
            dim: race.dim,
            span: race.span,
            message: format!("every iteration of the loop over `{var}` writes the same element of `{name}`"),
            help: "to accumulate into it in parallel, use a scalar with reduction(op:...) and store it after the loop, or update the element under `#pragma acc atomic`",
        }
    });
    let limit = race.as_ref().map_or(kernel.space.len(), |r| r.dim);
    let carried = (limit > 0).then(|| crate::analysis::carried::proven_carried(kernel)).flatten().filter(|d| d.dim < limit).map(|d| MisplacedIndependence {
        dim: d.dim,
        span: d.span,
        message: d.message,
        help: "a loop inside `parallel` is independent unless it says otherwise; mark this one `#pragma acc loop seq` to say that it runs in order, or change the program so that no iteration uses another's results",
    });
    carried.or(race)
}

/// The dependence test of the analysis stage (may the kernel's dims run in parallel?).
fn dependence_check(kernel: &Kernel) -> Result<(), SequentialReason> {
    crate::analysis::dependence::check_parallel(kernel)
}

impl<'a> Lowerer<'a> {
    fn text(&self, span: Span) -> String {
        norm(self.sources.text(span))
    }

    fn drain_sema_warnings(&mut self, sema: &mut Sema) {
        self.diags.append(&mut sema.warnings);
    }

    fn unit(&mut self, unit: &'a TranslationUnit) {
        self.current_unit = unit.tu;
        let mut sema = Sema::new();
        for item in &unit.items {
            match item {
                ExternalDecl::Declaration(d) => {
                    if let Err(e) = sema.declare(d, Storage::Global) {
                        self.diags.push(e);
                    }
                }
                ExternalDecl::Function(f) => {
                    if let Some(d) = &f.routine {
                        self.routine_bind_note(d);
                    }
                    self.function(f, &mut sema)
                }
                ExternalDecl::Directive(d) if matches!(d.kind, DirectiveKind::Declare) => self.file_scope_declare(d, &sema),
                ExternalDecl::Directive(d) => self.routine_bind_note(d),
            }
            self.drain_sema_warnings(&mut sema);
        }
    }

    /// `declare create|copyin|copy|device_resident(...)` at file scope: the variables are
    /// present on the device for the whole run (a later `present(x)` finds them), as an
    /// `enter data` the program runs when it starts (the host back end calls it with the
    /// statics' registration). `copy` and `copyout` mean `copyin` here: coherence brings the
    /// values back whenever the host reads them. A pointer's section (`a[0:n]` of `double *a`)
    /// declares the pointer itself in OpenACC, which kernels never need: left out.
    fn file_scope_declare(&mut self, d: &Directive, sema: &Sema) {
        let mut clauses = Vec::new();
        for c in &d.clauses {
            let ClauseKind::Data { kind, refs, zero } = &c.kind else { continue };
            for r in refs {
                if let Some(root) = ref_root(&r.base) {
                    self.declared_globals.insert(root.to_string());
                }
            }
            let kind = match kind {
                DataClauseKind::CopyIn | DataClauseKind::Copy => DataClauseKind::CopyIn,
                DataClauseKind::Create | DataClauseKind::CopyOut | DataClauseKind::DeviceResident => DataClauseKind::Create,
                _ => continue,
            };
            let refs: Vec<DataRef> = refs
                .iter()
                .filter(|r| matches!(&r.base.kind, ast::ExprKind::Ident(n) if sema.lookup_var(n).is_some_and(|v| !matches!(v.ty, CType::Pointer { .. }))))
                .cloned()
                .collect();
            if !refs.is_empty() {
                clauses.push(Clause { kind: ClauseKind::Data { kind, refs, zero: *zero }, span: c.span });
            }
        }
        if clauses.is_empty() {
            return;
        }
        let entry = Directive { kind: DirectiveKind::EnterData, clauses, span: d.span };
        let (args, data, _) = self.data_clauses(&entry, sema);
        // No enclosing function: the host back end runs it when the program starts.
        self.push_region(d.span, None, RegionKind::EnterData { data }, args, None, "");
    }

    /// `routine ... bind(g)`: the device runs the function's own body, which is what the
    /// sequential program runs; a body bound from elsewhere could give another answer.
    fn routine_bind_note(&mut self, d: &Directive) {
        for c in &d.clauses {
            if let ClauseKind::Bind(name) = &c.kind {
                self.diags.push(
                    Diagnostic::warning(c.span, format!("`bind({name})` is not followed: kernels run the function's own body, as the program does without OpenACC"))
                        .with_help("give the function the body the device should run, or remove `bind`"),
                );
            }
        }
    }

    fn function(&mut self, f: &'a ast::FunctionDef, sema: &mut Sema) {
        let Some(name) = function_name(f) else { return };
        self.current_function = Some(f);
        self.locals_the_host_never_names = walk::locals_the_host_never_names(&f.body.stmts);
        self.locals_the_host_never_reads = walk::locals_the_host_never_reads(&f.body.stmts);
        match sema.declared_type(&f.specs, &f.declarator) {
            Ok(ty) => sema.insert(name, Symbol::Function(ty)),
            Err(e) => {
                self.diags.push(e);
                return;
            }
        }
        // A second definition of an external function is refused (`routines::defined_twice`);
        // the device function is made from the kept one.
        if let Some(key) = self.definitions.key_of(f).filter(|_| self.definitions.is_kept(f))
            && let Some(info) = self.routines.get(&key).cloned()
            && self.functions[info.index].is_none()
            && let Some(func) = self.routine_function(f, &key, sema)
        {
            self.functions[info.index] = Some(func);
        }
        sema.push_scope();
        if let Err(e) = sema.declare_params(&f.declarator) {
            self.diags.push(e);
        }
        for s in &f.body.stmts {
            self.host_stmt(s, sema, name);
        }
        sema.pop_scope();
    }

    fn routine_function(&mut self, f: &ast::FunctionDef, key: &FunctionKey, sema: &Sema) -> Option<Function> {
        let name = key.name.as_str();
        let Some(Symbol::Function(CType::Function { ret, .. })) = sema.lookup(name).cloned() else { return None };
        let mut args = Vec::new();
        let cx = Context {
            sources: self.sources,
            routines: &self.routines,
            inline_routines: &self.inline_routines,
            definitions: &self.definitions,
            unit: f.span.tu,
        };
        let mut kb = KernelBuilder::new(&cx, sema.clone(), &mut args, Mode::Function);
        kb.function_result = match &*ret {
            CType::Void => None,
            CType::Scalar(t) => Some(t.value_type()),
            CType::Complex(_) => {
                self.diags.push(
                    Diagnostic::error(f.declarator.span, format!("device function `{name}` returns a complex number, which device functions cannot do"))
                        .with_help("return the real and imaginary parts from two functions, or write the computation in the loop"),
                );
                return None;
            }
            _ => {
                self.diags.push(
                    Diagnostic::error(f.declarator.span, format!("device function `{name}` must return a number or nothing"))
                        .with_help("return a scalar value"),
                );
                return None;
            }
        };
        kb.push_scope();
        let mut params = Vec::new();
        let mut errors = Vec::new();
        if let Some(ast::DerivedType::Function { params: decls, .. }) = f.declarator.derived.first() {
            for p in decls {
                let Some(pname) = &p.declarator.name else { continue };
                match kb.sema.declared_type(&p.specs, &p.declarator) {
                    Ok(CType::Scalar(t)) => {
                        let l = kb.new_local(pname, t.value_type(), LocalKind::Var, p.declarator.name_span);
                        kb.bind(pname, l);
                        params.push(l);
                    }
                    Ok(_) => errors.push(
                        Diagnostic::error(p.span, format!("parameter `{pname}` of device function `{name}` is not a number"))
                            .with_help("device functions take scalar parameters for now; inline the function into the loop to use arrays"),
                    ),
                    Err(e) => errors.push(e),
                }
            }
        }
        if errors.iter().any(Diagnostic::is_error) {
            self.diags.append(&mut errors);
            return None;
        }
        let mut block = Vec::new();
        for s in &f.body.stmts {
            kb.stmt(s, &mut block);
        }
        kb.pop_scope();
        errors.append(&mut kb.errors);
        // A device function has no params of its own: host values must come in as arguments.
        if let Some(p) = kb.params.first() {
            errors.push(
                Diagnostic::error(f.declarator.name_span, format!("device function `{name}` reads the host variable `{}`", p.name))
                    .with_help(format!("pass `{}` to `{name}` as an argument", p.name)),
            );
        }
        let body = std::mem::take(&mut kb.body);
        let failed = errors.iter().any(Diagnostic::is_error);
        self.diags.append(&mut errors);
        if failed {
            return None;
        }
        let mut body = body;
        body.block = block;
        // Same-named `static` functions of two files are two device functions: the name says
        // whose each is.
        Some(Function { name: self.definitions.display_name(key, self.sources), params, result: ret.scalar(), body, span: f.span })
    }

    /// Walks host code, keeping the scope current, and lowers the directives it meets.
    fn host_stmt(&mut self, s: &Stmt, sema: &mut Sema, function: &str) {
        match &s.kind {
            StmtKind::Compound(b) => {
                sema.push_scope();
                let mut at = 0;
                while at < b.stmts.len() {
                    let run = self.mergeable_run(&b.stmts[at..]);
                    if run >= 2 {
                        let stmts: Vec<&Stmt> = b.stmts[at..at + run].iter().collect();
                        self.compute_run(&stmts, sema, function);
                    } else {
                        self.host_stmt(&b.stmts[at], sema, function);
                    }
                    at += run.max(1);
                }
                sema.pop_scope();
            }
            StmtKind::Decl(d) => {
                if let Err(e) = sema.declare(d, Storage::Local) {
                    self.diags.push(e);
                }
                self.drain_sema_warnings(sema);
            }
            StmtKind::For { init, cond, step, body } => {
                sema.push_scope();
                if let Some(ast::ForInit::Decl(d)) = init {
                    if let Err(e) = sema.declare(d, Storage::Local) {
                        self.diags.push(e);
                    }
                }
                let before = self.module.regions.len();
                self.host_stmt(body, sema, function);
                if self.module.regions.len() == before + 1
                    && let Some(found) = self.step_loop(init, cond, step, body, before as u32, sema)
                {
                    self.module.step_loops.push(found);
                }
                sema.pop_scope();
            }
            StmtKind::If { then, otherwise, .. } => {
                self.scoped_host_stmt(then, sema, function);
                if let Some(o) = otherwise {
                    self.scoped_host_stmt(o, sema, function);
                }
            }
            StmtKind::While { body, .. }
            | StmtKind::DoWhile { body, .. }
            | StmtKind::Switch { body, .. }
            | StmtKind::Case { body, .. }
            | StmtKind::Default { body }
            | StmtKind::Labeled { body, .. } => self.scoped_host_stmt(body, sema, function),
            StmtKind::Acc { directive, body } => self.directive(s, directive, body.as_deref(), sema, function),
            StmtKind::Expr(_) | StmtKind::Goto(_) | StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) => {}
        }
    }

    fn scoped_host_stmt(&mut self, s: &Stmt, sema: &mut Sema, function: &str) {
        sema.push_scope();
        self.host_stmt(s, sema, function);
        sema.pop_scope();
    }

    fn directive(&mut self, stmt: &Stmt, d: &Directive, body: Option<&Stmt>, sema: &mut Sema, function: &str) {
        match (&d.kind, body) {
            (kind, Some(b)) if kind.is_compute() => self.compute(stmt, d, b, sema, function),
            (DirectiveKind::Data, Some(b)) => {
                let (args, data, if_arg) = self.data_clauses(d, sema);
                self.push_region(stmt.span, Some(b.span), RegionKind::Data { data }, args, if_arg, function);
                self.host_stmt(b, sema, function);
            }
            (DirectiveKind::EnterData, _) => {
                let (args, data, if_arg) = self.data_clauses(d, sema);
                self.push_region(stmt.span, None, RegionKind::EnterData { data }, args, if_arg, function);
            }
            (DirectiveKind::ExitData, _) => {
                let (args, data, if_arg) = self.data_clauses(d, sema);
                let finalize = d.clauses.iter().any(|c| matches!(c.kind, ClauseKind::Finalize));
                self.push_region(stmt.span, None, RegionKind::ExitData { data, finalize }, args, if_arg, function);
            }
            (DirectiveKind::Update, _) => {
                let (args, data, if_arg) = self.data_clauses(d, sema);
                self.push_region(stmt.span, None, RegionKind::Update { data }, args, if_arg, function);
            }
            (DirectiveKind::Init | DirectiveKind::Shutdown | DirectiveKind::Set, _) => self.runtime_directive(stmt, d, sema, function),
            (DirectiveKind::Wait(_), _) => self.push_region(stmt.span, None, RegionKind::Wait, Vec::new(), None, function),
            (DirectiveKind::Loop, b) => {
                // In a function kernels call (an orphaned `loop`), the loop belongs to the
                // device's copy; the host's own calls run it in order, as C does.
                let routine = self.current_function.and_then(|f| self.definitions.key_of(f)).is_some_and(|k| self.routines.contains_key(&k) || self.inline_routines.contains_key(&k));
                if !routine {
                    self.diags.push(
                        Diagnostic::warning(d.span, "`loop` outside a compute construct runs on the host")
                            .with_help("use `parallel loop` to offload this loop"),
                    );
                }
                if let Some(b) = b {
                    self.host_stmt(b, sema, function);
                }
            }
            (DirectiveKind::Atomic(_), _) => self.diags.push(
                Diagnostic::warning(d.span, "`atomic` outside a compute construct has no effect on the host")
                    .with_help("atomics matter only inside compute constructs"),
            ),
            // The body's code sees the `use_device` variables as device addresses: the host
            // back end declares, around the body, variables of the same names holding them.
            (DirectiveKind::HostData, Some(b)) => {
                let (args, data, if_arg) = self.data_clauses(d, sema);
                for section in data.iter().filter(|s| s.kind == DataClauseKind::UseDevice) {
                    if !section.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                        self.diags.push(
                            Diagnostic::error(section.span, format!("`use_device` takes the name of a pointer or array variable, not `{}`", section.name))
                                .with_help("copy the pointer to a variable before the construct and name that variable"),
                        );
                    }
                }
                self.push_region(stmt.span, Some(b.span), RegionKind::Data { data }, args, if_arg, function);
                self.host_stmt(b, sema, function);
            }
            (DirectiveKind::Declare, _) => self.diags.push(
                Diagnostic::warning(d.span, "`declare` is ignored: host and device copies are kept coherent anyway")
                    .with_help("remove the directive, or use a data region"),
            ),
            (_, Some(b)) => self.host_stmt(b, sema, function),
            (_, None) => {}
        }
    }

    /// The first call of a library function (neither `math.h` nor a function the program
    /// defines) that `body` makes, directly or in the routines it calls, with the span of the
    /// call in `body` and the routines it goes through (empty for a direct call).
    fn library_call(&self, body: &Stmt) -> Option<(String, Span, Vec<String>)> {
        let runs_on_device =
            |name: &str| kernel::math_function(name).is_some() || kernel::is_complex_function(name) || kernel::is_device_builtin(name);
        // Each call is resolved in the file it is written in.
        let foreign = |name: &str, call: Span| !runs_on_device(name) && self.definitions.resolve(name, call.tu).is_none();
        for (name, span) in walk::called_functions(body) {
            if foreign(&name, span) {
                return Some((name, span, Vec::new()));
            }
        }
        // Depth first through the routines, each visited once (recursion is refused later):
        // (callee, its call, the call in `body` that leads there, the routines on the way).
        let mut visited = HashSet::new();
        let mut stack: Vec<(String, Span, Span, Vec<String>)> =
            walk::called_functions(body).into_iter().rev().map(|(name, span)| (name.clone(), span, span, vec![name])).collect();
        while let Some((name, call, span, chain)) = stack.pop() {
            let Some(key) = self.definitions.resolve(&name, call.tu) else { continue };
            if !(self.routines.contains_key(&key) || self.inline_routines.contains_key(&key)) {
                continue;
            }
            let Some(def) = self.definitions.get(&key) else { continue };
            if !visited.insert(key) {
                continue;
            }
            let calls: Vec<(String, Span)> = def.body.stmts.iter().flat_map(walk::called_functions).collect();
            if let Some((callee, _)) = calls.iter().find(|(c, at)| foreign(c, *at)) {
                return Some((callee.clone(), span, chain));
            }
            for (callee, at) in calls.into_iter().rev() {
                let mut longer = chain.clone();
                longer.push(callee.clone());
                stack.push((callee, at, span, longer));
            }
        }
        None
    }

    fn push_region(&mut self, span: Span, body_span: Option<Span>, kind: RegionKind, args: Vec<HostArg>, if_arg: Option<u32>, function: &str) {
        let id = self.module.regions.len() as u32;
        let unread_on_host = args
            .iter()
            .enumerate()
            .filter(|(_, a)| a.kind == HostArgKind::Pointer && self.locals_the_host_never_reads.contains(&a.c_expr))
            .map(|(n, _)| n as u32)
            .collect();
        self.module.regions.push(Region { id, span, body_span, kind, args, if_arg, function: function.to_string(), unread_on_host, host_after: Vec::new(), settle_after: Vec::new() });
    }

    // -----------------------------------------------------------------------------------------
    // Compute constructs

    fn compute(&mut self, stmt: &Stmt, d: &Directive, body: &Stmt, sema: &mut Sema, function: &str) {
        // Library calls (printf, malloc, ...) cannot run on the device: the host keeps the construct.
        if let Some(c) = d.clauses.iter().find(|c| matches!(c.kind, ClauseKind::SelfHost(None))) {
            self.diags.push(
                Diagnostic::warning(c.span, "`self` runs the compute construct on the host")
                    .with_help("remove `self` to offload it, or give a condition: `self(cond)`"),
            );
            return;
        }
        if let Some((name, span, _)) = self.library_call(body)
            && matches!(d.kind, DirectiveKind::CudaKernel(_))
        {
            // Its threads work together: no one thread could run it on the host.
            self.diags.push(
                Diagnostic::error(span, format!("a kernel that uses `__shared__` or `__syncthreads()` cannot call `{name}`, which runs only on the host"))
                    .with_help(format!("move the call to `{name}` into host code, after the launch")),
            );
            return;
        }
        if let Some((name, span, through)) = self.library_call(body) {
            let (message, help) = match through.as_slice() {
                [] => (
                    format!("the compute construct calls `{name}`, which cannot run on the device; it runs on the host"),
                    format!("move the call to `{name}` out of the construct to offload it"),
                ),
                [first, rest @ ..] => (
                    format!(
                        "the compute construct calls `{first}`, which calls `{name}`{}; `{name}` cannot run on the device, so the construct runs on the host",
                        rest.iter().map(|f| format!(" through `{f}`")).collect::<String>()
                    ),
                    format!("move the call to `{name}` out of the routines the construct calls to offload it"),
                ),
            };
            self.diags.push(Diagnostic::warning(span, message).with_help(help));
            return;
        }
        let Some(num_gangs) = self.check_gang_dimensions(d, body, sema) else { return };
        let (args, data, if_arg) = self.data_clauses(d, sema);
        let mut region =
            RegionState { args, treatments: HashMap::new(), default_none: DefaultNone::default(), vector_hint: None, num_gangs, host_after: Vec::new() };
        self.region_clauses(&d.clauses, sema, &mut region);
        let all: Vec<&Clause> = d.clauses.iter().collect();
        let mut plans: Vec<Plan> = Vec::new();
        let mut prelude: Vec<&Stmt> = Vec::new();
        match &d.kind {
            DirectiveKind::CudaKernel(launch) => plans.push(Plan::PerThread { stmts: vec![body], span: body.span, launch }),
            DirectiveKind::ParallelLoop | DirectiveKind::KernelsLoop | DirectiveKind::SerialLoop => {
                if !matches!(body.kind, StmtKind::For { .. }) {
                    self.diags.push(
                        Diagnostic::error(body.span, "a combined `loop` construct must be followed by a `for` loop")
                            .with_help("put the for loop right after the directive"),
                    );
                    return;
                }
                let seq = has_clause(&all, |k| matches!(k, ClauseKind::Seq));
                let plan = match d.kind {
                    DirectiveKind::SerialLoop => Plan::Single { stmts: vec![body], span: body.span },
                    _ if seq => Plan::Single { stmts: vec![body], span: body.span },
                    // `auto`: the compiler decides, so the dependence test does (as in `kernels`).
                    DirectiveKind::ParallelLoop => {
                        let checked = if has_clause(&all, |k| matches!(k, ClauseKind::Auto)) { Checked::ByAnalysis } else { Checked::Trusted };
                        Plan::Parallel { outer: body, clauses: all.clone(), policy: NestPolicy::Explicit, checked }
                    }
                    _ => {
                        let independent = has_clause(&all, |k| matches!(k, ClauseKind::Independent));
                        let checked = if independent { Checked::Trusted } else { Checked::ByAnalysis };
                        let policy = if independent { NestPolicy::Explicit } else { NestPolicy::Auto };
                        Plan::Parallel { outer: body, clauses: all.clone(), policy, checked }
                    }
                };
                plans.push(plan);
            }
            DirectiveKind::Serial => plans.push(Plan::Single { stmts: vec![body], span: body.span }),
            _ => {
                let kernels = matches!(d.kind, DirectiveKind::Kernels);
                let stmts: Vec<&Stmt> = match &body.kind {
                    StmtKind::Compound(b) => b.stmts.iter().collect(),
                    _ => vec![body],
                };
                let mut run: Vec<&Stmt> = Vec::new();
                for s in stmts {
                    match &s.kind {
                        StmtKind::Decl(_) if run.is_empty() => prelude.push(s),
                        StmtKind::Acc { directive, body: Some(inner) }
                            if matches!(directive.kind, DirectiveKind::Loop) && matches!(inner.kind, StmtKind::For { .. }) =>
                        {
                            flush_single(&mut run, &mut plans);
                            let clauses: Vec<&Clause> = directive.clauses.iter().collect();
                            if has_clause(&clauses, |k| matches!(k, ClauseKind::Seq)) {
                                plans.push(Plan::Single { stmts: vec![s], span: s.span });
                            } else if kernels && !has_clause(&clauses, |k| matches!(k, ClauseKind::Independent)) {
                                plans.push(Plan::Parallel { outer: inner, clauses, policy: NestPolicy::Auto, checked: Checked::ByAnalysis });
                            } else if has_clause(&clauses, |k| matches!(k, ClauseKind::Auto)) {
                                plans.push(Plan::Parallel { outer: inner, clauses, policy: NestPolicy::Explicit, checked: Checked::ByAnalysis });
                            } else {
                                plans.push(Plan::Parallel { outer: inner, clauses, policy: NestPolicy::Explicit, checked: Checked::Trusted });
                            }
                        }
                        StmtKind::For { .. } if kernels => {
                            flush_single(&mut run, &mut plans);
                            plans.push(Plan::Parallel { outer: s, clauses: Vec::new(), policy: NestPolicy::Auto, checked: Checked::ByAnalysis });
                        }
                        _ => run.push(s),
                    }
                }
                flush_single(&mut run, &mut plans);
            }
        }
        let plans = plans.into_iter().map(|plan| (plan, stmt, None)).collect();
        self.finish_compute(plans, &prelude, sema, function, region, (data, if_arg, stmt.span));
    }

    /// Lowers each plan to a kernel at its construct's statement and pushes the compute region
    /// of them all, with its data clauses and `if` arg, over `span`; pushes nothing when a
    /// kernel failed (its errors are reported).
    fn finish_compute(
        &mut self,
        plans: Vec<(Plan, &Stmt, Option<ConstructSizes>)>,
        prelude: &[&Stmt],
        sema: &Sema,
        function: &str,
        mut region: RegionState,
        (data, if_arg, span): (Vec<DataSection>, Option<u32>, Span),
    ) {
        let mut kernels = Vec::new();
        let mut failed = false;
        for (plan, construct, sizes) in plans {
            if let Some(sizes) = sizes {
                region.vector_hint = sizes.vector_hint;
                region.num_gangs = sizes.num_gangs;
            }
            let site = Site { construct, prelude, sema, function };
            match self.kernel(plan, &site, &mut region) {
                Some(k) => kernels.push(k),
                None => failed = true,
            }
        }
        if failed {
            return;
        }
        self.bind_scalars_assigned_earlier(&kernels, &region.args);
        self.push_region(span, None, RegionKind::Compute { kernels, data }, region.args, if_arg, function);
        if let Some(pushed) = self.module.regions.last_mut() {
            pushed.host_after = region.host_after;
            // Scalars the kernels store in place (`Treatment::SameValue`): `&(x)` with `sizeof(x)`.
            pushed.settle_after = pushed
                .args
                .iter()
                .enumerate()
                .filter(|(_, a)| a.kind == HostArgKind::Pointer && a.c_expr.starts_with("&(") && a.size_expr.as_deref().is_some_and(|s| s.starts_with("sizeof(")))
                .map(|(n, _)| n as u32)
                .collect();
        }
    }

    /// How many statements from the start of `stmts` are combined compute constructs of one
    /// kind (`parallel loop` after `parallel loop`, `kernels loop` after `kernels loop`) that
    /// run as one compute region, so that the fusion pass sees them as consecutive kernels: only
    /// whitespace and line markers between them (no host code), and only clauses whose
    /// meaning is the same for a loop of a `parallel` region (`present`, `private`,
    /// `reduction`, `collapse`, `gang`/`worker`/`vector`, `independent`, `auto`) or that size
    /// the construct's own launch (`num_gangs`, `num_workers`, `vector_length`: each kernel
    /// keeps its construct's): no copies, conditions or queues, which would apply to the whole
    /// region.
    fn mergeable_run(&self, stmts: &[Stmt]) -> usize {
        let kind_of = |s: &Stmt| match &s.kind {
            StmtKind::Acc { directive, body: Some(body) }
                if matches!(directive.kind, DirectiveKind::ParallelLoop | DirectiveKind::KernelsLoop)
                    && matches!(body.kind, StmtKind::For { .. })
                    && directive.clauses.iter().all(|c| {
                        matches!(
                            &c.kind,
                            ClauseKind::Data { kind: DataClauseKind::Present, .. }
                                | ClauseKind::Private(_)
                                | ClauseKind::Reduction { .. }
                                | ClauseKind::Collapse(_)
                                | ClauseKind::Independent
                                | ClauseKind::Auto
                                | ClauseKind::Gang { .. }
                                | ClauseKind::Worker(_)
                                | ClauseKind::Vector(_)
                                | ClauseKind::NumGangs(_)
                                | ClauseKind::NumWorkers(_)
                                | ClauseKind::VectorLength(_)
                        )
                    }) =>
            {
                Some(matches!(directive.kind, DirectiveKind::KernelsLoop))
            }
            _ => None,
        };
        let Some(first) = stmts.first().and_then(kind_of) else { return 0 };
        let mut run = 1;
        while let Some(next) = stmts.get(run) {
            let between = Span { tu: next.span.tu, lo: stmts[run - 1].span.hi, hi: next.span.lo };
            let adjacent = next.span.tu == stmts[run - 1].span.tu
                && between.lo <= between.hi
                && self.sources.text(between).lines().all(|line| line.trim().is_empty() || is_line_marker_here(line));
            if !adjacent || kind_of(next) != Some(first) {
                break;
            }
            run += 1;
        }
        run
    }

    /// Lowers adjacent combined compute constructs (see [`Lowerer::mergeable_run`]) as one
    /// compute region: one kernel per construct, in order, as the loops of one `parallel`
    /// region are; the region's data clauses are their `present` clauses. Constructs that
    /// run on the host (`self`, library calls) are lowered one by one instead.
    fn compute_run(&mut self, stmts: &[&Stmt], sema: &mut Sema, function: &str) {
        let constructs: Vec<(&Stmt, &Directive, &Stmt)> = stmts
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Acc { directive, body: Some(body) } => Some((*s, directive, &**body)),
                _ => None,
            })
            .collect();
        if constructs.iter().any(|&(_, _, body)| self.library_call(body).is_some()) {
            for s in stmts {
                self.host_stmt(s, sema, function);
            }
            return;
        }
        let (_, first, _) = constructs[0];
        let presents: Vec<Clause> = constructs
            .iter()
            .flat_map(|&(_, d, _)| d.clauses.iter())
            .filter(|c| matches!(c.kind, ClauseKind::Data { .. }))
            .cloned()
            .collect();
        let region_directive = Directive { kind: first.kind.clone(), clauses: presents, span: first.span };
        let (args, data, if_arg) = self.data_clauses(&region_directive, sema);
        let mut region = RegionState { args, treatments: HashMap::new(), default_none: DefaultNone::default(), vector_hint: None, num_gangs: Vec::new(), host_after: Vec::new() };
        self.region_clauses(&region_directive.clauses, sema, &mut region);
        let mut plans = Vec::new();
        for &(stmt, d, body) in &constructs {
            // Each construct's sizes are its own kernel's (checked as for a lone construct).
            let Some(num_gangs) = self.check_gang_dimensions(d, body, sema) else { return };
            let vector_hint = d.clauses.iter().rev().find_map(|c| match &c.kind {
                ClauseKind::VectorLength(e) => sema.const_eval(e).and_then(|v| u32::try_from(v).ok()),
                _ => None,
            });
            let sizes = Some(ConstructSizes { vector_hint, num_gangs });
            let all: Vec<&Clause> = d.clauses.iter().collect();
            let independent = has_clause(&all, |k| matches!(k, ClauseKind::Independent));
            let kernels_loop = matches!(d.kind, DirectiveKind::KernelsLoop);
            let by_analysis = has_clause(&all, |k| matches!(k, ClauseKind::Auto)) || (kernels_loop && !independent);
            let policy = if kernels_loop && !independent { NestPolicy::Auto } else { NestPolicy::Explicit };
            let checked = if by_analysis { Checked::ByAnalysis } else { Checked::Trusted };
            plans.push((Plan::Parallel { outer: body, clauses: all, policy, checked }, stmt, sizes));
        }
        let span = Span { tu: stmts[0].span.tu, lo: stmts[0].span.lo, hi: stmts[stmts.len() - 1].span.hi };
        self.finish_compute(plans, &[], sema, function, region, (data, if_arg, span));
    }

    /// Host args are evaluated once, when the region starts, but a kernel may read a host scalar
    /// that an earlier kernel of the same construct assigns (a reduction target or a scalar
    /// output, such as `m += 1` between two loops of a `parallel` region). Such a read is bound
    /// to the scalar's address instead, which the runtime reads when that kernel launches: after
    /// the earlier kernel's value has reached the host, so the later kernel sees the sequential
    /// value.
    fn bind_scalars_assigned_earlier(&mut self, kernels: &[Handle<Kernel>], args: &[HostArg]) {
        // The C expression of each assigned value (`x` for the target `&(x)`, `*((double
        // *)&(z) + 1)` for the imaginary part of a complex `z`), with the arg of its address:
        // a later param matches by its name or by the expression of its own arg.
        let mut assigned: HashMap<String, u32> = HashMap::new();
        for &h in kernels {
            let k = &mut self.module.kernels[h];
            for p in &mut k.params {
                let value = args.get(p.arg as usize).map(|a| a.c_expr.as_str());
                let address = assigned.get(&p.name).or_else(|| value.and_then(|v| assigned.get(v)));
                if let (ParamKind::Scalar(_), Some(&address)) = (&p.kind, address) {
                    p.arg = address;
                }
            }
            let targets = k.reductions.iter().map(|r| r.target_arg).chain(k.scalar_outputs.iter().map(|(_, a)| *a));
            for a in targets {
                let Some(arg) = args.get(a as usize) else { continue };
                assigned.insert(assigned_value(&arg.c_expr), a);
            }
        }
    }

    fn region_clauses(&mut self, clauses: &[Clause], sema: &Sema, region: &mut RegionState) {
        for c in clauses {
            match &c.kind {
                ClauseKind::Default(ast::DefaultKind::None) => region.default_none.span = Some(c.span),
                ClauseKind::VectorLength(e) => region.vector_hint = sema.const_eval(e).and_then(|v| u32::try_from(v).ok()),
                _ => {}
            }
            for r in clause_refs(c) {
                if let Some(root) = ref_root(&r.base) {
                    region.default_none.named.insert(root.to_string());
                }
            }
        }
        // Variables under a file-scope `declare` have their data attribute already.
        region.default_none.named.extend(self.declared_globals.iter().cloned());
        let mut treatments = HashMap::new();
        let mut errors = Vec::new();
        add_treatments(clauses.iter(), sema, &mut treatments, &mut errors, self.sources);
        self.diags.append(&mut errors);
        region.treatments = treatments;
    }

    fn kernel_name(&mut self, function: &str, span: Span) -> String {
        let line = self.sources.location(span).line;
        let base = format!("{function}_l{line}");
        let mut name = base.clone();
        let mut k = self.next_kernel_suffix.get(&base).copied().unwrap_or(2);
        while self.kernel_names.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.next_kernel_suffix.insert(base, k);
        self.kernel_names.insert(name.clone());
        name
    }

    fn kernel(&mut self, plan: Plan, site: &Site, region: &mut RegionState) -> Option<Handle<Kernel>> {
        let kernel = match plan {
            Plan::Single { stmts, span } => self.single_kernel(&stmts, span, site, region, None, None)?,
            Plan::PerThread { stmts, span, launch } => self.single_kernel(&stmts, span, site, region, None, Some(launch))?,
            Plan::Parallel { outer, clauses, policy, checked } => {
                let seq = has_clause(&clauses, |k| matches!(k, ClauseKind::Seq));
                if seq {
                    self.single_kernel(&[outer], outer.span, site, region, None, None)?
                } else {
                    let nest = NestPlan { policy, checked, max_dims: loops::MAX_DIMS };
                    self.parallel_kernel(outer, clauses, nest, site, region)?
                }
            }
        };
        Some(self.module.kernels.append(kernel))
    }

    fn context(&self) -> Context<'_> {
        Context {
            sources: self.sources,
            routines: &self.routines,
            inline_routines: &self.inline_routines,
            definitions: &self.definitions,
            unit: self.current_unit,
        }
    }

    /// Moves the builder's diagnostics into ours; true when there were errors.
    fn take_errors(&mut self, errors: Vec<Diagnostic>) -> bool {
        let failed = errors.iter().any(Diagnostic::is_error);
        self.diags.extend(errors);
        failed
    }

    /// A kernel without parallel dims: statements run by one thread, or, given `launch`, a
    /// MESI-CUDA kernel written per thread (`front::cuda`), whose body reads the grid's indices
    /// and has its block's `__shared__` arrays and barriers, run on every thread of the launch.
    fn single_kernel(
        &mut self,
        stmts: &[&Stmt],
        span: Span,
        site: &Site,
        region: &mut RegionState,
        reason: Option<SequentialReason>,
        launch: Option<&ast::CudaLaunch>,
    ) -> Option<Kernel> {
        let (prelude, sema, function) = (site.prelude, site.sema, site.function);
        let name = self.kernel_name(function, span);
        let (kernel, errors) = {
            let cx = self.context();
            let mut kb = KernelBuilder::new(&cx, sema.clone(), &mut region.args, Mode::Single);
            kb.treatments = region.treatments.clone();
            kb.default_none = region.default_none.clone();
            kb.per_thread = launch.is_some();
            for s in prelude.iter().chain(stmts) {
                kb.written.extend(walk::written_names(s));
            }
            kb.push_scope();
            let mut block = Vec::new();
            kb.stmts(prelude, &mut block);
            kb.stmts(stmts, &mut block);
            kb.pop_scope();
            let explicit_grid = launch.map(|launch| {
                let grid = launch.grid.each_ref().map(|e| match kb.expr(e) {
                    Ok(h) => kb.cast(h, ScalarType::I64),
                    Err(d) => {
                        kb.errors.push(d);
                        kb.int_const(1, ScalarType::I64)
                    }
                });
                ExplicitGrid { block: launch.block, grid, shared: std::mem::take(&mut kb.block_shared) }
            });
            // Which of the launch's threads assigns a host scalar is not known here, and one
            // thread's value would be handed back: refused rather than guessed.
            if launch.is_some()
                && let Some(&(local, _)) = kb.scalar_outputs.first()
            {
                let name = kb.body.locals[local].name.clone();
                kb.errors.push(Diagnostic::error(span, format!("a kernel that uses `__shared__` or `__syncthreads()` assigns the shared scalar `{name}`"))
                    .with_help(format!("store the value in an element of a shared array instead (`__global__ int {name}[1];` and `{name}[0] = ...`)")));
            }
            let mut body = std::mem::take(&mut kb.body);
            body.block = block;
            let kernel = Kernel {
                name,
                span,
                params: std::mem::take(&mut kb.params),
                space: Vec::new(),
                body,
                reductions: Vec::new(),
                scalar_outputs: std::mem::take(&mut kb.scalar_outputs),
                sequential_reason: reason,
                auto_private: Vec::new(),
                implicit: Vec::new(),
                inner_sequential: Vec::new(),
                num_gangs: region.num_gangs.clone(),
                partitions: Vec::new(),
                explicit_grid,
            };
            (kernel, std::mem::take(&mut kb.errors))
        };
        if self.take_errors(errors) {
            return None;
        }
        Some(kernel)
    }

    fn parallel_kernel(&mut self, outer: &Stmt, clauses: Vec<&Clause>, plan: NestPlan, site: &Site, region: &mut RegionState) -> Option<Kernel> {
        let NestPlan { policy, checked, max_dims } = plan;
        let (prelude, sema, function) = (site.prelude, site.sema, site.function);
        let all_clauses = clauses.clone();
        let sequential = |this: &mut Self, region: &mut RegionState, message: String, span: Span| {
            this.diags.push(
                Diagnostic::warning(span, format!("loop left sequential: {message}"))
                    .with_help("if the iterations are independent, say so with `#pragma acc loop independent`"),
            );
            let reason = SequentialReason { message, span };
            this.single_kernel(&[outer], outer.span, site, region, Some(reason), None)
        };
        let mut inner_sema = sema.clone();
        let (nest, _) = match loops::loop_nest(&inner_sema, outer, clauses, policy) {
            Ok(n) => n,
            Err((span, msg)) => {
                self.diags.push(Diagnostic::error(span, msg).with_help("collapse only perfectly nested loops"));
                return None;
            }
        };
        // Every loop of the nest must count; in `kernels` a loop that does not runs sequentially.
        let mut counted = Vec::new();
        for (depth, l) in nest.iter().enumerate() {
            if let Some(ast::ForInit::Decl(d)) = for_init(l.stmt) {
                // Declaring the loop variable lets inner bounds see its type.
                let _ = inner_sema.declare(d, Storage::Local);
            }
            match loops::counted_loop(&inner_sema, l.stmt) {
                Ok(c) => counted.push(c),
                Err(nc) => {
                    let must_count = depth == 0 || depth < loops::collapse_of(&nest[0].clauses) || !l.clauses.is_empty();
                    if depth == 0 && checked == Checked::ByAnalysis {
                        return sequential(self, region, format!("the loop is not a counted loop ({})", nc.why), outer.span);
                    }
                    if must_count && checked == Checked::Trusted || depth == 0 {
                        self.diags.push(not_counted_error(&nc, l.stmt));
                        return None;
                    }
                    break;
                }
            }
        }
        counted.truncate(max_dims);
        // An inner loop whose iterations read an element that an `atomic` of another iteration
        // updates has no parallel answer to give; each thread runs it in order, which is the
        // sequential answer.
        let mut inner_sequential = Vec::new();
        for depth in 1..counted.len() {
            let Some((target, plain)) = walk::atomic_shared_by_iterations(loops::for_body(nest[depth].stmt), &counted[depth].var) else {
                continue;
            };
            let (target, var) = (self.sources.text(target.span).to_string(), &counted[depth].var);
            let message = format!("the loop over `{var}` (its iterations read `{target}` while an `atomic` in another iteration updates it)");
            if let Some(level) = nest[depth].clauses.iter().find(|c| matches!(c.kind, ClauseKind::Gang { .. } | ClauseKind::Worker(..) | ClauseKind::Vector(..))) {
                self.diags.push(
                    Diagnostic::warning(level.span, format!("{message} runs in order inside each thread; this clause is not honoured"))
                        .with_help("read the element inside the `atomic` (atomic capture) to let the iterations run at once"),
                );
            }
            inner_sequential.push(SequentialReason { message, span: plain.span });
            counted.truncate(depth);
            break;
        }
        let nest = &nest[..counted.len()];
        // In `kernels`, host scalars the nest assigns are reductions, privates, or a reason to
        // stay sequential.
        let mut treatments = region.treatments.clone();
        let mut loop_clauses = Vec::new();
        for l in nest {
            loop_clauses.extend(l.clauses.iter().map(|c| (*c).clone()));
        }
        // `private` on the loops inside (sequential per thread) makes those names local too.
        let innermost = loops::for_body(nest[nest.len() - 1].stmt);
        for c in walk::nested_loop_clauses(innermost) {
            if matches!(c.kind, ClauseKind::Private(_) | ClauseKind::FirstPrivate(_)) {
                loop_clauses.push(c.clone());
            }
        }
        let mut errors = Vec::new();
        add_treatments(loop_clauses.iter(), sema, &mut treatments, &mut errors, self.sources);
        if self.take_errors(errors) {
            return None;
        }
        let innermost_body = loops::for_body(nest[nest.len() - 1].stmt);
        // Host scalars the nest updates as `s = s op e` (`s += e`, `s = fmax(s, e)`) with no
        // clause are reductions; in a loop the program calls independent too (the sequential
        // program combines every iteration's update), which a warning says.
        let mut implicit = Vec::new();
        {
            let nest_vars: HashSet<&str> = counted.iter().map(|c| c.var.as_str()).collect();
            let mut loop_vars = HashSet::new();
            walk::for_loop_vars(innermost_body, &mut loop_vars);
            let mut names: Vec<String> = walk::written_names(innermost_body).into_iter().collect();
            names.sort();
            // A scalar a loop marked independent updates under `atomic` is shared on purpose.
            let mut atomic_targets = HashSet::new();
            if checked == Checked::Trusted {
                walk::each_stmt(outer, &mut |st| {
                    if let StmtKind::Acc { directive, body: Some(b) } = &st.kind
                        && matches!(directive.kind, DirectiveKind::Atomic(_))
                    {
                        atomic_targets.extend(walk::written_names(b));
                    }
                });
            }
            for n in names {
                if nest_vars.contains(n.as_str()) || loop_vars.contains(&n) || treatments.contains_key(&n) || atomic_targets.contains(&n) {
                    continue;
                }
                let Some(ty) = sema.lookup_var(&n).map(|v| v.ty.clone()).filter(CType::is_arithmetic) else { continue };
                if declared_in(innermost_body, &n) {
                    continue;
                }
                // Reductions are recognised here; private scalars below, as in `parallel`.
                if let Some(t @ Treatment::Reduction(op, _)) = classify_scalar(innermost_body, &n) {
                    // Complex numbers reduce with `+` and `*` only.
                    if !matches!(ty, CType::Complex(_)) || matches!(op, ReductionOp::Add | ReductionOp::Mul) {
                        if checked == Checked::Trusted {
                            self.diags.push(
                                Diagnostic::warning(
                                    outer.span,
                                    format!("`{n}` is updated in this parallel loop with no reduction clause; its updates are combined as reduction({}:{n})", op.symbol()),
                                )
                                .with_help(format!("say so with reduction({}:{n}) on the loop", op.symbol())),
                            );
                        }
                        implicit.push(format!("`{n}`: reduction({}:{n}), recognised from its updates (no clause)", op.symbol()));
                        treatments.insert(n, t);
                    }
                }
            }
        }
        let auto_private = match self.auto_privatize(outer, &nest, &counted, sema, site, &mut treatments) {
            Ok(found) => {
                implicit.extend(found.notes);
                region.host_after.extend(found.host_after);
                found.private
            }
            Err((_, why)) if checked == Checked::ByAnalysis => return sequential(self, region, why, outer.span),
            Err((mut diagnostic, why)) => {
                // The user called the loop independent, and a scalar carries a value between
                // its iterations (or out of it): in order, on one thread, it keeps the
                // program's sequential meaning.
                diagnostic.severity = crate::diag::Severity::Warning;
                diagnostic.message.push_str("; the loop nest runs in order on one thread");
                self.diags.push(diagnostic);
                let reason = SequentialReason { message: why, span: outer.span };
                return self.single_kernel(&[outer], outer.span, site, region, Some(reason), None);
            }
        };
        let args_before = region.args.len();
        let name_span = outer.span;
        let (kernel, errors) = {
            let cx = self.context();
            let mut kb = KernelBuilder::new(&cx, sema.clone(), &mut region.args, Mode::Parallel);
            kb.treatments = treatments;
            kb.default_none = region.default_none.clone();
            kb.written = walk::written_names(outer);
            for p in prelude {
                kb.written.extend(walk::written_names(p));
            }
            kb.push_scope();
            let mut block = Vec::new();
            kb.stmts(prelude, &mut block);
            let mut space = Vec::new();
            let mut body_stmt = innermost_body;
            for (depth, (l, c)) in nest.iter().zip(&counted).enumerate() {
                match self.parallel_dim(&mut kb, l, c, region.vector_hint) {
                    Ok(Some(dim)) => space.push(dim),
                    Ok(None) if depth > 0 => {
                        body_stmt = loops::for_body(nest[depth - 1].stmt);
                        break;
                    }
                    Ok(None) => {
                        kb.errors.push(
                            Diagnostic::error(for_head_span(l.stmt), "the bounds of this parallel loop are not known when it starts")
                                .with_help("compute the bounds on the host before the construct"),
                        );
                        break;
                    }
                    Err(e) => {
                        kb.errors.push(e);
                        break;
                    }
                }
            }
            // The loops the body runs (an inner one whose bounds ruled it out of the space
            // included) own their variables: each iteration's are private.
            walk::for_loop_vars(body_stmt, &mut kb.loop_vars);
            let mut private_arrays: Vec<(String, bool, ast::DataRef)> = kb
                .treatments
                .iter()
                .filter_map(|(n, t)| match t {
                    Treatment::PrivateArray { first, section } => Some((n.clone(), *first, (**section).clone())),
                    _ => None,
                })
                .collect();
            private_arrays.sort_by(|a, b| a.0.cmp(&b.0));
            if !private_arrays.is_empty() && !space.is_empty() {
                match self.iteration_index(&mut kb, &counted[..space.len()], &space) {
                    Ok((index, host_iterations)) => {
                        let it = kb.new_local("iteration", ScalarType::I64, LocalKind::Var, outer.span);
                        block.push(crate::ir::Stmt::Assign { local: it, value: index });
                        for (n, first, section) in &private_arrays {
                            let at = kb.add(crate::ir::ExprKind::Local(it), ScalarType::I64, section.span);
                            if let Err(e) = kb.private_array(n, *first, section, at, &host_iterations, &mut block) {
                                kb.errors.push(e);
                            }
                        }
                    }
                    Err(e) => kb.errors.push(e),
                }
            }
            // What the outer loops of the space run before their inner loop, every thread runs
            // before its iteration (`loops::sinkable_prefix` says why that is the same).
            for l in &nest[..space.len().saturating_sub(1)] {
                kb.stmts(&l.prefix, &mut block);
            }
            let iteration = kb.iteration_body(body_stmt);
            block.extend(iteration);
            kb.pop_scope();
            let mut body = std::mem::take(&mut kb.body);
            body.block = block;
            let kernel = Kernel {
                name: String::new(),
                span: outer.span,
                params: std::mem::take(&mut kb.params),
                space,
                body,
                reductions: std::mem::take(&mut kb.reductions),
                scalar_outputs: Vec::new(),
                sequential_reason: None,
                auto_private: auto_private.clone(),
                implicit: implicit.clone(),
                inner_sequential: inner_sequential.clone(),
                num_gangs: region.num_gangs.clone(),
                partitions: Vec::new(),
                explicit_grid: None,
            };
            (kernel, std::mem::take(&mut kb.errors))
        };
        if checked == Checked::ByAnalysis && errors.iter().any(Diagnostic::is_error) {
            // What the parallel form refuses may still run sequentially (one thread).
            region.args.truncate(args_before);
            let why = errors.iter().find(|e| e.is_error()).map(|e| e.message.clone()).unwrap_or_default();
            return sequential(self, region, why, outer.span);
        }
        if self.take_errors(errors) {
            return None;
        }
        if checked == Checked::Trusted
            && let Some(found) = misplaced_independence(&kernel)
        {
            // The user called the loop independent, and it is not: the dim that carries the
            // dependence and those inside it run in order, which is the program's sequential
            // meaning.
            let (what, runs) = if found.dim == 0 { ("the loop nest", "runs on one thread") } else { ("that loop and those inside it", "run in order inside each thread") };
            self.diags.push(
                Diagnostic::warning(found.span, format!("{}, so its iterations would race; {what} {runs}", found.message)).with_help(found.help),
            );
            region.args.truncate(args_before);
            let reason = SequentialReason { message: found.message, span: found.span };
            if found.dim == 0 {
                return self.single_kernel(&[outer], outer.span, site, region, Some(reason), None);
            }
            let mut kernel = self.parallel_kernel(outer, all_clauses, NestPlan { policy, checked, max_dims: found.dim }, site, region)?;
            kernel.inner_sequential.push(reason);
            return Some(kernel);
        }
        if checked == Checked::ByAnalysis {
            if let Err(reason) = dependence_check(&kernel) {
                region.args.truncate(args_before);
                if kernel.space.len() > 1 {
                    // The outer loops may still be independent: try them with the inner ones sequential.
                    let fewer = kernel.space.len() - 1;
                    return self.parallel_kernel(outer, all_clauses, NestPlan { policy, checked, max_dims: fewer }, site, region);
                }
                return sequential(self, region, reason.message, outer.span);
            }
        }
        let mut kernel = kernel;
        kernel.name = self.kernel_name(function, name_span);
        Some(kernel)
    }

    /// The linear index of the running iteration of a parallel space (row-major over its dims,
    /// counting from 0) and the C text of the number of iterations, for the host.
    fn iteration_index(&self, kb: &mut KernelBuilder, counted: &[loops::CountedLoop], space: &[ParallelDim]) -> Result<(Handle<crate::ir::Expr>, String), Diagnostic> {
        let t = ScalarType::I64;
        let sp = Span::default();
        let mut index: Option<Handle<crate::ir::Expr>> = None;
        let mut host = Vec::new();
        for (c, dim) in counted.iter().zip(space) {
            let (lo_t, hi_t) = (self.text(c.lo.span), self.text(c.bound.span));
            let s = c.step.abs();
            let (a, b) = match c.cmp {
                Cmp::Lt | Cmp::Le => (&hi_t, &lo_t),
                Cmp::Gt | Cmp::Ge => (&lo_t, &hi_t),
            };
            let inclusive = matches!(c.cmp, Cmp::Le | Cmp::Ge);
            // As `trip_count` counts (unsigned where the step is not 1, so that nothing overflows).
            if s == 1 {
                let extra = if inclusive { " + 1" } else { "" };
                let trips = format!("((long long)({a}) - (long long)({b}){extra})");
                host.push(format!("({trips} > 0 ? {trips} : 0)"));
            } else {
                let (runs, less) = if inclusive { ("<=", "") } else { ("<", " - 1ULL") };
                host.push(format!(
                    "((long long)({b}) {runs} (long long)({a}) ? (long long)(((unsigned long long)(long long)({a}) - (unsigned long long)(long long)({b}){less}) / {s}ULL) + 1 : 0)"
                ));
            }
            kb.reading_bounds = true;
            let bounds = kb.expr(c.lo).and_then(|lo| Ok((lo, kb.expr(c.bound)?, kb.expr(c.lo)?)));
            kb.reading_bounds = false;
            let (lo, hi, lo_again) = bounds?;
            let lo64 = kb.cast(lo, t);
            let v = kb.add(crate::ir::ExprKind::Local(dim.var), kb.body.locals[dim.var].ty, sp);
            let v64 = kb.cast(v, t);
            let off = if c.step.unsigned_abs() == 1 {
                let off = kb.binary(BinaryOp::Sub, v64, lo64, t, sp);
                if c.step == 1 {
                    off
                } else {
                    let step = kb.int_const(c.step, t);
                    kb.binary(BinaryOp::Div, off, step, t, sp)
                }
            } else {
                // The distance from the start in `unsigned long long`, exact however far the
                // variable has gone (as in `trip_count`).
                let u = ScalarType::U64;
                let (v, lo) = (kb.cast(v64, u), kb.cast(lo64, u));
                let gone = if c.step > 0 { kb.binary(BinaryOp::Sub, v, lo, u, sp) } else { kb.binary(BinaryOp::Sub, lo, v, u, sp) };
                let step = kb.int_const(c.step.unsigned_abs() as i64, u);
                let off = kb.binary(BinaryOp::Div, gone, step, u, sp);
                kb.cast(off, t)
            };
            index = Some(match index {
                None => off,
                Some(prev) => {
                    let (lo64, hi64) = (kb.cast(lo_again, t), kb.cast(hi, t));
                    let trips = trip_count(kb, lo64, hi64, c.cmp, c.step);
                    let scaled = kb.binary(BinaryOp::Mul, prev, trips, t, sp);
                    kb.binary(BinaryOp::Add, scaled, off, t, sp)
                }
            });
        }
        let index = index.ok_or_else(|| Diagnostic::global_error("internal: a parallel loop without dims"))?;
        Ok((index, host.join(" * ")))
    }

    /// One parallel dimension from a counted loop; `None` when its bounds are not launch-time
    /// values (they depend on an outer loop's variable).
    fn parallel_dim(&self, kb: &mut KernelBuilder, l: &loops::NestLoop, c: &loops::CountedLoop, vector_hint: Option<u32>) -> Result<Option<ParallelDim>, Diagnostic> {
        let vty = match c.decl {
            Some(d) => kb.sema.resolve_specs(&d.specs)?.scalar(),
            None => match kb.sema.lookup_var(&c.var) {
                Some(v) => v.ty.scalar(),
                None => {
                    return Err(Diagnostic::error(for_head_span(l.stmt), format!("unknown loop variable `{}`", c.var))
                        .with_help("declare the loop variable"));
                }
            },
        };
        let vty = match vty {
            Some(t) if !t.is_float() => t,
            _ => {
                return Err(Diagnostic::error(for_head_span(l.stmt), format!("the loop variable `{}` is not an integer", c.var))
                    .with_help("count parallel loops with an integer variable"));
            }
        };
        kb.reading_bounds = true;
        let bounds = kb.effect_free_expr(c.lo).and_then(|lo| Ok((lo, kb.effect_free_expr(c.bound)?)));
        kb.reading_bounds = false;
        // Bounds with side effects (an assignment, an inlined call) are no launch-time values.
        let (Some(lo), Some(hi)) = bounds? else { return Ok(None) };
        if !kb.is_uniform(lo) || !kb.is_uniform(hi) {
            return Ok(None);
        }
        let start = kb.cast(lo, vty);
        let lo64 = kb.cast(lo, ScalarType::I64);
        let hi64 = kb.cast(hi, ScalarType::I64);
        let trip_count = trip_count(kb, lo64, hi64, c.cmp, c.step);
        let var = kb.new_local(&c.var, vty, LocalKind::LoopIndex, for_head_span(l.stmt));
        kb.bind(&c.var, var);
        let mut levels = Vec::new();
        let mut size_hint = None;
        let mut gang_dim = None;
        for cl in &l.clauses {
            match &cl.kind {
                ClauseKind::Gang { dim, .. } => {
                    levels.push(LoopLevel::Gang);
                    // Checked by `gang::check_gang_dimensions` before the kernel is made.
                    gang_dim = dim.as_ref().and_then(|d| kb.sema.const_eval(d)).and_then(|v| u8::try_from(v).ok());
                }
                ClauseKind::Worker(_) => levels.push(LoopLevel::Worker),
                ClauseKind::Vector(e) => {
                    levels.push(LoopLevel::Vector);
                    size_hint = e.as_ref().and_then(|e| kb.sema.const_eval(e)).and_then(|v| u32::try_from(v).ok()).or(vector_hint);
                }
                _ => {}
            }
        }
        // `gang vector` on one loop spans several levels: the mapping pass chooses.
        let level = match levels.as_slice() {
            [one] => *one,
            _ => LoopLevel::Auto,
        };
        Ok(Some(ParallelDim { var, start, trip_count, step: c.step, level, size_hint, gang_dim, span: l.stmt.span }))
    }
}

/// Ends a run of statements that one thread runs together.
fn flush_single<'s>(run: &mut Vec<&'s Stmt>, plans: &mut Vec<Plan<'s>>) {
    if let (Some(first), Some(last)) = (run.first(), run.last()) {
        let span = first.span.to(last.span);
        plans.push(Plan::Single { stmts: std::mem::take(run), span });
    }
}

/// The iteration count in I64 of `for (v = lo; v CMP hi; v += step)`. A unit step: `max(0, a - b)`
/// (`+ 1` with `<=`/`>=`), `a - b` being `hi - lo` or `lo - hi` as the loop counts up or down.
/// Any other: `b < a ? (a - b - 1) / s + 1 : 0` (`b <= a ? (a - b) / s + 1 : 0` with `<=`/`>=`),
/// the difference and the quotient in `unsigned long long`, where they are exact however far
/// apart the bounds lie: `(a - b + s - 1) / s` overflows for a large step (`i += 0x7fffffffffffffff`
/// from 0 to 64 runs once) or bounds of opposite signs far from zero.
/// (`analysis::carried` reads both shapes back.)
fn trip_count(kb: &mut KernelBuilder, lo: Handle<crate::ir::Expr>, hi: Handle<crate::ir::Expr>, cmp: Cmp, step: i64) -> Handle<crate::ir::Expr> {
    let t = ScalarType::I64;
    let sp = Span::default();
    let (a, b) = match cmp {
        Cmp::Lt | Cmp::Le => (hi, lo),
        Cmp::Gt | Cmp::Ge => (lo, hi),
    };
    let inclusive = matches!(cmp, Cmp::Le | Cmp::Ge);
    let s = step.unsigned_abs();
    if s == 1 {
        let mut n = kb.binary(BinaryOp::Sub, a, b, t, sp);
        if inclusive {
            let one = kb.int_const(1, t);
            n = kb.binary(BinaryOp::Add, n, one, t, sp);
        }
        let zero = kb.int_const(0, t);
        return kb.binary(BinaryOp::Max, zero, n, t, sp);
    }
    let u = ScalarType::U64;
    let (au, bu) = (kb.cast(a, u), kb.cast(b, u));
    let mut distance = kb.binary(BinaryOp::Sub, au, bu, u, sp);
    if !inclusive {
        let one = kb.int_const(1, u);
        distance = kb.binary(BinaryOp::Sub, distance, one, u, sp);
    }
    // `s` is at most 2^63 (`i64::MIN`'s magnitude), which `unsigned long long` holds.
    let divisor = kb.int_const(s as i64, u);
    let quotient = kb.binary(BinaryOp::Div, distance, divisor, u, sp);
    let quotient = kb.cast(quotient, t);
    let one = kb.int_const(1, t);
    let count = kb.binary(BinaryOp::Add, quotient, one, t, sp);
    let runs = kb.binary(if inclusive { BinaryOp::Le } else { BinaryOp::Lt }, b, a, ScalarType::Bool, sp);
    let zero = kb.int_const(0, t);
    kb.add(crate::ir::ExprKind::Select { cond: runs, then: count, otherwise: zero }, t, sp)
}

fn not_counted_error(nc: &loops::NotCounted, stmt: &Stmt) -> Diagnostic {
    let span = nc.span.unwrap_or_else(|| for_head_span(stmt));
    Diagnostic::error(span, format!("this loop is not a counted loop, so it cannot be parallelised: {}", nc.why))
        .with_help(loops::COUNTED_LOOP_HELP)
}

fn for_init(s: &Stmt) -> Option<&ast::ForInit> {
    match &s.kind {
        StmtKind::For { init, .. } => init.as_ref(),
        _ => None,
    }
}

/// The span of a loop's head (`for (...)`), falling back to the whole statement.
fn for_head_span(s: &Stmt) -> Span {
    match &s.kind {
        StmtKind::For { body, .. } if body.span.lo > s.span.lo => Span::new(s.span.tu, s.span.lo, body.span.lo),
        _ => s.span,
    }
}

fn clause_refs(c: &Clause) -> Vec<&DataRef> {
    match &c.kind {
        ClauseKind::Data { refs, .. } | ClauseKind::Private(refs) | ClauseKind::FirstPrivate(refs) => refs.iter().collect(),
        ClauseKind::Reduction { vars, .. } => vars.iter().collect(),
        _ => Vec::new(),
    }
}

fn ref_root(e: &ast::Expr) -> Option<&str> {
    match &e.kind {
        AE::Ident(n) => Some(n),
        AE::Member { base, .. } | AE::Index { base, .. } => ref_root(base),
        _ => None,
    }
}

/// The C expression of the value a write-back target holds: `x` for `&(x)`, `*(p)` for a
/// pointer `p` such as `(double *)&(z) + 1`, a part of a complex variable.
fn assigned_value(target: &str) -> String {
    match target.strip_prefix("&(").and_then(|t| t.strip_suffix(')')) {
        Some(inner) => inner.to_string(),
        None => format!("*({target})"),
    }
}
