//! Host-device transfer bandwidth (pageable, pinned, write-combined, zero-copy) and launch overhead.
