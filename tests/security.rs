//! Safe on shared machines (docs/SECURITY.md): with `TMPDIR` pointed at a directory full of
//! entries another account could have planted (directories, files and symbolic links at every
//! name older versions used, and at names the current one would use if they were predictable),
//! `yosegi run` and `explain` never write through, read or use a planted entry; whatever they
//! create is private (0700 directories, 0600 files, child processes under umask 077); nothing
//! is left afterwards, also after a refused program and an interrupted one. A kernel cache that
//! others can write is not loaded from. Paths with spaces, quotes, a leading dash and bytes that
//! are not UTF-8 build and run.

mod common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Finished, Input, repo_root, run, yosegi};

/// How many process ids after ours get planted directories of the old `yosegi-<pid>-<n>` form.
const PLANTED_PIDS: u32 = 1500;

/// What a planted entry was, to check it is still exactly that.
#[derive(Debug, PartialEq)]
enum Planted {
    Dir { mode: u32, entries: usize },
    File { mode: u32, bytes: Vec<u8> },
    Link { target: PathBuf },
}

fn describe(path: &Path) -> Planted {
    let meta = std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if meta.file_type().is_symlink() {
        Planted::Link { target: std::fs::read_link(path).unwrap() }
    } else if meta.is_dir() {
        Planted::Dir { mode: meta.mode() & 0o7777, entries: std::fs::read_dir(path).unwrap().count() }
    } else {
        Planted::File { mode: meta.mode() & 0o7777, bytes: std::fs::read(path).unwrap() }
    }
}

/// The old code's name for the builtin include directory: FNV-1a of the header.
fn old_include_dir_name() -> String {
    let header = std::fs::read(repo_root().join("include/openacc.h")).unwrap();
    let hash = header.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    format!("yosegi-include-{hash:016x}")
}

/// A temporary directory as a hostile neighbour leaves it, a victim file outside it that a
/// planted link points at, and wrappers of `cpp` and `cc` that record what Yosegi's scratch
/// space looks like while they run.
struct Sandbox {
    _keep: tempfile::TempDir,
    tmp: PathBuf,
    victim: PathBuf,
    bin: PathBuf,
    log: PathBuf,
    planted: BTreeMap<PathBuf, Planted>,
}

const VICTIM_TEXT: &[u8] = b"the victim's own file\n";
const PLANTED_HEADER: &[u8] = b"#error a planted openacc.h was used\n";

impl Sandbox {
    fn new() -> Sandbox {
        let keep = tempfile::tempdir().unwrap();
        let tmp = keep.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let victim = keep.path().join("victim.txt");
        std::fs::write(&victim, VICTIM_TEXT).unwrap();
        let bin = keep.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let log = keep.path().join("wrappers.log");
        let mut sandbox = Sandbox { tmp, victim, bin, log, planted: BTreeMap::new(), _keep: keep };
        sandbox.plant();
        sandbox.write_wrappers();
        sandbox
    }

    fn world_writable_dir(&self, path: &Path) {
        std::fs::create_dir(path).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
    }

    fn link_to_victim(&self, path: &Path) {
        std::os::unix::fs::symlink(&self.victim, path).unwrap();
    }

