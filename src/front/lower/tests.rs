//! Snippet tests of lowering: C source through the parser and lowering.

use crate::analysis::uniform::eval_uniform;
use crate::diag::{Diagnostic, Diagnostics, Severity};
use crate::front::ast::DataClauseKind;
use crate::source::SourceSet;
use crate::front::{PreprocessOptions, parse_program};
use crate::ir::{
    ArrayRef, AtomicOp, ExprKind, HostArgKind, Kernel, LocalKind, Module, ParamKind, ParamValue, RegionKind, ScalarType, Stmt,
};

struct Lowered {
    sources: SourceSet,
    result: Result<(Module, Vec<Diagnostic>), Diagnostics>,
}

/// Writes `c_source` to a temporary file, parses and lowers it.
fn lower_snippet(c_source: &str) -> Lowered {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("snippet.c");
    std::fs::write(&path, c_source).expect("write snippet");
    match parse_program(&[path], &PreprocessOptions::default()) {
        Ok(parsed) => {
            let result = super::lower_program(&parsed.sources, &parsed.units);
            Lowered { sources: parsed.sources, result }
        }
        Err((_, diags)) => panic!("snippet does not parse: {:?}", diags.0.iter().map(|d| &d.message).collect::<Vec<_>>()),
    }
}

impl Lowered {
    fn ok(&self) -> (&Module, &Vec<Diagnostic>) {
        match &self.result {
            Ok((m, w)) => {
                if let Err(e) = crate::valid::verify_module(m) {
                    panic!("lowered module fails the verifier: {e}");
                }
                (m, w)
            }
            Err(d) => panic!("lowering failed: {:?}", d.0.iter().map(|d| (&d.message, d.span.map(|s| self.sources.text(s)))).collect::<Vec<_>>()),
        }
    }
    /// The errors: (message, text at the span).
    fn errors(&self) -> Vec<(String, String)> {
        match &self.result {
            Ok(_) => panic!("lowering succeeded but errors were expected"),
            Err(d) => d
                .0
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(|d| (d.message.clone(), d.span.map(|s| self.sources.text(s).to_string()).unwrap_or_default()))
                .collect(),
        }
    }
    fn kernel(&self, i: usize) -> &Kernel {
        let (m, _) = self.ok();
        &m.kernels[crate::ir::Handle::new(i)]
    }
}

fn param_names(k: &Kernel) -> Vec<&str> {
    k.params.iter().map(|p| p.name.as_str()).collect()
}

fn trip(k: &Kernel, dim: usize, params: &[ParamValue]) -> i64 {
    match eval_uniform(&k.body, k.space[dim].trip_count, params) {
        Ok(ParamValue::Int(v)) => v,
        other => panic!("trip count: {other:?}"),
    }
}

/// Param values for a kernel, by name.
fn values(k: &Kernel, named: &[(&str, i64)]) -> Vec<ParamValue> {
    k.params
        .iter()
        .map(|p| named.iter().find(|(n, _)| *n == p.name).map(|(_, v)| ParamValue::Int(*v)).unwrap_or(ParamValue::Pointer(0)))
        .collect()
}

#[test]
fn parallel_loop_with_data_clauses() {
    let l = lower_snippet(
        "void f(int n, double *a, const double *restrict b) {\n\
         #pragma acc parallel loop copyin(b[0:n]) copyout(a[0:n])\n\
         for (int i = 0; i < n; i++) a[i] = 2.0 * b[i];\n}\n",
    );
    let (m, _) = l.ok();
    assert_eq!(m.regions.len(), 1);
    let r = &m.regions[0];
    assert_eq!(r.function, "f");
    let RegionKind::Compute { kernels, data } = &r.kind else { panic!("not compute") };
    assert_eq!(kernels.len(), 1);
    assert_eq!(data.len(), 2);
    assert_eq!(data[0].kind, DataClauseKind::CopyIn);
    assert_eq!(r.args[data[0].base as usize].c_expr, "b");
    assert_eq!(data[0].lo, None);
    assert_eq!(r.args[data[0].len.unwrap() as usize].c_expr, "(n)");
    assert_eq!(data[0].elem_size, 8);
    let k = l.kernel(0);
    assert_eq!(k.name, "f_l3");
    assert_eq!(k.space.len(), 1);
    let mut names = param_names(k);
    names.sort();
    assert_eq!(names, vec!["a", "b", "n"]);
    let b = k.params.iter().find(|p| p.name == "b").unwrap();
    assert!(matches!(&b.kind, ParamKind::Array { elem: ScalarType::F64, dims, restrict: true, read_only: true } if dims.len() == 1 && dims[0].is_none()));
    assert_eq!(trip(k, 0, &values(k, &[("n", 10)])), 10);
    assert_eq!(trip(k, 0, &values(k, &[("n", -3)])), 0);
}

#[test]
fn trip_counts_of_stepped_and_inclusive_loops() {
    let l = lower_snippet(
        "void f(int n, double *a) {\n\
         #pragma acc parallel loop\n\
         for (int i = 1; i <= n; i += 3) a[i] = 1.0;\n\
         #pragma acc parallel loop\n\
         for (int i = n; i > 0; i--) a[i] = 1.0;\n}\n",
    );
    let k = l.kernel(0);
    assert_eq!(k.space[0].step, 3);
    // i = 1, 4, 7, 10 for n = 10
    assert_eq!(trip(k, 0, &values(k, &[("n", 10)])), 4);
    let k = l.kernel(1);
    assert_eq!(k.space[0].step, -1);
    assert_eq!(trip(k, 0, &values(k, &[("n", 10)])), 10);
}

