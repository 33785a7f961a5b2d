//! The patterns, one folder each: its definition (its clap arguments and `impl Pattern`), its
//! tables, its sweep cases and its own input and output helpers. A pattern imports the engine
//! ([`crate::engine`]) and its own folder, never another pattern; the crate root's
//! [`PATTERNS`](crate::PATTERNS) is the one list that names them all.

pub mod convolution;
pub mod histogram;
pub mod md;
pub mod memory;
pub mod multi_gpu;
pub mod reduce;
pub mod scan;
pub mod smoke;
pub mod sort;
pub mod square_sum;
pub mod transpose;
pub mod vector_add;
