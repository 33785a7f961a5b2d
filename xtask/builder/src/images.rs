//! A build's images: the crate's PTX cut into modules ([`split_modules`]), SASS assembled from
//! them with `ptxas` ([`Builder::sass`](crate::Builder::sass)), the prebuilt folder's
//! zstd-compressed copies, and the [`KernelTable`](https://docs.rs/gpu_host) expression a
//! crate embeds ([`Built::write_table`]).

use std::path::{Path, PathBuf};

#[cfg(feature = "record")]
use crate::DIGEST_FILE;
use crate::split::split_modules;
use crate::{Arch, BuildError, entry_params};

/// What one image holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    /// PTX text.
    Ptx,
    /// SASS: a cubin made by `ptxas`.
    Cubin,
}

impl Format {
    /// The file extension: `ptx` or `cubin`.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Ptx => "ptx",
            Format::Cubin => "cubin",
        }
    }
}

/// One image of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuiltImage {
    /// Its architecture.
    pub arch: Arch,
    /// PTX or SASS.
    pub format: Format,
    /// The file.
    pub path: PathBuf,
    /// Whether the file is zstd-compressed (the prebuilt folder's).
    pub compressed: bool,
}

/// One PTX module of the kernel crate ([`split_modules`]) and its images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuiltModule {
    /// The module's name (`sort` for the kernels of `my_kernels::sort`).
    pub name: String,
    /// Its entries with the byte size of each parameter, in the order of the PTX.
    pub entries: Vec<(String, Vec<usize>)>,
    /// Its host-visible globals.
    pub globals: Vec<String>,
    /// Its images: PTX per architecture, ascending, then SASS per architecture.
    pub images: Vec<BuiltImage>,
}

/// The file name of one image: `<lib>-<module>_sm_XX.ptx` (or `.cubin`).
pub fn image_file(lib: &str, module: &str, arch: Arch, format: Format) -> String {
    format!("{lib}-{module}_{arch}.{}", format.extension())
}

/// Cuts each architecture's whole PTX into modules, writes each module's PTX into `out_dir`
/// (a file whose content did not change is left untouched), and checks that every
/// architecture has the same modules with the same entries.
pub(crate) fn split_into(
    lib: &str,
    whole: &[(Arch, PathBuf)],
    out_dir: &Path,
) -> Result<Vec<BuiltModule>, BuildError> {
    let mut modules: Vec<BuiltModule> = Vec::new();
    for (arch, path) in whole {
        let text = read_text(path)?;
        let parts = split_modules(lib, &text).map_err(|reason| BuildError::InvalidPtx {
            arch: *arch,
            reason,
        })?;
        if !modules.is_empty() {
            let names = |m: &[BuiltModule]| m.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
            let here: Vec<String> = parts.iter().map(|p| p.name.clone()).collect();
            if names(&modules) != here {
                return Err(BuildError::InvalidPtx {
                    arch: *arch,
                    reason: format!("its modules {here:?} differ from {:?}", names(&modules)),
                });
            }
        }
        for (i, part) in parts.into_iter().enumerate() {
            let dest = out_dir.join(image_file(lib, &part.name, *arch, Format::Ptx));
            write_if_changed(&dest, part.ptx.as_bytes())?;
            let entries = signatures(*arch, &part.ptx)?;
            let image = BuiltImage {
                arch: *arch,
                format: Format::Ptx,
                path: dest,
                compressed: false,
            };
            match modules.get_mut(i) {
                Some(m) if m.entries == entries => m.images.push(image),
                Some(m) => {
                    return Err(BuildError::InvalidPtx {
                        arch: *arch,
                        reason: format!(
                            "module {}: its entries differ between architectures",
                            m.name
                        ),
                    });
                }
                None => modules.push(BuiltModule {
                    name: part.name,
                    entries,
                    globals: part.globals,
                    images: vec![image],
                }),
            }
        }
    }
    Ok(modules)
}

/// Each entry of `ptx` with its parameters' byte sizes.
fn signatures(arch: Arch, ptx: &str) -> Result<Vec<(String, Vec<usize>)>, BuildError> {
    Ok(entry_params(ptx)
        .map_err(|reason| BuildError::InvalidPtx { arch, reason })?
        .into_iter()
        .map(|(name, params)| (name.to_string(), params.iter().map(|p| p.bytes).collect()))
        .collect())
}

