//! OpenACC directives: parses the contents of one `#pragma acc` line into [`ast::Directive`]
//! (clause arguments are real C expressions, parsed by the C parser so their spans point into
//! the pragma line) and checks which clauses each directive accepts (OpenACC 2.7 tables).

use crate::diag::{Diagnostic, Span};
use crate::front::ast::*;
use crate::front::lexer::{lex_range, TokKind};
use crate::front::parser::{directive_name, Parser};

type PResult<T> = Result<T, Diagnostic>;

const DIRECTIVE_NAMES: &str = "parallel, kernels, serial, loop, parallel loop, kernels loop, serial loop, data, \
enter data, exit data, host_data, update, wait, atomic, routine, declare, cache, init, shutdown, set";

const DATA_CLAUSES: &[&str] = &["copy", "copyin", "copyout", "create", "no_create", "present", "deviceptr", "attach"];

/// The clauses each directive accepts, by canonical clause name (OpenACC 3.3, chapter 2).
fn allowed_clauses(kind: &DirectiveKind) -> Vec<&'static str> {
    let compute_common: &[&str] = &["async", "wait", "device_type", "if", "self", "default"];
    let parallelism: &[&str] = &["num_gangs", "num_workers", "vector_length"];
    let loop_clauses: &[&str] = &["collapse", "gang", "worker", "vector", "seq", "auto", "tile", "independent", "private", "reduction"];
    let mut v: Vec<&'static str> = Vec::new();
    match kind {
        DirectiveKind::Parallel => {
            v.extend(compute_common);
            v.extend(parallelism);
            v.extend(DATA_CLAUSES);
            v.extend(["private", "firstprivate", "reduction"]);
        }
        DirectiveKind::Serial => {
            v.extend(compute_common);
            v.extend(DATA_CLAUSES);
            v.extend(["private", "firstprivate", "reduction"]);
        }
        DirectiveKind::Kernels => {
            v.extend(compute_common);
            v.extend(parallelism);
            v.extend(DATA_CLAUSES);
        }
        DirectiveKind::Loop => {
            v.extend(loop_clauses);
            v.push("device_type");
        }
        DirectiveKind::ParallelLoop | DirectiveKind::KernelsLoop => {
            v.extend(compute_common);
            v.extend(parallelism);
            v.extend(DATA_CLAUSES);
            if matches!(kind, DirectiveKind::ParallelLoop) {
                v.push("firstprivate");
            }
            v.extend(loop_clauses);
        }
        DirectiveKind::SerialLoop => {
            v.extend(compute_common);
            v.extend(DATA_CLAUSES);
            v.push("firstprivate");
            v.extend(loop_clauses);
        }
        DirectiveKind::Data => {
            v.extend(["if", "async", "wait", "device_type", "default"]);
            v.extend(DATA_CLAUSES);
        }
        DirectiveKind::EnterData => v.extend(["if", "async", "wait", "copyin", "create", "attach"]),
        DirectiveKind::ExitData => v.extend(["if", "async", "wait", "copyout", "delete", "detach", "finalize"]),
        DirectiveKind::HostData => v.extend(["use_device", "if", "if_present"]),
        DirectiveKind::Update => v.extend(["async", "wait", "device_type", "if", "if_present", "self", "host", "device"]),
        DirectiveKind::Wait(_) => v.extend(["async", "if"]),
        DirectiveKind::Atomic(_) => {}
        DirectiveKind::Routine(_) => v.extend(["gang", "worker", "vector", "seq", "bind", "device_type", "nohost"]),
        DirectiveKind::Declare => {
            v.extend(["copy", "copyin", "copyout", "create", "present", "deviceptr", "device_resident", "link"])
        }
        DirectiveKind::Cache(_) => {}
        DirectiveKind::Init | DirectiveKind::Shutdown => v.extend(["device_type", "device_num", "if"]),
        DirectiveKind::Set => v.extend(["default_async", "device_num", "device_type", "if"]),
        DirectiveKind::CudaKernel(_) => {}
    }
    v
}

/// The clauses that may follow a `device_type` clause (they then apply to the device types it
/// names only); `None` where `device_type` names the device acted on (`init`, `shutdown`, `set`).
fn after_device_type(kind: &DirectiveKind) -> Option<&'static [&'static str]> {
    const LOOP: &[&str] = &["collapse", "gang", "worker", "vector", "seq", "independent", "auto", "tile"];
    match kind {
        DirectiveKind::Parallel | DirectiveKind::Kernels => Some(&["async", "wait", "num_gangs", "num_workers", "vector_length"]),
        DirectiveKind::Serial | DirectiveKind::Data | DirectiveKind::Update => Some(&["async", "wait"]),
        DirectiveKind::Loop => Some(LOOP),
        DirectiveKind::ParallelLoop | DirectiveKind::KernelsLoop => Some(&[
            "async", "wait", "num_gangs", "num_workers", "vector_length", "collapse", "gang", "worker", "vector", "seq",
            "independent", "auto", "tile",
        ]),
        DirectiveKind::SerialLoop => {
            Some(&["async", "wait", "collapse", "gang", "worker", "vector", "seq", "independent", "auto", "tile"])
        }
        DirectiveKind::Routine(_) => Some(&["gang", "worker", "vector", "seq", "bind"]),
        _ => None,
    }
}

/// Device types whose clauses Yosegi honours: the GPU (and the simulator, which stands for it).
/// `*` applies when no `device_type` clause of the directive names one of these.
fn names_our_device(name: &str) -> bool {
    matches!(name, "nvidia" | "acc_device_nvidia")
}

/// Parses the `#pragma acc ...` line at `pragma` with the parser's expression parser (and its
/// typedef scopes). The parser's token position is left as it was.
pub fn parse_directive(p: &mut Parser, pragma: Span) -> PResult<Directive> {
    let text = p.text;
    let line = &text[pragma.lo as usize..pragma.hi as usize];
    // Where the words after `acc` start.
    let acc_at = match (line.find("pragma"), line.find("acc")) {
        (Some(_), Some(a)) => a + 3,
        _ => return Err(Diagnostic::error(pragma, "malformed `#pragma acc` line")),
    };
    let toks = lex_range(text, pragma.tu, pragma.lo as usize + acc_at, pragma.hi as usize)?;
    let saved_toks = std::mem::replace(&mut p.toks, toks);
    let saved_pos = std::mem::replace(&mut p.pos, 0);
    let r = DirectiveParser { p, pragma }.directive();
    p.toks = saved_toks;
    p.pos = saved_pos;
    r
}

struct DirectiveParser<'p, 'a> {
    p: &'p mut Parser<'a>,
    pragma: Span,
}

impl DirectiveParser<'_, '_> {
    fn word(&self) -> Option<String> {
        self.p.peek().ident().map(str::to_string)
    }

