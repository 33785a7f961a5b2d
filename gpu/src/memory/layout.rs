//! Array of structs against struct of arrays for the same arithmetic: *Professional CUDA C
//! Programming* ch. 4, `simpleMathAoS` and `simpleMathSoA` (`x += 10`, `y += 20` on every
//! element).
//!
//! An array of structs (AoS) interleaves the fields, `x0 y0 x1 y1 ...`: each field load of a
//! warp touches 256 bytes for the 128 it uses (50% load efficiency per instruction in the book's
//! `nvprof`). A struct of arrays (SoA) keeps each field contiguous, `x0 x1 ... | y0 y1 ...`, so
//! every load and store of a warp is 128 contiguous bytes. Both move the same bytes from DRAM;
//! the difference is in the requests, the L1 traffic and the instructions per element.
//!
//! A third layout shows CUDA's own fix for AoS: aligning the struct to its size (`__align__(8)`,
//! here `#[repr(C, align(8))]`) lets the compiler load and store it with one 8-byte access.

/// Threads per block (the book's default, 128, is as good on an H100; 256 matches the lab).
pub const BLOCK_SIZE: u32 = 256;
/// Added to `x` by every kernel (the book's `tmp.x += 10.f`).
pub const ADD_X: f32 = 10.0;
/// Added to `y` by every kernel (the book's `tmp.y += 20.f`).
pub const ADD_Y: f32 = 20.0;

/// One element of the array of structs: the book's `struct innerStruct { float x; float y; }`.
/// 4-byte aligned, as in C, so each field is loaded with its own 4-byte access.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InnerStruct {
    /// First field.
    pub x: f32,
    /// Second field.
    pub y: f32,
}

/// [`InnerStruct`] aligned to its 8-byte size (CUDA's `struct __align__(8) innerStruct`), so
/// one 8-byte access (`ld.global.v2.f32`) moves both fields.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InnerStructAligned {
    /// First field.
    pub x: f32,
    /// Second field.
    pub y: f32,
}

/// The kernels (device build only).
pub mod kernels {
    use super::{ADD_X, ADD_Y, InnerStruct, InnerStructAligned};
    use gpu_std::global_index_x;
    use gpu_std::kernel;

    /// `result[i] = {data[i].x + 10, data[i].y + 20}` on an array of structs (the book's
    /// `testInnerStruct`).
    ///
    /// Algorithm: one element per thread; the struct is 4-byte aligned, so its two fields are
    /// two 4-byte loads and two 4-byte stores, each covering every other word of 256 bytes.
    ///
    /// Launch: blocks of [`BLOCK_SIZE`](super::BLOCK_SIZE); a grid covering `n`.
    ///
    /// Parameters: `data` and `result` hold `n` structs each in device memory.
    ///
    /// # Safety
    /// Both pointers are valid for `n` elements and do not overlap.
    ///
    /// Performance: 8 bytes read and 8 written per element, two FADDs: memory-bound.
    #[kernel]
    pub unsafe fn layout_aos(data: *const InnerStruct, result: *mut InnerStruct, n: usize) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `i < n` and the caller guarantees `n` valid elements per pointer.
            unsafe {
                let mut tmp = *data.add(i);
                tmp.x += ADD_X;
                tmp.y += ADD_Y;
                *result.add(i) = tmp;
            }
        }
    }

    /// As [`layout_aos`] on 8-byte aligned structs: one 8-byte load and one 8-byte store per
    /// element, so a warp's access is 256 contiguous bytes, fully used.
    ///
    /// Launch, parameters, performance: as [`layout_aos`].
    ///
    /// # Safety
    /// As [`layout_aos`].
    #[kernel]
    pub unsafe fn layout_aos_aligned(
        data: *const InnerStructAligned,
        result: *mut InnerStructAligned,
        n: usize,
    ) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `i < n` and the caller guarantees `n` valid, 8-byte aligned elements.
            unsafe {
                let mut tmp = *data.add(i);
                tmp.x += ADD_X;
                tmp.y += ADD_Y;
                *result.add(i) = tmp;
            }
        }
    }

    /// `x_out[i] = x[i] + 10`, `y_out[i] = y[i] + 20` on a struct of arrays (the book's
    /// `testInnerArray`).
    ///
    /// Algorithm: one element per thread; each of the two loads and two stores of a warp is
    /// 128 contiguous bytes.
    ///
    /// Launch: as [`layout_aos`].
    ///
    /// Parameters: the four pointers hold `n` floats each in device memory.
    ///
    /// # Safety
    /// The four pointers are valid for `n` elements; the outputs overlap nothing.
    ///
    /// Performance: as [`layout_aos`].
    #[kernel]
    pub unsafe fn layout_soa(
        x: *const f32,
        y: *const f32,
        x_out: *mut f32,
        y_out: *mut f32,
        n: usize,
    ) {
        let i = global_index_x();
        if i < n {
            // SAFETY: `i < n` and the caller guarantees `n` valid elements per pointer.
            unsafe {
                *x_out.add(i) = *x.add(i) + ADD_X;
                *y_out.add(i) = *y.add(i) + ADD_Y;
            }
        }
    }
}