/// Assembles every module's SASS for each of `archs` with `ptxas`, from the PTX of the highest
/// architecture not above it, into `out_dir` (one thread per architecture).
pub(crate) fn assemble(
    lib: &str,
    modules: &mut [BuiltModule],
    archs: &[Arch],
    ptxas: &Path,
    lineinfo: bool,
    out_dir: &Path,
) -> Result<(), BuildError> {
    let mut jobs: Vec<(usize, Arch, PathBuf, PathBuf)> = Vec::new();
    for (index, module) in modules.iter().enumerate() {
        for &arch in archs {
            let source = module
                .images
                .iter()
                .filter(|i| i.format == Format::Ptx && i.arch <= arch)
                .max_by_key(|i| i.arch)
                .ok_or(BuildError::NoPtxForSass { arch })?;
            let dest = out_dir.join(image_file(lib, &module.name, arch, Format::Cubin));
            jobs.push((index, arch, source.path.clone(), dest));
        }
    }
    let results: Vec<Result<(), BuildError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = archs
            .iter()
            .map(|&arch| {
                let mine: Vec<_> = jobs.iter().filter(|j| j.1 == arch).cloned().collect();
                scope.spawn(move || {
                    for (_, arch, source, dest) in mine {
                        run_ptxas(ptxas, arch, lineinfo, &source, &dest)?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(BuildError::PtxasPanicked)))
            .collect()
    });
    results.into_iter().collect::<Result<Vec<()>, _>>()?;
    for (index, arch, _, dest) in jobs {
        modules[index].images.push(BuiltImage {
            arch,
            format: Format::Cubin,
            path: dest,
            compressed: false,
        });
    }
    Ok(())
}

fn run_ptxas(
    ptxas: &Path,
    arch: Arch,
    lineinfo: bool,
    source: &Path,
    dest: &Path,
) -> Result<(), BuildError> {
    let mut cmd = std::process::Command::new(ptxas);
    cmd.arg(format!("-arch={arch}"));
    if lineinfo {
        cmd.arg(crate::options::PTXAS_LINE_INFO);
    }
    let output = cmd
        .arg(source)
        .arg("-o")
        .arg(dest)
        .output()
        .map_err(|source| BuildError::Spawn {
            program: ptxas.display().to_string(),
            source,
        })?;
    if !output.status.success() {
        return Err(BuildError::Ptxas {
            arch,
            ptx: source.to_path_buf(),
            stderr: crate::tail(&String::from_utf8_lossy(&output.stderr), 30),
        });
    }
    Ok(())
}

/// `ptxas`: `$PTXAS`, else on `PATH`, else in a CUDA toolkit (`$CUDA_HOME`, `/usr/local/cuda`),
/// else in the site-packages of PyPI's `nvidia-cuda-nvcc-cu12` wheel (no GPU needed).
///
/// # Errors
/// [`BuildError::NoPtxas`] naming where it looked.
pub fn find_ptxas() -> Result<PathBuf, BuildError> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("PTXAS") {
        candidates.push(p.into());
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("ptxas")));
    }
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        candidates.push(PathBuf::from(home).join("bin/ptxas"));
    }
    candidates.push("/usr/local/cuda/bin/ptxas".into());
    for python in ["python3", "python"] {
        // Every folder pip may have put the wheel in: the interpreter's site-packages, and the
        // user's (where pip installs when the former is not writable or with --user).
        if let Ok(out) = std::process::Command::new(python)
            .args([
                "-c",
                "import site, sysconfig; print('\\n'.join([sysconfig.get_paths()['purelib'], \
                 site.getusersitepackages(), *site.getsitepackages()]))",
            ])
            .output()
            && out.status.success()
        {
            for site in String::from_utf8_lossy(&out.stdout).lines() {
                candidates.push(Path::new(site.trim()).join("nvidia/cuda_nvcc/bin/ptxas"));
            }
        }
    }
    candidates
        .into_iter()
        .find(|c| c.is_file())
        .ok_or(BuildError::NoPtxas)
}

