//! yosegi-rt: everything a program compiled by Yosegi runs with, and nothing of the C front end.
//!
//! It owns the IR ([`ir`]) and its checks ([`valid`]), diagnostics and source maps ([`diag`],
//! [`source`]), the analyses ([`analysis`]: affine accesses, sections, dependences), the passes
//! ([`opt`]: mapping to grid kernels, folding, staging, padding), the two back ends the runtime
//! needs ([`back::cuda`]: CUDA C for NVRTC; [`ir::text`]: readable IR), the program image
//! ([`image`]) and the runtime itself ([`runtime`]: registry, coherence, the `sim` and `cuda`
//! devices, the C ABI `yosegi_rt_start`), with [`private_fs`] for scratch space and [`care`]
//! for what an interruption must not leave behind (scratch space, child processes).
//!
//! Its cdylib is the runtime library `libyosegi_rt.so` that executables built by `yosegi cc`
//! link against. It is a crate of its own so that the rule "the runtime library does not carry
//! the front end" holds by construction: the front end (preprocessing, parsing, lowering), the
//! host C back end and the drivers live in the `yosegi` crate, which depends on this one, and
//! this crate cannot depend back on it.

pub mod analysis;
pub mod back;
pub mod care;
pub mod diag;
pub mod image;
pub mod ir;
pub mod opt;
pub mod private_fs;
pub mod runtime;
pub mod source;
pub mod valid;
