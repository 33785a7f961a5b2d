//! `demo <topic>` for the memory hierarchy lab (`cpu::lab::memory`): the on-chip topics and the
//! global-memory and transfer topics.

pub(crate) mod on_chip;
pub(crate) mod traffic;
