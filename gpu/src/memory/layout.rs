//! Array of structs against struct of arrays for the same arithmetic.
