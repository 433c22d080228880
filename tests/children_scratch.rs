//! What a run leaves behind when it is stopped (docs/SECURITY.md, "Scratch left by killed
//! runs"): a signal to the `yosegi` process alone ends the compiler it started, what that
//! compiler started, an MPI launcher and the user's program, and Yosegi ends with the signal;
//! a run killed with SIGKILL leaves its scratch folder, which the next run removes (and only
//! that one); a full disk during the build is named as such.
//!
//! The slow tools are shell scripts standing in for `cc` (`$CC`, `$YOSEGI_HOST_CC`) or
//! `mpirun` (`$YOSEGI_MPIRUN`): each writes its process id and the id of a `sleep` it started
//! (as gcc starts cc1), then waits for the `sleep`.

#![cfg(target_os = "linux")]

mod common;

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::{Input, repo_root, run, yosegi};

/// How long a step of these tests may take before the test gives up on it (a hang, not a
/// measurement: nothing here asserts how long anything took).
const PATIENCE: Duration = Duration::from_secs(120);

/// A folder for one test: `tmp` (the run's `TMPDIR`) and the slow tool's records.
struct Bench {
    keep: tempfile::TempDir,
}

impl Bench {
    fn new() -> Bench {
        let bench = Bench { keep: tempfile::tempdir().unwrap() };
        std::fs::create_dir(bench.tmp()).unwrap();
        bench
    }

    fn tmp(&self) -> PathBuf {
        self.keep.path().join("tmp")
    }

    fn path(&self, name: &str) -> PathBuf {
        self.keep.path().join(name)
    }

