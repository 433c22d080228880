//! What the process has in its care and must not leave behind when a signal ends it
//! (`docs/SECURITY.md`): the scratch directories it made ([`crate::private_fs::ScratchDir`])
//! and the child processes it started (cpp, the C compiler and what that starts, ar, objcopy,
//! an MPI launcher).
//!
//! While anything is in care, SIGINT, SIGTERM, SIGHUP and SIGQUIT are caught. The signal
//! handler only writes the signal's number to a pipe (async-signal-safe); a thread reads it,
//! ends every child (see [`Mode`]) and waits for it, removes every directory, puts back the
//! signals' previous dispositions and raises the signal again, so the process ends as it
//! would have without us (a shell sees status 128+N). The handlers are installed only while
//! something is in care: the user's program, which `yosegi run` runs in this process after its
//! scratch directory is gone, sees the dispositions it was started with, and a signal ends it
//! as it would end the program compiled by gcc. A signal ignored at start (`nohup`) stays
//! ignored.
//!
//! Children run through [`output`], [`status`], [`status_with_input`] and
//! [`status_sharing_group`]. One that ends leaves care before it is reaped: until then its
//! process id (and its group's) cannot be given to another process, so the interruption never
//! signals a stranger. On Linux each child is also asked to get SIGKILL (a launcher SIGTERM)
//! from the kernel when Yosegi dies without a chance to end it (SIGKILL, the OOM killer).

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How an interruption ends a child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The child leads a process group of its own, killed whole (SIGKILL): a compiler driver's
    /// own children (cc1, as, collect2, ld) end with it, which signalling the driver alone
    /// would not do (gcc removes its temporary files and dies, and cc1 runs on). What such a
    /// child writes goes to the scratch directory, which is removed next, so nothing is lost
    /// by not letting it tidy up. Outside our group a terminal's signals do not reach it: we
    /// end it instead.
    Group,
    /// The child stays in our process group and gets the signal we got, [`GRACE`] to end, then
    /// SIGKILL. For a child that manages children of its own (an MPI launcher tears its ranks
    /// down on SIGTERM), and for one that must stay in the terminal's foreground group (it
    /// reads the terminal, or the terminal stops background writers).
    Forward,
}

/// How long a [`Mode::Forward`] child has to end after the signal we passed on.
const GRACE: Duration = Duration::from_secs(5);

/// How long an interruption waits for the rest of a killed group (a compiler's children) to
/// be gone, after the child that leads it was reaped.
const GROUP_SETTLE: Duration = Duration::from_secs(1);

struct Tracked {
    pid: libc::pid_t,
    mode: Mode,
}

struct Care {
    dirs: Vec<PathBuf>,
    children: Vec<Tracked>,
}

impl Care {
    fn is_empty(&self) -> bool {
        self.dirs.is_empty() && self.children.is_empty()
    }
}

static CARE: Mutex<Care> = Mutex::new(Care { dirs: Vec::new(), children: Vec::new() });

fn care() -> MutexGuard<'static, Care> {
    CARE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Takes the lock, installing the handlers when nothing was in care yet (before anything is
/// made: a signal in between must not end the process with the default action and leave it).
fn care_for_more() -> MutexGuard<'static, Care> {
    let guard = care();
    if guard.is_empty() {
        interrupt::install();
    }
    guard
}

/// After something left care (the lock still held): once nothing is, the dispositions go
/// back, and a signal that came while things were in care but found the process already on
/// its way out (Ctrl-C killed the child too, and the main thread saw its failure first) ends
/// the process now, the way the signal asked, since nothing is left behind.
fn settle(guard: MutexGuard<'static, Care>) {
    if guard.is_empty() {
        interrupt::restore();
        if let Some(signal) = interrupt::take_pending() {
            interrupt::raise(signal);
        }
    }
    drop(guard);
}

/// Makes a directory with `make` and keeps it in care until [`release_dir`]: an interruption
/// removes it. `make` runs under the lock, so no interruption comes between the directory's
/// creation and its registration.
pub(crate) fn keep_dir<T, E>(make: impl FnOnce() -> Result<(T, PathBuf), E>) -> Result<T, E> {
    let mut guard = care_for_more();
    match make() {
        Ok((value, path)) => {
            guard.dirs.push(path);
            Ok(value)
        }
        Err(e) => {
            settle(guard);
            Err(e)
        }
    }
}

