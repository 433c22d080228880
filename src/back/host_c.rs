//! The host back end: turns each translation unit's preprocessed text into the C file the system
//! compiler builds into `program.so`, plus a glue file with `__yosegi_entry`.
//!
//! The user's code is copied verbatim (line markers included, so the C compiler's messages point
//! at the user's file) except for spliced edits, each a byte range of the preprocessed text and
//! its replacement:
//! * every region's span becomes calls through the runtime table (`include/yosegi_rt.h`); a
//!   structured `data` region wraps its body, whose own edits are applied inside it (and a
//!   `host_data` region declares around it variables of its `use_device` names holding device
//!   addresses);
//! * `malloc`/`calloc`/`realloc`/`free`/`posix_memalign`/`aligned_alloc` callees become the runtime's tracking wrappers;
//! * coherence hooks (`host_access`, from the accesses [`hooks`] finds) go before host
//!   statements that may touch memory a device holds; loops that launch nothing get one hook
//!   before the loop;
//! * leftover `#pragma acc` lines become comments; `#pragma omp` lines stay (the system
//!   compiler reads them with `-fopenmp`), and what goes before a statement goes before the
//!   pragma lines in front of it ([`openmp`]);
//! * `main` gets a `return 0;` before its closing brace, so that falling off its end exits 0
//!   even where it is compiled under another name (`yosegi cc` renames it for the start code);
//! * a per-TU function registers the file-scope arrays with the runtime.
//!
//! Replacements keep the number of newlines of the text they replace, so lines after an edit
//! keep their numbers (a hook put before pragma lines ends with a newline, and a line marker
//! after it sets the numbers back).
//!
//! Hooks are per statement: a statement that launches (directly or through a user function that
//! does) is entered, and each host statement inside it gets its own hook; a host statement gets
//! one hook before it covering every array and pointer base it touches, evaluated there. Where a
//! base cannot be evaluated before the statement (it has side effects, names a variable the
//! statement declares, changes in a hoisted loop, or loads memory the statement reads only under
//! a condition) the hook is `host_access_all`. Known gap: in a single expression that both calls
//! a launching function and reads an array after the call (`x = f(a) + a[0];`), the read after
//! the call is covered only by the hook before the statement.

use std::collections::{HashMap, HashSet};

use crate::diag::Span;
use crate::front::ast::{
    self, DeclSpecs, Declaration, Declarator, DerivedType, ExprKind, ExternalDecl, ForInit, Initializer, keep_lines,
    StmtKind, StorageClass, TranslationUnit, TypeSpec, UnaryOp,
};
use crate::front::linkage::{Definitions, FunctionKey};
use crate::source::SourceSet;
use crate::ir::{DataClauseKind, HostArg, HostArgKind, Module, Region, RegionKind, StepLoop};

mod walk;

pub(crate) use walk::visit_unit_exprs;
use walk::{visit_block_exprs, visit_decl_exprs, visit_expr, visit_stmt_exprs};

/// The host/runtime interface, inlined at the top of every generated file so the files build
/// without an include path.
pub const RUNTIME_HEADER: &str = include_str!("../../include/yosegi_rt.h");
mod hooks;
use hooks::*;
mod openmp;
pub use openmp::openmp_constructs_that_launch;
use openmp::{leading_pragmas, line_marker_for, stmt_launches};

const OPENACC_HEADER: &str = include_str!("../../include/openacc.h");
/// The definitions of the OpenACC API's routines, forwarding to the runtime's table.
const OPENACC_GLUE: &str = include_str!("openacc_glue.c");

/// The name of the glue file in a [`HostProgram`].
pub const GLUE_FILE_NAME: &str = "yosegi_glue.c";

#[derive(Clone, Debug, PartialEq)]
pub struct HostFile {
    pub name: String,
    pub code: String,
}

/// The C files of a program's host side: one per translation unit, then the glue.
#[derive(Clone, Debug, PartialEq)]
pub struct HostProgram {
    pub files: Vec<HostFile>,
}

/// The runtime header as a preprocessed unit can take it: the unit already holds whatever
/// system headers it included, and including `<stddef.h>` again would redefine its anonymous
/// structs (`max_align_t`), so `size_t` comes from the compiler's builtin type instead.
fn unit_prelude() -> String {
    let header = RUNTIME_HEADER.replace("#include <stddef.h>", "typedef __SIZE_TYPE__ size_t;");
    format!("{header}{WRAPPER_DECLS}")
}

/// Declarations every generated translation unit sees after the runtime header.
const WRAPPER_DECLS: &str = "void *__yosegi_malloc(size_t n);\n\
void *__yosegi_calloc(size_t n, size_t size);\n\
void *__yosegi_realloc(void *p, size_t n);\n\
void __yosegi_free(void *p);\n\
int __yosegi_posix_memalign(void **p, size_t align, size_t n);\n\
void *__yosegi_aligned_alloc(size_t align, size_t n);\n\
void *__yosegi_fopen(const char *path, const char *mode);\n\
void *__yosegi_freopen(const char *path, const char *mode, void *stream);\n\
int __yosegi_open(const char *path, int flags, ...);\n\
int __yosegi_creat(const char *path, unsigned int mode);\n\
int __yosegi_remove(const char *path);\n\
int __yosegi_unlink(const char *path);\n\
int __yosegi_rename(const char *from, const char *to);\n\
long __yosegi_time(long *t);\n";

pub fn emit_host_program(sources: &SourceSet, units: &[TranslationUnit], module: &Module) -> HostProgram {
    let program_info = ProgramInfo::new(units, module);
    let mut files = Vec::new();
    for unit in units {
        let Some(source) = sources.units.get(unit.tu as usize) else { continue };
        let code = emit_unit(sources, &source.text, unit, module, &program_info);
        files.push(HostFile { name: unit_file_name(sources, unit.tu), code });
    }
    let tus: Vec<u32> = units.iter().filter(|u| (u.tu as usize) < sources.units.len()).map(|u| u.tu).collect();
    let void_main = program_info.definitions.iter().any(|(_, f)| is_main(f) && returns_void(f));
    files.push(HostFile { name: GLUE_FILE_NAME.to_string(), code: glue_file(&tus, void_main) });
    HostProgram { files }
}

/// `tu<K>_<stem>.c`: unique per unit, recognisable by the user's file name.
fn unit_file_name(sources: &SourceSet, tu: u32) -> String {
    let stem = sources.units[tu as usize]
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect())
        .unwrap_or_else(|| "input".to_string());
    format!("tu{tu}_{stem}.c")
}

