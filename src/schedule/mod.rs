//! The nested-dissection schedule (paper §4.3, Algorithms 4–6), computed once from N and executed
//! by every backend.
//!
//! Level l (stride s = 2^l, 1-based block numbers) eliminates the blocks i = s, 3s, 5s, … ≤ N of the
//! reduced system that is left after levels 0..l. Each eliminated block i is coupled to at most two
//! surviving blocks, i−s and i+s. Eliminating it
//!
//! * factors its diagonal block,                 D̂_i ← chol(D_i)                (potrf)
//! * turns each coupling into a factor block,    L_{a,i} ← Ψ_{a,i} D̂_i^{−T}     (trsm)
//! * creates the fill between its two survivors, Ψ_{c,a} ← −L_{c,i} L_{a,i}ᵀ   (gemm)
//! * and, after the level, each survivor a is updated left-looking (the paper's deferred update),
//!   D_a ← D_a − Σ_i L_{a,i} L_{a,i}ᵀ                                        (syrk)
//!
//! so every level is two race-free parallel phases: [`Level::eliminations`], then
//! [`Level::updates`]. ⌊log₂N⌋+1 levels eliminate all N blocks.
//!
//! # Coupling slots
//! Every off-diagonal block of the factor lives in a numbered *slot*: the N−1 slots of level 0 hold
//! the caller's E_i (slot i couples blocks i and i+1), and level l+1's slots hold the fill created
//! at level l. A slot always stores its block in *factor orientation*: rows belong to the block that
//! is eliminated later ([`SlotInfo::row_block`]), columns to the one eliminated at this slot's level.
//! Uploading E_i therefore transposes it when block i is the one eliminated later. The storage is
//! internal: callers pass N−1 blocks and never see a slot.

#[cfg(test)]
mod tests;

/// One eliminated block's coupling to a surviving neighbour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coupling {
    /// The surviving neighbour (0-based block index).
    pub survivor: usize,
    /// Slot holding Ψ_{survivor, eliminated} before, L_{survivor, eliminated} after elimination.
    pub slot: usize,
}

/// Fill created between the two survivors of an eliminated block: `slot ← −L_{rows,i} L_{cols,i}ᵀ`,
/// where `rows` and `cols` index [`Elimination::couplings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fill {
    pub slot: usize,
    pub rows: usize,
    pub cols: usize,
}

/// A block eliminated at one level: potrf, one trsm per coupling, and the fill gemm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Elimination {
    /// 0-based block index in the caller's numbering.
    pub block: usize,
    /// The lower (i−s) and upper (i+s) surviving neighbours, where they exist.
    pub couplings: Vec<Coupling>,
    /// Present when both neighbours exist.
    pub fill: Option<Fill>,
}

/// A surviving block's left-looking update after a level: `D_block −= Σ L L ᵀ` over `sources`
/// (and, in the forward solve, `y_block −= Σ L y_eliminated`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchurUpdate {
    pub block: usize,
    /// (slot holding L_{block, eliminated}, the eliminated block), one or two of them.
    pub sources: Vec<(usize, usize)>,
}

/// Everything one level does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    /// s = 2^level for nested dissection (in [`Schedule::partitioned`]: of the separators' own
    /// levels; 0 for a chunk step).
    pub stride: usize,
    pub eliminations: Vec<Elimination>,
    pub updates: Vec<SchurUpdate>,
}

/// Which two blocks a slot couples, in factor orientation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotInfo {
    /// The block eliminated later: the slot's rows.
    pub row_block: usize,
    /// The block eliminated at `level`: the slot's columns.
    pub col_block: usize,
    /// The level whose elimination turns this slot into a factor block.
    pub level: usize,
}

/// The complete nested-dissection schedule for N blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    n_blocks: usize,
    levels: Vec<Level>,
    slots: Vec<SlotInfo>,
    /// Level at which each block is eliminated.
    block_level: Vec<usize>,
    /// Leading levels that are chunk steps ([`Schedule::partitioned`]; 0 for nested dissection).
    chunk_levels: usize,
}