    fn plant(&mut self) {
        let t = self.tmp.clone();
        let first = std::process::id();
        // The old build directories and in-memory source directories, for the next pids.
        for pid in first..first + PLANTED_PIDS {
            for n in 0..2 {
                self.world_writable_dir(&t.join(format!("yosegi-{pid}-{n}")));
            }
            self.world_writable_dir(&t.join(format!("yosegi-src-{pid}-0")));
        }
        // A build directory with a planted program.so and generated C already in it.
        let with_files = t.join(format!("yosegi-{}-0", first + 1));
        std::fs::write(with_files.join("program.so"), b"not a library").unwrap();
        self.link_to_victim(&with_files.join("tu0_jacobi2d.c"));
        // The old shared include directory: a planted header, and links at its temporary names.
        let include = t.join(old_include_dir_name());
        self.world_writable_dir(&include);
        std::fs::write(include.join("openacc.h"), PLANTED_HEADER).unwrap();
        for pid in first..first + 200 {
            self.link_to_victim(&include.join(format!("openacc.h.{pid}")));
        }
        // The old CUDA source directory, with links where kernels' sources would go.
        let cuda = t.join("yosegi-cuda");
        self.world_writable_dir(&cuda);
        for name in ["main_l20.cu", "main_l24.cu", "main_l31.cu", "jacobi_l114.cu"] {
            self.link_to_victim(&cuda.join(name));
        }
        // Names of the current form (`yosegi-` and six random characters): a guess at what a
        // predictable generator would make, as directories and as links.
        for guess in ["yosegi-000000", "yosegi-aaaaaa", "yosegi-AAAAAA", "yosegi-zzzzzz"] {
            self.world_writable_dir(&t.join(guess));
        }
        for guess in ["yosegi-000001", "yosegi-aaaaab", ".yosegi-000000.tmp"] {
            self.link_to_victim(&t.join(guess));
        }
        for entry in walk(&t) {
            let d = describe(&entry);
            self.planted.insert(entry, d);
        }
    }

    fn write_wrappers(&self) {
        let real = |name: &str| -> PathBuf {
            std::env::split_paths(&std::env::var_os("PATH").unwrap())
                .map(|d| d.join(name))
                .find(|p| p.is_file())
                .unwrap_or_else(|| panic!("no {name} on PATH"))
        };
        for (name, real) in [("cpp", real("cpp")), ("cc", real("cc"))] {
            let script = format!(
                "#!/bin/sh\n\
                 {{ echo \"{name} umask $(umask)\"; find \"$SANDBOX_TMP\" -mindepth 1 -printf '%m %y %p\\n'; }} >> \"$SANDBOX_LOG\"\n\
                 if [ -n \"$SANDBOX_HANG_IN\" ] && [ \"$SANDBOX_HANG_IN\" = {name} ]; then touch \"$SANDBOX_HANG_MARK\"; sleep 60; fi\n\
                 exec '{}' \"$@\"\n",
                real.display()
            );
            let path = self.bin.join(name);
            std::fs::write(&path, script).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    /// `yosegi` with `TMPDIR` in the sandbox, the wrappers first on `PATH`, and a private
    /// kernel cache.
    fn yosegi(&self) -> Command {
        let mut cmd = yosegi();
        let path = std::env::join_paths(
            std::iter::once(self.bin.clone()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        cmd.env("TMPDIR", &self.tmp)
            .env("PATH", path)
            .env("CC", self.bin.join("cc"))
            .env("SANDBOX_TMP", &self.tmp)
            .env("SANDBOX_LOG", &self.log)
            .env("YOSEGI_CACHE_DIR", self._keep.path().join("cache"))
            .env_remove("YOSEGI_TRUST_CACHE")
            .env_remove("SANDBOX_HANG_IN");
        cmd
    }

    /// Every planted entry is as it was, nothing else is in the temporary directory, and the
    /// victim file is untouched.
    fn check_untouched(&self, what: &str) {
        let now: Vec<PathBuf> = walk(&self.tmp);
        let extra: Vec<&PathBuf> = now.iter().filter(|p| !self.planted.contains_key(*p)).collect();
        assert!(extra.is_empty(), "{what}: left in the temporary directory: {extra:?}");
        for (path, before) in &self.planted {
            assert_eq!(&describe(path), before, "{what}: {} was changed", path.display());
        }
        assert_eq!(std::fs::read(&self.victim).unwrap(), VICTIM_TEXT, "{what}: the victim file was written through a link");
    }

    /// What the wrappers saw: every entry Yosegi had created was private, and the tools ran
    /// under umask 077. Returns how many entries of Yosegi's were seen.
    fn check_private_while_running(&self, what: &str) -> usize {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let mut seen = 0;
        for line in log.lines() {
            if let Some(rest) = line.strip_prefix("cpp umask ").or_else(|| line.strip_prefix("cc umask ")) {
                assert_eq!(rest.trim(), "0077", "{what}: a tool ran with umask {rest}");
                continue;
            }
            let mut fields = line.splitn(3, ' ');
            let (mode, kind, path) = (fields.next().unwrap(), fields.next().unwrap(), PathBuf::from(fields.next().unwrap()));
            if self.planted.contains_key(&path) {
                continue;
            }
            seen += 1;
            let want = if kind == "d" { "700" } else { "600" };
            assert_eq!((mode, kind), (want, if kind == "d" { "d" } else { "f" }), "{what}: {} is not private", path.display());
        }
        let _ = std::fs::remove_file(&self.log);
        seen
    }
}

/// Every entry below `dir` (not following links), sorted.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                stack.push(path.clone());
            }
            out.push(path);
        }
    }
    out.sort();
    out
}

