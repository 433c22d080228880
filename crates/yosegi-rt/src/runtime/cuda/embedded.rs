//! Kernel images the executable carries: `yosegi cc` compiles every grid kernel of the
//! program in the forms a launch takes first ([`super::jit::ahead_variants`]) and every
//! reduction's fold kernel, for each GPU architecture the user names (cubin) plus PTX for the
//! lowest, in parallel, and embeds them in the program image ([`crate::image`]). At run time
//! a GPU whose architecture has a cubin (or a cubin of its major version and a lower minor
//! one, which it runs) loads it with no compiler; another GPU of a later architecture loads
//! the PTX, which the driver compiles for it; only a kernel with neither goes to NVRTC.
//!
//! An image is found by the FNV-1a hash of the CUDA C the runtime writes for the launch: the
//! same writer, options and sources at link time and at run time give the same text, so a
//! changed program or compiler can never meet a stale image (it misses and is compiled).
//! The images are part of the executable, so nothing is read from places others can write
//! (docs/SECURITY.md's rule for the kernel cache holds without the cache).

use std::collections::HashMap;
use std::sync::OnceLock;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::back::cuda::kernel_symbol;
use crate::ir::Module;
use crate::source::SourceSet;

use super::cache::fnv1a64;
use super::driver::{self, Image};
use super::fold;
use super::jit::{ahead_variants, prepared_source};

/// What an image runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum Target {
    /// A cubin for `sm_<arch>` (`arch` as `major * 10 + minor`).
    Cubin(u32),
    /// PTX for `compute_<arch>`: any GPU of that architecture or a later one, compiled by the
    /// driver when loaded.
    Ptx(u32),
}

impl Target {
    /// `sm_90`, `compute_80 PTX`.
    pub fn describe(self) -> String {
        match self {
            Target::Cubin(a) => format!("sm_{a}"),
            Target::Ptx(a) => format!("compute_{a} PTX"),
        }
    }

    /// Whether a GPU of `arch` runs this image: a cubin runs on its own major version at the
    /// same or a later minor one, PTX on its architecture and later ones.
    pub fn runs_on(self, arch: u32) -> bool {
        match self {
            Target::Cubin(a) => a / 10 == arch / 10 && a % 10 <= arch % 10,
            Target::Ptx(a) => a <= arch,
        }
    }
}

/// One embedded image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelImage {
    /// [`fnv1a64`] of the CUDA C it was compiled from.
    pub source_hash: u64,
    pub target: Target,
    pub bytes: Vec<u8>,
}

/// The images of the running executable, by source hash.
#[derive(Default)]
struct Embedded {
    by_source: HashMap<u64, Vec<(Target, Vec<u8>)>>,
    targets: Vec<Target>,
}

static EMBEDDED: OnceLock<Embedded> = OnceLock::new();

/// Makes `images` the executable's (once, at start; later calls are ignored).
pub fn install(images: Vec<KernelImage>) {
    let mut embedded = Embedded::default();
    for image in images {
        if !embedded.targets.contains(&image.target) {
            embedded.targets.push(image.target);
        }
        embedded.by_source.entry(image.source_hash).or_default().push((image.target, image.bytes));
    }
    embedded.targets.sort();
    let _ = EMBEDDED.set(embedded);
}

/// The targets the executable carries images for (empty: none, as under `yosegi run`).
pub fn targets() -> Vec<Target> {
    EMBEDDED.get().map(|e| e.targets.clone()).unwrap_or_default()
}

/// Whether the executable carries images a GPU of `arch` can run.
pub fn serves(arch: u32) -> bool {
    targets().iter().any(|t| t.runs_on(arch))
}

/// The embedded image of `source` a GPU of `arch` runs best: its own cubin, else a cubin of
/// an earlier minor version, else the latest PTX it can load.
pub fn lookup(source: &str, arch: u32) -> Option<(Image, Target)> {
    let images = EMBEDDED.get()?.by_source.get(&fnv1a64(source.as_bytes()))?;
    best_for(images, arch).map(|(target, bytes)| {
        let image = match target {
            Target::Cubin(_) => Image::Cubin(bytes.clone()),
            Target::Ptx(_) => Image::Ptx(bytes.clone()),
        };
        (image, target)
    })
}

fn best_for(images: &[(Target, Vec<u8>)], arch: u32) -> Option<(Target, &Vec<u8>)> {
    let rank = |t: Target| match t {
        Target::Cubin(a) => (1, a),
        Target::Ptx(a) => (0, a),
    };
    images.iter().filter(|(t, _)| t.runs_on(arch)).max_by_key(|(t, _)| rank(*t)).map(|(t, b)| (*t, b))
}

