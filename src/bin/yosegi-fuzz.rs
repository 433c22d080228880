//! `yosegi-fuzz`: the front end's mutation fuzzer.
//!
//! ```text
//! yosegi-fuzz [--seconds N | --inputs N] [--seed S] [--jobs J] [--out DIR] [--no-default-corpus] CORPUS...
//! ```
//!
//! Preprocesses every corpus file (`.c` files, or folders searched for them) once with `cpp`,
//! then compiles mutants of the preprocessed text in-process (`yosegi::fuzz`): every input must
//! end in a compiled program or in diagnostics. The corpus is `tests/programs`,
//! `tests/staging_programs`, `tests/bad` and `examples` (those found in the current directory,
//! unless `--no-default-corpus`) plus the CORPUS arguments.
//!
//! The process is a supervisor: it runs `J` worker processes (this binary again, with a hidden
//! flag), each fuzzing on one thread with the CLI's stack inside `catch_unwind`, with a watchdog
//! that calls an input a hang when it has used over 20 s of CPU time (or run over six times
//! that on the clock: a loaded machine slows every input down, and only CPU time says which
//! input is slow itself). Before each input a worker writes it to
//! `OUT/current-<worker>.c`; when a worker dies (a stack overflow, another signal), the
//! supervisor keeps that file as `OUT/crash-<input>.c` with the reason and starts the worker
//! again after that input. Panics and hangs are saved as `OUT/panic-<input>.c` and
//! `OUT/hang-<input>.c`, each with a `.txt` saying what happened. Input `k` depends only on the
//! seed, `k` and the corpus, whatever the number of workers. A worker whose supervisor is gone
//! (killed, not asked to stop) ends within half a second.
//!
//! `yosegi-fuzz --replay FILE...` compiles saved inputs (preprocessed text) once each, with
//! staging `auto` and forced, and says what became of them.
//!
//! On a terminal a progress bar (inputs, or seconds with `--seconds`, and the counts) is drawn
//! on stderr; on a pipe or in a file only the findings and the summary are written. The last
//! line on stdout is
//! `fuzz: N inputs, P panics, H hangs, C crashes`. Exit status 1 when anything was found, 2 on a
//! usage or setup error, 0 otherwise.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;
use yosegi::front::PreprocessOptions;
use yosegi::front::preprocess::{self, BuiltinHeaders};
use yosegi::fuzz::{self, CorpusEntry};
use yosegi::runtime::progress;

const DEFAULT_CORPUS: &[&str] = &["tests/programs", "tests/staging_programs", "tests/bad", "examples"];
const DEFAULT_HANG_SECONDS: u64 = 20;
/// An input that has not used `--hang-seconds` of CPU is still a hang past this many times
/// that on the clock (it waits on something, or the machine gives it no CPU at all).
const HANG_WALL_FACTOR: u64 = 6;
/// Findings saved per panic location (the count covers them all).
const SAVED_PER_LOCATION: usize = 3;
const USAGE: &str = "usage: yosegi-fuzz [--seconds N | --inputs N] [--seed S] [--jobs J] [--out DIR] [--hang-seconds N] [--no-default-corpus] CORPUS...";