fn example(name: &str) -> PathBuf {
    repo_root().join("examples").join(name)
}

fn gcc_output(sources: &[PathBuf], args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::gcc_build(sources, dir.path());
    let mut cmd = Command::new(exe);
    cmd.args(args);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    finished.stdout
}

fn without_timing(text: &str) -> String {
    let timing = |l: &str| l.to_lowercase().contains("time") || l.starts_with("total");
    text.lines().filter(|l| !timing(l)).collect::<Vec<_>>().join("\n")
}

#[test]
fn planted_entries_are_never_used_and_nothing_is_left() {
    let sandbox = Sandbox::new();
    let cases: [(&str, &[&str]); 3] =
        [("jacobi2d.c", &["24", "10"]), ("diffusion1d.c", &["300", "5"]), ("heat3d.c", &["12", "3"])];
    for (name, args) in cases {
        let program = example(name);
        let mut cmd = sandbox.yosegi();
        cmd.args(["run", "--device", "sim"]).arg(&program).arg("--").args(args);
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(0), "{name}\n{}", finished.describe());
        assert_eq!(without_timing(&finished.stdout), without_timing(&gcc_output(&[program], args)), "{name}");
        sandbox.check_untouched(&format!("run {name}"));
        let seen = sandbox.check_private_while_running(&format!("run {name}"));
        // The wrappers saw the scratch directories (the header's and the build's) and files.
        assert!(seen >= 4, "run {name}: the wrappers saw only {seen} entries of Yosegi's");

        let mut cmd = sandbox.yosegi();
        cmd.arg("explain").arg(example(name));
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(0), "explain {name}\n{}", finished.describe());
        assert!(finished.stdout.contains("kernel"), "{}", finished.describe());
        sandbox.check_untouched(&format!("explain {name}"));
        sandbox.check_private_while_running(&format!("explain {name}"));
    }
    // A program of several files.
    let multi = repo_root().join("tests/programs/multi_solver");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&multi).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension() == Some(OsStr::new("c"))).collect();
    files.sort();
    let mut cmd = sandbox.yosegi();
    cmd.args(["run", "--device", "sim"]).args(&files);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    sandbox.check_untouched("run multi_solver");
}

