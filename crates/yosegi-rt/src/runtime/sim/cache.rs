//! The L1 cache a sampled block runs against, for the performance model: a block's share of
//! its multiprocessor's L1, least recently used sector of a set out first. The sectors the block's
//! reads fetch past it are what the L2 cache must serve (`DeviceCounters::l2_sectors`): a
//! block whose reuse lies further apart than its share holds (a thread's loop over a large
//! stride, a tile beside a large shared-memory buffer) fetches sectors again, which the
//! distinct sectors of the whole block (`block_sectors`) do not tell.

/// Bytes of a sector, the unit the L1 cache fills.
pub const SECTOR_BYTES: u64 = 32;

/// Sectors of a 128-byte line, the unit of a request to L2.
pub const SECTORS_PER_LINE: u64 = 4;

/// Sectors of a set: the cache is set-associative, as the hardware's is, which keeps a
/// lookup to a scan of one set (the model samples blocks on the host, on the launch's path).
const WAYS: usize = 16;

/// A set-associative cache of sectors, each named by the memory it belongs to and its index
/// there, the least recently used sector of a set out first.
#[derive(Debug)]
pub struct SectorCache {
    sets: usize,
    ways: usize,
    /// Per set, `ways` slots of (sector, last use); a last use of 0 marks an empty slot.
    slots: Vec<((u32, u64), u64)>,
    clock: u64,
}

impl SectorCache {
    /// A cache of `bytes` (at least one sector).
    pub fn new(bytes: u64) -> SectorCache {
        let sectors = (bytes / SECTOR_BYTES).max(1) as usize;
        let ways = sectors.min(WAYS);
        let sets = sectors / ways;
        SectorCache { sets, ways, slots: vec![((0, 0), 0); sets * ways], clock: 0 }
    }

    /// Touches a sector; true when it was not held (the access fetched it).
    pub fn touch(&mut self, sector: (u32, u64)) -> bool {
        self.clock += 1;
        // Consecutive sectors fall in consecutive sets, as the hardware spreads them.
        let set = (sector.1 ^ (sector.0 as u64).wrapping_mul(0x9e37_79b9)) as usize % self.sets;
        let slots = &mut self.slots[set * self.ways..(set + 1) * self.ways];
        if let Some(slot) = slots.iter_mut().find(|s| s.1 != 0 && s.0 == sector) {
            slot.1 = self.clock;
            return false;
        }
        let oldest = slots.iter_mut().min_by_key(|s| s.1).expect("a set has a way");
        *oldest = (sector, self.clock);
        true
    }

    /// Empties the cache (a new block starts).
    pub fn clear(&mut self) {
        self.slots.fill(((0, 0), 0));
        self.clock = 0;
    }
}

/// A block's share of the L1 cache: the multiprocessor's unified L1 and shared array, less the
/// shared memory of the blocks resident with it, split between those blocks. `blocks` is the
/// grid, `threads` a block's threads.
pub fn block_share(l1_bytes: u64, max_threads: u32, multiprocessors: u32, blocks: u64, threads: u64, shared_per_block: u64) -> u64 {
    let by_threads = (max_threads as u64 / threads.max(1)).max(1);
    let by_grid = blocks.div_ceil(multiprocessors.max(1) as u64).max(1);
    let resident = by_threads.min(by_grid).min(32);
    l1_bytes.saturating_sub(shared_per_block * resident) / resident
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_sector_leaves_first() {
        // Two sectors: one set of two ways.
        let mut c = SectorCache::new(2 * SECTOR_BYTES);
        assert!(c.touch((0, 1)));
        assert!(c.touch((0, 2)));
        assert!(!c.touch((0, 1)));
        assert!(c.touch((0, 3))); // evicts sector 2, the older
        assert!(!c.touch((0, 1)));
        assert!(c.touch((0, 2)));
        assert!(c.touch((1, 1)), "another memory's sector 1 is another sector");
    }

    #[test]
    fn a_sweep_larger_than_the_cache_misses_on_its_second_pass() {
        let mut c = SectorCache::new(1024 * SECTOR_BYTES);
        let pass = |c: &mut SectorCache, sectors: u64| (0..sectors).filter(|&s| c.touch((0, s))).count();
        assert_eq!(pass(&mut c, 512), 512);
        assert_eq!(pass(&mut c, 512), 0, "half the cache is held whole");
        c.clear();
        assert_eq!(pass(&mut c, 4096), 4096);
        assert_eq!(pass(&mut c, 4096), 4096, "four times the cache: each sector left before its reuse");
    }

    #[test]
    fn a_block_shares_l1_with_the_blocks_resident_beside_it() {
        // 2048 threads a multiprocessor: eight blocks of 256 threads, on a grid that fills them.
        assert_eq!(block_share(256 << 10, 2048, 132, 132 * 8, 256, 0), 32 << 10);
        // A small grid leaves a block the whole cache, less its shared memory.
        assert_eq!(block_share(256 << 10, 2048, 132, 100, 256, 16 << 10), 240 << 10);
    }
}