    fn directive(&mut self) -> PResult<Directive> {
        let name_tok = self.p.peek().clone();
        let Some(name) = name_tok.ident().map(str::to_string) else {
            return Err(Diagnostic::error(if name_tok.kind == TokKind::Eof { self.pragma } else { name_tok.span }, "expected an OpenACC directive name after `#pragma acc`")
                .with_help(format!("directives: {DIRECTIVE_NAMES}")));
        };
        self.p.bump();
        let next_is = |dp: &Self, w: &str| dp.p.is_word(w);
        let name_span_start = name_tok.span;
        let kind = match name.as_str() {
            "parallel" | "kernels" | "serial" if next_is(self, "loop") => {
                self.p.bump();
                match name.as_str() {
                    "parallel" => DirectiveKind::ParallelLoop,
                    "kernels" => DirectiveKind::KernelsLoop,
                    _ => DirectiveKind::SerialLoop,
                }
            }
            "parallel" => DirectiveKind::Parallel,
            "kernels" => DirectiveKind::Kernels,
            "serial" => DirectiveKind::Serial,
            "loop" => DirectiveKind::Loop,
            "data" => DirectiveKind::Data,
            "enter" | "exit" => {
                if !next_is(self, "data") {
                    return Err(self.p.error_here(format!("expected `data` after `{name}`")).with_help(format!("write `#pragma acc {name} data ...`")));
                }
                self.p.bump();
                if name == "enter" { DirectiveKind::EnterData } else { DirectiveKind::ExitData }
            }
            "host_data" => DirectiveKind::HostData,
            "init" => DirectiveKind::Init,
            "shutdown" => DirectiveKind::Shutdown,
            "set" => DirectiveKind::Set,
            "update" => DirectiveKind::Update,
            "declare" => DirectiveKind::Declare,
            "wait" => {
                let mut args = Vec::new();
                if self.p.eat_punct("(") {
                    args = self.expr_list("wait")?;
                }
                DirectiveKind::Wait(args)
            }
            "atomic" => {
                let k = match self.word().as_deref() {
                    Some("update") => Some(AtomicKind::Update),
                    Some("read") => Some(AtomicKind::Read),
                    Some("write") => Some(AtomicKind::Write),
                    Some("capture") => Some(AtomicKind::Capture),
                    _ => None,
                };
                if k.is_some() {
                    self.p.bump();
                }
                DirectiveKind::Atomic(k.unwrap_or(AtomicKind::Update))
            }
            "routine" => {
                let mut target = None;
                if self.p.eat_punct("(") {
                    let t = self.p.peek().clone();
                    let Some(n) = t.ident() else {
                        return Err(self.p.error_here("expected a function name in `routine(...)`"));
                    };
                    target = Some(n.to_string());
                    self.p.bump();
                    self.p.expect_punct(")", "to close `routine(...)`")?;
                }
                DirectiveKind::Routine(target)
            }
            "cache" => {
                let open = self.p.peek().span;
                if !self.p.eat_punct("(") {
                    return Err(Diagnostic::error(open, "expected `(` after `cache`").with_help("write `#pragma acc cache(a[i:4])`"));
                }
                if self.p.is_word("readonly") && self.p.peek_at(1).is_punct(":") {
                    self.p.bump();
                    self.p.bump();
                }
                DirectiveKind::Cache(self.data_list("cache")?)
            }
            _ => {
                return Err(Diagnostic::error(name_tok.span, format!("unknown directive `{name}` after `#pragma acc`"))
                    .with_help(format!("directives: {DIRECTIVE_NAMES}")));
            }
        };
        // `enter data` and the like: both words.
        let name_span = name_span_start.to(self.p.prev_span());
        let allowed = allowed_clauses(&kind);
        let scoping = after_device_type(&kind);
        // Clauses before any `device_type` (group 0) apply everywhere; each `device_type`
        // clause opens a group that applies to the device types it names.
        let mut groups: Vec<(Vec<String>, Vec<Clause>, Vec<&'static str>)> = vec![(Vec::new(), Vec::new(), Vec::new())];
        loop {
            self.p.eat_punct(",");
            if self.p.at_eof() {
                break;
            }
            let clause_tok = self.p.peek().clone();
            let (canonical, clause) = match self.caps_dimension_clause()? {
                CapsForm::Not => self.clause(&kind, &allowed)?,
                CapsForm::Ignored => continue,
                CapsForm::Level(canonical, clause) => (canonical, clause),
            };
            let dname = directive_name(&kind);
            if matches!(kind, DirectiveKind::Kernels) && canonical == "private" {
                // PGI and CAPS took `private` on `kernels` (OpenACC gives it to loops and
                // `parallel` only); nvc still does. It means the same for every loop inside.
                self.p.warnings.push(
                    Diagnostic::warning(clause.span, "`private` on `kernels` (an older compilers' form) is applied to each loop inside the construct")
                        .with_help("put `private(...)` on the `loop` directives (or the loops' own declarations) instead"),
                );
            } else if !allowed.contains(&canonical) {
                let span = clause.span;
                let help = if allowed.is_empty() {
                    format!("`{dname}` takes no clauses")
                } else {
                    format!("`{dname}` accepts: {}", allowed.join(", "))
                };
                let written = clause_tok.ident().unwrap_or(canonical);
                return Err(Diagnostic::error(span, format!("`{written}` is not allowed on `{dname}`")).with_help(help));
            }
            if scoping.is_some()
                && let ClauseKind::DeviceType(names) = &clause.kind
            {
                groups.push((names.clone(), Vec::new(), Vec::new()));
                continue;
            }
            let group = groups.len() - 1;
            if group > 0
                && let Some(after) = scoping
                && !after.contains(&canonical)
            {
                let written = clause_tok.ident().unwrap_or(canonical);
                return Err(Diagnostic::error(clause.span, format!("`{written}` cannot follow `device_type` on `{dname}`"))
                    .with_help(format!("after `device_type(...)`, `{dname}` accepts: {}; put the other clauses before it", after.join(", "))));
            }
            let (_, list, seen) = &mut groups[group];
            check_combination(&kind, seen, canonical, clause.span)?;
            seen.push(canonical);
            list.push(clause);
        }
        let clauses = resolve_device_type_groups(groups);
        let span = self.pragma;
        let has = |names: &[&str]| {
            clauses.iter().any(|c| match &c.kind {
                ClauseKind::Data { kind, .. } => names.contains(&kind.keyword()),
                _ => false,
            })
        };
        let required: Option<(&[&str], &str)> = match kind {
            DirectiveKind::Update => Some((&["host", "device"], "a `host`, `self` or `device` clause")),
            DirectiveKind::EnterData => Some((&["copyin", "create", "attach"], "a `copyin`, `create` or `attach` clause")),
            DirectiveKind::ExitData => Some((&["copyout", "delete", "detach"], "a `copyout`, `delete` or `detach` clause")),
            DirectiveKind::HostData => Some((&["use_device"], "a `use_device` clause")),
            _ => None,
        };
        if let Some((names, words)) = required
            && !has(names)
        {
            let dname = directive_name(&kind);
            return Err(Diagnostic::error(name_span, format!("`{dname}` needs {words}"))
                .with_help(format!("e.g. `#pragma acc {dname} {}(a[0:n])`", names[0])));
        }
        if matches!(kind, DirectiveKind::Set)
            && !clauses.iter().any(|c| matches!(c.kind, ClauseKind::DefaultAsync(_) | ClauseKind::DeviceNum(_) | ClauseKind::DeviceType(_)))
        {
            return Err(Diagnostic::error(name_span, "`set` needs a `default_async`, `device_num` or `device_type` clause")
                .with_help("e.g. `#pragma acc set device_num(0)`"));
        }
        if matches!(kind, DirectiveKind::Set)
            && let Some(c) = clauses.iter().find(|c| matches!(&c.kind, ClauseKind::DeviceType(v) if v.len() != 1))
        {
            return Err(Diagnostic::error(c.span, "`set` takes one device type").with_help("write `device_type(nvidia)`"));
        }
        Ok(Directive { kind, clauses, span })
    }

    /// Parses one clause; returns its canonical name (for the allowed-clause check) too.
    /// CAPS's per-dimension forms, which PolyBench-ACC writes: `gang[1]`, `worker[0]`,
    /// `vector[0]` are the plain clauses (the dimension index is a placement hint), and
    /// `num_gangs[0](n)`, `num_workers[1](n)`, `vector_length[0](n)` are launch-shape hints,
    /// dropped; each with a warning.
    fn caps_dimension_clause(&mut self) -> PResult<CapsForm> {
        let t = self.p.peek().clone();
        let Some(word) = t.ident().map(str::to_string) else { return Ok(CapsForm::Not) };
        let canonical: &'static str = match word.as_str() {
            "gang" => "gang",
            "worker" => "worker",
            "vector" => "vector",
            "num_gangs" => "num_gangs",
            "num_workers" => "num_workers",
            "vector_length" => "vector_length",
            _ => return Ok(CapsForm::Not),
        };
        if !self.p.peek_at(1).is_punct("[") {
            return Ok(CapsForm::Not);
        }
        self.p.bump();
        self.p.bump();
        let index = self.p.bump();
        if !matches!(index.kind, TokKind::Int { .. }) || !self.p.is_punct("]") {
            return Err(Diagnostic::error(index.span, format!("expected a dimension number and `]` after `{word}[`"))
                .with_help(format!("write `{word}` (OpenACC), or CAPS's `{word}[0]`")));
        }
        self.p.bump();
        if canonical.starts_with("num_") || canonical == "vector_length" {
            self.open(&word)?;
            let mut depth = 1;
            while depth > 0 {
                if self.p.at_eof() {
                    return Err(self.p.error_here(format!("expected `)` to close `{word}[...](...)`")));
                }
                let tok = self.p.bump();
                if tok.is_punct("(") {
                    depth += 1;
                } else if tok.is_punct(")") {
                    depth -= 1;
                }
            }
            let span = t.span.to(self.p.prev_span());
            self.p.warnings.push(
                Diagnostic::warning(span, format!("`{word}[...]` (CAPS's per-dimension launch size) is ignored; Yosegi chooses the launch shape"))
                    .with_help(format!("write `{word}(n)` to give the size in OpenACC")),
            );
            return Ok(CapsForm::Ignored);
        }
        let span = t.span.to(self.p.prev_span());
        self.p.warnings.push(
            Diagnostic::warning(span, format!("`{word}[...]` (CAPS's per-dimension form) is read as `{word}`"))
                .with_help(format!("write `{word}` in OpenACC")),
        );
        let kind = match canonical {
            "gang" => ClauseKind::Gang { num: None, dim: None },
            "worker" => ClauseKind::Worker(None),
            _ => ClauseKind::Vector(None),
        };
        Ok(CapsForm::Level(canonical, Clause { kind, span }))
    }

