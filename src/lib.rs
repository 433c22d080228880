//! Yosegi: a compiler and runtime that runs C programs annotated with OpenACC directives on
//! GPUs (or on the `sim` device, a SIMT simulator on the CPU).
//!
//! The pipeline, one module per stage, data flowing one way:
//! `front` (preprocess, lex, parse, directives, lowering to the IR) -> [`ir`] -> `analysis`
//! (affine accesses, sections, dependences) -> `opt` (mapping to grid kernels) -> `back`
//! (host C, IR text) -> `runtime` (coherence, devices). [`driver`] strings them together for
//! the CLI; [`private_fs`] makes the private scratch space and trusted directories every stage
//! that touches the file system uses, and [`care`] runs the child processes (cpp, cc, ld) so
//! that an interruption ends them with Yosegi.
//!
//! Every stage after the front end lives in the `yosegi-rt` crate (crates/yosegi-rt), whose
//! cdylib is the runtime library; it cannot depend on this crate, so the runtime library holds
//! no front end by construction. Its modules are re-exported here under their old paths.

pub use yosegi_rt::{analysis, care, diag, image, ir, opt, private_fs, runtime, source, valid};

pub mod back;
pub mod cc;
pub mod driver;
pub mod explain;
pub mod front;
pub mod fuzz;
pub mod manpages;
pub mod oom;
