//! The runtime: tracks host allocations, keeps host and device copies coherent, launches grid
//! kernels on a device (`sim` now), and counts what happened (`--stats`).

pub mod coherence;
pub mod device;
pub mod sim;
pub mod stats;
pub mod value;
#[cfg(test)]
pub(crate) mod testing;
