//! `sim`: the SIMT simulator device. Its memory is its own (one buffer per allocation), the
//! blocks of a launch run in parallel on rayon's threads, and the threads of a block run in
//! lockstep in the interpreter ([`interp`]), which also counts memory transactions, bank
//! conflicts and barriers.

pub mod interp;
pub mod memory;

use std::collections::HashMap;
use std::sync::Arc;

use rayon::prelude::*;

use crate::ir::{ParamKind, ScalarType};
use crate::runtime::device::{Device, DeviceAlloc, DeviceParam, KernelFault, Launch, LaunchOutcome};
use crate::runtime::stats::DeviceCounters;
use crate::runtime::value;

use interp::{ArrayBinding, BlockState, Fault, LaunchCtx};
use memory::SimBuffer;

#[derive(Default)]
pub struct SimDevice {
    buffers: HashMap<u64, Arc<SimBuffer>>,
    next_id: u64,
}

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
        DeviceAlloc(self.next_id)
    }

    fn free(&mut self, alloc: DeviceAlloc) {
        self.buffers.remove(&alloc.0);
    }

    fn copy_to_device(&mut self, alloc: DeviceAlloc, offset: u64, src: &[u8]) {
        self.buffer(alloc).write_bytes(offset as usize, src);
    }

    fn copy_to_host(&mut self, alloc: DeviceAlloc, offset: u64, dst: &mut [u8]) {
        self.buffer(alloc).read_bytes(offset as usize, dst);
    }

    fn launch(&mut self, launch: &Launch) -> Result<LaunchOutcome, KernelFault> {
        let kernel = launch.kernel;
        let with_name = |f: Fault| KernelFault { kernel: kernel.name.clone(), message: f.message, span: f.span, help: f.help };
        let mut scalars = vec![0u64; kernel.params.len()];
        let mut arrays: Vec<Option<ArrayBinding>> = (0..kernel.params.len()).map(|_| None).collect();
        for (i, (param, bound)) in kernel.params.iter().zip(&launch.params).enumerate() {
            match (&param.kind, bound) {
                (ParamKind::Scalar(ty), DeviceParam::Value(v)) => scalars[i] = value::from_param(*ty, *v),
                (ParamKind::Array { elem, dims, .. }, DeviceParam::Array { alloc, offset }) => {
                    arrays[i] = Some(ArrayBinding {
                        buffer: self.buffer(*alloc).clone(),
                        offset: *offset,
                        elem: *elem,
                        dims: vec![0; dims.len()],
                        name: param.name.clone(),
                    });
                }
                _ => {
                    return Err(with_name(Fault {
                        message: format!("parameter `{}` was bound to the wrong kind of value", param.name),
                        span: kernel.span,
                        help: None,
                    }));
                }
            }
        }
        let mut ctx = LaunchCtx {
            module: launch.module,
            kernel,
            scalars,
            arrays,
            partials: Vec::new(),
            block_dim: kernel.launch.block,
            grid_dim: [1, 1, 1],
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
                            Some(e) => uniform.eval_uniform(*e).map_err(with_name)? as i64,
                            None => 0,
                        });
                    }
                }
                dims.push(d);
            }
            let mut grid = [1u64; 3];
            for (axis, &e) in kernel.launch.grid.iter().enumerate() {
                let raw = uniform.eval_uniform(e).map_err(with_name)?;
                let ty = kernel.body.exprs[e].ty;
                grid[axis] = value::cast(ty, ScalarType::I64, raw).max(0) as u64;
            }
            (dims, grid)
        };
        for (binding, d) in ctx.arrays.iter_mut().zip(dims) {
            if let Some(b) = binding {
                b.dims = d;
            }
        }
        let blocks = grid[0] * grid[1] * grid[2];
        if blocks > MAX_BLOCKS {
            return Err(with_name(Fault {
                message: format!("grid of {blocks} blocks is larger than the simulator accepts"),
                span: kernel.span,
                help: None,
            }));
        }
        ctx.grid_dim = grid;
        ctx.partials =
            kernel.reductions.iter().map(|r| Arc::new(SimBuffer::new((blocks * r.ty.size_bytes() as u64) as usize))).collect();
        if blocks == 0 || kernel.launch.block.iter().product::<u32>() == 0 {
            return Ok(LaunchOutcome {
                partials: vec![Vec::new(); kernel.reductions.len()],
                scalar_outputs: Vec::new(),
                counters: DeviceCounters::default(),
            });
        }
        let ctx = &ctx;
        let results: Vec<_> = (0..blocks)
            .into_par_iter()
            .map_init(|| BlockState::new(ctx), |state, b| state.run_block(b))
            .collect();
        let mut counters = DeviceCounters::default();
        let mut scalar_outputs = Vec::new();
        for (b, r) in results.into_iter().enumerate() {
            let r = r.map_err(with_name)?;
            counters.add(&r.counters);
            if b == 0 {
                scalar_outputs = r.scalar_outputs;
            }
        }
        let partials = kernel
            .reductions
            .iter()
            .zip(&ctx.partials)
            .map(|(red, buffer)| {
                let size = red.ty.size_bytes();
                (0..blocks).map(|b| value::from_memory(red.ty, buffer.load((b * size as u64) as usize, size))).collect()
            })
            .collect();
        Ok(LaunchOutcome { partials, scalar_outputs, counters })
    }
}

#[cfg(test)]
mod tests;
