//! `sim`: the SIMT simulator device. Its memory is its own (one buffer per allocation), the
//! blocks of a launch run in parallel on rayon's threads, and the threads of a block run in
//! lockstep in the interpreter ([`interp`]), which also counts memory transactions, bank
//! conflicts and barriers.
//!
//! A launch that runs longer than `YOSEGI_SIM_TIMEOUT` seconds (the watchdog, off unless set:
//! [`timeout_from_env`]) stops with a kernel fault that says so, where the interpreter was
//! (the innermost loop's condition, else the kernel's region) and how to raise the limit, as
//! a GPU driver's watchdog ends a kernel that never finishes.

pub mod cache;
pub mod interp;
pub mod memory;
pub mod rounds;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::analysis::promotion::promoted_params;
use crate::ir::{ParamKind, ScalarType};
use crate::runtime::device::{Device, DeviceAlloc, DeviceDescription, DeviceParam, KernelFault, Launch, LaunchOutcome};
use crate::runtime::launch_shape;
use crate::runtime::stats::DeviceCounters;
use crate::ir::value;

use interp::{ArrayBinding, BlockState, Fault, LaunchCtx};
use memory::SimBuffer;

pub struct SimDevice {
    buffers: HashMap<u64, Arc<SimBuffer>>,
    /// The simulated device address of each buffer (see [`SIM_ADDRESS_BASE`]).
    addresses: HashMap<u64, u64>,
    next_id: u64,
    next_address: u64,
    /// The device's own range of addresses (see [`SIM_ADDRESS_SPACE`]).
    address_space: std::ops::Range<u64>,
    /// Bytes of the live buffers (`acc_get_property`'s free memory).
    allocated: u64,
    /// What small grids are spread over (`runtime::launch_shape`): `YOSEGI_MULTIPROCESSORS`,
    /// else none.
    multiprocessors: u32,
    /// Between `defer_copies` and `join_copies`: copies from other devices, read from the
    /// source when asked (after its work so far) and written here only at the join, as late
    /// as a GPU may land them, so that a launch that reads them early reads stale bytes and
    /// the tests see it.
    deferred: Option<Vec<(DeviceAlloc, u64, Vec<u8>)>>,
    /// How long a launch may run before it stops with a fault (`YOSEGI_SIM_TIMEOUT`).
    timeout: Option<Duration>,
}

impl Default for SimDevice {
    fn default() -> Self {
        let address_space = sim_address_space(NEXT_SIM_ADDRESS_SPACE.fetch_add(1, Ordering::Relaxed));
        SimDevice {
            buffers: HashMap::new(),
            addresses: HashMap::new(),
            next_id: 0,
            next_address: address_space.start,
            address_space,
            allocated: 0,
            multiprocessors: launch_shape::multiprocessors(0),
            deferred: None,
            // A value that is not a number of seconds was refused when the run started
            // (`timeout_from_env`, called by the drivers).
            timeout: timeout_from_env().ok().flatten(),
        }
    }
}

/// Where the simulator's device addresses start: above every user-space address of a 64-bit
/// host (47 or 48 bits), so that no host pointer is ever mistaken for a device pointer, and a
/// host dereference of one faults as it would on a GPU without unified memory.
pub const SIM_ADDRESS_BASE: u64 = 0x0d00_0000_0000_0000;

/// Each simulator hands out addresses from a range of its own, this many bytes long (4 PiB),
/// so that no two live devices share an address, as on GPUs, whose addresses are unified
/// across devices (a device pointer of one device is never taken for another device's).
pub const SIM_ADDRESS_SPACE: u64 = 1 << 52;

/// How many ranges of [`SIM_ADDRESS_SPACE`] bytes fit above [`SIM_ADDRESS_BASE`]; the
/// simulators of a process take them in turn, and the range after the last is the first
/// again (only the simulators created thousands of devices apart share a range).
const SIM_ADDRESS_SPACES: u64 = (u64::MAX - SIM_ADDRESS_BASE) / SIM_ADDRESS_SPACE;

/// Which range the next simulator of the process takes.
static NEXT_SIM_ADDRESS_SPACE: AtomicU64 = AtomicU64::new(0);

