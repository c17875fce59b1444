//! The whole solve of a small system in one CTA per item (kernels/small.cu
//! `btchol_solve_whole_small`): every level of the nested-dissection solve, forward then
//! backward, with CTA barriers between levels, the item's factor and right-hand sides copied into
//! shared memory once. For small blocks and short horizons a level's work is a few dependent
//! products of n×n blocks, so the per-level launches (a kernel boundary and global round trips
//! per level: ~2.6 µs a level at n = 8 on the H200) cost far more than the work. Which plans take
//! it (those whose item fits a CTA's shared memory), its program (the schedule's records
//! re-packed per level) and its launch.
use std::sync::Arc;

use cudarc::driver::CudaFunction;

use super::engine::{LevelRecords, LREC, REC};
use super::jit::{segment_lanes, KernelSpec, WHOLE_SOLVE_THREADS};
use super::runtime::{Device, DeviceBuffer, KernelLaunch};
use crate::error::Result;
use crate::model::Dims;
use crate::scalar::DType;

/// Ints per level at the head of the program: first level-CTA record, count, first elimination
/// record, count (offsets in ints into the program).
const HEADER: usize = 4;

/// The program of the whole-item kernels of a plan ([`whole_solve_program`]), uploaded once
/// however many of them take it; each holds a handle.
#[derive(Clone)]
pub(super) struct WholeProgram {
    pub(super) buf: Arc<DeviceBuffer<i32>>,
    pub(super) len: usize,
    pub(super) n_levels: usize,
}

/// A plan's whole-item program on the host, put on the device by the first kernel that takes it.
pub(super) struct ProgramSource<'a> {
    dev: &'a Device,
    host: Vec<i32>,
    n_levels: usize,
    uploaded: Option<WholeProgram>,
}

impl<'a> ProgramSource<'a> {
    pub(super) fn new(
        dev: &'a Device,
        cta_recs: &[i32],
        cta_levels: &[(usize, usize)],
        recs: &[i32],
        levels: &[LevelRecords],
    ) -> Self {
        let host = whole_solve_program(cta_recs, cta_levels, recs, levels);
        ProgramSource { dev, host, n_levels: levels.len(), uploaded: None }
    }

    /// Its length in ints (the kernels copy it to shared memory).
    pub(super) fn len(&self) -> usize {
        self.host.len()
    }

    /// The program on the device (uploaded on the first call).
    pub(super) fn device(&mut self) -> Result<WholeProgram> {
        if let Some(p) = &self.uploaded {
            return Ok(p.clone());
        }
        let buf = DeviceBuffer::from_host(self.dev, &self.host, "uploading the whole-item program")?;
        let p = WholeProgram { buf: Arc::new(buf), len: self.host.len(), n_levels: self.n_levels };
        self.uploaded = Some(p.clone());
        Ok(p)
    }
}

/// The whole-solve kernel of a plan.
pub(super) struct WholeSolve {
    func: CudaFunction,
    pub(super) prog: WholeProgram,
    /// Most right-hand sides one launch takes (y and z of each fit in shared memory).
    max_m: usize,
    /// Block size, blocks and couplings per item.
    sizes: (usize, usize, usize),
    spec: KernelSpec,
}

