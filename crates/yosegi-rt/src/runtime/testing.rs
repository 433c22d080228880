//! Test-only helpers: a concise builder of grid kernels (the mapping pass makes them in the
//! real pipeline) and a harness that runs one on the simulator.

use crate::diag::Span;
use crate::ir::*;

/// The memory methods of a test's `Device` that wraps the simulator in its field `sim`
/// (allocation, addresses, copies to the device): a stand-in for a GPU that changes only how
/// launches run or are timed.
#[macro_export]
#[doc(hidden)]
macro_rules! delegate_device_memory_to_sim {
    () => {
        fn allocate(&mut self, bytes: u64) -> $crate::runtime::device::DeviceAlloc {
            self.sim.allocate(bytes)
        }
        fn free(&mut self, alloc: $crate::runtime::device::DeviceAlloc) {
            self.sim.free(alloc)
        }
        fn address(&self, alloc: $crate::runtime::device::DeviceAlloc) -> u64 {
            self.sim.address(alloc)
        }
        fn memory(&mut self) -> (u64, u64) {
            self.sim.memory()
        }
        fn copy_to_device(&mut self, alloc: $crate::runtime::device::DeviceAlloc, offset: u64, src: &[u8]) {
            self.sim.copy_to_device(alloc, offset, src)
        }
    };
}

pub struct GridBuilder {
    pub body: Body,
    params: Vec<Param>,
    shared: Vec<SharedArray>,
    block: [u32; 3],
    grid: Option<[Handle<Expr>; 3]>,
    reductions: Vec<GridReduction>,
    scalar_outputs: Vec<(Handle<Local>, u32)>,
    name: String,
}

impl GridBuilder {
    pub fn new(name: &str, block: [u32; 3]) -> GridBuilder {
        GridBuilder {
            body: Body::default(),
            params: Vec::new(),
            shared: Vec::new(),
            block,
            grid: None,
            reductions: Vec::new(),
            scalar_outputs: Vec::new(),
            name: name.to_string(),
        }
    }
    fn e(&mut self, kind: ExprKind, ty: ScalarType) -> Handle<Expr> {
        self.body.add_expr(kind, ty, Span::default())
    }
    /// Param `n` is bound to region arg `n`.
    pub fn scalar_param(&mut self, name: &str, ty: ScalarType) -> u32 {
        let arg = self.params.len() as u32;
        self.params.push(Param { name: name.into(), kind: ParamKind::Scalar(ty), arg });
        arg
    }
    pub fn array_param(&mut self, name: &str, elem: ScalarType, inner_dims: &[i64]) -> u32 {
        let arg = self.params.len() as u32;
        let mut dims = vec![None];
        for &d in inner_dims {
            let c = self.i64c(d);
            dims.push(Some(c));
        }
        self.params.push(Param {
            name: name.into(),
            kind: ParamKind::Array { elem, dims, restrict: false, read_only: false },
            arg,
        });
        arg
    }
    /// A table of row pointers (`double **t`), indexed `t[i][j]`.
    pub fn row_table_param(&mut self, name: &str, elem: ScalarType) -> u32 {
        let arg = self.params.len() as u32;
        self.params.push(Param { name: name.into(), kind: ParamKind::RowTable { elem, read_only: false }, arg });
        arg
    }
    pub fn shared(&mut self, name: &str, elem: ScalarType, dims: &[u32]) -> u32 {
        self.shared.push(SharedArray { name: name.into(), elem, dims: dims.to_vec() });
        self.shared.len() as u32 - 1
    }
    pub fn local(&mut self, name: &str, ty: ScalarType) -> Handle<Local> {
        self.body.locals.append(Local {
            name: name.into(),
            ty,
            array_dims: None,
            kind: LocalKind::Var,
            span: Span::default(),
        })
    }
    pub fn reduction(&mut self, op: ReductionOp, ty: ScalarType, target_arg: u32) -> u32 {
        self.reductions.push(GridReduction { op, ty, target_arg, part: None });
        self.reductions.len() as u32 - 1
    }
    pub fn scalar_output(&mut self, local: Handle<Local>, arg: u32) {
        self.scalar_outputs.push((local, arg));
    }
    pub fn int(&mut self, v: i64) -> Handle<Expr> {
        self.e(ExprKind::ConstInt(v), ScalarType::I32)
    }
    pub fn i64c(&mut self, v: i64) -> Handle<Expr> {
        self.e(ExprKind::ConstInt(v), ScalarType::I64)
    }
    pub fn float(&mut self, v: f64, ty: ScalarType) -> Handle<Expr> {
        self.e(ExprKind::ConstFloat(v), ty)
    }
    pub fn param(&mut self, p: u32) -> Handle<Expr> {
        let ty = match self.params[p as usize].kind {
            ParamKind::Scalar(t) => t,
            _ => ScalarType::U64,
        };
        self.e(ExprKind::Param(p), ty)
    }
    pub fn get(&mut self, l: Handle<Local>) -> Handle<Expr> {
        let ty = self.body.locals[l].ty;
        self.e(ExprKind::Local(l), ty)
    }
    pub fn tid(&mut self) -> Handle<Expr> {
        self.e(ExprKind::ThreadIdx(Axis::X), ScalarType::I32)
    }
    /// `blockIdx.x * blockDim.x + threadIdx.x`
    pub fn global_id(&mut self) -> Handle<Expr> {
        let b = self.e(ExprKind::BlockIdx(Axis::X), ScalarType::I32);
        let d = self.e(ExprKind::BlockDim(Axis::X), ScalarType::I32);
        let t = self.tid();
        let bd = self.bin(BinaryOp::Mul, b, d);
        self.bin(BinaryOp::Add, bd, t)
    }
    pub fn bin(&mut self, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        let ty = match op {
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne => ScalarType::Bool,
            BinaryOp::LogAnd | BinaryOp::LogOr => ScalarType::Bool,
            _ => self.body.exprs[lhs].ty,
        };
        self.e(ExprKind::Binary { op, lhs, rhs }, ty)
    }
    pub fn cast(&mut self, arg: Handle<Expr>, ty: ScalarType) -> Handle<Expr> {
        self.e(ExprKind::Cast { arg }, ty)
    }
    pub fn load(&mut self, array: ArrayRef, indices: &[Handle<Expr>], ty: ScalarType, span: Span) -> Handle<Expr> {
        self.body.add_expr(ExprKind::Load { array, indices: indices.to_vec() }, ty, span)
    }
    pub fn store(&self, array: ArrayRef, indices: &[Handle<Expr>], value: Handle<Expr>) -> Stmt {
        Stmt::Store { array, indices: indices.to_vec(), value, span: Span::default() }
    }
    /// One thread per point of `0..n`, `n` the scalar param `n_param`: a grid of blocks of the
    /// builder's x size covering `n`. Returns the thread's point
    /// (`blockIdx.x * blockDim.x + threadIdx.x`) and the guard `point < n`.
    pub fn one_thread_per_point(&mut self, n_param: u32) -> (Handle<Expr>, Handle<Expr>) {
        let n = self.param(n_param);
        let size = self.block[0] as i64;
        let below = self.int(size - 1);
        let size = self.int(size);
        let padded = self.bin(BinaryOp::Add, n, below);
        let blocks = self.bin(BinaryOp::Div, padded, size);
        self.grid_x(blocks);
        let point = self.global_id();
        let guard = self.bin(BinaryOp::Lt, point, n);
        (point, guard)
    }
    pub fn grid_x(&mut self, x: Handle<Expr>) {
        let one = self.int(1);
        self.grid = Some([x, one, one]);
    }
    pub fn finish(mut self, block: Block) -> GridKernel {
        self.body.block = block;
        let grid = match self.grid {
            Some(g) => g,
            None => {
                let one = self.int(1);
                [one, one, one]
            }
        };
        GridKernel {
            name: self.name,
            span: Span::new(0, 1, 2),
            source: Handle::new(0),
            params: self.params,
            body: self.body,
            shared: self.shared,
            launch: LaunchShape { block: self.block, grid },
            reductions: self.reductions,
            scalar_outputs: self.scalar_outputs,
            axes: Vec::new(),
            variant: VariantInfo::global(),
        }
    }
}

pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
pub fn f32_values(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect()
}
pub fn i32_values(bytes: &[u8]) -> Vec<i32> {
    bytes.chunks(4).map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes"))).collect()
}

/// What [`simulate_f64`] hands back: every array param's contents after the launch (in param
/// order) and the per-block partials of each reduction.
pub struct SimulatedF64 {
    pub arrays: Vec<Vec<f64>>,
    pub partials: Vec<Vec<f64>>,
    pub counters: crate::runtime::stats::DeviceCounters,
}

/// Runs `g` once on a fresh simulator: scalar params take `ints` in order, array params are
/// `f64` arrays initialised from `arrays` in order. Panics (naming the kernel) on a fault.
pub fn simulate_f64(m: &Module, g: &GridKernel, ints: &[i64], arrays: &[Vec<f64>]) -> SimulatedF64 {
    use crate::runtime::device::{Device, DeviceParam, Launch};
    let mut device = crate::runtime::sim::SimDevice::new();
    let mut params = Vec::new();
    let mut allocs = Vec::new();
    let (mut next_int, mut next_array) = (0, 0);
    for p in &g.params {
        match p.kind {
            ParamKind::Scalar(_) => {
                params.push(DeviceParam::Value(ParamValue::Int(ints[next_int])));
                next_int += 1;
            }
            ParamKind::Array { .. } => {
                let bytes: Vec<u8> = arrays[next_array].iter().flat_map(|v| v.to_le_bytes()).collect();
                let a = device.allocate(bytes.len() as u64);
                device.copy_to_device(a, 0, &bytes);
                allocs.push((a, bytes.len()));
                params.push(DeviceParam::Array { alloc: a, offset: 0 });
                next_array += 1;
            }
            ParamKind::RowTable { .. } => panic!("{}: simulate_f64 binds scalars and flat arrays, not row tables", g.name),
        }
    }
    let outcome = device.launch(&Launch::new(m, g, params)).unwrap_or_else(|f| panic!("{}: {}", g.name, f.message));
    let arrays = allocs
        .into_iter()
        .map(|(a, len)| {
            let mut bytes = vec![0; len];
            device.copy_to_host(a, 0, &mut bytes);
            bytes.chunks(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect()
        })
        .collect();
    let partials = outcome.partials.iter().map(|p| p.iter().map(|r| f64::from_bits(*r)).collect()).collect();
    SimulatedF64 { arrays, partials, counters: outcome.counters }
}
