//! [`KernelTable`]: what a kernel crate's build embeds in the program that launches its kernels
//! (`ptx_builder`'s `Built::write_table` writes it as a Rust expression): one [`ModuleTable`]
//! per PTX module of the crate (one per top-level Rust module of its kernels), each with its
//! entries' signatures, its host-visible globals and its images: PTX per architecture, and
//! ahead-of-time SASS (cubins) where the build made them, plain or zstd-compressed, embedded in
//! the program or in files beside it.
//!
//! [`Library`](crate::Library) loads a module the first time one of its kernels is used, from
//! the best image for the device ([`ModuleTable::pick`]).

use std::borrow::Cow;
use std::io::Read;
use std::path::PathBuf;

use crate::error::{Error, Result};

/// Embeds the kernel table a build script wrote into `OUT_DIR` with `ptx_builder`'s
/// `Built::write_table(out_dir.join(FILE))`:
/// `static KERNELS: gpu_host::KernelTable = gpu_host::include_kernels!("kernels.rs");`.
/// The table carries the kernel crate's name, as the builder read it from `cargo metadata`, so
/// no name is typed twice; a missing file is a compile error naming it.
#[macro_export]
macro_rules! include_kernels {
    ($file:literal) => {
        include!(concat!(env!("OUT_DIR"), "/", $file))
    };
}

/// The kernels of one kernel crate, as its build embeds them. Written by `ptx_builder`; its
/// fields are public so that the generated expression can build it in a `static`.
#[derive(Debug)]
pub struct KernelTable {
    /// The kernel crate's library name (`my_kernels`): the first segment of its kernels'
    /// module paths ([`KernelInfo::crate_name`](crate::kernel::KernelInfo::crate_name)).
    pub krate: &'static str,
    /// Its PTX modules, sorted by name.
    pub modules: &'static [ModuleTable],
}

/// One PTX module of a kernel crate: the kernels of one top-level Rust module (`sort` holds
/// `my_kernels::sort::*`) and everything they call.
#[derive(Debug)]
pub struct ModuleTable {
    /// The module's name.
    pub name: &'static str,
    /// Its kernels' `.entry` names and parameter sizes.
    pub entries: &'static [EntrySignature],
    /// Its host-visible variables (`__constant__` and `__device__` symbols).
    pub globals: &'static [&'static str],
    /// Its images, ascending by architecture.
    pub images: &'static [Image],
}

/// A kernel's `.entry` as the PTX declares it.
#[derive(Debug)]
pub struct EntrySignature {
    /// The entry's name.
    pub name: &'static str,
    /// The byte size of each `.param`, in order.
    pub params: &'static [usize],
}

/// One compiled form of a module.
#[derive(Debug)]
pub struct Image {
    /// Its architecture: `sm_XX` as `XX`.
    pub sm: u32,
    /// PTX text (JIT-compiled by the driver for any device of at least this architecture) or
    /// SASS (a cubin, for devices of this major version and at least this minor one).
    pub format: ImageFormat,
    /// How its bytes are stored.
    pub encoding: Encoding,
    /// Where its bytes are.
    pub bytes: ImageBytes,
}

/// [`Image::format`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// PTX text.
    Ptx,
    /// A cubin made by `ptxas`: SASS, loaded without a JIT.
    Cubin,
}

/// [`Image::encoding`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// As built.
    Plain,
    /// A zstd frame (decoded by the pure-Rust `ruzstd`).
    Zstd,
}

/// [`Image::bytes`].
#[derive(Clone, Copy, Debug)]
pub enum ImageBytes {
    /// In the program (`include_bytes!`).
    Embedded(&'static [u8]),
    /// In a file beside the program, read when the module is loaded: `name` in the folder
    /// `$GPU_HOST_KERNEL_DIR`, else in `kernels/` beside the executable's folder (a bundle's
    /// `bin/`, `tests/` and `examples/` share one `kernels/`). Its length and FNV-1a hash are
    /// checked before use.
    File {
        /// The file's name.
        name: &'static str,
        /// Its length in bytes.
        len: u64,
        /// Its 64-bit FNV-1a hash ([`fnv1a`]).
        fnv1a: u64,
    },
}

impl std::fmt::Display for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let format = match self.format {
            ImageFormat::Ptx => "PTX",
            ImageFormat::Cubin => "SASS",
        };
        write!(f, "sm_{} {format}", self.sm)
    }
}

