//! The back end a running program needs: CUDA C for grid kernels (compiled by NVRTC at run
//! time, or ahead of time by `yosegi cc`). The IR's readable text form is the IR's own
//! (`ir::text`). The host C back end, which only the compiler uses, is in the `yosegi` crate
//! (`yosegi::back::host_c`).

pub mod cuda;
