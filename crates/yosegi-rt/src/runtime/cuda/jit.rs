//! Kernel code made off the program's path: NVRTC compilations (and disk cache reads) on
//! worker threads, so that a launch waits only for its own kernel and never for a queue of
//! compilations done one after another.
//!
//! * At start ([`CudaDevice::prepare`](super::CudaDevice); under `yosegi run` already while
//!   the host code is compiled, [`start_ahead`]) the device asks for every grid
//!   kernel of the program in the forms a launch takes before it knows its values
//!   ([`ahead_variants`]: the generic kernel, and the 32-bit, no-aliasing one most launches
//!   take): the workers read them from the disk cache or compile them while the host code
//!   runs up to its first region.
//! * A launch whose own variant (specialised on its values) is not ready runs the prepared
//!   form of the same kernel and asks a worker for its own, which later launches take once
//!   it is there (`CudaDevice::function`).
//! * A launch that needs a job nobody has started yet runs it on its own thread rather than
//!   wait behind the queue ([`JitPool::wait`]), so the order of the queue never delays it.
//!
//! Workers are a rayon pool of all but one of the machine's CPUs (at most [`MAX_WORKERS`]);
//! NVRTC compiles separate programs concurrently. Loading an image into the GPU stays with
//! the device's thread, which holds its context.
//!
//! At exit ([`quiesce`]: when `main` returns, when the program's exit handlers reach the
//! runtime's, and from `atexit`) jobs no thread has started are dropped and the process waits
//! for those running: NVRTC's exit handlers (and those of the builtins library its first
//! compilation loads) tear it down, and a worker still inside it would crash the process
//! after the program ended.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Once};
use std::time::{Duration, Instant};

use crate::back::cuda::{CudaOptions, IndexWidth, ParamAliasing, grid_kernel_cuda_with, kernel_symbol};
use crate::ir::{GridKernel, Module};
use crate::source::SourceSet;

use super::cache::{self, DiskCache, ImageKind};
use super::driver::{self, Image};

/// Worker threads at most: NVRTC takes a few hundred MB per compilation.
pub const MAX_WORKERS: usize = 16;

/// What a job names: a prepared form of a kernel (by symbol and the options that are not
/// values), whose source the worker writes, or a source the launch wrote (by its cache key).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum JobKey {
    Prepared { symbol: String, width: IndexWidth, aliasing: ParamAliasing },
    Source(u64),
}

/// Where a job's image came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Made {
    Disk,
    Nvrtc,
}

/// A finished job: the source it is the image of, the image, and how long it took.
pub struct Ready {
    pub source: String,
    pub image: Image,
    pub made: Made,
    pub took: Duration,
}

pub type Outcome = Result<Arc<Ready>, String>;

type Work = Box<dyn FnOnce() -> Outcome + Send>;

struct Job {
    /// The work until a thread takes it (a worker, or a launch that could not wait).
    work: Mutex<Option<Work>>,
    done: Mutex<Option<Outcome>>,
    finished: Condvar,
}

/// Set at exit: no job starts any more.
static CLOSING: AtomicBool = AtomicBool::new(false);
/// Jobs running now, and the signal that one ended.
static RUNNING: Mutex<usize> = Mutex::new(0);
static ENDED: Condvar = Condvar::new();

/// Starts no more jobs and waits for the running ones (see the module doc).
pub fn quiesce() {
    CLOSING.store(true, Ordering::SeqCst);
    let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    while *running > 0 {
        running = ENDED.wait(running).unwrap_or_else(|e| e.into_inner());
    }
}

extern "C" fn quiesce_at_exit() {
    quiesce();
}

