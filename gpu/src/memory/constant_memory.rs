//! Constant memory: uniform (broadcast) against divergent reads, against global memory and the read-only data path.