    /// A script that records its pid (`NAME.pid`) and its child's (`NAME.child`), written
    /// last, then waits; `--version` is answered at once (for a launcher).
    fn slow_tool(&self, name: &str) -> PathBuf {
        let (pid, child) = (self.path(&format!("{name}.pid")), self.path(&format!("{name}.child")));
        let script = format!(
            "#!/bin/sh\n\
             if [ \"$1\" = --version ]; then echo 'a slow {name}'; exit 0; fi\n\
             echo $$ > '{pid}.part' && mv '{pid}.part' '{pid}'\n\
             sleep 300 &\n\
             echo $! > '{child}.part' && mv '{child}.part' '{child}'\n\
             wait\n",
            pid = pid.display(),
            child = child.display()
        );
        let path = self.path(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// The pids the slow tool `name` recorded, once it has recorded both, while `yosegi` runs.
    fn wait_for_tool(&self, name: &str, yosegi: &mut Child) -> (i32, i32) {
        let started = Instant::now();
        let child = self.path(&format!("{name}.child"));
        while !child.exists() {
            if let Ok(Some(status)) = yosegi.try_wait() {
                panic!("yosegi ended ({status}) before the slow {name} ran");
            }
            assert!(started.elapsed() < PATIENCE, "the slow {name} never ran");
            std::thread::sleep(Duration::from_millis(20));
        }
        let read = |p: PathBuf| std::fs::read_to_string(&p).unwrap().trim().parse::<i32>().unwrap();
        (read(self.path(&format!("{name}.pid"))), read(child))
    }

    /// The entries in the run's `TMPDIR`.
    fn scratch(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.tmp()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }
}

/// `cmd` started as a shell's job would be: in a process group of its own (the test kills what
/// is left of it whole), with the interruption signals at their default dispositions (a test
/// run in the background inherits SIGINT ignored, which Yosegi rightly keeps ignored).
fn start(mut cmd: Command, tmp: &Path) -> Child {
    cmd.env("TMPDIR", tmp).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).process_group(0);
    // SAFETY: signal(2) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                libc::signal(signal, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    cmd.spawn().unwrap()
}

fn wait(child: &mut Child) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(started.elapsed() < PATIENCE, "yosegi did not end after the signal");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` no longer runs: gone, or a zombie whose parent (init) has not reaped
/// it yet. A process killed but not yet scheduled to die is given time to.
fn ended(pid: i32) -> bool {
    let started = Instant::now();
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| s.rsplit_once(")").and_then(|(_, rest)| rest.trim_start().chars().next()));
        match state {
            None | Some('Z' | 'X') => return true,
            Some(_) if started.elapsed() > PATIENCE => return false,
            Some(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Kills what a test left running, whatever it asserted.
fn clean_up(group: u32, pids: &[i32]) {
    // SAFETY: kill(2) on our own child's process group and on the tools' pids it recorded.
    unsafe {
        libc::kill(-(group as i32), libc::SIGKILL);
        for &pid in pids {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

fn small_program(bench: &Bench) -> PathBuf {
    let path = bench.path("small.c");
    std::fs::write(&path, "#include <stdio.h>\nint main(void) {\n    int a[8];\n    #pragma acc parallel loop copyout(a)\n    for (int i = 0; i < 8; i++) a[i] = i;\n    printf(\"%d\\n\", a[7]);\n    return 0;\n}\n").unwrap();
    path
}

#[test]
fn a_signal_to_yosegi_alone_ends_the_compiler_it_started() {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let bench = Bench::new();
        let cc = bench.slow_tool("cc");
        let mut cmd = yosegi();
        cmd.args(["run", "--device", "sim"]).arg(small_program(&bench)).env("CC", &cc);
        let mut child = start(cmd, &bench.tmp());
        let (tool, its_child) = bench.wait_for_tool("cc", &mut child);
        // SAFETY: kill(2) on our own child, Yosegi alone.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = wait(&mut child);
        let (tool_ended, its_child_ended) = (ended(tool), ended(its_child));
        clean_up(child.id(), &[tool, its_child]);
        assert_eq!(status.signal(), Some(signal), "yosegi must end with the signal it got: {status}");
        assert!(tool_ended, "signal {signal}: the compiler ({tool}) still runs after yosegi ended");
        assert!(its_child_ended, "signal {signal}: what the compiler started ({its_child}) still runs after yosegi ended");
        assert_eq!(bench.scratch(), Vec::<String>::new(), "signal {signal}: scratch left behind");
    }
}

#[test]
fn a_signal_to_yosegi_cc_ends_the_host_compiler() {
    let bench = Bench::new();
    let cc = bench.slow_tool("cc");
    let mut cmd = yosegi();
    cmd.args(["cc", "-c"]).arg(small_program(&bench)).arg("-o").arg(bench.path("small.o")).env("YOSEGI_HOST_CC", &cc);
    let mut child = start(cmd, &bench.tmp());
    let (tool, its_child) = bench.wait_for_tool("cc", &mut child);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = wait(&mut child);
    let (tool_ended, its_child_ended) = (ended(tool), ended(its_child));
    clean_up(child.id(), &[tool, its_child]);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status}");
    assert!(tool_ended && its_child_ended, "the host compiler ({tool}, {its_child}) still runs after yosegi cc ended");
    assert_eq!(bench.scratch(), Vec::<String>::new());
}

#[test]
fn a_signal_to_yosegi_reaches_the_mpi_launcher_it_started() {
    let bench = Bench::new();
    let launcher = bench.slow_tool("mpirun");
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--ranks", "2"]).arg(small_program(&bench)).env("YOSEGI_MPIRUN", &launcher);
    let mut child = start(cmd, &bench.tmp());
    let (tool, its_child) = bench.wait_for_tool("mpirun", &mut child);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = wait(&mut child);
    // The launcher is passed the signal to end its own processes; this one's `sleep` is its
    // own business, which a real launcher tears down.
    let tool_ended = ended(tool);
    clean_up(child.id(), &[tool, its_child]);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status}");
    assert!(tool_ended, "the launcher ({tool}) still runs after yosegi ended");
    // The job's scratch folder (with the copy of the standard input the ranks read) is gone.
    assert_eq!(bench.scratch(), Vec::<String>::new());
}

#[test]
fn a_signal_while_the_program_runs_ends_it() {
    let bench = Bench::new();
    let program = bench.path("waits.c");
    let mark = bench.path("running");
    std::fs::write(
        &program,
        "#include <stdio.h>\n#include <unistd.h>\nint main(int argc, char **argv) {\n    FILE *f = fopen(argv[1], \"w\");\n    fclose(f);\n    for (;;) sleep(1);\n}\n",
    )
    .unwrap();
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "-w"]).arg(&program).arg("--").arg(&mark);
    let mut child = start(cmd, &bench.tmp());
    let started = Instant::now();
    while !mark.exists() {
        assert!(child.try_wait().unwrap().is_none(), "the program ended before it ran");
        assert!(started.elapsed() < PATIENCE, "the program never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = wait(&mut child);
    clean_up(child.id(), &[]);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status}");
    assert_eq!(bench.scratch(), Vec::<String>::new());
}

#[test]
fn the_next_run_removes_the_scratch_of_a_killed_run_and_only_that() {
    let bench = Bench::new();
    let cc = bench.slow_tool("cc");
    let program = small_program(&bench);
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim"]).arg(&program).env("CC", &cc);
    let mut child = start(cmd, &bench.tmp());
    let (tool, its_child) = bench.wait_for_tool("cc", &mut child);
    let killed = child.id();
    // SAFETY: kill(2) on our own child, Yosegi alone.
    unsafe { libc::kill(killed as i32, libc::SIGKILL) };
    // Reaped: its process id no longer exists.
    let status = wait(&mut child);
    clean_up(killed, &[tool, its_child]);
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    let left = bench.scratch();
    let own = format!("yosegi-{killed}-");
    assert!(left.len() == 1 && left[0].starts_with(&own), "the killed run's scratch folder: {left:?}");
    let dead = left[0].clone();
    // `yosegi-<pid>-<host>-<random>`: the same host's folder of a live process (ours), and a
    // folder of the dead process id from another host, both private as Yosegi makes them.
    let (_, host_and_random) = dead.split_at(own.len());
    let (host, _) = host_and_random.split_once('-').unwrap();
    let live = format!("yosegi-{}-{host}-abcdef", std::process::id());
    let other_host = format!("yosegi-{killed}-{}-abcdef", if host == "00000000" { "11111111" } else { "00000000" });
    for name in [&live, &other_host] {
        std::fs::DirBuilder::new().mode(0o700).create(bench.tmp().join(name)).unwrap();
        std::fs::write(bench.tmp().join(name).join("program.so"), b"in use").unwrap();
    }

    let mut cmd = yosegi();
    cmd.env("TMPDIR", bench.tmp()).args(["run", "--device", "sim"]).arg(&program);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    let mut kept = vec![live.clone(), other_host.clone()];
    kept.sort();
    assert_eq!(bench.scratch(), kept, "the dead run's folder {dead} goes, and only it");
    for name in [&live, &other_host] {
        assert!(bench.tmp().join(name).join("program.so").is_file(), "{name} was emptied");
    }
}

#[test]
fn a_full_disk_during_the_host_build_is_named() {
    let bench = Bench::new();
    // gcc's words when its temporary file cannot be written.
    let cc = bench.path("full-cc");
    std::fs::write(&cc, "#!/bin/sh\necho 'cc1: fatal error: error writing to /tmp/ccXyZ.s: No space left on device' >&2\necho 'compilation terminated.' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = yosegi();
    cmd.env("TMPDIR", bench.tmp()).env("CC", &cc).args(["run", "--device", "sim"]).arg(small_program(&bench));
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    let tmp = bench.tmp().display().to_string();
    assert!(finished.stderr.contains("the disk is full"), "{}", finished.describe());
    assert!(finished.stderr.contains(&format!("the temporary directory `{tmp}` (from TMPDIR)")), "{}", finished.describe());
    assert!(finished.stderr.contains("set TMPDIR to a folder on a disk with room"), "{}", finished.describe());
    assert!(!finished.stderr.contains("usually an error in the program"), "{}", finished.describe());
    assert_eq!(bench.scratch(), Vec::<String>::new());
}

#[test]
fn a_full_disk_under_emit_names_the_output_folder() {
    // /dev/full fails every write with ENOSPC: a real full disk, for one file.
    let bench = Bench::new();
    let out = bench.path("out");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink("/dev/full", out.join("yosegi_rt.h")).unwrap();
    let mut cmd = yosegi();
    cmd.arg("emit").arg("-o").arg(&out).arg(repo_root().join("examples/jacobi2d.c"));
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(2), "{}", finished.describe());
    assert!(finished.stderr.contains("the disk is full"), "{}", finished.describe());
    assert!(finished.stderr.contains(&format!("the output folder `{}`", out.display())), "{}", finished.describe());
}