struct Options {
    seconds: Option<u64>,
    inputs: Option<u64>,
    seed: u64,
    jobs: usize,
    out: PathBuf,
    default_corpus: bool,
    corpus: Vec<PathBuf>,
    hang_seconds: u64,
    /// Hidden, for the fuzzer's own tests: `panic@K`, `abort@K`, `overflow@K` or `hang@K` makes
    /// input `K` fail that way instead of being compiled.
    fault: Option<(String, u64)>,
    replay: bool,
    /// Hidden: run as worker `W` of `jobs`, from input `start`, until `deadline_ms` (epoch ms).
    worker: Option<usize>,
    start: u64,
    deadline_ms: Option<u64>,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        seconds: None,
        inputs: None,
        seed: 0,
        jobs: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        out: PathBuf::from("yosegi-fuzz-out"),
        default_corpus: true,
        corpus: Vec::new(),
        hang_seconds: DEFAULT_HANG_SECONDS,
        fault: None,
        replay: false,
        worker: None,
        start: 0,
        deadline_ms: None,
    };
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        let mut value = |name: &str| -> Result<String, String> {
            args.next().map(|v| v.to_string_lossy().into_owned()).ok_or(format!("{name} needs a value"))
        };
        let number = |name: &str, v: String| v.parse::<u64>().map_err(|_| format!("{name}: not a number: {v}"));
        match text.as_str() {
            "--seconds" => o.seconds = Some(number("--seconds", value("--seconds")?)?),
            "--inputs" => o.inputs = Some(number("--inputs", value("--inputs")?)?),
            "--seed" => o.seed = number("--seed", value("--seed")?)?,
            "--jobs" => o.jobs = (number("--jobs", value("--jobs")?)? as usize).max(1),
            "--out" => o.out = PathBuf::from(value("--out")?),
            "--no-default-corpus" => o.default_corpus = false,
            "--replay" => o.replay = true,
            "--hang-seconds" => o.hang_seconds = number("--hang-seconds", value("--hang-seconds")?)?.max(1),
            "--fault" => {
                let v = value("--fault")?;
                let (kind, k) = v.split_once('@').ok_or("--fault: KIND@K")?;
                o.fault = Some((kind.to_string(), number("--fault", k.to_string())?));
            }
            "--worker" => o.worker = Some(number("--worker", value("--worker")?)? as usize),
            "--start" => o.start = number("--start", value("--start")?)?,
            "--deadline-ms" => o.deadline_ms = Some(number("--deadline-ms", value("--deadline-ms")?)?),
            "-h" | "--help" => return Err(String::new()),
            _ if text.starts_with('-') => return Err(format!("unknown option {text}")),
            _ => o.corpus.push(PathBuf::from(arg)),
        }
    }
    if o.seconds.is_some() && o.inputs.is_some() {
        return Err("give --seconds or --inputs, not both".into());
    }
    if o.seconds.is_none() && o.inputs.is_none() {
        o.seconds = Some(60);
    }
    Ok(o)
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            if e.is_empty() {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            eprintln!("yosegi-fuzz: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match options.worker {
        Some(w) => worker(&options, w),
        None if options.replay => replay(&options),
        None => supervise(&options),
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// CPU time this process has used, in ms (a worker's fuzzing thread uses nearly all of it).
fn cpu_ms() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } != 0 {
        return 0;
    }
    (t.tv_sec as u64).saturating_mul(1000).saturating_add(t.tv_nsec as u64 / 1_000_000)
}

/// What the watchdog calls a hang, for the reports.
fn hang_text(hang_seconds: u64) -> String {
    format!("{hang_seconds} s of CPU time (or {} s on the clock)", hang_seconds * HANG_WALL_FACTOR)
}

// ---- the corpus ------------------------------------------------------------------------------

fn collect_c_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else { return };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        children.sort();
        for child in children {
            collect_c_files(&child, out);
        }
    } else if path.extension().is_some_and(|e| e == "c") && path.is_file() {
        out.push(path.to_path_buf());
    }
}

/// Preprocesses every corpus file (in parallel), each with its own folder on the include path.
fn load_corpus(options: &Options) -> Result<Vec<CorpusEntry>, String> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if options.default_corpus {
        roots.extend(DEFAULT_CORPUS.iter().map(PathBuf::from).filter(|p| p.exists()));
    }
    for p in &options.corpus {
        if !p.exists() {
            return Err(format!("{}: no such file or folder", p.display()));
        }
        roots.push(p.clone());
    }
    let mut files = Vec::new();
    for root in &roots {
        collect_c_files(root, &mut files);
    }
    files.sort();
    files.dedup();
    let builtin = BuiltinHeaders::new().map_err(|d| d.message)?;
    let results: Vec<(PathBuf, Result<String, String>)> = files
        .par_iter()
        .map(|file| {
            let folder = file.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
            let opts = PreprocessOptions { include_dirs: vec![folder], ..PreprocessOptions::default() };
            (file.clone(), preprocess::preprocess(file, &opts, &builtin).map_err(|d| d.message))
        })
        .collect();
    let mut corpus = Vec::new();
    let mut refused = 0;
    for (path, result) in results {
        match result {
            Ok(text) => corpus.push(CorpusEntry { path, text }),
            Err(_) => refused += 1,
        }
    }
    if refused > 0 {
        eprintln!("yosegi-fuzz: {refused} corpus file(s) left out: cpp refused them");
    }
    if corpus.is_empty() {
        return Err("the corpus is empty: give .c files or folders that hold some".into());
    }
    Ok(corpus)
}

