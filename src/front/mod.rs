//! Front end: preprocessing with the system `cpp`, lexing, parsing (C and OpenACC directives)
//! and lowering to the IR.

pub mod ast;
pub mod cuda;
pub mod directive;
pub mod lexer;
pub mod linkage;
pub mod lower;
pub mod parser;
pub mod preprocess;
pub mod sema;

use crate::source;

use std::path::PathBuf;

use crate::diag::{Diagnostic, Diagnostics};

/// What reaches the preprocessor from the command line.
#[derive(Clone, Debug, Default)]
pub struct PreprocessOptions {
    pub include_dirs: Vec<PathBuf>,
    /// `NAME` or `NAME=VALUE`
    pub defines: Vec<String>,
    /// Other flags for cpp, in order (`-UNAME`, `-std=c99`), as a compiler driver passes them.
    pub cpp_flags: Vec<String>,
    /// The language of the files: by extension (`.cu` is the MESI-CUDA dialect), or forced.
    pub lang: Lang,
    /// `-fopenmp`: cpp defines `_OPENMP` (the host code is built with OpenMP, `driver::openmp`).
    pub openmp: bool,
}

/// What a source file is written in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lang {
    /// `.cu` files are the MESI-CUDA dialect, the others C with OpenACC.
    #[default]
    ByExtension,
    C,
    /// The MESI-CUDA dialect (`front::cuda`), whatever the extension.
    Mesi,
}

impl Lang {
    /// Whether `file` is read in the MESI-CUDA dialect.
    pub fn is_dialect(self, file: &std::path::Path) -> bool {
        match self {
            Lang::ByExtension => cuda::is_dialect_file(file),
            Lang::C => false,
            Lang::Mesi => true,
        }
    }
}

/// A parsed program: every translation unit, their sources, and the warnings so far.
pub struct ParsedProgram {
    pub sources: source::SourceSet,
    pub units: Vec<ast::TranslationUnit>,
    pub warnings: Vec<Diagnostic>,
}

/// Parses one source per unit (written as `unit<k>.c` to a scratch folder): what tests of the
/// front end's view of several files start from.
#[cfg(test)]
pub(crate) fn parse_test_units(sources: &[&str]) -> ParsedProgram {
    let dir = tempfile::tempdir().expect("temp dir");
    let files: Vec<std::path::PathBuf> = sources
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let path = dir.path().join(format!("unit{i}.c"));
            std::fs::write(&path, text).expect("write unit");
            path
        })
        .collect();
    parse_program(&files, &PreprocessOptions::default()).unwrap_or_else(|_| panic!("units do not parse"))
}

/// Preprocesses and parses each file (one translation unit each).
/// On failure the `SourceSet` is returned too, so the caller can render the diagnostics
/// (with the warnings gathered so far in front of the errors).
pub fn parse_program(
    files: &[PathBuf],
    options: &PreprocessOptions,
) -> Result<ParsedProgram, (source::SourceSet, Diagnostics)> {
    let mut sources = source::SourceSet::default();
    let mut units = Vec::new();
    let mut diags: Vec<Diagnostic> = Vec::new();
    let builtin = match preprocess::BuiltinHeaders::new() {
        Ok(b) => b,
        Err(d) => return Err((sources, Diagnostics(vec![d]))),
    };
    for file in files {
        let text = match preprocess::preprocess_with_warnings(file, options, &builtin) {
            Ok((t, warnings)) => {
                // cpp's own words (`#warning`), shown as gcc shows them. (`yosegi cc` leaves
                // them to the host compiler, which sees the same file.)
                eprint!("{warnings}");
                t
            }
            Err(d) => {
                diags.push(d);
                // Keep `tu` aligned with `sources.units` for the files after this one.
                sources.units.push(source::SourceUnit::new(file.clone(), String::new()));
                continue;
            }
        };
        add_unit(&mut sources, &mut units, &mut diags, file.clone(), text, options.lang.is_dialect(file));
    }
    finish(sources, units, diags)
}

/// Parses translation units whose text is already preprocessed (cpp's output, line markers
/// included), as one program, without running `cpp`: what [`parse_program`] does after
/// preprocessing. The fuzzer (`yosegi-fuzz`) feeds mutated text through it, and `yosegi cc`
/// links the units its objects carry.
pub fn parse_preprocessed_units(files: Vec<(PathBuf, String)>) -> Result<ParsedProgram, (source::SourceSet, Diagnostics)> {
    let mut sources = source::SourceSet::default();
    let mut units = Vec::new();
    let mut diags = Vec::new();
    for (path, text) in files {
        let dialect = cuda::is_dialect_file(&path);
        add_unit(&mut sources, &mut units, &mut diags, path, text, dialect);
    }
    finish(sources, units, diags)
}