impl Job {
    /// Runs the work if nobody has taken it yet and the process is not exiting.
    fn run_if_untaken(&self) {
        let work = {
            // Counted as running before the exit can see it untaken: `quiesce` either sees
            // this job running, or this thread sees the exit and leaves the work alone.
            let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
            if CLOSING.load(Ordering::SeqCst) {
                return;
            }
            let work = self.work.lock().unwrap_or_else(|e| e.into_inner()).take();
            if work.is_some() {
                *running += 1;
            }
            work
        };
        if let Some(work) = work {
            let outcome = work();
            *self.done.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
            self.finished.notify_all();
            *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
            ENDED.notify_all();
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        self.done.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The jobs of one device's GPU architecture, and the threads that run them.
pub struct JitPool {
    jobs: Mutex<HashMap<JobKey, Arc<Job>>>,
    workers: Option<rayon::ThreadPool>,
    disk: Arc<Mutex<DiskCache>>,
    arch: u32,
    nvrtc_version: (i32, i32),
}

impl JitPool {
    /// A pool compiling for `sm_<arch>` with NVRTC `nvrtc_version`, reading and filling `disk`.
    /// Without worker threads (none could be made), jobs run when a launch waits for them.
    pub fn new(arch: u32, nvrtc_version: (i32, i32), disk: Arc<Mutex<DiskCache>>) -> JitPool {
        // After NVRTC was loaded (the device asked its version), so this runs before its
        // exit handlers (`atexit` runs handlers in reverse order).
        static AT_EXIT: Once = Once::new();
        AT_EXIT.call_once(|| {
            // SAFETY: registers a plain `extern "C"` function without arguments.
            unsafe { libc::atexit(quiesce_at_exit) };
        });
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).saturating_sub(1).clamp(1, MAX_WORKERS);
        let workers = rayon::ThreadPoolBuilder::new().num_threads(threads).thread_name(|i| format!("yosegi-jit-{i}")).build().ok();
        JitPool { jobs: Mutex::new(HashMap::new()), workers, disk, arch, nvrtc_version }
    }

    /// The process's pool for `sm_<arch>` and NVRTC `nvrtc_version`, made on first use: the
    /// devices on GPUs of one architecture (logical devices on one GPU, `--gpus N`) share its
    /// workers and its jobs, so a kernel is compiled once for all of them.
    pub fn shared(arch: u32, nvrtc_version: (i32, i32), disk: Arc<Mutex<DiskCache>>) -> Arc<JitPool> {
        static POOLS: Mutex<Vec<Arc<JitPool>>> = Mutex::new(Vec::new());
        let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(pool) = pools.iter().find(|p| p.arch == arch && p.nvrtc_version == nvrtc_version) {
            return pool.clone();
        }
        let pool = Arc::new(JitPool::new(arch, nvrtc_version, disk));
        pools.push(pool.clone());
        pool
    }

    fn job(&self, key: &JobKey) -> Option<Arc<Job>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).get(key).cloned()
    }

    /// Whether `key` was asked for.
    pub fn has(&self, key: &JobKey) -> bool {
        self.job(key).is_some()
    }

    /// Asks for the image of `source` (kernel `symbol`), keyed by its cache key, which the
    /// caller found missing from the disk cache: the job compiles it (and stores it there).
    pub fn request_source(&self, image_key: u64, symbol: String, source: String) {
        let (arch, nvrtc_version, disk) = (self.arch, self.nvrtc_version, self.disk.clone());
        self.submit(JobKey::Source(image_key), Box::new(move || make_image(&disk, &symbol, source, arch, nvrtc_version, Lookup::Compile)));
    }

    /// Asks for the prepared forms of every grid kernel of `module` ([`ahead_variants`]).
    pub fn request_prepared(&self, module: &Arc<Module>, sources: Option<Arc<SourceSet>>) {
        for (handle, kernel) in module.grid_kernels.iter() {
            for (width, aliasing) in ahead_variants(module, kernel) {
                let symbol = kernel_symbol(kernel);
                let key = JobKey::Prepared { symbol: symbol.clone(), width, aliasing };
                let (module, sources) = (module.clone(), sources.clone());
                let (arch, nvrtc_version, disk) = (self.arch, self.nvrtc_version, self.disk.clone());
                self.submit(
                    key,
                    Box::new(move || {
                        let source = prepared_source(&module, &module.grid_kernels[handle], width, aliasing, sources.as_deref());
                        make_image(&disk, &symbol, source, arch, nvrtc_version, Lookup::DiskFirst)
                    }),
                );
            }
        }
    }