/// The calls that open files, as the program makes them (`runtime::ranks`): in a job of several
/// ranks (the runtime sets `YOSEGI_RANK`), a file opened for writing (`fopen`/`freopen` modes
/// with `w`, `a` or `+`; `open` other than read-only; `creat`) is written by rank 0 only. The
/// other ranks write a private shadow of it, a copy of the file when the mode keeps its content
/// (`a`, `r+`, `open` without `O_TRUNC`), and open the shadow whenever they open that path
/// again, so every rank reads back what it wrote and the file is written once. `remove`,
/// `unlink` and `rename` act on the file on rank 0 and on the shadow elsewhere.
const RANK_FILES: &str = r#"#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <stdarg.h>
static struct { char *path; char shadow[64]; } __yosegi_shadows[256];
static int __yosegi_shadow_count;
static void __yosegi_drop_shadows(void) {
    for (int i = 0; i < __yosegi_shadow_count; i++)
        if (strcmp(__yosegi_shadows[i].shadow, "/dev/null") != 0) unlink(__yosegi_shadows[i].shadow);
}
/* Whether the program runs as a rank of a job, `*other` set for every rank but rank 0. */
static int __yosegi_in_job(int *other) {
    const char *rank = getenv("YOSEGI_RANK");
    if (rank) *other = strcmp(rank, "0") != 0;
    return rank != 0;
}
static int __yosegi_shadow_of(const char *path) {
    for (int i = 0; i < __yosegi_shadow_count; i++)
        if (strcmp(__yosegi_shadows[i].path, path) == 0) return i;
    return -1;
}
/* The path this rank opens for `path`: its shadow when it has one or the open writes (a new
   one, holding a copy of the file when `keep` and the file exists), else `path` itself. The
   first open of a path for writing that keeps its content, or asks whether it exists (`keep`),
   is a meeting of the ranks: the others copy the file, or see whether it exists (`existed`),
   before rank 0 changes it. Rank 0 keeps the paths too, to meet at the same opens. */
static const char *__yosegi_rank_path(const char *path, int writes, int keep, int *existed) {
    int other = 0;
    if (!path || !__yosegi_in_job(&other)) return path;
    int known = __yosegi_shadow_of(path);
    if (known >= 0) {
        if (existed) *existed = 1;
        return other ? __yosegi_shadows[known].shadow : path;
    }
    if (!writes) return path;
    /* Past the table's end (every rank alike) the other ranks write nowhere. */
    if (__yosegi_shadow_count == 256) return other ? "/dev/null" : path;
    char *shadow = __yosegi_shadows[__yosegi_shadow_count].shadow;
    if (other) {
        const char *dir = getenv("TMPDIR");
        snprintf(shadow, 64, "%s/yosegi-rank-XXXXXX", dir && strlen(dir) < 40 ? dir : "/tmp");
        int fd = mkstemp(shadow);
        /* No shadow to be had: this rank writes nowhere, and still meets the others below. */
        if (fd < 0) snprintf(shadow, 64, "/dev/null");
        if (existed) *existed = access(path, F_OK) == 0;
        int from = keep && fd >= 0 ? open(path, O_RDONLY) : -1;
        if (from >= 0) {
            char buffer[1 << 14];
            ssize_t got;
            while ((got = read(from, buffer, sizeof buffer)) > 0)
                if (write(fd, buffer, (size_t)got) != got) break;
            close(from);
        }
        if (fd >= 0) close(fd);
        if (__yosegi_shadow_count == 0) atexit(__yosegi_drop_shadows);
    }
    __yosegi_shadows[__yosegi_shadow_count++].path = strdup(path);
    if (keep) __yosegi_rt->rank_meet("the first open of a file the program changes");
    return other ? shadow : path;
}
static int __yosegi_mode_writes(const char *mode) {
    return mode && (strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+'));
}
void *__yosegi_fopen(const char *path, const char *mode) {
    return fopen(__yosegi_rank_path(path, __yosegi_mode_writes(mode), mode && !strchr(mode, 'w'), 0), mode);
}
void *__yosegi_freopen(const char *path, const char *mode, void *stream) {
    return freopen(__yosegi_rank_path(path, __yosegi_mode_writes(mode), mode && !strchr(mode, 'w'), 0), mode, (FILE *)stream);
}
int __yosegi_open(const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & O_CREAT) {
        va_list args;
        va_start(args, flags);
        mode = (mode_t)va_arg(args, int);
        va_end(args);
    }
    int writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT);
    int existed = 0;
    const char *target = __yosegi_rank_path(path, writes, !(flags & O_TRUNC) || (flags & O_EXCL), &existed);
    if (target != path && (flags & O_EXCL)) {
        /* The shadow exists already: whether the file did decides, as on rank 0. */
        if (existed) {
            errno = EEXIST;
            return -1;
        }
        flags &= ~O_EXCL;
    }
    return open(target, flags, mode);
}
int __yosegi_creat(const char *path, unsigned int mode) {
    return __yosegi_open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}
/* Removing and renaming (`remove`, `unlink`, `rename`): rank 0 acts on the file, the others on
   their shadow of it. Each rank looks whether the file is there (its shadow, or the path)
   before a meeting of the ranks, rank 0 acts, and a second meeting holds the others until it
   has, so none sees the file as it was; the others answer as rank 0 does for a file that is
   there or not (0, or -1 with ENOENT). */
static int __yosegi_rank_acted(int other, int there, int result, const char *what) {
    int error = errno; /* rank 0's, kept through the meeting */
    __yosegi_rt->rank_meet(what);
    if (!other) {
        errno = error;
        return result;
    }
    if (there) return 0;
    errno = ENOENT;
    return -1;
}
static void __yosegi_forget_shadow(int i, int other) {
    if (other && strcmp(__yosegi_shadows[i].shadow, "/dev/null") != 0) unlink(__yosegi_shadows[i].shadow);
    free(__yosegi_shadows[i].path);
    __yosegi_shadows[i] = __yosegi_shadows[--__yosegi_shadow_count];
}
static int __yosegi_rank_remove(const char *path, int (*act)(const char *)) {
    int other = 0;
    if (!path || !__yosegi_in_job(&other)) return act(path);
    int i = __yosegi_shadow_of(path);
    int there = i >= 0 || access(path, F_OK) == 0;
    if (i >= 0) __yosegi_forget_shadow(i, other);
    __yosegi_rt->rank_meet("a file removed");
    return __yosegi_rank_acted(other, there, other ? 0 : act(path), "a file removed");
}
int __yosegi_remove(const char *path) { return __yosegi_rank_remove(path, remove); }
int __yosegi_unlink(const char *path) { return __yosegi_rank_remove(path, unlink); }
int __yosegi_rename(const char *from, const char *to) {
    int other = 0;
    if (!from || !to || !__yosegi_in_job(&other)) return rename(from, to);
    int i = __yosegi_shadow_of(from);
    int there = i >= 0 || access(from, F_OK) == 0;
    if (there && strcmp(from, to) != 0) {
        /* What `to` held is replaced: its shadow goes; `from`'s shadow is now `to`'s. */
        int j = __yosegi_shadow_of(to);
        if (j >= 0) {
            __yosegi_forget_shadow(j, other);
            i = __yosegi_shadow_of(from);
        }
        if (i >= 0) {
            free(__yosegi_shadows[i].path);
            __yosegi_shadows[i].path = strdup(to);
        }
    }
    __yosegi_rt->rank_meet("a file renamed");
    return __yosegi_rank_acted(other, there, other ? 0 : rename(from, to), "a file renamed");
}