/// The corpus file the workers read: per entry, the path and the text, each length-prefixed.
fn write_corpus(corpus: &[CorpusEntry], file: &Path) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(file)?);
    out.write_all(&(corpus.len() as u64).to_le_bytes())?;
    for entry in corpus {
        for bytes in [entry.path.as_os_str().as_bytes(), entry.text.as_bytes()] {
            out.write_all(&(bytes.len() as u64).to_le_bytes())?;
            out.write_all(bytes)?;
        }
    }
    out.flush()
}

fn read_corpus(file: &Path) -> std::io::Result<Vec<CorpusEntry>> {
    let mut bytes = Vec::new();
    std::fs::File::open(file)?.read_to_end(&mut bytes)?;
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "corrupt corpus file");
    let mut at = 0usize;
    let next = |at: &mut usize, n: usize| -> std::io::Result<Vec<u8>> {
        let piece = bytes.get(*at..*at + n).ok_or_else(bad)?.to_vec();
        *at += n;
        Ok(piece)
    };
    let number = |v: Vec<u8>| u64::from_le_bytes(v.try_into().unwrap_or([0; 8])) as usize;
    let count = number(next(&mut at, 8)?);
    let mut corpus = Vec::with_capacity(count);
    for _ in 0..count {
        let n = number(next(&mut at, 8)?);
        let path = PathBuf::from(OsString::from_vec(next(&mut at, n)?));
        let n = number(next(&mut at, 8)?);
        let text = String::from_utf8(next(&mut at, n)?).map_err(|_| bad())?;
        corpus.push(CorpusEntry { path, text });
    }
    Ok(corpus)
}

// ---- the worker ------------------------------------------------------------------------------

/// The message and place of the last panic, recorded by the quiet panic hook.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

fn install_quiet_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = if let Some(s) = info.payload().downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "(a panic without a message)".to_string()
        };
        let place = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        let backtrace = std::backtrace::Backtrace::force_capture();
        let text = format!("panicked at {place}:\n{message}\n\nbacktrace:\n{backtrace}");
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(text);
        }
    }));
}

fn save_finding(out: &Path, kind: &str, k: u64, input: &str, report: &str) {
    let _ = std::fs::write(out.join(format!("{kind}-{k}.c")), input);
    let _ = std::fs::write(out.join(format!("{kind}-{k}.txt")), report);
}

fn describe(corpus: &[CorpusEntry], seed: u64, k: u64, input: &fuzz::FuzzInput) -> String {
    format!(
        "input {k} of seed {seed}, from {}\nstaging: {}\nmutations:\n  {}\n",
        corpus[input.entry].path.display(),
        if input.force_staging { "on" } else { "auto" },
        input.mutations.join("\n  ")
    )
}

