//! The deep levels of the small-block solve on one thread-block cluster per item (sm_90,
//! kernels/small.cu `btchol_solve_cluster_small`): which levels it takes and on how many CTAs
//! (`cluster_shape`), and the per-CTA programs the host compiles from the schedule's records
//! (`cluster_solve_plan`), including where every right-hand-side vector goes once computed.
//!
//! The kernel has no cluster-wide barrier between phases: a vector is pushed into the shared memory
//! of each CTA that reads it next and counted on that CTA's barrier of the reading phase. That is
//! race-free only if every read has exactly one supplier (the last write before it, or the initial
//! load from global memory) and no push can land on a value still to be read; the tests below
//! check both on the schedules of many N, with one CTA as slow as it can be.

use std::collections::HashMap;

use cudarc::driver::{result, sys, CudaFunction};

use super::engine::{LevelRecords, LREC, REC};
use super::jit::{KernelSpec, CLUSTER_MAX_PHASES, CLUSTER_THREADS, SMALL_THREADS};
use super::runtime::{cuda_err, Device, DeviceBuffer, KernelLaunch};
use crate::error::Result;

/// Compute warps per CTA of the cluster solve, and the forward records a CTA takes per round (a
/// warp per elimination): kernels/small.cu `CL_WARPS`, `CL_PAIRS`.
const CLUSTER_WARPS: usize = SMALL_THREADS / 32;
const CLUSTER_PAIRS: usize = CLUSTER_WARPS / 2;
/// Largest cluster (non-portable on the H100, where 16 is the hardware limit).
const CLUSTER_MAX_SIZE: usize = 16;
/// Rounds of records a CTA may take in one level of the cluster solve; wider levels keep their
/// own launches (they have blocks enough for the whole device).
const CLUSTER_MAX_ROUNDS: usize = 2;
/// The padded block size of the cluster solve: one lane per row (the kernel is compiled for it
/// only). Measured on the H100 against the per-level launches and the one-CTA tail (2026-11-24,
/// with the cluster barriers of the kernel before this one, `BTCHOL_SOLVE_CLUSTER=0/1`, solve µs,
/// bench/results/ab/README.md): ld = 32 was 2–13 % faster (f64 n = 32, N = 64 / 1024 / 16384:
/// 66.7 → 63.1, 134.9 → 117.4, 560 → 547; f32 n = 32 −2…−9 %). `BTCHOL_SOLVE_CLUSTER=0` turns it
/// off (kernel development).
const CLUSTER_LD: usize = 32;
/// Right-hand sides up to which the solve uses the cluster kernel (it runs the columns one
/// after the other; many columns are better spread over the per-level launches' warps).
pub(super) const CLUSTER_MAX_NRHS: usize = 8;
/// Words after the phase barriers for the fused solve's non-finite keys (kernels/small.cu
/// `CL_KEYS_OFFSET`): one from each rank, the CTA's own, their barrier.
const CLUSTER_KEY_WORDS: usize = CLUSTER_MAX_SIZE + 2;
/// Ints per unit of a cluster-solve program (kernels/small.cu `CL_UNIT`).
const CLUSTER_UNIT: usize = 13;

/// The cluster solve of a plan (kernels/small.cu `btchol_solve_cluster_small`).
pub(super) struct ClusterSolve {
    pub(super) func: CudaFunction,
    /// First level it takes.
    pub(super) from: usize,
    /// CTAs per cluster.
    size: usize,
    /// The ranks' programs (`ClusterPlan::table`).
    pub(super) plan: DeviceBuffer<i32>,
    pub(super) layout: SharedLayout,
}

/// What a CTA of the cluster solve holds in shared memory (kernels/small.cu: a barrier per phase,
/// two vectors per compute warp, its program, its vector slots, then the ring of staged blocks).
pub(super) struct SharedLayout {
    /// The longest program (ints) and the most vector slots a CTA holds.
    pub(super) prog_ints: usize,
    pub(super) vec_slots: usize,
    /// Ring slots that stage every block at once, and the fewest that work.
    longest: usize,
    widest: usize,
    ld: usize,
    elem_bytes: usize,
    smem_optin: usize,
}

/// One launch of the cluster solve: its configuration and the ring slots its shared memory holds.
pub(super) struct ClusterLaunch {
    pub(super) launch: KernelLaunch,
    pub(super) ring_slots: usize,
}