"#;

/// `time` as the program calls it: in a job of several ranks, rank 0's clock on every rank, so
/// that a program seeding `rand` with `time(NULL)` draws the same numbers on every rank (the
/// ranks' host data would differ otherwise, and with them the parts each rank computes). One
/// broadcast per call; the other clocks (`gettimeofday`, `clock_gettime`) stay each rank's.
const RANK_CLOCK: &str = r#"#include <time.h>
long __yosegi_time(long *t) {
    long now = (long)time(0);
    if (getenv("YOSEGI_RANK")) __yosegi_rt->rank_share(&now, sizeof now, "the clock of time()");
    if (t) *t = now;
    return now;
}
"#;

/// The program's `main` (by name: `static` ones are not C's `main`, but no program has one).
fn is_main(f: &ast::FunctionDef) -> bool {
    f.declarator.name.as_deref() == Some("main") && f.specs.storage != Some(StorageClass::Static)
}

/// `void f(...)`: no value comes back.
fn returns_void(f: &ast::FunctionDef) -> bool {
    matches!(f.specs.ty, TypeSpec::Base(ast::BaseType::Void)) && f.declarator.derived.len() == 1
}

/// `void_main`: the program's `main` returns nothing (an old habit gcc accepts with a warning);
/// the entry calls it as such and returns 0, where a call through `int main()` would return
/// whatever the last call left in the return register.
fn glue_file(tus: &[u32], void_main: bool) -> String {
    let mut out = String::new();
    out.push_str("/* Generated by yosegi: the glue between the runtime and the program. */\n");
    // mkstemp, strdup and open (`RANK_FILES`) are POSIX: declared whatever -std the program has.
    out.push_str("#ifndef _POSIX_C_SOURCE\n#define _POSIX_C_SOURCE 200809L\n#endif\n");
    out.push_str(RUNTIME_HEADER);
    out.push_str("\n#define __YOSEGI__ 1\n");
    out.push_str(OPENACC_HEADER);
    out.push_str("\n#include <stdio.h>\n#include <stdlib.h>\n\n");
    out.push_str("yosegi_runtime *__yosegi_rt;\n\n");
    out.push_str("void *__yosegi_malloc(size_t n) { return __yosegi_rt->malloc(n); }\n");
    out.push_str("void *__yosegi_calloc(size_t n, size_t size) { return __yosegi_rt->calloc(n, size); }\n");
    out.push_str("void *__yosegi_realloc(void *p, size_t n) { return __yosegi_rt->realloc(p, n); }\n");
    out.push_str("void __yosegi_free(void *p) { __yosegi_rt->free(p); }\n");
    out.push_str("int __yosegi_posix_memalign(void **p, size_t align, size_t n) { return __yosegi_rt->posix_memalign(p, align, n); }\n");
    out.push_str("void *__yosegi_aligned_alloc(size_t align, size_t n) { return __yosegi_rt->aligned_alloc(align, n); }\n\n");
    out.push_str(RANK_FILES);
    out.push_str(RANK_CLOCK);
    out.push_str(OPENACC_GLUE);
    out.push('\n');
    for tu in tus {
        out.push_str(&format!("void __yosegi_register_tu{tu}(void);\n"));
    }
    // The program's buffered output must reach the terminal before the runtime's own report.
    out.push_str("\nstatic void __yosegi_at_exit(void) { fflush(NULL); __yosegi_rt->at_exit(); }\n\n");
    out.push_str(if void_main { "void main(int, char **);\n\n" } else { "int main(int, char **);\n\n" });
    out.push_str("int __yosegi_entry(yosegi_runtime *rt, int argc, char **argv) {\n");
    out.push_str("    if (rt == 0 || rt->abi_version != YOSEGI_ABI_VERSION) {\n");
    out.push_str("        fprintf(stderr, \"yosegi: the program was built for runtime ABI %d, the runtime speaks %d\\n\", YOSEGI_ABI_VERSION, rt ? rt->abi_version : -1);\n");
    out.push_str("        return 2;\n    }\n");
    out.push_str("    __yosegi_rt = rt;\n");
    // In a job of several ranks the program's standard error is rank 0's, as its standard
    // output is (`runtime::ranks`); the runtime's own messages still come from every rank (it
    // writes to the descriptor, not to this stream). glibc's `stderr` may be assigned.
    out.push_str("#ifdef __GLIBC__\n");
    out.push_str("    {\n        const char *rank = getenv(\"YOSEGI_RANK\");\n");
    out.push_str("        FILE *quiet = rank && strcmp(rank, \"0\") != 0 ? fopen(\"/dev/null\", \"w\") : 0;\n");
    out.push_str("        if (quiet) stderr = quiet;\n    }\n#endif\n");
    for tu in tus {
        out.push_str(&format!("    __yosegi_register_tu{tu}();\n"));
    }
    out.push_str("    atexit(__yosegi_at_exit);\n");
    out.push_str(if void_main { "    main(argc, argv);\n    return 0;\n}\n" } else { "    return main(argc, argv);\n}\n" });
    out
}

// ---------------------------------------------------------------------------------------------
// Edits

#[derive(Clone, Debug)]
enum Piece {
    Text(String),
    /// A range of the original text, rendered with the edits inside it.
    Source(u32, u32),
}

#[derive(Clone, Debug)]
struct Edit {
    lo: u32,
    hi: u32,
    pieces: Vec<Piece>,
    /// Orders insertions at one position so wrappers nest: openers of longer spans first,
    /// closers of shorter spans first.
    nesting: i64,
}

impl Edit {
    fn insert(at: u32, text: String) -> Edit {
        Edit { lo: at, hi: at, pieces: vec![Piece::Text(text)], nesting: 0 }
    }
    fn replace(lo: u32, hi: u32, pieces: Vec<Piece>) -> Edit {
        Edit { lo, hi, pieces, nesting: 0 }
    }
    /// Text opening a wrapper around `span`, inserted at its start.
    fn open(span: Span, text: String) -> Edit {
        Edit { nesting: -(i64::from(span.hi - span.lo)), ..Edit::insert(span.lo, text) }
    }
    /// Text closing a wrapper around `span`, inserted at its end.
    fn close(span: Span, text: String) -> Edit {
        Edit { nesting: i64::from(span.hi - span.lo), ..Edit::insert(span.hi, text) }
    }
}

/// Renders `text[lo..hi]` with the edits that lie inside it. Edits never partially overlap;
/// an edit inside another is applied when the outer one renders that part of the source, and
/// `done` keeps an edit from being applied twice.
fn render(text: &str, lo: u32, hi: u32, edits: &[Edit], done: &mut [bool], out: &mut String) {
    let mut cursor = lo;
    for (i, edit) in edits.iter().enumerate() {
        if done[i] || edit.lo < cursor || edit.hi > hi || edit.lo > hi {
            continue;
        }
        done[i] = true;
        out.push_str(&text[cursor as usize..edit.lo as usize]);
        for piece in &edit.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Source(a, b) => render(text, *a, *b, edits, done, out),
            }
        }
        cursor = edit.hi;
    }
    out.push_str(&text[cursor as usize..hi as usize]);
}