    fn submit(&self, key: JobKey, work: Work) {
        let job = {
            let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
            if jobs.contains_key(&key) {
                return;
            }
            let job = Arc::new(Job { work: Mutex::new(Some(work)), done: Mutex::new(None), finished: Condvar::new() });
            jobs.insert(key, job.clone());
            job
        };
        if let Some(workers) = &self.workers {
            workers.spawn_fifo(move || job.run_if_untaken());
        }
    }

    /// The outcome of `key` if it is finished; `None` while it runs or was never asked for.
    pub fn poll(&self, key: &JobKey) -> Option<Outcome> {
        self.job(key)?.outcome()
    }

    /// The outcome of `key`, waiting for it; a job no thread has started is run here.
    /// `None`: never asked for.
    pub fn wait(&self, key: &JobKey) -> Option<Outcome> {
        let job = self.job(key)?;
        job.run_if_untaken();
        let mut done = job.done.lock().unwrap_or_else(|e| e.into_inner());
        while done.is_none() {
            if CLOSING.load(Ordering::SeqCst) && job.work.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
                return Some(Err("the program is exiting".to_string()));
            }
            done = job.finished.wait(done).unwrap_or_else(|e| e.into_inner());
        }
        done.clone()
    }
}

/// Starts the prepared forms of `module`'s grid kernels for every GPU architecture of this
/// machine before the runtime opens a device: `yosegi run` calls it before it builds the
/// program's host code, so NVRTC (or the disk cache) works while the system compiler does and
/// the first launches find their kernels made. The devices opened later share these pools
/// ([`JitPool::shared`]) and their jobs. Nothing happens without a GPU or NVRTC (the device
/// says why when it opens).
pub fn start_ahead(module: &Arc<Module>, sources: &Arc<SourceSet>) {
    if module.grid_kernels.iter().next().is_none() || driver::check_nvrtc_library().is_err() {
        return;
    }
    let archs = super::embedded::local_architectures();
    if archs.is_empty() {
        return;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC was checked loadable with this symbol; valid out-pointers.
    if driver::check_nvrtc("nvrtcVersion", unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }).is_err() {
        return;
    }
    let disk = Arc::new(Mutex::new(DiskCache::at(cache::trusted_dir())));
    for arch in archs {
        JitPool::shared(arch, (major, minor), disk.clone()).request_prepared(module, Some(sources.clone()));
    }
}

/// The forms of `kernel` made before any launch of it: the generic kernel (any launch can run
/// it) and the one most launches take (32-bit indices, no param sharing memory with another:
/// what a program's distinct arrays of fewer than 2^31 elements give), or only the generic
/// kernel where the launch cannot promise the second (the kernel computes addresses).
pub fn ahead_variants(module: &Module, kernel: &GridKernel) -> Vec<(IndexWidth, ParamAliasing)> {
    let aliasing = if module.reaches_addresses(&kernel.body) { ParamAliasing::Unknown } else { ParamAliasing::Disjoint };
    vec![(IndexWidth::Bits32, aliasing), (IndexWidth::Bits64, ParamAliasing::Unknown)]
}

/// Whether a job reads the disk cache first, or its caller already found the image missing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lookup {
    DiskFirst,
    Compile,
}

/// The CUDA C of a prepared form of `kernel`: no values as constants, with the program's
/// `#line` directives where `sources` are given (as the device writes every kernel).
pub fn prepared_source(module: &Module, kernel: &GridKernel, width: IndexWidth, aliasing: ParamAliasing, sources: Option<&SourceSet>) -> String {
    grid_kernel_cuda_with(module, kernel, &CudaOptions { specialise: None, index_width: width, aliasing, sources })
}

