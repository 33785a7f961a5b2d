//! Global-memory coalescing: misalignment offset and stride sweeps with cached (`ld.ca`) and L2-only (`ld.cg`) loads.