/// The modules recorded in the prebuilt folder `dir` for `lib` and `archs`: each
/// `<lib>-<module>_sm_XX.ptx.zst` of every architecture (decoded to read its entries and
/// globals), and the `.cubin.zst` beside them. `None` if an architecture has no module.
pub(crate) fn read_prebuilt(
    dir: &Path,
    lib: &str,
    archs: &[Arch],
) -> Result<Option<Vec<BuiltModule>>, BuildError> {
    let listing = std::fs::read_dir(dir).map_err(|source| BuildError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<String> = listing
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&format!("{lib}-")) && n.ends_with(".zst"))
        .collect();
    files.sort();
    let Some(&lowest) = archs.first() else {
        return Ok(None);
    };
    let suffix = format!("_{lowest}.ptx.zst");
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| {
            Some(
                f.strip_suffix(&suffix)?
                    .strip_prefix(&format!("{lib}-"))?
                    .to_string(),
            )
        })
        .collect();
    if names.is_empty() {
        return Ok(None);
    }
    let mut modules = Vec::new();
    for name in names {
        let mut images = Vec::new();
        for format in [Format::Ptx, Format::Cubin] {
            for arch in all_archs(&files, lib, &name, format) {
                if format == Format::Ptx && !archs.contains(&arch) {
                    continue;
                }
                let file = format!("{}.zst", image_file(lib, &name, arch, format));
                images.push(BuiltImage {
                    arch,
                    format,
                    path: dir.join(file),
                    compressed: true,
                });
            }
        }
        if archs.iter().any(|a| {
            !images
                .iter()
                .any(|i| i.format == Format::Ptx && i.arch == *a)
        }) {
            return Ok(None);
        }
        let newest = images
            .iter()
            .filter(|i| i.format == Format::Ptx)
            .max_by_key(|i| i.arch)
            .map(|i| (i.arch, i.path.clone()));
        let Some((arch, path)) = newest else {
            return Ok(None);
        };
        let text = String::from_utf8(decode(&path)?).map_err(|_| BuildError::InvalidPtx {
            arch,
            reason: format!("{} is not UTF-8", path.display()),
        })?;
        let part = split_modules(lib, &text)
            .map_err(|reason| BuildError::InvalidPtx { arch, reason })?
            .into_iter()
            .next()
            .ok_or_else(|| BuildError::InvalidPtx {
                arch,
                reason: format!("{} holds no kernel", path.display()),
            })?;
        modules.push(BuiltModule {
            entries: signatures(arch, &text)?,
            globals: part.globals,
            name,
            images,
        });
    }
    Ok(Some(modules))
}

/// The architectures of `module`'s files of `format` among `files`, ascending.
fn all_archs(files: &[String], lib: &str, module: &str, format: Format) -> Vec<Arch> {
    let prefix = format!("{lib}-{module}_sm_");
    let suffix = format!(".{}.zst", format.extension());
    let mut archs: Vec<Arch> = files
        .iter()
        .filter_map(|f| f.strip_prefix(&prefix)?.strip_suffix(&suffix)?.parse().ok())
        .map(Arch)
        .collect();
    archs.sort();
    archs
}

/// A prebuilt image's bytes, decompressed (or a fresh one's as they are).
///
/// # Errors
/// [`BuildError::Io`] if the file cannot be read; [`BuildError::Decode`] if it is not zstd.
pub fn read_image(image: &BuiltImage) -> Result<Vec<u8>, BuildError> {
    if image.compressed {
        decode(&image.path)
    } else {
        std::fs::read(&image.path).map_err(|source| BuildError::Io {
            path: image.path.clone(),
            source,
        })
    }
}