/// The addresses of the `n`th simulator created in the process.
pub fn sim_address_space(n: u64) -> std::ops::Range<u64> {
    let start = SIM_ADDRESS_BASE + (n % SIM_ADDRESS_SPACES) * SIM_ADDRESS_SPACE;
    start..start + SIM_ADDRESS_SPACE
}

/// Device addresses are handed out in units of this many bytes, with one unit of gap after
/// each buffer, so that a pointer one past a buffer's end lies in no other buffer.
const SIM_ADDRESS_ALIGN: u64 = 256;

/// The variable that sets the watchdog of the simulator's launches.
pub const TIMEOUT_VARIABLE: &str = "YOSEGI_SIM_TIMEOUT";

/// `YOSEGI_SIM_TIMEOUT`: how many seconds (a positive number, `0.5` allowed) a launch on the
/// simulator may run before it stops with a fault; `None` when unset or empty (no limit).
/// `Err` says what is wrong with another value.
pub fn timeout_from_env() -> Result<Option<Duration>, String> {
    match std::env::var_os(TIMEOUT_VARIABLE) {
        None => Ok(None),
        Some(text) => parse_timeout(&text.to_string_lossy()),
    }
}

/// [`timeout_from_env`] for the variable's text.
fn parse_timeout(text: &str) -> Result<Option<Duration>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    match text.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() && s < 1e9 => Ok(Some(Duration::from_secs_f64(s))),
        _ => Err(format!(
            "{TIMEOUT_VARIABLE} is `{text}`; it must be a positive number of seconds (`{TIMEOUT_VARIABLE}=60`), or unset for no limit"
        )),
    }
}

/// The fault of a launch the watchdog stopped after `limit`.
fn timed_out(kernel: &crate::ir::GridKernel, limit: Duration, mut fault: Fault) -> KernelFault {
    if fault.span == crate::diag::Span::default() {
        fault.span = kernel.span;
    }
    let seconds = limit.as_secs_f64();
    KernelFault {
        kernel: kernel.name.clone(),
        message: format!(
            "the launch ran longer than the simulator's time limit of {seconds} s ({TIMEOUT_VARIABLE}) and was stopped"
        ),
        span: fault.span,
        help: Some(format!(
            "a loop whose condition never becomes false runs forever; if the kernel is only slow on the simulator, \
             raise the limit ({TIMEOUT_VARIABLE}=SECONDS) or unset {TIMEOUT_VARIABLE} for none"
        )),
    }
}

/// The memory the simulator says it has (`acc_property_memory`): a nominal 16 GiB.
pub const SIM_MEMORY_BYTES: u64 = 16 << 30;

impl SimDevice {
    pub fn new() -> SimDevice {
        SimDevice::default()
    }

    fn buffer(&self, alloc: DeviceAlloc) -> &Arc<SimBuffer> {
        self.buffers.get(&alloc.0).expect("the runtime only uses live device allocations")
    }
}

/// The largest grid the simulator accepts (a bad grid size is a compiler or input bug; this
/// keeps it from exhausting memory with partials buffers).
const MAX_BLOCKS: u64 = 1 << 31;

impl Device for SimDevice {
    fn name(&self) -> &str {
        "sim"
    }

    fn allocate(&mut self, bytes: u64) -> DeviceAlloc {
        self.next_id += 1;
        self.buffers.insert(self.next_id, Arc::new(SimBuffer::new(bytes as usize)));
        // Addresses are not reused (until the device has handed out its whole range, 4 PiB):
        // a stale device pointer of the program never finds a later buffer.
        let span = bytes.div_ceil(SIM_ADDRESS_ALIGN).max(1) * SIM_ADDRESS_ALIGN + SIM_ADDRESS_ALIGN;
        if self.address_space.end - self.next_address < span {
            self.next_address = self.address_space.start;
        }
        self.addresses.insert(self.next_id, self.next_address);
        self.next_address += span;
        self.allocated += bytes;
        DeviceAlloc(self.next_id)
    }

