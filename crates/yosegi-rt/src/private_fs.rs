//! Files and directories that only the user can reach, for a tool that runs on machines shared
//! with other accounts (`docs/SECURITY.md`):
//!
//! * [`ScratchDir`]: a run's scratch space, created fresh in the temporary directory with a
//!   random name and mode 0700 (`mkdtemp`), never reused because a directory of that name
//!   exists, and removed when dropped, when the build fails, and when the process is
//!   interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT) while one is alive ([`crate::care`]). Its
//!   name carries the process id, so that a later run can remove it when the process died
//!   without a chance to ([`reclaim`]: SIGKILL, the OOM killer).
//! * [`write_new`]: a file created with `O_CREAT|O_EXCL` (so never through an entry someone
//!   planted, a symbolic link included) and mode 0600.
//! * [`replace_file`]: a file replaced atomically by a private temporary file renamed over it
//!   (a rename replaces a planted link; it never writes through it).
//! * [`LockedFile`] and [`update_locked`]: a file that several processes update (the record
//!   files of the kernel cache folder), read and replaced under an advisory lock on a sibling
//!   `<name>.lock` file, so that what one process adds is never lost to another's rewrite;
//!   [`complete_lines`] reads only the lines such a file holds in full.
//! * [`check_trusted_dir`]: whether a directory Yosegi loads from (the kernel cache) can be
//!   written only by the user.
//! * [`command_private`]: child processes (cpp, cc) run with umask 077 and `TMPDIR` set to the
//!   scratch directory, so that what they create is private too.
//! * [`write_error`]: what a failed write says, a full disk named as such.

use std::ffi::OsString;
use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::care;
use crate::diag::Diagnostic;

pub mod reclaim;

/// A fresh private directory in the temporary directory, `yosegi-<pid>-<host>-<random>`; see
/// the module doc and [`reclaim`].
pub struct ScratchDir {
    dir: Option<tempfile::TempDir>,
}

impl ScratchDir {
    /// Creates `$TMPDIR/yosegi-<pid>-<host>-XXXXXX` (mode 0700), after removing the scratch
    /// directories of dead runs there ([`reclaim`]). A `TMPDIR` that does not exist or cannot
    /// be written is an error that says so, a full disk too.
    pub fn new() -> Result<ScratchDir, Diagnostic> {
        let base = std::env::temp_dir();
        let from = if std::env::var_os("TMPDIR").is_some_and(|t| !t.is_empty()) { " (from TMPDIR)" } else { "" };
        let help = "set TMPDIR to an existing directory that you can write, or unset it to use /tmp";
        match std::fs::metadata(&base) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Diagnostic::global_error(format!(
                    "the temporary directory `{}`{from} is not a directory",
                    base.display()
                ))
                .with_help(help));
            }
            Err(_) => {
                return Err(Diagnostic::global_error(format!(
                    "the temporary directory `{}`{from} does not exist",
                    base.display()
                ))
                .with_help(help));
            }
        }
        // Once per process: the scratch directories that dead runs left here go.
        reclaim::once(&base);
        let prefix = reclaim::name_prefix(std::process::id());
        let dir = care::keep_dir(|| {
            let dir = tempfile::Builder::new()
                .prefix(&prefix)
                .rand_bytes(reclaim::RANDOM_CHARS)
                .permissions(std::fs::Permissions::from_mode(0o700))
                .tempdir_in(&base)?;
            let path = dir.path().to_path_buf();
            Ok::<_, std::io::Error>((dir, path))
        })
        .map_err(|e| {
            if is_disk_full(&e) {
                return disk_full(&temp_dir_described(), "cannot create a scratch directory");
            }
            Diagnostic::global_error(format!("cannot create a scratch directory in the temporary directory `{}`{from}: {e}", base.display()))
                .with_help(help)
        })?;
        Ok(ScratchDir { dir: Some(dir) })
    }

    pub fn path(&self) -> &Path {
        self.dir.as_ref().map(|d| d.path()).unwrap_or(Path::new(""))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let Some(dir) = self.dir.take() else { return };
        let path = dir.path().to_path_buf();
        care::release_dir(&path, || {
            let _ = dir.close();
        });
    }
}

