//! Host OpenMP beside OpenACC, as gcc builds it: with `-fopenmp` the host code is compiled and
//! linked with `-fopenmp` and its `#pragma omp` directives run on the host's threads (the host
//! back end keeps them in place, `back::host_c::openmp`); OpenMP inside a compute construct is
//! ignored (the parser warns). Without `-fopenmp` the directives stay inactive, as gcc compiles
//! them, and a program that calls OpenMP's API (`omp_get_wtime` for its timer, as programs
//! written for nvc do: nvc provides the API without `-mp`) or includes `<omp.h>` is linked with
//! libgomp so that the calls resolve. This module decides which, and says so once.

use crate::diag::{Diagnostic, Span};
use crate::front::ast::{ExprKind, TranslationUnit};
use crate::front::linkage::Definitions;
use crate::ir::Module;
use crate::source::SourceSet;

/// What the host build does for OpenMP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenMpUse {
    /// `-fopenmp` was given: the host code is compiled and linked with it.
    pub enabled: bool,
    /// Without `-fopenmp`, the program calls OpenMP's API or includes `<omp.h>`: linked with
    /// libgomp (`-lgomp`), its directives inactive.
    pub links_libgomp: bool,
}

impl OpenMpUse {
    /// What the system compiler gets to compile the host code.
    pub fn compile_flags(self) -> &'static [&'static str] {
        if self.enabled { &["-fopenmp"] } else { &[] }
    }

    /// What it gets to link it.
    pub fn link_flags(self) -> &'static [&'static str] {
        if self.enabled {
            &["-fopenmp"]
        } else if self.links_libgomp {
            &["-lgomp"]
        } else {
            &[]
        }
    }
}

/// The first call of an OpenMP API function (`omp_...`) that the program does not define itself
/// (a program may define its own `omp_get_wtime` for builds without OpenMP).
fn first_api_call(units: &[TranslationUnit], definitions: &Definitions) -> Option<(String, Span)> {
    for unit in units {
        let mut found = None;
        crate::back::host_c::visit_unit_exprs(unit, &mut |e| {
            if found.is_none()
                && let ExprKind::Call { callee, .. } = &e.kind
                && let ExprKind::Ident(name) = &callee.kind
                && name.starts_with("omp_")
                && definitions.resolve(name, e.span.tu).is_none()
            {
                found = Some((name.clone(), callee.span));
            }
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Whether a unit's text came through OpenMP's header (cpp's line markers name `omp.h`).
fn includes_omp_header(sources: &SourceSet, unit: &TranslationUnit) -> bool {
    let Some(source) = sources.units.get(unit.tu as usize) else { return false };
    source.text.lines().filter(|l| l.starts_with('#')).filter_map(crate::source::parse_line_marker).any(|m| m.file.file_name().is_some_and(|f| f == "omp.h"))
}

/// How the host side is built for OpenMP, and the diagnostics that say so: with `-fopenmp`, a
/// warning for each OpenMP construct that launches compute regions (it runs on one thread);
/// without, one note when the program uses OpenMP's API (naming the first call), else one
/// warning when it has `#pragma omp` directives, which stay ignored.
pub fn examine(sources: &SourceSet, units: &[TranslationUnit], module: &Module, enabled: bool) -> (OpenMpUse, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    if enabled {
        for span in crate::back::host_c::openmp_constructs_that_launch(sources, units, module) {
            diags.push(
                Diagnostic::warning(span, "this OpenMP construct's threads would launch compute regions")
                    .with_label("it runs on one thread")
                    .with_help("Yosegi runs the regions' loops on the device itself (and over several GPUs where that pays); its `#pragma omp` lines are left out of the host code"),
            );
        }
        return (OpenMpUse { enabled, links_libgomp: false }, diags);
    }
    let definitions = Definitions::new(units);
    let pragmas: Vec<Span> = units.iter().flat_map(|u| u.openmp_pragmas.iter().copied()).collect();
    let call = first_api_call(units, &definitions);
    let header = units.iter().any(|u| includes_omp_header(sources, u));
    let directives = match pragmas.len() {
        0 => String::new(),
        1 => ", and its `#pragma omp` directive stays ignored without -fopenmp".to_string(),
        n => format!(", and its {n} `#pragma omp` directives stay ignored without -fopenmp"),
    };
    let help = "give -fopenmp to compile the host code with OpenMP, as gcc -fopenmp does (its directives then run on the host's threads)";
    let links_libgomp = call.is_some() || header;
    match (call, header) {
        (Some((name, span)), _) => diags.push(
            Diagnostic::note(span, format!("the program calls OpenMP's `{name}`: it is linked with libgomp{directives}"))
                .with_label("OpenMP's API, from libgomp")
                .with_help(help),
        ),
        (None, true) => diags.push(Diagnostic::global_note(format!("the program includes OpenMP's <omp.h>: it is linked with libgomp{directives}")).with_help(help)),
        (None, false) => {
            if let Some(&first) = pragmas.first() {
                let count = if pragmas.len() > 1 { format!(" (and the program's {} others)", pragmas.len() - 1) } else { String::new() };
                diags.push(
                    Diagnostic::warning(first, "ignored pragma")
                        .with_label(format!("`#pragma omp` is ignored without -fopenmp{count}"))
                        .with_help(help),
                );
            }
        }
    }
    (OpenMpUse { enabled, links_libgomp }, diags)
}