/// Parses one unit into the program, its warnings (or its error) into `diags`.
fn add_unit(sources: &mut source::SourceSet, units: &mut Vec<ast::TranslationUnit>, diags: &mut Vec<Diagnostic>, path: PathBuf, text: String, dialect: bool) {
    match parse_unit(sources, path, text, dialect) {
        Ok((unit, warnings)) => {
            diags.extend(warnings);
            units.push(unit);
        }
        Err(d) => diags.push(d),
    }
}

/// The parsed program, or the diagnostics when any is an error.
fn finish(sources: source::SourceSet, units: Vec<ast::TranslationUnit>, diags: Vec<Diagnostic>) -> Result<ParsedProgram, (source::SourceSet, Diagnostics)> {
    if diags.iter().any(Diagnostic::is_error) {
        return Err((sources, Diagnostics(diags)));
    }
    Ok(ParsedProgram { sources, units, warnings: diags })
}

/// Lexes and parses the preprocessed `text` of `file` as the next translation unit of
/// `sources` (on a thread with the parser's stack), adding it to `sources`.
fn parse_unit(
    sources: &mut source::SourceSet,
    file: PathBuf,
    text: String,
    dialect: bool,
) -> Result<(ast::TranslationUnit, Vec<Diagnostic>), Diagnostic> {
    let tu = sources.units.len() as u32;
    let text = if dialect { text + &cuda::trailer() } else { text };
    sources.units.push(source::SourceUnit::new(file, text));
    let text = sources.units[tu as usize].text.as_str();
    parser::run_with_parser_stack(|| {
        let tokens = lexer::lex(text, tu)?;
        if dialect {
            parser::parse_dialect_translation_unit(text, tu, tokens)
        } else {
            parser::parse_translation_unit(text, tu, tokens)
        }
    })
    .unwrap_or_else(|| Err(Diagnostic::global_error("cannot start the parser thread (out of memory?)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn system_headers_parse_and_their_typedefs_are_usable() {
        let dir = tempfile::tempdir().unwrap();
        let src = "#include <stdio.h>\n#include <stdlib.h>\n#include <math.h>\n#include <string.h>\n#include <sys/time.h>\n#include <stdint.h>\n#include <openacc.h>\n\
                   static double now(void) { struct timeval tv; gettimeofday(&tv, NULL); return tv.tv_sec + tv.tv_usec * 1e-6; }\n\
                   int main(void) {\n  size_t n = 10; uint32_t k = 3u; FILE *f = stdout;\n  double *a = (double *)malloc(n * sizeof(double));\n  memset(a, 0, n * sizeof *a);\n\
                   #pragma acc parallel loop copy(a[0:n])\n  for (size_t i = 0; i < n; i++) a[i] = sqrt((double)i) + k;\n  fprintf(f, \"%f %f\\n\", a[3], now());\n  free(a);\n  return acc_get_num_devices(acc_device_host) - 1;\n}\n";
        let file = write(&dir, "prog.c", src);
        let parsed = match parse_program(&[file], &PreprocessOptions::default()) {
            Ok(p) => p,
            Err((s, d)) => panic!("{}", source::render_diagnostics(&s, &d.0, false)),
        };
        assert!(parsed.warnings.is_empty());
        let names: Vec<String> = parsed.units[0]
            .items
            .iter()
            .filter_map(|i| match i {
                ast::ExternalDecl::Function(f) => f.declarator.name.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(names, vec!["now", "main"]);
    }

    #[test]
    fn locations_after_an_include() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(&dir, "loc.c", "#include <stdio.h>\n\nint main(void) {\n    return 0;\n}\n");
        let parsed = parse_program(std::slice::from_ref(&file), &PreprocessOptions::default()).unwrap_or_else(|_| panic!());
        let ast::ExternalDecl::Function(f) = parsed.units[0].items.last().unwrap() else { panic!() };
        let ret = &f.body.stmts[0];
        let loc = parsed.sources.location(ret.span);
        assert_eq!((loc.line, loc.column, loc.in_system_header), (4, 5, false));
        assert!(loc.file.ends_with("loc.c"));
    }

    #[test]
    fn rendering_shows_file_line_column_and_caret() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(&dir, "file.c", "int main(void) {\n  int x;\n    x = ;\n  return 0;\n}\n");
        let Err((sources, diags)) = parse_program(&[file], &PreprocessOptions::default()) else { panic!() };
        let text = source::render_diagnostics(&sources, &diags.0, false);
        assert!(text.contains("error: expected expression"), "{text}");
        assert!(text.contains("file.c:3:9"), "{text}");
        assert!(text.lines().any(|l| l.trim_end().ends_with('^') || l.contains("^ ")), "{text}");
        assert!(!text.contains('\u{1b}'));
        let colored = source::render_diagnostics(&sources, &diags.0, true);
        assert!(colored.contains("\u{1b}[") && colored.contains("file.c:3:9"), "{colored}");
        let global = source::render_diagnostics(&sources, &[Diagnostic::global_error("no input")], false);
        assert_eq!(global.trim_end(), "error: no input");
    }

    #[test]
    fn rendered_directive_error_in_full() {
        let file = PathBuf::from("tests/front/clause_not_allowed.c");
        let Err((sources, diags)) = parse_program(&[file], &PreprocessOptions::default()) else { panic!() };
        let text = source::render_diagnostics(&sources, &diags.0, false);
        let expected = "error: `collapse` is not allowed on `data`\n  \u{250c}\u{2500} tests/front/clause_not_allowed.c:4:31\n  \u{2502}\n4 \u{2502} #pragma acc data copy(a[0:n]) collapse(2)\n  \u{2502}                               ^^^^^^^^^^^\n  \u{2502}\n  = help: `data` accepts: if, async, wait, device_type, default, copy, copyin, copyout, create, no_create, present, deviceptr, attach\n\n";
        assert_eq!(text, expected, "\n{text}");
    }

    #[test]
    fn unknown_pragmas_are_warnings_and_cpp_errors_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(&dir, "w.c", "#pragma weird things\nint x;\n");
        let parsed = parse_program(&[file], &PreprocessOptions::default()).unwrap_or_else(|_| panic!());
        assert_eq!(parsed.warnings.len(), 1);
        let text = source::render_diagnostics(&parsed.sources, &parsed.warnings, false);
        assert!(text.contains("warning: ignored pragma") && text.contains("w.c:1:1"), "{text}");
        let bad = write(&dir, "e.c", "#error stop here\n");
        let Err((_, diags)) = parse_program(&[bad], &PreprocessOptions::default()) else { panic!() };
        assert!(diags.0[0].message.contains("stop here"));
    }

    /// A generated ~5,000-line program: many functions with loops and pragmas.
    pub(crate) fn generated_program(functions: usize) -> String {
        let mut s = String::from("#include <stdio.h>\n#include <stdlib.h>\ntypedef struct { int n; double *v; } Vec;\n");
        for i in 0..functions {
            s.push_str(&format!(
                "static double kernel_{i}(int n, double *restrict a, const double *restrict b, Vec *w) {{\n\
                 \x20   double sum = 0.0;\n\
                 #pragma acc data copyin(b[0:n]) copy(a[0:n])\n\
                 \x20   {{\n\
                 #pragma acc parallel loop gang vector reduction(+:sum) present(a[0:n], b[0:n])\n\
                 \x20       for (int i = 0; i < n; i++) {{\n\
                 \x20           a[i] = a[i] * 2.0 + b[i] / (double)(i + {i});\n\
                 \x20           sum += a[i] > 0 ? a[i] : -a[i];\n\
                 \x20       }}\n\
                 #pragma acc parallel loop collapse(2)\n\
                 \x20       for (int j = 0; j < n; j++)\n\
                 \x20           for (int k = 0; k < 4; k++)\n\
                 \x20               a[j] += k * w->v[k % w->n];\n\
                 \x20   }}\n\
                 \x20   if (sum > 1e9) {{ printf(\"big %d\\n\", {i}); }}\n\
                 \x20   return sum;\n\
                 }}\n\n"
            ));
        }
        s.push_str("int main(void) { return 0; }\n");
        s
    }

    #[test]
    fn large_generated_program_parses() {
        let dir = tempfile::tempdir().unwrap();
        let src = generated_program(280);
        assert!(src.lines().count() > 5000);
        let file = write(&dir, "big.c", &src);
        let parsed = parse_program(&[file], &PreprocessOptions::default()).unwrap_or_else(|_| panic!());
        // The typedef, 280 functions and main; header declarations are skipped.
        assert_eq!(parsed.units[0].items.len(), 282);
    }
}