#[test]
fn whole_static_array_and_two_dimensional_sections() {
    let l = lower_snippet(
        "#define N 64\n#define M 32\nstatic double a[N][M];\nvoid f(int n) {\n\
         #pragma acc data copy(a) copyin(a[1:n][0:M])\n\
         {\n\
         #pragma acc parallel loop collapse(2)\n\
         for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) a[i][j] += 1.0;\n\
         }\n}\n",
    );
    let (m, _) = l.ok();
    assert_eq!(m.regions.len(), 2);
    let r = &m.regions[0];
    let RegionKind::Data { data } = &r.kind else { panic!("not data") };
    assert!(r.body_span.is_some());
    assert_eq!(data[0].len, None);
    assert_eq!(r.args[data[0].base as usize].size_expr.as_deref(), Some("sizeof(a)"));
    assert_eq!(r.args[data[1].lo.unwrap() as usize].c_expr, "((1) * 32)");
    assert_eq!(r.args[data[1].len.unwrap() as usize].c_expr, "((n) * 32)");
    assert!(matches!(m.regions[1].kind, RegionKind::Compute { .. }));
    let k = l.kernel(0);
    assert_eq!(k.space.len(), 2);
    let ParamKind::Array { dims, .. } = &k.params[0].kind else { panic!("array") };
    assert_eq!(dims.len(), 2);
    assert!(dims.iter().all(Option::is_some));
    let load_indices = k.body.exprs.iter().find_map(|(_, e)| match &e.kind {
        ExprKind::Load { array: ArrayRef::Param(0), indices } => Some(indices.len()),
        _ => None,
    });
    assert_eq!(load_indices, Some(2));
}

#[test]
fn pointer_without_section_takes_the_extent_of_its_allocation_at_run_time() {
    let l = lower_snippet(
        "void f(int n, double *p) {\n\
         #pragma acc parallel loop copy(p)\n\
         for (int i = 0; i < n; i++) p[i] = 0.0;\n}\n",
    );
    let (module, _) = l.ok();
    let RegionKind::Compute { data, .. } = &module.regions[0].kind else { panic!("not a compute region") };
    assert_eq!((data[0].name.as_str(), data[0].lo, data[0].len), ("p", None, None));
}

#[test]
fn array_parameter_without_section_takes_its_declared_extent() {
    let l = lower_snippet(
        "void f(int n, double a[n][8]) {\n\
         #pragma acc parallel loop copy(a)\n\
         for (int i = 0; i < n; i++) a[i][0] = 0.0;\n}\n",
    );
    let (module, _) = l.ok();
    let region = &module.regions[0];
    let RegionKind::Compute { data, .. } = &region.kind else { panic!("not a compute region") };
    let len = data[0].len.expect("a length from the declaration");
    assert_eq!(region.args[len as usize].c_expr, "((n) * 8)");
}

#[test]
fn reduction_clause_makes_accumulator_and_scalar_out() {
    let l = lower_snippet(
        "double f(int n, double *a) {\n double s = 0.0;\n\
         #pragma acc parallel loop reduction(+:s)\n\
         for (int i = 0; i < n; i++) s += a[i];\n return s;\n}\n",
    );
    let (m, _) = l.ok();
    let k = l.kernel(0);
    assert_eq!(k.reductions.len(), 1);
    let red = &k.reductions[0];
    assert_eq!(red.ty, ScalarType::F64);
    assert_eq!(k.body.locals[red.local].kind, LocalKind::Reduction(0));
    let arg = &m.regions[0].args[red.target_arg as usize];
    assert_eq!(arg.c_expr, "&(s)");
    assert_eq!(arg.kind, HostArgKind::ScalarOut(ScalarType::F64));
}

#[test]
fn scalar_assigned_before_read_is_private_automatically() {
    let l = lower_snippet(
        "void f(int n, double *a) {\n double t;\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) { t = a[i]; a[i] = t * t; }\n}\n",
    );
    let k = l.kernel(0);
    assert_eq!(k.auto_private, vec!["t".to_string()]);
    assert!(k.body.locals.iter().any(|(_, loc)| loc.name == "t" && loc.kind == LocalKind::Private));
}

/// The warning whose message contains `text`, and the source text at its span.
fn warning_containing<'l>(l: &'l Lowered, text: &str) -> (&'l Diagnostic, String) {
    let (_, warnings) = l.ok();
    let w = warnings
        .iter()
        .find(|w| w.message.contains(text))
        .unwrap_or_else(|| panic!("no warning with `{text}` in {:?}", warnings.iter().map(|w| &w.message).collect::<Vec<_>>()));
    (w, w.span.map(|s| l.sources.text(s).to_string()).unwrap_or_default())
}

#[test]
fn shared_scalar_read_before_write_runs_the_independent_loop_in_order() {
    let l = lower_snippet(
        "void f(int n, double *a) {\n double t = 0.0;\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) { if (a[i] > 0.0) t = a[i]; a[i] = t * t; }\n}\n",
    );
    let (w, at) = warning_containing(&l, "`t` is read here before this iteration assigns it");
    assert_eq!(at, "t");
    assert!(w.message.ends_with("the loop nest runs in order on one thread"), "{}", w.message);
    let k = l.kernel(0);
    assert!(k.space.is_empty() && k.sequential_reason.is_some(), "{:?}", k.space);
}

#[test]
fn private_scalar_read_after_the_loop_runs_the_loop_in_order() {
    let l = lower_snippet(
        "double f(int n, double *a) {\n double t = 0.0;\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) { t = a[i]; a[i] = t * t; }\n return t;\n}\n",
    );
    warning_containing(&l, "`t` is assigned in this parallel loop and read after it");
    let k = l.kernel(0);
    assert!(k.space.is_empty(), "{:?}", k.space);
    assert_eq!(k.scalar_outputs.len(), 1, "the host reads the last iteration's `t`");
}

#[test]
fn independent_loops_with_a_witnessed_dependence_run_in_order() {
    // A first-order recurrence (PolyBench's durbin), a triangular update reading rows that
    // earlier iterations wrote (cholesky), and an in-place sweep with a dependence along the
    // inner dim only.
    let l = lower_snippet(
        "void f(int n, double *b, double A[64][64], double G[64][64]) {\n\
         #pragma acc parallel loop\n\
         for (int k = 1; k < n; k++) b[k] = b[k - 1] * 0.5;\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) {\n\
           for (int j = i + 1; j < n; j++) {\n\
             double x = A[i][j];\n\
             for (int k = 0; k < i; k++) x -= A[j][k] * A[i][k];\n\
             A[j][i] = x;\n\
           }\n\
         }\n\
         #pragma acc parallel loop collapse(2)\n\
         for (int i = 0; i < n; i++)\n\
           for (int j = 2; j < n; j += 2) G[i][j] = G[i][j - 2] + 1.0;\n}\n",
    );
    let (w, at) = warning_containing(&l, "`b[k]` writes an element that `b[k - 1]` reads in a later iteration of the loop over `k`");
    assert_eq!(at, "b[k] = b[k - 1] * 0.5");
    assert!(w.message.contains("with n = 3, iteration k = 1 writes b[1] and iteration k = 2 reads it"), "{}", w.message);
    assert!(l.kernel(0).space.is_empty());
    warning_containing(&l, "`A[j][i]` writes an element that `A[j][k]` reads in a later iteration of the loop over `i`");
    assert!(l.kernel(1).space.is_empty());
    let (w, _) = warning_containing(&l, "`G[i][j]` writes an element that `G[i][j - 2]` reads in a later iteration of the loop over `j`");
    assert!(w.message.contains("that loop and those inside it run in order inside each thread"), "{}", w.message);
    let k = l.kernel(2);
    assert_eq!(k.space.len(), 1, "the loop over `i` stays parallel");
    assert_eq!(k.body.locals[k.space[0].var].name, "i");
}