impl WholeSolve {
    /// The kernel for a plan whose solves take it: its schedule has no chunk levels
    /// (`first == 0`), its program and one right-hand side fit a CTA's shared memory, and
    /// [`default_rule`] says so (`BTCHOL_WHOLE_SOLVE=0`: never, `1`: wherever it fits, for A/B
    /// runs and tests); `None` otherwise.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        dev: &Device,
        spec: &KernelSpec,
        func: CudaFunction,
        dims: Dims,
        cta_levels: &[(usize, usize)],
        recs: &[i32],
        levels: &[LevelRecords],
        first: usize,
        program: &mut ProgramSource,
    ) -> Result<Option<WholeSolve>> {
        let widest = cta_levels.iter().zip(levels).map(|(c, l)| c.1.max(l.n_elim)).max().unwrap_or(0);
        let take = super::engine::env_switch("BTCHOL_WHOLE_SOLVE")
            .unwrap_or_else(|| default_rule(spec, levels.len(), widest, dims.batch, dev.sm_count));
        if first > 0 || !take {
            return Ok(None);
        }
        let sizes = (dims.block_size, dims.n_blocks, slot_count(recs, levels));
        let smem = |m: usize| spec.whole_solve_smem_bytes(program.len(), sizes, m);
        let limit = super::engine::dynamic_smem_limit(&func, dev);
        if smem(1) > limit {
            return Ok(None);
        }
        let max_m = (1..=64).take_while(|&m| smem(m) <= limit).last().unwrap_or(1);
        super::engine::opt_in_shared_memory(&func, smem(max_m))?;
        Ok(Some(WholeSolve { func, prog: program.device()?, max_m, sizes, spec: *spec }))
    }

    /// Whether a solve of `m` right-hand sides takes it (their y and z fit).
    pub(super) fn takes(&self, m: usize) -> bool {
        m <= self.max_m
    }

    /// Enqueues the solve of `m` packed right-hand sides of `batch` items with `args`
    /// (kernels/small.cu's parameter order; the engine builds them, `prog` and its sizes from here).
    pub(super) unsafe fn enqueue(
        &self,
        stream: cudarc::driver::sys::CUstream,
        early: bool,
        batch: usize,
        m: usize,
        args: &mut [*mut std::ffi::c_void],
    ) -> Result<()> {
        let smem = self.spec.whole_solve_smem_bytes(self.prog.len, self.sizes, m);
        let launch =
            KernelLaunch { grid: batch, threads: WHOLE_SOLVE_THREADS, smem, cluster: 1, early, carveout: None };
        launch.launch(&self.func, stream, args)
    }
}

/// Where the kernel is the default, from the A/Bs on the H200 of 2026-12-01 (single systems and
/// batches of 8, device right-hand sides, one binary, `BTCHOL_WHOLE_SOLVE=0` against `1`;
/// bench/results/ab/README.md), with the factor staged in shared memory: blocks padded to 8
/// (n ≤ 8), where the solve took 0.66–0.86 of the level launches' time at N = 8 … 100 (f64 n = 8,
/// N = 64: 40.5 → 30.2 µs; f32 n = 8: 38.2 → 26.3), and f32 blocks padded to 16 (n 9..16) with
/// levels of at most 16 eliminations (N ≤ 32: 0.86–0.94; N = 64, 32 of them: 1.09–1.12, staging
/// the item's whole factor in one CTA costs more than the levels save); not f64 blocks of 16
/// (0.91–1.13) nor of 32 (1.4–6.8: the cluster solve is far faster there); from 4 levels (N = 2:
/// 1.0, the merged tail already takes every level); levels that one round of its units covers;
/// one CTA per item in one wave (batches up to the SM count).
fn default_rule(spec: &KernelSpec, n_levels: usize, widest_level: usize, batch: usize, sm_count: usize) -> bool {
    let segments = WHOLE_SOLVE_THREADS / segment_lanes(spec.ld);
    let blocks_and_levels = match (spec.ld, spec.dtype) {
        (ld, _) if ld <= 8 => widest_level <= segments,
        (16, DType::F32) => widest_level <= 16,
        _ => false,
    };
    blocks_and_levels && n_levels >= 4 && batch <= sm_count
}

/// Couplings per item: every slot is a coupling of exactly one elimination record.
fn slot_count(recs: &[i32], levels: &[LevelRecords]) -> usize {
    let elims = levels.iter().flat_map(|l| recs[l.elim_offset * REC..(l.elim_offset + l.n_elim) * REC].chunks(REC));
    elims.map(|e| e[1].max(e[3]) + 1).max().unwrap_or(0).max(0) as usize
}