impl Schedule {
    /// Builds the schedule for `n_blocks ≥ 1` blocks. O(N) time and memory.
    pub fn new(n_blocks: usize) -> Self {
        assert!(n_blocks >= 1, "a schedule needs at least one block");
        let nb = n_blocks;
        // Slot bases: level l has max(⌊N/s⌋ − 1, 0) couplings; coupling j (1-based) of level l links
        // blocks j·s and (j+1)·s (1-based).
        let mut strides = Vec::new();
        let mut s = 1;
        while s <= nb {
            strides.push(s);
            s *= 2;
        }
        let mut base = Vec::with_capacity(strides.len() + 1);
        let mut total = 0;
        for &s in &strides {
            base.push(total);
            total += (nb / s).saturating_sub(1);
        }
        base.push(total);
        let slot_of = |level: usize, j: usize| base[level] + j - 1;

        let mut slots = vec![SlotInfo { row_block: 0, col_block: 0, level: 0 }; total];
        let mut block_level = vec![0; nb];
        let mut levels = Vec::with_capacity(strides.len());
        for (l, &s) in strides.iter().enumerate() {
            let mut eliminations = Vec::new();
            let mut i = s; // 1-based
            while i <= nb {
                block_level[i - 1] = l;
                let mut couplings = Vec::with_capacity(2);
                if i > s {
                    let slot = slot_of(l, i / s - 1);
                    couplings.push(Coupling { survivor: i - s - 1, slot });
                    slots[slot] = SlotInfo { row_block: i - s - 1, col_block: i - 1, level: l };
                }
                if i + s <= nb {
                    let slot = slot_of(l, i / s);
                    couplings.push(Coupling { survivor: i + s - 1, slot });
                    slots[slot] = SlotInfo { row_block: i + s - 1, col_block: i - 1, level: l };
                }
                let fill = (couplings.len() == 2).then(|| {
                    // Survivors a = i−s and c = i+s are consecutive at level l+1 (coupling k = (i−s)/(2s)).
                    // Rows go to whichever of them is eliminated later: a is eliminated at l+1
                    // exactly when k is odd.
                    let k = (i - s) / (2 * s);
                    let slot = slot_of(l + 1, k);
                    let (rows, cols) = if k % 2 == 1 { (1, 0) } else { (0, 1) };
                    Fill { slot, rows, cols }
                });
                eliminations.push(Elimination { block: i - 1, couplings, fill });
                i += 2 * s;
            }
            // Survivors after this level: multiples of 2s, each updated by its eliminated neighbours.
            let mut updates = Vec::new();
            let mut a = 2 * s;
            while a <= nb {
                let mut sources = vec![(slot_of(l, a / s - 1), a - s - 1)];
                if a + s <= nb {
                    sources.push((slot_of(l, a / s), a + s - 1));
                }
                updates.push(SchurUpdate { block: a - 1, sources });
                a += 2 * s;
            }
            levels.push(Level { stride: s, eliminations, updates });
        }
        Schedule { n_blocks, levels, slots, block_level, chunk_levels: 0 }
    }

