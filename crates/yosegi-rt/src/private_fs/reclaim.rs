//! Scratch directories that a run could not remove because it was killed without a chance to
//! (SIGKILL, the OOM killer, a crash): the first scratch directory a later run makes first
//! removes them, once per process (`docs/SECURITY.md`, "Scratch left by killed runs").
//!
//! A scratch directory is named `yosegi-<pid>-<host>-<random>`: the process id of the run
//! that made it, a tag of the machine and process-id namespace it ran in ([`host_tag`]), and
//! six random characters. A directory is removed only when all of these hold:
//!
//! * it is directly in the temporary directory, and its name is of exactly that form, with
//!   our host tag (a `TMPDIR` shared with other machines, or with containers whose process
//!   ids are not ours, holds directories whose process ids mean nothing here);
//! * it is a directory, not a symbolic link (nothing is followed: `remove_dir_all` removes
//!   a link found inside as a link), owned by our account, mode 0700 as ours are made;
//! * its process is not ours and no longer exists (`kill(pid, 0)` fails with `ESRCH`; a
//!   process id taken again by another process keeps the directory, which is the safe way to
//!   be wrong).
//!
//! Anything else, other accounts' directories and names of other forms (older versions'
//! included) among them, is left alone. Failures are ignored: reclaiming is a courtesy, and
//! never stops a run.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Once, OnceLock};

/// How many random characters end a scratch directory's name.
pub const RANDOM_CHARS: usize = 6;

const PREFIX: &str = "yosegi-";

/// How many hexadecimal digits the host tag has.
const TAG_DIGITS: usize = 8;

/// The start of the name of a scratch directory of the process `pid` on this host.
pub fn name_prefix(pid: u32) -> String {
    format!("{PREFIX}{pid}-{}-", host_tag())
}

/// Eight hexadecimal digits naming the machine, its boot and the process-id namespace this
/// process runs in: a process id is only meaningful among the directories of the same tag.
pub fn host_tag() -> &'static str {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| {
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
        let namespace = std::fs::read_link("/proc/self/ns/pid").map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        let key = format!("{}\n{namespace}\n{}", boot.trim(), hostname());
        let hash = key.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
        format!("{:0width$x}", (hash ^ (hash >> 32)) as u32, width = TAG_DIGITS)
    })
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the buffer.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The process id and host tag of a name of the scratch directories' exact form.
fn parse(name: &str) -> Option<(u32, &str)> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let (pid, tag, random) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = !pid.is_empty() && !pid.starts_with('0') && pid.len() <= 10 && pid.bytes().all(|b| b.is_ascii_digit());
    let tag_ok = tag.len() == TAG_DIGITS && tag.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let random_ok = random.len() == RANDOM_CHARS && random.bytes().all(|b| b.is_ascii_alphanumeric());
    if parts.next().is_some() || !digits || !tag_ok || !random_ok {
        return None;
    }
    // A process id is positive and fits a pid_t: `kill` is never asked about a group.
    let pid: u32 = pid.parse().ok().filter(|&p| p > 0 && p <= i32::MAX as u32)?;
    Some((pid, tag))
}

/// Reclaims in `base` ([`reclaim`]) the first time this process asks.
pub fn once(base: &Path) {
    static DONE: Once = Once::new();
    DONE.call_once(|| {
        reclaim(base);
    });
}

/// Removes the scratch directories of dead runs of this account and host directly in `base`
/// (see the module doc); returns those removed.
pub fn reclaim(base: &Path) -> Vec<PathBuf> {
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    reclaim_with(base, Owner { uid, pid: std::process::id(), tag: host_tag() }, process_is_gone)
}

/// Whose directories [`reclaim_with`] may remove: this account's, of this host, not this
/// process's.
#[derive(Clone, Copy)]
struct Owner<'a> {
    uid: u32,
    pid: u32,
    tag: &'a str,
}

fn reclaim_with(base: &Path, owner: Owner, is_gone: impl Fn(u32) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(base) else { return Vec::new() };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, their_tag)) = name.to_str().and_then(parse) else { continue };
        if their_tag != owner.tag || pid == owner.pid {
            continue;
        }
        let path = entry.path();
        // The entry itself, not what a link points at.
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if !meta.file_type().is_dir() || meta.uid() != owner.uid || meta.mode() & 0o7777 != 0o700 {
            continue;
        }
        if is_gone(pid) && std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Whether no process of id `pid` exists (a zombie still does).