/// Every CUDA C source the runtime may write before it knows a launch's values: each grid
/// kernel in its [`ahead_variants`] (with the program's `#line` directives, as the device
/// writes them) and each reduction's fold kernel. Deduplicated, with each one's symbol.
pub fn ahead_sources(module: &Module, sources: &SourceSet) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (_, kernel) in module.grid_kernels.iter() {
        for (width, aliasing) in ahead_variants(module, kernel) {
            let source = prepared_source(module, kernel, width, aliasing, Some(sources));
            if seen.insert(fnv1a64(source.as_bytes())) {
                out.push((kernel_symbol(kernel), source));
            }
        }
        for reduction in &kernel.reductions {
            let source = fold::fold_kernel_source(reduction.op, reduction.ty);
            if seen.insert(fnv1a64(source.as_bytes())) {
                out.push((fold::fold_symbol(reduction.op, reduction.ty), source));
            }
        }
    }
    out
}

/// A compilation NVRTC refused ahead of time (a compiler bug; the log says which).
#[derive(Debug)]
pub struct AheadFailure {
    pub symbol: String,
    pub target: Target,
    pub log: String,
}

/// Compiles the program's [`ahead_sources`] for every target, in parallel: the images made,
/// and the compilations NVRTC refused (those kernels are compiled at run time, where they would
/// fail the same way if launched). `Err`: no NVRTC here (checked before any source is written).
pub fn compile_ahead(module: &Module, sources: &SourceSet, targets: &[Target]) -> Result<(Vec<KernelImage>, Vec<AheadFailure>), String> {
    driver::check_nvrtc_library()?;
    let units = ahead_sources(module, sources);
    let work: Vec<(&(String, String), Target)> = units.iter().flat_map(|u| targets.iter().map(move |&t| (u, t))).collect();
    let results: Vec<Result<KernelImage, AheadFailure>> = work
        .par_iter()
        .map(|((symbol, source), target)| {
            let (arch, virtual_arch) = match *target {
                Target::Cubin(a) => (a, false),
                Target::Ptx(a) => (a, true),
            };
            let image = driver::nvrtc_compile_for(source, &format!("{symbol}.cu"), arch, virtual_arch)
                .map_err(|f| AheadFailure { symbol: symbol.clone(), target: *target, log: f.log })?;
            let bytes = match image {
                Image::Cubin(b) | Image::Ptx(b) => b,
            };
            Ok(KernelImage { source_hash: fnv1a64(source.as_bytes()), target: *target, bytes })
        })
        .collect();
    let mut images = Vec::new();
    let mut failures = Vec::new();
    for r in results {
        match r {
            Ok(image) => images.push(image),
            Err(failure) => failures.push(failure),
        }
    }
    Ok((images, failures))
}

/// The architectures of this machine's GPUs (`major * 10 + minor`, sorted, deduplicated);
/// empty without a driver or a GPU.
pub fn local_architectures() -> Vec<u32> {
    use cudarc::driver::sys;
    if driver::check_driver_library().is_err() {
        return Vec::new();
    }
    let mut archs = Vec::new();
    // SAFETY: the driver library and the symbols used were checked; valid out-pointers.
    unsafe {
        let mut count = 0;
        if sys::cuInit(0) != sys::CUresult::CUDA_SUCCESS || sys::cuDeviceGetCount(&mut count) != sys::CUresult::CUDA_SUCCESS {
            return Vec::new();
        }
        for ordinal in 0..count {
            let mut device: sys::CUdevice = 0;
            let (mut major, mut minor) = (0, 0);
            if sys::cuDeviceGet(&mut device, ordinal) == sys::CUresult::CUDA_SUCCESS
                && sys::cuDeviceGetAttribute(&mut major, sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) == sys::CUresult::CUDA_SUCCESS
                && sys::cuDeviceGetAttribute(&mut minor, sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device) == sys::CUresult::CUDA_SUCCESS
                && major > 0
            {
                archs.push((major * 10 + minor) as u32);
            }
        }
    }
    archs.sort_unstable();
    archs.dedup();
    archs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_runs_its_own_cubin_first_then_an_earlier_minor_then_ptx() {
        let images = vec![(Target::Ptx(80), vec![1]), (Target::Cubin(80), vec![2]), (Target::Cubin(90), vec![3])];
        assert_eq!(best_for(&images, 90).map(|(t, _)| t), Some(Target::Cubin(90)));
        assert_eq!(best_for(&images, 86).map(|(t, _)| t), Some(Target::Cubin(80)));
        // sm_100 runs no cubin of another major version, but loads compute_80 PTX.
        assert_eq!(best_for(&images, 100).map(|(t, _)| t), Some(Target::Ptx(80)));
        assert_eq!(best_for(&images, 75), None);
        assert!(Target::Ptx(80).runs_on(90) && !Target::Ptx(90).runs_on(80));
        assert!(!Target::Cubin(86).runs_on(80));
    }
}
