//! The chunk steps of a partitioned schedule ([`Schedule::partitioned`]) in one launch: one warp
//! per chunk sweeps the chunk's blocks in order (kernels/chunks.cu), instead of one grid-wide
//! launch per step. This file turns the schedule's chunk levels into the table that kernel reads
//! and checks that they have the shape it assumes.

use cudarc::driver::CudaFunction;

use super::runtime::DeviceBuffer;
use crate::schedule::Schedule;

/// The chunk kernel of a plan whose schedule is partitioned (engine.rs launches it in place of
/// the chunk levels, then `separators` where there is more than one chunk).
pub(super) struct ChunkPath<T> {
    pub factor: CudaFunction,
    pub separators: CudaFunction,
    pub forward: CudaFunction,
    pub backward: CudaFunction,
    pub solve_separators: CudaFunction,
    /// Σ of each chunk's left separator in the forward solve (max_nrhs vectors per chunk).
    pub sep_rhs: DeviceBuffer<T>,
    pub smem: usize,
    pub levels: usize,
    pub n_chunks: usize,
    pub table: DeviceBuffer<i32>,
    pub left_slots: DeviceBuffer<i32>,
    /// Σ_S of each chunk's left separator, per item (n_chunks − 1 blocks).
    pub sums: DeviceBuffer<T>,
}

/// Ints per chunk in the table (kernels/chunks.cu `CH_REC`).
pub(super) const CH_REC: usize = 6;

/// The chunk levels of a schedule as the chunk kernel reads them.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ChunkTable {
    /// Levels the kernel runs (the schedule's `chunk_levels`).
    pub levels: usize,
    pub n_chunks: usize,
    /// CH_REC per chunk, in order of the first block: first block, length, left separator (−1:
    /// none), offset into `left_slots`, the separators' fill slot of the last step (−1: none),
    /// 1 where that fill's rows are the left separator's.
    pub chunks: Vec<i32>,
    /// Per chunk with a left separator, per step: the slot coupling the step's block to it.
    pub left_slots: Vec<i32>,
}

/// The table for `s`'s chunk levels (`None` where it has none). Panics where the levels do not
/// have the shape `Schedule::partitioned` gives them (the kernel's contract, tested below): each
/// step's upper coupling is slot b (blocks b, b+1), the lower one goes to the chunk's left
/// separator and is the fill of the chunk's previous step, and only the first chunk has no
/// left separator.
pub(super) fn chunk_table(s: &Schedule) -> Option<ChunkTable> {
    let levels = s.chunk_levels();
    if levels == 0 {
        return None;
    }
    struct Chunk {
        first: usize,
        len: usize,
        left: Option<usize>,
        left_slots: Vec<usize>,
        fill: Option<(usize, bool)>,
        /// The spike fill the next step must read.
        spike: Option<usize>,
    }
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut chunk_of = vec![usize::MAX; s.n_blocks()];
    for (j, level) in s.levels()[..levels].iter().enumerate() {
        for e in &level.eliminations {
            let b = e.block;
            let k = if j == 0 {
                chunks.push(Chunk { first: b, len: 0, left: None, left_slots: Vec::new(), fill: None, spike: None });
                chunks.len() - 1
            } else {
                let k = chunk_of[b - 1];
                assert!(k != usize::MAX && chunks[k].first + j == b, "block {b} continues no chunk at step {j}");
                k
            };
            chunk_of[b] = k;
            let c = &mut chunks[k];
            c.len += 1;
            let mut left = None;
            for cp in &e.couplings {
                if cp.survivor == b + 1 {
                    assert_eq!(cp.slot, b, "step {j}: block {b}'s upper coupling is not slot {b}");
                } else {
                    assert!(cp.survivor < b, "block {b}: a coupling above b+1");
                    left = Some(*cp);
                }
            }
            if j == 0 {
                c.left = left.map(|cp| cp.survivor);
            } else {
                assert_eq!(left.map(|cp| cp.survivor), c.left, "block {b}: another left separator");
                assert_eq!(left.map(|cp| cp.slot), c.spike, "block {b}: the left coupling is not the spike fill");
            }
            if let Some(cp) = left {
                c.left_slots.push(cp.slot);
            }
            c.spike = None;
            if let Some(f) = e.fill {
                let interior = s.block_level(b + 1) == j + 1 && j + 1 < levels;
                if interior {
                    c.spike = Some(f.slot);
                } else {
                    c.fill = Some((f.slot, f.rows == 0)); // (couplings[0] is the left separator)
                }
            }
        }
    }
    let mut table = Vec::with_capacity(CH_REC * chunks.len());
    let mut left_slots = Vec::new();
    for (k, c) in chunks.iter().enumerate() {
        assert_eq!(c.left.is_some(), k > 0, "only the first chunk has no left separator");
        let (fill, rows_left) = c.fill.map_or((-1, 0), |(slot, left)| (slot as i32, left as i32));
        table.extend_from_slice(&[
            c.first as i32,
            c.len as i32,
            c.left.map_or(-1, |b| b as i32),
            left_slots.len() as i32,
            fill,
            rows_left,
        ]);
        left_slots.extend(c.left_slots.iter().map(|&slot| slot as i32));
    }
    if left_slots.is_empty() {
        left_slots.push(-1); // (never read; keeps the device buffer non-empty)
    }
    Some(ChunkTable { levels, n_chunks: chunks.len(), chunks: table, left_slots })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_dissection_has_no_chunk_table() {
        assert_eq!(chunk_table(&Schedule::new(100)), None);
    }

    #[test]
    fn every_partitioned_schedule_gives_a_table_of_its_chunks() {
        for chunk in [1, 2, 3, 7, 15, 40] {
            for nb in (1..=60).chain([255, 1021, 16384]) {
                let s = Schedule::partitioned(nb, chunk);
                let t = chunk_table(&s).expect("chunk levels");
                assert_eq!(t.levels, chunk.min(nb));
                assert_eq!(t.n_chunks, nb.div_ceil(chunk + 1), "N={nb} chunk={chunk}");
                let blocks: usize = t.chunks.chunks(CH_REC).map(|c| c[1] as usize).sum();
                assert_eq!(blocks, s.levels()[..t.levels].iter().map(|l| l.eliminations.len()).sum::<usize>());
                for (k, c) in t.chunks.chunks(CH_REC).enumerate() {
                    assert_eq!(c[0] as usize, k * (chunk + 1), "N={nb} chunk={chunk}: first block");
                    // A full chunk followed by a separator with a left separator of its own makes
                    // the separators' fill.
                    let has_sep = c[0] as usize + chunk < nb && c[1] as usize == chunk;
                    assert_eq!(c[4] >= 0, k > 0 && has_sep, "N={nb} chunk={chunk} k={k}");
                }
            }
        }
    }
}