/// Whether `e` is the disk (or its quota, or its inodes) being full.
pub fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)) || e.kind() == std::io::ErrorKind::StorageFull
}

/// The error for a write that failed because its disk is full: `doing` says what could not be
/// done, `place` which folder it was in ("the output folder `out`", or the temporary
/// directory as [`temp_dir_described`] names it).
pub fn disk_full(place: &str, doing: &str) -> Diagnostic {
    let help = if place.starts_with(TEMP_DIR) {
        "free some space on that disk, or set TMPDIR to a folder on a disk with room"
    } else {
        "free some space on that disk, or write to a folder on a disk with room"
    };
    Diagnostic::global_error(format!("the disk is full: {doing}: no space is left on the device that holds {place}")).with_help(help)
}

/// What a failed write of `path` says: a full disk is named as such, with the folder it
/// happened in (`place`, as for [`disk_full`]).
pub fn write_error(path: &Path, e: &std::io::Error, place: &str) -> Diagnostic {
    if is_disk_full(e) {
        return disk_full(place, &format!("cannot write {}", path.display()));
    }
    Diagnostic::global_error(format!("cannot write {}: {e}", path.display()))
}

const TEMP_DIR: &str = "the temporary directory";

/// The temporary directory as messages name it: "the temporary directory `/tmp`", followed by
/// " (from TMPDIR)" when `TMPDIR` chose it.
pub fn temp_dir_described() -> String {
    let from = if std::env::var_os("TMPDIR").is_some_and(|t| !t.is_empty()) { " (from TMPDIR)" } else { "" };
    format!("{TEMP_DIR} `{}`{from}", std::env::temp_dir().display())
}

/// Creates `path` with mode 0600 and writes `bytes`; fails if anything exists at `path`
/// (a symbolic link included), so nothing planted is ever written through.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    create_new(path)?.write_all(bytes)
}

/// A new file at `path`, mode 0600, for writing; as [`write_new`], fails if anything exists
/// there.
pub fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(path)
}

/// Replaces `path` with `bytes`: written to a private temporary file (random name, 0600) in the
/// same directory, then renamed over `path`, so that a reader never sees half a file and a link
/// planted at `path` is replaced, not followed.
pub fn replace_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut temp = tempfile::Builder::new().prefix(".yosegi-").suffix(".tmp").tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The lock file of `path`: `<name>.lock` beside it. The file itself cannot be the lock: it is
/// replaced by a rename, after which a process waiting on the old file's lock would hold a lock
/// nobody else takes. Nor the folder: the record files are independent, and one update may
/// need two of them at once (`model::observed` updates the machine file under the lock of its
/// observations).
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(OsString::from).unwrap_or_default();
    name.push(".lock");
    path.with_file_name(name)
}

/// A file held under an exclusive advisory lock (`flock` on [`lock_path`]) until dropped, for
/// a read-modify-write that other processes (or threads: each open of the lock file is locked
/// on its own) make too. The lock is the kernel's: a process that dies holding it releases it,
/// so no stale lock is ever left to clear. Readers do not lock: every write replaces the file
/// whole ([`replace_file`]), so a reader sees some writer's complete file.
pub struct LockedFile {
    path: PathBuf,
    /// Kept open for the lock; closing it releases the lock.
    _lock: std::fs::File,
}

