//! Several processes, one device each, running one unchanged program (SPMD): the ranks of an
//! MPI job started by the site's launcher (`mpirun -np N ./prog`, `srun`) or by
//! `yosegi run --ranks N`.
//!
//! Every rank runs the whole host program, so every rank's runtime sees the same regions,
//! launches and host accesses in the same order, and makes the same decisions (the coherence
//! manager's, `distribute`'s split of a launch over the devices). The job's devices are
//! numbered by rank; each process drives its own ([`RankDevice`] with a device inside) and
//! stands in for the others' ([`RankDevice`] without one). What the single-process runtime does
//! on another device becomes, for a rank:
//!
//! * a launch there: nothing; the results launches hand back (reductions' partials, scalar
//!   outputs) go from each part's rank to every rank in one all-gather when the launch finishes
//!   (`Ranks::share_results`);
//! * a copy from the host to it: nothing (its rank copies from its own host memory, which holds
//!   the same values);
//! * a copy from it to the host: the bytes, broadcast by its rank, so that every rank's host
//!   reads the same values and no rank fetches a section it already holds;
//! * a copy between two devices: a message from one rank to the other (the other ranks do
//!   nothing), so a stencil's ranks send each other their halos and nothing else.
//!
//! Since every rank takes these steps in one order, each point-to-point copy meets its partner
//! and the broadcasts pair up. That order must not depend on host addresses, which differ
//! between processes: passes over every tracked object follow the order of registration
//! (`Registry::starts_in_registration_order`). Each broadcast of device data names its size, the
//! allocation's ordinal on its device and the offset first, and each results all-gather its
//! kernel, so ranks that took different paths stop there, saying so. The decisions that come from timing (the devices a program's
//! cycle keeps) are made the same way on every rank: in a job, launches split over all the
//! ranks' devices by the bytes rule. The MPI calls go through a small C layer compiled with the
//! site's MPI compiler wrapper on first use (`mpi_layer.c`), so that the runtime depends on no
//! one MPI's ABI and builds without MPI; every wait in it has a deadline
//! (`YOSEGI_RANK_TIMEOUT`, seconds), after which the job ends with the rank and the operation
//! named instead of hanging. Waits on the rank's own device have the same deadline, kept by a
//! watchdog thread ([`Ranks::watch`]): a GPU held by a copy between ranks that never completes
//! blocks the host outside MPI.
//!
//! Output: ranks other than 0 write their standard output to `/dev/null`, and the files they
//! open for writing to private shadows (the host glue's `fopen`), so the job prints and writes
//! what one process does. Input: `yosegi run --ranks N` hands every rank the same standard
//! input (`YOSEGI_RANK_STDIN`, a file); under a plain `mpirun` only rank 0 has it.

mod device;
mod nccl;

pub use device::RankDevice;

use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::device::LaunchOutcome;

/// The MPI layer's source, compiled on first use.
const LAYER_SOURCE: &str = include_str!("ranks/mpi_layer.c");

/// Seconds a rank waits for a message or a collective before it ends the job.
pub const DEFAULT_TIMEOUT_S: f64 = 600.0;

/// The file every rank reads as its standard input (set by `yosegi run --ranks N`).
pub const STDIN_VARIABLE: &str = "YOSEGI_RANK_STDIN";

type InitFn = unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int, *mut c_int, f64) -> c_int;
type BcastFn = unsafe extern "C" fn(*mut c_void, u64, c_int) -> c_int;
type SendFn = unsafe extern "C" fn(*const c_void, u64, c_int) -> c_int;
type RecvFn = unsafe extern "C" fn(*mut c_void, u64, c_int) -> c_int;
type BarrierFn = unsafe extern "C" fn() -> c_int;
type AllgatherFn = unsafe extern "C" fn(*const c_void, u64, *mut c_void, *const c_int, *const c_int) -> c_int;
type AbortFn = unsafe extern "C" fn(c_int);
type DeviceAwareFn = unsafe extern "C" fn() -> c_int;
type FinalizeFn = unsafe extern "C" fn();