#[test]
fn independent_loops_without_a_witness_stay_parallel() {
    // Disjoint strided elements, a write and read of one element per iteration, rows no other
    // iteration touches, a reference under a condition, a subscript that is not affine, and a
    // read of elements the loop writes only beyond its own range.
    let l = lower_snippet(
        "void f(int n, double *a, double *c, int *idx, double A[64][64]) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) a[2 * i] = a[2 * i + 1];\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) a[i] = a[i] * 2.0;\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) for (int j = 0; j < i; j++) A[i][j] = A[i][j + 1];\n\
         #pragma acc parallel loop\n\
         for (int i = 1; i < n; i++) if (c[i] > 0.0) c[i] = c[i - 1];\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) a[idx[i]] = a[i];\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < 32; i++) c[i] = c[i + 32];\n}\n",
    );
    let (m, warnings) = l.ok();
    assert!(warnings.iter().all(|w| !w.message.contains("would race")), "{:?}", warnings.iter().map(|w| &w.message).collect::<Vec<_>>());
    for k in 0..6 {
        assert_eq!(l.kernel(k).space.len(), 1, "kernel {k} of {}", m.kernels.len());
    }
}

#[test]
fn csr_inner_vector_reduction_runs_per_thread() {
    let l = lower_snippet(
        "void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y) {\n\
         #pragma acc parallel loop gang\n\
         for (int r = 0; r < n; r++) {\n\
           double sum = 0.0;\n\
           #pragma acc loop vector reduction(+:sum)\n\
           for (int e = rowptr[r]; e < rowptr[r + 1]; e++) sum += val[e] * x[col[e]];\n\
           y[r] = sum;\n\
         }\n}\n",
    );
    let k = l.kernel(0);
    assert_eq!(k.space.len(), 1);
    assert!(k.reductions.is_empty());
    let inner = k.body.block.iter().find_map(|s| match s {
        Stmt::Loop { range, .. } => Some(range.is_some()),
        _ => None,
    });
    assert_eq!(inner, Some(true));
}

#[test]
fn kernels_region_falls_back_to_sequential_with_a_warning() {
    let l = lower_snippet(
        "#define N 100\nstatic double a[N], b[N];\nint main(void) {\n\
         #pragma acc kernels\n\
         {\n\
           for (int i = 0; i < N; i++) a[i] = b[i] * 2.0;\n\
           for (int i = 1; i < N; i++) a[i] = a[i - 1] + a[i];\n\
         }\n return 0;\n}\n",
    );
    let (m, warnings) = l.ok();
    let RegionKind::Compute { kernels, .. } = &m.regions[0].kind else { panic!("compute") };
    assert_eq!(kernels.len(), 2);
    assert_eq!(l.kernel(0).space.len(), 1);
    let seq = l.kernel(1);
    assert!(seq.space.is_empty());
    assert!(seq.sequential_reason.is_some());
    let w = warnings.iter().find(|w| w.message.starts_with("loop left sequential: ")).expect("warning");
    assert_eq!(w.severity, Severity::Warning);
    assert!(l.sources.text(w.span.unwrap()).starts_with("for (int i = 1;"));
}

#[test]
fn kernels_loop_recognises_a_scalar_reduction() {
    let l = lower_snippet(
        "double f(int n, const double *a) {\n double s = 0.0;\n\
         #pragma acc kernels loop\n\
         for (int i = 0; i < n; i++) s = s + a[i];\n return s;\n}\n",
    );
    let k = l.kernel(0);
    assert_eq!(k.space.len(), 1);
    assert_eq!(k.reductions.len(), 1);
}

#[test]
fn himeno_struct_fields_become_params() {
    let l = lower_snippet(
        "struct Mat { float *m; int mnums, mrows, mcols, mdeps; };\ntypedef struct Mat Matrix;\n\
         #define MR(mt,n,r,c,d) mt->m[(n)*mt->mrows*mt->mcols*mt->mdeps + (r)*mt->mcols*mt->mdeps + (c)*mt->mdeps + (d)]\n\
         void f(Matrix *p, Matrix *q) {\n int imax = p->mrows - 1;\n\
         #pragma acc parallel loop collapse(2)\n\
         for (int i = 1; i < imax; i++)\n  for (int j = 1; j < p->mcols - 1; j++) {\n\
           #pragma acc loop vector\n\
           for (int k = 1; k < p->mdeps - 1; k++) MR(p, 0, i, j, k) = MR(q, 0, i, j, k);\n  }\n}\n",
    );
    let k = l.kernel(0);
    assert_eq!(k.space.len(), 3);
    let names = param_names(k);
    for expected in ["imax", "p->mcols", "p->mdeps", "p->m", "p->mrows", "q->m", "q->mrows", "q->mcols", "q->mdeps"] {
        assert!(names.contains(&expected), "missing param {expected} in {names:?}");
    }
    assert_eq!(names.iter().filter(|n| **n == "p->mdeps").count(), 1);
    let pm = k.params.iter().find(|p| p.name == "p->m").unwrap();
    assert!(matches!(&pm.kind, ParamKind::Array { elem: ScalarType::F32, dims, .. } if dims.len() == 1));
    assert_eq!(trip(k, 1, &values(k, &[("p->mcols", 10)])), 8);
}

