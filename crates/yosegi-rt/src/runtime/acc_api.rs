//! The OpenACC runtime API (OpenACC 3.3, chapter 3) on the runtime's registry and coherence
//! manager: `acc_copyin` and a later `present` clause on the same array see one device copy and
//! one pair of reference counts, `acc_deviceptr` gives the copy's real device address, and
//! `acc_memcpy_*` and `acc_update_*` move bytes while the host and device copies stay coherent
//! (a device write makes the host copy stale until the host reads it, as for a kernel's).
//!
//! Granularity: presence and reference counts belong to tracked objects (a whole `malloc`
//! block, a file-scope array, or the bytes a clause or call named of memory the runtime did not
//! know), as for the data clauses: `acc_copyin(a + 10, 80)` on a `malloc`ed `a` puts a copy of
//! the whole block on the device, with only those 80 bytes sent.
//!
//! Device addresses: an object's device copy and an `acc_malloc` block have addresses in the
//! device's own address space ([`Device::address`]: the GPU's, or the simulator's, which lie
//! above every host address). A kernel argument that is a device address stands for the object
//! whose copy it points into (coherence applies as to the object itself), or is bound to the
//! `acc_malloc` block as is.
//!
//! Queues: every operation completes before its call returns, the `_async` forms included; the
//! wait and test routines wait for the device's launches in flight and answer "done".

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::c_void;

use super::coherence::Hold;
use super::device::DeviceAlloc;
use super::registry::Origin;
use super::abi::{self, YosegiArg};
use super::{ObjectRange, Runtime, RuntimeError, acc_device};
use crate::diag::{Diagnostic, Span};
use crate::ir::{HostArgKind, Region};

/// `acc_async_*` values (include/openacc.h).
pub mod acc_async {
    pub const NOVAL: i32 = -1;
    pub const SYNC: i32 = -2;
    pub const DEFAULT: i32 = -3;
}

/// `acc_device_property_t` values (include/openacc.h).
pub mod acc_property {
    pub const MEMORY: i32 = 1;
    pub const FREE_MEMORY: i32 = 2;
    pub const SHARED_MEMORY_SUPPORT: i32 = 3;
    pub const NAME: i32 = 0x10000;
    pub const VENDOR: i32 = 0x10001;
    pub const DRIVER: i32 = 0x10002;
}

/// The queue `acc_get_default_async` reports before the program sets one.
pub const INITIAL_DEFAULT_ASYNC: i32 = 0;

/// An `acc_malloc` block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RawBlock {
    alloc: DeviceAlloc,
    bytes: u64,
}

/// The API's own state.
#[derive(Clone, Debug)]
pub struct ApiState {
    /// Per device, the `acc_malloc` blocks by device address.
    raw: Vec<BTreeMap<u64, RawBlock>>,
    default_async: i32,
    /// `acc_device_host` or `acc_device_nvidia` (what `acc_get_device_type` answers).
    device_type: i32,
}

impl ApiState {
    pub fn new(devices: usize) -> ApiState {
        ApiState { raw: vec![BTreeMap::new(); devices], default_async: INITIAL_DEFAULT_ASYNC, device_type: acc_device::NVIDIA }
    }

    /// The `acc_malloc` block of `device` containing `addr`: its address and the block.
    fn raw_block_at(&self, device: usize, addr: u64) -> Option<(u64, RawBlock)> {
        let (&start, &block) = self.raw.get(device)?.range(..=addr).next_back()?;
        (addr < start + block.bytes).then_some((start, block))
    }

    /// Whether `addr` lies in an `acc_malloc` block of `device` (or one past its end).
    pub fn is_raw_address(&self, device: usize, addr: u64) -> bool {
        self.raw_binding(device, addr).is_some()
    }

