//! One device of a job of several ranks, as every rank's runtime sees it: the rank that owns
//! it drives it (`local`), the others stand in for it. See `runtime::ranks` for what each
//! operation becomes.

use std::collections::HashMap;
use std::sync::Arc;

use crate::runtime::device::{
    CompletedLaunch, Device, DeviceAlloc, DeviceDescription, KernelFault, Launch, LaunchOutcome, StartedLaunch,
};
use crate::runtime::model::Machine;

use super::Ranks;

/// What every rank knows of a device, from its owner at start-up.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shape {
    pub name: String,
    pub model: String,
    pub multiprocessors: u32,
    pub shared_memory_per_block: u64,
    /// Bytes of device memory.
    pub memory: u64,
}

impl Shape {
    pub fn of(device: &mut dyn Device) -> Shape {
        Shape {
            memory: device.memory().0,
            name: device.name().to_string(),
            model: device.model().to_string(),
            multiprocessors: device.multiprocessors(),
            shared_memory_per_block: device.shared_memory_per_block(),
        }
    }
}

/// Device `owner` of the job (one device per rank).
pub struct RankDevice {
    ranks: Arc<Ranks>,
    owner: usize,
    shape: Shape,
    /// The device itself, on its owner's rank.
    local: Option<Box<dyn Device>>,
    /// Allocations standing in for the owner's (their addresses and sizes), on the other ranks,
    /// by their ordinal.
    stand_ins: HashMap<u64, (u64, u64)>,
    /// Each allocation's place among this device's allocations, the same on every rank: the
    /// owner's allocation ids map to it; a stand-in's id is it.
    ordinals: HashMap<u64, u64>,
    next_ordinal: u64,
    /// Where the next stand-in's addresses start.
    next_address: u64,
    /// Launches started here and not finished: the device's own started launch (on the owner).
    started: HashMap<u64, Option<StartedLaunch>>,
    next_token: u64,
    /// NCCL between the ranks' GPUs, shared by the job's devices.
    link: Option<Arc<super::nccl::DeviceLink>>,
}

impl RankDevice {
    /// The job's devices, one per rank, in rank order: `local` is this rank's. The ranks tell
    /// each other their devices' names and shapes, so that every rank shapes grids and names
    /// devices alike.
    pub fn job_devices(ranks: &Arc<Ranks>, mut local: Box<dyn Device>) -> Vec<Box<dyn Device>> {
        let mine = serde_json::to_vec(&Shape::of(local.as_mut())).expect("plain data serialises");
        let shapes: Vec<Shape> = ranks
            .all_gather(&mine, || "the devices' names".to_string())
            .iter()
            .map(|bytes| serde_json::from_slice(bytes).unwrap_or_default())
            .collect();
        let all_gpus = shapes.iter().all(|s| s.name.starts_with("cuda"));
        let link = super::nccl::connect(ranks, all_gpus).map(Arc::new);
        let mut local = Some(local);
        shapes
            .into_iter()
            .enumerate()
            .map(|(owner, shape)| {
                Box::new(RankDevice {
                    link: link.clone(),
                    ranks: ranks.clone(),
                    owner,
                    shape,
                    local: if owner == ranks.rank { local.take() } else { None },
                    stand_ins: HashMap::new(),
                    ordinals: HashMap::new(),
                    next_ordinal: 1,
                    // Outside any host object (above user space), distinct per device.
                    next_address: (0xffff_8000u64 + owner as u64) << 32,
                    started: HashMap::new(),
                    next_token: 1,
                }) as Box<dyn Device>
            })
            .collect()
    }

    /// `f` on this rank's own device (none elsewhere), watched as a wait for `what`
    /// ([`super::Ranks::watch`]): a wait that never ends ends the job instead of hanging it.
    fn on_local<T>(&mut self, what: impl FnOnce() -> String, f: impl FnOnce(&mut dyn Device) -> T) -> Option<T> {
        let d = self.local.as_mut()?;
        let _watch = self.ranks.watch(what);
        Some(f(d.as_mut()))
    }

    fn what(&self, alloc: DeviceAlloc, offset: u64, len: u64) -> impl Fn() -> String + use<> {
        let owner = self.owner;
        move || format!("{len} bytes at {offset} of allocation {} on rank {owner}'s device", alloc.0)
    }
}