impl Image {
    /// The image's bytes, read and decompressed: PTX text or a cubin.
    ///
    /// # Errors
    /// [`Error::KernelImage`] (naming `what`, the module) if a file is missing or not the one
    /// the build recorded, or the bytes do not decompress.
    pub fn decode(&self, what: &str) -> Result<Cow<'static, [u8]>> {
        let fail = |reason: String| Error::KernelImage {
            module: what.to_string(),
            image: self.to_string(),
            reason,
        };
        let stored: Cow<'static, [u8]> = match self.bytes {
            ImageBytes::Embedded(bytes) => Cow::Borrowed(bytes),
            ImageBytes::File { name, len, fnv1a } => {
                let path = image_dir().join(name);
                let bytes = std::fs::read(&path)
                    .map_err(|e| fail(format!("cannot read {}: {e}", path.display())))?;
                if bytes.len() as u64 != len || self::fnv1a(&bytes) != fnv1a {
                    return Err(fail(format!(
                        "{} is not the file this program was built with ({} bytes, {len} expected)",
                        path.display(),
                        bytes.len()
                    )));
                }
                Cow::Owned(bytes)
            }
        };
        match self.encoding {
            Encoding::Plain => Ok(stored),
            Encoding::Zstd => {
                let mut out = Vec::new();
                ruzstd::decoding::StreamingDecoder::new(&stored[..])
                    .map_err(|e| fail(format!("not a zstd frame: {e}")))?
                    .read_to_end(&mut out)
                    .map_err(|e| fail(format!("zstd: {e}")))?;
                Ok(Cow::Owned(out))
            }
        }
    }
}

/// Where [`ImageBytes::File`] images are read from: `$GPU_HOST_KERNEL_DIR`, else `kernels/`
/// beside the running executable's folder.
pub fn image_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("GPU_HOST_KERNEL_DIR") {
        return PathBuf::from(dir);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("kernels")))
        .unwrap_or_else(|| PathBuf::from("kernels"))
}