#[test]
fn refused_programs_leave_nothing_behind() {
    let sandbox = Sandbox::new();
    let dir = tempfile::tempdir().unwrap();
    // Refused by Yosegi's front end (exit 2 with a diagnostic)...
    let bad = dir.path().join("bad.c");
    std::fs::write(&bad, "int main(void) {\n    int x = ;\n    return x;\n}\n").unwrap();
    // ...by the C compiler on the host code...
    let host_error = dir.path().join("host_error.c");
    std::fs::write(&host_error, "struct s { int x; };\nint main(void) { struct s v; return v.y; }\n").unwrap();
    // ...and by the preprocessor.
    let missing_header = dir.path().join("missing_header.c");
    std::fs::write(&missing_header, "#include \"nope.h\"\nint main(void) { return 0; }\n").unwrap();
    // (`explain` builds no host code, so only `run` meets the C compiler's error.)
    for (file, subs) in [(&bad, &["run", "explain"][..]), (&host_error, &["run"][..]), (&missing_header, &["run", "explain"][..])] {
        for &sub in subs {
            let mut cmd = sandbox.yosegi();
            cmd.arg(sub).arg(file);
            let finished = run(cmd, Input::Nothing);
            assert_eq!(finished.code(), Some(2), "{sub} {}\n{}", file.display(), finished.describe());
            assert!(finished.stderr.contains("error"), "{}", finished.describe());
            sandbox.check_untouched(&format!("{sub} {}", file.display()));
            sandbox.check_private_while_running(&format!("{sub} {}", file.display()));
        }
    }
    // A program that fails at run time (exit 1) after its scratch space is gone.
    let failing = dir.path().join("failing.c");
    std::fs::write(&failing, "int main(void) { return 3; }\n").unwrap();
    let mut cmd = sandbox.yosegi();
    cmd.args(["run", "--device", "sim"]).arg(&failing);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(1), "{}", finished.describe());
    sandbox.check_untouched("a failing program");
}

/// Starts `yosegi run` with the `tool` wrapper hanging, waits until it hangs, sends `signal`
/// (to the whole process group, as a terminal's Ctrl-C does, or to Yosegi alone), and returns
/// how Yosegi ended.
fn interrupt_during(sandbox: &Sandbox, tool: &str, signal: i32, whole_group: bool) -> std::process::ExitStatus {
    let mark = sandbox._keep.path().join(format!("hanging-{tool}"));
    let _ = std::fs::remove_file(&mark);
    let mut cmd = sandbox.yosegi();
    cmd.args(["run", "--device", "sim"])
        .arg(example("jacobi2d.c"))
        .env("SANDBOX_HANG_IN", tool)
        .env("SANDBOX_HANG_MARK", &mark)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    // The dispositions of an interactive shell: a test run in the background (or under nohup)
    // inherits SIGINT/SIGHUP ignored, and Yosegi rightly keeps a signal ignored at start.
    // SAFETY: signal(2) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                libc::signal(signal, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let group = child.id() as i32;
    let started = Instant::now();
    while !mark.exists() {
        assert!(started.elapsed() < Duration::from_secs(120), "the {tool} wrapper never ran");
        if let Ok(Some(status)) = child.try_wait() {
            panic!("yosegi ended ({status}) before reaching {tool}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child (or its process group).
    unsafe { libc::kill(if whole_group { -group } else { group }, signal) };
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "yosegi did not end after the signal");
        std::thread::sleep(Duration::from_millis(20));
    };
    // The hanging wrapper, when it was not signalled with Yosegi.
    // SAFETY: as above.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    status
}

#[test]
fn an_interrupted_run_leaves_nothing_behind() {
    let sandbox = Sandbox::new();
    for (tool, signal, whole_group) in
        [("cc", libc::SIGINT, true), ("cpp", libc::SIGINT, true), ("cc", libc::SIGTERM, false), ("cpp", libc::SIGHUP, false)]
    {
        let status = interrupt_during(&sandbox, tool, signal, whole_group);
        assert_eq!(status.signal(), Some(signal), "interrupted in {tool}: {status}");
        sandbox.check_untouched(&format!("signal {signal} during {tool}"));
        let _ = std::fs::remove_file(&sandbox.log);
    }
}

#[test]
fn a_missing_or_unwritable_tmpdir_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    let program = example("jacobi2d.c");
    for sub in ["run", "explain"] {
        let mut cmd = yosegi();
        cmd.env("TMPDIR", &missing).arg(sub).arg(&program);
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(2), "{}", finished.describe());
        assert!(finished.stderr.contains("does not exist") && finished.stderr.contains("TMPDIR"), "{}", finished.describe());
        assert!(!finished.stderr.contains("panicked"), "{}", finished.describe());
    }
    // Root may write anywhere: the permission check only means something for other users.
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        let read_only = dir.path().join("read-only");
        std::fs::create_dir(&read_only).unwrap();
        std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o500)).unwrap();
        let mut cmd = yosegi();
        cmd.env("TMPDIR", &read_only).arg("explain").arg(&program);
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(2), "{}", finished.describe());
        assert!(finished.stderr.contains("cannot create a scratch directory"), "{}", finished.describe());
    }
}

