//! Compiling C source text with the front end and passes only (no gcc), and launching one
//! variant of a compiled kernel on a fresh simulator with buffers the test provides: the way the
//! staging tests compare a staged variant with the plain one, launch by launch, counters and all.

use std::collections::BTreeMap;
use std::path::PathBuf;

use yosegi::driver::{self, CompiledProgram};
use yosegi::front::PreprocessOptions;
use yosegi::ir::{
    GridKernel, Handle, HostArgKind, Kernel, Module, ParamKind, ParamValue, Region, RegionKind, VariantKind,
};
use yosegi::opt::PassConfig;
use yosegi::runtime::device::{Device, DeviceParam, Launch};
use yosegi::runtime::sim::SimDevice;
use yosegi::runtime::stats::DeviceCounters;

/// Compiles `source` (written to a temporary file named `file_name`) to the IR with `config`.
/// Panics with the rendered diagnostics' messages when the front end refuses it: every source
/// these tests generate is valid C.
pub fn compile_source(file_name: &str, source: &str, config: &PassConfig) -> CompiledProgram {
    let dir = tempfile::tempdir().expect("temp dir");
    let path: PathBuf = dir.path().join(file_name);
    std::fs::write(&path, source).expect("write the generated source");
    match driver::compile(&[path], &PreprocessOptions::default(), config) {
        Ok(program) => program,
        Err((_, diags)) => {
            let messages: Vec<String> = diags.0.iter().map(|d| d.message.clone()).collect();
            panic!("the front end refused the generated program: {messages:?}\n--- source ---\n{source}")
        }
    }
}

/// The source kernels of `module` made for the regions of the C function `function`.
pub fn kernels_in_function(module: &Module, function: &str) -> Vec<Handle<Kernel>> {
    module
        .regions
        .iter()
        .filter(|r| r.function == function)
        .flat_map(|r| match &r.kind {
            RegionKind::Compute { kernels, .. } => kernels.clone(),
            _ => Vec::new(),
        })
        .collect()
}

/// The plain (global-memory) variant of `kernel` and its staged variants, in the module's order.
pub struct Variants {
    pub plain: Handle<GridKernel>,
    pub staged: Vec<Handle<GridKernel>>,
}

pub fn variants(module: &Module, kernel: Handle<Kernel>) -> Variants {
    let all = module.variants_of(kernel);
    let plain = *all
        .iter()
        .find(|&&g| module.grid_kernels[g].variant.kind == VariantKind::Global)
        .expect("every mapped kernel has a plain variant");
    let staged = all.into_iter().filter(|&g| module.grid_kernels[g].variant.kind == VariantKind::Staged).collect();
    Variants { plain, staged }
}

/// The host side of one launch, by the C expression of each region argument: arrays as raw
/// little-endian bytes (copied in, and read back after the launch), integers by value.
#[derive(Clone, Debug, Default)]
pub struct HostData {
    pub arrays: BTreeMap<String, Vec<u8>>,
    pub ints: BTreeMap<String, i64>,
}

/// What one launch left behind: every array's bytes after it, and the device's counters.
#[derive(Clone, Debug)]
pub struct LaunchResult {
    pub arrays: BTreeMap<String, Vec<u8>>,
    pub counters: DeviceCounters,
}

fn region_of(module: &Module, kernel: Handle<Kernel>) -> &Region {
    module
        .regions
        .iter()
        .find(|r| matches!(&r.kind, RegionKind::Compute { kernels, .. } if kernels.contains(&kernel)))
        .expect("every kernel belongs to a compute region")
}

/// A region argument's C expression without the parentheses the lowering puts around some.
fn arg_name(c_expr: &str) -> String {
    let mut name = c_expr.trim();
    while let Some(inner) = name.strip_prefix('(').and_then(|n| n.strip_suffix(')')) {
        name = inner.trim();
    }
    name.to_string()
}

