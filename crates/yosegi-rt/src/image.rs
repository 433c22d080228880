//! The program image: what an executable built by `yosegi cc` carries for the runtime (the
//! compiled IR, the sources its diagnostics point into, how staged variants were made, and
//! the kernels compiled ahead of time for the GPUs named at the link,
//! `runtime::cuda::embedded`). The
//! linker embeds it as bytes; the runtime library reads it back at start, so the executable
//! never runs the front end.
//!
//! Format: the magic `YOSEGI-IMAGE`, a format version byte, then the bincode of
//! [`ImageContents`]. The version changes whenever the IR's shape does; an executable built
//! by another version is refused with a message rather than misread.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ir::Module;
use crate::runtime::cuda::embedded::KernelImage;
use crate::opt::StagingMode;
use crate::source::{JoinedLineRecord, SourceSet, SourceUnit};

const MAGIC: &[u8] = b"YOSEGI-IMAGE";
/// Bump with any change to the IR's types (or to `ImageContents`).
const FORMAT_VERSION: u8 = 4;

/// What the image holds, as read back.
#[derive(Deserialize)]
struct ImageContents {
    module: Module,
    /// Each translation unit: the path given to the compiler, its preprocessed text and the
    /// directive lines cpp joined, as the compiler located them (`SourceUnit::joined_lines`).
    sources: Vec<(PathBuf, String, Vec<JoinedLineRecord>)>,
    staging: StagingMode,
    kernel_images: Vec<KernelImage>,
}

/// The same fields, borrowed from the compiled program for writing (bincode encodes a
/// reference as the value, so [`ImageContents`] reads it back).
#[derive(Serialize)]
struct ImageContentsRef<'a> {
    module: &'a Module,
    sources: Vec<(&'a Path, &'a str, Vec<JoinedLineRecord>)>,
    staging: StagingMode,
    kernel_images: &'a [KernelImage],
}

/// A compiled program as the runtime needs it.
#[derive(Debug)]
pub struct ProgramImage {
    pub module: Module,
    pub sources: SourceSet,
    pub staging: StagingMode,
    /// Kernels compiled at the link (empty when the link had no NVRTC).
    pub kernel_images: Vec<KernelImage>,
}

impl ProgramImage {
    /// The image bytes of a compiled program.
    pub fn encode(module: &Module, sources: &SourceSet, staging: StagingMode, kernel_images: &[KernelImage]) -> Vec<u8> {
        let contents = ImageContentsRef {
            module,
            sources: sources.units.iter().map(|u| (u.path.as_path(), u.text.as_str(), u.joined_lines())).collect(),
            staging,
            kernel_images,
        };
        let mut bytes = MAGIC.to_vec();
        bytes.push(FORMAT_VERSION);
        bytes.extend(bincode::serialize(&contents).expect("the IR serialises: plain data"));
        bytes
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<ProgramImage, String> {
        let Some(rest) = bytes.strip_prefix(MAGIC) else {
            return Err("the executable holds no Yosegi program image".to_string());
        };
        match rest.first() {
            Some(&FORMAT_VERSION) => {}
            Some(v) => {
                return Err(format!(
                    "the executable was built by a Yosegi whose program image is version {v}; this runtime reads version {FORMAT_VERSION}: rebuild it"
                ));
            }
            None => return Err("the program image is empty".to_string()),
        }
        let contents: ImageContents = bincode::deserialize(&rest[1..]).map_err(|e| format!("the program image is damaged: {e}"))?;
        let mut sources = SourceSet::default();
        sources.units = contents.sources.into_iter().map(|(path, text, joined)| SourceUnit::with_joined_lines(path, text, joined)).collect();
        Ok(ProgramImage { module: contents.module, sources, staging: contents.staging, kernel_images: contents.kernel_images })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_foreign_or_other_version_image_is_refused_with_a_reason() {
        assert!(ProgramImage::from_bytes(b"ELF").unwrap_err().contains("no Yosegi program image"));
        let mut bytes = MAGIC.to_vec();
        bytes.push(FORMAT_VERSION + 1);
        assert!(ProgramImage::from_bytes(&bytes).unwrap_err().contains("rebuild it"));
        let mut bytes = MAGIC.to_vec();
        bytes.extend([FORMAT_VERSION, 0xff, 0xff]);
        assert!(ProgramImage::from_bytes(&bytes).unwrap_err().contains("damaged"));
    }
}