/// A tuning cache planted in a directory others can write: its winner must not reach `explain`
/// (nor a run), and a warning says why; the same file in a private directory is read (so the
/// test would notice a check that refuses everything).
#[test]
fn a_kernel_cache_others_can_write_is_not_loaded_from() {
    use yosegi::runtime::variants::{CachedChoice, KernelIdentity, TuningCache};
    let program_path = example("jacobi2d.c");
    let program = yosegi::driver::compile(
        std::slice::from_ref(&program_path),
        &yosegi::front::PreprocessOptions::default(),
        &yosegi::opt::PassConfig::default(),
    )
    .unwrap_or_else(|_| panic!("jacobi2d.c compiles"));
    let (kernel, _) = program
        .module
        .kernels
        .iter()
        .find(|(k, _)| program.module.variants_of(*k).len() > 1)
        .expect("jacobi2d has a kernel with staged variants");
    let identity = KernelIdentity::of(&program.module, kernel);
    let variants = program.module.variants_of(kernel);
    let winner = program.module.grid_kernels[variants[1]].name.clone();
    let plant_in = |dir: &Path| {
        let choice = CachedChoice {
            device: "NVIDIA Planted GPU".into(),
            sizes: "n=4096".into(),
            winner: winner.clone(),
            times: vec![(winner.clone(), vec![Duration::from_micros(1)])],
        };
        TuningCache::in_dir(Some(dir.to_path_buf())).store(identity.clone(), choice);
    };
    let root = tempfile::tempdir().unwrap();
    let explain_with = |cache: &Path, trust: bool| -> Finished {
        let mut cmd = yosegi();
        cmd.env("YOSEGI_CACHE_DIR", cache).arg("explain").arg(&program_path);
        if trust {
            cmd.env("YOSEGI_TRUST_CACHE", "1");
        } else {
            cmd.env_remove("YOSEGI_TRUST_CACHE");
        }
        run(cmd, Input::Nothing)
    };

    let private = root.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    plant_in(&private);
    let finished = explain_with(&private, false);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    assert!(finished.stdout.contains("Planted GPU"), "a private cache is read\n{}", finished.describe());
    assert!(!finished.stderr.contains("is not used"), "{}", finished.describe());

    for mode in [0o770, 0o777] {
        let shared = root.path().join(format!("shared-{mode:o}"));
        std::fs::create_dir(&shared).unwrap();
        plant_in(&shared);
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(mode)).unwrap();
        let before = describe(&shared.join("variant-choices.txt"));
        // What the planting left: the tuning file and its lock (`private_fs::lock_path`).
        let listing = || {
            let mut names: Vec<_> = std::fs::read_dir(&shared).unwrap().map(|e| e.unwrap().file_name()).collect();
            names.sort();
            names
        };
        let planted = listing();
        assert_eq!(planted, ["variant-choices.txt", "variant-choices.txt.lock"]);
        let finished = explain_with(&shared, false);
        assert_eq!(finished.code(), Some(0), "{}", finished.describe());
        assert!(!finished.stdout.contains("Planted GPU"), "a cache others can write was read\n{}", finished.describe());
        assert!(finished.stderr.contains("is not used") && finished.stderr.contains("YOSEGI_TRUST_CACHE"), "{}", finished.describe());
        assert_eq!(finished.stderr.matches("is not used").count(), 1, "one warning\n{}", finished.describe());
        assert_eq!(describe(&shared.join("variant-choices.txt")), before);
        assert_eq!(listing(), planted, "nothing was written into it");
        // A run on the simulator with the cache in place is correct, and neither reads nor
        // writes it (it caches nothing), so it has nothing to warn of.
        let mut cmd = yosegi();
        cmd.env("YOSEGI_CACHE_DIR", &shared).env_remove("YOSEGI_TRUST_CACHE");
        cmd.args(["run", "--device", "sim"]).arg(&program_path).args(["--", "24", "10"]);
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(0), "{}", finished.describe());
        assert_eq!(without_timing(&finished.stdout), without_timing(&gcc_output(std::slice::from_ref(&program_path), &["24", "10"])));
        assert_eq!(describe(&shared.join("variant-choices.txt")), before);
        assert_eq!(listing(), planted, "nothing was written into it");
        // The user may say they trust it.
        let finished = explain_with(&shared, true);
        assert!(finished.stdout.contains("Planted GPU"), "{}", finished.describe());
        assert!(!finished.stderr.contains("is not used"), "{}", finished.describe());
    }
}

