//! The model beyond one node: a launch's time over 1 to 64 MPI ranks of one GPU each
//! (`runtime::ranks`), on nodes of several GPUs joined by a network.
//!
//! The links are parameters, not measurements (a single machine cannot measure the network
//! between nodes): inside a node the peer link the machine figures hold (NVLink where the GPUs
//! have it; measured when a run had several GPUs), between nodes `YOSEGI_NETWORK_GBPS`
//! (default 25 GB/s: one 200 Gb/s InfiniBand HDR or RoCE port per GPU) and
//! `YOSEGI_NETWORK_LATENCY_US` (default 5 us), with `YOSEGI_NODE_GPUS` GPUs a node (default 8).
//!
//! What a rank pays per launch, as the runtime does it:
//! * its part of the launch: the whole launch's work in the share one rank has (strong
//!   scaling), or the whole launch's work (weak scaling: every rank holds a problem of the
//!   one-GPU size);
//! * its halo: the bytes an interior part of the split reads beyond its share of what the
//!   kernels write (two neighbours' planes for a stencil split along one dim), over the slowest
//!   link it crosses: NVLink while the ranks fit in one node, the network beyond, each copy
//!   paying the link's latency; the copies follow the launch (they are not overlapped);
//! * for a launch with reductions, every rank's partial results to every rank in one
//!   all-gather: `log2(ranks)` hops of the link's latency.

use super::machine::Machine;
use super::predict::{Prediction, predict};

/// The rank counts the curves give.
pub const RANK_COUNTS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cluster {
    pub gpus_per_node: usize,
    pub network_bytes_per_s: f64,
    pub network_latency_s: f64,
}

impl Default for Cluster {
    fn default() -> Cluster {
        Cluster { gpus_per_node: 8, network_bytes_per_s: 25e9, network_latency_s: 5e-6 }
    }
}

impl Cluster {
    /// The defaults, with `YOSEGI_NODE_GPUS`, `YOSEGI_NETWORK_GBPS` and
    /// `YOSEGI_NETWORK_LATENCY_US` where set to positive numbers.
    pub fn from_env() -> Cluster {
        let read = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<f64>().ok()).filter(|v| v.is_finite() && *v > 0.0);
        let d = Cluster::default();
        Cluster {
            gpus_per_node: read("YOSEGI_NODE_GPUS").map_or(d.gpus_per_node, |v| v as usize).max(1),
            network_bytes_per_s: read("YOSEGI_NETWORK_GBPS").map_or(d.network_bytes_per_s, |v| v * 1e9),
            network_latency_s: read("YOSEGI_NETWORK_LATENCY_US").map_or(d.network_latency_s, |v| v * 1e-6),
        }
    }

    /// Bandwidth and latency of the slowest link `ranks` ranks' halos cross.
    fn link(&self, machine: &Machine, ranks: usize) -> (f64, f64) {
        let (peer_bw, peer_s) = if machine.peer_bytes_per_s > 0.0 { (machine.peer_bytes_per_s, machine.peer_copy_s) } else { (self.network_bytes_per_s, self.network_latency_s) };
        if ranks <= self.gpus_per_node { (peer_bw, peer_s) } else { (self.network_bytes_per_s.min(peer_bw), self.network_latency_s.max(peer_s)) }
    }

    /// What a rank adds to a launch on `ranks` ranks: its halo copies and the reductions'
    /// broadcasts.
    fn rank_overhead_s(&self, machine: &Machine, ranks: usize, halo: Halo, reductions: bool) -> f64 {
        if ranks < 2 {
            return 0.0;
        }
        let (bytes_per_s, latency) = self.link(machine, ranks);
        let copies = halo.copies.min(ranks - 1) as f64;
        let exchange = if halo.bytes == 0 { 0.0 } else { halo.bytes as f64 / bytes_per_s + copies * latency };
        let hop = if ranks <= self.gpus_per_node { latency.min(self.network_latency_s) } else { self.network_latency_s };
        let gather = if reductions { (ranks as f64).log2().ceil() * hop } else { 0.0 };
        exchange + gather
    }
}

