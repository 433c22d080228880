//! The back ends a running program needs: CUDA C for grid kernels (compiled by NVRTC at run
//! time) and a readable text form of the IR. The host C back end, which only the compiler uses,
//! is in the `yosegi` crate (`yosegi::back::host_c`).

pub mod cuda;
pub mod ir_text;