/// Paths with spaces, both kinds of quotes, a leading dash and bytes that are not UTF-8, for
/// the program's files, its include directory and its arguments; a diagnostic in such a file
/// still shows its line.
#[test]
fn odd_paths_build_and_run() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join(OsStr::from_bytes(b"-my dir 'single' \"double\" \\ \xff\xfe"));
    let include = dir.join("-inc dir \"q\"");
    std::fs::create_dir_all(&include).unwrap();
    std::fs::write(include.join("params.h"), "#define SCALE 3.0\n").unwrap();
    let main = dir.join("-main \"prog\".c");
    std::fs::write(
        &main,
        "#include <stdio.h>\n#include <stdlib.h>\n#include \"params.h\"\n#include \"-helper 'x'.h\"\n\
         int main(int argc, char **argv) {\n    int n = argc > 1 ? atoi(argv[1]) : 8;\n    double a[64];\n\
         #pragma acc parallel loop copyout(a[0:n])\n    for (int i = 0; i < n; i++) a[i] = SCALE * i + OFFSET;\n\
         double s = 0;\n    for (int i = 0; i < n; i++) s += a[i];\n    printf(\"%s %d %.1f\\n\", argv[2], n, s);\n    return 0;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("-helper 'x'.h"), "#define OFFSET 1.0\n").unwrap();
    let mut cmd = yosegi();
    cmd.current_dir(&dir)
        .args(["run", "--device", "sim"])
        .arg(std::ffi::OsString::from_vec_glued("-I", &include))
        .arg(Path::new(".").join(main.file_name().unwrap()))
        .arg("--")
        .arg("10")
        .arg(OsStr::from_bytes(b"arg \xff"));
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    // 3 * (0 + ... + 9) + 10 = 145; the argument's bytes come back as they were given.
    assert!(finished.stdout.starts_with("arg \u{fffd} 10 145.0"), "{}", finished.describe());

    let mut cmd = yosegi();
    cmd.arg("explain").arg(std::ffi::OsString::from_vec_glued("-I", &include)).arg(&main);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());

    let bad = dir.join("-bad 'one'.c");
    std::fs::write(&bad, "int main(void) {\n    int x = ;\n    return x;\n}\n").unwrap();
    let mut cmd = yosegi();
    cmd.arg("run").arg(&bad);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(finished.stderr.contains(":2:13"), "{}", finished.describe());
    assert!(finished.stderr.contains("int x = ;"), "the diagnostic shows the line\n{}", finished.describe());
}

trait GluedArg {
    fn from_vec_glued(flag: &str, path: &Path) -> std::ffi::OsString;
}

impl GluedArg for std::ffi::OsString {
    fn from_vec_glued(flag: &str, path: &Path) -> std::ffi::OsString {
        let mut arg = std::ffi::OsString::from(flag);
        arg.push(path.as_os_str());
        arg
    }
}