#[test]
fn atomic_update_and_host_scalar_refusal() {
    let l = lower_snippet(
        "void f(int n, const int *v, int *hist) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) {\n\
           #pragma acc atomic update\n\
           hist[v[i] % 16] += 1;\n\
         }\n}\n",
    );
    let k = l.kernel(0);
    assert!(matches!(k.body.block.first(), Some(Stmt::Atomic { op: AtomicOp::Add, capture: None, .. })));
    // A host scalar under an atomic is updated in place through its address.
    let l = lower_snippet(
        "void f(int n, int *order) {\n int counter = 0;\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) {\n\
           int ticket;\n\
           #pragma acc atomic capture\n\
           ticket = counter++;\n\
           order[i] = ticket;\n\
         }\n}\n",
    );
    let (m, _) = l.ok();
    let k = l.kernel(0);
    assert!(k.body.block.iter().any(|s| matches!(s, Stmt::Atomic { op: AtomicOp::Add, capture: Some(_), .. })));
    let cell = k.params.iter().find(|p| p.name == "&(counter)").expect("counter cell");
    assert_eq!(m.regions[0].args[cell.arg as usize].kind, HostArgKind::Pointer);
}

#[test]
fn refusals_carry_the_offending_span() {
    let l = lower_snippet(
        "int g(int x) { return x + 1; }\nvoid f(int n, double *a) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) { a[i] = g(i); }\n}\n",
    );
    // `g` has no `routine` directive: calling it in the construct gives it an implicit one.
    let (m, _) = l.ok();
    assert_eq!(m.functions.len(), 1, "g is lowered as a device function");

    // A pointer local into a device array lowers to an access of the array; one assigned
    // pointers into two arrays does not.
    let l = lower_snippet(
        "void f(int n, double *a, double *b) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) { double *row = a + i; row[0] = 1.0; row = b; }\n}\n",
    );
    let errors = l.errors();
    assert!(errors[0].0.contains("`row` points into `b` here but into `a` before"), "{errors:?}");
    assert_eq!(errors[0].1, "b");

    let l = lower_snippet(
        "void f(int n, double *a) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) { if (a[i] < 0) break; a[i] = 1.0; }\n}\n",
    );
    assert_eq!(l.errors()[0].1, "break;");

    let l = lower_snippet(
        "void f(int n, double *a) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i *= 2) a[i] = 1.0;\n}\n",
    );
    let errors = l.errors();
    assert!(errors[0].0.starts_with("this loop is not a counted loop"), "{errors:?}");
    assert_eq!(errors[0].1, "i *= 2");
}

#[test]
fn library_calls_leave_the_construct_on_the_host() {
    let l = lower_snippet(
        "#include <stdio.h>\nvoid f(int n, double *a) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) printf(\"%f\\n\", a[i]);\n}\n",
    );
    let (m, warnings) = l.ok();
    assert!(m.regions.is_empty());
    assert!(warnings.iter().any(|w| w.message.contains("`printf`")));
}

#[test]
fn routine_seq_functions_are_device_functions() {
    let l = lower_snippet(
        "#pragma acc routine seq\nstatic double sq(double x) { return x * x; }\n\
         void f(int n, double *a) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) a[i] = sq(a[i]);\n}\n",
    );
    let (m, _) = l.ok();
    assert_eq!(m.functions.len(), 1);
    let k = l.kernel(0);
    assert!(k.body.exprs.iter().any(|(_, e)| matches!(e.kind, ExprKind::Call { .. })));
}