fn process_is_gone(pid: u32) -> bool {
    // SAFETY: signal 0 sends nothing; `pid` is positive, so it names one process, not a group.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};

    const TAG: &str = "0123abcd";
    const DEAD: u32 = 4_000_001;
    const ALIVE: u32 = 4_000_002;

    fn private_dir(path: &Path) {
        std::fs::DirBuilder::new().mode(0o700).create(path).unwrap();
        std::fs::write(path.join("program.so"), b"left behind").unwrap();
    }

    #[test]
    fn names_of_the_exact_form_only() {
        assert_eq!(parse("yosegi-1234-0123abcd-aZ09xY"), Some((1234, "0123abcd")));
        let ours = format!("{}Ab12cD", name_prefix(77));
        assert_eq!(parse(&ours), Some((77, host_tag())));
        for other in [
            "yosegi-1234-0",           // an older version's build directory
            "yosegi-src-1234-0",       // an older version's sources
            "yosegi-aaaaaa",           // the form before process ids
            "yosegi-1234-0123abcd-aZ09x",
            "yosegi-1234-0123abcd-aZ09xYz",
            "yosegi-1234-0123ABCD-aZ09xY",
            "yosegi-1234-0123abc-aZ09xY",
            "yosegi-01234-0123abcd-aZ09xY",
            "yosegi-0-0123abcd-aZ09xY",
            "yosegi-4294967295-0123abcd-aZ09xY",
            "yosegi-1234-0123abcd-aZ09xY-x",
            "yosegi-1234-0123abcd-aZ0.xY",
            "yosegi-cuda",
            ".yosegi-1234-0123abcd-aZ09xY",
        ] {
            assert_eq!(parse(other), None, "{other}");
        }
    }

    #[test]
    fn the_host_tag_is_stable_and_of_its_form() {
        assert_eq!(host_tag(), host_tag());
        assert_eq!(host_tag().len(), TAG_DIGITS);
        assert!(parse(&format!("{}aaaaaa", name_prefix(1))).is_some());
    }

    #[test]
    fn only_the_dead_runs_own_directories_go() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let dead = t.join(format!("yosegi-{DEAD}-{TAG}-aaaaaa"));
        private_dir(&dead);
        // A symbolic link inside is removed as a link; its target stays.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), b"x").unwrap();
        std::os::unix::fs::symlink(outside.path(), dead.join("link")).unwrap();
        let kept = [
            // A live process's.
            t.join(format!("yosegi-{ALIVE}-{TAG}-bbbbbb")),
            // Ours.
            t.join(format!("yosegi-{}-{TAG}-cccccc", std::process::id())),
            // Another host's (or container's): the process id means nothing here.
            t.join(format!("yosegi-{DEAD}-ffffffff-dddddd")),
            // Not of the form.
            t.join(format!("yosegi-{DEAD}-0")),
        ];
        for dir in &kept {
            private_dir(dir);
        }
        // Not made as ours are: open to others.
        let open = t.join(format!("yosegi-{DEAD}-{TAG}-eeeeee"));
        private_dir(&open);
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A link of the form, to a private directory of a dead run's name elsewhere.
        let target = outside.path().join(format!("yosegi-{DEAD}-{TAG}-ffffff"));
        private_dir(&target);
        let link = t.join(format!("yosegi-{DEAD}-{TAG}-gggggg"));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // A file of the form.
        let file = t.join(format!("yosegi-{DEAD}-{TAG}-hhhhhh"));
        std::fs::write(&file, b"x").unwrap();
        // One level down is not looked at.
        let below = t.join("sub");
        std::fs::create_dir(&below).unwrap();
        let nested = below.join(format!("yosegi-{DEAD}-{TAG}-iiiiii"));
        private_dir(&nested);

        let removed = reclaim_with(t, us(), |pid| pid == DEAD);
        assert_eq!(removed, vec![dead.clone()]);
        assert!(!dead.exists());
        assert!(outside.path().join("keep").exists(), "a link inside was followed");
        for dir in kept.iter().chain([&open, &target, &nested]) {
            assert!(dir.join("program.so").exists(), "{} was removed", dir.display());
        }
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(file.is_file());
    }

    fn us() -> Owner<'static> {
        // SAFETY: geteuid cannot fail.
        Owner { uid: unsafe { libc::geteuid() }, pid: std::process::id(), tag: TAG }
    }

    #[test]
    fn another_accounts_directory_stays() {
        // Made by us, judged as another account would judge it (root included, who could
        // remove it).
        let tmp = tempfile::tempdir().unwrap();
        let theirs = tmp.path().join(format!("yosegi-{DEAD}-{TAG}-aaaaaa"));
        private_dir(&theirs);
        let other = Owner { uid: us().uid.wrapping_add(1), ..us() };
        assert!(reclaim_with(tmp.path(), other, |_| true).is_empty());
        assert!(theirs.join("program.so").exists());
        // And as ours, it goes: the check above is the owner's.
        assert_eq!(reclaim_with(tmp.path(), us(), |_| true), vec![theirs]);
    }

    #[test]
    fn a_live_process_is_not_gone() {
        assert!(!process_is_gone(std::process::id()));
        // A child that ended and was reaped is.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(process_is_gone(pid));
    }
}
