//! Back ends: the host C code of a program (the user's code with offloaded regions replaced by
//! runtime calls) and CUDA C for grid kernels; `link_check` refuses a built host object that
//! needs a function nothing provides. `cuda`, which the runtime library needs, is `yosegi-rt`'s,
//! re-exported here. (The IR's text form is `ir::text`.)

pub use yosegi_rt::back::cuda;

pub mod c_inline;
pub mod host_c;
pub mod link_check;