/// This process's place in the job and the MPI layer's entry points.
pub struct Ranks {
    pub rank: usize,
    pub size: usize,
    /// This process's rank among the ranks of its node: which GPU of the node it takes.
    pub local_rank: usize,
    /// The ranks of this process's node.
    pub local_size: usize,
    /// MPI reads and writes GPU memory itself (CUDA-aware MPI), and `YOSEGI_RANK_COPIES` is
    /// not `host`: copies between two ranks' GPUs go device to device.
    pub device_aware: bool,
    timeout_s: f64,
    /// `YOSEGI_RANK_TRACE=1`: every message on stderr (for finding where ranks diverge).
    trace: bool,
    bcast: BcastFn,
    send: SendFn,
    recv: RecvFn,
    barrier: BarrierFn,
    allgather: AllgatherFn,
    abort: AbortFn,
    finalize: FinalizeFn,
    traffic: Traffic,
    /// What this rank's host waits for on its own device, and since when ([`Ranks::watch`]).
    device_wait: std::sync::Mutex<Option<(std::time::Instant, String)>>,
    /// The thread that ends the job when a device wait outlasts the deadline, once started.
    watchdog: OnceLock<()>,
}

/// A wait on this rank's own device, watched until dropped ([`Ranks::watch`]).
pub struct DeviceWatch<'a> {
    ranks: &'a Ranks,
    outer: Option<(std::time::Instant, String)>,
}

impl Drop for DeviceWatch<'_> {
    fn drop(&mut self) {
        *self.ranks.device_wait.lock().unwrap_or_else(|e| e.into_inner()) = self.outer.take();
    }
}

/// What this rank sent and received, for `--stats`.
#[derive(Default)]
struct Traffic {
    sent_bytes: AtomicU64,
    sent_messages: AtomicU64,
    received_bytes: AtomicU64,
    broadcast_bytes: AtomicU64,
}

/// This rank's traffic so far (`--stats`' last line, `--stats=json`'s `rank`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RankTraffic {
    pub rank: usize,
    pub size: usize,
    /// Device bytes this rank sent to other ranks' devices (halos, gathers), point to point.
    pub sent_bytes: u64,
    pub sent_messages: u64,
    pub received_bytes: u64,
    /// Bytes this rank broadcast as their holder (device data the hosts read, results).
    pub broadcast_bytes: u64,
}

static JOB: OnceLock<Option<Arc<Ranks>>> = OnceLock::new();

/// The job this process is a rank of, once [`join`] found one.
pub fn current() -> Option<Arc<Ranks>> {
    JOB.get().cloned().flatten()
}

/// The number of ranks the launcher started, from its environment, when more than one.
pub fn launched_size() -> Option<usize> {
    if std::env::var("YOSEGI_RANKS").is_ok_and(|v| v.trim() == "off") {
        return None;
    }
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse::<usize>().ok())
        .filter(|&n| n > 1)
}

/// Joins the job the launcher started (once per process): builds and loads the MPI layer,
/// starts MPI, and sets up this rank's output and input. `Ok(None)` when the process runs
/// alone.
pub fn join() -> Result<Option<Arc<Ranks>>, String> {
    if let Some(job) = JOB.get() {
        return Ok(job.clone());
    }
    let job = match launched_size() {
        None => None,
        Some(size) => Some(Arc::new(start(size)?)),
    };
    let _ = JOB.set(job.clone());
    if let Some(ranks) = &job {
        // The host glue's `fopen` reads it: rank 0 alone writes the program's files.
        // SAFETY: set while the runtime starts, before the program's code runs.
        unsafe { std::env::set_var("YOSEGI_RANK", ranks.rank.to_string()) };
        ranks.arrange_streams()?;
        extern "C" fn finalize_at_exit() {
            if let Some(ranks) = current() {
                ranks.finish();
            }
        }
        // Registered before the program's own handlers and the runtime's, so it runs after
        // them: the last device reads of the program's exit still reach the other ranks.
        // SAFETY: a plain C function with no arguments.
        unsafe { libc::atexit(finalize_at_exit) };
    }
    Ok(job)
}

