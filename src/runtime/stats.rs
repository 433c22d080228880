//! Counters of what the runtime and the device did: launches per kernel with time, global
//! memory transactions (32-byte sectors per warp access), shared-memory bank conflicts,
//! barriers, and host<->device transfers. `--stats` prints them at exit; tests and benchmarks
//! read [`Stats`] directly.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// What a device counted during one launch (summed over blocks).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceCounters {
    /// Distinct 32-byte sectors touched, summed over warps and memory instructions.
    pub global_transactions: u64,
    /// Elements loaded from global memory (one per active lane per load).
    pub global_loads: u64,
    /// Elements stored to global memory (atomics count as one load and one store).
    pub global_stores: u64,
    /// Warp-level shared-memory requests.
    pub shared_accesses: u64,
    /// Sum over shared requests of the conflict degree (1 = no conflict).
    pub bank_conflict_degree_sum: u64,
    /// The worst conflict degree seen.
    pub bank_conflict_max_degree: u64,
    /// Barriers executed, counted once per block.
    pub barriers: u64,
    /// Kernel execution time measured on the device itself (CUDA events), in nanoseconds;
    /// zero on the simulator, which has no such clock.
    pub device_time_ns: u64,
}

impl DeviceCounters {
    pub fn add(&mut self, other: &DeviceCounters) {
        self.global_transactions += other.global_transactions;
        self.global_loads += other.global_loads;
        self.global_stores += other.global_stores;
        self.shared_accesses += other.shared_accesses;
        self.bank_conflict_degree_sum += other.bank_conflict_degree_sum;
        self.bank_conflict_max_degree = self.bank_conflict_max_degree.max(other.bank_conflict_max_degree);
        self.barriers += other.barriers;
        self.device_time_ns += other.device_time_ns;
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelLaunches {
    pub count: u64,
    pub time: Duration,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Per grid kernel name.
    pub launches: BTreeMap<String, KernelLaunches>,
    pub device: DeviceCounters,
    pub bytes_to_device: u64,
    pub transfers_to_device: u64,
    pub bytes_to_host: u64,
    pub transfers_to_host: u64,
}

impl Stats {
    pub fn record_launch(&mut self, kernel: &str, time: Duration, counters: &DeviceCounters) {
        let entry = self.launches.entry(kernel.to_string()).or_default();
        entry.count += 1;
        entry.time += time;
        self.device.add(counters);
    }
    pub fn record_to_device(&mut self, bytes: u64) {
        self.bytes_to_device += bytes;
        self.transfers_to_device += 1;
    }
    pub fn record_to_host(&mut self, bytes: u64) {
        self.bytes_to_host += bytes;
        self.transfers_to_host += 1;
    }
    pub fn total_launches(&self) -> u64 {
        self.launches.values().map(|l| l.count).sum()
    }

    /// The `--stats` table.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "=== yosegi stats ===");
        let _ = writeln!(out, "{:<40} {:>10} {:>14}", "kernel", "launches", "time (ms)");
        for (name, l) in &self.launches {
            let _ = writeln!(out, "{:<40} {:>10} {:>14.3}", name, l.count, l.time.as_secs_f64() * 1e3);
        }
        let d = &self.device;
        let rows: [(&str, u64); 11] = [
            ("global memory transactions (32B sectors)", d.global_transactions),
            ("global loads (elements)", d.global_loads),
            ("global stores (elements)", d.global_stores),
            ("shared memory accesses (warp requests)", d.shared_accesses),
            ("shared bank conflict degree (sum)", d.bank_conflict_degree_sum),
            ("shared bank conflict degree (max)", d.bank_conflict_max_degree),
            ("barriers (per block)", d.barriers),
            ("host->device bytes", self.bytes_to_device),
            ("host->device transfers", self.transfers_to_device),
            ("device->host bytes", self.bytes_to_host),
            ("device->host transfers", self.transfers_to_host),
        ];
        for (label, value) in rows {
            let _ = writeln!(out, "{:<42} {:>22}", label, value);
        }
        if d.device_time_ns > 0 {
            let _ = writeln!(out, "{:<42} {:>22.3}", "kernel time on the device (ms)", d.device_time_ns as f64 / 1e6);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_are_summed_per_kernel() {
        let mut stats = Stats::default();
        let c = DeviceCounters { global_transactions: 4, bank_conflict_max_degree: 2, ..Default::default() };
        stats.record_launch("k", Duration::from_millis(1), &c);
        stats.record_launch("k", Duration::from_millis(2), &c);
        stats.record_to_device(100);
        assert_eq!(stats.launches["k"].count, 2);
        assert_eq!(stats.device.global_transactions, 8);
        assert_eq!(stats.device.bank_conflict_max_degree, 2);
        assert!(stats.render().contains("host->device bytes"));
    }
}