    fn free(&mut self, alloc: DeviceAlloc) {
        if let Some(buffer) = self.buffers.remove(&alloc.0) {
            self.allocated -= buffer.len() as u64;
        }
        self.addresses.remove(&alloc.0);
    }

    fn address(&self, alloc: DeviceAlloc) -> u64 {
        self.addresses.get(&alloc.0).copied().unwrap_or(0)
    }

    fn memory(&mut self) -> (u64, u64) {
        (SIM_MEMORY_BYTES, SIM_MEMORY_BYTES.saturating_sub(self.allocated))
    }

    fn multiprocessors(&self) -> u32 {
        self.multiprocessors
    }

    fn description(&self) -> DeviceDescription {
        DeviceDescription {
            name: "Yosegi SIMT simulator".to_string(),
            vendor: "Yosegi".to_string(),
            driver: format!("yosegi {}", env!("CARGO_PKG_VERSION")),
        }
    }

    fn copy_within(&mut self, dst: DeviceAlloc, dst_offset: u64, src: DeviceAlloc, src_offset: u64, len: u64) {
        let mut bounce = vec![0u8; len as usize];
        self.buffer(src).read_bytes(src_offset as usize, &mut bounce);
        self.buffer(dst).write_bytes(dst_offset as usize, &bounce);
    }

    fn copy_to_device(&mut self, alloc: DeviceAlloc, offset: u64, src: &[u8]) {
        self.buffer(alloc).write_bytes(offset as usize, src);
    }

    fn copy_to_host(&mut self, alloc: DeviceAlloc, offset: u64, dst: &mut [u8]) {
        // A read waits for the deferred copies into what it reads, as on a GPU (the host waits
        // for the device; a copy to another device waits for this one's copies).
        if let Some(pending) = self.deferred.as_mut() {
            let end = offset + dst.len() as u64;
            let (landing, waiting): (Vec<_>, Vec<_>) = std::mem::take(pending)
                .into_iter()
                .partition(|(to, at, bytes)| *to == alloc && *at < end && offset < at + bytes.len() as u64);
            *pending = waiting;
            for (to, at, bytes) in landing {
                self.copy_to_device(to, at, &bytes);
            }
        }
        self.buffer(alloc).read_bytes(offset as usize, dst);
    }

    fn copy_from_peer(&mut self, dst: DeviceAlloc, dst_offset: u64, src: &mut dyn Device, src_alloc: DeviceAlloc, src_offset: u64, len: u64) {
        let mut bytes = vec![0u8; len as usize];
        src.copy_to_host(src_alloc, src_offset, &mut bytes);
        match self.deferred.as_mut() {
            Some(pending) => pending.push((dst, dst_offset, bytes)),
            None => self.copy_to_device(dst, dst_offset, &bytes),
        }
    }

    fn defer_copies(&mut self) {
        self.deferred.get_or_insert_with(Vec::new);
    }

    fn join_copies(&mut self) -> Option<usize> {
        for (dst, offset, bytes) in self.deferred.take().unwrap_or_default() {
            self.copy_to_device(dst, offset, &bytes);
        }
        None
    }