    fn clause(&mut self, directive: &DirectiveKind, allowed: &[&str]) -> PResult<(&'static str, Clause)> {
        let t = self.p.peek().clone();
        let Some(word) = t.ident().map(str::to_string) else {
            return Err(Diagnostic::error(t.span, format!("expected a clause name, found {}", Parser::describe(&t)))
                .with_help(format!("`{}` accepts: {}", directive_name(directive), allowed.join(", "))));
        };
        self.p.bump();
        let data = |k: DataClauseKind| Some(k);
        let data_kind = match word.as_str() {
            "copy" | "pcopy" | "present_or_copy" => data(DataClauseKind::Copy),
            "copyin" | "pcopyin" | "present_or_copyin" => data(DataClauseKind::CopyIn),
            "copyout" | "pcopyout" | "present_or_copyout" => data(DataClauseKind::CopyOut),
            "create" | "pcreate" | "present_or_create" => data(DataClauseKind::Create),
            "present" => data(DataClauseKind::Present),
            "deviceptr" => data(DataClauseKind::DevicePtr),
            "delete" => data(DataClauseKind::Delete),
            "host" | "self" => data(DataClauseKind::Host),
            "device" => data(DataClauseKind::Device),
            "use_device" => data(DataClauseKind::UseDevice),
            "no_create" => data(DataClauseKind::NoCreate),
            "attach" => data(DataClauseKind::Attach),
            "detach" => data(DataClauseKind::Detach),
            "device_resident" => data(DataClauseKind::DeviceResident),
            "link" => data(DataClauseKind::Link),
            _ => None,
        };
        // On a compute construct `self` is the 3.3 clause that runs it on the host.
        let data_kind = if word == "self" && directive.is_compute() { None } else { data_kind };
        let (canonical, kind): (&'static str, ClauseKind) = if let Some(k) = data_kind {
            let canonical = if word == "self" { "self" } else { k.keyword() };
            self.open(&word)?;
            if matches!(k, DataClauseKind::CopyIn) && self.p.is_word("readonly") && self.p.peek_at(1).is_punct(":") {
                self.p.bump();
                self.p.bump();
            }
            let mut zero = false;
            if matches!(k, DataClauseKind::CopyOut | DataClauseKind::Create) && self.p.is_word("zero") && self.p.peek_at(1).is_punct(":") {
                self.p.bump();
                self.p.bump();
                zero = true;
            }
            (canonical, ClauseKind::Data { kind: k, refs: self.data_list(&word)?, zero })
        } else {
            match word.as_str() {
                "private" => {
                    self.open(&word)?;
                    ("private", ClauseKind::Private(self.data_list(&word)?))
                }
                "firstprivate" => {
                    self.open(&word)?;
                    ("firstprivate", ClauseKind::FirstPrivate(self.data_list(&word)?))
                }
                "reduction" => {
                    self.open(&word)?;
                    let op = self.reduction_op()?;
                    self.p.expect_punct(":", "after the reduction operator").map_err(|d| d.with_help("write `reduction(+:sum)`"))?;
                    ("reduction", ClauseKind::Reduction { op, vars: self.data_list(&word)? })
                }
                "collapse" => {
                    self.open(&word)?;
                    if self.p.is_word("force") && self.p.peek_at(1).is_punct(":") {
                        return Err(self
                            .p
                            .error_here("`collapse(force: n)` (OpenACC 3.3: collapsing loops that are not tightly nested) is not supported")
                            .with_help("collapse tightly nested loops (`collapse(n)`), moving the code between them into the innermost loop"));
                    }
                    let e = self.p.conditional()?;
                    let n = match e.kind {
                        ExprKind::IntLit { value, .. } if value > 0 && value <= u32::MAX as u64 => value as u32,
                        _ => {
                            return Err(Diagnostic::error(e.span, "`collapse` needs a positive integer constant")
                                .with_help("write the number of loops to collapse, e.g. `collapse(2)`"));
                        }
                    };
                    self.p.expect_punct(")", "to close `collapse(...)`")?;
                    ("collapse", ClauseKind::Collapse(n))
                }
                "gang" => {
                    let (num, dim) = self.gang_args()?;
                    ("gang", ClauseKind::Gang { num, dim })
                }
                "worker" => ("worker", ClauseKind::Worker(self.optional_arg(&word, &["num"])?)),
                "vector" => ("vector", ClauseKind::Vector(self.optional_arg(&word, &["length"])?)),
                "num_gangs" => {
                    self.open(&word)?;
                    let mut values = vec![self.p.assignment()?];
                    while self.p.eat_punct(",") {
                        if values.len() == 3 {
                            return Err(self
                                .p
                                .error_here("`num_gangs` takes at most 3 values, one per gang dimension")
                                .with_help("give the number of gangs of dimensions 1, 2 and 3: num_gangs(n1, n2, n3)"));
                        }
                        values.push(self.p.assignment()?);
                    }
                    self.p.expect_punct(")", "to close `num_gangs(...)`")?;
                    ("num_gangs", ClauseKind::NumGangs(values))
                }
                "num_workers" => ("num_workers", ClauseKind::NumWorkers(self.required_arg(&word)?)),
                "vector_length" => ("vector_length", ClauseKind::VectorLength(self.required_arg(&word)?)),
                "independent" => ("independent", ClauseKind::Independent),
                "seq" => ("seq", ClauseKind::Seq),
                "auto" => ("auto", ClauseKind::Auto),
                "if_present" => ("if_present", ClauseKind::IfPresent),
                "finalize" => ("finalize", ClauseKind::Finalize),
                "async" => ("async", ClauseKind::Async(self.optional_arg(&word, &[])?)),
                "wait" => {
                    let list = if self.p.eat_punct("(") { self.expr_list("wait")? } else { Vec::new() };
                    ("wait", ClauseKind::Wait(list))
                }
                "if" => ("if", ClauseKind::If(self.required_arg(&word)?)),
                "default" => {
                    self.open(&word)?;
                    let k = match self.word().as_deref() {
                        Some("none") => DefaultKind::None,
                        Some("present") => DefaultKind::Present,
                        _ => {
                            return Err(self.p.error_here("expected `none` or `present` in `default(...)`"));
                        }
                    };
                    self.p.bump();
                    self.p.expect_punct(")", "to close `default(...)`")?;
                    ("default", ClauseKind::Default(k))
                }
                "tile" => {
                    self.open(&word)?;
                    let mut sizes = Vec::new();
                    loop {
                        if self.p.is_punct("*") {
                            // `*` lets the implementation pick the size; 0 stands for it.
                            let sp = self.p.bump().span;
                            sizes.push(Expr { kind: ExprKind::IntLit { value: 0, suffix: IntSuffix::default(), radix: 10 }, span: sp });
                        } else {
                            sizes.push(self.p.assignment()?);
                        }
                        if !self.p.eat_punct(",") {
                            break;
                        }
                    }
                    self.p.expect_punct(")", "to close `tile(...)`")?;
                    ("tile", ClauseKind::Tile(sizes))
                }
                "self" => {
                    let cond = if self.p.eat_punct("(") {
                        let e = self.p.assignment()?;
                        self.p.expect_punct(")", "to close `self(...)`")?;
                        Some(e)
                    } else {
                        None
                    };
                    ("self", ClauseKind::SelfHost(cond))
                }
                "device_type" | "dtype" => ("device_type", ClauseKind::DeviceType(self.device_types(&word)?)),
                "device_num" => ("device_num", ClauseKind::DeviceNum(self.required_arg(&word)?)),
                "default_async" => ("default_async", ClauseKind::DefaultAsync(self.required_arg(&word)?)),
                "nohost" => ("nohost", ClauseKind::NoHost),
                "bind" => {
                    self.open(&word)?;
                    let n = self.p.peek().clone();
                    let name = match &n.kind {
                        TokKind::Ident(s) | TokKind::Str(s) => s.clone(),
                        _ => {
                            return Err(Diagnostic::error(n.span, format!("expected a function name in `bind(...)`, found {}", Parser::describe(&n)))
                                .with_help("write `bind(name)` or `bind(\"name\")`"));
                        }
                    };
                    self.p.bump();
                    self.p.expect_punct(")", "to close `bind(...)`")?;
                    ("bind", ClauseKind::Bind(name))
                }
                _ => {
                    let dname = directive_name(directive);
                    return Err(Diagnostic::error(t.span, format!("unknown clause `{word}`"))
                        .with_help(if allowed.is_empty() { format!("`{dname}` takes no clauses") } else { format!("`{dname}` accepts: {}", allowed.join(", ")) }));
                }
            }
        };
        Ok((canonical, Clause { kind, span: t.span.to(self.p.prev_span()) }))
    }

