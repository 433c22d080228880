//! Lowering: from the syntax tree to the IR. Resolves names and types, turns every OpenACC
//! compute construct into kernels and every data directive into a region, and decides what the
//! host must pass in (params bound to host args).

use crate::diag::{Diagnostic, Diagnostics};
use crate::front::ast::TranslationUnit;
use crate::front::source::SourceSet;
use crate::ir::Module;

/// Lowers all translation units into one module (kernels and regions; no grid kernels yet).
/// Returns the warnings with the module (for example: a `kernels` loop left sequential, and why).
pub fn lower_program(sources: &SourceSet, units: &[TranslationUnit]) -> Result<(Module, Vec<Diagnostic>), Diagnostics> {
    let _ = (sources, units);
    Err(Diagnostic::global_error("lowering not built yet").into())
}