    fn launch(&mut self, launch: &Launch) -> Result<LaunchOutcome, KernelFault> {
        let kernel = launch.kernel;
        let with_name =
            |f: Fault| KernelFault { kernel: kernel.name.clone(), message: f.message, span: f.span, help: f.help };
        // A row table holds device addresses, and a kernel may compute some: it finds their
        // buffers by address.
        let mut memory = Vec::new();
        if kernel.params.iter().any(|p| matches!(p.kind, ParamKind::RowTable { .. })) || launch.module.reaches_addresses(&kernel.body) {
            memory = self.buffers.iter().map(|(id, b)| (self.addresses[id], b.clone())).collect();
            memory.sort_by_key(|(address, _)| *address);
        }
        let buffers = &self.buffers;
        let (mut ctx, blocks) =
            launch_context(launch, &|alloc| buffers.get(&alloc.0).cloned(), memory, self.multiprocessors).map_err(with_name)?;
        if blocks > MAX_BLOCKS {
            return Err(with_name(Fault {
                message: format!("grid of {blocks} blocks is larger than the simulator accepts"),
                span: kernel.span,
                help: None,
            }));
        }
        let block = ctx.block_dim;
        let threads: u64 = block.iter().map(|&b| b as u64).product();
        let (count, partials) = partial_buffers(kernel, blocks, threads);
        ctx.partials = partials;
        if blocks == 0 || block.iter().product::<u32>() == 0 {
            return Ok(LaunchOutcome {
                partials: vec![Vec::new(); kernel.reductions.len()],
                scalar_outputs: Vec::new(),
                counters: DeviceCounters::default(),
            });
        }
        let ctx = &ctx;
        let deadline = self.timeout.map(|t| Instant::now() + t);
        // Blocks are folded as they finish (no per-block result list, so grids of millions of
        // blocks need no memory for it); of several faulting blocks the lowest-numbered one is
        // reported, so the message does not depend on scheduling.
        let folded = (0..blocks)
            .into_par_iter()
            .map_init(
                || BlockState::new(ctx).with_deadline(deadline),
                |state, b| match state.run_block(b) {
                    Ok(r) => BlockFold { counters: r.counters, scalar_outputs: r.scalar_outputs, fault: None },
                    Err(f) => BlockFold { fault: Some((b, f)), ..BlockFold::default() },
                },
            )
            .reduce(BlockFold::default, BlockFold::combine);
        if let Some((_, fault)) = folded.fault {
            return Err(match self.timeout {
                Some(limit) if fault.message == interp::DEADLINE_PASSED => timed_out(kernel, limit, fault),
                _ => with_name(fault),
            });
        }
        let (mut counters, scalar_outputs) = (folded.counters, folded.scalar_outputs);
        counters.blocks = blocks;
        let partials = kernel
            .reductions
            .iter()
            .zip(&ctx.partials)
            .map(|(red, buffer)| {
                let size = red.ty.size_bytes();
                (0..count).map(|b| value::from_memory(red.ty, buffer.load((b * size as u64) as usize, size))).collect()
            })
            .collect();
        Ok(LaunchOutcome { partials, scalar_outputs, counters })
    }
}

/// The interpreter's context of `launch`: its params bound (array params to the buffers
/// `buffer_of` finds for their allocations), array dims and grid size evaluated, the grid
/// spread over `multiprocessors` as the devices spread it (`runtime::launch_shape`); with the
/// number of blocks. Reduction partials are left for the caller to allocate.
pub fn launch_context<'a>(
    launch: &Launch<'a>,
    buffer_of: &dyn Fn(DeviceAlloc) -> Option<Arc<SimBuffer>>,
    memory: Vec<(u64, Arc<SimBuffer>)>,
    multiprocessors: u32,
) -> Result<(LaunchCtx<'a>, u64), Fault> {
    let kernel = launch.kernel;
    let mut scalars = vec![0u64; kernel.params.len()];
    let mut arrays: Vec<Option<ArrayBinding>> = (0..kernel.params.len()).map(|_| None).collect();
    let unbound = |name: &str| Fault { message: format!("parameter `{name}` was bound to the wrong kind of value"), span: kernel.span, help: None };
    for (i, (param, bound)) in kernel.params.iter().zip(&launch.params).enumerate() {
        match (&param.kind, bound) {
            (ParamKind::Scalar(ty), DeviceParam::Value(v)) => scalars[i] = value::from_param(*ty, *v),
            (ParamKind::Array { elem, dims, .. }, DeviceParam::Array { alloc, offset }) => {
                arrays[i] = Some(ArrayBinding {
                    buffer: buffer_of(*alloc).ok_or_else(|| unbound(&param.name))?,
                    offset: *offset,
                    elem: *elem,
                    dims: vec![0; dims.len()],
                    name: param.name.clone(),
                    row_table: false,
                });
            }
            (ParamKind::RowTable { elem, .. }, DeviceParam::Array { alloc, offset }) => {
                arrays[i] = Some(ArrayBinding {
                    buffer: buffer_of(*alloc).ok_or_else(|| unbound(&param.name))?,
                    offset: *offset,
                    elem: *elem,
                    dims: Vec::new(),
                    name: param.name.clone(),
                    row_table: true,
                });
            }
            _ => return Err(unbound(&param.name)),
        }
    }
    let mut ctx = LaunchCtx {
        module: launch.module,
        kernel,
        scalars,
        arrays,
        memory,
        partials: Vec::new(),
        block_dim: kernel.launch.block,
        grid_dim: [1, 1, 1],
        promoted: promoted_params(kernel, &launch.restrict_params()),
    };
    // Launch-time uniform values: array dimensions and the grid size.
    let (dims, grid) = {
        let mut uniform = BlockState::uniform(&ctx);
        let mut dims = Vec::new();
        for param in &kernel.params {
            let mut d = Vec::new();
            if let ParamKind::Array { dims: exprs, .. } = &param.kind {
                for e in exprs {
                    d.push(match e {
                        Some(e) => uniform.eval_uniform(*e)? as i64,
                        None => 0,
                    });
                }
            }
            dims.push(d);
        }
        let mut grid = [1u64; 3];
        for (axis, &e) in kernel.launch.grid.iter().enumerate() {
            let raw = uniform.eval_uniform(e)?;
            let ty = kernel.body.exprs[e].ty;
            grid[axis] = value::cast(ty, ScalarType::I64, raw) as u64;
        }
        (dims, grid)
    };
    for (binding, d) in ctx.arrays.iter_mut().zip(dims) {
        if let Some(b) = binding {
            b.dims = d;
        }
    }
    let (block, grid) = launch_shape::spread(launch.module, kernel, grid, multiprocessors, [MAX_BLOCKS; 3]);
    ctx.block_dim = block;
    ctx.grid_dim = grid;
    Ok((ctx, grid[0] * grid[1] * grid[2]))
}