    fn open(&mut self, clause: &str) -> PResult<()> {
        if self.p.eat_punct("(") {
            return Ok(());
        }
        Err(self.p.error_here(format!("expected `(` after `{clause}`")).with_help(format!("write `{clause}(...)`")))
    }

    fn required_arg(&mut self, clause: &str) -> PResult<Expr> {
        self.open(clause)?;
        let e = self.p.assignment()?;
        self.p.expect_punct(")", &format!("to close `{clause}(...)`"))?;
        Ok(e)
    }

    /// `device_type(nvidia, host)`, `device_type(*)`: device type names (any identifier: the
    /// set is implementation-defined, and other implementations' names are not errors).
    fn device_types(&mut self, clause: &str) -> PResult<Vec<String>> {
        self.open(clause)?;
        let mut names = Vec::new();
        loop {
            let t = self.p.peek().clone();
            match &t.kind {
                TokKind::Punct("*") => names.push("*".to_string()),
                TokKind::Ident(n) => names.push(n.clone()),
                _ => {
                    return Err(Diagnostic::error(t.span, format!("expected a device type in `{clause}(...)`, found {}", Parser::describe(&t)))
                        .with_help("write `device_type(nvidia)`, `device_type(host)` or `device_type(*)`"));
                }
            }
            self.p.bump();
            if !self.p.eat_punct(",") {
                break;
            }
        }
        self.p.expect_punct(")", &format!("to close `{clause}(...)`"))?;
        Ok(names)
    }

    /// `gang`, `gang(4)`, `gang(num: 4)`, `gang(dim: 2)`: the number of gangs and the gang
    /// dimension; a `static:` argument is accepted as a hint and dropped.
    fn gang_args(&mut self) -> PResult<(Option<Expr>, Option<Expr>)> {
        if !self.p.eat_punct("(") {
            return Ok((None, None));
        }
        let (mut num, mut dim) = (None, None);
        loop {
            let keyword = match self.word() {
                Some(w) if self.p.peek_at(1).is_punct(":") => {
                    if !matches!(w.as_str(), "num" | "dim" | "static") {
                        return Err(self.p.error_here(format!("unknown argument `{w}:` in `gang(...)`")));
                    }
                    self.p.bump();
                    self.p.bump();
                    Some(w)
                }
                _ => None,
            };
            match keyword.as_deref() {
                Some("static") => {
                    if !self.p.eat_punct("*") {
                        self.p.assignment()?;
                    }
                }
                Some("dim") if dim.is_some() => return Err(self.p.error_here("`dim:` is given twice in `gang(...)`")),
                Some("dim") => dim = Some(self.p.assignment()?),
                _ if num.is_some() => return Err(self.p.error_here("the number of gangs is given twice in `gang(...)`")),
                _ => num = Some(self.p.assignment()?),
            }
            if !self.p.eat_punct(",") {
                break;
            }
        }
        self.p.expect_punct(")", "to close `gang(...)`")?;
        Ok((num, dim))
    }