fn start(expected: usize) -> Result<Ranks, String> {
    let library = build_layer()?;
    // SAFETY: the layer is the source above, compiled by the site's MPI wrapper; its symbols
    // have exactly the types declared here. RTLD_GLOBAL: MPI implementations load plugins that
    // resolve symbols of the MPI library itself.
    let layer = unsafe { libloading::os::unix::Library::open(Some(&library), libc::RTLD_NOW | libc::RTLD_GLOBAL) }
        .map_err(|e| format!("cannot load the MPI layer {}: {e}", library.display()))?;
    // SAFETY: as above.
    let symbol = |name: &[u8]| -> Result<*const c_void, String> {
        unsafe { layer.get::<*const c_void>(name) }
            .map(|s| *s)
            .map_err(|e| format!("the MPI layer lacks {}: {e}", String::from_utf8_lossy(&name[..name.len() - 1])))
    };
    // SAFETY: each symbol is the layer's function of that type (see `mpi_layer.c`).
    let (init, bcast, send, recv, barrier, abort, finalize, device_aware, allgather) = unsafe {
        (
            std::mem::transmute::<*const c_void, InitFn>(symbol(b"yosegi_mpi_init\0")?),
            std::mem::transmute::<*const c_void, BcastFn>(symbol(b"yosegi_mpi_bcast\0")?),
            std::mem::transmute::<*const c_void, SendFn>(symbol(b"yosegi_mpi_send\0")?),
            std::mem::transmute::<*const c_void, RecvFn>(symbol(b"yosegi_mpi_recv\0")?),
            std::mem::transmute::<*const c_void, BarrierFn>(symbol(b"yosegi_mpi_barrier\0")?),
            std::mem::transmute::<*const c_void, AbortFn>(symbol(b"yosegi_mpi_abort\0")?),
            std::mem::transmute::<*const c_void, FinalizeFn>(symbol(b"yosegi_mpi_finalize\0")?),
            std::mem::transmute::<*const c_void, DeviceAwareFn>(symbol(b"yosegi_mpi_device_aware\0")?),
            std::mem::transmute::<*const c_void, AllgatherFn>(symbol(b"yosegi_mpi_allgather\0")?),
        )
    };
    // The library stays loaded until the process ends.
    std::mem::forget(layer);
    let timeout_s = match std::env::var("YOSEGI_RANK_TIMEOUT").ok() {
        None => DEFAULT_TIMEOUT_S,
        Some(text) => match text.trim().parse::<f64>() {
            Ok(s) if s > 0.0 && s.is_finite() => s,
            _ => return Err(format!("YOSEGI_RANK_TIMEOUT is `{text}`; it must be a positive number of seconds")),
        },
    };
    let (mut rank, mut size, mut local_rank, mut local_size) = (0, 0, 0, 0);
    // SAFETY: valid out-pointers.
    if unsafe { init(&mut rank, &mut size, &mut local_rank, &mut local_size, timeout_s) } != 0 {
        return Err("MPI_Init failed: run the program under the launcher of the MPI it was built with".to_string());
    }
    if size as usize != expected {
        return Err(format!(
            "the launcher started {expected} ranks but MPI sees {size}: the MPI compiler wrapper (YOSEGI_MPICC) belongs to \
             another MPI than the launcher"
        ));
    }
    let staged = std::env::var("YOSEGI_RANK_COPIES").is_ok_and(|v| v.trim() == "host");
    Ok(Ranks {
        rank: rank as usize,
        size: size as usize,
        local_rank: local_rank as usize,
        local_size: local_size.max(1) as usize,
        // SAFETY: the layer's function, after MPI started.
        device_aware: !staged && unsafe { device_aware() } == 1,
        timeout_s,
        trace: std::env::var("YOSEGI_RANK_TRACE").is_ok_and(|v| v == "1"),
        bcast,
        send,
        recv,
        barrier,
        allgather,
        abort,
        finalize,
        traffic: Traffic::default(),
        device_wait: std::sync::Mutex::new(None),
        watchdog: OnceLock::new(),
    })
}