    /// The partitioned schedule ("chunked" nested dissection) for `n_blocks ≥ 1` blocks: the blocks
    /// are cut into chunks of `chunk ≥ 1` consecutive blocks, one *separator* block after each full
    /// chunk. Levels 0..chunk−1 eliminate step j of every chunk at once, each chunk in increasing
    /// order (the sequential algorithm inside the chunk), which couples the chunk's next block and
    /// its left separator ("spike" fill); then the separators, a block-tridiagonal system of their
    /// own (coupled by the fill of each chunk's last step), follow by nested dissection.
    ///
    /// Against [`Schedule::new`] it moves about half the bytes and keeps the same flops (≈ 2.7×
    /// the sequential algorithm), and a chunk's steps can run as one sweep with its running block
    /// in registers (the CUDA backend's chunk kernel), instead of ⌊log₂(chunk+1)⌋ grid-wide levels
    /// that each read and write every block. `chunk ≥ n_blocks` is the sequential algorithm.
    ///
    /// Chunk k holds blocks k·(chunk+1) .. k·(chunk+1)+chunk−1 (the last one may be shorter),
    /// separator k is block k·(chunk+1)+chunk where that exists. Slot numbering and orientation
    /// follow the same rules as [`Schedule::new`]: slots 0..N−2 hold the caller's E_i, every fill
    /// is consumed at the next level. Levels of the chunk steps have `stride` 0.
    pub fn partitioned(n_blocks: usize, chunk: usize) -> Self {
        assert!(n_blocks >= 1, "a schedule needs at least one block");
        assert!(chunk >= 1, "a chunk holds at least one block");
        let nb = n_blocks;
        let period = chunk + 1;
        let n_chunks = nb.div_ceil(period);
        let chunk_len = |k: usize| chunk.min(nb - k * period);
        let separator = |k: usize| Some(k * period + chunk).filter(|&b| b < nb);
        let n_seps = (0..n_chunks).filter(|&k| separator(k).is_some()).count();
        // The separators' own schedule, its blocks and slots mapped to ours afterwards. Its slot q
        // < n_seps−1 couples separators q and q+1: the fill of chunk q+1's last step.
        let sub = (n_seps > 0).then(|| Schedule::new(n_seps));
        let chunk_levels = chunk.min(nb);
        let sub_levels = sub.as_ref().map_or(0, |s| s.levels.len());

        let mut block_level = vec![0; nb];
        // Spike slots: chunk k (≥ 1) step j ≥ 1 couples separator k−1 and the chunk's block j.
        // Slots: the caller's E_i, the spikes, then the separators' schedule's own (from sep_fill_base).
        let mut spike_slot = vec![usize::MAX; nb];
        let n_spikes: usize = (1..n_chunks).map(|k| chunk_len(k) - 1).sum();
        let sep_fill_base = nb - 1 + n_spikes;
        let n_slots = sep_fill_base + sub.as_ref().map_or(0, |s| s.n_slots());
        let mut slots = vec![SlotInfo { row_block: 0, col_block: 0, level: 0 }; n_slots];
        {
            let mut next = nb - 1;
            for k in 1..n_chunks {
                for j in 1..chunk_len(k) {
                    spike_slot[k * period + j] = next;
                    next += 1;
                }
            }
        }
        // Level at which separator q is eliminated, and which separator of a pair comes later.
        let sep_level = |q: usize| chunk_levels + sub.as_ref().expect("separators exist").block_level(q);

        let mut levels = Vec::with_capacity(chunk_levels + sub_levels);
        for j in 0..chunk_levels {
            let mut eliminations = Vec::new();
            let mut updates: Vec<SchurUpdate> = Vec::new();
            for k in (0..n_chunks).filter(|&k| chunk_len(k) > j) {
                let b = k * period + j;
                block_level[b] = j;
                let mut couplings = Vec::with_capacity(2);
                if k >= 1 {
                    let slot = if j == 0 { b - 1 } else { spike_slot[b] };
                    couplings.push(Coupling { survivor: k * period - 1, slot });
                }
                if b + 1 < nb {
                    couplings.push(Coupling { survivor: b + 1, slot: b });
                }
                let fill = (couplings.len() == 2).then(|| {
                    if j + 1 < chunk_len(k) {
                        // Separator k−1 and the chunk's next block: the separator comes later.
                        Fill { slot: spike_slot[b + 1], rows: 0, cols: 1 }
                    } else {
                        // Separators k−1 and k: the separators' slot k−1, oriented as their schedule says.
                        let q = k - 1;
                        let later_is_left = sep_level(q) > sep_level(q + 1);
                        let (rows, cols) = if later_is_left { (0, 1) } else { (1, 0) };
                        Fill { slot: sep_fill_base + q, rows, cols }
                    }
                });
                for c in &couplings {
                    // The survivor's update: one source, or two for a separator between two chunks
                    // (its left chunk's last step, in the order of the eliminated blocks).
                    match updates.iter_mut().find(|u| u.block == c.survivor) {
                        Some(u) => u.sources.push((c.slot, b)),
                        None => updates.push(SchurUpdate { block: c.survivor, sources: vec![(c.slot, b)] }),
                    }
                }
                eliminations.push(Elimination { block: b, couplings, fill });
            }
            updates.sort_by_key(|u| u.block);
            for u in &mut updates {
                u.sources.sort_by_key(|&(_, b)| b);
            }
            levels.push(Level { stride: 0, eliminations, updates });
        }
        if let Some(sub) = &sub {
            let sep_block = |q: usize| q * period + chunk;
            // Their slot s is our sep_fill_base + s: their level-0 slots are the chunks' last fills,
            // their own fills come after.
            let map_slot = |s: usize| sep_fill_base + s;
            for (q, info) in sub.slots.iter().enumerate() {
                slots[map_slot(q)] = SlotInfo {
                    row_block: sep_block(info.row_block),
                    col_block: sep_block(info.col_block),
                    level: chunk_levels + info.level,
                };
            }
            for level in &sub.levels {
                let eliminations = level
                    .eliminations
                    .iter()
                    .map(|e| {
                        block_level[sep_block(e.block)] = chunk_levels + sub.block_level(e.block);
                        Elimination {
                            block: sep_block(e.block),
                            couplings: e
                                .couplings
                                .iter()
                                .map(|c| Coupling { survivor: sep_block(c.survivor), slot: map_slot(c.slot) })
                                .collect(),
                            fill: e.fill.map(|f| Fill { slot: map_slot(f.slot), ..f }),
                        }
                    })
                    .collect();
                let updates = level
                    .updates
                    .iter()
                    .map(|u| SchurUpdate {
                        block: sep_block(u.block),
                        sources: u.sources.iter().map(|&(s, b)| (map_slot(s), sep_block(b))).collect(),
                    })
                    .collect();
                levels.push(Level { stride: level.stride, eliminations, updates });
            }
        }
        // Slot info of the chunk levels' couplings (the separators' own were set above).
        for (j, level) in levels.iter().enumerate().take(chunk_levels) {
            for e in &level.eliminations {
                for c in &e.couplings {
                    slots[c.slot] = SlotInfo { row_block: c.survivor, col_block: e.block, level: j };
                }
            }
        }
        Schedule { n_blocks, levels, slots, block_level, chunk_levels }
    }