#[test]
fn serial_and_update_and_enter_exit_regions_in_order() {
    let l = lower_snippet(
        "void f(int n, double *a) {\n double s = 0.0;\n\
         #pragma acc enter data copyin(a[0:n])\n\
         #pragma acc serial\n\
         { for (int i = 0; i < n; i++) s += a[i]; }\n\
         #pragma acc update host(a[0:n])\n\
         #pragma acc exit data delete(a[0:n])\n}\n",
    );
    let (m, _) = l.ok();
    let kinds: Vec<&str> = m
        .regions
        .iter()
        .map(|r| match r.kind {
            RegionKind::EnterData { .. } => "enter",
            RegionKind::Compute { .. } => "compute",
            RegionKind::Update { .. } => "update",
            RegionKind::ExitData { .. } => "exit",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, vec!["enter", "compute", "update", "exit"]);
    let k = l.kernel(0);
    assert!(k.space.is_empty());
    assert_eq!(k.scalar_outputs.len(), 1);
}

#[test]
fn routine_with_array_parameter_is_inlined() {
    let l = lower_snippet(
        "#pragma acc routine seq\nstatic double poly(const double *c, int deg, double x) {\n\
           double r = c[deg];\n\
           for (int d = deg - 1; d >= 0; d--) { if (x == 0.0) return c[0]; r = r * x + c[d]; }\n\
           return r;\n}\n\
         void f(int n, const double *coef, const double *xs, double *ys) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) ys[i] = poly(coef, 3, xs[i]);\n}\n",
    );
    let (m, _) = l.ok();
    assert_eq!(m.functions.len(), 0);
    let k = l.kernel(0);
    let mut names = param_names(k);
    names.sort();
    assert_eq!(names, vec!["coef", "n", "xs", "ys"]);
    // The body: the done flag, the one-trip loop holding the inlined body, then the store.
    assert!(matches!(k.body.block.as_slice(), [.., Stmt::Loop { test_first: false, .. }, Stmt::Store { .. }]));
    assert!(!k.body.exprs.iter().any(|(_, e)| matches!(e.kind, ExprKind::Call { .. })));
}

#[test]
fn kernels_nest_keeps_the_independent_outer_loop_parallel() {
    let l = lower_snippet(
        "void f(int n, int m, double a[n][m]) {\n\
         #pragma acc kernels\n\
         for (int i = 0; i < n; i++)\n\
           for (int j = 1; j < m; j++) a[i][j] = a[i][j - 1] + 1.0;\n}\n",
    );
    let k = l.kernel(0);
    assert_eq!(k.space.len(), 1);
    assert!(matches!(k.body.block.as_slice(), [.., Stmt::Loop { range: Some(_), .. }]));
}

#[test]
fn partial_inner_sections_use_the_bounding_range() {
    let l = lower_snippet(
        "#define M 10\nvoid f(int n, double (*a)[M], double *v) {\n\
         #pragma acc update device(a[2:n][1:3]) self(v[4])\n}\n",
    );
    let (m, _) = l.ok();
    let r = &m.regions[0];
    let RegionKind::Update { data } = &r.kind else { panic!("update") };
    assert_eq!(data[0].kind, DataClauseKind::Device);
    assert_eq!(r.args[data[0].lo.unwrap() as usize].c_expr, "((2) * 10 + (1))");
    assert_eq!(r.args[data[0].len.unwrap() as usize].c_expr, "(((n) - 1) * 10 + ((3) - 1) + 1)");
    assert_eq!(data[1].kind, DataClauseKind::Host);
    assert_eq!(r.args[data[1].lo.unwrap() as usize].c_expr, "(4)");
    assert_eq!(r.args[data[1].len.unwrap() as usize].c_expr, "(1)");
}

/// The first error of a snippet: (message, text at its span).
fn first_error(src: &str) -> (String, String) {
    lower_snippet(src).errors().into_iter().next().expect("an error")
}

#[test]
fn more_refusals_point_at_the_construct() {
    let wrap = |body: &str| format!("struct S {{ int n; }};\nvoid f(int n, double *a, struct S s) {{\n double x = 0;\n#pragma acc parallel loop\nfor (int i = 0; i < n; i++) {{ {body} }}\n}}\n");
    // Reading through the address of a host scalar all iterations share is fine; writing
    // through it is not.
    let (msg, at) = first_error(&wrap("double *p = &x; a[i] = *p; *p = 1.0;"));
    assert!(msg.contains("writes through the address of `x`, a host variable every iteration shares"), "{msg}");
    assert_eq!(at, "*p");
    // An assignment inside an expression is fine; to a host scalar all iterations share that is
    // read after the loop, it makes the loop run in order; one nothing reads after the loop is
    // private to each iteration.
    let after = |tail: &str| {
        format!(
            "void f(int n, double *a) {{\n double x = 0;\n#pragma acc parallel loop\n\
             for (int i = 0; i < n; i++) {{ double y; a[i] = (y = 2.0) + (x = a[i]); }}\n{tail}}}\n"
        )
    };
    let read_after = lower_snippet(&after(" a[0] = x;\n"));
    let (_, at) = warning_containing(&read_after, "`x` is assigned in this parallel loop and read after it");
    assert_eq!(at, "(x = a[i])");
    assert!(read_after.kernel(0).space.is_empty(), "runs in order");
    assert_eq!(lower_snippet(&after("")).kernel(0).auto_private, vec!["x".to_string()]);
    // A struct local and a local array of structs are fine; one of variable length is not.
    lower_snippet(&wrap("struct S u; u.n = i; struct S t[2]; t[0].n = u.n; a[i] = t[0].n;")).ok();
    let (msg, at) = first_error(&wrap("struct S t[n]; t[0].n = 1; a[i] = t[0].n;"));
    assert!(msg.contains("needs constant dimensions and number elements"), "{msg}");
    assert_eq!(at, "t");
    // Cases may fall through, but a label must be directly in the switch body.
    let (msg, at) = first_error(&wrap("switch (i % 3) { case 0: if (i > 2) { case 1: a[i] = 2.0; } break; }"));
    assert!(msg.contains("not directly in a switch body"), "{msg}");
    assert_eq!(at, "case 1: a[i] = 2.0;");
    let (msg, at) = first_error(&wrap("a[i] = a + 1;"));
    assert!(msg.contains("uses a pointer as a number"), "{msg}");
    assert_eq!(at, "a + 1");
    // Reading a struct field of a host struct is fine; assigning it is not.
    let (msg, at) = first_error(&wrap("s.n = i;"));
    assert!(msg.contains("members of host structs"), "{msg}");
    assert_eq!(at, "s.n");
    let (msg, at) = first_error(
        "void f(int n, double *a, double *b) {\n#pragma acc parallel loop default(none) copy(a[0:n]) firstprivate(n)\nfor (int i = 0; i < n; i++) a[i] = b[i];\n}\n",
    );
    assert!(msg.contains("default(none)"), "{msg}");
    assert_eq!(at, "b");
}

#[test]
fn a_routine_reading_a_global_is_inlined_where_the_global_is_a_param() {
    let l = lower_snippet(
        "static double scale = 2.0;\n#pragma acc routine seq\nstatic double sc(double x) { return x * scale; }\n\
         void f(int n, double *a) {\n#pragma acc parallel loop\nfor (int i = 0; i < n; i++) a[i] = sc(a[i]);\n}\n",
    );
    let (m, _) = l.ok();
    assert!(m.functions.is_empty(), "sc is inlined, not an IR function");
    assert!(l.kernel(0).params.iter().any(|p| p.name == "scale" && matches!(p.kind, crate::ir::ParamKind::Scalar(_))), "{:?}", l.kernel(0).params);
}

#[test]
fn private_on_an_inner_loop_privatises_for_the_kernel() {
    let l = lower_snippet(
        "void f(int n, int m, double *a) {\n double tmp;\n\
         #pragma acc parallel loop gang vector\n\
         for (int i = 0; i < n; i++) {\n\
           #pragma acc loop seq private(tmp)\n\
           for (int j = 0; j < m; j++) { tmp = a[i * m + j]; a[i * m + j] = tmp * 2.0; }\n\
         }\n}\n",
    );
    let k = l.kernel(0);
    assert!(k.body.locals.iter().any(|(_, loc)| loc.name == "tmp" && loc.kind == LocalKind::Private));
    assert_eq!(k.space[0].level, crate::ir::LoopLevel::Auto);
}

#[test]
fn if_clause_wait_firstprivate_and_vla_dims() {
    let l = lower_snippet(
        "void f(int n, int m, double a[n][m], double off) {\n\
         #pragma acc parallel loop if(n > 10) firstprivate(off)\n\
         for (int i = 0; i < n; i++) a[i][0] = off;\n\
         #pragma acc wait\n}\n",
    );
    let (m, _) = l.ok();
    let r = &m.regions[0];
    assert_eq!(r.args[r.if_arg.unwrap() as usize].c_expr, "(n > 10)");
    assert_eq!(r.args[r.if_arg.unwrap() as usize].kind, HostArgKind::Int);
    assert!(matches!(m.regions[1].kind, RegionKind::Wait));
    let k = l.kernel(0);
    let a = k.params.iter().find(|p| p.name == "a").unwrap();
    let ParamKind::Array { dims, .. } = &a.kind else { panic!("array") };
    assert!(dims[0].is_none());
    let inner = dims[1].expect("inner dim");
    let mp = k.params.iter().position(|p| p.name == "m").unwrap();
    let vals: Vec<ParamValue> = k.params.iter().enumerate().map(|(i, _)| if i == mp { ParamValue::Int(7) } else { ParamValue::Int(0) }).collect();
    assert_eq!(eval_uniform(&k.body, inner, &vals), Ok(ParamValue::Int(7)));
    assert!(k.body.locals.iter().any(|(_, loc)| loc.name == "off" && matches!(loc.kind, LocalKind::FirstPrivate(_))));
}

#[test]
fn kernels_privatises_a_scalar_written_before_it_is_read() {
    let l = lower_snippet(
        "void f(int n, double *a) {\n double t;\n\
         #pragma acc kernels loop\n\
         for (int i = 0; i < n; i++) { t = a[i] * 2.0; a[i] = t + 1.0; }\n}\n",
    );
    let k = l.kernel(0);
    assert_eq!(k.space.len(), 1);
    assert!(k.body.locals.iter().any(|(_, loc)| loc.name == "t" && loc.kind == LocalKind::Private));
    let l = lower_snippet(
        "void f(int n, double *a) {\n double t = 0.0;\n\
         #pragma acc kernels loop\n\
         for (int i = 0; i < n; i++) { a[i] = t; t = a[i] * 2.0; }\n}\n",
    );
    let (_, warnings) = l.ok();
    assert!(l.kernel(0).space.is_empty());
    assert!(warnings.iter().any(|w| w.message.contains("`t` is read (line 4) before an iteration assigns it")), "{warnings:?}");
}

#[test]
fn chained_assignment_at_statement_level() {
    let l = lower_snippet(
        "void f(int n, double *a, double *b) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) a[i] = b[i] = 1.5;\n}\n",
    );
    let k = l.kernel(0);
    let stores: Vec<u32> = k
        .body
        .block
        .iter()
        .filter_map(|s| match s {
            Stmt::Store { array: ArrayRef::Param(p), .. } => Some(*p),
            _ => None,
        })
        .collect();
    let names: Vec<&str> = stores.iter().map(|p| k.params[*p as usize].name.as_str()).collect();
    assert_eq!(names, vec!["b", "a"]);
}

#[test]
fn kernels_recognises_a_guarded_max() {
    let l = lower_snippet(
        "double f(int n, const double *a) {\n double mx = a[0];\n\
         #pragma acc kernels loop\n\
         for (int i = 0; i < n; i++) { if (a[i] * 2.0 > mx) mx = a[i] * 2.0; }\n return mx;\n}\n",
    );
    let k = l.kernel(0);
    assert_eq!(k.space.len(), 1);
    assert_eq!(k.reductions.len(), 1);
    assert_eq!(k.reductions[0].op, crate::front::ast::ReductionOp::Max);
}

#[test]
fn storing_into_bool_tests_against_zero() {
    let l = lower_snippet(
        "void f(int n, _Bool *flag, const double *x) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) flag[i] = x[i];\n}\n",
    );
    let k = l.kernel(0);
    let Some(Stmt::Store { value, .. }) = k.body.block.first() else { panic!("store") };
    let e = &k.body.exprs[*value];
    assert_eq!(e.ty, ScalarType::Bool);
    assert!(matches!(e.kind, ExprKind::Binary { op: crate::ir::BinaryOp::Ne, .. }));
}

#[test]
fn later_kernel_reads_an_earlier_reduction_through_its_address() {
    let l = lower_snippet(
        "void f(int n, double *a) {\n double s = 0.0;\n\
         #pragma acc parallel\n{\n\
         #pragma acc loop reduction(+:s)\n\
         for (int i = 0; i < n; i++) s += a[i];\n\
         #pragma acc loop\n\
         for (int i = 0; i < n; i++) a[i] = a[i] / s;\n}\n}\n",
    );
    let target = l.kernel(0).reductions[0].target_arg;
    let second = l.kernel(1);
    let s = second.params.iter().find(|p| p.name == "s").expect("`s` is a param of the second kernel");
    assert_eq!(s.arg, target, "the second kernel reads `s` where the first one's reduction lands");
    let (m, _) = l.ok();
    assert_eq!(m.regions[0].args[target as usize].kind, HostArgKind::ScalarOut(ScalarType::F64));
}

#[test]
fn loop_bound_from_a_host_array_element_is_a_param() {
    let l = lower_snippet(
        "void f(const int *dims, double *a) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < dims[1]; i++) a[i] = 0.0;\n}\n",
    );
    let k = l.kernel(0);
    let p = k.params.iter().position(|p| p.name == "dims[1]").expect("bound param");
    let vals: Vec<ParamValue> = (0..k.params.len()).map(|i| if i == p { ParamValue::Int(9) } else { ParamValue::Pointer(0) }).collect();
    assert_eq!(trip(k, 0, &vals), 9);
}

#[test]
fn unmodelled_system_types_do_not_stop_host_code() {
    let l = lower_snippet(
        "#include <pthread.h>\nstatic pthread_mutex_t lock;\nenum { W = sizeof(lock) / 4, V };\n\
         void f(int n, double *a) {\n pthread_mutex_t *m = &lock; (void)m;\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) a[i] = 1.0;\n}\n",
    );
    let (m, _) = l.ok();
    assert_eq!(m.regions.len(), 1);
}

#[test]
fn sizeof_follows_lp64_struct_layout() {
    let l = lower_snippet(
        "struct S { char c; double d; int x; };\nunion U { char c[5]; int i; };\n\
         void f(int n, long *a) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) a[i] = sizeof(struct S) * 100 + sizeof(union U) + sizeof a[0];\n}\n",
    );
    let k = l.kernel(0);
    let consts: Vec<i64> = k
        .body
        .exprs
        .iter()
        .filter_map(|(_, e)| match e.kind {
            ExprKind::ConstInt(v) if e.ty == ScalarType::U64 => Some(v),
            _ => None,
        })
        .collect();
    assert!(consts.contains(&24), "{consts:?}");
    assert!(consts.contains(&8), "{consts:?}");
}

#[test]
fn liveness_after_a_construct_follows_enclosing_loops() {
    // Read at the top of the enclosing loop's body, before anything assigns it: live.
    let l = lower_snippet(
        "void f(int n, double *a) {\n double t = 0.0;\n\
         for (int s = 0; s < 3; s++) {\n a[0] = t;\n\
         #pragma acc parallel loop\n\
         for (int i = 1; i < n; i++) { t = a[i]; a[i] = t * t; }\n }\n}\n",
    );
    warning_containing(&l, "read after it");
    // Assigned again before every later read: dead, so private.
    let l = lower_snippet(
        "void f(int n, double *a) {\n double t;\n\
         for (int s = 0; s < 3; s++) {\n\
         #pragma acc parallel loop\n\
         for (int i = 1; i < n; i++) { if (a[i] > 0.0) t = a[i]; else t = -a[i]; a[i] = t * t; }\n\
         t = 1.0;\n a[0] = t;\n }\n}\n",
    );
    assert_eq!(l.kernel(0).auto_private, vec!["t".to_string()]);
    // A global keeps its value for other functions: the loop runs in order.
    let l = lower_snippet(
        "double g;\nvoid f(int n, double *a) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) { g = a[i]; a[i] = g * g; }\n}\n",
    );
    warning_containing(&l, "not local to the function");
    assert!(l.kernel(0).space.is_empty());
}

#[test]
fn a_member_of_an_array_of_structs_is_a_row_of_a_view_of_the_array() {
    let l = lower_snippet(
        "struct rec { char tag; double value; int count; };\nvoid f(int n, struct rec *r) {\n\
         #pragma acc parallel loop\n\
         for (int i = 0; i < n; i++) r[i].value = r[i].count + r[i].tag;\n}\n",
    );
    let k = l.kernel(0);
    // Three views of `r`, one per member type, all bound to the same host pointer.
    let views: Vec<(ScalarType, Option<i64>)> = k
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Array { elem, dims, .. } if p.name == "r" => {
                let row = dims[1].and_then(|d| match k.body.exprs[d].kind {
                    ExprKind::ConstInt(v) => Some(v),
                    _ => None,
                });
                Some((*elem, row))
            }
            _ => None,
        })
        .collect();
    // 24 bytes: `value` is double 1 of 3, `count` int 4 of 6, `tag` char 0 of 24.
    assert_eq!(views, vec![(ScalarType::F64, Some(3)), (ScalarType::I32, Some(6)), (ScalarType::I8, Some(24))]);
    let (m, _) = l.ok();
    let args: Vec<u32> = k.params.iter().filter(|p| p.name == "r").map(|p| p.arg).collect();
    assert!(args.iter().all(|&a| a == args[0]), "one host arg for every view");
    assert_eq!(m.regions[0].args[args[0] as usize].c_expr, "r");
    let Some(Stmt::Store { indices, .. }) = k.body.block.iter().find(|s| matches!(s, Stmt::Store { .. })) else { panic!("a store") };
    assert!(matches!(k.body.exprs[indices[1]].kind, ExprKind::ConstInt(1)));
}