/// Compiles the MPI layer with the site's wrapper into the kernel cache (once per wrapper and
/// layer version), or into a private scratch folder when there is no trusted cache.
fn build_layer() -> Result<PathBuf, String> {
    let wrapper = std::env::var("YOSEGI_MPICC").ok().filter(|w| !w.trim().is_empty()).unwrap_or_else(|| "mpicc".to_string());
    let key = format!("{wrapper}\n{LAYER_SOURCE}");
    let name = format!("mpi-layer-{:016x}.so", crate::runtime::cuda::cache::fnv1a64(key.as_bytes()));
    let dir = match crate::runtime::cuda::cache::trusted_dir() {
        Some(dir) => dir,
        None => {
            let scratch = tempfile::Builder::new().prefix("yosegi-mpi").tempdir().map_err(|e| format!("cannot create a scratch folder: {e}"))?;
            scratch.keep()
        }
    };
    let library = dir.join(&name);
    if library.exists() {
        return Ok(library);
    }
    let source = tempfile::Builder::new()
        .prefix("mpi-layer")
        .suffix(".c")
        .tempfile_in(&dir)
        .map_err(|e| format!("cannot write the MPI layer in {}: {e}", dir.display()))?;
    std::fs::write(source.path(), LAYER_SOURCE).map_err(|e| format!("cannot write the MPI layer: {e}"))?;
    // Each rank compiles to a file of its own, then renames: ranks starting together never
    // load a half-written library.
    let partial = dir.join(format!("{name}.{}", std::process::id()));
    let output = std::process::Command::new(&wrapper)
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&partial)
        .arg(source.path())
        .output()
        .map_err(|e| {
            format!(
                "the program runs as several MPI ranks, but the MPI compiler wrapper `{wrapper}` cannot be run ({e}): \
                 install MPI's development package, or set YOSEGI_MPICC to the wrapper of the MPI that started the job"
            )
        })?;
    if !output.status.success() {
        let _ = std::fs::remove_file(&partial);
        return Err(format!("`{wrapper}` could not build the MPI layer:\n{}", String::from_utf8_lossy(&output.stderr)));
    }
    std::fs::rename(&partial, &library).map_err(|e| format!("cannot keep the MPI layer in {}: {e}", library.display()))?;
    Ok(library)
}

impl Ranks {
    /// Rank 0 keeps the standard output; the others' goes to `/dev/null`. Every rank reads
    /// `YOSEGI_RANK_STDIN` as its standard input when it is set.
    fn arrange_streams(&self) -> Result<(), String> {
        if let Some(file) = std::env::var_os(STDIN_VARIABLE).filter(|f| !f.is_empty()) {
            redirect(Path::new(&file), libc::O_RDONLY, 0)?;
        }
        if self.rank != 0 {
            redirect(Path::new("/dev/null"), libc::O_WRONLY, 1)?;
        }
        Ok(())
    }

    /// `data` from rank `root` to every rank (`root` sends, the others receive into it).
    pub fn broadcast(&self, data: &mut [u8], root: usize, what: impl Fn() -> String) {
        self.broadcast_tagged(data, root, [0, 0], what);
    }

    /// [`Ranks::broadcast`] of bytes every rank names by `tag` (for device data: the
    /// allocation's place in its device's allocations and the offset). The size and the tag go
    /// first: every rank must be waiting for these very bytes, and ranks whose host code took
    /// different paths would otherwise pair unrelated broadcasts.
    pub fn broadcast_tagged(&self, data: &mut [u8], root: usize, tag: [u64; 2], what: impl Fn() -> String) {
        if data.is_empty() {
            return;
        }
        if self.trace {
            say(format_args!("yosegi: rank {}: broadcast of {} bytes from rank {root}: {}", self.rank, data.len(), what()));
        }
        if root == self.rank {
            self.traffic.broadcast_bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
        }
        let expected = [data.len() as u64, tag[0], tag[1]];
        let mut header = expected;
        // SAFETY: the header's words viewed as bytes.
        self.raw_broadcast(unsafe { std::slice::from_raw_parts_mut(header.as_mut_ptr() as *mut u8, 24) }, root, &what);
        if header != expected {
            self.end_job(
                &format!(
                    "rank {root} broadcast {} bytes of allocation #{} at {} where this rank expected {} bytes of #{} at {} ({}): \
                     the ranks' host code took different paths (it depends on host addresses, on the rank, or on input only \
                     one rank has)",
                    header[0], header[1], header[2], expected[0], expected[1], expected[2],
                    what()
                ),
                1,
            );
        }
        self.raw_broadcast(data, root, what);
    }

