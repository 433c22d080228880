//! What a launch does, counted by running a few of its blocks in the simulator's interpreter
//! over read-only views of the program's host arrays (`SimBuffer::host_view`: stores are
//! dropped) and scaling the counts to the whole grid. The counting rules are the
//! simulator's, so on regular kernels the estimate equals what the simulator counts over
//! every block; blocks unlike the sampled ones (a boundary block that does less) make it an
//! estimate. Values loaded from the host's copy steer data-dependent loops (a sparse row's
//! length) as the device's copy would, where the two agree.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::runtime::device::{DeviceAlloc, Launch};
use super::machine::Machine;
use crate::runtime::sim::cache::block_share;
use crate::runtime::sim::interp::Fault;
use crate::runtime::sim::memory::SimBuffer;
use crate::runtime::sim::{count_blocks, give_partials, launch_context};
use crate::runtime::stats::DeviceCounters;

/// Blocks run per launch: spread over the grid, at the middle of each of this many stretches.
pub const SAMPLED_BLOCKS: u64 = 4;

/// Statements one sampled block may execute (each over the block's lanes) before the model
/// gives up on counting the launch: a block that long would cost the host more than the
/// prediction is worth.
pub const STATEMENT_BUDGET: u64 = 200_000;

/// How long one launch's sample may take, its blocks together, before the model gives up on
/// it (`YOSEGI_MODEL_SAMPLE_MS` sets another): the statement budget bounds a block's work,
/// not its time, and a block of long dependent chains over many lanes (NPB EP's, 128 threads
/// each drawing random numbers) took most of a second within it.
pub const SAMPLE_DEADLINE: Duration = Duration::from_millis(20);

/// The counts of a whole launch, and its shape as the device runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampled {
    pub counters: DeviceCounters,
    pub blocks: u64,
    pub block: [u32; 3],
}

/// The blocks run for a grid of `blocks`.
pub fn sample_of(blocks: u64) -> Vec<u64> {
    if blocks <= SAMPLED_BLOCKS {
        return (0..blocks).collect();
    }
    (0..SAMPLED_BLOCKS).map(|k| (2 * k + 1) * blocks / (2 * SAMPLED_BLOCKS)).collect()
}

/// Counts `launch` from sampled blocks, its array params read through `buffer_of` (host views),
/// its grid spread over `multiprocessors` as the device spreads it, each block against its
/// share of the L1 cache of `machine`'s multiprocessors; stopped with the fault
/// `interp::DEADLINE_PASSED` once the host's clock passes `deadline`.
pub fn sample_launch(
    launch: &Launch,
    buffer_of: &dyn Fn(DeviceAlloc) -> Option<Arc<SimBuffer>>,
    multiprocessors: u32,
    machine: &Machine,
    deadline: Option<Instant>,
) -> Result<Sampled, Fault> {
    let (mut ctx, blocks) = launch_context(launch, buffer_of, Vec::new(), multiprocessors)?;
    let block = ctx.block_dim;
    if blocks == 0 || block.iter().product::<u32>() == 0 {
        return Ok(Sampled { counters: DeviceCounters::default(), blocks: 0, block });
    }
    give_partials(&mut ctx, blocks);
    let sample = sample_of(blocks);
    let threads = block.iter().map(|&b| b as u64).product();
    let l1_bytes = block_share(
        machine.l1_bytes(),
        machine.max_threads_per_multiprocessor,
        machine.multiprocessors,
        blocks,
        threads,
        launch.kernel.shared_memory_bytes(),
    );
    let counted = count_blocks(&ctx, &sample, STATEMENT_BUDGET, l1_bytes, deadline)?;
    Ok(Sampled { counters: counted.scaled(sample.len() as u64, blocks), blocks, block })
}
