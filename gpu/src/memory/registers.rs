//! Registers and local memory: an array kept in registers (compile-time indices) against one spilled to local memory (run-time index).