impl ClusterSolve {
    /// The cluster solve of a plan, where the device has clusters (sm_90+) and the blocks are
    /// padded to 32: the cluster of `cluster_shape`, doubled where that lets each CTA stage all
    /// its blocks at once and halved where the device cannot place it, on the deepest levels
    /// whose phases each fit a CTA's shared memory with one right-hand side.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        dev: &Device,
        spec: &KernelSpec,
        func: CudaFunction,
        batch: usize,
        lrecs: &[i32],
        erecs: &[i32],
        cta_levels: &[(usize, usize)],
        levels: &[LevelRecords],
        first: usize,
    ) -> Result<Option<ClusterSolve>> {
        let enabled = std::env::var("BTCHOL_SOLVE_CLUSTER").as_deref() != Ok("0");
        if dev.arch.0 < 9 || spec.ld != CLUSTER_LD || !enabled {
            return Ok(None);
        }
        let (mut from, mut size) = cluster_shape(batch, dev.sm_count, cta_levels, levels, first);
        if from == levels.len() {
            return Ok(None); // (every level is before `first`: a partitioned schedule's chunk levels)
        }
        let mut cap = CLUSTER_MAX_SIZE; // (lowered where the device cannot place a cluster)
        let nonportable = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED;
        unsafe { result::function::set_function_attribute(func.cu_function(), nonportable, 1) }
            .map_err(|e| cuda_err("allowing large clusters", e))?;
        super::engine::opt_in_shared_memory(&func, dev.smem_optin)?;
        loop {
            let plan = cluster_solve_plan(lrecs, erecs, cta_levels, levels, from, size);
            let layout = SharedLayout {
                prog_ints: plan.prog_ints,
                vec_slots: plan.vec_slots,
                longest: plan.longest,
                widest: plan.widest,
                ld: spec.ld,
                elem_bytes: spec.dtype.size_bytes(),
                smem_optin: dev.smem_optin,
            };
            let budget = layout.ring_budget(1);
            if plan.widest > budget {
                // A phase's blocks must fit the ring at once: leave the widest level to its launches.
                if from + 1 == levels.len() {
                    return Ok(None);
                }
                from += 1;
                continue;
            }
            if plan.longest > budget && 2 * size <= cap && batch * 2 * size <= dev.sm_count {
                // More CTAs, so that each stages all its blocks at once (no refills mid-solve).
                size *= 2;
                continue;
            }
            // Every launch uses at most the opt-in limit: placeable at that, placeable always.
            let worst = KernelLaunch {
                grid: batch * size,
                threads: CLUSTER_THREADS,
                smem: dev.smem_optin,
                cluster: size,
                early: false,
                carveout: None,
            };
            if worst.max_active(&func)? == 0 {
                if size == 1 {
                    return Ok(None);
                }
                (size, cap) = (size / 2, size / 2);
                continue;
            }
            let buf = DeviceBuffer::from_host(dev, &plan.table, "uploading the cluster solve plan")?;
            return Ok(Some(ClusterSolve { func, from, size, plan: buf, layout }));
        }
    }

    /// The launch for `m` right-hand sides, or `None` where a phase's blocks and the vectors do not
    /// fit a CTA's shared memory together (the solve then takes the per-level launches).
    pub(super) fn launch_for(&self, m: usize, batch: usize, early: bool) -> Option<ClusterLaunch> {
        let l = &self.layout;
        let ring_slots = l.longest.min(l.ring_budget(m)).max(1);
        if m == 0 || m > CLUSTER_MAX_NRHS || ring_slots < l.widest {
            return None;
        }
        let smem = l.ring_offset(m) + ring_slots * l.ld * l.ld * l.elem_bytes;
        let launch = KernelLaunch {
            grid: batch * self.size,
            threads: CLUSTER_THREADS,
            smem,
            cluster: self.size,
            early,
            carveout: None,
        };
        Some(ClusterLaunch { launch, ring_slots })
    }
}

impl SharedLayout {
    /// Bytes of shared memory before the ring with `m` right-hand sides (kernels/small.cu: a
    /// barrier per phase, the keys, two vectors per compute warp, the program, the vector slots).
    fn ring_offset(&self, m: usize) -> usize {
        let prog = (CLUSTER_MAX_PHASES + CLUSTER_KEY_WORDS) * 8 + CLUSTER_WARPS * 2 * self.ld * self.elem_bytes;
        let vecs = (prog + 4 * self.prog_ints).next_multiple_of(16);
        (vecs + self.vec_slots * m * self.ld * self.elem_bytes).next_multiple_of(128)
    }

