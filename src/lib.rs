//! Yosegi: a compiler and runtime that runs C programs annotated with OpenACC directives on
//! GPUs (or on the `sim` device, a SIMT simulator on the CPU).
//!
//! The pipeline, one module per stage, data flowing one way:
//! `front` (preprocess, lex, parse, directives, lowering to the IR) -> [`ir`] -> `analysis`
//! (affine accesses, sections, dependences) -> `opt` (mapping to grid kernels) -> `back`
//! (host C, IR text) -> `runtime` (coherence, devices). [`driver`] strings them together for
//! the CLI; [`private_fs`] makes the private scratch space and trusted directories every stage
//! that touches the file system uses.

pub mod analysis;
pub mod back;
pub mod diag;
pub mod driver;
pub mod cc;
pub mod explain;
pub mod front;
pub mod fuzz;
pub mod image;
pub mod ir;
pub mod opt;
pub mod private_fs;
pub mod runtime;
pub mod source;
pub mod valid;
