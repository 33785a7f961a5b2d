//! Shared-memory bank conflicts: strided, padded, broadcast and multicast access, timed with the SM clock.