impl LockedFile {
    /// Takes the lock of `path` (waiting for any other holder), making its folder (0700) and
    /// the lock file (0600, never through a planted link) when missing.
    pub fn lock(path: &Path) -> std::io::Result<LockedFile> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            create_private_dir_all(dir)?;
        }
        let lock_path = lock_path(path);
        let c_path = std::ffi::CString::new(lock_path.as_os_str().as_bytes()).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // Read-only is enough for flock, and lets an account that trusts another's cache
        // (`YOSEGI_TRUST_CACHE`) lock a lock file it cannot write. (std's `OpenOptions` will
        // not create a file it does not open for writing.)
        // SAFETY: a NUL-terminated path; the flags and the mode are plain integers.
        let fd = unsafe { libc::open(c_path.as_ptr(), libc::O_RDONLY | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC, 0o600 as libc::c_uint) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a descriptor just opened, owned by nothing else.
        let lock = unsafe { std::fs::File::from_raw_fd(fd) };
        if !lock.metadata()?.is_file() {
            return Err(std::io::Error::other(format!("{} is not a regular file", lock_path.display())));
        }
        loop {
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } == 0 {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(LockedFile { path: path.to_path_buf(), _lock: lock })
    }

    /// What the file holds now (read under the lock, so no other updater changes it before
    /// [`LockedFile::replace`]): empty when it does not exist. Bytes that are not UTF-8 (a
    /// damaged file) become U+FFFD, which no record's parser accepts.
    pub fn read_text(&self) -> std::io::Result<String> {
        match std::fs::read(&self.path) {
            Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(e),
        }
    }

    /// Replaces the file with `text` ([`replace_file`]: a private temporary file, synced, then
    /// renamed over it), so that a crash mid-write leaves the previous file whole.
    pub fn replace(&self, text: &str) -> std::io::Result<()> {
        replace_file(&self.path, text.as_bytes())
    }
}

/// The read-modify-write of a file that several processes update: under the file's lock
/// ([`LockedFile`]), `merge` gets what the file holds now and returns what it should hold (the
/// union of that and what this process adds), or `None` to leave it as it is. An error taking
/// the lock, reading or writing leaves the file as it was.
pub fn update_locked(path: &Path, merge: impl FnOnce(&str) -> Option<String>) -> std::io::Result<()> {
    let file = LockedFile::lock(path)?;
    let existing = file.read_text()?;
    match merge(&existing) {
        Some(text) => file.replace(&text),
        None => Ok(()),
    }
}

/// The lines of `text` that end in a newline: a last line without one is a write cut short (a
/// file truncated by a full disk, or written by something that does not rename into place), and
/// a record cut at a field boundary could still parse, so it is never trusted.
pub fn complete_lines(text: &str) -> impl Iterator<Item = &str> {
    let whole = text.rfind('\n').map_or("", |end| &text[..=end]);
    whole.lines()
}