    /// Bytes from `root` to every rank, their size known to `root` alone: the others' `data`
    /// takes it (one collective for the size, one for the bytes).
    pub fn broadcast_vec(&self, data: &mut Vec<u8>, root: usize, what: impl Fn() -> String) {
        let mut len = (data.len() as u64).to_le_bytes();
        self.raw_broadcast(&mut len, root, &what);
        data.resize(u64::from_le_bytes(len) as usize, 0);
        self.raw_broadcast(data, root, what);
    }

    fn raw_broadcast(&self, data: &mut [u8], root: usize, what: impl Fn() -> String) {
        if data.is_empty() {
            return;
        }
        // SAFETY: `data` is valid for its length.
        let status = unsafe { (self.bcast)(data.as_mut_ptr() as *mut c_void, data.len() as u64, root as c_int) };
        self.check(status, || format!("a broadcast from rank {root} ({})", what()));
    }

    /// Every rank's bytes to every rank, in rank order (one collective for the sizes, one for
    /// the bytes).
    pub fn all_gather(&self, mine: &[u8], what: impl Fn() -> String) -> Vec<Vec<u8>> {
        let mut lens = vec![0u64; self.size];
        let one = [mine.len() as u64];
        let counts = vec![8 as c_int; self.size];
        let offsets: Vec<c_int> = (0..self.size as c_int).map(|r| r * 8).collect();
        // SAFETY: `lens` holds one word per rank; the counts and offsets describe it.
        let status = unsafe { (self.allgather)(one.as_ptr() as *const c_void, 8, lens.as_mut_ptr() as *mut c_void, counts.as_ptr(), offsets.as_ptr()) };
        self.check(status, || format!("gathering the sizes of {}", what()));
        let counts: Vec<c_int> = lens.iter().map(|&n| n as c_int).collect();
        let offsets: Vec<c_int> = counts
            .iter()
            .scan(0, |at, &c| {
                let here = *at;
                *at += c;
                Some(here)
            })
            .collect();
        let mut all = vec![0u8; lens.iter().sum::<u64>() as usize];
        if self.trace {
            say(format_args!("yosegi: rank {}: all-gather of {} bytes: {}", self.rank, all.len(), what()));
        }
        // SAFETY: `all` holds every rank's bytes at the offsets given.
        let status = unsafe {
            (self.allgather)(mine.as_ptr() as *const c_void, mine.len() as u64, all.as_mut_ptr() as *mut c_void, counts.as_ptr(), offsets.as_ptr())
        };
        self.check(status, || format!("gathering {}", what()));
        let mut at = 0usize;
        lens.iter()
            .map(|&n| {
                let bytes = all[at..at + n as usize].to_vec();
                at += n as usize;
                bytes
            })
            .collect()
    }

    /// The results of a launch's parts (reductions' partials, scalar outputs), each known on
    /// the rank in `owners` whose device ran it, to every rank, in one all-gather. Each rank
    /// sends the kernel's name (ranks gathering the results of different launches stop) and
    /// its parts' results.
    pub fn share_results(&self, owners: &[usize], outcomes: &mut [&mut LaunchOutcome], kernel: &str) {
        type Shared = (String, Vec<(usize, Vec<Vec<u64>>, Vec<u64>)>);
        let parts = outcomes
            .iter()
            .enumerate()
            .filter(|&(p, _)| owners[p] == self.rank)
            .map(|(p, o)| (p, o.partials.clone(), o.scalar_outputs.clone()))
            .collect();
        let mine: Shared = (kernel.to_string(), parts);
        let bytes = bincode::serialize(&mine).expect("plain data serialises");
        let all = self.all_gather(&bytes, || format!("the results of kernel {kernel}"));
        for (rank, bytes) in all.iter().enumerate().filter(|&(r, _)| r != self.rank) {
            let theirs: Shared = match bincode::deserialize::<Shared>(bytes) {
                Ok(shared) if shared.0 == kernel => shared,
                _ => self.end_job(
                    &format!("rank {rank} gathered the results of another launch than kernel {kernel}: the ranks' host code took different paths"),
                    1,
                ),
            };
            for (part, partials, scalar_outputs) in theirs.1 {
                if owners.get(part) == Some(&rank) {
                    outcomes[part].partials = partials;
                    outcomes[part].scalar_outputs = scalar_outputs;
                }
            }
        }
    }