/// Launches `grid` once on a fresh simulator. Every array param must be in `data.arrays` and
/// every scalar param in `data.ints`, under its region argument's C expression. A kernel fault
/// comes back as `Err` with the fault's message.
pub fn launch_on_sim(module: &Module, grid: Handle<GridKernel>, data: &HostData) -> Result<LaunchResult, String> {
    let kernel: &GridKernel = &module.grid_kernels[grid];
    let region = region_of(module, kernel.source);
    let mut device = SimDevice::new();
    let mut allocations = BTreeMap::new();
    for (name, bytes) in &data.arrays {
        let alloc = device.allocate(bytes.len() as u64);
        device.copy_to_device(alloc, 0, bytes);
        allocations.insert(name.clone(), (alloc, bytes.len()));
    }
    // A partitioned kernel runs its whole dim: `first` 0, `count` the whole trip.
    let source = &module.kernels[kernel.source];
    let int_of = |param: &yosegi::ir::Param| data.ints.get(&arg_name(&region.args[param.arg as usize].c_expr)).copied();
    let source_values: Vec<ParamValue> =
        source.params.iter().map(|p| if p.kind.is_indexed() { ParamValue::Pointer(0) } else { ParamValue::Int(int_of(p).unwrap_or(0)) }).collect();
    let trips = yosegi::opt::partition::whole_trips(source, &source_values).expect("the trip counts evaluate");
    let partition_value = |arg: u32| {
        source.partitions.iter().zip(&trips).find_map(|(partition, &trip)| {
            if arg == partition.first_arg {
                Some(0)
            } else if arg == partition.count_arg {
                Some(trip)
            } else {
                None
            }
        })
    };
    let mut params = Vec::new();
    for param in &kernel.params {
        let host_arg = &region.args[param.arg as usize];
        let name = arg_name(&host_arg.c_expr);
        if let Some(value) = partition_value(param.arg) {
            params.push(DeviceParam::Value(ParamValue::Int(value)));
            continue;
        }
        let bound = match (&param.kind, host_arg.kind) {
            (ParamKind::Array { .. }, HostArgKind::Pointer) => {
                let (alloc, _) = allocations
                    .get(&name)
                    .unwrap_or_else(|| panic!("{}: no host array `{name}` given for param `{}`", kernel.name, param.name));
                DeviceParam::Array { alloc: *alloc, offset: 0 }
            }
            (ParamKind::Scalar(_), HostArgKind::Int) => {
                let value = data
                    .ints
                    .get(&name)
                    .unwrap_or_else(|| panic!("{}: no integer `{name}` given for param `{}`", kernel.name, param.name));
                DeviceParam::Value(ParamValue::Int(*value))
            }
            (kind, arg_kind) => panic!("{}: param `{}` ({kind:?}) bound to a {arg_kind:?} argument", kernel.name, param.name),
        };
        params.push(bound);
    }
    let outcome = device
        .launch(&Launch::new(module, kernel, params))
        .map_err(|fault| format!("{} faulted: {}", fault.kernel, fault.message))?;
    let arrays = allocations
        .into_iter()
        .map(|(name, (alloc, len))| {
            let mut bytes = vec![0u8; len];
            device.copy_to_host(alloc, 0, &mut bytes);
            (name, bytes)
        })
        .collect();
    Ok(LaunchResult { arrays, counters: outcome.counters })
}

/// Deterministic pseudo-random values in [-1, 1) (an LCG: the tests need reproducible data
/// from a proptest seed, not statistical quality).
pub fn pseudo_random_values(seed: u64, count: usize) -> Vec<f64> {
    let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
    (0..count)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

/// Element types of the generated arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    F32,
    F64,
}

impl Elem {
    pub fn c_name(self) -> &'static str {
        match self {
            Elem::F32 => "float",
            Elem::F64 => "double",
        }
    }
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Elem::F32 => 4,
            Elem::F64 => 8,
        }
    }
    pub fn bytes(self, values: &[f64]) -> Vec<u8> {
        match self {
            Elem::F32 => values.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect(),
            Elem::F64 => values.iter().flat_map(|&v| v.to_le_bytes()).collect(),
        }
    }
}