/// Takes `path` out of care and runs `remove` (which removes it) under the lock: an
/// interruption waits for the removal instead of ending the process half-way through it.
pub(crate) fn release_dir(path: &Path, remove: impl FnOnce()) {
    let mut guard = care();
    guard.dirs.retain(|p| p != path);
    remove();
    settle(guard);
}

/// Starts `cmd` in care.
fn spawn(cmd: &mut Command, mode: Mode) -> io::Result<Child> {
    if mode == Mode::Group {
        cmd.process_group(0);
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getpid cannot fail.
        let parent = unsafe { libc::getpid() };
        let on_our_death = if mode == Mode::Group { libc::SIGKILL } else { libc::SIGTERM };
        // SAFETY: prctl and getppid are async-signal-safe and touch no memory. The request
        // lives as long as the thread that forks (the one that then waits for the child).
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, on_our_death as libc::c_ulong);
                if libc::getppid() != parent {
                    // We died before the request was made: do not run orphaned.
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
    let mut guard = care_for_more();
    match cmd.spawn() {
        Ok(child) => {
            guard.children.push(Tracked { pid: child.id() as libc::pid_t, mode });
            Ok(child)
        }
        Err(e) => {
            settle(guard);
            Err(e)
        }
    }
}

/// Waits for `child` to end, takes it out of care, then reaps it.
fn finish(mut child: Child) -> io::Result<ExitStatus> {
    let pid = child.id() as libc::pid_t;
    // Not reaped yet: an interruption from now on may still signal it (or its group).
    wait_exited(pid, None);
    let mut guard = care();
    guard.children.retain(|c| c.pid != pid);
    settle(guard);
    child.wait()
}

/// Whether `pid` (a child of ours) has ended, waiting until it has or until `deadline`; it is
/// left unreaped. An error (already reaped, not our child) counts as ended.
fn wait_exited(pid: libc::pid_t, deadline: Option<Instant>) -> bool {
    let flags = libc::WEXITED | libc::WNOWAIT | if deadline.is_some() { libc::WNOHANG } else { 0 };
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid with a valid out-pointer.
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
        if r != 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return true;
        }
        // SAFETY: filled by waitid; with WNOHANG a child still running leaves the pid 0.
        if deadline.is_none() || unsafe { info.si_pid() } != 0 {
            return true;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Drains a child's stdout and stderr (on two threads, so that a full pipe never blocks it).
fn read_both(child: &mut Child) -> (Vec<u8>, Vec<u8>) {
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    std::thread::scope(|s| {
        let errors = s.spawn(move || {
            let mut buf = Vec::new();
            if let Some(pipe) = err.as_mut() {
                let _ = pipe.read_to_end(&mut buf);
            }
            buf
        });
        let mut stdout = Vec::new();
        if let Some(pipe) = out.as_mut() {
            let _ = pipe.read_to_end(&mut stdout);
        }
        (stdout, errors.join().unwrap_or_default())
    })
}

/// [`Command::output`] in care: no standard input, stdout and stderr captured, the child in a
/// group of its own ([`Mode::Group`]).
pub fn output(cmd: &mut Command) -> io::Result<Output> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = spawn(cmd, Mode::Group)?;
    let (stdout, stderr) = read_both(&mut child);
    let status = finish(child)?;
    Ok(Output { status, stdout, stderr })
}

/// [`Command::status`] in care for a tool that reads no input (its stdin is `/dev/null`), its
/// messages going to our stdout and stderr.
pub fn status(cmd: &mut Command) -> io::Result<ExitStatus> {
    cmd.stdin(Stdio::null());
    let mode = if terminal_stops_background_writers() { Mode::Forward } else { Mode::Group };
    finish(spawn(cmd, mode)?)
}

/// [`status`] for a tool given our standard input (`cc -E -` reads it): when that is a
/// terminal, the child stays in the terminal's foreground group ([`Mode::Forward`]), where
/// reading it does not stop it.
pub fn status_with_input(cmd: &mut Command) -> io::Result<ExitStatus> {
    let mode = if is_terminal(0) || terminal_stops_background_writers() { Mode::Forward } else { Mode::Group };
    finish(spawn(cmd, mode)?)
}

/// [`Command::status`] in care for a launcher of processes (`mpirun`): it stays in our group
/// and gets the signal we got, to tear its own processes down ([`Mode::Forward`]).
pub fn status_sharing_group(cmd: &mut Command) -> io::Result<ExitStatus> {
    finish(spawn(cmd, Mode::Forward)?)
}

fn is_terminal(fd: libc::c_int) -> bool {
    // SAFETY: isatty on a file descriptor number.
    unsafe { libc::isatty(fd) == 1 }
}

/// Whether our stdout or stderr is a terminal that stops a background process writing to it
/// (`stty tostop`): a child outside the foreground group would stop at its first message.
fn terminal_stops_background_writers() -> bool {
    [1, 2].into_iter().any(|fd| {
        if !is_terminal(fd) {
            return false;
        }
        // SAFETY: a zeroed termios is a valid out-parameter.
        let mut modes: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: tcgetattr on a terminal with a valid out-pointer.
        unsafe { libc::tcgetattr(fd, &mut modes) == 0 && modes.c_lflag & libc::TOSTOP != 0 }
    })
}

/// Ends every child in care after `signal`: groups killed at once, the others sent `signal`
/// and killed after [`GRACE`]; each reaped, and the rest of each killed group given
/// [`GROUP_SETTLE`] to be gone.
fn end_children(children: &[Tracked], signal: libc::c_int) {
    // SAFETY (every kill below): the pids are our children's, not reaped yet, so neither they
    // nor their groups' ids belong to anyone else.
    for child in children {
        match child.mode {
            Mode::Group => unsafe { libc::kill(-child.pid, libc::SIGKILL) },
            Mode::Forward => unsafe { libc::kill(child.pid, signal) },
        };
    }
    let grace = Instant::now() + GRACE;
    for child in children.iter().filter(|c| c.mode == Mode::Forward) {
        if !wait_exited(child.pid, Some(grace)) {
            unsafe { libc::kill(child.pid, libc::SIGKILL) };
        }
    }
    // A killed group's leader and any member left (it cannot have ignored SIGKILL, only not
    // be scheduled yet), before the leader is reaped and its id freed.
    for child in children.iter().filter(|c| c.mode == Mode::Group) {
        unsafe { libc::kill(-child.pid, libc::SIGKILL) };
    }
    let reap_by = Instant::now() + GRACE;
    for child in children {
        if wait_exited(child.pid, Some(reap_by)) {
            let mut status = 0;
            // SAFETY: reaps our own child, which has ended.
            unsafe { libc::waitpid(child.pid, &mut status, libc::WNOHANG) };
        }
    }
    let settle_by = Instant::now() + GROUP_SETTLE;
    for child in children.iter().filter(|c| c.mode == Mode::Group) {
        // Signal 0 only asks whether a member is left; a group that emptied and whose id was
        // taken again is only asked, never signalled.
        while unsafe { libc::kill(-child.pid, 0) } == 0 && Instant::now() < settle_by {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Runs on the interrupt thread: ends every child, removes every directory, puts the
/// dispositions back and ends the process with the signal.
fn clean_up_and_reraise(signal: libc::c_int) {
    let mut guard = care();
    let pending = interrupt::take_pending();
    if guard.is_empty() && pending.is_none() {
        // The signal was already acted on (see `settle`), and the process goes on.
        return;
    }
    release(&mut guard, signal);
    interrupt::restore();
    interrupt::raise(signal);
    // A signal whose previous handler returns (the program's own) leaves the process running
    // without its scratch space and its children: end it as the interruption asked.
    std::process::exit(128 + signal);
}

/// Ends every child in care (SIGKILL, their groups too) and removes every directory, for a
/// process about to exit on its own account rather than a signal's (out of memory: see the
/// `yosegi` crate's allocator). Gives up rather than wait when the care is locked (the thread
/// that ran out of memory may hold the lock); a scratch directory left then is reclaimed by
/// the next run.
pub fn abandon() {
    if let Ok(mut guard) = CARE.try_lock() {
        release(&mut guard, libc::SIGKILL);
    }
}

/// Ends the children in care (`signal` for those that get ours, see [`Mode`]) and removes the
/// directories, leaving nothing in care.
fn release(care: &mut Care, signal: libc::c_int) {
    end_children(&care.children, signal);
    care.children.clear();
    for path in care.dirs.drain(..) {
        let _ = std::fs::remove_dir_all(&path);
    }
}

/// The signal handlers, their pipe and the thread that reads it.
mod interrupt {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicI32, Ordering};

    const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

    static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
    /// The last signal our handler received and nobody acted on yet (0: none).
    static PENDING: AtomicI32 = AtomicI32::new(0);
    /// The dispositions our handlers replaced, to put back.
    static SAVED: Mutex<Vec<(libc::c_int, libc::sigaction)>> = Mutex::new(Vec::new());

    extern "C" fn on_signal(signal: libc::c_int) {
        PENDING.store(signal, Ordering::SeqCst);
        let fd = PIPE_WRITE.load(Ordering::Relaxed);
        if fd >= 0 {
            let byte = signal as u8;
            // SAFETY: write(2) is async-signal-safe; the buffer is a local byte.
            unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
        }
    }

    fn saved() -> std::sync::MutexGuard<'static, Vec<(libc::c_int, libc::sigaction)>> {
        SAVED.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The pipe and its reader thread, made once per process.
    fn pipe_ready() -> bool {
        static READY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *READY.get_or_init(|| {
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: a valid two-element array.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return false;
            }
            let read_fd = fds[0];
            PIPE_WRITE.store(fds[1], Ordering::Relaxed);
            let spawned = std::thread::Builder::new().name("yosegi-interrupt".into()).spawn(move || {
                loop {
                    let mut byte = 0u8;
                    // SAFETY: reads one byte into a local.
                    let n = unsafe { libc::read(read_fd, (&mut byte as *mut u8).cast(), 1) };
                    if n == 1 {
                        super::clean_up_and_reraise(byte as libc::c_int);
                    } else if n == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                        return;
                    }
                }
            });
            spawned.is_ok()
        })
    }

    pub(super) fn install() {
        if !pipe_ready() {
            return;
        }
        let mut saved = saved();
        if !saved.is_empty() {
            return;
        }
        for signal in SIGNALS {
            // SAFETY: sigaction with valid pointers; a zeroed sigaction is a valid starting point.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 || old.sa_sigaction == libc::SIG_IGN {
                    continue;
                }
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                new.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut new.sa_mask);
                if libc::sigaction(signal, &new, std::ptr::null_mut()) == 0 {
                    saved.push((signal, old));
                }
            }
        }
    }

    pub(super) fn restore() {
        for (signal, old) in saved().drain(..) {
            // SAFETY: puts back a disposition read by sigaction.
            unsafe { libc::sigaction(signal, &old, std::ptr::null_mut()) };
        }
    }

    pub(super) fn take_pending() -> Option<libc::c_int> {
        Some(PENDING.swap(0, Ordering::SeqCst)).filter(|&s| s != 0)
    }

    pub(super) fn raise(signal: libc::c_int) {
        // SAFETY: plain libc call.
        unsafe {
            libc::raise(signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shell command printing the shell's process group.
    const GROUP_OF_SHELL: &str = "cut -d' ' -f5 /proc/$$/stat";

    #[test]
    fn output_captures_both_streams_and_the_status() {
        let out = output(Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"])).unwrap();
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
        assert_eq!(out.status.code(), Some(3));
    }

    #[test]
    fn a_tool_runs_in_a_group_of_its_own_without_our_input() {
        let out = output(Command::new("sh").args(["-c", &format!("echo $$; {GROUP_OF_SHELL}; cat")])).unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let numbers: Vec<i32> = text.lines().map(|l| l.trim().parse().unwrap_or(-1)).collect();
        assert_eq!(numbers.len(), 2, "it read input it was not given, or failed: {text:?} {:?}", String::from_utf8_lossy(&out.stderr));
        // The shell leads a group of its own, not ours.
        assert_eq!(numbers[1], numbers[0], "{text:?}");
        // SAFETY: getpgrp cannot fail.
        assert_ne!(numbers[1], unsafe { libc::getpgrp() }, "the child shares our group");
    }

    #[test]
    fn a_launcher_stays_in_our_group() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgid");
        let script = format!("{GROUP_OF_SHELL} > '{}'", file.display());
        let status = status_sharing_group(Command::new("sh").args(["-c", &script])).unwrap();
        assert!(status.success());
        let group: i32 = std::fs::read_to_string(&file).unwrap().trim().parse().unwrap();
        // SAFETY: getpgrp cannot fail.
        assert_eq!(group, unsafe { libc::getpgrp() });
    }

    #[test]
    fn a_tool_that_cannot_start_is_an_error_of_its_own_kind() {
        // The driver says "cannot run the C compiler" for it; it must not look like a failure
        // of the tool.
        let err = output(&mut Command::new("/nonexistent/yosegi-no-such-tool")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
