//! The memory hierarchy lab: one module per topic, with the launchers, CPU references and
//! measurements behind `demo <topic>`; [`read_stream`] is the read-only bandwidth ceiling
//! (`demo bandwidth`, `demo sweep`), [`fma_rate`] the FP32 multiply-add ceiling (`demo sweep`,
//! `demo conv2d`), [`fma_stream`] both at once, the measured floor of the separable
//! convolutions (`demo sweep fma-stream`).

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

/// Every kernel entry name of the memory topics (for the PTX checks).
pub fn kernel_names() -> Vec<&'static str> {
    let mut names = Vec::new();
    names.extend_from_slice(bandwidth::KERNELS);
    names.extend_from_slice(bank_conflicts::KERNELS);
    names.extend_from_slice(coalescing::KERNELS);
    names.extend_from_slice(constant_memory::KERNELS);
    names.extend_from_slice(device_globals::KERNELS);
    names.extend_from_slice(fma_rate::KERNELS);
    names.extend_from_slice(fma_stream::KERNELS);
    names.extend_from_slice(layout::KERNELS);
    names.extend_from_slice(read_stream::KERNELS);
    names.extend_from_slice(registers::KERNELS);
    names.extend_from_slice(shared_memory::KERNELS);
    names.extend_from_slice(texture::KERNELS);
    names
}
