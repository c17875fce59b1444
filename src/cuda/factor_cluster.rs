//! The deep levels of the small-block factor on one thread-block cluster per item (sm_90, f64
//! blocks padded to 16 or 32; kernels/small.cu `btchol_factor_cluster_small`): which levels it
//! takes, and the per-(level, rank) program the host compiles from the level-CTA records,
//! including where each block a level produces goes next.
//!
//! Rank j runs the j-th record of every level. Each block the kernel reads at a level was either
//! written before the cluster (global memory) or produced by exactly one CTA at the level before
//! (the updated D_a by its update's CTA, a fill by its owner), which pushes it into the readers'
//! shared memory. Nested dissection reads everything one level after it is produced (every
//! survivor is updated at every level, and level l + 1's slots hold level l's fills), so two
//! receive buffers, alternating by level, suffice; the compiler refuses a schedule where that does
//! not hold, and the plan then keeps its per-level launches.

use std::collections::HashMap;

use cudarc::driver::{result, sys, CudaFunction};

use super::engine::LREC;
use super::jit::{KernelSpec, SMALL_THREADS};
use super::runtime::{cuda_err, Device, DeviceBuffer, KernelLaunch};
use crate::error::Result;
use crate::scalar::DType;

/// Ints per (level, rank) of the program before the record (kernels/small.cu `FC_UNIT`).
const FC_UNIT: usize = 9;
/// Ints per (level, rank): the unit, then a copy of its level-CTA record (−1s where idle), so
/// that the kernel loads its program in one round.
const FC_STRIDE: usize = FC_UNIT + LREC;
/// Inputs of a level CTA, hence receive slots per buffer (kernels/small.cu `FC_INPUTS`): D_a, the
/// two D_e, the four couplings.
const FC_INPUTS: usize = 7;
/// Levels the kernel's barriers cover (kernels/small.cu `FC_MAX_LEVELS`).
const FC_MAX_LEVELS: usize = 32;
/// Largest cluster the kernel supports (non-portable on the H100, where 16 is the hardware limit).
const MAX_SIZE: usize = 16;
/// Largest cluster used by default (`BTCHOL_FACTOR_CLUSTER_MAX` sets it, up to [`MAX_SIZE`]):
/// a cluster of 16 CTAs of ~220 KB each needs 16 free SMs of one GPC, which the previous level's
/// kernel rarely leaves, so it could not start early (programmatic dependent launch) and its
/// set-up (~6 µs) was exposed; with 8 it can. H100, f64 n = 32, N = 64, factor µs (median of 3
/// runs): per-level launches 78.5, cluster of 16 76.9, of 8 71.1 (bench/results/ab/README.md).
const DEFAULT_MAX_SIZE: usize = 8;
/// Where a level record's fields are (kernels/small.cu `LREC`, `E_*`).
const E_STRIDE: usize = 8;
const E_BLOCK: usize = 0;
const E_NCPL: usize = 1;
const E_SLOT: usize = 2;
const E_FILL: usize = 4;
const E_OWNED: usize = 6;
/// Offsets in a unit: the sends of the updated D_a, then two per elimination's fill.
const SENDS_DA: usize = 3;
const SENDS_FILL: usize = 5;

/// The factor cluster of a plan.
pub(super) struct FactorCluster {
    pub(super) func: CudaFunction,
    /// First level it takes (the levels before keep their launches).
    pub(super) from: usize,
    pub(super) n_levels: usize,
    pub(super) prog: DeviceBuffer<i32>,
    /// CTAs per cluster and dynamic shared memory per CTA.
    size: usize,
    smem: usize,
}

