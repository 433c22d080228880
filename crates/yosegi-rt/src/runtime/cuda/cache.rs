//! The on-disk kernel cache: compiled kernel images (cubin or PTX) kept across runs, so that a
//! program run again skips NVRTC. An entry is keyed by a hash of everything the image depends
//! on — the emitted CUDA source (which carries any specialised values), the GPU architecture and
//! the NVRTC version — and lives in `$YOSEGI_CACHE_DIR`, else `$XDG_CACHE_HOME/yosegi/kernels`,
//! else `~/.cache/yosegi/kernels`.
//!
//! The cache is an optimisation only: an unreadable, corrupt or unwritable entry is a miss (the
//! kernel is compiled as if there were no cache), with one warning per process so that a broken
//! cache directory is noticed without flooding the output. Entries are written to a private
//! temporary file and renamed into place, so a reader never sees half an entry, even with
//! several processes filling the same cache.
//!
//! Images are loaded into the GPU and run, so the cache is used only when nobody else can write
//! it ([`trusted_dir`]): a directory that its group or others can write, or that belongs to
//! another account, is not read and not written (one warning) unless the user says they trust
//! it with `YOSEGI_TRUST_CACHE=1` (a cache prepared by one account and shared read-only).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::private_fs;

/// Starts every entry; the version digit changes when the format does.
const MAGIC: &[u8; 8] = b"YOSEGIK1";

/// FNV-1a, 64 bits: small, stable across Rust versions and platforms (unlike `DefaultHasher`),
/// and good enough to tell kernel sources apart (a collision would also need equal lengths and
/// payload checks to pass, see [`decode`]).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= b as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The cache key of a kernel image.
pub fn image_key(source: &str, arch: u32, nvrtc_version: (i32, i32)) -> u64 {
    // The parts are joined with a byte that cannot occur in any of them (the source has no
    // NUL: NVRTC would refuse it), so different splits cannot hash the same text.
    let mut bytes = Vec::with_capacity(source.len() + 32);
    bytes.extend_from_slice(source.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(format!("sm_{arch}").as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(format!("nvrtc {}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
    fnv1a64(&bytes)
}

/// What kind of image an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    Cubin,
    /// NUL-terminated PTX text.
    Ptx,
}

impl ImageKind {
    fn tag(self) -> u8 {
        match self {
            ImageKind::Cubin => b'C',
            ImageKind::Ptx => b'P',
        }
    }
    fn from_tag(tag: u8) -> Option<ImageKind> {
        match tag {
            b'C' => Some(ImageKind::Cubin),
            b'P' => Some(ImageKind::Ptx),
            _ => None,
        }
    }
}

/// An entry: magic, kind tag, payload length and payload hash (little-endian), payload.
pub fn encode(kind: ImageKind, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 25);
    out.extend_from_slice(MAGIC);
    out.push(kind.tag());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a64(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The image in an entry, or why the entry is not one (truncated, overwritten, another format).
pub fn decode(entry: &[u8]) -> Result<(ImageKind, &[u8]), String> {
    if entry.len() < 25 || &entry[..8] != MAGIC {
        return Err("not a yosegi kernel cache entry".into());
    }
    let kind = ImageKind::from_tag(entry[8]).ok_or("unknown image kind")?;
    let len = u64::from_le_bytes(entry[9..17].try_into().map_err(|_| "short header")?);
    let hash = u64::from_le_bytes(entry[17..25].try_into().map_err(|_| "short header")?);
    let payload = &entry[25..];
    if payload.len() as u64 != len {
        return Err(format!("the entry holds {} bytes of image where its header says {len}", payload.len()));
    }
    if fnv1a64(payload) != hash {
        return Err("the image does not match its checksum".into());
    }
    Ok((kind, payload))
}

/// Where the cache lives by default (see the module doc); `None` when no home is known or
/// the home folder does not exist.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("YOSEGI_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("yosegi").join("kernels"));
    }
    // A home that does not exist is not made (as `~/.cache` would be by creating the cache).
    std::env::var_os("HOME").filter(|d| !d.is_empty() && Path::new(d).is_dir()).map(|home| PathBuf::from(home).join(".cache/yosegi/kernels"))
}

/// Whether `dir` may be loaded from: created (mode 0700) when missing, then it must pass
/// [`private_fs::check_trusted_dir`], unless `YOSEGI_TRUST_CACHE=1`. `Err` says why not.
pub fn check_cache_dir(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        private_fs::create_private_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    if std::env::var("YOSEGI_TRUST_CACHE").is_ok_and(|v| v == "1") {
        return Ok(());
    }
    private_fs::check_trusted_dir(dir)
}

/// [`default_dir`] for reading only: [`trusted_dir`] (with its warning when the folder is not
/// trusted) where the folder exists, else `None`; nothing is created (`explain` reads what
/// runs learned).
pub fn existing_trusted_dir() -> Option<PathBuf> {
    default_dir().filter(|d| d.is_dir())?;
    trusted_dir()
}

/// [`default_dir`] when [`check_cache_dir`] accepts it; otherwise `None`, with one warning per
/// process saying why and what to do.
pub fn trusted_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = default_dir()?;
        match check_cache_dir(&dir) {
            Ok(()) => Some(dir),
            Err(why) => {
                eprintln!(
                    "yosegi: warning: the kernel cache {} is not used: {why}; kernels are compiled afresh \
                     (make it writable by you alone, point YOSEGI_CACHE_DIR elsewhere, or set \
                     YOSEGI_TRUST_CACHE=1 if you trust everyone who can write it)",
                    dir.display()
                );
                None
            }
        }
    })
    .clone()
}