    /// `worker(4)`, `worker(num: 4)`, `vector(length: 128)`.
    fn optional_arg(&mut self, clause: &str, keywords: &[&str]) -> PResult<Option<Expr>> {
        if !self.p.eat_punct("(") {
            return Ok(None);
        }
        let mut value = None;
        loop {
            let mut keyword = None;
            if let Some(w) = self.word()
                && self.p.peek_at(1).is_punct(":")
            {
                if !keywords.contains(&w.as_str()) {
                    return Err(self.p.error_here(format!("unknown argument `{w}:` in `{clause}(...)`")));
                }
                keyword = Some(w);
                self.p.bump();
                self.p.bump();
            }
            if keyword.as_deref() == Some("static") {
                if !self.p.eat_punct("*") {
                    self.p.assignment()?;
                }
            } else {
                value = Some(self.p.assignment()?);
            }
            if !self.p.eat_punct(",") {
                break;
            }
        }
        self.p.expect_punct(")", &format!("to close `{clause}(...)`"))?;
        Ok(value)
    }

    /// A comma-separated expression list after `(`, through the `)`.
    fn expr_list(&mut self, what: &str) -> PResult<Vec<Expr>> {
        let mut v = Vec::new();
        if self.p.eat_punct(")") {
            return Ok(v);
        }
        // `wait(devnum: 0: queues: 1)` forms are reduced to the queue list.
        loop {
            if let Some(w) = self.word()
                && (w == "devnum" || w == "queues")
                && self.p.peek_at(1).is_punct(":")
            {
                self.p.bump();
                self.p.bump();
                if w == "devnum" {
                    self.p.assignment()?;
                    self.p.expect_punct(":", "after the device number")?;
                }
                continue;
            }
            v.push(self.p.assignment()?);
            if !self.p.eat_punct(",") {
                break;
            }
        }
        self.p.expect_punct(")", &format!("to close `{what}(...)`"))?;
        Ok(v)
    }

    fn reduction_op(&mut self) -> PResult<ReductionOp> {
        let t = self.p.peek().clone();
        let op = match &t.kind {
            TokKind::Punct("+") => ReductionOp::Add,
            TokKind::Punct("*") => ReductionOp::Mul,
            TokKind::Punct("&") => ReductionOp::BitAnd,
            TokKind::Punct("|") => ReductionOp::BitOr,
            TokKind::Punct("^") => ReductionOp::BitXor,
            TokKind::Punct("&&") => ReductionOp::LogAnd,
            TokKind::Punct("||") => ReductionOp::LogOr,
            TokKind::Ident(w) if w == "max" => ReductionOp::Max,
            TokKind::Ident(w) if w == "min" => ReductionOp::Min,
            // Not an OpenACC operator, but GCC accepts it (sharing OpenMP's reading, where the
            // partial results of `x -= e` are added): read it the same way, and say so.
            TokKind::Punct("-") => {
                self.p.warnings.push(
                    Diagnostic::warning(t.span, "`-` is not an OpenACC reduction operator; it is read as `+`, as OpenMP and GCC do")
                        .with_help("write `reduction(+:x)`: the partial results of `x -= e` are added"),
                );
                ReductionOp::Add
            }
            _ => {
                return Err(Diagnostic::error(t.span, format!("invalid reduction operator {}", Parser::describe(&t)))
                    .with_help("use one of + * max min & | ^ && ||, e.g. `reduction(+:sum)`"));
            }
        };
        self.p.bump();
        Ok(op)
    }

    /// `a, b[0:n], mt->m[lo:len][0:m]` through the closing `)`.
    fn data_list(&mut self, clause: &str) -> PResult<Vec<DataRef>> {
        let mut refs = Vec::new();
        loop {
            refs.push(self.data_ref(clause)?);
            if !self.p.eat_punct(",") {
                break;
            }
        }
        self.p.expect_punct(")", &format!("to close `{clause}(...)`"))
            .map_err(|d| d.with_help("a list item is a variable, optionally with sections: `a[lo:len]`"))?;
        Ok(refs)
    }

    fn data_ref(&mut self, clause: &str) -> PResult<DataRef> {
        let t = self.p.peek().clone();
        let name = match t.ident() {
            Some(n) => n.to_string(),
            None => {
                return Err(Diagnostic::error(t.span, format!("expected a variable in `{clause}(...)`, found {}", Parser::describe(&t)))
                    .with_help("a list item is a variable, optionally with sections: `a[lo:len]`"));
            }
        };
        self.p.bump();
        let mut base = Expr { kind: ExprKind::Ident(name), span: t.span };
        let mut sections: Vec<Section> = Vec::new();
        loop {
            if self.p.is_punct(".") || self.p.is_punct("->") {
                if sections.iter().any(|s| !s.single) {
                    return Err(self.p.error_here("a member access cannot follow an array section")
                        .with_help("sections must come last: `s.a[0:n]`"));
                }
                // `a[i].x`: plain subscripts before a member are part of the base.
                for s in sections.drain(..) {
                    let span = base.span.to(s.span);
                    let index = s.lo.unwrap_or(Expr { kind: ExprKind::IntLit { value: 0, suffix: IntSuffix::default(), radix: 10 }, span: s.span });
                    base = Expr { kind: ExprKind::Index { base: Box::new(base), index: Box::new(index) }, span };
                }
                let arrow = self.p.bump().is_punct("->");
                let f = self.p.peek().clone();
                let Some(field) = f.ident().map(str::to_string) else {
                    return Err(self.p.error_here("expected a member name"));
                };
                self.p.bump();
                let span = base.span.to(f.span);
                base = Expr { kind: ExprKind::Member { base: Box::new(base), field, arrow }, span };
            } else if self.p.is_punct("[") {
                let open = self.p.bump().span;
                let lo = if self.p.is_punct(":") { None } else { Some(self.p.conditional()?) };
                let (len, single) = if self.p.eat_punct(":") {
                    (if self.p.is_punct("]") { None } else { Some(self.p.conditional()?) }, false)
                } else {
                    (None, true)
                };
                if !self.p.is_punct("]") {
                    return Err(self.p.error_here("expected `]` to close the array section").with_help("write sections as `[lo:len]`"));
                }
                let close = self.p.bump().span;
                sections.push(Section { lo, len, single, span: open.to(close) });
            } else {
                break;
            }
        }
        let span = t.span.to(self.p.prev_span());
        Ok(DataRef { base, sections, span })
    }
}

