//! `demo <topic>` for the memory hierarchy lab (`cpu::lab::memory`), one file per topic: the
//! on-chip topics ([`registers`], [`shared_memory`], [`bank_conflicts`], [`constant_memory`],
//! [`device_globals`]) and the global-memory and transfer topics ([`coalescing`], [`layout`],
//! [`bandwidth`], [`texture`]); [`cells`] holds the table cells they share.

pub mod bandwidth;
pub mod bank_conflicts;
pub mod cells;
pub mod coalescing;
pub mod constant_memory;
pub mod device_globals;
pub mod layout;
pub mod registers;
pub mod shared_memory;
pub mod texture;
