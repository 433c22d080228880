//! Snippet tests of lowering: C source through the parser and lowering.
