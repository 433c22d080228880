//! Passes that turn kernels into grid kernels and rewrite grid kernels. Each is a plain function
//! called in a fixed order by [`run_passes`]; the verifier runs between them.

pub mod fold;
pub mod fusion;
pub mod mapping;
pub mod padding;
pub mod partition;
pub mod staging;

use crate::ir::{Handle, Module};
pub use fusion::FusionMode;

/// Whether kernels get shared-memory staged variants, and how the runtime picks among them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum StagingMode {
    /// Only the plain global-memory variant is made (`--no-staging`).
    Off,
    /// Staged variants are made where the cost model expects a gain; the runtime times the
    /// candidates on the GPU and keeps the fastest (on the simulator it trusts the estimate).
    #[default]
    Auto,
    /// Every group that fits is staged, profitable or not, and the runtime always launches the
    /// staged variant where there is one (for testing the transformation).
    Force,
}

/// Options for the pass pipeline.
#[derive(Clone, Debug)]
pub struct PassConfig {
    /// Threads per block for one-dimensional spaces, unless the directives give a size.
    pub block_threads: u32,
    /// Block shape (x, y) for two-dimensional spaces.
    pub block_2d: [u32; 2],
    /// Block shape (x, y, z) for spaces of three or more dimensions.
    pub block_3d: [u32; 3],
    pub staging: StagingMode,
    /// Shared memory a block may use for staged tiles (see [`staging::SharedMemoryBudget`]).
    pub shared: staging::SharedMemoryBudget,
    /// Points each thread computes along `x` in the second staged variant the staging pass
    /// offers (thread coarsening: the tile's halo and barrier are shared by that many more
    /// points); 1 offers only the one-point-per-thread staged variant.
    pub staged_points_per_thread: u32,
    /// Points each thread computes along `z` in the streaming staged variant of a 3-D stencil
    /// (a ring of planes that slides along `z`, see [`staging::CoarsenedTile::SlidingRing`]);
    /// 1 offers no streaming variant.
    pub streamed_points_per_thread: u32,
    /// Whether chains of kernels of a region are fused (`fusion`).
    pub fusion: FusionMode,
}

impl Default for PassConfig {
    fn default() -> Self {
        PassConfig { block_threads: 256, block_2d: [32, 8], block_3d: [32, 4, 2], staging: StagingMode::Auto, shared: staging::SharedMemoryBudget::default(), staged_points_per_thread: 4, streamed_points_per_thread: 8, fusion: FusionMode::Auto }
    }
}

/// Gives kernels their partition params (`partition`, for several devices), folds constants, maps every kernel of the module that has no grid kernel yet to a grid
/// kernel, folds the new grid kernels' constants, adds shared-memory staged variants
/// (`staging`, per `config.staging`), pads their tiles (`padding`) and fuses chains of kernels
/// (`fusion`, per `config.fusion`), running the verifier
/// between passes. An `Err` is a compiler bug (the verifier's message), not a user error: the
/// driver reports it as an internal error.
pub fn run_passes(module: &mut Module, config: &PassConfig) -> Result<(), String> {
    crate::valid::verify_module(module).map_err(|e| format!("before partitioning: {e}"))?;
    partition::partition_module(module);
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
    crate::valid::verify_module(module).map_err(|e| format!("after folding: {e}"))?;
    staging::stage_module(module, config);
    crate::valid::verify_module(module).map_err(|e| format!("after staging: {e}"))?;
    padding::pad_module(module, config);
    crate::valid::verify_module(module).map_err(|e| format!("after padding: {e}"))?;
    fusion::fuse_module(module, config);
    crate::valid::verify_module(module).map_err(|e| format!("after fusion: {e}"))?;
    // The fused kernels' coordinates are built from the members' bounds and offsets as they
    // come (`lo - 0`, `t / 1`): folded like every other grid kernel's.
    fold::fold_module(module);
    crate::valid::verify_module(module).map_err(|e| format!("after folding the fused kernels: {e}"))
}
