//! Yosegi: a compiler and runtime that runs C programs annotated with OpenACC directives on
//! GPUs (or on the `sim` device, a SIMT simulator on the CPU).
//!
//! The pipeline, one module per stage, data flowing one way:
//! `front` (preprocess, lex, parse, directives, lowering to the IR) -> [`ir`] -> `analysis`
//! (affine accesses, sections, dependences) -> `opt` (mapping to grid kernels) -> `back`
//! (host C, IR text) -> `runtime` (coherence, devices). [`driver`] strings them together for
//! the CLI.

pub mod analysis;
pub mod back;
pub mod diag;
pub mod driver;
pub mod explain;
pub mod front;
pub mod ir;
pub mod opt;
pub mod runtime;
pub mod valid;