/// The 64-bit FNV-1a hash of `bytes`, which [`ImageBytes::File`] records.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl ModuleTable {
    /// The image a device of compute capability `major.minor` loads: with `sass`, the cubin
    /// of the highest architecture of the device's major version not above it (SASS runs on
    /// the minor versions at or above its own); else the PTX of the highest architecture not
    /// above the device. `None` if every image is newer than the device.
    pub fn pick(&self, major: i32, minor: i32, sass: bool) -> Option<&'static Image> {
        let images: &'static [Image] = self.images;
        let device = (major.max(0) * 10 + minor.max(0)) as u32;
        let cubin = images
            .iter()
            .rev()
            .filter(|i| i.format == ImageFormat::Cubin)
            .find(|i| i.sm / 10 == device / 10 && i.sm <= device);
        if sass && let Some(image) = cubin {
            return Some(image);
        }
        images
            .iter()
            .rev()
            .filter(|i| i.format == ImageFormat::Ptx)
            .find(|i| i.sm <= device)
    }

    /// The architectures of its PTX images, e.g. `"sm_70, sm_90"`.
    pub fn ptx_archs(&self) -> String {
        self.images
            .iter()
            .filter(|i| i.format == ImageFormat::Ptx)
            .map(|i| format!("sm_{}", i.sm))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl KernelTable {
    /// The module holding the kernel or host-visible global `name`.
    pub fn module_of(&self, name: &str) -> Option<&'static ModuleTable> {
        let modules: &'static [ModuleTable] = self.modules;
        modules
            .iter()
            .find(|m| m.entries.iter().any(|e| e.name == name) || m.globals.contains(&name))
    }

    /// The module named `name`.
    pub fn module(&self, name: &str) -> Option<&'static ModuleTable> {
        let modules: &'static [ModuleTable] = self.modules;
        modules.iter().find(|m| m.name == name)
    }

    /// The PTX text of every module for architecture `sm`, decompressed: `(module, text)` in the
    /// table's order, for checks and tools that read the PTX (loading needs none of this).
    ///
    /// # Errors
    /// [`Error::KernelImage`] if an image cannot be read or does not decompress.
    pub fn ptx_texts(&self, sm: u32) -> Result<Vec<(&'static str, String)>> {
        let modules: &'static [ModuleTable] = self.modules;
        let mut out = Vec::new();
        for module in modules {
            for image in module.images {
                if image.sm == sm && image.format == ImageFormat::Ptx {
                    let bytes = image.decode(module.name)?;
                    out.push((module.name, String::from_utf8_lossy(&bytes).into_owned()));
                }
            }
        }
        Ok(out)
    }

    /// The architectures of the PTX images, ascending and each once.
    pub fn ptx_sms(&self) -> Vec<u32> {
        let mut archs: Vec<u32> = self
            .modules
            .iter()
            .flat_map(|m| m.images.iter())
            .filter(|i| i.format == ImageFormat::Ptx)
            .map(|i| i.sm)
            .collect();
        archs.sort_unstable();
        archs.dedup();
        archs
    }

    /// Every kernel's signature, module by module.
    pub fn entries(&self) -> impl Iterator<Item = &'static EntrySignature> {
        let modules: &'static [ModuleTable] = self.modules;
        modules.iter().flat_map(|m| m.entries.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn image(sm: u32, format: ImageFormat) -> Image {
        Image {
            sm,
            format,
            encoding: Encoding::Plain,
            bytes: ImageBytes::Embedded(b"x"),
        }
    }

    static IMAGES: [Image; 4] = [
        image(70, ImageFormat::Ptx),
        image(80, ImageFormat::Cubin),
        image(90, ImageFormat::Ptx),
        image(90, ImageFormat::Cubin),
    ];
    static MODULE: ModuleTable = ModuleTable {
        name: "m",
        entries: &[],
        globals: &[],
        images: &IMAGES,
    };

    #[test]
    fn picks_sass_of_the_major_version_else_the_highest_ptx_not_above() {
        let pick = |major, minor, sass| MODULE.pick(major, minor, sass).map(|i| i.to_string());
        assert_eq!(pick(9, 0, true).as_deref(), Some("sm_90 SASS"));
        assert_eq!(pick(9, 0, false).as_deref(), Some("sm_90 PTX"));
        assert_eq!(pick(8, 6, true).as_deref(), Some("sm_80 SASS"));
        assert_eq!(pick(8, 9, true).as_deref(), Some("sm_80 SASS"));
        assert_eq!(pick(8, 0, false).as_deref(), Some("sm_70 PTX"));
        assert_eq!(pick(7, 5, true).as_deref(), Some("sm_70 PTX"));
        assert_eq!(pick(12, 0, true).as_deref(), Some("sm_90 PTX"));
        assert_eq!(pick(10, 0, true).as_deref(), Some("sm_90 PTX"));
        assert_eq!(pick(6, 1, true), None);
        assert_eq!(MODULE.ptx_archs(), "sm_70, sm_90");
    }

    #[test]
    fn images_decode_and_files_are_checked() {
        let plain = image(70, ImageFormat::Ptx);
        assert_eq!(&*plain.decode("m").unwrap(), b"x");
        let garbage = Image {
            encoding: Encoding::Zstd,
            ..image(70, ImageFormat::Ptx)
        };
        let e = garbage.decode("m").unwrap_err();
        assert!(matches!(e, Error::KernelImage { .. }), "{e:?}");
        let missing = Image {
            bytes: ImageBytes::File {
                name: "no-such-image.zst",
                len: 1,
                fnv1a: 0,
            },
            ..image(90, ImageFormat::Cubin)
        };
        let e = missing.decode("m").unwrap_err().to_string();
        assert!(
            e.contains("sm_90 SASS") && e.contains("no-such-image.zst"),
            "{e}"
        );
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