impl FactorCluster {
    /// The factor cluster, where the device has clusters, the blocks are f64 padded to 16 or 32,
    /// `BTCHOL_FACTOR_CLUSTER` is not `0`, and one cluster per item fits the device at once:
    /// every level from the first whose records fit one cluster, if that is two levels or more,
    /// and none before `first` (a partitioned schedule's chunk levels, which kernels/chunks.cu or
    /// per-level launches run).
    pub(super) fn new(
        dev: &Device,
        spec: &KernelSpec,
        func: CudaFunction,
        batch: usize,
        lrecs: &[i32],
        cta_levels: &[(usize, usize)],
        first: usize,
    ) -> Result<Option<FactorCluster>> {
        let enabled = std::env::var("BTCHOL_FACTOR_CLUSTER").as_deref() != Ok("0");
        if dev.arch.0 < 9 || spec.dtype != DType::F64 || !matches!(spec.ld, 16 | 32) || !enabled {
            return Ok(None);
        }
        let max_size = super::engine::env_count("BTCHOL_FACTOR_CLUSTER_MAX", DEFAULT_MAX_SIZE);
        let Some((from, size)) = cluster_shape(cta_levels, max_size.clamp(1, MAX_SIZE), first) else {
            return Ok(None);
        };
        if batch * size > dev.sm_count {
            return Ok(None);
        }
        let Some(prog) = factor_cluster_program(lrecs, cta_levels, from, size, spec.ld, spec.dtype.size_bytes()) else {
            return Ok(None);
        };
        let smem = shared_bytes(spec.ld, spec.dtype.size_bytes());
        if smem > super::engine::dynamic_smem_limit(&func, dev) {
            return Ok(None);
        }
        if size > 8 {
            let nonportable = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED;
            unsafe { result::function::set_function_attribute(func.cu_function(), nonportable, 1) }
                .map_err(|e| cuda_err("allowing large clusters", e))?;
        }
        super::engine::opt_in_shared_memory(&func, smem)?;
        let launch = KernelLaunch {
            grid: batch * size,
            threads: SMALL_THREADS,
            smem,
            cluster: size,
            early: false,
            carveout: None,
        };
        if launch.max_active(&func)? == 0 {
            return Ok(None);
        }
        let buf = DeviceBuffer::from_host(dev, &prog, "uploading the factor cluster program")?;
        Ok(Some(FactorCluster { func, from, n_levels: cta_levels.len() - from, prog: buf, size, smem }))
    }

    /// Enqueues the kernel for `batch` items with `args` (kernels/small.cu's parameter order);
    /// `early`: programmatic dependent launch.
    pub(super) unsafe fn enqueue(
        &self,
        stream: sys::CUstream,
        batch: usize,
        early: bool,
        args: &mut [*mut std::ffi::c_void],
    ) -> Result<()> {
        let launch = KernelLaunch {
            grid: batch * self.size,
            threads: SMALL_THREADS,
            smem: self.smem,
            cluster: self.size,
            early,
            carveout: None,
        };
        launch.launch(&self.func, stream, args)
    }
}

/// Dynamic shared memory of the kernel: sX (4 blocks) and sL (2) per level parity, sDa (1), two
/// receive buffers.
fn shared_bytes(ld: usize, elem: usize) -> usize {
    (13 + 2 * FC_INPUTS) * ld * ld * elem
}

/// (first level, CTAs per cluster): every level from the first after which no level has more
/// records than a cluster has CTAs, `first` at the earliest; `None` where that leaves fewer than
/// two levels.
fn cluster_shape(cta_levels: &[(usize, usize)], max_size: usize, first: usize) -> Option<(usize, usize)> {
    let mut from = cta_levels.len();
    while from > first && cta_levels[from - 1].1 <= max_size {
        from -= 1;
    }
    let n_levels = cta_levels.len() - from;
    if !(2..=FC_MAX_LEVELS).contains(&n_levels) {
        return None;
    }
    let size = cta_levels[from..].iter().map(|&(_, count)| count).max()?;
    Some((from, size))
}

/// A block of the factor as the program tracks it: a diagonal block or a coupling slot.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Block {
    Diag(i32),
    Slot(i32),
}

/// The inputs of level record `r`: (input index k of kernels/small.cu `ClusterInputs`, block).
fn record_inputs(r: &[i32]) -> Vec<(usize, Block)> {
    let mut inputs = Vec::new();
    if r[0] >= 0 {
        inputs.push((0, Block::Diag(r[0])));
    }
    for g in 0..r[1] as usize {
        let e = &r[2 + E_STRIDE * g..];
        inputs.push((1 + g, Block::Diag(e[E_BLOCK])));
        for c in 0..e[E_NCPL] as usize {
            inputs.push((3 + 2 * g + c, Block::Slot(e[E_SLOT + c])));
        }
    }
    inputs
}

