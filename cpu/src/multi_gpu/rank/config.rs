//! NCCL's communicator configuration, as its header's initializer writes it.

use cudarc::nccl::sys as nccl_sys;

/// NCCL's `NCCL_CONFIG_UNDEF_INT`: a field of `ncclConfig_t` left to NCCL's default.
const UNDEF_INT: i32 = i32::MIN;
/// NCCL's `NCCL_CONFIG_INITIALIZER` with `blocking` set: the `ncclConfig_t` of NCCL 2.28's
/// header (size, magic, version 2.28.0), every other field left to NCCL.
pub(super) fn nccl_config(blocking: bool) -> nccl_sys::ncclConfig_t {
    nccl_sys::ncclConfig_t {
        size: std::mem::offset_of!(nccl_sys::ncclConfig_t, graphUsageMode),
        magic: 0xcafe_beef,
        version: 22800,
        blocking: blocking as i32,
        cgaClusterSize: UNDEF_INT,
        minCTAs: UNDEF_INT,
        maxCTAs: UNDEF_INT,
        netName: std::ptr::null(),
        splitShare: UNDEF_INT,
        trafficClass: UNDEF_INT,
        commName: std::ptr::null(),
        collnetEnable: UNDEF_INT,
        CTAPolicy: UNDEF_INT,
        shrinkShare: UNDEF_INT,
        nvlsCTAs: UNDEF_INT,
        nChannelsPerNetPeer: UNDEF_INT,
        nvlinkCentricSched: UNDEF_INT,
        graphUsageMode: UNDEF_INT,
        numRmaCtx: UNDEF_INT,
        maxP2pPeers: UNDEF_INT,
    }
}
