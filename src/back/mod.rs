//! Back ends: the host C code of a program (the user's code with offloaded regions replaced by
//! runtime calls), CUDA C for grid kernels, and a readable text form of the IR; `link_check`
//! refuses a built host object that needs a function nothing provides. `cuda` and `ir_text`,
//! which the runtime library needs, are `yosegi-rt`'s, re-exported here.

pub use yosegi_rt::back::{cuda, ir_text};

pub mod c_inline;
pub mod host_c;
pub mod link_check;