    /// A kernel argument pointing into (or one past) an `acc_malloc` block: the block's
    /// allocation and the offset in it.
    pub fn raw_binding(&self, device: usize, ptr: u64) -> Option<(DeviceAlloc, i64)> {
        let (&start, &block) = self.raw.get(device)?.range(..=ptr).next_back()?;
        (ptr <= start + block.bytes).then_some((block.alloc, (ptr - start) as i64))
    }

    pub fn device_type(&self) -> i32 {
        self.device_type
    }
    pub fn default_async(&self) -> i32 {
        self.default_async
    }
}

/// Where a device address lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevicePlace {
    /// In the device copy of the tracked object at `start` (host address), `offset` bytes in;
    /// the object has `len` bytes.
    Object { start: u64, offset: u64, len: u64 },
    /// In an `acc_malloc` block that no object is mapped to there.
    Raw { alloc: DeviceAlloc, offset: u64, len: u64 },
}

impl DevicePlace {
    /// Bytes from the address to the end of its object or block.
    fn room(self) -> u64 {
        match self {
            DevicePlace::Object { offset, len, .. } | DevicePlace::Raw { offset, len, .. } => len - offset,
        }
    }
}

/// An error of an API call: a fault of the program (exit status 1) naming the call.
fn call_error(call: &str, message: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::fault(Diagnostic::global_error(format!("{call}: {message}")))
}

/// A runtime error met inside an API call, said of the call (API calls have no place in the
/// source the runtime knows).
fn in_call(call: &str, mut error: RuntimeError) -> RuntimeError {
    error.diagnostic.span = None;
    error.diagnostic.message = format!("{call}: {}", error.diagnostic.message);
    error
}

fn check_async(call: &str, queue: i32) -> Result<(), RuntimeError> {
    if queue >= 0 || matches!(queue, acc_async::NOVAL | acc_async::SYNC | acc_async::DEFAULT) {
        Ok(())
    } else {
        Err(call_error(
            call,
            format!("{queue} is not an async queue (a non-negative integer, acc_async_noval, acc_async_sync or acc_async_default)"),
        ))
    }
}

/// `lo + len` as an address range, refusing ranges that wrap around.
fn address_range(call: &str, lo: u64, len: u64) -> Result<(u64, u64), RuntimeError> {
    match lo.checked_add(len) {
        Some(hi) => Ok((lo, hi)),
        None => Err(call_error(call, format!("{len} bytes at {lo:#x} wrap around the address space"))),
    }
}

impl Runtime {
    // -----------------------------------------------------------------------------------------
    // Device addresses

    /// Where device address `addr` of device `device` lies, if anywhere.
    pub fn device_place(&self, device: usize, addr: u64) -> Option<DevicePlace> {
        if addr == 0 || device >= self.devices.len() {
            return None;
        }
        let gpu = &self.devices[device];
        for object in self.registry.iter() {
            let Some(copy) = object.copies.devices[device].as_ref() else { continue };
            let at = gpu.address(copy.alloc);
            if at == 0 {
                continue;
            }
            let first = at + copy.base;
            if addr >= first && addr < first + object.len {
                return Some(DevicePlace::Object { start: object.start, offset: addr - first, len: object.len });
            }
        }
        let (start, block) = self.api.raw_block_at(device, addr)?;
        Some(DevicePlace::Raw { alloc: block.alloc, offset: addr - start, len: block.bytes })
    }

    /// The device address of byte `offset` of the object at `start` on `device`: 0 when the
    /// object has no copy there.
    fn copy_address(&self, device: usize, start: u64, offset: u64) -> u64 {
        let Some((alloc, base)) = self.registry.get(start).and_then(|o| o.copies.placement(device)) else { return 0 };
        match self.devices[device].address(alloc) {
            0 => 0,
            at => at + base + offset,
        }
    }