fn decode(path: &Path) -> Result<Vec<u8>, BuildError> {
    use std::io::Read;
    let bytes = std::fs::read(path).map_err(|source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    ruzstd::decoding::StreamingDecoder::new(&bytes[..])
        .map_err(|e| e.to_string())
        .and_then(|mut d| d.read_to_end(&mut out).map_err(|e| e.to_string()))
        .map_err(|reason| BuildError::Decode {
            path: path.to_path_buf(),
            reason,
        })?;
    Ok(out)
}

/// Compresses every image of `modules` into `dir` (zstd, level 19) as
/// `<file name>.zst`, removes the other `<lib>-*` images there, and writes `digest`.
#[cfg(feature = "record")]
pub(crate) fn record(
    dir: &Path,
    lib: &str,
    modules: &[BuiltModule],
    digest: &str,
) -> Result<(), BuildError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BuildError::Io { path, source }
    };
    let mut kept = Vec::new();
    for module in modules {
        for image in &module.images {
            let bytes = read_image(image)?;
            let name = format!(
                "{}.zst",
                image_file(lib, &module.name, image.arch, image.format)
            );
            let dest = dir.join(&name);
            let same = dest.is_file() && decode(&dest).ok().as_deref() == Some(&bytes[..]);
            if !same {
                let packed = zstd::bulk::compress(&bytes, 19).map_err(io(&dest))?;
                std::fs::write(&dest, packed).map_err(io(&dest))?;
            }
            kept.push(name);
        }
    }
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let name = entry
            .map_err(io(dir))?
            .file_name()
            .to_string_lossy()
            .into_owned();
        let ours = name.starts_with(&format!("{lib}-")) || name.starts_with(&format!("{lib}_sm_"));
        if ours && !kept.contains(&name) {
            std::fs::remove_file(dir.join(&name)).map_err(io(&dir.join(&name)))?;
        }
    }
    let dest = dir.join(DIGEST_FILE);
    let text = format!(
        "# SHA-256 of the inputs these kernels were built from (ptx_builder::Builder),\n\
         # written by `cargo xtask build-ptx --prebuilt`.\n{digest}\n"
    );
    std::fs::write(&dest, text).map_err(io(&dest))
}

/// Writes `bytes` to `dest` unless it already holds them.
pub(crate) fn write_if_changed(dest: &Path, bytes: &[u8]) -> Result<(), BuildError> {
    if std::fs::read(dest).ok().as_deref() == Some(bytes) {
        return Ok(());
    }
    std::fs::write(dest, bytes).map_err(|source| BuildError::Io {
        path: dest.to_path_buf(),
        source,
    })
}

fn read_text(path: &Path) -> Result<String, BuildError> {
    std::fs::read_to_string(path).map_err(|source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The Rust expression of a `gpu_host::KernelTable` for `lib`'s `modules`: each image an
/// `include_bytes!` of its file, or (with `beside` set) a file of that folder, copied there,
/// read at run time ([`Built::write_table_beside`](crate::Built::write_table_beside)).
pub(crate) fn table_source(
    lib: &str,
    modules: &[BuiltModule],
    beside: Option<&Path>,
) -> Result<String, BuildError> {
    let mut out = format!(
        "// The kernels of `{lib}` (written by ptx_builder): one PTX module per top-level Rust\n\
         // module, each image PTX or SASS per architecture.\n::gpu_host::KernelTable {{\n    krate: {lib:?},\n    modules: &[\n"
    );
    for module in modules {
        out.push_str(&format!(
            "        ::gpu_host::ModuleTable {{\n            name: {:?},\n            entries: &[\n",
            module.name
        ));
        for (name, params) in &module.entries {
            out.push_str(&format!(
                "                ::gpu_host::EntrySignature {{ name: {name:?}, params: &{params:?} }},\n"
            ));
        }
        out.push_str(&format!(
            "            ],\n            globals: &{:?},\n            images: &[\n",
            module.globals
        ));
        let mut images = module.images.clone();
        images.sort_by_key(|i| (i.arch, i.format));
        for image in &images {
            let format = match image.format {
                Format::Ptx => "Ptx",
                Format::Cubin => "Cubin",
            };
            let encoding = if image.compressed { "Zstd" } else { "Plain" };
            let bytes = match beside {
                None => format!(
                    "::gpu_host::ImageBytes::Embedded(include_bytes!({:?}))",
                    image.path.display().to_string()
                ),
                Some(dir) => {
                    let name = image
                        .path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let dest = dir.join(&name);
                    let data = std::fs::read(&image.path).map_err(|source| BuildError::Io {
                        path: image.path.clone(),
                        source,
                    })?;
                    write_if_changed(&dest, &data)?;
                    format!(
                        "::gpu_host::ImageBytes::File {{ name: {name:?}, len: {}, fnv1a: {:#x} }}",
                        data.len(),
                        fnv1a(&data)
                    )
                }
            };
            out.push_str(&format!(
                "                ::gpu_host::Image {{ sm: {}, format: ::gpu_host::ImageFormat::{format}, encoding: ::gpu_host::Encoding::{encoding}, bytes: {bytes} }},\n",
                image.arch.0
            ));
        }
        out.push_str("            ],\n        },\n");
    }
    out.push_str("    ],\n}\n");
    Ok(out)
}

/// The 64-bit FNV-1a hash (`gpu_host::fnv1a`, which checks it at run time).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