fn worker(options: &Options, w: usize) -> ExitCode {
    let corpus = match read_corpus(&options.out.join("corpus.bin")) {
        Ok(c) if !c.is_empty() => c,
        Ok(_) => {
            eprintln!("yosegi-fuzz worker: empty corpus");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("yosegi-fuzz worker: cannot read the corpus: {e}");
            return ExitCode::from(2);
        }
    };
    install_quiet_panic_hook();
    // The watchdog: an input that has used over `--hang-seconds` of CPU time (or run over
    // `HANG_WALL_FACTOR` times that on the clock) is a hang; the process then ends, and the
    // supervisor starts the worker again after it.
    let started = Arc::new(AtomicU64::new(0));
    let started_cpu = Arc::new(AtomicU64::new(0));
    let current = Arc::new(AtomicU64::new(0));
    let hang_seconds = options.hang_seconds;
    // SAFETY: getppid has no preconditions.
    let supervisor = unsafe { libc::getppid() };
    {
        let (started, started_cpu, current, out) = (started.clone(), started_cpu.clone(), current.clone(), options.out.clone());
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(500));
                // A supervisor that was killed leaves its workers to the system: they end too,
                // rather than fuzz on until their inputs run out.
                // SAFETY: as above.
                if unsafe { libc::getppid() } != supervisor {
                    std::process::exit(5);
                }
                let since = started.load(Ordering::SeqCst);
                if since == 0 {
                    continue;
                }
                let cpu = cpu_ms().saturating_sub(started_cpu.load(Ordering::SeqCst));
                let wall = now_ms().saturating_sub(since);
                let limit = hang_seconds * 1000;
                if cpu > limit || wall > limit * HANG_WALL_FACTOR {
                    let k = current.load(Ordering::SeqCst);
                    let input = std::fs::read_to_string(out.join(format!("current-{w}.c"))).unwrap_or_default();
                    let report = format!("hang: input {k} ran over {}\n", hang_text(hang_seconds));
                    save_finding(&out, "hang", k, &input, &report);
                    let mut stdout = std::io::stdout().lock();
                    let _ = writeln!(stdout, "hang {k}");
                    let _ = stdout.flush();
                    std::process::exit(3);
                }
            }
        });
    }
    let jobs = options.jobs as u64;
    let limit = options.inputs.unwrap_or(u64::MAX);
    let deadline = options.deadline_ms.unwrap_or(u64::MAX);
    let tuning_dir = options.out.join("no-tuning-cache");
    let current_file = options.out.join(format!("current-{w}.c"));
    let fuzz_thread = std::thread::Builder::new().name(format!("fuzz-{w}")).stack_size(yosegi::driver::COMPILER_STACK_BYTES);
    let body = move || {
        let mut saved: HashMap<String, usize> = HashMap::new();
        let (mut compiled, mut rejected) = (0u64, 0u64);
        let mut k = options.start;
        while k < limit && now_ms() < deadline {
            let input = fuzz::fuzz_input(&corpus, options.seed, k);
            if let Err(e) = std::fs::write(&current_file, &input.text) {
                eprintln!("yosegi-fuzz worker: cannot write {}: {e}", current_file.display());
                return ExitCode::from(2);
            }
            {
                let mut stdout = std::io::stdout().lock();
                let _ = writeln!(stdout, "{k}");
                let _ = stdout.flush();
            }
            current.store(k, Ordering::SeqCst);
            started_cpu.store(cpu_ms(), Ordering::SeqCst);
            started.store(now_ms().max(1), Ordering::SeqCst);
            let path = corpus[input.entry].path.clone();
            let text = input.text.clone();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if let Some((kind, at)) = &options.fault
                    && *at == k
                {
                    self_test_fault(kind);
                }
                fuzz::check_input(&path, text, input.force_staging, &tuning_dir)
            }));
            started.store(0, Ordering::SeqCst);
            match result {
                Ok(fuzz::Verdict::Compiled) => compiled += 1,
                Ok(fuzz::Verdict::Rejected) => rejected += 1,
                Err(_) => {}
            }
            if result.is_err() {
                let report = LAST_PANIC.lock().ok().and_then(|mut p| p.take()).unwrap_or_default();
                let place = report.lines().next().unwrap_or("").to_string();
                let message = report.lines().nth(1).unwrap_or("").to_string();
                let times = saved.entry(place.clone()).or_insert(0);
                *times += 1;
                if *times <= SAVED_PER_LOCATION {
                    save_finding(&options.out, "panic", k, &input.text, &format!("{}\n{report}", describe(&corpus, options.seed, k, &input)));
                }
                let mut stdout = std::io::stdout().lock();
                let _ = writeln!(stdout, "panic {k} {place} {message}");
                let _ = stdout.flush();
            }
            k = k.saturating_add(jobs);
        }
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "done {compiled} {rejected}");
        let _ = stdout.flush();
        ExitCode::SUCCESS
    };
    match std::thread::scope(|s| fuzz_thread.spawn_scoped(s, body).map(|h| h.join())) {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => ExitCode::from(4),
        Err(e) => {
            eprintln!("yosegi-fuzz worker: cannot start the fuzzing thread: {e}");
            ExitCode::from(2)
        }
    }
}