/// Applies sorted `edits` to the whole of `text`.
fn apply_edits(text: &str, edits: &[Edit], out: &mut String) {
    let mut done = vec![false; edits.len()];
    render(text, 0, text.len() as u32, edits, &mut done, out);
}

fn sort_edits(edits: &mut [Edit]) {
    // Insertions first at a position, then enclosing edits before the ones they contain.
    edits.sort_by_key(|e| (e.lo, e.hi != e.lo, e.nesting, std::cmp::Reverse(e.hi)));
}

fn is_acc_pragma_line(line: &str) -> bool {
    let rest = line.trim_start();
    let Some(rest) = rest.strip_prefix('#') else { return false };
    let Some(rest) = rest.trim_start().strip_prefix("pragma") else { return false };
    let rest = rest.trim_start();
    rest.starts_with("acc") && rest[3..].chars().next().is_none_or(|c| c.is_whitespace())
}

// ---------------------------------------------------------------------------------------------
// Whole-program facts: user functions, and which of them (transitively) contain regions

struct ProgramInfo<'u> {
    /// Which function a call names in the unit it is written in (two files' `static`
    /// functions of one name are two functions here too).
    definitions: Definitions<'u>,
    /// User functions whose bodies contain a region or call one that does.
    launching_functions: HashSet<FunctionKey>,
    /// User functions declared `void f(...)`.
    void_functions: HashSet<FunctionKey>,
    /// Per unit, the inline-only functions it gives an external definition (`c_inline`).
    inline_externals: std::collections::BTreeMap<u32, Vec<String>>,
}

impl<'u> ProgramInfo<'u> {
    fn new(units: &'u [TranslationUnit], module: &Module) -> ProgramInfo<'u> {
        let definitions = Definitions::new(units);
        let mut void_functions = HashSet::new();
        let mut calls: HashMap<FunctionKey, HashSet<FunctionKey>> = HashMap::new();
        let mut launching = HashSet::new();
        for (key, f) in definitions.iter() {
            if returns_void(f) {
                void_functions.insert(key.clone());
            }
            if module.regions.iter().any(|r| span_inside(r.span, f.span)) {
                launching.insert(key.clone());
            }
            let mut callees = HashSet::new();
            visit_block_exprs(&f.body, &mut |e| {
                if let ExprKind::Call { callee, .. } = &e.kind
                    && let ExprKind::Ident(n) = &callee.kind
                {
                    callees.extend(definitions.resolve(n, e.span.tu));
                }
            });
            calls.entry(key.clone()).or_default().extend(callees);
        }
        loop {
            let before = launching.len();
            for (f, callees) in &calls {
                if !launching.contains(f) && callees.iter().any(|c| launching.contains(c)) {
                    launching.insert(f.clone());
                }
            }
            if launching.len() == before {
                break;
            }
        }
        let inline_externals = super::c_inline::missing_external_definitions(units);
        ProgramInfo { definitions, launching_functions: launching, void_functions, inline_externals }
    }

    /// The function a call of `name` at `call` names, when it launches kernels.
    fn launching(&self, name: &str, call: Span) -> Option<FunctionKey> {
        self.definitions.resolve(name, call.tu).filter(|k| self.launching_functions.contains(k))
    }
}

fn span_inside(inner: Span, outer: Span) -> bool {
    inner.tu == outer.tu && inner.lo >= outer.lo && inner.hi <= outer.hi
}

// ---------------------------------------------------------------------------------------------
// A light C type model: enough to tell pointers and arrays from scalars

#[derive(Clone, Debug, PartialEq)]
enum CType {
    Scalar,
    /// A type whose layout we do not know (`FILE`, a system header's struct): never tracked.
    Opaque,
    Pointer(Box<CType>),
    Array(Box<CType>),
    Struct(String),
    Function(Box<CType>),
    Unknown,
}

impl CType {
    /// Pointers and arrays whose memory the runtime may track.
    fn is_trackable_pointer(&self) -> bool {
        match self {
            CType::Pointer(inner) | CType::Array(inner) => {
                !matches!(**inner, CType::Opaque | CType::Function(_) | CType::Unknown)
            }
            _ => false,
        }
    }
    fn element(&self) -> CType {
        match self {
            CType::Pointer(t) | CType::Array(t) => (**t).clone(),
            _ => CType::Unknown,
        }
    }
}

#[derive(Default)]
struct TypeTables {
    structs: HashMap<String, HashMap<String, CType>>,
    typedefs: HashMap<String, CType>,
}

impl TypeTables {
    fn base_type(&mut self, specs: &DeclSpecs) -> CType {
        match &specs.ty {
            TypeSpec::Base(_) | TypeSpec::Enum(_) => CType::Scalar,
            TypeSpec::Struct(s) => {
                let key = match &s.tag {
                    Some(tag) => format!("{}{}", if s.is_union { "union " } else { "struct " }, tag),
                    None => format!("<anonymous@{}:{}>", s.span.tu, s.span.lo),
                };
                if let Some(fields) = &s.fields {
                    let mut table = HashMap::new();
                    for field in fields {
                        let base = self.base_type(&field.specs);
                        for d in &field.declarators {
                            if let Some(name) = &d.declarator.name {
                                table.insert(name.clone(), apply_derived(base.clone(), &d.declarator));
                            }
                        }
                    }
                    self.structs.insert(key.clone(), table);
                }
                CType::Struct(key)
            }
            TypeSpec::TypedefName(name) => match self.typedefs.get(name) {
                Some(t) => t.clone(),
                // System typedefs: the `_t` ones (`size_t`, `int32_t`) are arithmetic; others
                // (`FILE`) are opaque objects the program never shares with a device.
                None if name.ends_with("_t") => CType::Scalar,
                None => CType::Opaque,
            },
        }
    }

    fn declare_typedefs(&mut self, d: &Declaration) {
        let base = self.base_type(&d.specs);
        if d.specs.storage == Some(StorageClass::Typedef) {
            for init in &d.declarators {
                if let Some(name) = &init.declarator.name {
                    self.typedefs.insert(name.clone(), apply_derived(base.clone(), &init.declarator));
                }
            }
        }
    }