/// The program (FC_UNIT ints per level and rank, kernels/small.cu), or `None` where a block is
/// read other than one level after it is produced or by more than two CTAs.
fn factor_cluster_program(
    lrecs: &[i32],
    cta_levels: &[(usize, usize)],
    from: usize,
    size: usize,
    ld: usize,
    elem: usize,
) -> Option<Vec<i32>> {
    let n_levels = cta_levels.len() - from;
    let mut prog = vec![-1i32; n_levels * size * FC_STRIDE];
    // Who produced each block inside the cluster: (level, unit offset of its sends, bytes).
    let mut producer: HashMap<Block, (usize, usize, i32)> = HashMap::new();
    let (lower_bytes, full_bytes) = ((ld * (ld + 1) / 2 * elem) as i32, (ld * ld * elem) as i32);
    for lam in 0..n_levels {
        let (first, count) = cta_levels[from + lam];
        if count > size {
            return None;
        }
        let mut produced = Vec::new();
        for j in 0..size {
            let u = (lam * size + j) * FC_STRIDE;
            prog[u + 1] = 0;
            prog[u + 2] = 0;
            if j >= count {
                continue;
            }
            let rec = first + j;
            let r = &lrecs[rec * LREC..(rec + 1) * LREC];
            prog[u] = rec as i32;
            prog[u + FC_UNIT..u + FC_STRIDE].copy_from_slice(r);
            for (k, block) in record_inputs(r) {
                let Some(&(level, sends, bytes)) = producer.get(&block) else { continue };
                if level + 1 != lam {
                    return None; // (read two levels after it was pushed: the buffer is reused)
                }
                let free = (sends..sends + 2).find(|&i| prog[i] < 0)?;
                prog[free] = (j | k << 5) as i32;
                prog[u + 1] |= 1 << k;
                prog[u + 2] += bytes;
            }
            if r[0] >= 0 {
                produced.push((Block::Diag(r[0]), (lam, u + SENDS_DA, lower_bytes)));
            }
            for g in 0..r[1] as usize {
                let e = &r[2 + E_STRIDE * g..];
                if e[E_FILL] >= 0 && e[E_OWNED] != 0 {
                    produced.push((Block::Slot(e[E_FILL]), (lam, u + SENDS_FILL + 2 * g, full_bytes)));
                }
            }
        }
        producer.extend(produced);
    }
    Some(prog)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::engine::level_cta_records;
    use crate::schedule::Schedule;

    /// Replays a program as the kernel runs it: every block a record reads at a cluster level
    /// other than the first must have arrived (pushed by the CTA that wrote it last, one level
    /// before, into this CTA's slot for that input), every push must land on an input its reader
    /// has, and each CTA's expected bytes must be what is pushed to it.
    #[test]
    fn every_input_of_the_factor_cluster_comes_from_its_last_writer() {
        let nd = (1..=80).chain([127, 128, 129, 255, 256, 1000, 1024, 4096, 16384]).map(|nb| (nb, 0));
        let partitioned = [1, 2, 3, 7].into_iter().flat_map(|c| (1..=40).chain([131, 1000]).map(move |nb| (nb, c)));
        for (nb, chunk) in nd.chain(partitioned) {
            let s = if chunk == 0 { Schedule::new(nb) } else { Schedule::partitioned(nb, chunk) };
            let (lrecs, cta_levels) = level_cta_records(&s);
            // (The plan keeps the cluster off a partitioned schedule's chunk levels.)
            let Some((from, size)) = cluster_shape(&cta_levels, MAX_SIZE, s.chunk_levels()) else {
                let deep = cta_levels.len() < 2 || cta_levels[cta_levels.len() - 2].1 > MAX_SIZE;
                assert!(deep || s.chunk_levels() + 2 > cta_levels.len(), "N = {nb}");
                continue;
            };
            assert!(size <= MAX_SIZE);
            let (ld, elem) = (32, 8);
            // (A partitioned schedule's chunk levels may have no program: the plan then launches
            // them level by level.)
            let Some(prog) = factor_cluster_program(&lrecs, &cta_levels, from, size, ld, elem) else {
                assert!(chunk > 0, "N = {nb}: no program");
                continue;
            };
            // The last writer of every block before the cluster and during it: (level, rank).
            let mut writer: HashMap<Block, (usize, usize)> = HashMap::new();
            let n_levels = cta_levels.len() - from;
            for lam in 0..n_levels {
                // Pushes that arrive at this level: (rank, input) → bytes.
                let mut arriving: HashMap<(usize, usize), i32> = HashMap::new();
                if lam > 0 {
                    for j in 0..size {
                        let u = ((lam - 1) * size + j) * FC_STRIDE;
                        for (off, bytes) in [(SENDS_DA, ld * (ld + 1) / 2 * elem), (SENDS_FILL, ld * ld * elem)] {
                            for &s in &prog[u + off..u + off + if off == SENDS_DA { 2 } else { 4 }] {
                                if s >= 0 {
                                    let key = ((s & 31) as usize, (s >> 5) as usize);
                                    assert!(arriving.insert(key, bytes as i32).is_none(), "N = {nb}: two suppliers");
                                }
                            }
                        }
                    }
                }
                let (first, count) = cta_levels[from + lam];
                let mut written = Vec::new();
                for j in 0..size {
                    let u = (lam * size + j) * FC_STRIDE;
                    let mut expected = 0;
                    if j < count {
                        assert_eq!(prog[u] as usize, first + j);
                        let r = &lrecs[(first + j) * LREC..(first + j + 1) * LREC];
                        assert_eq!(&prog[u + FC_UNIT..u + FC_STRIDE], r);
                        for (k, block) in record_inputs(r) {
                            let pushed = arriving.remove(&(j, k));
                            match writer.get(&block) {
                                Some(&(level, _)) if level + 1 == lam => {
                                    assert!(prog[u + 1] >> k & 1 == 1, "N = {nb}: input {k} should arrive");
                                    expected += pushed.expect("pushed");
                                }
                                Some(_) => panic!("N = {nb}: {block:?} read two levels after its write"),
                                None => {
                                    assert!(pushed.is_none() && prog[u + 1] >> k & 1 == 0, "N = {nb}: from global");
                                }
                            }
                        }
                        if r[0] >= 0 {
                            written.push((Block::Diag(r[0]), (lam, j)));
                        }
                        for g in 0..r[1] as usize {
                            let e = &r[2 + E_STRIDE * g..];
                            if e[E_FILL] >= 0 && e[E_OWNED] != 0 {
                                written.push((Block::Slot(e[E_FILL]), (lam, j)));
                            }
                        }
                    } else {
                        assert_eq!(prog[u], -1);
                    }
                    assert_eq!(prog[u + 2], expected, "N = {nb}, level {lam}, rank {j}: bytes");
                }
                assert!(arriving.is_empty(), "N = {nb}: a push nobody reads: {arriving:?}");
                for (block, w) in written {
                    assert!(writer.insert(block, w).map_or(true, |(level, _)| level < lam), "N = {nb}: two writers");
                }
            }
        }
    }

    /// The levels left to the cluster are the deep ones (N = 64: all but the first).
    #[test]
    fn factor_cluster_takes_the_levels_that_fit_one_cluster() {
        let (_, cta_levels) = level_cta_records(&Schedule::new(64));
        assert_eq!(cluster_shape(&cta_levels, MAX_SIZE, 0), Some((1, 16)));
        let (_, cta_levels) = level_cta_records(&Schedule::new(2));
        assert_eq!(cluster_shape(&cta_levels, MAX_SIZE, 0), Some((0, 1)));
        let (_, cta_levels) = level_cta_records(&Schedule::new(1));
        assert_eq!(cluster_shape(&cta_levels, MAX_SIZE, 0), None);
    }
}