/// Fails the way `kind` says (the fuzzer's own tests check that each is found).
fn self_test_fault(kind: &str) {
    #[allow(unconditional_recursion)]
    fn recurse(n: u64) -> u64 {
        let frame = [n; 64];
        std::hint::black_box(&frame);
        recurse(n + 1) + std::hint::black_box(frame[0])
    }
    match kind {
        "panic" => panic!("self-test panic"),
        "abort" => std::process::abort(),
        // On a small stack, so that the overflow comes at once.
        "overflow" => {
            let small = std::thread::Builder::new().stack_size(256 << 10).spawn(|| std::hint::black_box(recurse(0)));
            let _ = small.map(|t| t.join());
        }
        // Busy, as a slow compilation is: the watchdog counts CPU time.
        "hang" => loop {
            std::hint::black_box(std::hint::spin_loop());
        },
        _ => {}
    }
}

/// Compiles each saved input as a worker would, and says what became of it.
fn replay(options: &Options) -> ExitCode {
    install_quiet_panic_hook();
    let tuning_dir = options.out.join("no-tuning-cache");
    let body = || {
        let mut failed = false;
        for file in &options.corpus {
            let text = match std::fs::read_to_string(file) {
                Ok(t) => t,
                Err(e) => {
                    println!("{}: cannot read: {e}", file.display());
                    failed = true;
                    continue;
                }
            };
            for force_staging in [false, true] {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    fuzz::check_input(file, text.clone(), force_staging, &tuning_dir)
                }));
                let staging = if force_staging { "on" } else { "auto" };
                match result {
                    Ok(verdict) => println!("{} (staging {staging}): {verdict:?}", file.display()),
                    Err(_) => {
                        failed = true;
                        let report = LAST_PANIC.lock().ok().and_then(|mut p| p.take()).unwrap_or_default();
                        println!("{} (staging {staging}): {report}", file.display());
                    }
                }
            }
        }
        if failed { ExitCode::from(1) } else { ExitCode::SUCCESS }
    };
    let thread = std::thread::Builder::new().stack_size(yosegi::driver::COMPILER_STACK_BYTES);
    std::thread::scope(|s| thread.spawn_scoped(s, body).map(|h| h.join().unwrap_or(ExitCode::from(4)))).unwrap_or(ExitCode::from(2))
}

// ---- the supervisor --------------------------------------------------------------------------

enum Event {
    Started(usize, u64),
    Panic(u64, String),
    Hang(usize, u64),
    Done(usize, u64, u64),
    Exited(usize, ExitStatus, Vec<String>),
}