/// The bytes an interior rank receives per launch and in how many copies (one per neighbour).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Halo {
    pub bytes: u64,
    pub copies: usize,
}

/// One steady launch of `whole`'s size over each of [`RANK_COUNTS`] ranks (strong scaling);
/// `splits`: whether the launch can be split at all (it stays on one rank otherwise).
pub fn strong_s(machine: &Machine, cluster: &Cluster, whole: &Prediction, splits: bool, halo: Halo, reductions: bool) -> Vec<f64> {
    RANK_COUNTS
        .iter()
        .map(|&k| match (k, splits) {
            (1, _) | (_, false) => whole.seconds,
            _ => predict(machine, &whole.work.part(1.0 / k as f64)).seconds + cluster.rank_overhead_s(machine, k, halo, reductions),
        })
        .collect()
}

/// One steady launch per rank when every rank holds a problem of `whole`'s size (weak scaling).
pub fn weak_s(machine: &Machine, cluster: &Cluster, whole: &Prediction, splits: bool, halo: Halo, reductions: bool) -> Vec<f64> {
    RANK_COUNTS
        .iter()
        .map(|&k| if splits { whole.seconds + cluster.rank_overhead_s(machine, k, halo, reductions) } else { whole.seconds })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::model::LaunchWork;
    use crate::runtime::stats::DeviceCounters;

    fn stencil() -> (Machine, Prediction) {
        let mut machine = Machine::nominal("sim");
        machine.peer_bytes_per_s = 150e9;
        machine.peer_copy_s = 10e-6;
        let work = LaunchWork {
            blocks: 65536,
            threads_per_block: 256,
            shared_bytes_per_block: 0,
            registers_per_thread: 32,
            counters: DeviceCounters { global_loads: 19 << 24, global_stores: 1 << 24, global_transactions: 5 << 24, ..Default::default() },
            dram_bytes: 1 << 30,
            resident_bytes: None,
            time_steps: 1,
        };
        let whole = predict(&machine, &work);
        (machine, whole)
    }

    /// Strong scaling gains while the parts' work dominates, then the halo over the network and
    /// the per-launch costs take over; weak scaling stays at one GPU's time plus the halo, the
    /// network's beyond a node.
    #[test]
    fn curves_follow_the_links() {
        let (machine, whole) = stencil();
        let cluster = Cluster::default();
        let halo = Halo { bytes: 4 << 20, copies: 2 };
        let strong = strong_s(&machine, &cluster, &whole, true, halo, false);
        assert!(strong[1] < strong[0] && strong[3] < strong[1], "{strong:?}");
        // Crossing into a second node: the halo goes over the 25 GB/s network.
        let network = halo.bytes as f64 / 25e9;
        assert!(strong[4] - network > 0.0, "{strong:?}");
        let weak = weak_s(&machine, &cluster, &whole, true, halo, false);
        assert_eq!(weak[0], whole.seconds);
        let in_node = halo.bytes as f64 / 150e9 + 2.0 * 10e-6;
        assert!((weak[3] - whole.seconds - in_node).abs() < 1e-9, "{weak:?}");
        let across = network + 2.0 * 10e-6;
        assert!((weak[6] - whole.seconds - across).abs() < 1e-9, "{weak:?}");
        // A launch that cannot split stays on one rank.
        assert!(strong_s(&machine, &cluster, &whole, false, halo, false).iter().all(|&t| t == whole.seconds));
        // Reductions pay an all-gather: log2(64) network hops.
        let reduced = weak_s(&machine, &cluster, &whole, true, Halo::default(), true);
        assert!((reduced[6] - whole.seconds - 6.0 * 5e-6).abs() < 1e-9, "{reduced:?}");
    }
}