/// Why a lookup did not give an image.
#[derive(Debug, PartialEq, Eq)]
pub enum Miss {
    /// No entry: the normal first run.
    Absent,
    /// An entry that could not be used (already warned about).
    Unusable,
}

pub struct DiskCache {
    dir: Option<PathBuf>,
    warned: bool,
}

impl DiskCache {
    /// The cache in `dir` (`None`: no cache, every lookup misses and nothing is stored).
    pub fn at(dir: Option<PathBuf>) -> DiskCache {
        DiskCache { dir, warned: false }
    }

    fn entry_path(&self, key: u64) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{key:016x}.kernel")))
    }

    /// Warns about a cache problem, the first time only.
    fn warn(&mut self, what: String) {
        if !self.warned {
            self.warned = true;
            eprintln!("yosegi: warning: kernel cache: {what}; kernels are compiled without it");
        }
    }

    pub fn load(&mut self, key: u64) -> Result<(ImageKind, Vec<u8>), Miss> {
        let Some(path) = self.entry_path(key) else { return Err(Miss::Absent) };
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Miss::Absent),
            Err(e) => {
                self.warn(format!("cannot read {}: {e}", path.display()));
                return Err(Miss::Unusable);
            }
        };
        match decode(&bytes) {
            Ok((kind, payload)) => Ok((kind, payload.to_vec())),
            Err(why) => {
                self.warn(format!("{} is damaged ({why}); it will be replaced", path.display()));
                Err(Miss::Unusable)
            }
        }
    }

    /// Stores an image; a failure is warned about (once) and otherwise ignored.
    pub fn store(&mut self, key: u64, kind: ImageKind, payload: &[u8]) {
        let Some(path) = self.entry_path(key) else { return };
        if let Err(e) = write_atomically(&path, &encode(kind, payload)) {
            self.warn(format!("cannot write {}: {e}", path.display()));
        }
    }
}

/// Writes `bytes` to a private temporary file next to `path` and renames it over `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        private_fs::create_private_dir_all(dir)?;
    }
    private_fs::replace_file(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_reference_values() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn the_key_depends_on_source_architecture_and_nvrtc_version() {
        let k = image_key("kernel", 90, (13, 0));
        assert_eq!(k, image_key("kernel", 90, (13, 0)));
        assert_ne!(k, image_key("kernel ", 90, (13, 0)));
        assert_ne!(k, image_key("kernel", 80, (13, 0)));
        assert_ne!(k, image_key("kernel", 90, (13, 1)));
    }

    #[test]
    fn entries_round_trip_and_damage_is_detected() {
        let entry = encode(ImageKind::Cubin, b"\x7fELF image");
        assert_eq!(decode(&entry), Ok((ImageKind::Cubin, &b"\x7fELF image"[..])));
        let mut flipped = entry.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(decode(&flipped).unwrap_err().contains("checksum"));
        assert!(decode(&entry[..entry.len() - 1]).unwrap_err().contains("header says"));
        assert!(decode(b"garbage").is_err());
    }

    #[test]
    fn stored_images_load_back_and_corrupt_entries_are_misses() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = DiskCache::at(Some(dir.path().join("kernels")));
        assert_eq!(cache.load(7), Err(Miss::Absent));
        cache.store(7, ImageKind::Ptx, b"ptx\0");
        assert_eq!(cache.load(7), Ok((ImageKind::Ptx, b"ptx\0".to_vec())));
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path().join("kernels")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from(format!("{:016x}.kernel", 7))]);

        std::fs::write(dir.path().join("kernels").join(format!("{:016x}.kernel", 7)), b"YOSEGIK1 truncated").unwrap();
        assert_eq!(cache.load(7), Err(Miss::Unusable));
        assert!(cache.warned);
        // A new store replaces the damaged entry.
        cache.store(7, ImageKind::Cubin, b"cubin");
        assert_eq!(cache.load(7), Ok((ImageKind::Cubin, b"cubin".to_vec())));
    }

    #[test]
    fn an_unwritable_cache_warns_and_stores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the cache directory should be: creating the directory fails.
        let blocked = dir.path().join("blocked");
        std::fs::write(&blocked, b"").unwrap();
        let mut cache = DiskCache::at(Some(blocked.join("kernels")));
        cache.store(1, ImageKind::Cubin, b"x");
        assert!(cache.warned);
        assert!(cache.load(1).is_err());
    }

    #[test]
    fn a_cache_others_can_write_is_refused_and_a_private_one_accepted() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o775)).unwrap();
        let why = check_cache_dir(&shared).unwrap_err();
        assert!(why.contains("can be written by its group"), "{why}");
        let missing = dir.path().join("fresh").join("kernels");
        if private_fs::check_trusted_dir(dir.path()).is_ok() {
            assert_eq!(check_cache_dir(&missing), Ok(()));
        } else {
            let _ = check_cache_dir(&missing);
        }
        use std::os::unix::fs::MetadataExt;
        assert_eq!(std::fs::metadata(&missing).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn no_directory_means_no_cache() {
        let mut cache = DiskCache::at(None);
        cache.store(1, ImageKind::Cubin, b"x");
        assert_eq!(cache.load(1), Err(Miss::Absent));
        assert!(!cache.warned);
    }
}
