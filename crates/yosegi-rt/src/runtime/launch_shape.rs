//! The block shape a launch runs with on the device at hand.
//!
//! The mapping pass gives each grid kernel a fixed block (256 threads, 32x8, 32x4x2) and a grid
//! of `ceil(trip / block)` blocks per axis. A loop nest of a few thousand iterations then makes
//! fewer blocks than the GPU has multiprocessors: BT's line solves at class B launch 52 blocks of
//! 32x8 threads on an H100's 132 multiprocessors, EP's batch 8 blocks of 256. Each thread there
//! runs a long sequential loop, so the launch is bound by latency, and the idle multiprocessors'
//! load units and caches are what it lacks (ncu, bench/NOTES.md run 12: "waves per SM 0.13").
//!
//! Such a launch is spread: the outermost axis whose block is more than one thread deep has its
//! block halved and its grid doubled, until the grid has at least one block per multiprocessor
//! or the block is one warp (32 threads along `x`, which keeps neighbouring threads on
//! neighbouring elements). Halving a block and doubling its grid covers the same global
//! positions `blockIdx * blockDim + threadIdx`, and the threads past a trip count are guarded
//! as before, so only a kernel whose code does not depend on its block's shape is spread: no
//! shared memory (staged tiles are sized by the block), no reductions (combined per block in a
//! shared tree), no scalar outputs. Plain kernels read `blockDim` at run time.
//!
//! `YOSEGI_MULTIPROCESSORS=N` sets the count launches are spread over: the GPU's own on `cuda`
//! unless set, none on `sim` unless set (the tests set it to run the reshaped launches), and 0
//! turns spreading off.

use crate::ir::{GridKernel, Module};

/// Blocks are never made narrower than one warp along `x`.
const WARP: u32 = 32;

/// Whether the kernel's code is the same whatever its block's shape (a kernel the program
/// wrote per thread, with its own barriers, is written for its launch's block).
pub fn reshapable(module: &Module, kernel: &GridKernel) -> bool {
    kernel.shared.is_empty()
        && kernel.reductions.is_empty()
        && kernel.scalar_outputs.is_empty()
        && module.kernels.get(kernel.source).is_none_or(|k| k.explicit_grid.is_none())
}

/// `YOSEGI_MULTIPROCESSORS` when set to a number, else `default`.
pub fn multiprocessors(default: u32) -> u32 {
    std::env::var("YOSEGI_MULTIPROCESSORS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

/// The block and grid to launch `kernel` with over `multiprocessors`, given the `grid` the
/// mapping's expressions make: the mapping's shape, or the spread one (see the module's
/// documentation). `max_grid` bounds each axis of the grid.
pub fn spread(module: &Module, kernel: &GridKernel, grid: [u64; 3], multiprocessors: u32, max_grid: [u64; 3]) -> ([u32; 3], [u64; 3]) {
    if !reshapable(module, kernel) {
        return (kernel.launch.block, grid);
    }
    spread_shape(kernel.launch.block, grid, multiprocessors, max_grid)
}

fn spread_shape(mut block: [u32; 3], mut grid: [u64; 3], multiprocessors: u32, max_grid: [u64; 3]) -> ([u32; 3], [u64; 3]) {
    let blocks = |g: &[u64; 3]| g.iter().product::<u64>();
    if blocks(&grid) == 0 {
        return (block, grid);
    }
    while blocks(&grid) < multiprocessors as u64 {
        // z, then y, then x down to a warp; an axis whose grid would pass its limit is skipped.
        // Along x the half must still be whole warps.
        let axis = [2, 1, 0].into_iter().find(|&a| {
            let halves = if a == 0 { block[a].is_multiple_of(2 * WARP) } else { block[a].is_multiple_of(2) };
            halves && grid[a] * 2 <= max_grid[a]
        });
        let Some(a) = axis else { break };
        block[a] /= 2;
        grid[a] *= 2;
    }
    (block, grid)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: [u64; 3] = [(1 << 31) - 1, 65535, 65535];

    fn threads(block: [u32; 3], grid: [u64; 3]) -> [u64; 3] {
        [0, 1, 2].map(|a| block[a] as u64 * grid[a])
    }

    #[test]
    fn small_grids_spread_over_the_multiprocessors_covering_the_same_threads() {
        // BT's y_solve at class B: 4 x 13 blocks of 32x8.
        let (block, grid) = spread_shape([32, 8, 1], [4, 13, 1], 132, LIMITS);
        assert_eq!((block, grid), ([32, 2, 1], [4, 52, 1]));
        assert_eq!(threads(block, grid), threads([32, 8, 1], [4, 13, 1]));
        // EP's batch: 8 blocks of 256 become 64 blocks of one warp.
        assert_eq!(spread_shape([256, 1, 1], [8, 1, 1], 132, LIMITS), ([32, 1, 1], [64, 1, 1]));
        // 3-D: z first, then y.
        assert_eq!(spread_shape([32, 4, 2], [1, 2, 3], 24, LIMITS), ([32, 2, 1], [1, 4, 6]));
    }

    #[test]
    fn grids_with_enough_blocks_and_one_thread_launches_keep_their_shape() {
        assert_eq!(spread_shape([32, 8, 1], [20, 10, 1], 132, LIMITS), ([32, 8, 1], [20, 10, 1]));
        assert_eq!(spread_shape([1, 1, 1], [1, 1, 1], 132, LIMITS), ([1, 1, 1], [1, 1, 1]));
        assert_eq!(spread_shape([256, 1, 1], [0, 1, 1], 132, LIMITS), ([256, 1, 1], [0, 1, 1]));
        // Spreading off.
        assert_eq!(spread_shape([256, 1, 1], [2, 1, 1], 0, LIMITS), ([256, 1, 1], [2, 1, 1]));
        // A block of 96 along x would not halve into whole warps, nor 3 along y into threads.
        assert_eq!(spread_shape([96, 3, 1], [1, 1, 1], 132, LIMITS), ([96, 3, 1], [1, 1, 1]));
        // A grid axis at its limit is not doubled.
        assert_eq!(spread_shape([32, 8, 1], [1, 65535, 1], 1 << 20, LIMITS), ([32, 8, 1], [1, 65535, 1]));
    }
}