fn spawn_worker(options: &Options, w: usize, start: u64, deadline_ms: Option<u64>, events: mpsc::Sender<Event>) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.arg("--worker").arg(w.to_string()).arg("--jobs").arg(options.jobs.to_string());
    cmd.arg("--seed").arg(options.seed.to_string()).arg("--start").arg(start.to_string());
    cmd.arg("--out").arg(&options.out);
    if let Some(n) = options.inputs {
        cmd.arg("--inputs").arg(n.to_string());
    }
    if let Some(d) = deadline_ms {
        cmd.arg("--deadline-ms").arg(d.to_string());
    }
    cmd.arg("--hang-seconds").arg(options.hang_seconds.to_string());
    if let Some((kind, k)) = &options.fault {
        cmd.arg("--fault").arg(format!("{kind}@{k}"));
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child: Child = cmd.spawn()?;
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    std::thread::spawn(move || {
        // The tail of the worker's stderr (a stack overflow says so there).
        let tail = std::thread::spawn(move || {
            let mut lines: Vec<String> = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                lines.push(line);
                if lines.len() > 40 {
                    lines.remove(0);
                }
            }
            lines
        });
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let mut words = line.splitn(3, ' ');
            let event = match (words.next(), words.next()) {
                (Some("done"), Some(c)) => {
                    let r = words.next().and_then(|r| r.parse().ok()).unwrap_or(0);
                    Event::Done(w, c.parse().unwrap_or(0), r)
                }
                (Some("hang"), Some(k)) => Event::Hang(w, k.parse().unwrap_or(0)),
                (Some("panic"), Some(k)) => Event::Panic(k.parse().unwrap_or(0), words.next().unwrap_or("").to_string()),
                (Some(k), None) => match k.parse() {
                    Ok(k) => Event::Started(w, k),
                    Err(_) => continue,
                },
                _ => continue,
            };
            let _ = events.send(event);
        }
        let tail = tail.join().unwrap_or_default();
        let status = child.wait().unwrap_or_else(|_| ExitStatus::from_raw(0x7f00));
        let _ = events.send(Event::Exited(w, status, tail));
    });
    Ok(())
}

#[derive(Default)]
struct WorkerState {
    last_started: Option<u64>,
    done: bool,
    hung: bool,
    running: bool,
}

fn describe_status(status: ExitStatus) -> String {
    match (status.signal(), status.code()) {
        (Some(sig), _) => {
            let name = match sig {
                libc::SIGSEGV => "SIGSEGV",
                libc::SIGABRT => "SIGABRT",
                libc::SIGBUS => "SIGBUS",
                libc::SIGILL => "SIGILL",
                libc::SIGFPE => "SIGFPE",
                libc::SIGKILL => "SIGKILL",
                _ => "",
            };
            format!("killed by signal {sig} {name}")
        }
        (None, Some(code)) => format!("exited with status {code}"),
        _ => "ended".to_string(),
    }
}