/// The program: per level [first level-CTA record, count, first elimination record, count], then
/// every level's level-CTA records (LREC ints each), then every level's elimination records (REC
/// ints each), as the per-level kernels read them (engine.rs `level_cta_records`,
/// `schedule_records`).
pub(super) fn whole_solve_program(
    cta_recs: &[i32],
    cta_levels: &[(usize, usize)],
    recs: &[i32],
    levels: &[LevelRecords],
) -> Vec<i32> {
    let mut prog = vec![0i32; HEADER * levels.len()];
    for (l, &(first, count)) in cta_levels.iter().enumerate() {
        prog[HEADER * l] = prog.len() as i32;
        prog[HEADER * l + 1] = count as i32;
        prog.extend_from_slice(&cta_recs[first * LREC..(first + count) * LREC]);
    }
    for (l, lr) in levels.iter().enumerate() {
        prog[HEADER * l + 2] = prog.len() as i32;
        prog[HEADER * l + 3] = lr.n_elim as i32;
        prog.extend_from_slice(&recs[lr.elim_offset * REC..(lr.elim_offset + lr.n_elim) * REC]);
    }
    prog
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::engine::{level_cta_records, schedule_records};
    use crate::schedule::Schedule;

    /// Every level's records appear once, in order, where the header says; every block is
    /// eliminated by exactly one elimination record and owned by exactly one level-CTA record.
    #[test]
    fn the_program_holds_every_levels_records_where_its_header_says() {
        for nb in [1, 2, 3, 5, 17, 64, 100, 127] {
            let s = Schedule::new(nb);
            let (cta_recs, cta_levels) = level_cta_records(&s);
            let (recs, levels) = schedule_records(&s);
            let prog = whole_solve_program(&cta_recs, &cta_levels, &recs, &levels);
            let (mut eliminated, mut owned) = (vec![0; nb], vec![0; nb]);
            for (l, (&(first, count), lr)) in cta_levels.iter().zip(&levels).enumerate() {
                let h = &prog[HEADER * l..][..HEADER];
                assert_eq!(h[1] as usize, count);
                assert_eq!(h[3] as usize, lr.n_elim);
                let lr_prog = &prog[h[0] as usize..][..count * LREC];
                assert_eq!(lr_prog, &cta_recs[first * LREC..(first + count) * LREC], "N={nb} level {l}");
                for r in lr_prog.chunks(LREC) {
                    for g in 0..r[1] as usize {
                        owned[r[2 + 8 * g] as usize] += r[2 + 8 * g + 6];
                    }
                }
                for e in prog[h[2] as usize..][..lr.n_elim * REC].chunks(REC) {
                    eliminated[e[0] as usize] += 1;
                }
            }
            assert!(eliminated.iter().all(|&c| c == 1), "N={nb}: {eliminated:?}");
            assert!(owned.iter().all(|&c| c == 1), "N={nb}: {owned:?}");
        }
    }

    #[test]
    fn the_default_rule_takes_small_blocks_narrow_levels_and_one_wave() {
        let spec = |dtype, n| KernelSpec::for_block_size(dtype, n, 227 * 1024);
        let (f64_8, f32_16, f64_16, f32_8) =
            (spec(DType::F64, 8), spec(DType::F32, 16), spec(DType::F64, 16), spec(DType::F32, 8));
        assert_eq!((f64_8.ld, f32_16.ld, f64_16.ld, f32_8.ld), (8, 16, 16, 8));
        // N = 64: 7 levels, the widest of 32 records.
        assert!(default_rule(&f64_8, 7, 32, 1, 132) && default_rule(&f32_8, 7, 32, 1, 132));
        assert!(default_rule(&f32_16, 6, 16, 1, 132) && !default_rule(&f32_16, 7, 32, 1, 132), "f32 16: N ≤ 32");
        assert!(!default_rule(&f64_16, 7, 32, 1, 132), "f64 blocks of 16: not faster");
        assert!(!default_rule(&spec(DType::F64, 32), 4, 4, 1, 132), "blocks of 32: the cluster solve");
        assert!(!default_rule(&f64_8, 2, 1, 1, 132), "N = 2: the merged tail");
        assert!(default_rule(&f64_8, 8, 64, 1, 132) && !default_rule(&f64_8, 9, 128, 1, 132), "one round of 64 units");
        assert!(default_rule(&f64_8, 7, 32, 132, 132) && !default_rule(&f64_8, 7, 32, 133, 132), "one wave");
    }
}