    /// Blocks the ring can hold with `m` right-hand sides.
    fn ring_budget(&self, m: usize) -> usize {
        self.smem_optin.saturating_sub(self.ring_offset(m)) / (self.ld * self.ld * self.elem_bytes)
    }
}

/// Which levels the cluster solve takes and on how many CTAs per item: `size` is the largest
/// power of two ≤ 16 with `batch · size` ≤ SMs (one cluster per item, all resident); the tail is
/// every level from the first after which no level needs more than [`CLUSTER_MAX_ROUNDS`] rounds
/// on that many CTAs, `first` at the earliest (a partitioned schedule's chunk levels stay out);
/// then the cluster shrinks to what the widest tail level uses in one round.
/// Returns (first level, CTAs per cluster).
fn cluster_shape(
    batch: usize,
    sm_count: usize,
    cta_levels: &[(usize, usize)],
    levels: &[LevelRecords],
    first: usize,
) -> (usize, usize) {
    let mut size = 1;
    while 2 * size <= CLUSTER_MAX_SIZE && batch * 2 * size <= sm_count {
        size *= 2;
    }
    let rounds = |l: usize, size: usize| {
        cta_levels[l].1.div_ceil(size * CLUSTER_PAIRS).max(levels[l].n_elim.div_ceil(size * CLUSTER_WARPS))
    };
    let mut from = levels.len();
    while from > first && rounds(from - 1, size) <= CLUSTER_MAX_ROUNDS && levels.len() - from < CLUSTER_MAX_PHASES / 2 {
        from -= 1;
    }
    while size > 1 && (from..levels.len()).all(|l| rounds(l, size / 2) <= 1) {
        size /= 2;
    }
    (from, size)
}

/// The cluster solve's programs (kernels/small.cu `btchol_solve_cluster_small`, which documents the
/// format), one per rank, compiled from the records the per-level kernels read.
#[derive(Debug)]
struct ClusterPlan {
    /// [program start per rank, and the end (indices into `table`)][programs].
    table: Vec<i32>,
    /// The longest block list (ring slots that stage everything), the most blocks a rank reads
    /// in one phase (ring slots the kernel needs), the longest program (ints) and the most
    /// vectors a rank holds.
    longest: usize,
    widest: usize,
    prog_ints: usize,
    vec_slots: usize,
}

/// A right-hand-side vector of the tail: y_b of the forward substitution, or z_b, which the
/// backward substitution turns into the solution x_b in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Vector {
    Y(i32),
    Z(i32),
}

/// A send's fields (kernels/small.cu `CL_SEND_*`): receiving rank, the phase that reads the vector
/// there, and its slot there.
fn send_code(rank: usize, phase: usize, slot: usize) -> i32 {
    debug_assert!(rank < 32 && phase < 64);
    (rank | phase << 5 | slot << 11) as i32
}

/// A unit of a rank's program under construction: its ints, and the vectors whose slots (on its
/// rank) go at which positions once the data flow is known.
struct Unit {
    ints: Vec<i32>,
    slots: Vec<(usize, Vector)>,
}

/// A write of a vector by a unit: where its sends are encoded (`many`: an offset and a count into
/// the rank's send list at `at`, `at + 1`; otherwise the one send at `at`, −1 for none).
struct Write {
    rank: usize,
    unit: usize,
    at: usize,
    many: bool,
    vector: Vector,
}