    fn field(&self, strukt: &CType, field: &str) -> CType {
        match strukt {
            CType::Struct(key) => self.structs.get(key).and_then(|f| f.get(field)).cloned().unwrap_or(CType::Unknown),
            _ => CType::Unknown,
        }
    }
}

/// The declared type: the derivations apply from the name outward, so the last one is closest
/// to the base type.
fn apply_derived(base: CType, declarator: &Declarator) -> CType {
    let mut ty = base;
    for d in declarator.derived.iter().rev() {
        ty = match d {
            DerivedType::Pointer(_) => CType::Pointer(Box::new(ty)),
            DerivedType::Array { .. } => CType::Array(Box::new(ty)),
            DerivedType::Function { .. } => CType::Function(Box::new(ty)),
        };
    }
    ty
}

/// Names in scope with their types: file scope at the bottom, blocks above it.
struct Scopes {
    stack: Vec<HashMap<String, CType>>,
}

impl Scopes {
    fn lookup(&self, name: &str) -> CType {
        self.stack.iter().rev().find_map(|s| s.get(name).cloned()).unwrap_or(CType::Unknown)
    }
    fn declare(&mut self, name: &str, ty: CType) {
        if let Some(top) = self.stack.last_mut() {
            top.insert(name.to_string(), ty);
        }
    }
    fn push(&mut self) {
        self.stack.push(HashMap::new());
    }
    fn pop(&mut self) {
        self.stack.pop();
    }
}

// ---------------------------------------------------------------------------------------------
// One translation unit

struct UnitEmitter<'a> {
    sources: &'a SourceSet,
    tu: u32,
    text: &'a str,
    info: &'a ProgramInfo<'a>,
    tables: TypeTables,
    scopes: Scopes,
    edits: Vec<Edit>,
    /// This unit's regions.
    regions: Vec<&'a Region>,
    /// The step loops of the program (`Module::step_loops`).
    step_loops: &'a [StepLoop],
    /// The unit's `#pragma omp` lines (the `#` of each), and those already commented out.
    openmp_pragmas: Vec<u32>,
    commented_openmp: HashSet<u32>,
}

/// Where a statement sits: a block item can have a hook inserted before it; the direct body of
/// `if`/`for`/`while` needs braces around the hook and the statement.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Placement {
    BlockItem,
    SoleBody,
}

fn emit_unit(sources: &SourceSet, text: &str, unit: &TranslationUnit, module: &Module, info: &ProgramInfo) -> String {
    let regions: Vec<&Region> = module.regions.iter().filter(|r| r.span.tu == unit.tu).collect();
    let mut emitter = UnitEmitter {
        sources,
        tu: unit.tu,
        text,
        info,
        tables: TypeTables::default(),
        scopes: Scopes { stack: vec![HashMap::new()] },
        edits: Vec::new(),
        regions,
        step_loops: &module.step_loops,
        openmp_pragmas: unit.openmp_pragmas.iter().map(|p| p.lo).collect(),
        commented_openmp: HashSet::new(),
    };
    let mut statics = Vec::new();
    for item in &unit.items {
        match item {
            ExternalDecl::Declaration(d) => {
                emitter.tables.declare_typedefs(d);
                let base = emitter.tables.base_type(&d.specs);
                for init in &d.declarators {
                    let Some(name) = &init.declarator.name else { continue };
                    if d.specs.storage == Some(StorageClass::Typedef) {
                        continue;
                    }
                    let ty = apply_derived(base.clone(), &init.declarator);
                    if let CType::Array(_) = ty
                        && d.specs.storage != Some(StorageClass::Extern)
                        && array_size_known(&init.declarator, init.init.is_some())
                    {
                        statics.push(name.clone());
                    }
                    emitter.scopes.declare(name, ty);
                }
                emitter.rename_wrapped_calls_in(&mut |f| visit_decl_exprs(d, f));
            }
            ExternalDecl::Function(f) => emitter.function(f),
            ExternalDecl::Directive(_) => {}
        }
    }
    // A file-scope `declare` runs when the program starts, with the statics' registration.
    let mut at_start = Vec::new();
    for region in emitter.regions.clone() {
        if region.function.is_empty() {
            let (decl, args_ref) = arg_array(&format!("__yosegi_args{}", region.id), &region.args);
            at_start.push(format!("    {{ {decl}__yosegi_rt->region({}, {args_ref}, {}); }}\n", region.id, region.args.len()));
            continue;
        }
        emitter.region_edit(region);
    }
    emitter.comment_leftover_pragmas();
    // A dialect's own edits (`front::cuda`): keywords out, launch shapes in.
    for rewrite in &unit.host_rewrites {
        emitter.edits.push(Edit::replace(rewrite.span.lo, rewrite.span.hi, vec![Piece::Text(rewrite.text.clone())]));
    }
    let mut edits = std::mem::take(&mut emitter.edits);
    sort_edits(&mut edits);

    let mut out = String::new();
    out.push_str(&unit_prelude());
    apply_edits(text, &edits, &mut out);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    statics.dedup();
    out.push_str(&format!("void __yosegi_register_tu{}(void) {{\n", unit.tu));
    for name in &statics {
        out.push_str(&format!("    __yosegi_rt->register_static((void *){name}, sizeof({name}), \"{name}\");\n"));
    }
    for call in &at_start {
        out.push_str(call);
    }
    out.push_str("}\n");
    for name in info.inline_externals.get(&unit.tu).into_iter().flatten() {
        out.push_str(&super::c_inline::external_declaration_text(name));
    }
    out
}

/// `sizeof` works on the array: its outer size is given, or an initializer completes it.
fn array_size_known(declarator: &Declarator, has_init: bool) -> bool {
    match declarator.derived.first() {
        Some(DerivedType::Array { size: None, .. }) => has_init,
        _ => true,
    }
}

/// A walk over some expressions: calls its argument on each.
type ExprWalk<'w> = dyn FnMut(&mut dyn FnMut(&ast::Expr)) + 'w;

impl<'a> UnitEmitter<'a> {
    /// Calls the glue wraps: the allocators (the runtime tracks heap blocks) and the calls that
    /// open, remove and rename files (in a job of several ranks, rank 0 alone writes files:
    /// `RANK_FILES`).
    fn rename_wrapped_calls_in(&mut self, walk: &mut ExprWalk) {
        let mut edits = Vec::new();
        let definitions = &self.info.definitions;
        walk(&mut |e| {
            if let ExprKind::Call { callee, .. } = &e.kind
                && let ExprKind::Ident(n) = &callee.kind
                // A function of the program's own of that name is called as it is.
                && definitions.resolve(n, e.span.tu).is_none()
                && matches!(n.as_str(), "malloc" | "calloc" | "realloc" | "free" | "posix_memalign" | "aligned_alloc" | "fopen" | "freopen" | "open" | "creat" | "remove" | "unlink" | "rename" | "time"
                )
            {
                edits.push(Edit::replace(callee.span.lo, callee.span.hi, vec![Piece::Text(format!("__yosegi_{n}"))]));
            }
        });
        self.edits.extend(edits);
    }

