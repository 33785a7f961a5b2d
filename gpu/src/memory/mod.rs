//! The memory hierarchy lab (seed "cuda 学习之内存层次结构"; "cuda 并行归约" section 二 for
//! transfer bandwidth): one module per topic, each a small experiment whose kernels show the
//! effect the seed describes, and [`read_stream`], the read-only bandwidth ceiling.

pub mod bandwidth;
pub mod bank_conflicts;
pub mod coalescing;
pub mod constant_memory;
pub mod device_globals;
pub mod fma_rate;
pub mod fma_stream;
pub mod layout;
pub mod read_stream;
pub mod registers;
pub mod shared_memory;
pub mod texture;