/// Compiles the programs of the tail `from..` on clusters of `size` CTAs: a level's records go
/// round-robin to the ranks (record w to rank w mod size); a forward unit reads each
/// elimination's L⁻¹ and, where the record updates a survivor, its coupling to it; a backward
/// unit L⁻¹ and the couplings to every survivor, in that order. Then the data flow: every read
/// of a vector is supplied by the last write of it before (sent to the reader's rank, counted on
/// its barrier of the reading phase) or, where there is none, loaded from global memory when the
/// kernel starts.
fn cluster_solve_plan(
    lrecs: &[i32],
    erecs: &[i32],
    cta_levels: &[(usize, usize)],
    levels: &[LevelRecords],
    from: usize,
    size: usize,
) -> ClusterPlan {
    let tail: Vec<usize> = (from..levels.len()).collect();
    let n_phases = 2 * tail.len();
    let mut units: Vec<Vec<Unit>> = (0..size).map(|_| Vec::new()).collect();
    let (mut unit_start, mut first) = (vec![Vec::new(); size], vec![Vec::new(); size]);
    let mut list = vec![Vec::<i32>::new(); size];
    // Per phase: what each rank reads, and the writes (indices into `writes`).
    let mut reads: Vec<Vec<(usize, Vector)>> = vec![Vec::new(); n_phases];
    let mut phase_writes: Vec<Vec<usize>> = vec![Vec::new(); n_phases];
    let mut writes: Vec<Write> = Vec::new();
    for ph in 0..n_phases {
        for rank in 0..size {
            unit_start[rank].push(units[rank].len() as i32);
            first[rank].push((list[rank].len() / 2) as i32);
        }
        let p = ph as i32;
        let mut write = |rank: usize, unit: usize, at: usize, many: bool, vector: Vector| {
            phase_writes[ph].push(writes.len());
            writes.push(Write { rank, unit, at, many, vector });
        };
        if ph < tail.len() {
            let (f, count) = cta_levels[tail[ph]];
            for w in 0..count {
                let (rank, k) = (w % size, units[w % size].len());
                let r = &lrecs[(f + w) * LREC..][..LREC];
                let (a, n_elim) = (r[0], r[1]);
                let mut u = Unit { ints: vec![a, n_elim, -1, 0, 0], slots: Vec::new() };
                if a >= 0 {
                    u.slots.push((2, Vector::Y(a)));
                    reads[ph].push((rank, Vector::Y(a)));
                }
                for g in 0..2 {
                    if g >= n_elim as usize {
                        u.ints.extend_from_slice(&[-1; 4]);
                        continue;
                    }
                    let e = &r[2 + 8 * g..][..8];
                    let slot = if a >= 0 { e[2 + e[7] as usize] } else { -1 };
                    let at = u.ints.len();
                    u.ints.extend_from_slice(&[-1, slot, (list[rank].len() / 2) as i32, -1]);
                    u.slots.push((at, Vector::Y(e[0])));
                    reads[ph].push((rank, Vector::Y(e[0])));
                    list[rank].extend_from_slice(&[e[0], p]);
                    if a >= 0 {
                        list[rank].extend_from_slice(&[-1 - slot, p]);
                    }
                    if e[6] != 0 {
                        write(rank, k, at + 3, false, Vector::Z(e[0]));
                    }
                }
                if a >= 0 {
                    write(rank, k, 3, true, Vector::Y(a));
                }
                units[rank].push(u);
            }
        } else {
            let lr = levels[tail[n_phases - 1 - ph]];
            for w in 0..lr.n_elim {
                let (rank, k) = (w % size, units[w % size].len());
                let r = &erecs[(lr.elim_offset + w) * REC..][..REC];
                let q = (list[rank].len() / 2) as i32;
                let mut u = Unit { ints: vec![r[0], r[7], q, -1, 0, 0, -1, -1, -1, -1], slots: Vec::new() };
                u.ints.resize(CLUSTER_UNIT, -1);
                u.slots.push((3, Vector::Z(r[0])));
                reads[ph].push((rank, Vector::Z(r[0])));
                list[rank].extend_from_slice(&[r[0], p]);
                for cc in 0..r[7] as usize {
                    let (slot, survivor) = (r[1 + 2 * cc], r[2 + 2 * cc]);
                    u.ints[6 + 2 * cc] = slot;
                    u.slots.push((7 + 2 * cc, Vector::Z(survivor)));
                    reads[ph].push((rank, Vector::Z(survivor)));
                    list[rank].extend_from_slice(&[-1 - slot, p]);
                }
                write(rank, k, 4, true, Vector::Z(r[0]));
                units[rank].push(u);
            }
        }
    }
    for rank in 0..size {
        unit_start[rank].push(units[rank].len() as i32);
        first[rank].push((list[rank].len() / 2) as i32);
    }

    // The data flow, in phase order (a unit reads its inputs, then writes; no vector is written
    // in a phase by one unit and read there by another): slots per rank in order of first read,
    // the readers (rank, first reading phase) of every write, the initial loads.
    let mut slots: Vec<HashMap<Vector, usize>> = vec![HashMap::new(); size];
    let mut init: Vec<Vec<(usize, i32)>> = vec![Vec::new(); size];
    let mut readers: Vec<Vec<(usize, usize)>> = vec![Vec::new(); writes.len()];
    let mut last_write: HashMap<Vector, usize> = HashMap::new();
    for ph in 0..n_phases {
        for &(rank, v) in &reads[ph] {
            let n_slots = slots[rank].len();
            let fresh = !slots[rank].contains_key(&v);
            let slot = *slots[rank].entry(v).or_insert(n_slots);
            match last_write.get(&v) {
                Some(&w) => {
                    if !readers[w].iter().any(|&(r, _)| r == rank) {
                        readers[w].push((rank, ph));
                    }
                }
                None => {
                    let Vector::Y(block) = v else { panic!("{v:?} read before it is computed") };
                    if fresh {
                        init[rank].push((slot, block));
                    }
                }
            }
        }
        for &w in &phase_writes[ph] {
            let (rank, v) = (writes[w].rank, writes[w].vector);
            assert!(!reads[ph].iter().any(|&(r, rv)| rv == v && r != rank), "{v:?} read while written");
            last_write.insert(v, w);
        }
    }

    // Encode the sends, the slots, and per rank and phase the vectors it receives.
    let mut received = vec![vec![0i32; n_phases]; size];
    let mut sends = vec![Vec::<i32>::new(); size];
    for (w, wr) in writes.iter().enumerate() {
        let codes: Vec<i32> = readers[w].iter().map(|&(r, ph)| send_code(r, ph, slots[r][&wr.vector])).collect();
        readers[w].iter().for_each(|&(r, ph)| received[r][ph] += 1);
        let ints = &mut units[wr.rank][wr.unit].ints;
        if wr.many {
            (ints[wr.at], ints[wr.at + 1]) = (sends[wr.rank].len() as i32, codes.len() as i32);
            sends[wr.rank].extend_from_slice(&codes);
        } else {
            assert!(codes.len() <= 1, "z_e has one reader, e's backward unit");
            ints[wr.at] = codes.first().copied().unwrap_or(-1);
        }
    }
    let (mut programs, mut longest, mut widest) = (Vec::new(), 0, 0);
    for rank in 0..size {
        let mut unit_ints = Vec::new();
        for u in &mut units[rank] {
            for &(at, v) in &u.slots {
                u.ints[at] = slots[rank][&v] as i32;
            }
            assert_eq!(u.ints.len(), CLUSTER_UNIT);
            unit_ints.extend_from_slice(&u.ints);
        }
        longest = longest.max(list[rank].len() / 2);
        widest = first[rank].windows(2).map(|w| (w[1] - w[0]) as usize).fold(widest, usize::max);
        let prog: Vec<i32> = [&unit_start[rank][..], &first[rank], &received[rank], &[init[rank].len() as i32]]
            .concat()
            .into_iter()
            .chain(init[rank].iter().flat_map(|&(s, b)| [s as i32, b]))
            .chain(list[rank].iter().copied())
            .chain(unit_ints)
            .chain(sends[rank].iter().copied())
            .collect();
        programs.push(prog);
    }
    let vec_slots = slots.iter().map(HashMap::len).max().unwrap_or(0);
    let prog_ints = programs.iter().map(Vec::len).max().unwrap_or(0);
    let mut table = Vec::with_capacity(size + 1 + programs.iter().map(Vec::len).sum::<usize>());
    let mut at = size + 1;
    for p in &programs {
        table.push(at as i32);
        at += p.len();
    }
    table.push(at as i32);
    programs.iter().for_each(|p| table.extend_from_slice(p));
    ClusterPlan { table, longest, widest, prog_ints, vec_slots }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::engine::{level_cta_records, schedule_records};
    use crate::schedule::Schedule;

    /// Block counts with every shape of tail: short, odd, prime, one past a power of two, long.
    const BLOCK_COUNTS: [usize; 12] = [1, 2, 3, 5, 7, 13, 31, 64, 65, 127, 1000, 4097];
    /// (batch, SMs): one cluster of 16, several items, a batch that leaves one CTA per item, a
    /// small device.
    const SHAPES: [(usize, usize); 5] = [(1, 132), (3, 132), (64, 132), (1024, 132), (1, 16)];

    /// A rank's program, decoded as the kernel reads it.
    struct Program<'a> {
        unit_start: &'a [i32],
        first: &'a [i32],
        received: &'a [i32],
        init: &'a [i32],
        list: &'a [i32],
        units: &'a [i32],
        sends: &'a [i32],
    }

    fn program(plan: &ClusterPlan, rank: usize, n_phases: usize) -> Program<'_> {
        let t = &plan.table;
        let prog = &t[t[rank] as usize..t[rank + 1] as usize];
        assert!(prog.len() <= plan.prog_ints);
        let (unit_start, rest) = prog.split_at(n_phases + 1);
        let (first, rest) = rest.split_at(n_phases + 1);
        let (received, rest) = rest.split_at(n_phases);
        let (n_init, rest) = rest.split_first().unwrap();
        let (init, rest) = rest.split_at(2 * *n_init as usize);
        let (list, rest) = rest.split_at(2 * first[n_phases] as usize);
        let (units, sends) = rest.split_at(CLUSTER_UNIT * unit_start[n_phases] as usize);
        Program { unit_start, first, received, init, list, units, sends }
    }

    fn unit<'a>(p: &Program<'a>, k: i32) -> &'a [i32] {
        &p.units[CLUSTER_UNIT * k as usize..][..CLUSTER_UNIT]
    }

    /// The cluster solve's programs list, per rank and phase, exactly the blocks its records read,
    /// at the list positions the kernel derives: L⁻¹ of each elimination and its coupling to the
    /// record's survivor (forward), L⁻¹ and the couplings to every survivor (backward); each
    /// record runs once; and the shape keeps the tail narrow and resident.
    #[test]
    fn programs_list_what_each_rank_reads() {
        for nb in (1..=40).chain([63, 64, 65, 127, 128, 1000, 1024, 4097, 16384]) {
            let s = Schedule::new(nb);
            let (lrecs, cta_levels) = level_cta_records(&s);
            let (erecs, levels) = schedule_records(&s);
            for (batch, sms) in SHAPES {
                let (from, size) = cluster_shape(batch, sms, &cta_levels, &levels, 0);
                assert!(size.is_power_of_two() && size <= CLUSTER_MAX_SIZE && (size == 1 || batch * size <= sms));
                assert!(from < levels.len() && levels.len() - from <= CLUSTER_MAX_PHASES / 2, "N={nb}");
                for l in from..levels.len() {
                    assert!(cta_levels[l].1 <= CLUSTER_MAX_ROUNDS * size * CLUSTER_PAIRS, "N={nb} level {l}");
                    assert!(levels[l].n_elim <= CLUSTER_MAX_ROUNDS * size * CLUSTER_WARPS, "N={nb} level {l}");
                }
                if nb <= 64 && batch == 1 && sms == 132 {
                    assert_eq!(from, 0, "N={nb}: a short system solves in one cluster launch");
                }
                let plan = cluster_solve_plan(&lrecs, &erecs, &cta_levels, &levels, from, size);
                let n_phases = 2 * (levels.len() - from);
                let mut seen_f = vec![0; lrecs.len() / LREC];
                let mut seen_b = vec![0; erecs.len() / REC];
                for rank in 0..size {
                    let p = program(&plan, rank, n_phases);
                    assert!(p.list.len() / 2 <= plan.longest);
                    assert!(p.first.windows(2).all(|w| (w[1] - w[0]) as usize <= plan.widest));
                    let at = |q: i32, ph: usize| {
                        assert!(p.first[ph] <= q && q < p.first[ph + 1], "N={nb}: block in its phase's range");
                        assert_eq!(p.list[2 * q as usize + 1] as usize, ph);
                        p.list[2 * q as usize]
                    };
                    for ph in 0..n_phases {
                        let fwd = ph < n_phases / 2;
                        let l = from + if fwd { ph } else { n_phases - 1 - ph };
                        let mut listed = 0;
                        for (j, k) in (p.unit_start[ph]..p.unit_start[ph + 1]).enumerate() {
                            let u = unit(&p, k);
                            let w = rank + j * size;
                            if fwd {
                                let r = &lrecs[(cta_levels[l].0 + w) * LREC..][..LREC];
                                seen_f[cta_levels[l].0 + w] += 1;
                                assert_eq!(&u[..2], &r[..2]);
                                for g in 0..r[1] as usize {
                                    let (e, ue) = (&r[2 + 8 * g..][..8], &u[5 + 4 * g..][..4]);
                                    assert_eq!(at(ue[2], ph), e[0], "N={nb}: L⁻¹ of the elimination");
                                    assert_eq!(ue[3] >= 0, e[6] != 0, "N={nb}: the owner sends z_e");
                                    listed += 1;
                                    if r[0] >= 0 {
                                        let slot = e[2 + e[7] as usize];
                                        assert_eq!(ue[1], slot);
                                        assert_eq!(at(ue[2] + 1, ph), -1 - slot, "N={nb}: coupling to the survivor");
                                        listed += 1;
                                    }
                                }
                            } else {
                                let eo = levels[l].elim_offset;
                                let r = &erecs[(eo + w) * REC..][..REC];
                                seen_b[eo + w] += 1;
                                assert_eq!(&u[..2], &[r[0], r[7]]);
                                assert_eq!(at(u[2], ph), r[0], "N={nb}: L⁻¹ of the elimination");
                                for cc in 0..r[7] as usize {
                                    assert_eq!(u[6 + 2 * cc], r[1 + 2 * cc]);
                                    assert_eq!(at(u[2] + 1 + cc as i32, ph), -1 - r[1 + 2 * cc], "N={nb}: coupling");
                                }
                                listed += 1 + r[7] as usize;
                            }
                        }
                        assert_eq!(listed, (p.first[ph + 1] - p.first[ph]) as usize, "N={nb}: nothing else listed");
                    }
                }
                for l in from..levels.len() {
                    let (f, count) = cta_levels[l];
                    assert!(seen_f[f..f + count].iter().all(|&c| c == 1), "N={nb}: each forward record once");
                    let (eo, ne) = (levels[l].elim_offset, levels[l].n_elim);
                    assert!(seen_b[eo..eo + ne].iter().all(|&c| c == 1), "N={nb}: each elimination once");
                }
            }
        }
    }

    /// A small deterministic generator of values in [0.5, 1.5).
    struct Values(u64);
    impl Values {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            0.5 + (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// The solve with 1×1 blocks (L⁻¹ and couplings random scalars), level by level from the
    /// schedule itself: y after the forward levels before `from`, and every block's solution.
    fn reference_solve(s: &Schedule, linv: &[f64], x: &[f64], y0: &[f64], from: usize) -> (Vec<f64>, Vec<f64>) {
        let mut y = y0.to_vec();
        let mut y_at_from = y.clone();
        for (l, level) in s.levels().iter().enumerate() {
            if l == from {
                y_at_from = y.clone();
            }
            for e in &level.eliminations {
                let z = linv[e.block] * y[e.block];
                y[e.block] = z;
                for c in &e.couplings {
                    y[c.survivor] -= x[c.slot] * z;
                }
            }
        }
        for level in s.levels().iter().rev() {
            for e in &level.eliminations {
                let v = y[e.block] - e.couplings.iter().map(|c| x[c.slot] * y[c.survivor]).sum::<f64>();
                y[e.block] = linv[e.block] * v;
            }
        }
        (y_at_from, y)
    }

    /// The kernel's programs run on scalars, each rank with its own vector slots, a phase of a
    /// rank starting as soon as every vector it receives for it has been sent (and a send landing
    /// at once): in lock step, and with each rank in turn as slow as it can be (the others run
    /// ahead wherever they may). Every run must finish, receive exactly what each barrier
    /// expects, and give the reference's solution — a push that overwrote a vector still to be
    /// read, or a read with no supplier, would not.
    #[test]
    fn programs_solve_like_the_schedule_whatever_the_order_of_ranks() {
        for nb in BLOCK_COUNTS {
            let s = Schedule::new(nb);
            let (lrecs, cta_levels) = level_cta_records(&s);
            let (erecs, levels) = schedule_records(&s);
            let mut values = Values(0x9e37_79b9_7f4a_7c15 ^ nb as u64);
            let linv: Vec<f64> = (0..nb).map(|_| values.next()).collect();
            let x: Vec<f64> = (0..s.n_slots()).map(|_| values.next() * 0.5).collect();
            let y0: Vec<f64> = (0..nb).map(|_| values.next()).collect();
            for (batch, sms) in SHAPES {
                let (from, size) = cluster_shape(batch, sms, &cta_levels, &levels, 0);
                let plan = cluster_solve_plan(&lrecs, &erecs, &cta_levels, &levels, from, size);
                let n_phases = 2 * (levels.len() - from);
                let (y_from, expect) = reference_solve(&s, &linv, &x, &y0, from);
                let tail_blocks: Vec<usize> =
                    (from..levels.len()).flat_map(|l| s.levels()[l].eliminations.iter().map(|e| e.block)).collect();
                let programs: Vec<Program> = (0..size).map(|r| program(&plan, r, n_phases)).collect();
                for slow in (0..size).map(Some).chain([None]) {
                    let mut vecs = vec![vec![f64::NAN; plan.vec_slots]; size];
                    let mut next = vec![0usize; size];
                    let mut arrived = vec![vec![0i32; n_phases]; size];
                    let mut out = vec![f64::NAN; nb];
                    loop {
                        let ready = |r: usize, next: &[usize], arrived: &[Vec<i32>]| {
                            next[r] < n_phases && arrived[r][next[r]] == programs[r].received[next[r]]
                        };
                        let pick = (0..size)
                            .find(|&r| Some(r) != slow && ready(r, &next, &arrived))
                            .or(slow.filter(|&r| ready(r, &next, &arrived)));
                        let Some(r) = pick else { break };
                        let (p, ph) = (&programs[r], next[r]);
                        if ph == 0 {
                            for iv in p.init.chunks(2) {
                                vecs[r][iv[0] as usize] = y_from[iv[1] as usize];
                            }
                        }
                        // (value, send list) per write; sends land once the phase has read all.
                        let mut pushes: Vec<(f64, Vec<i32>)> = Vec::new();
                        let send_list = |u: &[i32], at: usize| p.sends[u[at] as usize..][..u[at + 1] as usize].to_vec();
                        for k in p.unit_start[ph]..p.unit_start[ph + 1] {
                            let u = unit(p, k);
                            let v = &vecs[r];
                            if ph < n_phases / 2 {
                                let (a, mut upd) = (u[0], 0.0);
                                for g in 0..u[1] as usize {
                                    let e = &u[5 + 4 * g..][..4];
                                    let block = p.list[2 * e[2] as usize] as usize;
                                    let z = linv[block] * v[e[0] as usize];
                                    if e[3] >= 0 {
                                        pushes.push((z, vec![e[3]]));
                                    }
                                    if a >= 0 {
                                        upd += x[e[1] as usize] * z;
                                    }
                                }
                                if a >= 0 {
                                    pushes.push((v[u[2] as usize] - upd, send_list(u, 3)));
                                }
                            } else {
                                let mut val = v[u[3] as usize];
                                for cc in 0..u[1] as usize {
                                    val -= x[u[6 + 2 * cc] as usize] * v[u[7 + 2 * cc] as usize];
                                }
                                let xe = linv[u[0] as usize] * val;
                                out[u[0] as usize] = xe;
                                pushes.push((xe, send_list(u, 4)));
                            }
                        }
                        for (value, sends) in pushes {
                            for code in sends {
                                let (to, at, slot) =
                                    ((code & 31) as usize, (code >> 5 & 63) as usize, (code >> 11) as usize);
                                assert!(at > ph || to != r || at >= next[to], "a push lands before its phase");
                                vecs[to][slot] = value;
                                arrived[to][at] += 1;
                            }
                        }
                        next[r] += 1;
                    }
                    let tag = format!("N={nb} batch={batch} sms={sms} slow rank {slow:?}");
                    assert!(next.iter().all(|&k| k == n_phases), "{tag}: a rank waits for ever");
                    for (r, p) in programs.iter().enumerate() {
                        assert_eq!(arrived[r], p.received, "{tag}: rank {r} receives what its barriers expect");
                    }
                    for &b in &tail_blocks {
                        let tol = 1e-12 * expect[b].abs().max(1.0);
                        assert!(
                            (out[b] - expect[b]).abs() <= tol,
                            "{tag}: x_{b} = {} instead of {}",
                            out[b],
                            expect[b]
                        );
                    }
                }
            }
        }
    }
}
