//! Passes that turn kernels into grid kernels and rewrite grid kernels. Each is a plain function
//! called in a fixed order by [`run_passes`]; the verifier runs between them.

pub mod fold;
pub mod mapping;

use crate::ir::{Handle, Module};

/// Options for the pass pipeline.
#[derive(Clone, Debug)]
pub struct PassConfig {
    /// Threads per block for one-dimensional spaces (two- and three-dimensional spaces get
    /// 32x8 and 32x4x2 unless the directives give sizes).
    pub block_threads: u32,
}

impl Default for PassConfig {
    fn default() -> Self {
        PassConfig { block_threads: 256 }
    }
}

/// Folds constants, maps every kernel of the module that has no grid kernel yet to a grid
/// kernel, folds the new grid kernels' constants, running the verifier between passes. An `Err` is a compiler bug (the verifier's message), not a user error: the driver
/// reports it as an internal error.
pub fn run_passes(module: &mut Module, config: &PassConfig) -> Result<(), String> {
    crate::valid::verify_module(module).map_err(|e| format!("before folding: {e}"))?;
    fold::fold_module(module);
    crate::valid::verify_module(module).map_err(|e| format!("before mapping: {e}"))?;
    let unmapped: Vec<Handle<crate::ir::Kernel>> =
        module.kernels.iter().map(|(h, _)| h).filter(|h| module.grid_of(*h).is_none()).collect();
    for kernel in unmapped {
        let grid = mapping::map_kernel(module, kernel, config);
        module.grid_kernels.append(grid);
    }
    crate::valid::verify_module(module).map_err(|e| format!("after mapping: {e}"))?;
    fold::fold_module(module);
    crate::valid::verify_module(module).map_err(|e| format!("after folding: {e}"))
}
