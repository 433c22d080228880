//! The performance model: the predicted time of a launch on one device and on several, from
//! what the compiler and the runtime know of it, and the machine's measured figures.
//!
//! * [`machine`]: the device's figures, measured once per GPU model and kept in a file
//!   (nominal H100 figures on the simulator, which has no clock);
//! * [`sample`]: what a launch does (global sectors, loads and stores, float and double
//!   operations, math calls, shared requests and their bank conflicts, barriers), counted by
//!   running a few of its blocks in the simulator's interpreter and scaling to the grid;
//! * [`predict`]: time = launch + the longest of memory, caches, arithmetic and shared memory,
//!   each at the rate the launch's resident warps can reach.
//!
//! The runtime asks for a prediction per launch when `--stats` is on, and prints it beside the
//! measured device time; predictions are kept per kernel and sizes, so a time-step loop pays
//! for one.

pub mod machine;
pub mod predict;
pub mod sample;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::ir::{GridKernel, Module};
use crate::runtime::device::{Device, DeviceAlloc, DeviceParam, Launch};
use crate::runtime::registry::Registry;
use crate::runtime::sim::memory::SimBuffer;

pub use machine::Machine;
pub use predict::{LaunchWork, Prediction};

/// What identifies a launch's prediction: the grid kernel, the device, the launch's integer
/// scalars (the sizes) and the bytes its sections cover.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PredictionKey {
    kernel: String,
    device: usize,
    scalars: Vec<u64>,
    dram_bytes: u64,
}

/// The runtime's model: one machine per device, the predictions made so far, and which
/// kernels each device has launched (a first launch also loads the kernel's code).
#[derive(Default)]
pub struct Model {
    machines: Vec<Machine>,
    predictions: HashMap<PredictionKey, Option<Prediction>>,
    /// Grid kernels (by name) already launched, per device: their code is loaded.
    launched: HashSet<(String, usize)>,
}

impl Model {
    pub fn new(machines: Vec<Machine>) -> Model {
        Model { machines, predictions: HashMap::new(), launched: HashSet::new() }
    }

    pub fn machine(&self, device: usize) -> Option<&Machine> {
        self.machines.get(device)
    }

    /// The predicted time of `launch` on `device`, which moves `dram_bytes`; `None` where
    /// the launch cannot be counted (its block ran past the model's budget, or it reaches
    /// memory the host views do not cover). `host_view_of` gives the host view of the
    /// allocation an array param is bound to.
    pub fn predict_launch(
        &mut self,
        launch: &Launch,
        device: usize,
        dram_bytes: u64,
        multiprocessors: u32,
        host_view_of: &dyn Fn(DeviceAlloc) -> Option<Arc<SimBuffer>>,
    ) -> Option<Prediction> {
        let machine = self.machines.get(device)?;
        let key = PredictionKey { kernel: launch.kernel.name.clone(), device, scalars: integer_scalars(launch), dram_bytes };
        let prediction = match self.predictions.get(&key) {
            Some(known) => known.clone(),
            None => {
                let made = predict_with(machine, launch, dram_bytes, multiprocessors, host_view_of);
                self.predictions.insert(key, made.clone());
                made
            }
        };
        let first = self.launched.insert((launch.kernel.name.clone(), device));
        prediction.map(|mut p| {
            if first {
                p.launch_s += machine.first_launch_s;
                p.seconds += machine.first_launch_s;
            }
            p
        })
    }
}

impl Model {
    /// [`Model::predict_launch`] for `launch` on `device`, its array params read through
    /// read-only views of the host memory of the objects `registry` tracks.
    pub fn predict_on(&mut self, launch: &Launch, device: usize, dram_bytes: u64, on: &dyn Device, registry: &Registry) -> Option<Prediction> {
        // Looked up only when the launch is sampled (a prediction not made before).
        let host_view_of = |alloc: DeviceAlloc| {
            let object = registry.iter().find(|o| o.copies.placement(device) == Some((alloc, 0)))?;
            // SAFETY: a tracked object is host memory the program keeps alive while the
            // runtime works for it; the view is dropped before this call returns.
            Some(Arc::new(unsafe { SimBuffer::host_view(object.start as *const u8, object.len as usize) }))
        };
        self.predict_launch(launch, device, dram_bytes, on.multiprocessors(), &host_view_of)
    }
}

/// The prediction for `launch` on device `device` (`on`), recorded in `stats`, when the model
/// is on (stats are).
pub fn record_prediction(
    model: &mut Option<Model>,
    stats: &mut crate::runtime::stats::Stats,
    launch: &Launch,
    device: usize,
    dram_bytes: u64,
    on: &dyn Device,
    registry: &Registry,
) {
    if let Some(prediction) = model.as_mut().and_then(|m| m.predict_on(launch, device, dram_bytes, on, registry)) {
        stats.record_prediction(&launch.kernel.name, &prediction);
    }
}

/// The prediction for `launch` on `machine` (see [`Model::predict_launch`]).
pub fn predict_with(
    machine: &Machine,
    launch: &Launch,
    dram_bytes: u64,
    multiprocessors: u32,
    host_view_of: &dyn Fn(DeviceAlloc) -> Option<Arc<SimBuffer>>,
) -> Option<Prediction> {
    if !countable(launch.module, launch.kernel) {
        return None;
    }
    let sampled = sample::sample_launch(launch, host_view_of, multiprocessors).ok()?;
    let work = LaunchWork {
        blocks: sampled.blocks,
        threads_per_block: sampled.block.iter().product(),
        shared_bytes_per_block: launch.kernel.shared_memory_bytes(),
        registers_per_thread: predict::DEFAULT_REGISTERS,
        counters: sampled.counters,
        dram_bytes,
    };
    Some(predict::predict(machine, &work))
}

/// Whether sampled blocks can run over host views: not when the kernel reads rows through
/// device addresses (row tables) or computes addresses, which the views do not have.
fn countable(module: &Module, kernel: &GridKernel) -> bool {
    !kernel.params.iter().any(|p| matches!(p.kind, crate::ir::ParamKind::RowTable { .. })) && !module.reaches_addresses(&kernel.body)
}

/// The launch's integer scalar params (floating ones change every time step of many programs
/// and decide no size).
fn integer_scalars(launch: &Launch) -> Vec<u64> {
    launch
        .kernel
        .params
        .iter()
        .zip(&launch.params)
        .filter_map(|(p, v)| match (&p.kind, v) {
            (crate::ir::ParamKind::Scalar(ty), DeviceParam::Value(v)) if !ty.is_float() => Some(crate::runtime::value::from_param(*ty, *v)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests;