fn supervise(options: &Options) -> ExitCode {
    let began = Instant::now();
    if let Err(e) = std::fs::create_dir_all(&options.out) {
        eprintln!("yosegi-fuzz: cannot create {}: {e}", options.out.display());
        return ExitCode::from(2);
    }
    let corpus = match load_corpus(options) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("yosegi-fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    let corpus_file = options.out.join("corpus.bin");
    if let Err(e) = write_corpus(&corpus, &corpus_file) {
        eprintln!("yosegi-fuzz: cannot write {}: {e}", corpus_file.display());
        return ExitCode::from(2);
    }
    let deadline_ms = options.seconds.map(|s| now_ms() + s * 1000);
    eprintln!(
        "yosegi-fuzz: {} corpus files (preprocessed in {:.1} s), seed {}, {} worker(s), findings in {}",
        corpus.len(),
        began.elapsed().as_secs_f64(),
        options.seed,
        options.jobs,
        options.out.display()
    );
    let fuzz_began = Instant::now();
    let (tx, rx) = mpsc::channel();
    let mut workers: Vec<WorkerState> = (0..options.jobs).map(|_| WorkerState::default()).collect();
    for (w, state) in workers.iter_mut().enumerate() {
        if let Err(e) = spawn_worker(options, w, w as u64, deadline_ms, tx.clone()) {
            eprintln!("yosegi-fuzz: cannot start a worker: {e}");
            return ExitCode::from(2);
        }
        state.running = true;
    }
    let (mut inputs, mut panics, mut hangs, mut crashes) = (0u64, 0u64, 0u64, 0u64);
    // Reported by the workers as they finish (a worker that died took its counts along).
    let (mut compiled, mut rejected) = (0u64, 0u64);
    let mut setup_failure = false;
    // On a terminal, a bar (of inputs, or of seconds with `--seconds`) with the counts; on a
    // pipe or in a file, only the findings and the summary.
    let bar = progress::Bar::new(options.inputs.or(options.seconds), "fuzz");
    while workers.iter().any(|s| s.running) {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Event::Started(w, k)) => {
                inputs += 1;
                workers[w].last_started = Some(k);
            }
            Ok(Event::Panic(k, what)) => {
                panics += 1;
                bar.line(&format!("yosegi-fuzz: panic on input {k}: {what}"));
            }
            Ok(Event::Hang(w, k)) => {
                hangs += 1;
                workers[w].hung = true;
                let report = format!(
                    "hang: input {k} ran over {}\n{}",
                    hang_text(options.hang_seconds),
                    describe(&corpus, options.seed, k, &fuzz::fuzz_input(&corpus, options.seed, k))
                );
                let _ = std::fs::write(options.out.join(format!("hang-{k}.txt")), report);
                bar.line(&format!("yosegi-fuzz: hang on input {k} (over {}): {}", hang_text(options.hang_seconds), options.out.join(format!("hang-{k}.c")).display()));
            }
            Ok(Event::Done(w, c, r)) => {
                workers[w].done = true;
                compiled += c;
                rejected += r;
            }
            Ok(Event::Exited(w, status, tail)) => {
                let state = &mut workers[w];
                state.running = false;
                if state.done && status.success() {
                    continue;
                }
                let Some(k) = state.last_started else {
                    bar.line(&format!("yosegi-fuzz: worker {w} {} before its first input:\n{}", describe_status(status), tail.join("\n")));
                    setup_failure = true;
                    continue;
                };
                if !std::mem::take(&mut state.hung) {
                    crashes += 1;
                    let input = std::fs::read_to_string(options.out.join(format!("current-{w}.c"))).unwrap_or_default();
                    let fuzz_input = fuzz::fuzz_input(&corpus, options.seed, k);
                    let report = format!(
                        "crash: the worker {}\n{}\nstderr (last lines):\n{}\n",
                        describe_status(status),
                        describe(&corpus, options.seed, k, &fuzz_input),
                        tail.join("\n")
                    );
                    save_finding(&options.out, "crash", k, &input, &report);
                    bar.line(&format!(
                        "yosegi-fuzz: crash on input {k} ({}): {}",
                        describe_status(status),
                        options.out.join(format!("crash-{k}.c")).display()
                    ));
                }
                let next = k.saturating_add(options.jobs as u64);
                let more = options.inputs.is_none_or(|n| next < n) && deadline_ms.is_none_or(|d| now_ms() < d);
                if more {
                    state.done = false;
                    state.last_started = None;
                    match spawn_worker(options, w, next, deadline_ms, tx.clone()) {
                        Ok(()) => state.running = true,
                        Err(e) => bar.line(&format!("yosegi-fuzz: cannot restart worker {w}: {e}")),
                    }
                    // A restarted worker that dies before its first input is a setup failure,
                    // not a crash loop: its start is `next`, known to the supervisor.
                    workers[w].last_started = None;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let position = if options.inputs.is_some() { inputs } else { fuzz_began.elapsed().as_secs() };
        bar.set(position, || format!("{inputs} inputs: {panics} panics, {hangs} hangs, {crashes} crashes"));
    }
    drop(bar);
    let _ = std::fs::remove_file(&corpus_file);
    for w in 0..options.jobs {
        let _ = std::fs::remove_file(options.out.join(format!("current-{w}.c")));
    }
    let secs = fuzz_began.elapsed().as_secs_f64();
    eprintln!(
        "yosegi-fuzz: {:.1} s of fuzzing, {:.0} inputs/s; {compiled} compiled, {rejected} refused with diagnostics",
        secs,
        inputs as f64 / secs.max(1e-9)
    );
    println!("fuzz: {inputs} inputs, {panics} panics, {hangs} hangs, {crashes} crashes");
    if setup_failure {
        ExitCode::from(2)
    } else if panics + hangs + crashes > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
