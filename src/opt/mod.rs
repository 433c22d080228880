//! Passes that turn kernels into grid kernels and rewrite grid kernels. Each is a plain function
//! called in a fixed order by [`run_passes`]; the verifier runs between them.

pub mod mapping;

use crate::ir::Module;

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

/// Maps every kernel of the module to a grid kernel.
pub fn run_passes(module: &mut Module, config: &PassConfig) {
    let _ = (module, config);
}