    pub fn n_blocks(&self) -> usize {
        self.n_blocks
    }
    /// ⌊log₂N⌋ + 1 levels.
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }
    /// Number of coupling slots: the N−1 given blocks plus the fill, fewer than 2N in all.
    pub fn n_slots(&self) -> usize {
        self.slots.len()
    }
    pub fn slot(&self, slot: usize) -> SlotInfo {
        self.slots[slot]
    }
    pub fn slots(&self) -> &[SlotInfo] {
        &self.slots
    }
    /// How many leading levels are the chunk steps of [`Schedule::partitioned`] (0: none): level j
    /// eliminates block j of every chunk still that long, so a backend may sweep each chunk instead.
    pub fn chunk_levels(&self) -> usize {
        self.chunk_levels
    }
    /// The level at which a block is eliminated.
    pub fn block_level(&self, block: usize) -> usize {
        self.block_level[block]
    }
    /// Whether the caller's E_i (Ψ_{i+1,i}) is stored transposed in its level-0 slot i, that is,
    /// whether block i is eliminated after block i+1.
    pub fn sub_block_transposed(&self, i: usize) -> bool {
        self.slots[i].row_block == i
    }

    /// Factorization flops of this schedule for block size n (potrf n³/3, trsm n³, syrk n³,
    /// gemm 2n³), the paper's cost table.
    pub fn factor_flops(&self, n: usize) -> f64 {
        let n3 = (n as f64).powi(3);
        let mut f = 0.0;
        for level in &self.levels {
            for e in &level.eliminations {
                f += n3 / 3.0 + e.couplings.len() as f64 * n3 + if e.fill.is_some() { 2.0 * n3 } else { 0.0 };
            }
            for u in &level.updates {
                f += u.sources.len() as f64 * n3;
            }
        }
        f
    }
}

/// Flops of the sequential algorithm (paper §3.1): (7/3·N − 2)·n³.
pub fn sequential_factor_flops(n_blocks: usize, n: usize) -> f64 {
    (7.0 / 3.0 * n_blocks as f64 - 2.0) * (n as f64).powi(3)
}