    pub fn send(&self, data: &[u8], to: usize, what: impl FnOnce() -> String) {
        self.send_from(data.as_ptr() as *const c_void, data.len() as u64, to, what);
    }

    pub fn receive(&self, data: &mut [u8], from: usize, what: impl FnOnce() -> String) {
        self.receive_into(data.as_mut_ptr() as *mut c_void, data.len() as u64, from, what);
    }

    /// [`Ranks::send`] of `len` bytes of GPU memory at `address` (CUDA-aware MPI only: it
    /// reads device memory through a plain pointer to it).
    pub fn send_device(&self, address: u64, len: u64, to: usize, what: impl FnOnce() -> String) {
        self.send_from(address as *const c_void, len, to, what);
    }

    /// [`Ranks::receive`] into `len` bytes of GPU memory at `address` (CUDA-aware MPI only).
    pub fn receive_device(&self, address: u64, len: u64, from: usize, what: impl FnOnce() -> String) {
        self.receive_into(address as *mut c_void, len, from, what);
    }

    fn send_from(&self, data: *const c_void, len: u64, to: usize, what: impl FnOnce() -> String) {
        if self.trace {
            say(format_args!("yosegi: rank {}: {len} bytes to rank {to}", self.rank));
        }
        self.count_sent(len);
        // SAFETY: the callers pass memory valid for `len` bytes (host, or device memory for a
        // CUDA-aware MPI).
        let status = unsafe { (self.send)(data, len, to as c_int) };
        self.check(status, || format!("sending {len} bytes to rank {to} ({})", what()));
    }

    fn receive_into(&self, data: *mut c_void, len: u64, from: usize, what: impl FnOnce() -> String) {
        if self.trace {
            say(format_args!("yosegi: rank {}: {len} bytes from rank {from}", self.rank));
        }
        self.count_received(len);
        // SAFETY: as in `send_from`.
        let status = unsafe { (self.recv)(data, len, from as c_int) };
        self.check(status, || format!("receiving {len} bytes from rank {from} ({})", what()));
    }

    /// Counts a copy to another rank (also those made outside MPI: NCCL).
    fn count_sent(&self, len: u64) {
        self.traffic.sent_bytes.fetch_add(len, Ordering::Relaxed);
        self.traffic.sent_messages.fetch_add(1, Ordering::Relaxed);
    }

    fn count_received(&self, len: u64) {
        self.traffic.received_bytes.fetch_add(len, Ordering::Relaxed);
    }

    pub fn traffic(&self) -> RankTraffic {
        RankTraffic {
            rank: self.rank,
            size: self.size,
            sent_bytes: self.traffic.sent_bytes.load(Ordering::Relaxed),
            sent_messages: self.traffic.sent_messages.load(Ordering::Relaxed),
            received_bytes: self.traffic.received_bytes.load(Ordering::Relaxed),
            broadcast_bytes: self.traffic.broadcast_bytes.load(Ordering::Relaxed),
        }
    }

    fn check(&self, status: c_int, what: impl FnOnce() -> String) {
        match status {
            0 => {}
            1 => self.end_job(&format!("waited {} s for {}: another rank died or stopped before it", self.timeout_s, what()), 1),
            3 => self.end_job(
                &format!("{}: the other rank sent another size; the ranks' host code took different paths", what()),
                1,
            ),
            _ => self.end_job(&format!("MPI failed in {}", what()), 1),
        }
    }