/// Creates `dir` and its missing parents with mode 0700 (existing ones are left as they are).
pub fn create_private_dir_all(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// The user this process runs as.
fn effective_uid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether only the user (or root) can change what is in `dir`: `dir` must be owned by the user
/// or root and not writable by group or others, and every directory above it must be owned by
/// the user or root and not writable by others unless sticky (`/tmp` is fine: nobody can
/// rename another account's entries there). `Err` says why not.
pub fn check_trusted_dir(dir: &Path) -> Result<(), String> {
    let uid = effective_uid();
    let dir = dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;
    let meta = std::fs::metadata(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    if meta.uid() != uid && meta.uid() != 0 {
        return Err(format!("{} belongs to another account (uid {})", dir.display(), meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        let who = if meta.mode() & 0o002 != 0 { "everyone" } else { "its group" };
        return Err(format!("{} can be written by {who} (mode {:o})", dir.display(), meta.mode() & 0o7777));
    }
    for ancestor in dir.ancestors().skip(1) {
        let meta = std::fs::metadata(ancestor).map_err(|e| format!("{}: {e}", ancestor.display()))?;
        if meta.uid() != uid && meta.uid() != 0 {
            return Err(format!("{} (above it) belongs to another account (uid {})", ancestor.display(), meta.uid()));
        }
        let sticky = meta.mode() & 0o1000 != 0;
        if meta.mode() & 0o002 != 0 && !sticky {
            return Err(format!("{} (above it) can be written by everyone", ancestor.display()));
        }
    }
    Ok(())
}

/// A command for a child process that writes files (cpp, cc): umask 077, and `TMPDIR` pointing
/// at `scratch` so that its temporary files are inside the run's private directory.
pub fn command_private(program: impl AsRef<std::ffi::OsStr>, scratch: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env("TMPDIR", scratch);
    // SAFETY: umask is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o077);
            Ok(())
        });
    }
    cmd
}

/// A path as a command-line operand: a relative path that starts with `-` gets `./` in front
/// so that a tool does not read it as an option.
pub fn operand(path: &Path) -> PathBuf {
    if path.as_os_str().as_bytes().first() == Some(&b'-') { Path::new(".").join(path) } else { path.to_path_buf() }
}

/// `-I<dir>` (or any flag glued to a path) without going through UTF-8.
pub fn glued(flag: &str, path: &Path) -> OsString {
    let mut arg = OsString::from(flag);
    arg.push(path.as_os_str());
    arg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_dirs_are_private_fresh_and_removed() {
        let a = ScratchDir::new().unwrap();
        let b = ScratchDir::new().unwrap();
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let name = a.path().file_name().unwrap().to_string_lossy().into_owned();
        // `yosegi-<pid>-<host>-<random>`, which a later run can tell is ours and alive.
        let prefix = reclaim::name_prefix(std::process::id());
        assert!(name.starts_with(&prefix) && name.len() == prefix.len() + reclaim::RANDOM_CHARS, "{name}");
        let kept = a.path().to_path_buf();
        std::fs::write(kept.join("f"), b"x").unwrap();
        drop(a);
        assert!(!kept.exists());
        assert!(b.path().exists());
    }

    #[test]
    fn a_full_disk_is_named_with_its_folder() {
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        let d = write_error(Path::new("out/a.c"), &full, "the output folder `out`");
        assert!(d.message.starts_with("the disk is full: cannot write out/a.c"), "{}", d.message);
        assert!(d.message.contains("the device that holds the output folder `out`"), "{}", d.message);
        assert!(d.help.as_deref().is_some_and(|h| h.contains("a folder on a disk with room")));
        let quota = std::io::Error::from_raw_os_error(libc::EDQUOT);
        let d = write_error(Path::new("t/a.c"), &quota, &temp_dir_described());
        assert!(d.message.starts_with("the disk is full"), "{}", d.message);
        assert!(d.help.as_deref().is_some_and(|h| h.contains("set TMPDIR")));
        // Another failure is said as it is.
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        let d = write_error(Path::new("out/a.c"), &denied, "the output folder `out`");
        assert!(d.message.starts_with("cannot write out/a.c: ") && !d.message.contains("disk is full"), "{}", d.message);
    }

    #[test]
    fn write_new_refuses_planted_entries_and_links() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("victim");
        std::fs::write(&target, b"keep").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(write_new(&link, b"evil").is_err());
        assert!(write_new(&target, b"evil").is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        let fresh = dir.path().join("fresh");
        write_new(&fresh, b"ok").unwrap();
        assert_eq!(std::fs::metadata(&fresh).unwrap().mode() & 0o777, 0o600);
    }

    #[test]
    fn replace_file_replaces_a_planted_link_instead_of_following_it() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("victim");
        std::fs::write(&target, b"keep").unwrap();
        let path = dir.path().join("entry");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        replace_file(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert!(!std::fs::symlink_metadata(&path).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    /// Lines `a`, `b`, ... each added by its own update: the union the updates must keep.
    fn add_line(existing: &str, line: &str) -> String {
        let mut text: String = complete_lines(existing).filter(|l| *l != line).map(|l| format!("{l}\n")).collect();
        text.push_str(line);
        text.push('\n');
        text
    }

    #[test]
    fn updates_merge_with_what_is_on_disk_and_stay_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records").join("file.txt");
        update_locked(&path, |old| Some(add_line(old, "a"))).unwrap();
        update_locked(&path, |old| Some(add_line(old, "b"))).unwrap();
        update_locked(&path, |old| Some(add_line(old, "a"))).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "b\na\n");
        // `None` leaves the file alone.
        update_locked(&path, |old| {
            assert_eq!(old, "b\na\n");
            None
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "b\na\n");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        // The lock is a sibling `.lock` file, kept (removing it could let two processes hold
        // locks on different files); nothing else is left beside the file.
        assert_eq!(lock_path(&path), dir.path().join("records").join("file.txt.lock"));
        assert_eq!(mode(&lock_path(&path)), 0o600);
        let mut names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, vec![OsString::from("file.txt"), OsString::from("file.txt.lock")]);
    }

    /// Many updaters at once (threads here: each opens the lock file on its own, so they exclude
    /// each other as processes do), each slow between its read and its write: without the lock
    /// most of their lines would be lost to each other's rewrites.
    #[test]
    fn concurrent_updates_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shared.txt");
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for k in 0..10 {
                        update_locked(&path, |old| {
                            let merged = add_line(old, &format!("{t}-{k}"));
                            std::thread::sleep(std::time::Duration::from_millis(1));
                            Some(merged)
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort();
        let mut expected: Vec<String> = (0..8).flat_map(|t| (0..10).map(move |k| format!("{t}-{k}"))).collect();
        expected.sort();
        assert_eq!(lines, expected);
    }

    #[test]
    fn a_torn_last_line_is_not_trusted_and_the_next_update_drops_it() {
        assert_eq!(complete_lines("a\nb\n").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(complete_lines("a\nb\nc=4.1").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(complete_lines("half a line").count(), 0);
        assert_eq!(complete_lines("").count(), 0);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("torn.txt");
        // A file cut short mid-line, with bytes that are not UTF-8 in its garbled part.
        std::fs::write(&path, b"a\nb\nc\xff\xfe=4.").unwrap();
        update_locked(&path, |old| {
            assert!(old.ends_with("c\u{fffd}\u{fffd}=4."), "{old:?}");
            Some(add_line(old, "d"))
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\nd\n");
    }

    #[test]
    fn a_link_planted_at_the_lock_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let path = dir.path().join("records.txt");
        std::os::unix::fs::symlink(&victim, lock_path(&path)).unwrap();
        assert!(update_locked(&path, |_| Some("x\n".into())).is_err());
        assert!(!path.exists());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        // A directory where the lock should be is refused too (flock would take it).
        let other = dir.path().join("other.txt");
        std::fs::create_dir(lock_path(&other)).unwrap();
        assert!(update_locked(&other, |_| Some("x\n".into())).is_err());
    }

    #[test]
    fn trusted_dirs_are_the_users_alone() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("own");
        create_private_dir_all(&own).unwrap();
        // The test's temporary directory may itself sit below a directory that fails the
        // test; only judge the leaf here when its parents pass.
        if check_trusted_dir(dir.path()).is_ok() {
            assert_eq!(check_trusted_dir(&own), Ok(()));
        }
        let group = dir.path().join("group");
        std::fs::create_dir(&group).unwrap();
        std::fs::set_permissions(&group, std::fs::Permissions::from_mode(0o775)).unwrap();
        let why = check_trusted_dir(&group).unwrap_err();
        assert!(why.contains("its group"), "{why}");
        let world = dir.path().join("world");
        std::fs::create_dir(&world).unwrap();
        std::fs::set_permissions(&world, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(check_trusted_dir(&world).unwrap_err().contains("everyone"));
        // Below a world-writable, non-sticky directory, anyone could swap the directory.
        let below = world.join("cache");
        create_private_dir_all(&below).unwrap();
        assert!(check_trusted_dir(&below).unwrap_err().contains("above it"));
        assert!(check_trusted_dir(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn operands_never_look_like_options() {
        assert_eq!(operand(Path::new("-x.c")), PathBuf::from("./-x.c"));
        assert_eq!(operand(Path::new("a/-x.c")), PathBuf::from("a/-x.c"));
        assert_eq!(operand(Path::new("/abs/-x.c")), PathBuf::from("/abs/-x.c"));
        let bytes = b"-I/a\xffb";
        assert_eq!(glued("-I", Path::new(std::ffi::OsStr::from_bytes(&bytes[2..]))).as_bytes(), bytes);
    }
}
