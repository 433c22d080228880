//! Analyses over kernels: affine index recognition, per-array access summaries (from which the
//! runtime computes the sections a launch reads and writes), and the dependence test that
//! decides which loops of a `kernels` region may run in parallel.

pub mod access;
pub mod affine;
pub mod carried;
pub mod dependence;
pub mod footprint;
pub mod linear_system;
pub mod promotion;
pub mod races;
pub mod split;
pub mod uniform;

#[cfg(any(test, feature = "testing"))]
pub mod testing;