#[test]
fn structs_whose_layout_is_not_natural_are_refused_in_kernels() {
    for (decl, why) in [
        ("struct rec { int flags : 3; int count; };", "a bit-field"),
        ("struct rec { long double x; int count; };", "a `long double` member"),
        ("struct rec { int count; } __attribute__((aligned(32)));", "an attribute"),
        ("struct rec { _Alignas(16) int count; };", "`_Alignas`"),
    ] {
        let (msg, at) = first_error(&format!(
            "{decl}\nvoid f(int n, struct rec *r) {{\n#pragma acc parallel loop\nfor (int i = 0; i < n; i++) r[i].count = i;\n}}\n"
        ));
        assert!(msg.contains("layout of struct `rec` is not known") && msg.contains(why), "{decl}: {msg}");
        assert_eq!(at, "r[i].count");
    }
    // Unions cannot be struct locals (their members share memory).
    let (msg, at) = first_error(
        "union u { int i; float f; };\nvoid f(int n, int *a) {\n#pragma acc parallel loop\nfor (int i = 0; i < n; i++) { union u v; v.i = i; a[i] = v.i; }\n}\n",
    );
    assert!(msg.contains("union"), "{msg}");
    assert_eq!(at, "v");
    // Nor members of unions in arrays: the views of the array would overlap.
    let (msg, at) = first_error(
        "struct rec { union { int i; float f; } u; };
void f(int n, struct rec *r) {
#pragma acc parallel loop
for (int i = 0; i < n; i++) r[i].u.f = r[i].u.i;
}
",
    );
    assert!(msg.contains("member of a union"), "{msg}");
    assert_eq!(at, "r[i].u.f");
}