/// The image of `source` for `sm_<arch>`: from the disk cache (with `Lookup::DiskFirst`), else
/// compiled with NVRTC (and stored there).
fn make_image(disk: &Mutex<DiskCache>, symbol: &str, source: String, arch: u32, nvrtc_version: (i32, i32), lookup: Lookup) -> Outcome {
    let started = Instant::now();
    let key = cache::image_key(&source, arch, nvrtc_version);
    let cached = match lookup {
        Lookup::DiskFirst => disk.lock().unwrap_or_else(|e| e.into_inner()).load(key),
        Lookup::Compile => Err(cache::Miss::Absent),
    };
    let (image, made) = match cached {
        Ok((ImageKind::Cubin, bytes)) => (Image::Cubin(bytes), Made::Disk),
        Ok((ImageKind::Ptx, bytes)) => (Image::Ptx(bytes), Made::Disk),
        Err(_) => {
            let _range = crate::runtime::nvtx::range(|| format!("compile {symbol}"));
            let image = driver::nvrtc_compile(&source, &format!("{symbol}.cu"), arch)
                .map_err(|f| format!("NVRTC could not compile the kernel for sm_{arch}:\n{}", f.log))?;
            let (kind, bytes) = match &image {
                Image::Cubin(b) => (ImageKind::Cubin, b),
                Image::Ptx(b) => (ImageKind::Ptx, b),
            };
            disk.lock().unwrap_or_else(|e| e.into_inner()).store(key, kind, bytes);
            (image, Made::Nvrtc)
        }
    };
    Ok(Arc::new(Ready { source, image, made, took: started.elapsed() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool_without_workers() -> JitPool {
        JitPool { jobs: Mutex::new(HashMap::new()), workers: None, disk: Arc::new(Mutex::new(DiskCache::at(None))), arch: 90, nvrtc_version: (13, 0) }
    }

    fn ready(source: &str) -> Outcome {
        Ok(Arc::new(Ready { source: source.to_string(), image: Image::Ptx(vec![0]), made: Made::Disk, took: Duration::ZERO }))
    }

    #[test]
    fn a_job_nobody_started_runs_on_the_waiting_thread_once() {
        let pool = pool_without_workers();
        let runs = Arc::new(Mutex::new(0));
        let counted = runs.clone();
        pool.submit(
            JobKey::Source(7),
            Box::new(move || {
                *counted.lock().unwrap() += 1;
                ready("a")
            }),
        );
        // Asking again does not queue a second job.
        pool.submit(JobKey::Source(7), Box::new(|| ready("b")));
        assert!(pool.poll(&JobKey::Source(7)).is_none(), "nothing ran it yet");
        let outcome = pool.wait(&JobKey::Source(7)).expect("asked for").expect("made");
        assert_eq!(outcome.source, "a");
        assert_eq!(pool.wait(&JobKey::Source(7)).unwrap().unwrap().source, "a");
        assert_eq!(*runs.lock().unwrap(), 1);
        assert!(pool.wait(&JobKey::Source(8)).is_none());
    }

    #[test]
    fn workers_finish_jobs_without_anyone_waiting() {
        let pool = JitPool::new(90, (13, 0), Arc::new(Mutex::new(DiskCache::at(None))));
        for k in 0..32 {
            pool.submit(JobKey::Source(k), Box::new(move || ready(&k.to_string())));
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while (0..32).any(|k| pool.poll(&JobKey::Source(k)).is_none()) {
            assert!(Instant::now() < deadline, "the workers did not finish");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(pool.poll(&JobKey::Source(31)).unwrap().unwrap().source, "31");
    }

    #[test]
    fn a_failed_job_reports_its_error_to_every_waiter() {
        let pool = pool_without_workers();
        pool.submit(JobKey::Source(1), Box::new(|| Err("no NVRTC".to_string())));
        assert_eq!(pool.wait(&JobKey::Source(1)).unwrap().err().as_deref(), Some("no NVRTC"));
        assert_eq!(pool.poll(&JobKey::Source(1)).unwrap().err().as_deref(), Some("no NVRTC"));
    }
}