    fn function(&mut self, f: &ast::FunctionDef) {
        self.rename_wrapped_calls_in(&mut |g| visit_block_exprs(&f.body, g));
        // C99 5.1.2.2.3: reaching the `}` of `main` returns 0. The compiler knows that rule for
        // a function named `main` only, and `yosegi cc` compiles it as `__yosegi_user_main`;
        // said explicitly, it holds under any name (after a final `return`, it is never
        // reached). Last of the insertions at the brace, after the closers of any wrapper.
        if is_main(f) && !returns_void(f) && f.declarator.derived.len() == 1 && f.body.span.hi > f.body.span.lo {
            let brace = f.body.span.hi - 1;
            if self.text.as_bytes().get(brace as usize) == Some(&b'}') {
                self.edits.push(Edit { nesting: i64::MAX, ..Edit::insert(brace, " return 0; ".to_string()) });
            }
        }
        let base = self.tables.base_type(&f.specs);
        if let Some(name) = &f.declarator.name {
            self.scopes.declare(name, apply_derived(base, &f.declarator));
        }
        self.scopes.push();
        if let Some(DerivedType::Function { params, .. }) = f.declarator.derived.first() {
            for p in params {
                if let Some(name) = &p.declarator.name {
                    let base = self.tables.base_type(&p.specs);
                    let ty = match apply_derived(base, &p.declarator) {
                        // Array parameters are pointers.
                        CType::Array(t) => CType::Pointer(t),
                        t => t,
                    };
                    self.scopes.declare(name, ty);
                }
            }
        }
        self.block_items(&f.body.stmts);
        self.scopes.pop();
    }

    fn block_items(&mut self, stmts: &[ast::Stmt]) {
        self.scopes.push();
        for s in stmts {
            self.stmt(s, Placement::BlockItem);
        }
        self.scopes.pop();
    }