#[test]
fn inner_loop_reading_an_atomically_updated_element_runs_in_order() {
    let source = |plain_read: &str| {
        format!(
            "void f(int n, unsigned *a, unsigned *c) {{\n\
             #pragma acc parallel loop\n\
             for (int x = 0; x < n; ++x) {{\n\
             #pragma acc loop\n\
             for (int y = 0; y < 7; ++y) {{\n\
             {plain_read}\n\
             #pragma acc atomic update\n\
             a[x] <<= 1;\n}}\n}}\n}}\n"
        )
    };
    let racy = lower_snippet(&source("c[x * 7 + y] = a[x];"));
    let k = racy.kernel(0);
    assert_eq!(k.space.len(), 1, "the loop over y is not a parallel dimension");
    assert_eq!(k.inner_sequential.len(), 1);
    assert!(k.inner_sequential[0].message.contains("read `a[x]`"), "{}", k.inner_sequential[0].message);
    // An explicit level on the loop is not honoured, with a warning saying why.
    let vector = lower_snippet(&source("c[x * 7 + y] = a[x];").replace("#pragma acc loop\n", "#pragma acc loop vector\n"));
    let (_, warnings) = vector.ok();
    assert!(warnings.iter().any(|w| w.message.contains("this clause is not honoured")), "{:?}", warnings.iter().map(|w| &w.message).collect::<Vec<_>>());
    assert_eq!(vector.kernel(0).space.len(), 1);
    // Reading another element, or one that depends on `y`, leaves both loops parallel.
    for plain in ["c[x * 7 + y] = a[0];", "c[x * 7 + y] = c[x * 7 + y] + 1u;"] {
        let l = lower_snippet(&source(plain));
        assert_eq!(l.kernel(0).space.len(), 2, "{plain}");
        assert!(l.kernel(0).inner_sequential.is_empty(), "{plain}");
    }
}