    /// A compute construct's pointer arguments with every device address of an object's copy
    /// (`acc_deviceptr`, `acc_copyin`'s result, passed through `deviceptr`) replaced by the host
    /// address it mirrors: the kernel then works on the object, coherence and all. Addresses
    /// in `acc_malloc` blocks stay as they are (bound to the block at the launch).
    pub(super) fn host_view_of_device_pointers<'a>(&self, region: &Region, args: &'a [YosegiArg]) -> Cow<'a, [YosegiArg]> {
        let device = self.current_device;
        let mut view = Cow::Borrowed(args);
        for (i, (host_arg, arg)) in region.args.iter().zip(args).enumerate() {
            let ptr = arg.ptr as u64;
            if host_arg.kind != HostArgKind::Pointer || ptr == 0 || self.registry.find(ptr).is_some() {
                continue;
            }
            if let Some(DevicePlace::Object { start, offset, .. }) = self.device_place(device, ptr) {
                view.to_mut()[i].ptr = (start + offset) as *mut c_void;
            }
        }
        view
    }

    /// Refuses a device address where a call takes host memory.
    fn refuse_device_address(&self, call: &str, what: &str, addr: u64) -> Result<(), RuntimeError> {
        if self.registry.find(addr).is_none() && self.device_place(self.current_device, addr).is_some() {
            return Err(call_error(
                call,
                format!("the {what} {addr:#x} is a device address; this argument takes host memory"),
            ));
        }
        Ok(())
    }

    /// The tracked object holding `h..h + bytes` (tracked from now on if it was not), as a
    /// range of it.
    fn api_range(&mut self, call: &str, h: u64, bytes: u64) -> Result<ObjectRange, RuntimeError> {
        let (lo, hi) = address_range(call, h, bytes)?;
        let name = format!("the {bytes} bytes at {h:#x}");
        let object = self.ensure_object(lo, hi, &name, Origin::DataClause, Span::default()).map_err(|e| in_call(call, e))?;
        let start = self.registry.get(object).expect("ensured").start;
        Ok(ObjectRange { object, lo: lo - start, hi: hi - start })
    }

    /// The device number a `_device` routine names for `device_type`: `None` for the host.
    fn device_for(&self, call: &str, dev_num: i32, device_type: i32) -> Result<Option<usize>, RuntimeError> {
        let count = abi::num_devices(device_type, self.devices.len());
        if count == 0 {
            return Err(call_error(
                call,
                format!(
                    "there is no device of type {device_type} (Yosegi runs on acc_device_nvidia: a GPU or its simulator, or acc_device_host)"
                ),
            ));
        }
        if dev_num < 0 || dev_num >= count {
            return Err(call_error(
                call,
                format!(
                    "device {dev_num} of type {device_type}: there {} {count} device{} of that type, numbered from 0",
                    if count == 1 { "is" } else { "are" },
                    if count == 1 { "" } else { "s" }
                ),
            ));
        }
        Ok((device_type != acc_device::HOST).then_some(dev_num as usize))
    }

    // -----------------------------------------------------------------------------------------
    // Data

    /// `acc_copyin` (`copy`) and `acc_create`, with their `_async` and `present_or_` forms:
    /// the dynamic reference count goes up, the device copy is made (and, for `copy`, sent) if
    /// needed. Returns the device address of `h`.
    pub fn acc_enter_data(&mut self, call: &str, h: u64, bytes: u64, copy: bool, queue: i32) -> Result<u64, RuntimeError> {
        check_async(call, queue)?;
        if h == 0 || bytes == 0 {
            return Ok(0);
        }
        self.refuse_device_address(call, "host address", h)?;
        let range = self.api_range(call, h, bytes)?;
        let device = self.current_device;
        let (copies, mut t) = self.transfer_for(range.object).expect("ensured");
        copies.acquire(device, Hold::Dynamic, &mut t);
        if copy {
            copies.make_device_valid(device, range.lo, range.hi, &mut t);
        }
        self.collect_device_reports()?;
        Ok(self.copy_address(device, range.object, range.lo))
    }

    /// `acc_copyout` (`copy`) and `acc_delete`, with their `_async` and `_finalize` forms: the
    /// dynamic reference count goes down (to zero with `finalize`), and the copy is freed when
    /// nothing holds it any more (what only it held is saved first, whatever the call: Yosegi
    /// never loses a device write). Data not present, or held only by data constructs, is left
    /// as it is, as OpenACC says.
    pub fn acc_exit_data(
        &mut self,
        call: &str,
        h: u64,
        bytes: u64,
        copy: bool,
        finalize: bool,
        queue: i32,
    ) -> Result<(), RuntimeError> {
        check_async(call, queue)?;
        if h == 0 || bytes == 0 {
            return Ok(());
        }
        address_range(call, h, bytes)?;
        let device = self.current_device;
        let Some(start) = self.registry.find(h) else { return Ok(()) };
        let (copies, mut t) = self.transfer_for(start).expect("found");
        if !copies.is_present(device) || copies.devices[device].as_ref().is_some_and(|c| c.dynamic == 0) {
            return Ok(());
        }
        if copy {
            let lo = h - start;
            let hi = (lo + bytes).min(copies.len);
            copies.make_host_valid(lo, hi, &mut t);
        }
        if copies.release(device, Hold::Dynamic, finalize) {
            self.after_release(start, device, false);
        }
        self.trim_device_caches();
        self.collect_device_reports()
    }

    /// `acc_update_device` (`to_device`) and `acc_update_self`, with their `_async` forms.
    /// Data without a device copy has nothing to update.
    pub fn acc_update(&mut self, call: &str, h: u64, bytes: u64, to_device: bool, queue: i32) -> Result<(), RuntimeError> {
        check_async(call, queue)?;
        if h == 0 || bytes == 0 {
            return Ok(());
        }
        address_range(call, h, bytes)?;
        let device = self.current_device;
        let Some(start) = self.registry.find(h) else { return Ok(()) };
        let (copies, mut t) = self.transfer_for(start).expect("found");
        if !copies.has_device_copy(device) {
            return Ok(());
        }
        let lo = h - start;
        if lo + bytes > copies.len {
            let len = copies.len;
            let name = self.registry.get(start).map(|o| o.name.clone()).unwrap_or_default();
            return Err(call_error(
                call,
                format!("{bytes} bytes at {h:#x} reach past the end of `{name}` ({len} bytes from {start:#x}), the data on the device"),
            ));
        }
        if to_device {
            copies.update_device(device, lo, lo + bytes, &mut t);
        } else {
            copies.make_host_valid(lo, lo + bytes, &mut t);
        }
        self.collect_device_reports()
    }

    /// `acc_is_present`: whether all of `h..h + bytes` (`h`'s byte for 0) is present.
    pub fn acc_is_present(&self, h: u64, bytes: u64) -> bool {
        let device = self.current_device;
        let Some(object) = self.registry.find(h).and_then(|s| self.registry.get(s)) else { return false };
        object.copies.is_present(device) && h.saturating_add(bytes.max(1)) <= object.end()
    }

    /// `acc_deviceptr`: the device address of present data, 0 otherwise.
    pub fn acc_deviceptr(&self, h: u64) -> u64 {
        let device = self.current_device;
        let Some(object) = self.registry.find(h).and_then(|s| self.registry.get(s)) else { return 0 };
        if !object.copies.is_present(device) {
            return 0;
        }
        self.copy_address(device, object.start, h - object.start)
    }

    /// `acc_hostptr`: the host address a device address of present data mirrors, 0 otherwise.
    pub fn acc_hostptr(&self, d: u64) -> u64 {
        let device = self.current_device;
        match self.device_place(device, d) {
            Some(DevicePlace::Object { start, offset, .. })
                if self.registry.get(start).is_some_and(|o| o.copies.is_present(device)) =>
            {
                start + offset
            }
            _ => 0,
        }
    }

    /// `acc_malloc`: device memory of the current device, or 0 for 0 bytes or when the device
    /// has not that much free.
    pub fn acc_malloc(&mut self, bytes: u64) -> u64 {
        let device = self.current_device;
        if bytes == 0 || bytes > self.devices[device].memory().1 {
            return 0;
        }
        let alloc = self.devices[device].allocate(bytes);
        let address = self.devices[device].address(alloc);
        if address == 0 {
            self.devices[device].free(alloc);
            return 0;
        }
        self.api.raw[device].insert(address, RawBlock { alloc, bytes });
        address
    }

    /// `acc_free`: frees an `acc_malloc` block; objects still mapped into it are unmapped first
    /// (saving their data).
    pub fn acc_free(&mut self, call: &str, d: u64) -> Result<(), RuntimeError> {
        if d == 0 {
            return Ok(());
        }
        let Some(device) = (0..self.devices.len()).find(|&dev| self.api.raw[dev].contains_key(&d)) else {
            return Err(call_error(call, format!("{d:#x} is not the start of device memory that acc_malloc returned")));
        };
        let block = self.api.raw[device][&d];
        let mapped: Vec<u64> = self
            .registry
            .iter()
            .filter(|o| o.copies.devices[device].as_ref().is_some_and(|c| c.mapped && c.alloc == block.alloc))
            .map(|o| o.start)
            .collect();
        for start in mapped {
            let (copies, mut t) = self.transfer_for(start).expect("listed");
            copies.unmap(device, &mut t);
        }
        self.api.raw[device].remove(&d);
        self.devices[device].free(block.alloc);
        self.collect_device_reports()
    }

    /// `acc_map_data`: the `bytes` of device memory at `d` (inside an `acc_malloc` block)
    /// become the device copy of the host data at `h`, which must be a whole tracked object or
    /// memory the runtime does not track yet. The host copy stays the current one.
    pub fn acc_map_data(&mut self, call: &str, h: u64, d: u64, bytes: u64) -> Result<(), RuntimeError> {
        if h == 0 || d == 0 || bytes == 0 {
            return Err(call_error(call, "the host address, the device address and the size must not be 0"));
        }
        let device = self.current_device;
        let (_, d_end) = address_range(call, d, bytes)?;
        let Some((block_start, block)) = self.api.raw_block_at(device, d).filter(|(s, b)| d_end <= s + b.bytes) else {
            return Err(call_error(
                call,
                format!("{bytes} bytes at device address {d:#x} are not inside memory that acc_malloc returned"),
            ));
        };
        self.refuse_device_address(call, "host address", h)?;
        let range = self.api_range(call, h, bytes)?;
        let object = self.registry.get(range.object).expect("ensured");
        if range.lo != 0 || range.hi != object.len {
            return Err(call_error(
                call,
                format!(
                    "{bytes} bytes at {h:#x} are part of `{}` ({} bytes from {:#x}); Yosegi maps whole arrays",
                    object.name, object.len, object.start
                ),
            ));
        }
        if object.copies.is_present(device) {
            return Err(call_error(call, format!("the data at {h:#x} is already present on the device")));
        }
        let (copies, mut t) = self.transfer_for(range.object).expect("ensured");
        copies.map(device, block.alloc, d - block_start, &mut t);
        self.collect_device_reports()
    }

    /// `acc_unmap_data`: undoes `acc_map_data(h, ...)`, saving what only the device held.
    pub fn acc_unmap_data(&mut self, call: &str, h: u64) -> Result<(), RuntimeError> {
        let device = self.current_device;
        let mapped = self
            .registry
            .get(h)
            .is_some_and(|o| o.copies.devices[device].as_ref().is_some_and(|c| c.mapped));
        if !mapped {
            return Err(call_error(call, format!("{h:#x} is not a host address that acc_map_data mapped")));
        }
        let (copies, mut t) = self.transfer_for(h).expect("found");
        copies.unmap(device, &mut t);
        self.collect_device_reports()
    }

    /// The host is about to read `lo..hi` itself (a copy's source): tracked objects there get
    /// their host copies made current.
    fn host_reads(&mut self, lo: u64, hi: u64) {
        for start in self.registry.overlapping(lo, hi) {
            let Some((copies, mut t)) = self.transfer_for(start) else { continue };
            copies.make_host_valid(lo.max(start) - start, hi - start, &mut t);
        }
    }

    /// The runtime is about to write `lo..hi` of host memory: the host copies become the only
    /// current ones there.
    fn host_overwrites(&mut self, lo: u64, hi: u64) {
        for start in self.registry.overlapping(lo, hi) {
            let Some((copies, mut t)) = self.transfer_for(start) else { continue };
            copies.host_writes(lo.max(start) - start, hi - start, &mut t);
        }
    }

    /// The device place of `bytes` at device address `d`, all of them inside one object's copy
    /// or one `acc_malloc` block.
    fn device_range(&self, call: &str, what: &str, device: usize, d: u64, bytes: u64) -> Result<DevicePlace, RuntimeError> {
        let Some(place) = self.device_place(device, d) else {
            return Err(call_error(
                call,
                format!(
                    "the {what} {d:#x} is not device memory (acc_malloc, acc_deviceptr, acc_copyin or acc_create give device addresses)"
                ),
            ));
        };
        if bytes > place.room() {
            return Err(call_error(
                call,
                format!("{bytes} bytes at the {what} {d:#x} reach past the end of its device memory ({} bytes left)", place.room()),
            ));
        }
        Ok(place)
    }

    /// The current bytes of a device place (an object's copy is made current first).
    fn read_device(&mut self, device: usize, place: DevicePlace, bytes: u64) -> Vec<u8> {
        let mut out = vec![0u8; bytes as usize];
        match place {
            DevicePlace::Object { start, offset, .. } => {
                let (copies, mut t) = self.transfer_for(start).expect("placed");
                copies.make_device_valid(device, offset, offset + bytes, &mut t);
                let (alloc, base) = copies.placement(device).expect("made valid");
                t.devices[device].copy_to_host(alloc, base + offset, &mut out);
            }
            DevicePlace::Raw { alloc, offset, .. } => self.devices[device].copy_to_host(alloc, offset, &mut out),
        }
        out
    }

    /// Writes `data` at a device place (an object's other copies become stale there).
    fn write_device(&mut self, device: usize, place: DevicePlace, data: &[u8]) {
        match place {
            DevicePlace::Object { start, offset, .. } => {
                let (copies, t) = self.transfer_for(start).expect("placed");
                let (alloc, base) = copies.placement(device).expect("placed");
                copies.device_wrote(device, offset, offset + data.len() as u64);
                t.devices[device].copy_to_device(alloc, base + offset, data);
            }
            DevicePlace::Raw { alloc, offset, .. } => self.devices[device].copy_to_device(alloc, offset, data),
        }
    }

    /// `acc_memcpy_to_device(_async)`: `bytes` from host `src` to device address `dst`.
    pub fn acc_memcpy_to_device(&mut self, call: &str, dst: u64, src: u64, bytes: u64, queue: i32) -> Result<(), RuntimeError> {
        check_async(call, queue)?;
        if bytes == 0 {
            return Ok(());
        }
        let device = self.current_device;
        let place = self.device_range(call, "destination", device, dst, bytes)?;
        let (lo, hi) = address_range(call, src, bytes)?;
        self.refuse_device_address(call, "source", src)?;
        self.host_reads(lo, hi);
        // SAFETY: the program hands `bytes` readable bytes at `src` (checked not to be device
        // memory; as for the C library's memcpy, the rest is the program's promise).
        let data = unsafe { std::slice::from_raw_parts(src as *const u8, bytes as usize) }.to_vec();
        self.write_device(device, place, &data);
        self.collect_device_reports()
    }

    /// `acc_memcpy_from_device(_async)`: `bytes` from device address `src` to host `dst`.
    pub fn acc_memcpy_from_device(&mut self, call: &str, dst: u64, src: u64, bytes: u64, queue: i32) -> Result<(), RuntimeError> {
        check_async(call, queue)?;
        if bytes == 0 {
            return Ok(());
        }
        let device = self.current_device;
        let place = self.device_range(call, "source", device, src, bytes)?;
        let (lo, hi) = address_range(call, dst, bytes)?;
        self.refuse_device_address(call, "destination", dst)?;
        let data = self.read_device(device, place, bytes);
        self.host_overwrites(lo, hi);
        // SAFETY: the program hands `bytes` writable bytes at `dst` (as for memcpy).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len()) };
        self.collect_device_reports()
    }

    /// `acc_memcpy_device(_async)`: `bytes` between two device addresses of the current device.
    pub fn acc_memcpy_device(&mut self, call: &str, dst: u64, src: u64, bytes: u64, queue: i32) -> Result<(), RuntimeError> {
        check_async(call, queue)?;
        if bytes == 0 {
            return Ok(());
        }
        let device = self.current_device;
        let from = self.device_range(call, "source", device, src, bytes)?;
        let to = self.device_range(call, "destination", device, dst, bytes)?;
        let data = self.read_device(device, from, bytes);
        self.write_device(device, to, &data);
        self.collect_device_reports()
    }

    /// `acc_memcpy_d2d(_async)`: `bytes` from the copy of host data `src` on device `src_dev`
    /// to the copy of host data `dst` on device `dst_dev`; both must be present there.
    #[allow(clippy::too_many_arguments)]
    pub fn acc_memcpy_d2d(
        &mut self,
        call: &str,
        dst: u64,
        src: u64,
        bytes: u64,
        dst_dev: i32,
        src_dev: i32,
        queue: i32,
    ) -> Result<(), RuntimeError> {
        check_async(call, queue)?;
        if bytes == 0 {
            return Ok(());
        }
        let mut ends = Vec::new();
        for (what, h, dev) in [("source", src, src_dev), ("destination", dst, dst_dev)] {
            let device = self.device_for(call, dev, acc_device::NVIDIA)?.expect("not the host");
            let (_, hi) = address_range(call, h, bytes)?;
            let object = self.registry.find(h).and_then(|s| self.registry.get(s));
            let Some(object) = object.filter(|o| o.copies.is_present(device) && hi <= o.end()) else {
                return Err(call_error(call, format!("the {what} {h:#x} ({bytes} bytes) is not present on device {dev}")));
            };
            ends.push((device, DevicePlace::Object { start: object.start, offset: h - object.start, len: object.len }));
        }
        let data = self.read_device(ends[0].0, ends[0].1, bytes);
        self.write_device(ends[1].0, ends[1].1, &data);
        self.collect_device_reports()
    }

    /// `acc_attach`/`acc_detach` and their forms: Yosegi's kernels take every pointer from the
    /// host at the launch (a struct's pointer member is passed by value, never read from a
    /// device copy of the struct), so a pointer is always attached; only the argument is
    /// checked.
    pub fn acc_attach(&mut self, call: &str, ptr_addr: u64, queue: i32) -> Result<(), RuntimeError> {
        check_async(call, queue)?;
        if ptr_addr == 0 {
            return Err(call_error(call, "the address of the pointer is NULL"));
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Queues

    /// The wait and test routines: every queue is idle once the device's launches in flight
    /// have finished. `dev_num` (`None`: the current device) is checked.
    pub fn acc_wait_queues(&mut self, call: &str, queues: &[i32], dev_num: Option<i32>) -> Result<(), RuntimeError> {
        for &q in queues {
            check_async(call, q)?;
        }
        if let Some(dev) = dev_num {
            self.device_for(call, dev, acc_device::NVIDIA)?;
        }
        self.synchronize_devices()
    }

    /// `acc_wait_any(_device)`: the index of the first queue that is not `acc_async_sync`
    /// (all of them are idle once the device finished), or -1 when there is none.
    pub fn acc_wait_any(&mut self, call: &str, queues: &[i32], dev_num: Option<i32>) -> Result<i32, RuntimeError> {
        let live: Vec<i32> = queues.iter().copied().filter(|&q| q != acc_async::SYNC).collect();
        self.acc_wait_queues(call, &live, dev_num)?;
        Ok(queues.iter().position(|&q| q != acc_async::SYNC).map_or(-1, |i| i as i32))
    }

    pub fn acc_set_default_async(&mut self, call: &str, queue: i32) -> Result<(), RuntimeError> {
        check_async(call, queue)?;
        self.api.default_async = if queue == acc_async::DEFAULT { INITIAL_DEFAULT_ASYNC } else { queue };
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Devices

    /// `acc_set_device_type`: the host or the NVIDIA device (a GPU, or the simulator playing
    /// one). Asking for the host changes what `acc_get_device_type` answers; compute
    /// constructs still run on the device, which gives the same results.
    pub fn acc_set_device_type(&mut self, call: &str, device_type: i32) -> Result<(), RuntimeError> {
        self.device_for(call, 0, device_type)?;
        self.api.device_type = if device_type == acc_device::HOST { acc_device::HOST } else { acc_device::NVIDIA };
        Ok(())
    }

    /// `acc_init(_device)`: the devices are opened when the program starts; the arguments are
    /// checked.
    pub fn acc_init(&mut self, call: &str, dev_num: i32, device_type: i32) -> Result<(), RuntimeError> {
        self.device_for(call, dev_num, device_type).map(|_| ())
    }

    /// `acc_shutdown(_device)`: waits for the device and brings every array's current value to
    /// the host (device copies stay, for the data regions that still hold them).
    pub fn acc_shutdown(&mut self, call: &str, dev_num: i32, device_type: i32) -> Result<(), RuntimeError> {
        if self.device_for(call, dev_num, device_type)?.is_none() {
            return Ok(());
        }
        self.synchronize_devices()?;
        for start in self.registry.starts_in_registration_order() {
            if let Some((copies, mut t)) = self.transfer_for(start) {
                let len = copies.len;
                copies.make_host_valid(0, len, &mut t);
            }
        }
        self.collect_device_reports()
    }

    /// `acc_get_property`: memory sizes in bytes; 0 for properties without a numeric value.
    pub fn acc_get_property(&mut self, call: &str, dev_num: i32, device_type: i32, property: i32) -> Result<u64, RuntimeError> {
        let Some(device) = self.device_for(call, dev_num, device_type)? else { return Ok(0) };
        Ok(match property {
            acc_property::MEMORY => self.devices[device].memory().0,
            acc_property::FREE_MEMORY => self.devices[device].memory().1,
            _ => 0,
        })
    }

    /// `acc_get_property_string`: the device's name, vendor and driver; `None` for other
    /// properties.
    pub fn acc_get_property_string(
        &mut self,
        call: &str,
        dev_num: i32,
        device_type: i32,
        property: i32,
    ) -> Result<Option<String>, RuntimeError> {
        let description = match self.device_for(call, dev_num, device_type)? {
            Some(device) => self.devices[device].description(),
            None => super::device::DeviceDescription {
                name: "host".to_string(),
                vendor: "Yosegi".to_string(),
                driver: format!("yosegi {}", env!("CARGO_PKG_VERSION")),
            },
        };
        Ok(match property {
            acc_property::NAME => Some(description.name),
            acc_property::VENDOR => Some(description.vendor),
            acc_property::DRIVER => Some(description.driver),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests;