    fn region_at(&self, s: &ast::Stmt) -> Option<&'a Region> {
        let directive_lo = match &s.kind {
            StmtKind::Acc { directive, .. } => Some(directive.span.lo),
            _ => None,
        };
        self.regions
            .iter()
            .copied()
            .find(|r| r.span.lo == s.span.lo || Some(r.span.lo) == directive_lo)
    }

    fn contains_region(&self, s: &ast::Stmt) -> bool {
        stmt_launches(s, &self.regions, self.info)
    }

    /// Whether `s` is the statement of an OpenMP construct (`#pragma omp` lines before it).
    fn under_openmp(&self, s: &ast::Stmt) -> bool {
        leading_pragmas(self.text, s.span.lo).is_some_and(|p| !p.openmp.is_empty())
    }

    /// Collects the accesses of `s` (or of its parts) without changing the emitter's scopes.
    fn collect(&mut self, walk: &mut dyn FnMut(&mut Collector)) -> (Vec<Access>, HashSet<String>, HashSet<String>) {
        self.scopes.push();
        let mut c = Collector {
            sources: self.sources,
            tables: &mut self.tables,
            scopes: &mut self.scopes,
            info: self.info,
            accesses: Vec::new(),
            assigned: HashSet::new(),
            declared: HashSet::new(),
            conditional_depth: 0,
            address_taken: HashSet::new(),
            calls_unknown: false,
            loops: Vec::new(),
            writes_through_pointer: false,
        };
        walk(&mut c);
        let result = c.finish();
        self.scopes.pop();
        result
    }

    /// Inserts `hook;` before statement `s`, and before the pragma lines in front of it (an
    /// OpenMP construct's, a loop pragma's), which must stay right before their statement.
    fn insert_hook(&mut self, s: &ast::Stmt, hook: String, placement: Placement) {
        let (span, hook) = match leading_pragmas(self.text, s.span.lo) {
            Some(pragmas) => {
                let marker = line_marker_for(self.sources, self.tu, self.text, pragmas.start);
                (Span::new(s.span.tu, pragmas.start, s.span.hi), format!("{hook};\n{marker}"))
            }
            None => (s.span, format!("{hook}; ")),
        };
        match placement {
            Placement::BlockItem => self.edits.push(Edit::open(span, hook)),
            Placement::SoleBody => {
                self.edits.push(Edit::open(span, format!("{{ {hook}")));
                self.edits.push(Edit::close(span, " }".to_string()));
            }
        }
    }

    fn is_loop(s: &ast::Stmt) -> bool {
        matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::DoWhile { .. })
    }

    fn stmt(&mut self, s: &ast::Stmt, placement: Placement) {
        if let Some(pragmas) = leading_pragmas(self.text, s.span.lo)
            && !pragmas.openmp.is_empty()
            && self.contains_region(s)
        {
            // An OpenMP construct whose threads would launch regions runs on one thread
            // (`openmp`'s comment says why): its pragma lines become comments, and so do the
            // OpenMP lines inside it, which would be orphaned there (`#pragma omp section`
            // outside its `sections` does not compile).
            let inside = self.openmp_pragmas.iter().copied().filter(|&p| p >= s.span.lo && p < s.span.hi);
            let lines: Vec<u32> = pragmas.openmp.iter().copied().chain(inside).collect();
            for hash in lines {
                if self.commented_openmp.insert(hash) {
                    self.edits.push(Edit::insert(hash, "// ".to_string()));
                }
            }
        }
        if let StmtKind::Acc { body, .. } = &s.kind
            && self.region_at(s).is_none()
        {
            // A construct left to the host: its pragma line is commented out, its statement is
            // plain host code.
            if let Some(body) = body {
                self.stmt(body, placement);
            }
            return;
        }
        if self.region_at(s).is_some() {
            // A region's statement runs through the runtime; a data region's body is host code.
            if let StmtKind::Acc { body: Some(body), .. } = &s.kind
                && let Some(region) = self.region_at(s)
                && matches!(region.kind, RegionKind::Data { .. })
            {
                self.stmt(body, Placement::SoleBody);
            }
            return;
        }
        if !self.contains_region(s) {
            self.host_stmt(s, placement);
            if let StmtKind::Decl(d) = &s.kind {
                self.declare(d);
            }
            return;
        }
        match &s.kind {
            StmtKind::Compound(b) => self.block_items(&b.stmts),
            StmtKind::If { cond, then, otherwise } => {
                self.hook_before_for_exprs(s, &[cond], placement);
                self.hooks_after_launching_calls(cond, None);
                self.stmt(then, Placement::SoleBody);
                if let Some(o) = otherwise {
                    self.stmt(o, Placement::SoleBody);
                }
            }
            StmtKind::Switch { cond, body } => {
                self.hook_before_for_exprs(s, &[cond], placement);
                self.hooks_after_launching_calls(cond, None);
                self.stmt(body, Placement::SoleBody);
            }
            StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
                self.hook_in_condition(cond);
                self.hooks_after_launching_calls(cond, None);
                self.stmt(body, Placement::SoleBody);
            }
            StmtKind::For { init, cond, step, body } => {
                self.scopes.push();
                match init {
                    Some(ForInit::Decl(d)) => {
                        let (accesses, _, _) = self.collect(&mut |c| c.declaration(d));
                        if let Some(hook) = pure_hook(&accesses) {
                            self.insert_hook(s, hook, placement);
                        }
                        self.declare(d);
                    }
                    Some(ForInit::Expr(e)) => self.hook_before_for_exprs(s, &[e], placement),
                    None => {}
                }
                for e in [cond, step].into_iter().flatten() {
                    self.hook_in_condition(e);
                    self.hooks_after_launching_calls(e, None);
                }
                self.stmt(body, Placement::SoleBody);
                self.scopes.pop();
            }
            StmtKind::Case { body, .. } | StmtKind::Default { body } | StmtKind::Labeled { body, .. } => {
                self.stmt(body, placement)
            }
            StmtKind::Acc { body: Some(body), .. } => self.stmt(body, placement),
            StmtKind::Decl(d) => {
                // A declaration whose initializer calls a launching function.
                self.host_stmt(s, placement);
                self.stmt_hooks_after_launching_calls(s);
                self.declare(d);
            }
            _ => {
                self.host_stmt(s, placement);
                self.stmt_hooks_after_launching_calls(s);
            }
        }
    }

    /// Memory a statement touches after a launching call inside it (`b[0] = f(a);`,
    /// `x = f(a) + a[0];`) is covered by a hook right after the call.
    fn stmt_hooks_after_launching_calls(&mut self, s: &ast::Stmt) {
        let (accesses, _, declared) = self.collect(&mut |c| c.stmt(s));
        // A statement that is just the call touches nothing after it.
        let whole = match &s.kind {
            StmtKind::Expr(Some(e)) | StmtKind::Return(Some(e)) => Some(e.span),
            _ => None,
        };
        let hook = hook_for_reevaluation(&accesses, &declared);
        self.wrap_launching_calls(&mut |f| visit_stmt_exprs(s, f), hook, whole);
    }

    fn hooks_after_launching_calls(&mut self, e: &ast::Expr, whole: Option<Span>) {
        let (accesses, _, declared) = self.collect(&mut |c| c.rvalue(e));
        let hook = hook_for_reevaluation(&accesses, &declared);
        self.wrap_launching_calls(&mut |f| visit_expr(e, f), hook, whole);
    }

    /// `f(a)` becomes `(f(a), HOOK)` for a void function, else
    /// `({ __auto_type __yosegi_r = f(a); HOOK; __yosegi_r; })`.
    fn wrap_launching_calls(&mut self, walk: &mut ExprWalk, hook: Option<String>, whole: Option<Span>) {
        let Some(hook) = hook else { return };
        let mut calls = Vec::new();
        walk(&mut |e| {
            if let ExprKind::Call { callee, .. } = &e.kind
                && let ExprKind::Ident(n) = &callee.kind
                && let Some(key) = self.info.launching(n, e.span)
                && Some(e.span) != whole
            {
                calls.push((e.span, self.info.void_functions.contains(&key)));
            }
        });
        for (span, is_void) in calls {
            if is_void {
                self.edits.push(Edit::open(span, "(".to_string()));
                self.edits.push(Edit::close(span, format!(", {hook})")));
            } else {
                self.edits.push(Edit::open(span, "({ __auto_type __yosegi_r = ".to_string()));
                self.edits.push(Edit::close(span, format!("; {hook}; __yosegi_r; }})")));
            }
        }
    }

    fn declare(&mut self, d: &Declaration) {
        self.tables.declare_typedefs(d);
        let base = self.tables.base_type(&d.specs);
        for init in &d.declarators {
            if let Some(name) = &init.declarator.name
                && d.specs.storage != Some(StorageClass::Typedef)
            {
                self.scopes.declare(name, apply_derived(base.clone(), &init.declarator));
            }
        }
    }

    fn hook_before_for_exprs(&mut self, s: &ast::Stmt, exprs: &[&ast::Expr], placement: Placement) {
        let (accesses, _, _) = self.collect(&mut |c| {
            for e in exprs {
                c.rvalue(e)
            }
        });
        if let Some(hook) = pure_hook(&accesses) {
            self.insert_hook(s, hook, placement);
        }
    }

    /// A loop condition that touches memory is evaluated after each iteration's launches: the
    /// hook goes inside it, as the left operand of a comma.
    fn hook_in_condition(&mut self, cond: &ast::Expr) {
        let (accesses, _, _) = self.collect(&mut |c| c.rvalue(cond));
        if let Some(hook) = pure_hook(&accesses) {
            self.edits.push(Edit::open(cond.span, format!("({hook}, (")));
            self.edits.push(Edit::close(cond.span, "))".to_string()));
        }
    }

    /// A statement that launches nothing: one hook before it covering everything it touches.
    fn host_stmt(&mut self, s: &ast::Stmt, placement: Placement) {
        match &s.kind {
            // The hook goes after the label, where control arrives.
            StmtKind::Case { body, .. } | StmtKind::Default { body } | StmtKind::Labeled { body, .. } => {
                return self.host_stmt(body, placement);
            }
            StmtKind::Acc { body: Some(body), .. } => return self.host_stmt(body, placement),
            _ => {}
        }
        let (accesses, assigned, declared) = self.collect(&mut |c| c.stmt(s));
        if accesses.is_empty() {
            return;
        }
        let mentions = |set: &HashSet<String>| accesses.iter().any(|a| a.idents.iter().any(|i| set.contains(i)));
        let impure = accesses.iter().any(|a| a.impure || a.guarded_load);
        let valid_before = if Self::is_loop(s) {
            // Hoisted out of the loop: each base must stay the same object every iteration.
            !impure && !mentions(&assigned) && !mentions(&declared)
        } else {
            !impure && !mentions(&declared)
        };
        if valid_before {
            if let Some(hook) = hook_call(&accesses) {
                self.insert_hook(s, hook, placement);
            }
            return;
        }
        if self.under_openmp(s) {
            // Hooks inside an OpenMP construct would run on each of its threads: one before it
            // covers everything it touches.
            return self.insert_hook(s, HOOK_ALL.to_string(), placement);
        }
        // Blocks and `if`s whose inner declarations name the memory: hook each part instead.
        match &s.kind {
            StmtKind::Compound(b) => self.block_items(&b.stmts),
            StmtKind::If { cond, then, otherwise } => {
                self.hook_before_for_exprs(s, &[cond], placement);
                self.host_stmt(then, Placement::SoleBody);
                if let Some(o) = otherwise {
                    self.host_stmt(o, Placement::SoleBody);
                }
            }
            _ => self.insert_hook(s, HOOK_ALL.to_string(), placement),
        }
    }

    fn region_edit(&mut self, region: &Region) {
        let span = region.span;
        if span.hi as usize > self.text.len() || span.lo > span.hi {
            return;
        }
        let original = &self.text[span.lo as usize..span.hi as usize];
        let args_name = format!("__yosegi_args{}", region.id);
        let (decl, args_ref) = arg_array(&args_name, &region.args);
        let count = region.args.len();
        let id = region.id;
        let mut pieces = Vec::new();
        let data_body = match (&region.kind, region.body_span) {
            (RegionKind::Data { .. }, Some(body)) if body.lo >= span.lo && body.hi <= span.hi => Some(body),
            (RegionKind::Data { .. }, _) => Some(Span::new(span.tu, self.statement_after_directive(span), span.hi)),
            _ => None,
        };
        match data_body {
            Some(body) => {
                let head = &self.text[span.lo as usize..body.lo as usize];
                let tail = &self.text[body.hi as usize..span.hi as usize];
                // With `if(c)` false the body runs with no data region around it; `c` is
                // evaluated once, at entry.
                let (guard_decl, guard) = match region.if_arg.and_then(|i| region.args.get(i as usize)) {
                    Some(cond) => {
                        (format!("int __yosegi_if{id} = ({}) != 0; ", cond.c_expr), format!("if (__yosegi_if{id}) "))
                    }
                    None => (String::new(), String::new()),
                };
                let (shadows, closes) = use_device_shadows(region);
                let enter =
                    format!("{{ {decl}{guard_decl}{guard}__yosegi_rt->data_enter({id}, {args_ref}, {count}); {shadows}");
                pieces.push(Piece::Text(keep_lines(enter, head)));
                pieces.push(Piece::Source(body.lo, body.hi));
                let exit = format!("{closes} {guard}__yosegi_rt->data_exit({id}, {args_ref}, {count}); }}");
                pieces.push(Piece::Text(keep_lines(exit, tail)));
            }
            _ => {
                // In a step loop the runtime may run several iterations: the counter skips
                // those past the first, and an even number leaves swapped pointers as they were.
                let launch = match self.step_loops.iter().find(|l| l.region == id) {
                    Some(l) => {
                        let skip_swap = if l.swap.is_some() { " if (__yosegi_ran != 1) continue;" } else { "" };
                        format!(
                            "{{ {decl}long long __yosegi_ran = __yosegi_rt->region_steps({id}, {args_ref}, {count}, {left}); \
                             {v} += (__typeof__({v}))(__yosegi_ran - 1);{skip_swap} }}",
                            v = l.counter,
                            left = l.remaining
                        )
                    }
                    None => format!("{{ {decl}__yosegi_rt->region({id}, {args_ref}, {count}); }}"),
                };
                // Scalars the kernels stored in place come back, and the host's copy becomes
                // the only current one: the host reads and assigns them by name, which no hook
                // covers (`stop = false;` before the next launch must reach the device); then
                // the final values the host gives what the region's loops keep private.
                let mut after: Vec<String> = region
                    .settle_after
                    .iter()
                    .filter_map(|&i| region.args.get(i as usize))
                    .map(|a| format!("{};", hooks::range_hook(&a.c_expr, a.size_expr.as_deref().unwrap_or("1"), hooks::READ | hooks::WRITE)))
                    .collect();
                after.extend(region.host_after.iter().cloned());
                let launch = if after.is_empty() { launch } else { format!("{{ {launch} {} }}", after.join(" ")) };
                let is_compute = matches!(region.kind, RegionKind::Compute { .. });
                match region.if_arg.and_then(|i| region.args.get(i as usize)) {
                    // A standalone directive whose `if` is false does nothing.
                    Some(cond) if !is_compute => {
                        pieces.push(Piece::Text(keep_lines(format!("if ({}) {launch}", cond.c_expr), original)))
                    }
                    Some(cond) => {
                        // The host runs the original statement when the `if` clause is false;
                        // it may touch anything, so every tracked object is made valid first.
                        pieces.push(Piece::Text(format!(
                            "if ({}) {launch} else {{ {HOOK_ALL}; ",
                            cond.c_expr
                        )));
                        let body_lo = self.statement_after_directive(span);
                        let directive_text = &self.text[span.lo as usize..body_lo as usize];
                        pieces.push(Piece::Text(keep_lines(String::new(), directive_text)));
                        pieces.push(Piece::Source(body_lo, span.hi));
                        pieces.push(Piece::Text(" }".to_string()));
                    }
                    None => pieces.push(Piece::Text(keep_lines(launch, original))),
                }
            }
        }
        self.edits.push(Edit::replace(span.lo, span.hi, pieces));
    }

    /// Where the statement covered by a directive starts: after the `#pragma` line.
    fn statement_after_directive(&self, span: Span) -> u32 {
        let text = &self.text[span.lo as usize..span.hi as usize];
        if is_acc_pragma_line(text.lines().next().unwrap_or("")) {
            match text.find('\n') {
                Some(nl) => span.lo + nl as u32 + 1,
                None => span.hi,
            }
        } else {
            span.lo
        }
    }

    /// Comments out the `#pragma acc` lines that stay in host code (constructs left to the
    /// host, `routine`, lines inside a data body); a region's own directive line is replaced
    /// with the region and left alone here.
    fn comment_leftover_pragmas(&mut self) {
        let mut offset = 0usize;
        for line in self.text.split_inclusive('\n') {
            let line_lo = offset as u32;
            offset += line.len();
            let line_hi = offset as u32;
            if !is_acc_pragma_line(line) {
                continue;
            }
            if self.regions.iter().any(|r| r.span.lo >= line_lo && r.span.lo < line_hi) {
                continue;
            }
            let hash = line_lo + (line.len() - line.trim_start().len()) as u32;
            self.edits.push(Edit::insert(hash, "// ".to_string()));
        }
    }
}