/// What [`DirectiveParser::caps_dimension_clause`] found.
enum CapsForm {
    /// Not a CAPS form: parse an OpenACC clause.
    Not,
    /// A launch-size hint, dropped.
    Ignored,
    /// A loop-level clause.
    Level(&'static str, Clause),
}

/// Clauses that may appear once per directive, and the loop-parallelism clauses that exclude
/// each other (OpenACC 2.7, 2.9: `seq` excludes `gang`/`worker`/`vector`; at most one of
/// `seq`, `auto`, `independent`).
fn check_combination(kind: &DirectiveKind, seen: &[&'static str], clause: &'static str, span: Span) -> PResult<()> {
    let dname = directive_name(kind);
    const ONCE: &[&str] = &[
        "collapse", "if", "default", "async", "num_gangs", "num_workers", "vector_length", "gang", "worker", "vector",
        "seq", "auto", "independent", "tile", "finalize", "if_present", "self", "device_num", "default_async", "bind",
        "nohost",
    ];
    if ONCE.contains(&clause) && seen.contains(&clause) {
        return Err(Diagnostic::error(span, format!("`{clause}` appears twice on `{dname}`")).with_help("keep one of them"));
    }
    let conflicts: &[(&str, &[&str])] = &[
        ("seq", &["gang", "worker", "vector", "auto", "independent"]),
        ("auto", &["seq", "independent"]),
        ("independent", &["seq", "auto"]),
        ("gang", &["seq"]),
        ("worker", &["seq"]),
        ("vector", &["seq"]),
    ];
    for (c, excluded) in conflicts {
        if *c == clause
            && let Some(other) = excluded.iter().find(|e| seen.contains(e))
        {
            return Err(Diagnostic::error(span, format!("`{clause}` cannot be combined with `{other}` on `{dname}`"))
                .with_help("`seq` runs the loop sequentially; `gang`, `worker` and `vector` share it out; pick one"));
        }
    }
    Ok(())
}

/// Each group: the device types its `device_type` clause names, its clauses and their
/// canonical names. Group 0 holds the clauses before any `device_type`.
type DeviceTypeGroup = (Vec<String>, Vec<Clause>, Vec<&'static str>);

/// The clauses that apply on Yosegi's device: those before any `device_type`, overridden
/// (same clause, or one that excludes it) by those of the groups naming the GPU, or else of
/// the groups whose `device_type(*)` stands for every type not named elsewhere. The clauses
/// of other device types (`host`, `radeon`, `multicore`, ...) are dropped.
fn resolve_device_type_groups(mut groups: Vec<DeviceTypeGroup>) -> Vec<Clause> {
    let (_, mut clauses, mut names) = groups.remove(0);
    let ours: Vec<usize> = (0..groups.len()).filter(|&i| groups[i].0.iter().any(|n| names_our_device(n))).collect();
    let chosen = if ours.is_empty() { (0..groups.len()).filter(|&i| groups[i].0.iter().any(|n| n == "*")).collect() } else { ours };
    const LEVEL: &[&str] = &["seq", "auto", "independent"];
    const SHARE: &[&str] = &["gang", "worker", "vector"];
    for i in chosen {
        let (_, extra, extra_names) = std::mem::take(&mut groups[i]);
        let overridden = |c: &str| {
            extra_names.contains(&c)
                || (LEVEL.contains(&c) && extra_names.iter().any(|e| LEVEL.contains(e)))
                || (c == "seq" && extra_names.iter().any(|e| SHARE.contains(e)))
                || (SHARE.contains(&c) && extra_names.contains(&"seq"))
        };
        let keep: Vec<bool> = names.iter().map(|n| !overridden(n)).collect();
        let mut k = keep.iter();
        clauses.retain(|_| *k.next().unwrap_or(&true));
        let mut k = keep.iter();
        names.retain(|_| *k.next().unwrap_or(&true));
        clauses.extend(extra);
        names.extend(extra_names);
    }
    clauses
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::lexer::lex;
    use crate::front::parser::parse_translation_unit;

    /// Parses `#pragma acc <line>` at file scope (as a statement inside a function when the
    /// directive is a construct) and returns the directive or the error with the line text.
    fn dir(line: &str) -> Result<Directive, (String, String)> {
        let src = format!("void f(int n, float *a, float *b, int i) {{\n#pragma acc {line}\n;\n}}\n");
        let toks = lex(&src, 0).map_err(|d| (d.message, String::new()))?;
        match parse_translation_unit(&src, 0, toks) {
            Ok((tu, _)) => {
                let ExternalDecl::Function(f) = &tu.items[0] else { panic!() };
                match &f.body.stmts[0].kind {
                    StmtKind::Acc { directive, .. } => Ok(directive.clone()),
                    other => panic!("{other:?}"),
                }
            }
            Err(d) => {
                let sp = d.span.unwrap_or_default();
                Err((d.message, src[sp.lo as usize..sp.hi as usize].to_string()))
            }
        }
    }
    fn err(line: &str) -> (String, String) {
        dir(line).expect_err(line)
    }

    #[test]
    fn directive_names() {
        type KindCheck = fn(&DirectiveKind) -> bool;
        let cases: &[(&str, KindCheck)] = &[
            ("parallel", |k| matches!(k, DirectiveKind::Parallel)),
            ("kernels", |k| matches!(k, DirectiveKind::Kernels)),
            ("serial", |k| matches!(k, DirectiveKind::Serial)),
            ("loop", |k| matches!(k, DirectiveKind::Loop)),
            ("parallel loop", |k| matches!(k, DirectiveKind::ParallelLoop)),
            ("kernels loop", |k| matches!(k, DirectiveKind::KernelsLoop)),
            ("serial loop", |k| matches!(k, DirectiveKind::SerialLoop)),
            ("data copy(a[0:n])", |k| matches!(k, DirectiveKind::Data)),
            ("enter data copyin(a[0:n])", |k| matches!(k, DirectiveKind::EnterData)),
            ("exit data delete(a)", |k| matches!(k, DirectiveKind::ExitData)),
            ("host_data use_device(a)", |k| matches!(k, DirectiveKind::HostData)),
            ("update self(a[0:n])", |k| matches!(k, DirectiveKind::Update)),
            ("wait", |k| matches!(k, DirectiveKind::Wait(v) if v.is_empty())),
            ("wait(1, 2)", |k| matches!(k, DirectiveKind::Wait(v) if v.len() == 2)),
            ("atomic", |k| matches!(k, DirectiveKind::Atomic(AtomicKind::Update))),
            ("atomic read", |k| matches!(k, DirectiveKind::Atomic(AtomicKind::Read))),
            ("atomic write", |k| matches!(k, DirectiveKind::Atomic(AtomicKind::Write))),
            ("atomic capture", |k| matches!(k, DirectiveKind::Atomic(AtomicKind::Capture))),
            ("atomic update", |k| matches!(k, DirectiveKind::Atomic(AtomicKind::Update))),
            ("routine seq", |k| matches!(k, DirectiveKind::Routine(None))),
            ("routine(f) seq", |k| matches!(k, DirectiveKind::Routine(Some(n)) if n == "f")),
            ("declare create(a)", |k| matches!(k, DirectiveKind::Declare)),
            ("cache(a[i:4])", |k| matches!(k, DirectiveKind::Cache(v) if v.len() == 1)),
        ];
        for (line, check) in cases {
            let d = dir(line).unwrap_or_else(|e| panic!("{line}: {e:?}"));
            assert!(check(&d.kind), "{line}: {:?}", d.kind);
        }
    }

    fn clause(line: &str) -> ClauseKind {
        let d = dir(line).unwrap_or_else(|e| panic!("{line}: {e:?}"));
        d.clauses.last().expect(line).kind.clone()
    }

    #[test]
    fn caps_per_dimension_forms_are_read_as_plain_clauses_or_dropped() {
        let d = dir("parallel num_gangs[0](n/8) num_gangs[1](n/8) num_workers[0](8) copy(a[0:n])").expect("parses");
        assert_eq!(d.clauses.len(), 1, "{:?}", d.clauses);
        assert!(matches!(d.clauses[0].kind, ClauseKind::Data { kind: DataClauseKind::Copy, .. }));
        let d = dir("loop gang[1] worker[1]").expect("parses");
        assert!(matches!(d.clauses[0].kind, ClauseKind::Gang { num: None, dim: None }), "{:?}", d.clauses);
        assert!(matches!(d.clauses[1].kind, ClauseKind::Worker(None)), "{:?}", d.clauses);
        assert_eq!(err("loop gang[x]").0, "expected a dimension number and `]` after `gang[`");
        assert_eq!(err("loop gang[0] gang[1]").0, "`gang` appears twice on `loop`");
    }

    #[test]
    fn data_clauses_and_sections() {
        let forms = [
            ("copy", DataClauseKind::Copy), ("pcopy", DataClauseKind::Copy), ("present_or_copy", DataClauseKind::Copy),
            ("copyin", DataClauseKind::CopyIn), ("pcopyin", DataClauseKind::CopyIn), ("present_or_copyin", DataClauseKind::CopyIn),
            ("copyout", DataClauseKind::CopyOut), ("pcopyout", DataClauseKind::CopyOut), ("present_or_copyout", DataClauseKind::CopyOut),
            ("create", DataClauseKind::Create), ("pcreate", DataClauseKind::Create), ("present_or_create", DataClauseKind::Create),
            ("present", DataClauseKind::Present), ("deviceptr", DataClauseKind::DevicePtr),
        ];
        for (w, k) in forms {
            let ClauseKind::Data { kind, refs, .. } = clause(&format!("parallel {w}(a)")) else { panic!("{w}") };
            assert_eq!(kind, k, "{w}");
            assert_eq!(refs.len(), 1);
        }
        let ClauseKind::Data { refs, .. } = clause("data copy(a[1:n], b[:n], a[2:], m[0:n][0:4], mt->m[0:n], s.x)") else { panic!() };
        assert_eq!(refs.len(), 6);
        assert!(refs[0].sections[0].lo.is_some() && refs[0].sections[0].len.is_some());
        assert!(refs[1].sections[0].lo.is_none() && refs[1].sections[0].len.is_some());
        assert!(refs[2].sections[0].len.is_none() && !refs[2].sections[0].single);
        assert_eq!(refs[3].sections.len(), 2);
        assert!(matches!(&refs[4].base.kind, ExprKind::Member { field, arrow: true, .. } if field == "m"));
        assert!(matches!(&refs[5].base.kind, ExprKind::Member { arrow: false, .. }) && refs[5].sections.is_empty());
        let ClauseKind::Data { kind, .. } = clause("exit data copyout(a[0:n]) delete(b)") else { panic!() };
        assert_eq!(kind, DataClauseKind::Delete);
        let ClauseKind::Data { kind, .. } = clause("update host(a[0:n])") else { panic!() };
        assert_eq!(kind, DataClauseKind::Host);
        let ClauseKind::Data { kind, .. } = clause("update device(a[0:n])") else { panic!() };
        assert_eq!(kind, DataClauseKind::Device);
        let ClauseKind::Data { kind, .. } = clause("host_data use_device(a)") else { panic!() };
        assert_eq!(kind, DataClauseKind::UseDevice);
    }

    #[test]
    fn other_clauses() {
        assert!(matches!(clause("parallel private(i, n)"), ClauseKind::Private(v) if v.len() == 2));
        assert!(matches!(clause("parallel firstprivate(n)"), ClauseKind::FirstPrivate(_)));
        let ops = [("+", ReductionOp::Add), ("*", ReductionOp::Mul), ("max", ReductionOp::Max), ("min", ReductionOp::Min),
            ("&", ReductionOp::BitAnd), ("|", ReductionOp::BitOr), ("^", ReductionOp::BitXor), ("&&", ReductionOp::LogAnd), ("||", ReductionOp::LogOr)];
        for (s, o) in ops {
            assert!(matches!(clause(&format!("parallel loop reduction({s}:n)")), ClauseKind::Reduction { op, .. } if op == o), "{s}");
        }
        assert!(matches!(clause("loop collapse(2)"), ClauseKind::Collapse(2)));
        assert!(matches!(clause("loop gang"), ClauseKind::Gang { num: None, dim: None }));
        assert!(matches!(clause("loop gang(4)"), ClauseKind::Gang { num: Some(_), dim: None }));
        assert!(matches!(clause("loop gang(num: n)"), ClauseKind::Gang { num: Some(_), dim: None }));
        assert!(matches!(clause("loop gang(static: *)"), ClauseKind::Gang { num: None, dim: None }));
        assert!(matches!(clause("loop gang(dim: 2)"), ClauseKind::Gang { num: None, dim: Some(_) }));
        assert!(matches!(clause("loop gang(dim: 1, static: 4)"), ClauseKind::Gang { num: None, dim: Some(_) }));
        assert!(matches!(clause("parallel num_gangs(n, 4)"), ClauseKind::NumGangs(v) if v.len() == 2));
        assert!(matches!(clause("parallel num_gangs(n, n, n)"), ClauseKind::NumGangs(v) if v.len() == 3));
        assert!(matches!(clause("loop worker(4)"), ClauseKind::Worker(Some(_))));
        assert!(matches!(clause("loop vector"), ClauseKind::Vector(None)));
        assert!(matches!(clause("loop vector(length: 128)"), ClauseKind::Vector(Some(_))));
        assert!(matches!(clause("parallel num_gangs(n * 2)"), ClauseKind::NumGangs(v) if matches!(v[..], [Expr { kind: ExprKind::Binary { .. }, .. }])));
        assert!(matches!(clause("parallel num_workers(4)"), ClauseKind::NumWorkers(_)));
        assert!(matches!(clause("parallel vector_length(128)"), ClauseKind::VectorLength(_)));
        assert!(matches!(clause("loop independent"), ClauseKind::Independent));
        assert!(matches!(clause("loop seq"), ClauseKind::Seq));
        assert!(matches!(clause("loop auto"), ClauseKind::Auto));
        assert!(matches!(clause("parallel async"), ClauseKind::Async(None)));
        assert!(matches!(clause("parallel async(1)"), ClauseKind::Async(Some(_))));
        assert!(matches!(clause("parallel wait(1, 2)"), ClauseKind::Wait(v) if v.len() == 2));
        assert!(matches!(clause("parallel if(n > 100)"), ClauseKind::If(_)));
        assert!(matches!(clause("parallel default(none)"), ClauseKind::Default(DefaultKind::None)));
        assert!(matches!(clause("kernels default(present)"), ClauseKind::Default(DefaultKind::Present)));
        assert!(matches!(clause("update device(a) if_present"), ClauseKind::IfPresent));
        assert!(matches!(clause("exit data delete(a) finalize"), ClauseKind::Finalize));
        assert!(matches!(clause("loop tile(8, *)"), ClauseKind::Tile(v) if v.len() == 2));
        // Commas between clauses are allowed.
        assert_eq!(dir("parallel loop gang, vector, copy(a[0:n])").unwrap().clauses.len(), 3);
    }

    #[test]
    fn validation_errors() {
        assert_eq!(err("data copy(a) collapse(2)"), ("`collapse` is not allowed on `data`".into(), "collapse(2)".into()));
        assert_eq!(err("loop copy(a)"), ("`copy` is not allowed on `loop`".into(), "copy(a)".into()));
        assert_eq!(err("kernels reduction(+:n)"), ("`reduction` is not allowed on `kernels`".into(), "reduction(+:n)".into()));
        assert_eq!(err("parallel frobnicate"), ("unknown clause `frobnicate`".into(), "frobnicate".into()));
        assert_eq!(err("paralel"), ("unknown directive `paralel` after `#pragma acc`".into(), "paralel".into()));
        assert_eq!(err("update"), ("`update` needs a `host`, `self` or `device` clause".into(), "update".into()));
        assert_eq!(err("enter data delete(a)").0, "`delete` is not allowed on `enter data`");
        assert_eq!(err("enter data async"), ("`enter data` needs a `copyin`, `create` or `attach` clause".into(), "enter data".into()));
        assert_eq!(err("exit data copyin(a)").0, "`copyin` is not allowed on `exit data`");
        assert_eq!(err("loop reduction(/:n)"), ("invalid reduction operator `/`".into(), "/".into()));
        assert_eq!(err("loop reduction(+ n)").0, "expected `:` after the reduction operator");
        assert_eq!(err("loop collapse(0)"), ("`collapse` needs a positive integer constant".into(), "0".into()));
        assert_eq!(err("loop collapse(n)"), ("`collapse` needs a positive integer constant".into(), "n".into()));
        assert_eq!(err("parallel copy(a[0:n]").0, "expected `)` to close `copy(...)`");
        assert_eq!(err("parallel copy(a[0:n)").0, "expected `]` to close the array section");
        assert_eq!(err("parallel default(shared)").0, "expected `none` or `present` in `default(...)`");
        assert_eq!(err("atomic seq").0, "`seq` is not allowed on `atomic`");
        assert_eq!(err("enter copyin(a)").0, "expected `data` after `enter`");
        assert_eq!(err("loop gang seq"), ("`seq` cannot be combined with `gang` on `loop`".into(), "seq".into()));
        assert_eq!(err("loop independent auto").0, "`auto` cannot be combined with `independent` on `loop`");
        assert_eq!(err("loop collapse(2) collapse(3)"), ("`collapse` appears twice on `loop`".into(), "collapse(3)".into()));
        assert_eq!(err("parallel device_type(nvidia) copy(a)").0, "`copy` cannot follow `device_type` on `parallel`");
        assert_eq!(err("set if(n)").0, "`set` needs a `default_async`, `device_num` or `device_type` clause");
        assert_eq!(err("set device_type(nvidia, host)").0, "`set` takes one device type");
        assert_eq!(err("init default_async(1)").0, "`default_async` is not allowed on `init`");
        assert_eq!(err("parallel device_type()").0, "expected a device type in `device_type(...)`, found `)`");
        assert_eq!(err("routine seq bind(1)").0, "expected a function name in `bind(...)`, found a number");
    }

    #[test]
    fn device_type_scopes_the_clauses_after_it() {
        let kinds = |line: &str| dir(line).unwrap().clauses.into_iter().map(|c| c.kind).collect::<Vec<_>>();
        // Other device types' clauses are dropped; ours override the general ones.
        let k = kinds("parallel num_gangs(2) device_type(host) num_gangs(1) async(3) device_type(nvidia) num_gangs(8)");
        assert_eq!(k.len(), 1);
        assert!(matches!(&k[0], ClauseKind::NumGangs(v) if matches!(v[..], [Expr { kind: ExprKind::IntLit { value: 8, .. }, .. }])));
        // `*` applies when no group names the GPU.
        let k = kinds("loop seq dtype(*) gang vector device_type(radeon) worker");
        assert!(matches!(k.as_slice(), [ClauseKind::Gang { num: None, dim: None }, ClauseKind::Vector(None)]), "{k:?}");
        let k = kinds("loop gang device_type(*) seq device_type(nvidia) vector");
        assert!(matches!(k.as_slice(), [ClauseKind::Gang { num: None, dim: None }, ClauseKind::Vector(None)]), "{k:?}");
        // On init/shutdown/set, device_type names the device acted on.
        assert!(matches!(&kinds("init device_type(nvidia) device_num(0)")[0], ClauseKind::DeviceType(v) if v == &["nvidia"]));
        assert!(matches!(dir("set default_async(1)").unwrap().kind, DirectiveKind::Set));
        assert!(matches!(dir("shutdown if(n)").unwrap().kind, DirectiveKind::Shutdown));
        assert!(matches!(&kinds("parallel self(n > 1)")[0], ClauseKind::SelfHost(Some(_))));
        assert!(matches!(&kinds("update self(a[0:n])")[0], ClauseKind::Data { kind: DataClauseKind::Host, .. }));
        assert!(matches!(&kinds("data create(zero: a[0:n])")[0], ClauseKind::Data { zero: true, .. }));
        assert!(matches!(&kinds("routine seq bind(\"g\") nohost")[1], ClauseKind::Bind(g) if g == "g"));
        assert!(matches!(&kinds("enter data attach(a)")[0], ClauseKind::Data { kind: DataClauseKind::Attach, .. }));
        assert!(matches!(&kinds("kernels no_create(a[0:n])")[0], ClauseKind::Data { kind: DataClauseKind::NoCreate, .. }));
    }

    #[test]
    fn every_prefix_of_a_directive_is_handled() {
        let line = "parallel loop gang(num: n) vector(length: 128) reduction(max: i) copy(a[0:n][1:i], b[:n], a[i:]) collapse(2) if(n > 1) async(1) wait(1, 2) default(none) tile(8, *)";
        assert_eq!(dir(line).unwrap().clauses.len(), 10);
        let mut failures = 0;
        for end in 0..line.len() {
            if dir(&line[..end]).is_err() {
                failures += 1;
            }
        }
        // Unbalanced prefixes fail; those ending between clauses parse.
        assert!(failures > line.len() / 2, "{failures}");
    }

    #[test]
    fn clause_expression_spans_point_into_the_pragma() {
        let src = "void f(int n) {\n#pragma acc parallel num_gangs(n + 1)\n;\n}";
        let (tu, _) = parse_translation_unit(src, 0, lex(src, 0).unwrap()).unwrap();
        let ExternalDecl::Function(f) = &tu.items[0] else { panic!() };
        let StmtKind::Acc { directive, .. } = &f.body.stmts[0].kind else { panic!() };
        let ClauseKind::NumGangs(v) = &directive.clauses[0].kind else { panic!() };
        let e = &v[0];
        assert_eq!(&src[e.span.lo as usize..e.span.hi as usize], "n + 1");
        assert_eq!(&src[directive.clauses[0].span.lo as usize..directive.clauses[0].span.hi as usize], "num_gangs(n + 1)");
    }
}
