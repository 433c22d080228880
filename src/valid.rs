//! The IR verifier: checks the invariants every pass must keep (handles in range, types
//! consistent, grid-only constructs only in grid kernels). Runs between passes.