/// `host_data use_device(v)`: around the body, a variable `v` of `v`'s pointer type holding the
/// device address of `v`'s copy (the host address when `v` is not on the device, or when the
/// region's `if` is false), which hides the program's `v` there; and the braces that close
/// those scopes after the body.
fn use_device_shadows(region: &Region) -> (String, String) {
    let RegionKind::Data { data } = &region.kind else { return (String::new(), String::new()) };
    let id = region.id;
    let on_device = if region.if_arg.is_some() { format!("__yosegi_if{id}") } else { "1".to_string() };
    let (mut shadows, mut closes) = (String::new(), String::new());
    for (k, section) in data.iter().filter(|s| s.kind == DataClauseKind::UseDevice).enumerate() {
        let (v, host) = (&section.name, format!("__yosegi_ud{id}_{k}"));
        let _ = std::fmt::Write::write_fmt(
            &mut shadows,
            format_args!("{{ __typeof__(&({v})[0]) {host} = ({v}); {{ __typeof__({host}) {v} = {host}; \
             if ({on_device}) {{ void *__yosegi_d = __yosegi_rt->acc_deviceptr((void *) {host}); \
             if (__yosegi_d) {v} = (__typeof__({host})) __yosegi_d; }} ")
        );
        closes.push_str(" } }");
    }
    (shadows, closes)
}

/// `yosegi_arg NAME[] = {...}; ` and the expression naming it (a null pointer when empty).
fn arg_array(name: &str, args: &[HostArg]) -> (String, String) {
    if args.is_empty() {
        return (String::new(), "(yosegi_arg *)0".to_string());
    }
    let items: Vec<String> = args.iter().map(arg_initializer).collect();
    (format!("yosegi_arg {name}[] = {{ {} }}; ", items.join(", ")), name.to_string())
}

fn arg_initializer(arg: &HostArg) -> String {
    let e = &arg.c_expr;
    match arg.kind {
        HostArgKind::Int => format!("{{ .i = (long long)({e}) }}"),
        HostArgKind::Float => format!("{{ .f = (double)({e}) }}"),
        HostArgKind::Pointer => match &arg.size_expr {
            Some(size) => format!("{{ .ptr = (void *)({e}), .size = (long long)({size}) }}"),
            None => format!("{{ .ptr = (void *)({e}) }}"),
        },
        HostArgKind::ScalarOut(_) => format!("{{ .ptr = (void *)({e}) }}"),
    }
}

#[cfg(test)]
mod tests;
