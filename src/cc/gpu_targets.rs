//! The GPU architectures `yosegi cc` compiles kernels for at the link, from nvc's flag shape:
//! `-gpu=cc90,cc80` (also `-ta=tesla:cc80`), `-gpu=ccall` (every architecture NVRTC of CUDA 13
//! targets), `-gpu=ccnative` (this machine's GPUs). Without one: this machine's GPUs, else
//! [`DEFAULT_ARCHITECTURES`]. PTX for the lowest architecture is always added, so that a
//! later GPU runs the executable through the driver's JIT. Other items of these flags
//! (`managed`, `lineinfo`, `cuda12.4`, ...) are dropped with the OpenACC flags' warning.

use yosegi_rt::runtime::cuda::embedded::Target;

/// Compiled for when neither the flags nor the build machine name a GPU: the data-centre
/// GPUs of the last generations (A100, H100/H200); PTX of the first runs on later ones.
pub const DEFAULT_ARCHITECTURES: &[u32] = &[80, 90];

/// `-gpu=ccall`: the architectures NVRTC of CUDA 13 compiles for.
pub const ALL_ARCHITECTURES: &[u32] = &[75, 80, 86, 87, 89, 90, 100, 120];

/// What the flags asked for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuChoice {
    /// Architectures named (`ccXY`, `ccall`).
    pub named: Vec<u32>,
    /// `ccnative`.
    pub native: bool,
}

impl GpuChoice {
    /// Reads one `-gpu=` or `-ta=` flag; returns the items it did not use (for the warning),
    /// with the flag the user wrote (`managed in -gpu=managed,cc90`), or `None` when it used
    /// them all. `Err` for a `cc` item that is not an architecture.
    pub fn read_flag(&mut self, flag: &str) -> Result<Option<String>, String> {
        let items = match flag.split_once('=') {
            Some((_, items)) => items,
            None => return Ok(Some(flag.to_string())),
        };
        let mut unused = Vec::new();
        // `-ta=tesla:cc80,managed`: the target's name, then its sub-options.
        let items = items.strip_prefix("tesla:").or_else(|| items.strip_prefix("nvidia:")).unwrap_or(items);
        for item in items.split([',', ':']).filter(|i| !i.is_empty()) {
            match item {
                "ccall" => self.named.extend_from_slice(ALL_ARCHITECTURES),
                "ccnative" => self.native = true,
                _ if item.starts_with("cc") && item[2..].starts_with(|c: char| c.is_ascii_digit()) => {
                    let arch: u32 = item[2..].parse().map_err(|_| format!("`{flag}`: `{item}` is not a GPU architecture (write cc80, cc90, ...)"))?;
                    if !(50..=999).contains(&arch) {
                        return Err(format!("`{flag}`: `{item}` is not a GPU architecture (write cc80, cc90, ...)"));
                    }
                    self.named.push(arch);
                }
                "tesla" | "nvidia" => {}
                _ => unused.push(item),
            }
        }
        Ok((!unused.is_empty()).then(|| format!("{} in {flag}", unused.join(","))))
    }

    /// The targets to compile for, given this machine's GPUs (`local`): cubins for each
    /// architecture, and PTX for the lowest.
    pub fn targets(&self, local: &[u32]) -> Vec<Target> {
        let mut archs = self.named.clone();
        if self.native || archs.is_empty() {
            archs.extend_from_slice(local);
        }
        if archs.is_empty() {
            archs.extend_from_slice(DEFAULT_ARCHITECTURES);
        }
        archs.sort_unstable();
        archs.dedup();
        let mut targets: Vec<Target> = archs.iter().map(|&a| Target::Cubin(a)).collect();
        targets.push(Target::Ptx(archs[0]));
        targets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvc_flags_name_architectures_and_keep_other_items_for_the_warning() {
        let mut choice = GpuChoice::default();
        assert_eq!(choice.read_flag("-gpu=cc90,cc80").unwrap(), None);
        assert_eq!(choice.read_flag("-gpu=managed,cc86,lineinfo").unwrap().as_deref(), Some("managed,lineinfo in -gpu=managed,cc86,lineinfo"));
        assert_eq!(choice.read_flag("-ta=tesla,8.0").unwrap().as_deref(), Some("8.0 in -ta=tesla,8.0"));
        assert_eq!(choice.read_flag("-ta=tesla:cc70").unwrap(), None);
        assert_eq!(choice.named, vec![90, 80, 86, 70]);
        assert!(choice.read_flag("-gpu=cc9x").unwrap_err().contains("cc80, cc90"));
        assert_eq!(
            choice.targets(&[90]),
            vec![Target::Cubin(70), Target::Cubin(80), Target::Cubin(86), Target::Cubin(90), Target::Ptx(70)]
        );
    }

    #[test]
    fn without_flags_the_machine_s_gpus_else_the_documented_list_and_ptx() {
        let choice = GpuChoice::default();
        assert_eq!(choice.targets(&[90]), vec![Target::Cubin(90), Target::Ptx(90)]);
        assert_eq!(choice.targets(&[]), vec![Target::Cubin(80), Target::Cubin(90), Target::Ptx(80)]);
        let mut native = GpuChoice::default();
        native.read_flag("-gpu=ccnative,cc80").unwrap();
        assert_eq!(native.targets(&[90]), vec![Target::Cubin(80), Target::Cubin(90), Target::Ptx(80)]);
    }
}
