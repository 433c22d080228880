//! Back ends: the host C code of a program (the user's code with offloaded regions replaced by
//! runtime calls), CUDA C for grid kernels, and a readable text form of the IR.

pub mod cuda;
pub mod host_c;
pub mod ir_text;