    /// Ends every rank of the job, after this rank says why.
    pub fn end_job(&self, why: &str, status: i32) -> ! {
        say(format_args!("yosegi: rank {} of {}: {why}; ending the job", self.rank, self.size));
        self.abort(status)
    }

    /// Watches a wait of the host on this rank's own device (`what` it waits for) until the
    /// guard is dropped: when one outlasts the deadline, a watchdog thread ends the job saying
    /// so. A device copy with another rank (NCCL's) whose partner never comes holds the GPU,
    /// and with it every later wait on the device, where no MPI deadline reaches. An inner
    /// watch of an outer one keeps the outer's start.
    pub fn watch(&self, what: impl FnOnce() -> String) -> DeviceWatch<'_> {
        self.watchdog.get_or_init(|| {
            let period = std::time::Duration::from_secs_f64((self.timeout_s / 4.0).clamp(0.05, 1.0));
            std::thread::spawn(move || {
                loop {
                    std::thread::sleep(period);
                    let Some(ranks) = current() else { return };
                    let late = ranks
                        .device_wait
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .as_ref()
                        .filter(|(since, _)| since.elapsed().as_secs_f64() > ranks.timeout_s)
                        .map(|(_, what)| what.clone());
                    if let Some(what) = late {
                        ranks.end_job(
                            &format!(
                                "waited {} s for its GPU ({what}): a copy between the ranks' GPUs did not finish (another rank died, or \
                                 the ranks' host code took different paths), or a kernel ran that long (`YOSEGI_RANK_TIMEOUT` sets the \
                                 deadline)",
                                ranks.timeout_s
                            ),
                            1,
                        );
                    }
                }
            });
        });
        let mut slot = self.device_wait.lock().unwrap_or_else(|e| e.into_inner());
        let outer = slot.clone();
        if slot.is_none() {
            *slot = Some((std::time::Instant::now(), what()));
        }
        DeviceWatch { ranks: self, outer }
    }

    /// Ends every rank with `status` (the message, if any, already printed).
    pub fn abort(&self, status: i32) -> ! {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        // SAFETY: the layer's abort; it does not return.
        unsafe { (self.abort)(status.max(1)) };
        std::process::exit(status.max(1))
    }

    /// Waits until every rank has come to the same point of the host program (`what`, for
    /// the error that ends the job when one does not come within the deadline).
    pub fn meet(&self, what: &str) {
        // SAFETY: the layer's function.
        let status = unsafe { (self.barrier)() };
        if status != 0 {
            let why = if status == 1 { format!("waited {} s for the other ranks at {what}", self.timeout_s) } else { format!("MPI failed at {what}") };
            self.end_job(&format!("{why}: another rank did not come (the ranks' host code took different paths, or a rank died)"), 1);
        }
    }

    /// The end of a rank's program: waits for the others, then ends MPI.
    fn finish(&self) {
        self.meet("the end of the program");
        // SAFETY: the layer's function, after the last collective.
        unsafe { (self.finalize)() };
    }
}

/// Ends the whole job when this process is a rank of one: a rank that stops on an error
/// stops every rank (the message is already printed). Returns when the process runs alone.
pub fn end_job_on_error(status: i32) {
    if let Some(ranks) = current() {
        ranks.end_job("stopped on the error above", status);
    }
}

fn redirect(path: &Path, flags: c_int, fd: c_int) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| format!("{} has a NUL byte", path.display()))?;
    // SAFETY: plain C calls on a valid path and descriptors.
    unsafe {
        let opened = libc::open(c_path.as_ptr(), flags | libc::O_CLOEXEC);
        if opened < 0 {
            return Err(format!("cannot open {}: {}", path.display(), std::io::Error::last_os_error()));
        }
        libc::dup2(opened, fd);
        libc::close(opened);
    }
    Ok(())
}

/// Writes one line to standard error in a single write. `eprintln!` writes a formatted line in
/// pieces, and the launcher that forwards every rank's standard error (or its abort banner, when
/// a rank ends the job) can land between two pieces, cutting the line a user or a script reads.
fn say(line: std::fmt::Arguments) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(format!("{line}\n").as_bytes());
}