impl Device for RankDevice {
    fn name(&self) -> &str {
        &self.shape.name
    }
    fn model(&self) -> &str {
        &self.shape.model
    }
    fn rank(&self) -> Option<usize> {
        Some(self.owner)
    }
    fn shared_memory_per_block(&self) -> u64 {
        self.shape.shared_memory_per_block
    }
    fn set_program(&mut self, module: &Arc<crate::ir::Module>, sources: Arc<crate::source::SourceSet>) {
        if let Some(d) = &mut self.local {
            d.set_program(module, sources);
        }
    }
    fn multiprocessors(&self) -> u32 {
        self.shape.multiprocessors
    }
    fn machine(&mut self) -> Machine {
        match &mut self.local {
            Some(d) => d.machine(),
            None => Machine::nominal(&self.shape.model),
        }
    }
    fn allocate(&mut self, bytes: u64) -> DeviceAlloc {
        let ordinal = self.next_ordinal;
        self.next_ordinal += 1;
        match &mut self.local {
            Some(d) => {
                let alloc = d.allocate(bytes);
                self.ordinals.insert(alloc.0, ordinal);
                alloc
            }
            None => {
                let id = ordinal;
                self.stand_ins.insert(id, (self.next_address, bytes));
                // A page apart, as no two live allocations may share an address.
                self.next_address += bytes.div_ceil(4096) * 4096 + 4096;
                DeviceAlloc(id)
            }
        }
    }
    fn free(&mut self, alloc: DeviceAlloc) {
        self.ordinals.remove(&alloc.0);
        if self.on_local(|| "freeing memory".into(), |d| d.free(alloc)).is_none() {
            self.stand_ins.remove(&alloc.0);
        }
    }
    fn address(&self, alloc: DeviceAlloc) -> u64 {
        match &self.local {
            Some(d) => d.address(alloc),
            None => self.stand_ins.get(&alloc.0).map_or(0, |&(address, _)| address),
        }
    }
    fn memory(&mut self) -> (u64, u64) {
        match &mut self.local {
            Some(d) => d.memory(),
            // The owner's size, less what stands in for its allocations here.
            None => (self.shape.memory, self.shape.memory.saturating_sub(self.stand_ins.values().map(|&(_, bytes)| bytes).sum())),
        }
    }
    fn description(&self) -> DeviceDescription {
        match &self.local {
            Some(d) => d.description(),
            None => DeviceDescription { name: self.shape.model.clone(), vendor: "Yosegi".to_string(), driver: String::new() },
        }
    }
    fn copy_within(&mut self, dst: DeviceAlloc, dst_offset: u64, src: DeviceAlloc, src_offset: u64, len: u64) {
        self.on_local(|| "a copy within its memory".into(), |d| d.copy_within(dst, dst_offset, src, src_offset, len));
    }
    fn copy_to_device(&mut self, alloc: DeviceAlloc, offset: u64, src: &[u8]) {
        // Elsewhere the owner copies the same bytes from its own host memory.
        self.on_local(|| "a copy from the host".into(), |d| d.copy_to_device(alloc, offset, src));
    }
    fn copy_to_host(&mut self, alloc: DeviceAlloc, offset: u64, dst: &mut [u8]) {
        let what = self.what(alloc, offset, dst.len() as u64);
        let ordinal = match self.on_local(|| "a copy to the host".into(), |d| d.copy_to_host(alloc, offset, dst)) {
            Some(()) => self.ordinals.get(&alloc.0).copied().unwrap_or(0),
            None => alloc.0,
        };
        self.ranks.broadcast_tagged(dst, self.owner, [ordinal, offset], what);
    }
    fn read_here(&mut self, alloc: DeviceAlloc, offset: u64, dst: &mut [u8]) {
        self.on_local(|| "a copy to the host".into(), |d| d.copy_to_host(alloc, offset, dst));
    }
    fn copy_from_peer(&mut self, dst: DeviceAlloc, dst_offset: u64, src: &mut dyn Device, src_alloc: DeviceAlloc, src_offset: u64, len: u64) {
        let me = self.ranks.rank;
        let from = src.rank().unwrap_or(me);
        let what = || format!("a copy of {len} bytes from rank {from}'s device to rank {}'s", self.owner);
        match (&mut self.local, from == me) {
            (Some(d), true) => d.copy_from_peer(dst, dst_offset, src, src_alloc, src_offset, len),
            // Beside the interior's launches when the device defers its copies (a cut part's
            // halo), else in order with the launches.
            (Some(d), false) if let (Some(link), Some(memory)) = (&self.link, d.peer_memory(dst, dst_offset)) => {
                let _watch = self.ranks.watch(|| format!("a copy of {len} bytes from rank {from}'s GPU"));
                let stream = d.deferred_copy_stream(dst, dst_offset, len, true);
                link.receive(&self.ranks, memory.context, memory.address, len, from, stream);
            }
            (None, true) if let (Some(link), Some(memory)) = (&self.link, src.peer_memory(src_alloc, src_offset)) => {
                let _watch = self.ranks.watch(|| format!("a copy of {len} bytes to rank {}'s GPU", self.owner));
                let stream = src.deferred_copy_stream(src_alloc, src_offset, len, false);
                link.send(&self.ranks, memory.context, memory.address, len, self.owner, stream);
            }
            (Some(d), false) => match d.peer_memory(dst, dst_offset).filter(|_| self.ranks.device_aware) {
                // Straight into the GPU's memory, once the work that may still read it is done.
                Some(memory) => {
                    {
                        let _watch = self.ranks.watch(|| "the launches before a copy from another rank".into());
                        d.wait();
                    }
                    self.ranks.receive_device(memory.address, len, from, what);
                }
                None => {
                    let mut bounce = vec![0u8; len as usize];
                    self.ranks.receive(&mut bounce, from, what);
                    let _watch = self.ranks.watch(|| "a copy from the host".into());
                    d.copy_to_device(dst, dst_offset, &bounce);
                }
            },
            (None, true) => match src.peer_memory(src_alloc, src_offset).filter(|_| self.ranks.device_aware) {
                Some(memory) => {
                    // The launches that write these bytes finish first.
                    src.wait();
                    self.ranks.send_device(memory.address, len, self.owner, what);
                }
                None => {
                    let mut bounce = vec![0u8; len as usize];
                    src.read_here(src_alloc, src_offset, &mut bounce);
                    self.ranks.send(&bounce, self.owner, what);
                }
            },
            (None, false) => {}
        }
    }
    fn peer_memory(&self, alloc: DeviceAlloc, offset: u64) -> Option<crate::runtime::device::PeerMemory> {
        self.local.as_ref().and_then(|d| d.peer_memory(alloc, offset))
    }
    fn mark(&mut self) -> Option<usize> {
        self.local.as_mut().and_then(|d| d.mark())
    }
    fn mark_range(&mut self, alloc: DeviceAlloc, offset: u64, len: u64) -> Option<usize> {
        self.local.as_mut().and_then(|d| d.mark_range(alloc, offset, len))
    }
    fn wait_for_mark(&mut self, mark: usize) {
        self.on_local(|| "the work before a host access".into(), |d| d.wait_for_mark(mark));
    }
    fn drop_mark(&mut self, mark: usize) {
        if let Some(d) = &mut self.local {
            d.drop_mark(mark);
        }
    }
    fn defer_copies(&mut self) {
        if let Some(d) = &mut self.local {
            d.defer_copies();
        }
    }
    fn deferred_copy_stream(&mut self, alloc: DeviceAlloc, offset: u64, len: u64, incoming: bool) -> Option<usize> {
        self.local.as_mut().and_then(|d| d.deferred_copy_stream(alloc, offset, len, incoming))
    }
    fn join_copies(&mut self) -> Option<usize> {
        self.local.as_mut().and_then(|d| d.join_copies())
    }
    fn fill_zero(&mut self, alloc: DeviceAlloc, offset: u64, len: u64) {
        self.on_local(|| "a fill with zeros".into(), |d| d.fill_zero(alloc, offset, len));
    }
    // A launch's results (reductions, scalar outputs) are its rank's; the runtime shares every
    // part's with one all-gather (`Ranks::share_results`).
    fn launch(&mut self, launch: &Launch) -> Result<LaunchOutcome, KernelFault> {
        self.on_local(|| format!("a launch of {}", launch.kernel.name), |d| d.launch(launch)).unwrap_or(Ok(LaunchOutcome::default()))
    }
    fn start_launch(&mut self, launch: &Launch) -> Result<StartedLaunch, KernelFault> {
        let started = self.on_local(|| format!("the start of {}", launch.kernel.name), |d| d.start_launch(launch)).transpose()?;
        let token = self.next_token;
        self.next_token += 1;
        self.started.insert(token, started);
        Ok(StartedLaunch::Pending(token))
    }
    fn finish_launch(&mut self, started: StartedLaunch) -> Result<LaunchOutcome, KernelFault> {
        let token = match started {
            StartedLaunch::Pending(token) => token,
            StartedLaunch::Finished(outcome) => return Ok(outcome),
        };
        let Some(inner) = self.started.remove(&token) else { return Err(KernelFault::not_started(token)) };
        match inner {
            Some(inner) => self.on_local(|| "a launch's end".into(), |d| d.finish_launch(inner)).unwrap_or(Ok(LaunchOutcome::default())),
            None => Ok(LaunchOutcome::default()),
        }
    }
    fn launch_timed(&mut self, launch: &Launch) -> Result<(LaunchOutcome, Option<std::time::Duration>), KernelFault> {
        self.on_local(|| format!("a launch of {}", launch.kernel.name), |d| d.launch_timed(launch)).unwrap_or(Ok((LaunchOutcome::default(), None)))
    }
    fn wait(&mut self) {
        self.on_local(|| "its launches".into(), |d| d.wait());
    }
    fn take_fault(&mut self) -> Option<KernelFault> {
        self.local.as_mut().and_then(|d| d.take_fault())
    }
    fn take_completed(&mut self) -> Vec<CompletedLaunch> {
        self.local.as_mut().map(|d| d.take_completed()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_survive_their_bytes() {
        let shape = Shape { name: "cuda:1".into(), model: "NVIDIA H100 80GB HBM3, sm_90".into(), multiprocessors: 132, shared_memory_per_block: 49152, memory: 80 << 30 };
        assert_eq!(serde_json::from_slice::<Shape>(&serde_json::to_vec(&shape).unwrap()).unwrap(), shape);
    }
}