/// Reduction partial buffers for a launch of `blocks` blocks of `threads` threads: one value
/// per block, or per thread of a one-block launch (see `opt::mapping`).
fn partial_buffers(kernel: &crate::ir::GridKernel, blocks: u64, threads: u64) -> (u64, Vec<Arc<SimBuffer>>) {
    let count = if blocks == 1 { threads } else { blocks };
    let buffers = kernel.reductions.iter().map(|r| Arc::new(SimBuffer::new((count * r.ty.size_bytes() as u64) as usize))).collect();
    (count, buffers)
}

/// The counters of the blocks `sample` of the launch `ctx` (already given its partial
/// buffers), run one after the other on the calling thread, each stopped after `budget`
/// statements (the fault `interp::BUDGET_SPENT`), all of them stopped once the host's clock
/// passes `deadline` (`interp::DEADLINE_PASSED`), and each against an L1 cache of `l1_bytes`.
pub fn count_blocks(ctx: &LaunchCtx, sample: &[u64], budget: u64, l1_bytes: u64, deadline: Option<std::time::Instant>) -> Result<DeviceCounters, Fault> {
    let mut state = BlockState::with_budget(ctx, budget, l1_bytes, deadline);
    let mut counters = DeviceCounters::default();
    for &b in sample {
        counters.add(&state.run_block(b)?.counters);
    }
    counters.blocks = sample.len() as u64;
    Ok(counters)
}

/// Gives `ctx` the reduction partial buffers a launch of its shape needs.
pub fn give_partials(ctx: &mut LaunchCtx, blocks: u64) {
    let threads: u64 = ctx.block_dim.iter().map(|&b| b as u64).product();
    ctx.partials = partial_buffers(ctx.kernel, blocks, threads).1;
}

/// What the blocks of a launch add up to.
#[derive(Default)]
struct BlockFold {
    counters: DeviceCounters,
    /// Block 0's (the only block that reports them).
    scalar_outputs: Vec<u64>,
    fault: Option<(u64, Fault)>,
}

impl BlockFold {
    fn combine(mut self, other: BlockFold) -> BlockFold {
        self.counters.add(&other.counters);
        if self.scalar_outputs.is_empty() {
            self.scalar_outputs = other.scalar_outputs;
        }
        self.fault = match (self.fault, other.fault) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        };
        self
    }
}

#[cfg(test)]
mod tests;