#[test]
fn locals_the_host_never_names_skip_compute_bodies_and_data_clauses() {
    use crate::front::lower::walk::locals_the_host_never_names;
    let src = "void f(double *a, int n) {\n\
        double scratch[8]; double kept[8]; double seen[8]; static double st[8]; double upd[8];\n\
        #pragma acc data create(scratch, kept, st, upd)\n\
        {\n\
          #pragma acc parallel loop\n\
          for (int i = 0; i < 8; i++) { scratch[i] = a[i]; kept[i] = scratch[i]; st[i] = 1; upd[i] = 2; }\n\
          #pragma acc update host(upd)\n\
        }\n\
        a[0] = kept[1];\n\
        double *p = seen;\n\
      }\n";
    let tokens = crate::front::lexer::lex(src, 0).expect("lexes");
    let (unit, _) = crate::front::parser::parse_translation_unit(src, 0, tokens).expect("parses");
    let Some(crate::front::ast::ExternalDecl::Function(f)) = unit.items.first() else { panic!("one function") };
    let mut names: Vec<_> = locals_the_host_never_names(&f.body.stmts).into_iter().collect();
    names.sort();
    // `kept` is read on the host, `seen` has its address taken, `st` is static, `upd` is
    // named by `update host`; `p` is named by nothing but its own declaration, and `i` lives
    // in the kernel.
    assert_eq!(names, vec!["p".to_string(), "scratch".to_string()]);
}

/// Arrays whose elements the host only assigns, and pointers it only sets to fresh blocks and
/// frees, are never read on the host; one it reads, passes on, or indexes in a compound
/// assignment is.
#[test]
fn locals_the_host_never_reads_allow_element_writes_and_scratch_blocks() {
    use crate::front::lower::walk::{locals_the_host_never_names, locals_the_host_never_reads};
    let src = "void f(int n, double *out) {\n\
        double w[8]; double r[8]; double c[8];\n\
        double *s = malloc(n * sizeof(double)); double *t = malloc(8); double *u;\n\
        u = (double *) calloc(n, 8);\n\
        for (int i = 0; i < 8; i++) { w[i] = r[i] = 0.0; c[i] += 1.0; }\n\
        out[0] = r[1];\n\
        g(t);\n\
        free(s); free(u);\n\
      }\n";
    let tokens = crate::front::lexer::lex(src, 0).expect("lexes");
    let (unit, _) = crate::front::parser::parse_translation_unit(src, 0, tokens).expect("parses");
    let Some(crate::front::ast::ExternalDecl::Function(f)) = unit.items.first() else { panic!("one function") };
    let mut unread: Vec<_> = locals_the_host_never_reads(&f.body.stmts).into_iter().collect();
    unread.sort();
    // `r` is read, `c` updated (read), `t` passed to a call; `i` is the loop's.
    assert_eq!(unread, vec!["s".to_string(), "u".to_string(), "w".to_string()]);
    // Naming is stricter: every one of them is named.
    assert!(locals_the_host_never_names(&f.body.stmts).is_empty());
}

/// Statements between the loops of a nest that give the same result however often they run
/// move into the innermost body: the nest keeps its dimensions. One that reads what it
/// assigns, or one that an inner loop writes a name of, stops the nest there.
#[test]
fn statements_between_nested_loops_move_inside_when_they_can_run_again() {
    let nest = |between: &str| {
        let src = format!(
            "void f(int n, int d, double a[n][n]) {{\n int i2, k;\n\
             #pragma acc parallel loop gang\n\
             for (int i = 0; i < n; i++) {{\n {between}\n\
               #pragma acc loop vector\n\
               for (int j = 0; j < n; j++) a[i][j] = i2 + j;\n }}\n}}\n"
        );
        let l = lower_snippet(&src);
        let k = l.kernel(0);
        k.space.len()
    };
    assert_eq!(nest("i2 = 2 * i - d;"), 2);
    assert_eq!(nest("int m = i + 1; i2 = m * d;"), 2);
    assert_eq!(nest("i2 = i; i2 = i2 + 1;"), 1);
    assert_eq!(nest("i2 = a[i][0];"), 1);
    assert_eq!(nest("k = 0; i2 = k++;"), 1);
}

/// Step loops: the forms recognised (what the host passes as the iterations left, the swapped
/// args) and loops that are not step loops (more host code in the body, the counter in the
/// region's args, a bound the region can write, a floating counter, a swap of an array the
/// region does not name).
#[test]
fn step_loops_are_recognised_only_in_their_forms() {
    let step_loops = |body: &str| {
        let src = format!(
            "void f(int n, int m, double *a, double *b, double *spare) {{\n    int t;\n    double tf;\n    double *tmp;\n{body}\n}}\n"
        );
        let lowered = lower_snippet(&src);
        let (module, _) = lowered.ok();
        module.step_loops.clone()
    };
    let region = "#pragma acc parallel loop present(a[0:n], b[0:n])\n for (int i = 1; i < n - 1; i++) b[i] = a[i - 1] + a[i + 1];";
    let found = step_loops(&format!("for (t = 0; t < m; t++) {{\n{region}\n}}"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].counter, "t");
    assert_eq!(found[0].remaining, "(long long)(m) - (long long)(t)");
    assert_eq!(found[0].swap, None);
    let found = step_loops(&format!("for (int s = 1; s <= m * 2; ++s)\n {region}"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].remaining, "(long long)(m * 2) - (long long)(s) + 1");
    let found = step_loops(&format!("for (t = 0; t < m; t += 1) {{\n{region}\ntmp = a; a = b; b = tmp; }}"));
    assert_eq!(found.len(), 1);
    let swap = found[0].swap.expect("a swap");
    assert_ne!(swap.0, swap.1);
    // Not step loops.
    assert!(step_loops(&format!("for (t = 0; t < m; t++) {{\n{region}\na[0] += 1.0; }}")).is_empty());
    let uses_t = "#pragma acc parallel loop present(a[0:n], b[0:n])\n for (int i = 1; i < n - 1; i++) b[i] = a[i] * t;";
    assert!(step_loops(&format!("for (t = 0; t < m; t++) {{\n{uses_t}\n}}")).is_empty());
    let writes_bound = "#pragma acc parallel loop copy(a[0:n], m)\n for (int i = 1; i < n - 1; i++) a[i] = a[i] * 0.5;";
    assert!(step_loops(&format!("for (t = 0; t < m; t++) {{\n{writes_bound}\n}}")).is_empty());
    assert!(step_loops(&format!("for (tf = 0; tf < m; tf++) {{\n{region}\n}}")).is_empty());
    assert!(step_loops(&format!("for (t = 0; t < m; t++) {{\n{region}\ntmp = b; b = spare; spare = tmp; }}")).is_empty());
    assert!(step_loops(&format!("for (t = 0; t < m + (n = 2); t++) {{\n{region}\n}}")).is_empty());
}
