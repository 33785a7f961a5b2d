//! The element types and reductions of a rank's collectives.

use cudarc::driver::DeviceRepr;
use cudarc::nccl::sys as nccl_sys;

mod sealed {
    pub trait Sealed {}
}

/// An element type NCCL reduces and moves: `i8`, `u8`, `i32`, `u32`, `i64`, `u64`, `f32`,
/// `f64`. Sealed: NCCL reads `size_of::<T>()` bytes per element by the `ncclDataType_t` named
/// here, so a wrong pairing would read or write past a buffer.
pub trait NcclType: DeviceRepr + Copy + sealed::Sealed {
    /// NCCL's type.
    const DATATYPE: nccl_sys::ncclDataType_t;
}

macro_rules! nccl_types {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl NcclType for $t {
            const DATATYPE: nccl_sys::ncclDataType_t = nccl_sys::ncclDataType_t::$d;
        }
    )*};
}

nccl_types!(
    i8 => ncclInt8,
    u8 => ncclUint8,
    i32 => ncclInt32,
    u32 => ncclUint32,
    i64 => ncclInt64,
    u64 => ncclUint64,
    f32 => ncclFloat32,
    f64 => ncclFloat64,
);

/// The reduction of [`RankCommunicator::all_reduce`](super::RankCommunicator::all_reduce), [`reduce`](super::RankCommunicator::reduce)
/// and [`reduce_scatter`](super::RankCommunicator::reduce_scatter): NCCL's `ncclRedOp_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `+` (wrapping for integers).
    Sum,
    /// `*` (wrapping for integers).
    Prod,
    /// The largest.
    Max,
    /// The smallest.
    Min,
    /// The sum divided by the number of ranks (integer division for integers).
    Avg,
}

impl ReduceOp {
    pub(super) fn nccl(self) -> nccl_sys::ncclRedOp_t {
        match self {
            ReduceOp::Sum => nccl_sys::ncclRedOp_t::ncclSum,
            ReduceOp::Prod => nccl_sys::ncclRedOp_t::ncclProd,
            ReduceOp::Max => nccl_sys::ncclRedOp_t::ncclMax,
            ReduceOp::Min => nccl_sys::ncclRedOp_t::ncclMin,
            ReduceOp::Avg => nccl_sys::ncclRedOp_t::ncclAvg,
        }
    }
}
