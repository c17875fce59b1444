//! Launch orchestration: the schedule's levels become kernel launches on one stream.
//!
//! Device storage mirrors the CPU backend: per item N diagonal blocks and the schedule's coupling
//! slots, column-major with the padded leading dimension of the kernel variant. Uploads (from host
//! or device) go through the same conversion kernel, which also rejects NaN/Inf; factor failures
//! are recorded per item on the device and read back once per factorization.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;

use super::chunks::{chunk_table, ChunkPath};
use super::cluster::{ClusterLaunch, ClusterSolve};
use super::factor_cluster::FactorCluster;
use super::host_stager::{HostStager, Segment};
use super::jit::{
    self, KernelSpec, CHUNK_FACTOR_THREADS, CHUNK_THREADS, GEMM_TILE_THREADS, INV_THREADS, MAX_CUDA_BLOCK_SIZE,
    SEQ_INV_THREADS, SEQ_MAX_BLOCK_SIZE, SEQ_PAIR_THREADS, SEQ_THREADS, SMALL_THREADS, TAIL_THREADS,
};
use super::runtime::{cuda_err, Device, DeviceBuffer, Graph, KernelLaunch, PinnedBuffer, Stream};
use super::whole_factor::WholeFactor;
use super::whole_solve::{ProgramSource, WholeSolve};
use crate::error::{Error, Operand, Result};
use crate::host_parallel::{column_runs, shares, Disjoint, Threads};
use crate::model::{Dims, Layout, RhsShape};
use crate::plan::ItemStatus;
use crate::scalar::{DType, Scalar};
use crate::schedule::Schedule;

const NO_FAILURE: u64 = u64::MAX;

/// Schedule record width (kernels/common.cuh `REC`).
pub(super) const REC: usize = 8;

struct Kernels {
    factor_eliminate: CudaFunction,
    factor_update: CudaFunction,
    /// The fills and updates of split levels (`CudaEngine::split_level`), in 32 × 32 tiles, and
    /// where the variant has them (`KernelSpec::wide_gemm`) in 64 × 64 tiles for wide levels.
    factor_gemm: CudaFunction,
    factor_gemm_wide: Option<CudaFunction>,
    forward_eliminate: CudaFunction,
    forward_update: CudaFunction,
    backward_eliminate: CudaFunction,
    /// Block conversion and right-hand-side packing per caller element format.
    convert_blocks: [CudaFunction; 3],
    pack_rhs: [CudaFunction; 3],
    unpack_rhs: CudaFunction,
    mask_begin: CudaFunction,
    mask_end: CudaFunction,
    logdet: CudaFunction,
}

/// The element format of caller data handed to the device: the plan's own precision, or raw
/// 16-bit floats widened on the device (kernels/layout.cu `widen`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    Native = 0,
    F16 = 1,
    Bf16 = 2,
}

/// The GPU algorithm of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuAlgorithm {
    /// The nested-dissection schedule, one launch (or two) per level.
    NestedDissection,
    /// Paper Algorithm 1, one warp per item (kernels/sequential.cu; block sizes ≤ 32).
    Sequential,
}

/// Where each level's records start in the record table.
#[derive(Clone, Copy, Debug)]
pub(super) struct LevelRecords {
    pub(super) elim_offset: usize,
    pub(super) n_elim: usize,
    update_offset: usize,
    n_update: usize,
}

/// The schedule as the kernels read it: 8 int32 per elimination and per update.
pub(super) fn schedule_records(s: &Schedule) -> (Vec<i32>, Vec<LevelRecords>) {
    let mut recs = Vec::new();
    let mut levels = Vec::new();
    for level in s.levels() {
        let elim_offset = recs.len() / REC;
        for e in &level.eliminations {
            let c =
                |k: usize, f: fn(&crate::schedule::Coupling) -> usize| e.couplings.get(k).map_or(-1, |c| f(c) as i32);
            let (fill_slot, fill_rows) = e.fill.map_or((-1, 0), |f| (f.slot as i32, f.rows as i32));
            recs.extend_from_slice(&[
                e.block as i32,
                c(0, |c| c.slot),
                c(0, |c| c.survivor),
                c(1, |c| c.slot),
                c(1, |c| c.survivor),
                fill_slot,
                fill_rows,
                e.couplings.len() as i32,
            ]);
        }
        let update_offset = recs.len() / REC;
        for u in &level.updates {
            let src = |k: usize, f: fn(&(usize, usize)) -> usize| u.sources.get(k).map_or(-1, |p| f(p) as i32);
            recs.extend_from_slice(&[
                u.block as i32,
                src(0, |p| p.0),
                src(0, |p| p.1),
                src(1, |p| p.0),
                src(1, |p| p.1),
                -1,
                0,
                u.sources.len() as i32,
            ]);
        }
        levels.push(LevelRecords {
            elim_offset,
            n_elim: level.eliminations.len(),
            update_offset,
            n_update: level.updates.len(),
        });
    }
    (recs, levels)
}

/// Level-CTA record width (kernels/small.cu `LREC`).
pub(super) const LREC: usize = 18;

/// The small-block kernels' records (kernels/small.cu): per level, one CTA per Schur update, which
/// eliminates the update's one or two source blocks itself, plus one CTA per elimination that no
/// update touches (a level's only block). Every elimination is owned, i.e. written, by exactly one
/// CTA: the one of its last survivor (or its own). Returns the records and, per level, the
/// (first record, record count).
pub(super) fn level_cta_records(s: &Schedule) -> (Vec<i32>, Vec<(usize, usize)>) {
    let mut recs = Vec::new();
    let mut levels = Vec::new();
    for level in s.levels() {
        let first = recs.len() / LREC;
        let elim = |block: usize| {
            let k = level.eliminations.binary_search_by_key(&block, |e| e.block).expect("update source is eliminated");
            &level.eliminations[k]
        };
        let push_elim = |recs: &mut Vec<i32>, e: &crate::schedule::Elimination, owned: bool, upd: i32| {
            let slot = |k: usize| e.couplings.get(k).map_or(-1, |c| c.slot as i32);
            let (fill_slot, fill_rows) = e.fill.map_or((-1, 0), |f| (f.slot as i32, f.rows as i32));
            recs.extend_from_slice(&[
                e.block as i32,
                e.couplings.len() as i32,
                slot(0),
                slot(1),
                fill_slot,
                fill_rows,
                owned as i32,
                upd,
            ]);
        };
        for u in &level.updates {
            recs.extend_from_slice(&[u.block as i32, u.sources.len() as i32]);
            for &(slot, block) in &u.sources {
                let e = elim(block);
                let owned = e.couplings.last().map(|c| c.survivor) == Some(u.block);
                let upd = e.couplings.iter().position(|c| c.slot == slot).expect("update slot is a coupling");
                push_elim(&mut recs, e, owned, upd as i32);
            }
            recs.resize(recs.len().next_multiple_of(LREC), -1);
        }
        for e in level.eliminations.iter().filter(|e| e.couplings.is_empty()) {
            recs.extend_from_slice(&[-1, 1]);
            push_elim(&mut recs, e, true, -1);
            recs.resize(recs.len().next_multiple_of(LREC), -1);
        }
        levels.push((first, recs.len() / LREC - first));
    }
    (recs, levels)
}

/// Kernel arguments: pointers to each value, as cuLaunchKernel wants them.
macro_rules! args {
    ($($a:expr),* $(,)?) => { [$(&$a as *const _ as *mut c_void),*] };
}

/// The small-block path (n padded to ≤ 32): one launch per level. Its results go to buffers of
/// their own (factors, solved couplings, forward solution) so that a level never overwrites what
/// another CTA of the same level still reads (see kernels/small.cu).
struct SmallPath<T> {
    /// Narrow levels (fewer CTAs than `wide_min_ctas`): register panels, latency first.
    factor_level: CudaFunction,
    /// Wide levels: 128-thread groups per elimination, throughput first.
    factor_level_wide: CudaFunction,
    /// CTAs from which a level counts as wide.
    wide_min_ctas: usize,
    /// L⁻¹ of every diagonal block (for the solve), after the last level.
    invert: CudaFunction,
    forward_level: CudaFunction,
    backward_level: CudaFunction,
    /// The deep levels' forward and backward substitution in one launch (see `solve_tail`).
    solve_tail: CudaFunction,
    /// The deep levels on a cluster per item instead (sm_90, blocks padded to 32; `None`
    /// elsewhere: see cluster.rs).
    cluster: Option<ClusterSolve>,
    /// The factor's deep levels on a cluster per item (sm_90, f64 blocks padded to 16 or 32;
    /// `None` elsewhere: see factor_cluster.rs).
    factor_cluster: Option<FactorCluster>,
    /// Every level of the solve in one CTA per item, where the plan is small enough (see
    /// whole_solve.rs; it then takes the place of the levels' launches and of both clusters).
    whole: Option<WholeSolve>,
    /// Every level of the factor and the inverses in one CTA per item, where the plan is small
    /// enough (see whole_factor.rs; it then takes the place of the levels' launches, the factor
    /// cluster and the inverse's launch).
    whole_factor: Option<WholeFactor>,
    /// First level of the merged tail (see `solve_tail`) and its table.
    tail_from: usize,
    tail: DeviceBuffer<i32>,
    recs: DeviceBuffer<i32>,
    levels: Vec<(usize, usize)>,
    fact: DeviceBuffer<T>,
    /// L⁻¹ of every eliminated block, the form the solve reads (products instead of
    /// substitution chains); written by `invert` after the last level. Only the lower
    /// triangles are written or read.
    linv: DeviceBuffer<T>,
    xslots: DeviceBuffer<T>,
    z: DeviceBuffer<T>,
    /// A partitioned schedule's chunk levels in one launch (chunks.rs; `BTCHOL_CHUNK_KERNEL=0`
    /// runs them level by level instead).
    chunks: Option<ChunkPath<T>>,
}

/// The blocked elimination on a cluster of three CTAs per elimination, one per block of rows
/// (kernels/factor.cu btchol_factor_eliminate_cluster), for split levels whose eliminations
/// would leave SMs idle: it spreads each elimination's updates and trsm over three SMs.
struct EliminateCluster {
    func: CudaFunction,
    threads: usize,
    smem: usize,
    /// Levels of at most this many CTAs (3 per elimination and item) take it.
    max_ctas: usize,
}

/// The cluster elimination where the variant has one and the device can run it:
/// `BTCHOL_ELIMINATE_CLUSTER=0` never, `all` at every split level, `K` (a number) at levels of
/// at most K CTAs (for measuring the rule), otherwise (default) at levels whose clusters fit the
/// SMs at once.
fn eliminate_cluster(
    dev: &Device,
    spec: &KernelSpec,
    func: impl FnOnce() -> Result<CudaFunction>,
) -> Result<Option<EliminateCluster>> {
    let mode = std::env::var("BTCHOL_ELIMINATE_CLUSTER").unwrap_or_default();
    if !spec.eliminate_cluster(dev.arch) || mode == "0" {
        return Ok(None);
    }
    let func = func()?;
    let (threads, smem) = (spec.eliminate_cluster_threads(), spec.eliminate_cluster_smem_bytes());
    opt_in_shared_memory(&func, smem)?;
    if (KernelLaunch { grid: 3, threads, smem, cluster: 3, early: false, carveout: None }).max_active(&func)? == 0 {
        return Ok(None);
    }
    let max_ctas = match mode.as_str() {
        "all" => i32::MAX as usize,
        k => k.parse().unwrap_or(dev.sm_count),
    };
    Ok(Some(EliminateCluster { func, threads, smem, max_ctas }))
}

/// The split elimination (kernels/factor.cu btchol_factor_potrf_split, then
/// btchol_factor_trsm_split): the cluster variant's D CTA alone, several to an SM, then its two
/// coupling CTAs per elimination, for wide split levels (where one CTA of 3·LD threads per
/// elimination left the SM to the diagonal warp's sweep for ~45 % of the time).
struct SplitEliminate {
    potrf: CudaFunction,
    trsm: CudaFunction,
    /// Levels of at least this many eliminations (× batch) take it (`BTCHOL_SPLIT_ELIMINATE_MIN_CTAS`).
    min_ctas: usize,
}

/// The split elimination where the cluster variant is compiled in (the same kernels' code).
fn split_eliminate(
    dev: &Device,
    spec: &KernelSpec,
    f: impl Fn(&str) -> Result<CudaFunction>,
) -> Result<Option<SplitEliminate>> {
    if !spec.eliminate_cluster(dev.arch) || spec.ld <= super::jit::SPLIT_ABOVE_LD {
        return Ok(None);
    }
    let (potrf, trsm) = (f("btchol_factor_potrf_split")?, f("btchol_factor_trsm_split")?);
    opt_in_shared_memory(&potrf, spec.potrf_split_smem_bytes())?;
    opt_in_shared_memory(&trsm, spec.eliminate_cluster_smem_bytes())?;
    let min_ctas = env_count("BTCHOL_SPLIT_ELIMINATE_MIN_CTAS", 2 * dev.sm_count);
    Ok(Some(SplitEliminate { potrf, trsm, min_ctas }))
}

/// A kernel-development switch `NAME=0|1`: `Some(false)` / `Some(true)` forces a path off or on
/// (A/B runs, tests), anything else `None`, the plan's default rule.
pub(super) fn env_switch(name: &str) -> Option<bool> {
    match std::env::var(name).as_deref() {
        Ok("0") => Some(false),
        Ok("1") => Some(true),
        _ => None,
    }
}

/// A kernel-development threshold `NAME=K` (A/B runs), else `default`.
pub(super) fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The most dynamic shared memory one CTA of `func` can opt in to on `dev`: the device's opt-in
/// limit less the kernel's static shared memory, which counts against the same limit (asking
/// for more fails the opt-in with CUDA_ERROR_INVALID_VALUE).
pub(super) fn dynamic_smem_limit(func: &CudaFunction, dev: &Device) -> usize {
    let attr = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES;
    // (The query cannot fail for a loaded function; 2 KB, above every kernel's, if it does.)
    let static_bytes = unsafe { result::function::get_function_attribute(func.cu_function(), attr) }
        .map_or(2048, |b| b.max(0) as usize);
    dev.smem_optin.saturating_sub(static_bytes)
}

/// Lets `func` use `bytes` of dynamic shared memory (needed above 48 KiB; done for every kernel
/// with dynamic shared memory, since its static shared memory counts against the same limit).
pub(super) fn opt_in_shared_memory(func: &CudaFunction, bytes: usize) -> Result<()> {
    unsafe {
        result::function::set_function_attribute(
            func.cu_function(),
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes as i32,
        )
    }
    .map_err(|e| cuda_err("opting in to shared memory", e))
}

/// `BTCHOL_SMEM_CARVEOUT=P` (kernel development): every kernel's preferred share of the SM's
/// unified L1/shared memory for shared memory, in percent (0: the most L1, 100: the most shared
/// memory), instead of the driver's choice, which sizes shared memory for the kernel's highest
/// occupancy and leaves the rest to L1. A hint: the driver still gives a kernel the shared
/// memory that one of its CTAs needs. Kernels that re-read global memory (the blocked
/// eliminations read their rows' finished columns back) may run faster with more L1 where a
/// level has too few CTAs to use the occupancy.
fn smem_carveout() -> Option<u32> {
    carveout_percent(&std::env::var("BTCHOL_SMEM_CARVEOUT").ok()?)
}

/// A carveout setting in percent, 0–100 (None: anything else).
fn carveout_percent(setting: &str) -> Option<u32> {
    setting.parse().ok().filter(|p| *p <= 100)
}

/// The carveout of a factor level's launches of at most one CTA per SM (a single system's
/// upper levels): 0, the most L1, by default. There occupancy has no use for shared memory
/// beyond one CTA's, and the driver's choice (shared memory for the highest occupancy) halves
/// the L1 that the blocked eliminations read their finished columns back through. H100,
/// 2026-11-28, factor: f32 n = 64–128 −2 … −9 %, f64 n = 64–128 −1 … −2 % at N = 64, f64 at
/// N = 1024 and n = 32 unchanged; on the solve's levels +2–4 % (f32, N = 1024), so they keep the
/// driver's (bench/results/ab/README.md). `BTCHOL_SMEM_CARVEOUT_NARROW=P` sets P (0–100) instead,
/// `none` the driver's choice. A launch attribute of CUDA 12.5 drivers; older ones keep theirs.
fn narrow_carveout(driver: i32) -> Option<u32> {
    narrow_carveout_from(std::env::var("BTCHOL_SMEM_CARVEOUT_NARROW").ok().as_deref(), driver)
}

/// `narrow_carveout` for a setting (None: unset) and a driver version (e.g. 12050 for 12.5).
fn narrow_carveout_from(setting: Option<&str>, driver: i32) -> Option<u32> {
    match setting {
        Some("none") => None,
        Some(v) => carveout_percent(v),
        None => (driver >= 12050).then_some(0),
    }
}

fn set_smem_carveout(func: &CudaFunction, percent: i32) -> Result<()> {
    unsafe {
        result::function::set_function_attribute(
            func.cu_function(),
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            percent,
        )
    }
    .map_err(|e| cuda_err("setting the shared memory carveout", e))
}

/// Records a level may have at most to join the solve's merged tail (kernels/small.cu
/// `btchol_solve_tail_small`): two rounds of its two groups of 256 threads. Measured on the H100
/// (scripts/gpu-ab.sh, 2026-11-23): the tail takes 3–7 % off the solve (n = 16, N = 64: 81 → 75
/// µs); a level's cost is its dependent loads and substitution chains more than its launch.
const TAIL_MAX_RECORDS: usize = 4;

/// The deep levels the solve runs in one launch: the first level from which every level has at
/// most [`TAIL_MAX_RECORDS`] level-CTA records and eliminations, and per merged level [first
/// level-CTA record, count, first elimination record, count] for the kernel. No level before
/// `first` (a partitioned schedule's chunk levels); empty only where every level is one of
/// those, otherwise the root level (one elimination) is in it.
fn solve_tail(cta_levels: &[(usize, usize)], levels: &[LevelRecords], first: usize) -> (usize, Vec<i32>) {
    let fits = |l: usize| cta_levels[l].1 <= TAIL_MAX_RECORDS && levels[l].n_elim <= TAIL_MAX_RECORDS;
    let mut from = levels.len();
    while from > first && fits(from - 1) {
        from -= 1;
    }
    assert!(from < levels.len() || first == levels.len(), "the root level of a schedule is a single elimination");
    (from, tail_table(cta_levels, levels, from))
}

/// Per level from `from` on: [first level-CTA record, count, first elimination record, count].
fn tail_table(cta_levels: &[(usize, usize)], levels: &[LevelRecords], from: usize) -> Vec<i32> {
    (from..levels.len())
        .flat_map(|l| [cta_levels[l].0, cta_levels[l].1, levels[l].elim_offset, levels[l].n_elim])
        .map(|v| v as i32)
        .collect()
}

/// CTAs from which a factor level uses the wide kernel (groups of 128 threads per elimination)
/// instead of register panels. Measured on the H100: in f32 the panels win at every width
/// (2026-11-23, n = 32, N = 16384: 718 vs 890 µs; 2026-11-24 with 528 as the threshold: 877 vs
/// 931); in f64 the panels win until the level fills the device about four times over — for
/// every block size since the shared-memory panel of 2026-11-24 (n = 32, N = 64: 77 vs 93 µs,
/// N = 1024: 173 vs 206 with all levels on groups; n = 32, N = 16384: 1215 with groups from
/// 4 × SMs against 1838 with groups everywhere at the time, bench/results/ab/ and experiments/).
/// Except f64 blocks padded to 32: their panel kernel holds one CTA per SM (255 registers; held
/// to 128 it spills and every level gets ~20 % slower), so a level of more CTAs than SMs takes
/// the panels two waves, and the groups win from there (H200, 2026-11-29: n = 32, N = 1024
/// 152.6 → 145.6 µs, N = 400 99.5 → 97.0; n = 29, N = 1024 152.5 → 146.8). Not for ld 24
/// (n = 20, 24, N = 1024: 114 → 131 µs) nor ld 16 (two panel CTAs per SM; n = 16, N = 1024:
/// 62.3 → 64.7). `BTCHOL_WIDE_MIN_CTAS` overrides the rule (kernel development: measure it on a
/// GPU with one binary).
fn wide_level_min_ctas(dtype: DType, ld: usize, sm_count: usize) -> usize {
    wide_level_min_ctas_from(std::env::var("BTCHOL_WIDE_MIN_CTAS").ok().as_deref(), dtype, ld, sm_count)
}

/// `wide_level_min_ctas` with the override's setting given (a count, or anything else: the rule).
fn wide_level_min_ctas_from(setting: Option<&str>, dtype: DType, ld: usize, sm_count: usize) -> usize {
    if let Some(v) = setting.and_then(|v| v.parse().ok()) {
        return v;
    }
    match (dtype, ld) {
        (DType::F32, _) => usize::MAX,
        (DType::F64, 32) => sm_count + 1,
        (DType::F64, _) => 4 * sm_count,
    }
}

/// The per-item sequential path (kernels/sequential.cu): one launch factors, one solves.
struct SeqPath {
    factor: SeqKernel,
    /// The one-warp factor with the forward substitution riding along (kernels/sequential.cu
    /// FORWARD), for the factor-and-solve sequences: f64 plans where both the factor and the
    /// solve run one warp per item (batches of more than SEQ_INV_MAX_ITEMS_PER_SM items per SM).
    factor_forward: Option<SeqKernel>,
    solve: SeqKernel,
}

/// A per-item sequential kernel: one CTA of `threads` per item, with `smem` bytes of dynamic
/// shared memory (opted in to when made).
struct SeqKernel {
    func: CudaFunction,
    threads: usize,
    smem: usize,
}

impl SeqKernel {
    fn new(func: CudaFunction, threads: usize, smem: usize) -> Result<SeqKernel> {
        opt_in_shared_memory(&func, smem)?;
        Ok(SeqKernel { func, threads, smem })
    }
}

/// Whether the sequential factor runs a warp pair per item (`btchol_factor_seq_pair_small`: the
/// syrk of each step overlaps the previous step's pivot chain) rather than one warp: where the
/// batch leaves the SMs with few warps, so a step's latency, not the SMs' throughput, bounds it.
/// `BTCHOL_SEQ_PAIR=0|1` forces either.
fn seq_pair_factor(batch: usize, sm_count: usize) -> bool {
    env_switch("BTCHOL_SEQ_PAIR").unwrap_or_else(|| batch <= SEQ_PAIR_MAX_ITEMS_PER_SM * sm_count)
}
/// Items per SM up to which the warp-pair sequential factor is used. Measured (f64 factor, one warp
/// → pair, 132 SMs; bench/results/ab/README.md): with 1 or 2 items per SM the pair gains 9–22 %
/// (H100, n = 32, N = 128, B = 256: 1001 → 784 µs); from 2.5 per SM on it loses (H100, same shape,
/// B = 330 / 396 / 528: +9 / +11 / +13 %; H200, B = 1024: +2…+35 %): with several warps per SM
/// their throughput, not one chain's latency, bounds the sweep.
const SEQ_PAIR_MAX_ITEMS_PER_SM: usize = 2;

/// Whether a kernel asking for `dynamic` bytes of dynamic shared memory fits one CTA of `dev`,
/// with 2 KB left for its static shared memory (~1.1 KB in the sequential and chunk kernels),
/// which counts against the same opt-in limit.
fn fits_a_cta(dynamic: usize, dev: &Device) -> bool {
    dynamic + 2048 <= dev.smem_optin
}

/// Whether the sequential solve runs with helper warps that invert each D̂_i ahead of the sweep
/// (`btchol_solve_seq_inv_small`, sm_90: mbarriers) rather than one warp per item: where the batch
/// leaves few items per SM, so the sweep's substitution chains, not the SMs' throughput, bound it.
/// Needs columns of at least 16 bytes (ld ≥ 2 in f64, 4 in f32: its 16-byte copies and loads)
/// and its slots' shared memory (103 KB at f64 ld = 32: more than e.g. sm_120 gives a CTA).
/// `BTCHOL_SEQ_INV_SOLVE=0|1` forces either (1: where it can).
fn seq_inv_solve(batch: usize, dev: &Device, spec: &KernelSpec) -> bool {
    dev.arch.0 >= 9
        && spec.ld * spec.dtype.size_bytes() >= 16
        && fits_a_cta(spec.seq_inv_solve_smem_bytes(), dev)
        && env_switch("BTCHOL_SEQ_INV_SOLVE").unwrap_or_else(|| batch <= SEQ_INV_MAX_ITEMS_PER_SM * dev.sm_count)
}
/// Items per SM up to which the sequential solve with helper warps is used. Measured (H100, 132
/// SMs, --rhs device, N = 32 unless noted; bench/results/ab/README.md, 2026-11-27): one warp →
/// helpers, B = 256: 0.44–0.68× (f64 n = 32, N = 128: 731 → 438 µs); B = 512: 0.45–0.95×;
/// B = 1024: f32 and f64 n = 32 0.76–0.92×, but f64 n = 8 / 16 1.16 / 1.18× (7.8 items per SM
/// keep the one-warp solve's memory pipe full).
const SEQ_INV_MAX_ITEMS_PER_SM: usize = 4;

/// A one-warp sequential kernel (factor or solve) with its blocks staged one step ahead (`two`:
/// e.g. the solve's 34 KB of shared memory per item at f64 ld = 32, the factor's 40 KB) or each
/// step's blocks staged as the step starts (`one`: 17 and 24 KB): one stage where that makes the
/// whole batch resident at once and two stages do not, so that the other resident warps hide the
/// copies that a warp no longer overlaps with its own work. Measured (H100, 132 SMs, N = 32,
/// --rhs device; bench/results/ab/README.md, 2026-11-27), two → one stage: f64 n = 32, B = 1024:
/// factor 0.82× (5 → 8 items per SM), solve 0.88× (6 → 12); f32 n = 32, B = 2048: solve 0.95×;
/// but where two stages already hold the batch, solve 1.10–1.14× (f32 n = 32 / f64 n = 16,
/// B = 1024); and where neither holds it mixed: f64 n = 32, B = 2048 factor 0.83× but solve
/// 1.06×, f32 factor 1.10×, so two stages there. `force` names the variable (`=1|2`) that
/// forces either.
fn seq_one_warp_stages(batch: usize, dev: &Device, two: SeqKernel, one: SeqKernel, force: &str) -> SeqKernel {
    // Items the device holds at once (None if the driver cannot say: then two stages, as before).
    let resident = |k: &SeqKernel| {
        let per_sm = k.func.occupancy_max_active_blocks_per_multiprocessor(k.threads as u32, k.smem, None).ok()?;
        Some(per_sm as usize * dev.sm_count)
    };
    let one_stage = match std::env::var(force).as_deref() {
        Ok("1") => true,
        Ok("2") => false,
        _ => one_stage_holds_batch(batch, resident(&two), resident(&one)),
    };
    if one_stage {
        one
    } else {
        two
    }
}

/// Whether one stage makes a batch resident at once that two stages do not (`held_*`: items the
/// device holds at once with either kernel; unknown: no).
fn one_stage_holds_batch(batch: usize, held_two: Option<usize>, held_one: Option<usize>) -> bool {
    match (held_two, held_one) {
        (Some(two), Some(one)) => two < batch && batch <= one,
        _ => false,
    }
}

/// A launch sequence the engine captures once as a CUDA graph and replays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Sequence {
    /// Reset the failure keys, factor every level.
    Factor,
    /// Forward and backward substitution of `m` packed right-hand sides.
    Solve(usize),
    /// Factor and solve in one sequence (`enqueue_factor_solve`: the forward substitution
    /// interlaced with the factor where the path allows).
    FactorSolve(usize),
    /// The same for right-hand sides in device memory, one pass: pack from the caller's array,
    /// factor and solve, unpack into the caller's solution (a graph per caller array, as
    /// `SolveDevice`).
    FactorSolveDevice(DeviceSolve),
    /// Factor of the items the device mask selects (the others keep factor, status and counts).
    FactorMasked,
    /// Solve of the items the device mask selects.
    SolveMasked(usize),
    /// The solve of `m` right-hand sides straight from and into the mapped page-locked staging
    /// buffer, by the fused cluster solve (`staged_solve`): no copies either way.
    SolveStaged(usize),
    /// Factor, then that solve.
    FactorSolveStaged(usize),
    /// A one-pass solve of right-hand sides in device memory: pack from the caller's array,
    /// solve, unpack into the caller's solution (the caller's pointers are part of the key, so a
    /// graph is captured per distinct caller array; `MAX_DEVICE_SOLVE_GRAPHS` bounds how many are
    /// kept).
    SolveDevice(DeviceSolve),
}

/// The caller-side arguments of one pass of `solve_device` (`Sequence::SolveDevice` when there
/// is one pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct DeviceSolve {
    /// Right-hand sides solved in the pass (columns col0 .. col0 + m of the caller's).
    m: usize,
    col0: usize,
    format: SourceFormat,
    /// The pass's first element in the caller's b and x.
    src: u64,
    dst: u64,
    /// Row, column and item strides, in elements.
    strides: (usize, usize, usize),
}

/// Graphs of `Sequence::SolveDevice` and `FactorSolveDevice` kept at once (a caller cycling
/// through more distinct pointers than this recaptures; a capture costs about as much as a few
/// solves).
const MAX_DEVICE_SOLVE_GRAPHS: usize = 8;

/// Numerical options as the kernels take them: pivot policy (PlanOptions::pivot_threshold /
/// pivot_boost) and static diagonal shift (PlanOptions::diag_shift).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuNumerics<T> {
    pub threshold: T,
    pub boost: T,
    pub diag_shift: T,
}

/// Plan-owned GPU state for one (B, N, n, dtype).
pub struct CudaEngine<T: Scalar> {
    dev: Device,
    stream: Stream,
    /// A stream of the engine's own that graphs are captured on (never the caller's stream, which
    /// may be the legacy default stream, where capture is not allowed).
    capture_stream: Stream,
    /// Captured launch sequences (`None`: graphs disabled by `BTCHOL_CUDA_GRAPHS=0`).
    graphs: Option<std::collections::HashMap<Sequence, Graph>>,
    spec: KernelSpec,
    _module: Arc<CudaModule>,
    k: Kernels,
    eliminate_cluster: Option<EliminateCluster>,
    split_eliminate: Option<SplitEliminate>,
    small: Option<SmallPath<T>>,
    seq: Option<SeqPath>,
    numerics: GpuNumerics<T>,
    /// Boosted pivots per item (device; zeroed per factor when boosting is on) and host copy.
    boosted: DeviceBuffer<u32>,
    host_boosted: PinnedBuffer<u32>,
    /// Batch mask of the masked sequences (one byte per item), its host staging, and the keys
    /// of the items it leaves out, saved while a masked sequence runs.
    mask: DeviceBuffer<u8>,
    host_mask: PinnedBuffer<u8>,
    saved_keys: DeviceBuffer<u64>,
    dims: Dims,
    levels: Vec<LevelRecords>,
    n_slots: usize,
    max_nrhs: usize,
    recs: DeviceBuffer<i32>,
    sub_transposed: DeviceBuffer<u8>,
    diag: DeviceBuffer<T>,
    slots: DeviceBuffer<T>,
    fail: DeviceBuffer<u64>,
    nonfinite: DeviceBuffer<u64>,
    staging: DeviceBuffer<T>,
    rhs: DeviceBuffer<T>,
    host_rhs: PinnedBuffer<T>,
    /// host_rhs as the kernels address it (`staged_solve`).
    host_rhs_mapped: u64,
    host_keys: PinnedBuffer<u64>,
    /// Per item, written by the last kernel of a sequence straight into page-locked memory, so
    /// that the host reads them after its wait with no copy: the factor's failure keys
    /// (btchol_invert_small), then the device solve's non-finite keys (btchol_unpack_rhs, or the
    /// fused cluster solve). `reports_mapped`: the same memory as the kernels address it.
    reports: PinnedBuffer<u64>,
    reports_mapped: u64,
    /// Kernels launched with programmatic dependent launch (sm_90, unless `BTCHOL_PDL=0`): each
    /// is scheduled while the previous one runs and waits for it inside, which hides the launch
    /// latency of the per-level chain.
    early_launch: bool,
    /// The carveout of a factor level's launches of at most one CTA per SM (`narrow_carveout`).
    narrow_carveout: Option<u32>,
    /// One-pass device solves of a single system may take the fused cluster solve
    /// (`fused_cluster_solve`).
    fused_solve: bool,
    /// Levels of 32 < ld ≤ 64 with fewer eliminations (× batch) than this are split
    /// (`split_level`): the GPU's SMs, or `BTCHOL_FUSED_MIN_CTAS=K` (kernel development).
    fused_min_ctas: usize,
    /// Split levels whose 64 × 64 gemm tiles (× batch) number at least this run them
    /// (`Kernels::factor_gemm_wide`), the others 32 × 32 tiles: four per SM (two waves of two
    /// CTAs), or `BTCHOL_GEMM_WIDE_MIN_CTAS=K` (kernel development).
    gemm_wide_min_ctas: usize,
    /// Uploads from pageable memory over several threads (`host_stager`).
    stager: HostStager,
}

impl<T: Scalar> CudaEngine<T> {
    /// Opens the device, compiles (or loads from cache) the kernel variant for n and allocates all
    /// device memory. `max_nrhs` right-hand sides are solved per pass; more are done in chunks.
    pub fn new(
        dims: Dims,
        schedule: Schedule,
        max_nrhs: usize,
        algorithm: GpuAlgorithm,
        numerics: GpuNumerics<T>,
    ) -> Result<Self> {
        let n = dims.block_size;
        if n > MAX_CUDA_BLOCK_SIZE {
            return Err(Error::InvalidArgument(format!(
                "the CUDA backend supports block sizes up to {MAX_CUDA_BLOCK_SIZE}, got n = {n}"
            )));
        }
        if algorithm == GpuAlgorithm::Sequential && n > SEQ_MAX_BLOCK_SIZE {
            return Err(Error::Unsupported(format!(
                "the CUDA sequential algorithm supports block sizes up to {SEQ_MAX_BLOCK_SIZE}, got n = {n}; \
                 use nested dissection"
            )));
        }
        let dev = Device::open()?;
        let spec = KernelSpec::for_block_size(T::DTYPE, n, dev.smem_optin.min(200 * 1024))
            .with_boost(numerics.boost > T::ZERO);
        let cubin = jit::load_or_compile(&spec, dev.arch)?;
        dev.bind()?;
        let module =
            dev.ctx.load_module(Ptx::from_binary((*cubin).clone())).map_err(|e| cuda_err("loading the kernels", e))?;
        // The factor's level kernels may come from a variant with other threads (factor_spec).
        let factor_spec = spec.factor_spec();
        let factor_module = match factor_spec == spec {
            true => module.clone(),
            false => {
                let cubin = jit::load_or_compile(&factor_spec, dev.arch)?;
                dev.ctx
                    .load_module(Ptx::from_binary((*cubin).clone()))
                    .map_err(|e| cuda_err("loading the kernels", e))?
            }
        };
        let carveout = smem_carveout();
        let from = |module: &std::sync::Arc<CudaModule>, name: &str| {
            let func = module.load_function(name).map_err(|e| cuda_err(name, e))?;
            if let Some(percent) = carveout {
                set_smem_carveout(&func, percent as i32)?;
            }
            Ok::<_, Error>(func)
        };
        let f = |name: &str| from(&module, name);
        let k = Kernels {
            factor_eliminate: from(&factor_module, "btchol_factor_eliminate")?,
            factor_update: from(&factor_module, "btchol_factor_update")?,
            factor_gemm: f("btchol_factor_gemm")?,
            factor_gemm_wide: if spec.wide_gemm(dev.arch) { Some(f("btchol_factor_gemm_wide")?) } else { None },
            forward_eliminate: f("btchol_forward_eliminate")?,
            forward_update: f("btchol_forward_update")?,
            backward_eliminate: f("btchol_backward_eliminate")?,
            convert_blocks: [
                f("btchol_convert_blocks")?,
                f("btchol_convert_blocks_f16")?,
                f("btchol_convert_blocks_bf16")?,
            ],
            pack_rhs: [
                f("btchol_convert_blocks_rhs")?,
                f("btchol_convert_blocks_f16_rhs")?,
                f("btchol_convert_blocks_bf16_rhs")?,
            ],
            unpack_rhs: f("btchol_unpack_rhs")?,
            mask_begin: f("btchol_mask_begin")?,
            mask_end: f("btchol_mask_end")?,
            logdet: f("btchol_logdet")?,
        };
        if spec.factor_smem_bytes() > 0 {
            opt_in_shared_memory(&k.factor_eliminate, spec.factor_smem_bytes())?;
            opt_in_shared_memory(&k.factor_update, spec.update_smem_bytes())?;
        }
        if let Some(wide) = &k.factor_gemm_wide {
            opt_in_shared_memory(wide, spec.wide_gemm_smem_bytes())?;
        }
        if spec.solve_smem_bytes() > 0 {
            opt_in_shared_memory(&k.forward_eliminate, spec.solve_smem_bytes())?;
            opt_in_shared_memory(&k.backward_eliminate, spec.solve_smem_bytes())?;
        }
        let eliminate_cluster = eliminate_cluster(&dev, &spec, || f("btchol_factor_eliminate_cluster"))?;
        let (recs_host, levels) = schedule_records(&schedule);
        let split_eliminate = split_eliminate(&dev, &spec, f)?;
        let n_slots = schedule.n_slots();
        let bs = spec.ld * spec.ld;
        let grid_limit = (i32::MAX as usize) / dims.batch;
        let gemm_ctas = |l: &LevelRecords| spec.gemm_ctas_per_item(32, l.n_update, l.n_elim);
        if levels.iter().any(|l| l.n_elim.max(l.n_update).max(dims.n_blocks).max(gemm_ctas(l)) > grid_limit) {
            return Err(Error::InvalidDimension("batch × N too large for one CUDA grid".into()));
        }
        let stream = Stream::new_owned(&dev)?;
        let b = dims.batch;
        let seq = if algorithm == GpuAlgorithm::Sequential {
            // The one-warp factor, plain or with the forward substitution (`suffix`), its staging
            // depth chosen as the plain one's (the same shared memory).
            let one_warp = |suffix: &str| -> Result<SeqKernel> {
                let two = SeqKernel::new(
                    f(&format!("btchol_factor_seq_small{suffix}"))?,
                    SEQ_THREADS,
                    spec.seq_factor_smem_bytes(2),
                )?;
                let one = SeqKernel::new(
                    f(&format!("btchol_factor_seq_small_1stage{suffix}"))?,
                    SEQ_THREADS,
                    spec.seq_factor_smem_bytes(1),
                )?;
                Ok(seq_one_warp_stages(b, &dev, two, one, "BTCHOL_SEQ_FACTOR_STAGES"))
            };
            let pair_factor = seq_pair_factor(b, dev.sm_count);
            let factor = if pair_factor {
                SeqKernel::new(f("btchol_factor_seq_pair_small")?, SEQ_PAIR_THREADS, spec.seq_pair_factor_smem_bytes())?
            } else {
                one_warp("")?
            };
            let inv_solve = seq_inv_solve(b, &dev, &spec);
            let solve = if inv_solve {
                SeqKernel::new(f("btchol_solve_seq_inv_small")?, SEQ_INV_THREADS, spec.seq_inv_solve_smem_bytes())?
            } else {
                let two = SeqKernel::new(f("btchol_solve_seq_small")?, SEQ_THREADS, 0)?;
                let one = SeqKernel::new(f("btchol_solve_seq_small_1stage")?, SEQ_THREADS, 0)?;
                seq_one_warp_stages(b, &dev, two, one, "BTCHOL_SEQ_SOLVE_STAGES")
            };
            // The factor's forward sweep is the one-warp solve's, bit for bit (the helper warps'
            // solve multiplies by D̂_i⁻¹ instead, other roundings): factor_solve then gives the
            // bits of factor + solve. It adds a dependent chain to each step of the factor and
            // saves a pass over the factor's bytes, so it pays in f64 only. Measured
            // (factor_solve_device, fused against not, H200, B = 1024, N = 32 / 128, two rounds;
            // bench/results/experiments/nvidia-h200-2026-11-29-seq-fused-forward-ab.txt): f64
            // n = 8 / 16 / 32 −2 … −7 % in all six shapes; f32 n = 16 +8 / +14 %, the others
            // −4 … +2 %. `BTCHOL_SEQ_FUSED_FORWARD=0|1` forces either (A/B runs, tests).
            let fuse = env_switch("BTCHOL_SEQ_FUSED_FORWARD").unwrap_or_else(|| spec.dtype == DType::F64)
                && !pair_factor
                && !inv_solve;
            let factor_forward = if fuse { Some(one_warp("_forward")?) } else { None };
            Some(SeqPath { factor, factor_forward, solve })
        } else {
            None
        };
        let small = if spec.small() && seq.is_none() {
            let (cta_recs, cta_levels) = level_cta_records(&schedule);
            let recs = DeviceBuffer::from_host(&dev, &cta_recs, "uploading the schedule")?;
            let (factor_level, factor_level_wide) =
                (f("btchol_factor_level_small")?, f("btchol_factor_level_small_wide")?);
            opt_in_shared_memory(&factor_level, spec.small_factor_smem_bytes())?;
            opt_in_shared_memory(&factor_level_wide, spec.small_factor_smem_bytes())?;
            // The chunk sweeps stage max_nrhs vectors in shared memory; where a CTA cannot have
            // that much (f64 n = 32: from about 200 right-hand sides a pass) the chunk levels run
            // as per-level launches instead, as under BTCHOL_CHUNK_KERNEL=0: slower, same numbers.
            let chunk_kernels = std::env::var("BTCHOL_CHUNK_KERNEL").as_deref() != Ok("0")
                && fits_a_cta(spec.chunk_solve_smem_bytes(max_nrhs).max(spec.chunk_factor_smem_bytes()), &dev);
            let chunks = match chunk_table(&schedule) {
                Some(t) if chunk_kernels => {
                    let factor = f("btchol_factor_chunks_small")?;
                    let smem = spec.chunk_factor_smem_bytes();
                    opt_in_shared_memory(&factor, smem)?;
                    let upload = |v: &[i32]| DeviceBuffer::from_host(&dev, v, "uploading the chunk table");
                    let (forward, backward) = (f("btchol_forward_chunks_small")?, f("btchol_backward_chunks_small")?);
                    opt_in_shared_memory(&forward, spec.chunk_solve_smem_bytes(max_nrhs))?;
                    opt_in_shared_memory(&backward, spec.chunk_solve_smem_bytes(max_nrhs))?;
                    Some(ChunkPath {
                        factor,
                        separators: f("btchol_chunk_separators")?,
                        forward,
                        backward,
                        solve_separators: f("btchol_chunk_solve_separators")?,
                        sep_rhs: DeviceBuffer::zeroed(
                            &dev,
                            (b * (t.n_chunks - 1) * max_nrhs * spec.ld).max(1),
                            "GPU separator right-hand sides",
                        )?,
                        smem,
                        levels: t.levels,
                        n_chunks: t.n_chunks,
                        table: upload(&t.chunks)?,
                        left_slots: upload(&t.left_slots)?,
                        sums: DeviceBuffer::zeroed(&dev, (b * (t.n_chunks - 1) * bs).max(1), "GPU separator sums")?,
                    })
                }
                _ => None,
            };
            // The merged solve tail and both clusters take no chunk level: the chunk kernels run
            // them, or per-level launches (taken into a cluster or the tail, the chunk levels
            // solved wrong on the H100: f64 n = 16, N = 16, chunks of 3; not investigated).
            let first = schedule.chunk_levels();
            let solve_tail_fn = f("btchol_solve_tail_small")?;
            opt_in_shared_memory(&solve_tail_fn, spec.tail_solve_smem_bytes())?;
            let (tail_from, mut tail_host) = solve_tail(&cta_levels, &levels, first);
            if tail_host.is_empty() {
                tail_host.push(-1); // (never read; keeps the buffer non-empty)
            }
            let tail = DeviceBuffer::from_host(&dev, &tail_host, "uploading the schedule")?;
            let wide_min_ctas = wide_level_min_ctas(T::DTYPE, spec.ld, dev.sm_count);
            let cluster_fn = f("btchol_solve_cluster_small")?;
            let cluster =
                ClusterSolve::new(&dev, &spec, cluster_fn, b, &cta_recs, &recs_host, &cta_levels, &levels, first)?;
            let factor_cluster_fn = f("btchol_factor_cluster_small")?;
            let factor_cluster = FactorCluster::new(&dev, &spec, factor_cluster_fn, b, &cta_recs, &cta_levels, first)?;
            let mut program = ProgramSource::new(&dev, &cta_recs, &cta_levels, &recs_host, &levels);
            let whole_fn = f("btchol_solve_whole_small")?;
            let whole =
                WholeSolve::new(&dev, &spec, whole_fn, dims, &cta_levels, &recs_host, &levels, first, &mut program)?;
            let whole_factor_fn = f("btchol_factor_whole_small")?;
            let whole_factor = WholeFactor::new(&dev, &spec, whole_factor_fn, dims, n_slots, first, &mut program)?;
            Some(SmallPath {
                whole,
                whole_factor,
                cluster,
                factor_cluster,
                factor_level,
                factor_level_wide,
                wide_min_ctas,
                invert: f("btchol_invert_small")?,
                forward_level: f("btchol_forward_level_small")?,
                backward_level: f("btchol_backward_level_small")?,
                solve_tail: solve_tail_fn,
                tail_from,
                tail,
                recs,
                levels: cta_levels,
                fact: DeviceBuffer::zeroed(&dev, b * dims.n_blocks * bs, "GPU factor blocks")?,
                linv: DeviceBuffer::zeroed(&dev, b * dims.n_blocks * bs, "GPU inverse factor blocks")?,
                xslots: DeviceBuffer::zeroed(&dev, b * n_slots * bs, "GPU factor couplings")?,
                z: DeviceBuffer::zeroed(&dev, b * dims.rows() * max_nrhs, "GPU solutions")?,
                chunks,
            })
        } else {
            None
        };
        let recs = DeviceBuffer::from_host(&dev, &recs_host, "uploading the schedule")?;
        let flags: Vec<u8> = (0..dims.n_blocks - 1).map(|i| schedule.sub_block_transposed(i) as u8).collect();
        let sub_transposed = DeviceBuffer::from_host(&dev, &flags, "uploading the schedule orientation")?;
        let rows = dims.rows();
        let capture_stream = Stream::new_owned(&dev)?;
        // (Graph capture of such launches needs a 12.3 driver.)
        let mut driver = 0;
        let _ = unsafe { sys::cuDriverGetVersion(&mut driver) };
        let early_launch = dev.arch.0 >= 9 && driver >= 12030 && std::env::var("BTCHOL_PDL").as_deref() != Ok("0");
        let reports = PinnedBuffer::filled(&dev, 2 * b, NO_FAILURE, "host status reports")?;
        let host_rhs = PinnedBuffer::filled(&dev, b * rows * max_nrhs, T::ZERO, "host right-hand-side staging")?;
        let stager = HostStager::new(&dev, (dims.diag_len() + dims.sub_len()) * std::mem::size_of::<T>())?;
        let fused_min_ctas = env_count("BTCHOL_FUSED_MIN_CTAS", dev.sm_count);
        let gemm_wide_min_ctas = env_count("BTCHOL_GEMM_WIDE_MIN_CTAS", 4 * dev.sm_count);
        Ok(CudaEngine {
            host_keys: PinnedBuffer::filled(&dev, 2 * b, NO_FAILURE, "host flag staging")?,
            reports_mapped: reports.device_ptr()?,
            reports,
            capture_stream,
            diag: DeviceBuffer::zeroed(&dev, b * dims.n_blocks * bs, "GPU diagonal blocks")?,
            slots: DeviceBuffer::zeroed(&dev, b * n_slots * bs, "GPU coupling blocks")?,
            fail: DeviceBuffer::zeroed(&dev, b, "GPU failure flags")?,
            boosted: DeviceBuffer::zeroed(&dev, b, "GPU boosted-pivot counts")?,
            host_boosted: PinnedBuffer::filled(&dev, b, 0, "host boosted-pivot counts")?,
            mask: DeviceBuffer::zeroed(&dev, b, "GPU batch mask")?,
            host_mask: PinnedBuffer::filled(&dev, b, 0, "host batch mask")?,
            saved_keys: DeviceBuffer::zeroed(&dev, b, "GPU saved failure keys")?,
            // Per item: diagonal-block keys, coupling keys; then one "any right-hand side non-finite" word.
            nonfinite: DeviceBuffer::zeroed(&dev, 2 * b + 1, "GPU input checks")?,
            staging: DeviceBuffer::zeroed(&dev, dims.diag_len() + dims.sub_len(), "GPU upload staging")?,
            rhs: DeviceBuffer::zeroed(&dev, b * rows * max_nrhs, "GPU right-hand sides")?,
            host_rhs_mapped: host_rhs.device_ptr()?,
            host_rhs,
            recs,
            sub_transposed,
            dev,
            graphs: (std::env::var("BTCHOL_CUDA_GRAPHS").as_deref() != Ok("0")).then(Default::default),
            early_launch,
            narrow_carveout: narrow_carveout(driver),
            fused_solve: std::env::var("BTCHOL_FUSED_SOLVE").as_deref() != Ok("0"),
            fused_min_ctas,
            gemm_wide_min_ctas,
            stager,
            stream,
            spec,
            _module: module,
            k,
            eliminate_cluster,
            split_eliminate,
            small,
            seq,
            numerics,
            dims,
            levels,
            n_slots,
            max_nrhs,
        })
    }

    pub fn device_name(&self) -> &str {
        &self.dev.name
    }
    pub fn spec(&self) -> KernelSpec {
        self.spec
    }
    pub fn algorithm(&self) -> GpuAlgorithm {
        if self.seq.is_some() {
            GpuAlgorithm::Sequential
        } else {
            GpuAlgorithm::NestedDissection
        }
    }
    pub fn workspace_bytes(&self) -> usize {
        let small = self.small.as_ref().map_or(0, |s| s.fact.bytes() + s.xslots.bytes() + s.z.bytes() + s.recs.bytes());
        self.diag.bytes() + self.slots.bytes() + self.staging.bytes() + self.rhs.bytes() + self.recs.bytes() + small
    }

    /// Makes the plan work on a caller-owned stream (null: the legacy default stream).
    ///
    /// # Safety
    /// `stream` must be a stream of device 0's primary context that outlives its use.
    pub unsafe fn set_stream(&mut self, stream: *mut c_void) -> Result<()> {
        self.stream.synchronize()?;
        self.stream = Stream::borrowed(stream as sys::CUstream);
        Ok(())
    }

    pub fn synchronize(&self) -> Result<()> {
        self.dev.bind()?;
        self.stream.synchronize()
    }

    unsafe fn launch(&self, f: &CudaFunction, grid: usize, smem: usize, args: &mut [*mut c_void]) -> Result<()> {
        self.launch_with(f, grid, self.spec.threads, smem, args)
    }

    /// A per-item sequential kernel over the batch.
    unsafe fn launch_seq(&self, k: &SeqKernel, args: &mut [*mut c_void]) -> Result<()> {
        self.launch_with(&k.func, self.dims.batch, k.threads, k.smem, args)
    }

    unsafe fn launch_with(
        &self,
        f: &CudaFunction,
        grid: usize,
        threads: usize,
        smem: usize,
        args: &mut [*mut c_void],
    ) -> Result<()> {
        self.launch_carveout(f, (grid, threads, smem), None, args)
    }

    /// A factor level's kernel (nested dissection, blocks above 32): as `launch_with`, with the
    /// carveout of `factor_level_carveout`.
    unsafe fn launch_factor_level(
        &self,
        f: &CudaFunction,
        shape: (usize, usize, usize),
        args: &mut [*mut c_void],
    ) -> Result<()> {
        self.launch_carveout(f, shape, self.factor_level_carveout(shape.0), args)
    }

    /// `grid` CTAs of `threads` threads with `smem` bytes, one per cluster, early where the
    /// engine launches early, with the given carveout.
    unsafe fn launch_carveout(
        &self,
        f: &CudaFunction,
        (grid, threads, smem): (usize, usize, usize),
        carveout: Option<u32>,
        args: &mut [*mut c_void],
    ) -> Result<()> {
        let launch = KernelLaunch { grid, threads, smem, cluster: 1, early: self.early_launch, carveout };
        launch.launch(f, self.stream.raw, args)
    }

    /// The carveout of a factor level's launch of `grid` CTAs: `narrow_carveout` where they fit
    /// one per SM, the driver's choice otherwise.
    fn factor_level_carveout(&self, grid: usize) -> Option<u32> {
        self.narrow_carveout.filter(|_| grid <= self.dev.sm_count)
    }

    fn fill_keys(&self, buf: &DeviceBuffer<u64>) -> Result<()> {
        unsafe { result::memset_d8_async(buf.ptr, 0xff, buf.bytes(), self.stream.raw) }
            .map_err(|e| cuda_err("resetting flags", e))
    }

    fn read_keys(&mut self, which: &'static str) -> Result<()> {
        let (src, len) =
            if which == "fail" { (self.fail.ptr, self.dims.batch) } else { (self.nonfinite.ptr, 2 * self.dims.batch) };
        unsafe { result::memcpy_dtoh_async(&mut self.host_keys[..len], src, self.stream.raw) }
            .map_err(|e| cuda_err("reading flags", e))?;
        self.stream.synchronize()
    }

    /// Elements per item of the diagonal-block and coupling-slot buffers (the kernels'
    /// `item_diag`, `item_slots`).
    fn item_extents(&self) -> (i64, i64) {
        let bs = (self.spec.ld * self.spec.ld) as i64;
        (self.dims.n_blocks as i64 * bs, self.n_slots as i64 * bs)
    }

    /// Whether the factor kernels may boost pivots (then counts are kept per item).
    fn boosting(&self) -> bool {
        self.numerics.boost > T::ZERO
    }

    /// Copies a batch mask to the device buffer the masked sequences read (ordered on the stream).
    fn set_mask(&mut self, mask: &[bool]) -> Result<()> {
        for (h, &m) in self.host_mask.iter_mut().zip(mask) {
            *h = m as u8;
        }
        unsafe { result::memcpy_htod_async(self.mask.ptr, &self.host_mask[..self.dims.batch], self.stream.raw) }
            .map_err(|e| cuda_err("copying the batch mask", e))
    }

    /// Uploads from host memory: one copy of the caller's raw arrays, then the conversion kernel.
    /// With `mask`, only the selected items are converted (and checked); the others keep what
    /// the plan holds.
    pub fn upload_host(&mut self, layout: Layout, diag: &[T], sub: &[T], mask: Option<&[bool]>) -> Result<()> {
        self.dev.bind()?;
        let (dl, sl) = (self.dims.diag_len(), self.dims.sub_len());
        let e_ptr = self.staging.ptr + (dl * std::mem::size_of::<T>()) as u64;
        let size = std::mem::size_of::<T>();
        let segments = [
            Segment { src: diag.as_ptr() as *const u8, len: dl * size, dst: self.staging.ptr },
            Segment { src: sub.as_ptr() as *const u8, len: sl * size, dst: e_ptr },
        ];
        self.stager.copy_to_device(&self.dev, self.stream.raw, &segments)?;
        unsafe { self.upload_device(layout, SourceFormat::Native, self.staging.ptr, e_ptr, mask) }
    }

    /// Uploads from device memory in the caller's layout (`diag`: B·N blocks, `sub`: B·(N−1)) of
    /// elements in `format`, widened on the device; with `mask` only the selected items.
    ///
    /// # Safety
    /// The pointers must be device memory of this context holding the documented extents.
    pub unsafe fn upload_device(
        &mut self,
        layout: Layout,
        format: SourceFormat,
        diag: u64,
        sub: u64,
        mask: Option<&[bool]>,
    ) -> Result<()> {
        self.dev.bind()?;
        let d = self.dims;
        self.fill_keys(&self.nonfinite)?;
        let mask_ptr = match mask {
            Some(m) => {
                self.set_mask(m)?;
                self.mask.ptr
            }
            None => 0u64,
        };
        let n = d.block_size as i32;
        let row_major = (layout == Layout::RowMajor) as i32;
        let (dst_d, dst_s) = (self.diag.ptr, self.slots.ptr);
        let (nb, nsub) = (d.n_blocks as i32, d.n_blocks as i32 - 1);
        let (item_d, item_s) = self.item_extents();
        // The sequential kernels read E_i untransposed; nested dissection in its schedule's orientation.
        let (no_flags, flags) = (0u64, if self.seq.is_some() { 0u64 } else { self.sub_transposed.ptr });
        let (lower, full) = (1i32, 0i32);
        let (keys_d, keys_e) = (self.nonfinite.ptr, self.nonfinite.ptr + 8 * d.batch as u64);
        let convert = &self.k.convert_blocks[format as usize];
        let (shift, no_shift) = (self.numerics.diag_shift, T::ZERO);
        let mut a = args![diag, dst_d, n, nb, item_d, row_major, no_flags, lower, mask_ptr, shift, keys_d];
        self.launch(convert, d.batch * d.n_blocks, 0, &mut a)?;
        if nsub > 0 {
            let mut a = args![sub, dst_s, n, nsub, item_s, row_major, flags, full, mask_ptr, no_shift, keys_e];
            self.launch(convert, d.batch * (d.n_blocks - 1), 0, &mut a)?;
        }
        self.read_keys("nonfinite")?;
        for item in 0..d.batch {
            for (k, operand) in
                [(self.host_keys[item], Operand::Diagonal), (self.host_keys[d.batch + item], Operand::SubDiagonal)]
            {
                if k != NO_FAILURE {
                    let (block, row, col) = ((k >> 32) as usize, ((k >> 16) & 0xffff) as usize, (k & 0xffff) as usize);
                    // Report in the caller's orientation (the key was taken before any transpose).
                    return Err(Error::NonFinite { operand, item, block, row, col });
                }
            }
        }
        Ok(())
    }

    /// Queues the factor kernels of one level.
    fn enqueue_factor_level(&self, l: usize) -> Result<()> {
        let d = self.dims;
        let (n, (item_d, item_s)) = (d.block_size as i32, self.item_extents());
        let (diag, slots, fail, lr) = (self.diag.ptr, self.slots.ptr, self.fail.ptr, self.levels[l]);
        let (thr, boost, boosted) = (self.numerics.threshold, self.numerics.boost, self.boosted.ptr);
        let level = l as i32;
        if let Some(sp) = &self.small {
            let (first, count) = sp.levels[l];
            let (recs, nw) = (sp.recs.ptr + (first * LREC * 4) as u64, count as i32);
            let (fact, xslots) = (sp.fact.ptr, sp.xslots.ptr);
            let mut a = args![diag, slots, fact, xslots, recs, nw, n, item_d, item_s, fail, level, thr, boost, boosted];
            let smem = self.spec.small_factor_smem_bytes();
            let ctas = d.batch * count;
            let func = if ctas >= sp.wide_min_ctas { &sp.factor_level_wide } else { &sp.factor_level };
            return unsafe { self.launch_with(func, ctas, SMALL_THREADS, smem, &mut a) };
        }
        let recs = self.recs.ptr + (lr.elim_offset * REC * 4) as u64;
        let nw = lr.n_elim as i32;
        let split = self.split_level(lr);
        let fill = (!split) as i32;
        let cluster = self.eliminate_cluster.as_ref().filter(|ec| split && 3 * d.batch * lr.n_elim <= ec.max_ctas);
        let split_elim = self.split_eliminate.as_ref().filter(|se| split && d.batch * lr.n_elim >= se.min_ctas);
        let mut a = args![diag, slots, recs, nw, n, item_d, item_s, fail, level, thr, boost, boosted];
        match (cluster, split_elim) {
            (Some(ec), _) => {
                let grid = 3 * d.batch * lr.n_elim;
                let (early, carveout) = (self.early_launch, self.factor_level_carveout(grid));
                let launch = KernelLaunch { grid, threads: ec.threads, smem: ec.smem, cluster: 3, early, carveout };
                unsafe { launch.launch(&ec.func, self.stream.raw, &mut a)? };
            }
            (None, Some(se)) => {
                let (elims, threads) = (d.batch * lr.n_elim, self.spec.eliminate_cluster_threads());
                let (potrf_smem, trsm_smem) =
                    (self.spec.potrf_split_smem_bytes(), self.spec.eliminate_cluster_smem_bytes());
                unsafe { self.launch_factor_level(&se.potrf, (elims, threads, potrf_smem), &mut a)? };
                let mut a = args![diag, slots, recs, nw, n, item_d, item_s, fail];
                unsafe { self.launch_factor_level(&se.trsm, (2 * elims, threads, trsm_smem), &mut a)? };
            }
            (None, None) => {
                let mut a = args![diag, slots, recs, nw, n, item_d, item_s, fail, level, thr, boost, boosted, fill];
                let smem = self.spec.factor_smem_bytes();
                let (grid, threads) = (d.batch * lr.n_elim, self.spec.factor_spec().threads);
                unsafe { self.launch_factor_level(&self.k.factor_eliminate, (grid, threads, smem), &mut a)? };
            }
        }
        let update_recs = self.recs.ptr + (lr.update_offset * REC * 4) as u64;
        let n_update = lr.n_update as i32;
        if split {
            let (elim_recs, n_elim) = (recs, nw);
            let mut a = args![diag, slots, elim_recs, n_elim, update_recs, n_update, n, item_d, item_s, fail];
            let wide_ctas = d.batch * self.spec.gemm_ctas_per_item(64, lr.n_update, lr.n_elim);
            if let Some(wide) = self.k.factor_gemm_wide.as_ref().filter(|_| wide_ctas >= self.gemm_wide_min_ctas) {
                let shape = (wide_ctas, GEMM_TILE_THREADS, self.spec.wide_gemm_smem_bytes());
                return unsafe { self.launch_factor_level(wide, shape, &mut a) };
            }
            let ctas = d.batch * self.spec.gemm_ctas_per_item(32, lr.n_update, lr.n_elim);
            return unsafe { self.launch_factor_level(&self.k.factor_gemm, (ctas, GEMM_TILE_THREADS, 0), &mut a) };
        }
        let mut a = args![diag, slots, update_recs, n_update, n, item_d, item_s, fail];
        let (grid, threads, smem) =
            (d.batch * lr.n_update, self.spec.factor_spec().threads, self.spec.update_smem_bytes());
        unsafe { self.launch_factor_level(&self.k.factor_update, (grid, threads, smem), &mut a) }
    }

    /// Whether a level's fills and updates run as tiles of the gemm launch: always above ld = 64,
    /// and for 32 < ld ≤ 64 at levels of fewer eliminations than SMs, where one CTA per fill and
    /// update left most SMs idle (H100, f64 n = 64: N = 64 −38 %; split at every level, f32
    /// n = 40 and 64 at N = 16384 were 26–62 % slower, bench/results/ab/README.md).
    fn split_level(&self, lr: LevelRecords) -> bool {
        self.spec.split_gemm() || (self.spec.can_split_levels() && self.dims.batch * lr.n_elim < self.fused_min_ctas)
    }

    /// Queues the whole factorization (every level, or the sequential sweep).
    fn enqueue_factor(&self) -> Result<()> {
        if let Some(sq) = &self.seq {
            return self.enqueue_seq_factor(&sq.factor, None);
        }
        if let Some((sp, wf)) = self.small.as_ref().and_then(|sp| Some((sp, sp.whole_factor.as_ref()?))) {
            let d = self.dims;
            let (n, nb, ns, (item_d, item_s)) =
                (d.block_size as i32, d.n_blocks as i32, self.n_slots as i32, self.item_extents());
            let (diag, slots, fact, xslots, linv) =
                (self.diag.ptr, self.slots.ptr, sp.fact.ptr, sp.xslots.ptr, sp.linv.ptr);
            let (prog, n_levels, prog_len) = (wf.prog.buf.ptr, wf.prog.n_levels as i32, wf.prog.len as i32);
            let (fail, thr, boost, boosted, report) =
                (self.fail.ptr, self.numerics.threshold, self.numerics.boost, self.boosted.ptr, self.reports_mapped);
            let mut a = args![
                diag, slots, fact, xslots, linv, prog, n_levels, prog_len, n, item_d, item_s, fail, thr, boost,
                boosted, nb, ns, report
            ];
            return unsafe { wf.enqueue(self.stream.raw, self.early_launch, d.batch, &mut a) };
        }
        // (The deep levels on a cluster where the plan has one, the others level by level.)
        let cluster = self.small.as_ref().and_then(|sp| Some((sp, sp.factor_cluster.as_ref()?)));
        let launched_levels = cluster.map_or(self.levels.len(), |(_, fc)| fc.from);
        let first_level = self.enqueue_factor_chunks()?;
        (first_level..launched_levels).try_for_each(|l| self.enqueue_factor_level(l))?;
        if let Some((sp, fc)) = cluster {
            let d = self.dims;
            let (n, (item_d, item_s)) = (d.block_size as i32, self.item_extents());
            let (diag, slots, fact, xslots) = (self.diag.ptr, self.slots.ptr, sp.fact.ptr, sp.xslots.ptr);
            let (prog, from, n_levels) = (fc.prog.ptr, fc.from as i32, fc.n_levels as i32);
            let (fail, thr, boost, boosted) =
                (self.fail.ptr, self.numerics.threshold, self.numerics.boost, self.boosted.ptr);
            let mut a =
                args![diag, slots, fact, xslots, prog, from, n_levels, n, item_d, item_s, fail, thr, boost, boosted];
            unsafe { fc.enqueue(self.stream.raw, d.batch, self.early_launch, &mut a)? };
        }
        self.enqueue_inverse()
    }

    /// Queues a partitioned schedule's chunk levels as one sweep per chunk (kernels/chunks.cu)
    /// and the separator sums after it; returns the first level still to launch (0: none ran).
    fn enqueue_factor_chunks(&self) -> Result<usize> {
        let Some((sp, ch)) = self.small.as_ref().and_then(|sp| Some((sp, sp.chunks.as_ref()?))) else { return Ok(0) };
        let d = self.dims;
        let (n, nb, (item_d, item_s)) = (d.block_size as i32, d.n_blocks as i32, self.item_extents());
        let item_sums = ((ch.n_chunks - 1) * self.spec.ld * self.spec.ld) as i64;
        let (diag, slots, fact, xslots, sums) =
            (self.diag.ptr, self.slots.ptr, sp.fact.ptr, sp.xslots.ptr, ch.sums.ptr);
        let (table, left_slots, n_chunks) = (ch.table.ptr, ch.left_slots.ptr, ch.n_chunks as i32);
        let (fail, thr, boost, boosted) =
            (self.fail.ptr, self.numerics.threshold, self.numerics.boost, self.boosted.ptr);
        let mut a = args![
            diag, slots, fact, xslots, sums, table, left_slots, n_chunks, nb, n, item_d, item_s, item_sums, fail, thr,
            boost, boosted
        ];
        unsafe { self.launch_with(&ch.factor, d.batch * ch.n_chunks, CHUNK_FACTOR_THREADS, ch.smem, &mut a)? };
        if ch.n_chunks > 1 {
            let levels = ch.levels as i32;
            let mut a = args![diag, sums, table, n_chunks, levels, n, item_d, item_sums, fail];
            unsafe { self.launch_with(&ch.separators, d.batch * (ch.n_chunks - 1), 128, 0, &mut a)? };
        }
        Ok(ch.levels)
    }

    /// Small path: queues L⁻¹ of every diagonal block, the factor's form the solve reads (one
    /// launch for all levels, kernels/small.cu btchol_invert_small: 6 µs at N = 64 and 76 µs at
    /// N = 16384 for f64 n = 32 on the H100, 5–8 % of the factor, which buys 15–37 % of every
    /// solve; per-level launches beside the next levels on a second stream measured slower,
    /// bench/results/experiments/README.md). Nothing elsewhere.
    fn enqueue_inverse(&self) -> Result<()> {
        let Some(sp) = &self.small else { return Ok(()) };
        let d = self.dims;
        let (fact, linv, item_d, fail) = (sp.fact.ptr, sp.linv.ptr, self.item_extents().0, self.fail.ptr);
        let (nb, b, n, report) = (d.n_blocks as i32, d.batch as i32, d.block_size as i32, self.reports_mapped);
        let mut a = args![fact, linv, nb, b, n, item_d, fail, report];
        let grid = (d.batch * d.n_blocks).div_ceil(INV_THREADS / 32);
        unsafe { self.launch_with(&sp.invert, grid, INV_THREADS, 0, &mut a) }
    }

    /// Reads the per-item failure keys (and boosted-pivot counts) back, one synchronisation;
    /// with `mask`, only the selected items' (the others' keys on the device are their saved ones,
    /// which for an item never factored mean nothing).
    fn read_status(&mut self, status: &mut [ItemStatus], boosted: &mut [u32], mask: Option<&[bool]>) -> Result<()> {
        let b = self.dims.batch;
        // The small path's last factor kernel reported the keys (`reports`): a wait, no copy.
        let reported = self.small.is_some() && !self.boosting();
        if reported {
            self.stream.synchronize()?;
        } else {
            if self.boosting() {
                unsafe { result::memcpy_dtoh_async(&mut self.host_boosted[..b], self.boosted.ptr, self.stream.raw) }
                    .map_err(|e| cuda_err("reading boosted-pivot counts", e))?;
            }
            self.read_keys("fail")?;
        }
        let keys = if reported { &self.reports[..b] } else { &self.host_keys[..b] };
        let selected = |item: usize| mask.map_or(true, |m| m[item]);
        for item in (0..b).filter(|&b| selected(b)) {
            if self.boosting() {
                boosted[item] = self.host_boosted[item];
            }
            let k = keys[item];
            status[item] = if k == NO_FAILURE {
                ItemStatus::Factored
            } else {
                ItemStatus::NotPositiveDefinite {
                    block: ((k >> 16) & ((1 << 26) - 1)) as usize,
                    column: (k & 0xffff) as usize,
                }
            };
        }
        Ok(())
    }

    /// Factors every item; one read-back of the per-item failure keys (and boosted-pivot
    /// counts) at the end.
    pub fn factor(&mut self, status: &mut [ItemStatus], boosted: &mut [u32]) -> Result<()> {
        self.dev.bind()?;
        self.run(Sequence::Factor)?;
        self.read_status(status, boosted, None)
    }

    /// Factors the items `mask` selects; the others keep their factor, status and counts (the
    /// kernels skip them, see kernels/layout.cu `btchol_mask_begin`).
    pub fn factor_masked(&mut self, mask: &[bool], status: &mut [ItemStatus], boosted: &mut [u32]) -> Result<()> {
        self.dev.bind()?;
        self.set_mask(mask)?;
        self.run(Sequence::FactorMasked)?;
        self.read_status(status, boosted, Some(mask))
    }

    /// Factor and solve in one launch sequence with one synchronisation (`Sequence::FactorSolve`;
    /// on the large-block path the forward substitution of each level is queued right behind
    /// that level's factorization, paper §4.5), so no host round trip separates them. Right-hand
    /// sides in host memory, at most `max_nrhs` columns (the plan falls back to factor + solve for
    /// more).
    pub fn factor_solve_host(
        &mut self,
        status: &mut [ItemStatus],
        boosted: &mut [u32],
        shape: RhsShape,
        data: &mut [T],
    ) -> Result<()> {
        debug_assert!(shape.nrhs <= self.max_nrhs);
        self.dev.bind()?;
        self.pack_host(shape, data, 0, shape.nrhs, None);
        if self.staged_solve(shape.nrhs) {
            self.run(Sequence::FactorSolveStaged(shape.nrhs))?;
            self.read_status(status, boosted, None)?;
            self.unpack_host(status, shape, data, 0, shape.nrhs, None);
            return Ok(());
        }
        let used = self.dims.batch * self.dims.rows() * shape.nrhs;
        unsafe { result::memcpy_htod_async(self.rhs.ptr, &self.host_rhs[..used], self.stream.raw) }
            .map_err(|e| cuda_err("copying b", e))?;
        self.run(Sequence::FactorSolve(shape.nrhs))?;
        let x = self.solution_ptr();
        unsafe { result::memcpy_dtoh_async(&mut self.host_rhs[..used], x, self.stream.raw) }
            .map_err(|e| cuda_err("copying x", e))?;
        self.read_status(status, boosted, None)?;
        self.unpack_host(status, shape, data, 0, shape.nrhs, None);
        Ok(())
    }

    /// Where a solve leaves its solution: the small path solves from `rhs` into `z`.
    fn solution_ptr(&self) -> u64 {
        self.small.as_ref().map_or(self.rhs.ptr, |s| s.z.ptr)
    }

    /// The factor's diagonal blocks (the small path keeps them apart from the input).
    fn factor_diag_ptr(&self) -> u64 {
        self.small.as_ref().map_or(self.diag.ptr, |s| s.fact.ptr)
    }

    pub fn max_nrhs(&self) -> usize {
        self.max_nrhs
    }

    /// Queues the forward-substitution kernels of one level on the packed right-hand sides.
    fn enqueue_forward_level(&self, l: usize, m: usize) -> Result<()> {
        let d = self.dims;
        let (n, mm, rows) = (d.block_size as i32, m as i32, d.rows() as i32);
        let ((item_d, item_s), item_r) = (self.item_extents(), (d.rows() * m) as i64);
        let (diag, slots, y, fail, lr) = (self.diag.ptr, self.slots.ptr, self.rhs.ptr, self.fail.ptr, self.levels[l]);
        if let Some(sp) = &self.small {
            let (first, count) = sp.levels[l];
            let (recs, nw) = (sp.recs.ptr + (first * LREC * 4) as u64, count as i32);
            let (linv, xslots, z) = (sp.linv.ptr, sp.xslots.ptr, sp.z.ptr);
            let mut a = args![linv, xslots, y, z, recs, nw, n, mm, rows, item_d, item_s, item_r, fail];
            return unsafe { self.launch_with(&sp.forward_level, d.batch * count, SMALL_THREADS, 0, &mut a) };
        }
        let rec = |off: usize| self.recs.ptr + (off * REC * 4) as u64;
        let (recs, nw) = (rec(lr.elim_offset), lr.n_elim as i32);
        let mut a = args![diag, y, recs, nw, n, mm, rows, item_d, item_r, fail];
        let smem = self.spec.solve_smem_bytes();
        unsafe { self.launch(&self.k.forward_eliminate, d.batch * lr.n_elim, smem, &mut a)? };
        let (recs, nw) = (rec(lr.update_offset), lr.n_update as i32);
        let mut a = args![slots, y, recs, nw, n, mm, rows, item_s, item_r, fail];
        unsafe { self.launch(&self.k.forward_update, d.batch * lr.n_update, 0, &mut a) }
    }

    /// Queues the backward substitution of levels `..below` (in reverse).
    fn enqueue_backward(&self, m: usize, from: usize, below: usize) -> Result<()> {
        let d = self.dims;
        let (n, mm, rows) = (d.block_size as i32, m as i32, d.rows() as i32);
        let ((item_d, item_s), item_r) = (self.item_extents(), (d.rows() * m) as i64);
        let (diag, slots, y, fail) = (self.diag.ptr, self.slots.ptr, self.rhs.ptr, self.fail.ptr);
        for lr in self.levels[from..below].iter().rev() {
            let (recs, nw) = (self.recs.ptr + (lr.elim_offset * REC * 4) as u64, lr.n_elim as i32);
            if let Some(sp) = &self.small {
                let (linv, xslots, z) = (sp.linv.ptr, sp.xslots.ptr, sp.z.ptr);
                let mut a = args![linv, xslots, z, recs, nw, n, mm, rows, item_d, item_s, item_r, fail];
                unsafe { self.launch_with(&sp.backward_level, d.batch * lr.n_elim, SMALL_THREADS, 0, &mut a)? };
                continue;
            }
            let mut a = args![diag, slots, y, recs, nw, n, mm, rows, item_d, item_s, item_r, fail];
            let smem = self.spec.solve_smem_bytes();
            unsafe { self.launch(&self.k.backward_eliminate, d.batch * lr.n_elim, smem, &mut a)? };
        }
        Ok(())
    }

    /// Queues the whole solve of `m` packed right-hand sides. `after_writer`: the kernel queued
    /// just before writes the factor or the failure keys (the factor's last kernel, a batch
    /// mask's), so the solve's first kernel may read neither before waiting for it.
    fn enqueue_solve(&self, m: usize, after_writer: bool) -> Result<()> {
        if let Some(sq) = &self.seq {
            return self.enqueue_seq_solve(sq, m, false);
        }
        let tail_from = self.tail_from(m);
        let chunk_levels = self.enqueue_chunks_solve(m, true)?;
        (chunk_levels..tail_from).try_for_each(|l| self.enqueue_forward_level(l, m))?;
        // (After a forward level, which waits for its predecessor before its dependant may start.)
        self.enqueue_solve_tail(m, after_writer && tail_from == 0 && chunk_levels == 0)?;
        self.enqueue_backward(m, chunk_levels, tail_from)?;
        self.enqueue_chunks_solve(m, false).map(|_| ())
    }

    /// Queues a sequential factor kernel: `forward` = Some(m) for the one with the forward
    /// substitution of m packed right-hand sides (SeqPath::factor_forward), None for the others.
    fn enqueue_seq_factor(&self, k: &SeqKernel, forward: Option<usize>) -> Result<()> {
        let d = self.dims;
        let m = forward.unwrap_or(0);
        let (n, nb, mm, rows) = (d.block_size as i32, d.n_blocks as i32, m as i32, d.rows() as i32);
        let ((item_d, item_s), item_r) = (self.item_extents(), (d.rows() * m) as i64);
        let (diag, slots, fail, y) = (self.diag.ptr, self.slots.ptr, self.fail.ptr, self.rhs.ptr);
        let (thr, boost, boosted) = (self.numerics.threshold, self.numerics.boost, self.boosted.ptr);
        let mut a = args![diag, slots, nb, n, item_d, item_s, fail, thr, boost, boosted, y, mm, rows, item_r];
        // (The other kernels take the first ten.)
        let used = if forward.is_some() { a.len() } else { 10 };
        unsafe { self.launch_seq(k, &mut a[..used]) }
    }

    /// Queues the sequential path's solve of `m` packed right-hand sides; `backward_only`: the
    /// factor did the forward sweep (`enqueue_factor_solve`).
    fn enqueue_seq_solve(&self, sq: &SeqPath, m: usize, backward_only: bool) -> Result<()> {
        let d = self.dims;
        let (n, nb, mm, rows) = (d.block_size as i32, d.n_blocks as i32, m as i32, d.rows() as i32);
        let ((item_d, item_s), item_r) = (self.item_extents(), (d.rows() * m) as i64);
        let (diag, slots, y, fail, bwd) =
            (self.diag.ptr, self.slots.ptr, self.rhs.ptr, self.fail.ptr, backward_only as i32);
        let mut a = args![diag, slots, y, nb, n, mm, rows, item_d, item_s, item_r, fail, bwd];
        unsafe { self.launch_seq(&sq.solve, &mut a) }
    }

    /// Queues the factor and the solve of `m` packed right-hand sides (after the reset):
    /// the one-warp sequential factor does the forward substitution itself and the one-warp
    /// solve only the backward one, so the solve reads the factor's blocks once instead of twice;
    /// the large-block path queues each level's forward substitution right behind that level's
    /// factorization (paper §4.5); the small-block path (its solve needs every level's L⁻¹) and
    /// the other sequential kernels factor first.
    fn enqueue_factor_solve(&self, m: usize) -> Result<()> {
        if let Some(sq) = &self.seq {
            let Some(ff) = &sq.factor_forward else {
                self.enqueue_factor()?;
                return self.enqueue_solve(m, true);
            };
            self.enqueue_seq_factor(ff, Some(m))?;
            return self.enqueue_seq_solve(sq, m, true);
        }
        if self.small.is_some() {
            self.enqueue_factor()?;
            return self.enqueue_solve(m, true);
        }
        for l in 0..self.levels.len() {
            self.enqueue_factor_level(l)?;
            self.enqueue_forward_level(l, m)?;
        }
        self.enqueue_backward(m, 0, self.levels.len())
    }

    /// Queues the chunk levels of the solve as one sweep per chunk (kernels/chunks.cu): the
    /// forward sweep and the separators' sums (`forward`), or the backward sweep; returns the
    /// number of levels they stand for (0: the plan has no chunk kernels).
    fn enqueue_chunks_solve(&self, m: usize, forward: bool) -> Result<usize> {
        let Some((sp, ch)) = self.small.as_ref().and_then(|sp| Some((sp, sp.chunks.as_ref()?))) else { return Ok(0) };
        let d = self.dims;
        let (n, nb, mm, rows) = (d.block_size as i32, d.n_blocks as i32, m as i32, d.rows() as i32);
        let ((item_d, item_s), item_r) = (self.item_extents(), (d.rows() * m) as i64);
        let (linv, xslots, y, z, fail) = (sp.linv.ptr, sp.xslots.ptr, self.rhs.ptr, sp.z.ptr, self.fail.ptr);
        let (table, left_slots, n_chunks, sep_rhs) =
            (ch.table.ptr, ch.left_slots.ptr, ch.n_chunks as i32, ch.sep_rhs.ptr);
        let smem = self.spec.chunk_solve_smem_bytes(m);
        let grid = d.batch * ch.n_chunks;
        if forward {
            let mut a = args![
                linv, xslots, y, z, sep_rhs, table, left_slots, n_chunks, nb, n, mm, rows, item_d, item_s, item_r, fail
            ];
            unsafe { self.launch_with(&ch.forward, grid, CHUNK_THREADS, smem, &mut a)? };
            if ch.n_chunks > 1 {
                let mut a = args![y, sep_rhs, table, n_chunks, n, mm, rows, item_r, fail];
                unsafe {
                    self.launch_with(&ch.solve_separators, d.batch * (ch.n_chunks - 1), CHUNK_THREADS, 0, &mut a)?
                };
            }
        } else {
            let mut a =
                args![linv, xslots, z, table, left_slots, n_chunks, nb, n, mm, rows, item_d, item_s, item_r, fail];
            unsafe { self.launch_with(&ch.backward, grid, CHUNK_THREADS, smem, &mut a)? };
        }
        Ok(ch.levels)
    }

    /// The whole solve in one CTA per item, where the plan has it and it takes `m` right-hand sides.
    fn whole_solve(&self, m: usize) -> Option<&WholeSolve> {
        self.small.as_ref()?.whole.as_ref().filter(|w| w.takes(m))
    }

    /// The cluster solve and its launch, where the plan has one and it takes `m` right-hand
    /// sides (and the whole solve does not).
    fn cluster_solve(&self, m: usize) -> Option<(&ClusterSolve, ClusterLaunch)> {
        let cl = self.small.as_ref()?.cluster.as_ref()?;
        if self.whole_solve(m).is_some() {
            return None;
        }
        Some((cl, cl.launch_for(m, self.dims.batch, self.early_launch)?))
    }

    /// First level of the merged deep-level solve of `m` right-hand sides (the number of levels
    /// when there is none; 0 where the whole solve takes every level).
    fn tail_from(&self, m: usize) -> usize {
        if self.whole_solve(m).is_some() {
            return 0;
        }
        match self.cluster_solve(m) {
            Some((cl, _)) => cl.from,
            None => self.small.as_ref().map_or(self.levels.len(), |sp| sp.tail_from),
        }
    }

    /// Queues the merged forward + backward substitution of the deep levels (small blocks only;
    /// nothing on the other paths).
    fn enqueue_solve_tail(&self, m: usize, after_writer: bool) -> Result<()> {
        let Some(sp) = &self.small else { return Ok(()) };
        let d = self.dims;
        let (n, mm, rows) = (d.block_size as i32, m as i32, d.rows() as i32);
        let ((item_d, item_s), item_r) = (self.item_extents(), (d.rows() * m) as i64);
        let (linv, xslots, y, z, fail) = (sp.linv.ptr, sp.xslots.ptr, self.rhs.ptr, sp.z.ptr, self.fail.ptr);
        if let Some(ws) = self.whole_solve(m) {
            let (prog, n_levels, prog_len) = (ws.prog.buf.ptr, ws.prog.n_levels as i32, ws.prog.len as i32);
            let (nb, ns) = (d.n_blocks as i32, self.n_slots as i32);
            let mut a =
                args![linv, xslots, y, z, prog, n_levels, prog_len, n, mm, rows, item_d, item_s, item_r, fail, nb, ns];
            return unsafe { ws.enqueue(self.stream.raw, self.early_launch, d.batch, m, &mut a) };
        }
        if let Some((cl, cfg)) = self.cluster_solve(m) {
            let packed = (1, rows as i64, item_r);
            return self.launch_cluster_solve(cl, cfg, m, after_writer, (y, packed), (z, packed), 0);
        }
        let (lrecs, erecs, tail) = (sp.recs.ptr, self.recs.ptr, sp.tail.ptr);
        let n_tail = (self.levels.len() - sp.tail_from) as i32;
        if n_tail == 0 {
            return Ok(()); // (a single chunk: the chunk kernels solve every level)
        }
        let mut a = args![linv, xslots, y, z, lrecs, erecs, tail, n_tail, n, mm, rows, item_d, item_s, item_r, fail];
        let smem = self.spec.tail_solve_smem_bytes();
        unsafe { self.launch_with(&sp.solve_tail, d.batch, TAIL_THREADS, smem, &mut a) }
    }

    /// Queues the cluster solve of `m` right-hand sides read from `src` and written to `dst`
    /// (pointer, and (row, column, item) strides in elements); `keys`: 0, or where the fused
    /// kernel reports its non-finite key (kernels/small.cu `btchol_solve_cluster_small`).
    #[allow(clippy::too_many_arguments)]
    fn launch_cluster_solve(
        &self,
        cl: &ClusterSolve,
        cfg: ClusterLaunch,
        m: usize,
        after_writer: bool,
        src: (u64, (i64, i64, i64)),
        dst: (u64, (i64, i64, i64)),
        keys: u64,
    ) -> Result<()> {
        let Some(sp) = &self.small else { unreachable!("a cluster solve belongs to the small-block path") };
        let d = self.dims;
        let (n, mm, (item_d, item_s)) = (d.block_size as i32, m as i32, self.item_extents());
        let (linv, xslots, fail) = (sp.linv.ptr, sp.xslots.ptr, self.fail.ptr);
        let ((y, (y_rs, y_cs, y_item)), (z, (z_rs, z_cs, z_item))) = (src, dst);
        let (plan, n_phases) = (cl.plan.ptr, 2 * (self.levels.len() - cl.from) as i32);
        let (prog_ints, vec_slots, ring) =
            (cl.layout.prog_ints as i32, cl.layout.vec_slots as i32, cfg.ring_slots as i32);
        let stage_early = !after_writer as i32;
        let mut a = args![
            linv,
            xslots,
            y,
            y_rs,
            y_cs,
            y_item,
            z,
            z_rs,
            z_cs,
            z_item,
            plan,
            n_phases,
            prog_ints,
            vec_slots,
            ring,
            n,
            mm,
            item_d,
            item_s,
            fail,
            stage_early,
            keys
        ];
        unsafe { cfg.launch.launch(&cl.func, self.stream.raw, &mut a) }
    }

    /// The cluster solve that takes a one-pass device solve whole, reading b and writing x in the
    /// caller's arrays (no reset, pack or unpack launches): a single native-format system whose
    /// every level the cluster kernel solves. `BTCHOL_FUSED_SOLVE=0` turns it off (A/B runs).
    fn fused_cluster_solve(&self, m: usize, format: SourceFormat) -> Option<(&ClusterSolve, ClusterLaunch)> {
        if self.dims.batch != 1 || format != SourceFormat::Native || !self.fused_solve || self.seq.is_some() {
            return None;
        }
        self.cluster_solve(m).filter(|(cl, _)| cl.from == 0)
    }

    /// Host right-hand sides of a single system that the fused cluster solve takes whole (at most
    /// `max_nrhs` columns, no mask): the kernel reads them from and writes them into the mapped
    /// page-locked staging buffer itself, so the solve has no copy before or after it.
    fn staged_solve(&self, nrhs: usize) -> bool {
        // (Mapped and copied host right-hand sides measured the same, 4 KB to 4 MB, H200 2026-11-29:
        // bench/results/experiments/nvidia-h200-2026-11-29-host-rhs-staged-vs-copied.txt.)
        nrhs <= self.max_nrhs && self.fused_cluster_solve(nrhs, SourceFormat::Native).is_some()
    }

    /// Queues the fused cluster solve of `m` packed right-hand sides in the staging buffer.
    fn enqueue_solve_staged(&self, m: usize, after_writer: bool) -> Result<()> {
        let (cl, cfg) = self.fused_cluster_solve(m, SourceFormat::Native).expect("checked by staged_solve");
        let rows = self.dims.rows() as i64;
        let packed = (self.host_rhs_mapped, (1, rows, rows * m as i64));
        self.launch_cluster_solve(cl, cfg, m, after_writer, packed, packed, self.solve_reports_mapped())
    }

    /// Queues the mask kernels around a masked sequence (`begin`: before, else after).
    fn enqueue_mask(&self, begin: bool, factor: bool) -> Result<()> {
        let b = self.dims.batch;
        let (fail, saved, mask, batch, boosted) =
            (self.fail.ptr, self.saved_keys.ptr, self.mask.ptr, b as i32, self.boosted.ptr);
        let grid = b.div_ceil(128);
        if begin {
            let factor = factor as i32;
            let mut a = args![fail, saved, mask, batch, factor, boosted];
            unsafe { self.launch_with(&self.k.mask_begin, grid, 128, 0, &mut a) }
        } else {
            let mut a = args![fail, saved, mask, batch];
            unsafe { self.launch_with(&self.k.mask_end, grid, 128, 0, &mut a) }
        }
    }

    /// Queues a launch sequence on the current stream, kernel by kernel.
    fn enqueue(&self, seq: Sequence) -> Result<()> {
        let reset = || -> Result<()> {
            self.fill_keys(&self.fail)?;
            if self.boosting() {
                unsafe { result::memset_d8_async(self.boosted.ptr, 0, self.boosted.bytes(), self.stream.raw) }
                    .map_err(|e| cuda_err("resetting counts", e))?;
            }
            Ok(())
        };
        match seq {
            Sequence::Factor => {
                reset()?;
                self.enqueue_factor()
            }
            Sequence::Solve(m) => self.enqueue_solve(m, false),
            Sequence::FactorSolve(m) => {
                reset()?;
                self.enqueue_factor_solve(m)
            }
            Sequence::FactorSolveDevice(ds) => {
                reset()?;
                self.fill_keys(&self.nonfinite)?;
                self.enqueue_pack(ds)?;
                self.enqueue_factor_solve(ds.m)?;
                self.enqueue_unpack(ds)
            }
            Sequence::FactorMasked => {
                self.enqueue_mask(true, true)?;
                self.enqueue_factor()?;
                self.enqueue_mask(false, true)
            }
            Sequence::SolveMasked(m) => {
                self.enqueue_mask(true, false)?;
                self.enqueue_solve(m, true)?;
                self.enqueue_mask(false, false)
            }
            Sequence::SolveDevice(ds) => self.enqueue_solve_device(ds),
            Sequence::SolveStaged(m) => self.enqueue_solve_staged(m, false),
            Sequence::FactorSolveStaged(m) => {
                reset()?;
                self.enqueue_factor()?;
                self.enqueue_solve_staged(m, true)
            }
        }
    }

    /// Runs a launch sequence on the plan's stream: replays its graph, capturing it on first use
    /// (the plan's own pointers never change, and a caller's are part of the sequence's key, so a
    /// graph stays valid for the plan's life and across `set_stream`).
    fn run(&mut self, seq: Sequence) -> Result<()> {
        let Some(graphs) = self.graphs.as_ref() else { return self.enqueue(seq) };
        if !graphs.contains_key(&seq) {
            let per_call = |k: &Sequence| matches!(k, Sequence::SolveDevice(_) | Sequence::FactorSolveDevice(_));
            if per_call(&seq) && graphs.keys().filter(|k| per_call(k)).count() >= MAX_DEVICE_SOLVE_GRAPHS {
                // (No graph is destroyed while a launch of it may still be running.)
                self.stream.synchronize()?;
                self.graphs.as_mut().expect("graphs enabled").retain(|k, _| !per_call(k));
            }
            // Capture on the private stream: enqueue() launches on self.stream, so swap them.
            std::mem::swap(&mut self.stream, &mut self.capture_stream);
            let graph = Graph::capture(&self.dev, &self.stream, || self.enqueue(seq));
            std::mem::swap(&mut self.stream, &mut self.capture_stream);
            self.graphs.as_mut().expect("graphs enabled").insert(seq, graph?);
        }
        self.graphs.as_ref().expect("graphs enabled")[&seq].launch(&self.stream)
    }

    /// Packs columns c0..c0+m of host right-hand sides into the staging buffer (the items `mask`
    /// selects, or all), over several threads when they are large (`host_parallel`).
    fn pack_host(&mut self, shape: RhsShape, data: &[T], c0: usize, m: usize, mask: Option<&[bool]>) {
        let (rows, (rs, cs)) = (self.dims.rows(), Self::strides(&shape));
        let staging = Disjoint(self.host_rhs.as_mut_ptr());
        shares(self.dims.batch * m * rows, std::mem::size_of::<T>(), Threads::Host, |range| -> Option<()> {
            column_runs(range, rows, m, |b, c, rr| {
                if mask.is_some_and(|mk| !mk[b]) {
                    return;
                }
                let (at, len) = (b * shape.item_stride + (c0 + c) * cs + rr.start * rs, rr.len());
                // SAFETY: each (item, column, row) has its own packed element; the shares are disjoint.
                let dst =
                    unsafe { std::slice::from_raw_parts_mut(staging.ptr().add((b * m + c) * rows + rr.start), len) };
                if rs == 1 {
                    dst.copy_from_slice(&data[at..at + len]);
                } else {
                    dst.iter_mut().enumerate().for_each(|(r, d)| *d = data[at + r * rs]);
                }
            });
            None
        });
    }

    /// Unpacks the staging buffer into host right-hand sides, for factored (and selected) items.
    fn unpack_host(
        &self,
        status: &[ItemStatus],
        shape: RhsShape,
        data: &mut [T],
        c0: usize,
        m: usize,
        mask: Option<&[bool]>,
    ) {
        let wanted = |b: usize| status[b] == ItemStatus::Factored && mask.map_or(true, |mk| mk[b]);
        let (rows, (rs, cs)) = (self.dims.rows(), Self::strides(&shape));
        let (out, out_len, staged) = (Disjoint(data.as_mut_ptr()), data.len(), &self.host_rhs[..]);
        shares(self.dims.batch * m * rows, std::mem::size_of::<T>(), Threads::Host, |range| -> Option<()> {
            column_runs(range, rows, m, |b, c, rr| {
                if !wanted(b) {
                    return;
                }
                let len = rr.len();
                let src = &staged[(b * m + c) * rows + rr.start..][..len];
                let at = b * shape.item_stride + (c0 + c) * cs + rr.start * rs;
                assert!(at + (len - 1) * rs < out_len, "right-hand side checked against its shape");
                // SAFETY: in bounds (above); distinct (item, row, column) have distinct offsets
                // (RhsShape::required_len rejects overlapping items), so the shares are disjoint.
                unsafe {
                    if rs == 1 {
                        std::ptr::copy_nonoverlapping(src.as_ptr(), out.ptr().add(at), len);
                    } else {
                        src.iter().enumerate().for_each(|(r, &v)| *out.ptr().add(at + r * rs) = v);
                    }
                }
            });
            None
        });
    }

    /// Element strides (rs, cs) of a right-hand-side shape.
    fn strides(shape: &RhsShape) -> (usize, usize) {
        match shape.layout {
            Layout::RowMajor => (shape.ld, 1),
            Layout::ColMajor => (1, shape.ld),
        }
    }

    /// Solves right-hand sides in host memory: packed on the host, solved on the device in chunks
    /// of `max_nrhs` columns, unpacked for the factored items only. With `mask`, only the
    /// selected items' right-hand sides are read, solved and written.
    pub fn solve_host(
        &mut self,
        status: &[ItemStatus],
        shape: RhsShape,
        data: &mut [T],
        mask: Option<&[bool]>,
    ) -> Result<()> {
        self.dev.bind()?;
        if mask.is_none() && self.staged_solve(shape.nrhs) {
            self.pack_host(shape, data, 0, shape.nrhs, None);
            self.run(Sequence::SolveStaged(shape.nrhs))?;
            self.stream.synchronize()?;
            self.unpack_host(status, shape, data, 0, shape.nrhs, None);
            return Ok(());
        }
        if let Some(mk) = mask {
            self.set_mask(mk)?;
        }
        let mut c0 = 0;
        while c0 < shape.nrhs {
            let m = self.max_nrhs.min(shape.nrhs - c0);
            self.pack_host(shape, data, c0, m, mask);
            let used = self.dims.batch * self.dims.rows() * m;
            unsafe { result::memcpy_htod_async(self.rhs.ptr, &self.host_rhs[..used], self.stream.raw) }
                .map_err(|e| cuda_err("copying b", e))?;
            self.run(if mask.is_some() { Sequence::SolveMasked(m) } else { Sequence::Solve(m) })?;
            let x = self.solution_ptr();
            unsafe { result::memcpy_dtoh_async(&mut self.host_rhs[..used], x, self.stream.raw) }
                .map_err(|e| cuda_err("copying x", e))?;
            self.stream.synchronize()?;
            self.unpack_host(status, shape, data, c0, m, mask);
            c0 += m;
        }
        Ok(())
    }

    /// Solves right-hand sides in device memory (same shape rules as host ones), on the stream:
    /// `b` in `format` (read), the solution written to `x` in the plan's precision (same shape;
    /// `x` may be `b` for the native format).
    ///
    /// # Safety
    /// `b` and `x` must be device memory of this context holding `shape.required_len(dims)`
    /// elements of their formats.
    pub unsafe fn solve_device(&mut self, shape: RhsShape, format: SourceFormat, b: u64, x: u64) -> Result<()> {
        self.dev.bind()?;
        if shape.nrhs <= self.max_nrhs {
            // One pass: reset, pack, solve and unpack are one graph for this caller array.
            self.run(Sequence::SolveDevice(self.device_pass(&shape, format, (b, x), 0)))?;
        } else {
            // Several passes: a graph per pass would crowd out the cache (each pass's pointers
            // differ), so pack and unpack are launched around the shared solve graph.
            self.fill_keys(&self.nonfinite)?;
            for c0 in (0..shape.nrhs).step_by(self.max_nrhs) {
                let ds = self.device_pass(&shape, format, (b, x), c0);
                self.enqueue_pack(ds)?;
                self.run(Sequence::Solve(ds.m))?;
                self.enqueue_unpack(ds)?;
            }
        }
        // One wait, after everything is queued (the last kernel reported the keys, no copy): a
        // non-finite value anywhere means no column of x was written from then on (chunks solved
        // before it are kept, as with host arrays).
        self.stream.synchronize()?;
        self.device_rhs_nonfinite()
    }

    /// Factor and solve of right-hand sides in device memory (at most `max_nrhs` columns) as one
    /// launch sequence with one wait (`Sequence::FactorSolveDevice`). The outcome of each item
    /// goes to `status` as from `factor`; a non-finite value in b is reported by
    /// `device_rhs_nonfinite` afterwards (the factor stands; x is not written).
    ///
    /// # Safety
    /// `b` and `x` must be device memory of this context holding `shape`'s extent.
    pub unsafe fn factor_solve_device(
        &mut self,
        status: &mut [ItemStatus],
        boosted: &mut [u32],
        shape: RhsShape,
        b: u64,
        x: u64,
    ) -> Result<()> {
        debug_assert!(shape.nrhs <= self.max_nrhs);
        self.dev.bind()?;
        let ds = self.device_pass(&shape, SourceFormat::Native, (b, x), 0);
        self.run(Sequence::FactorSolveDevice(ds))?;
        self.read_status(status, boosted, None)
    }

    /// The pass of a device solve from column `c0` (at most `max_nrhs` columns) of the caller's
    /// b and x (elements of `format` in b, of the plan's type in x).
    fn device_pass(&self, shape: &RhsShape, format: SourceFormat, (b, x): (u64, u64), c0: usize) -> DeviceSolve {
        let (rs, cs) = Self::strides(shape);
        let elem_in = if format == SourceFormat::Native { std::mem::size_of::<T>() } else { 2 };
        DeviceSolve {
            m: self.max_nrhs.min(shape.nrhs - c0),
            col0: c0,
            format,
            src: b + (c0 * cs * elem_in) as u64,
            dst: x + (c0 * cs * std::mem::size_of::<T>()) as u64,
            strides: (rs, cs, shape.item_stride),
        }
    }

    /// The first non-finite value the last device solve's pack found (its item, block, row and
    /// column), as the error; read after the wait that followed it.
    pub fn device_rhs_nonfinite(&self) -> Result<()> {
        let d = self.dims;
        let keys = &self.reports[d.batch..2 * d.batch];
        if let Some(item) = keys.iter().position(|&k| k != NO_FAILURE) {
            let k = keys[item];
            let (r, c) = ((k >> 32) as usize, (k & 0xffff_ffff) as usize);
            return Err(Error::NonFinite {
                operand: Operand::RightHandSide,
                item,
                block: r / d.block_size,
                row: r % d.block_size,
                col: c,
            });
        }
        Ok(())
    }

    /// Queues a one-pass `solve_device`: the input checks' reset, pack, solve, unpack, or the
    /// fused cluster solve that does all four.
    fn enqueue_solve_device(&self, ds: DeviceSolve) -> Result<()> {
        if let Some((cl, mut cfg)) = self.fused_cluster_solve(ds.m, ds.format) {
            // The kernel reads the caller's b before its wait for the kernel before it, which on
            // a caller's stream may be the one writing b: it starts only once that one is done.
            cfg.launch.early = false;
            let (rs, cs, is_) = (ds.strides.0 as i64, ds.strides.1 as i64, ds.strides.2 as i64);
            let keys = self.solve_reports_mapped();
            return self.launch_cluster_solve(
                cl,
                cfg,
                ds.m,
                false,
                (ds.src, (rs, cs, is_)),
                (ds.dst, (rs, cs, is_)),
                keys,
            );
        }
        self.fill_keys(&self.nonfinite)?;
        self.enqueue_pack(ds)?;
        self.enqueue_solve(ds.m, false)?;
        self.enqueue_unpack(ds)
    }

    /// Arguments shared by pack and unpack of a pass: (rows, m, row/column/item strides, item
    /// extent, CTAs per item, grid), at one element per thread (each thread's load is then the
    /// only memory latency it waits for).
    fn rhs_copy_shape(&self, ds: &DeviceSolve) -> (i32, i32, i64, i64, i64, i64, i32, usize) {
        let d = self.dims;
        let ctas = (d.rows() * ds.m).div_ceil(self.spec.threads).clamp(1, 4096);
        let (rs, cs, is_) = (ds.strides.0 as i64, ds.strides.1 as i64, ds.strides.2 as i64);
        (d.rows() as i32, ds.m as i32, rs, cs, is_, (d.rows() * ds.m) as i64, ctas as i32, d.batch * ctas)
    }

    /// Where the device solve's last kernel reports the non-finite keys (`reports`, second half).
    fn solve_reports_mapped(&self) -> u64 {
        self.reports_mapped + (8 * self.dims.batch) as u64
    }

    /// The input check's "any value non-finite" word after the per-item keys: the unpack kernel
    /// reads it on the device, so the check costs no wait between packing and solving.
    fn any_nonfinite_ptr(&self) -> u64 {
        self.nonfinite.ptr + 8 * (self.nonfinite.len() - 1) as u64
    }

    /// Queues the caller's columns col0 .. col0 + m into the packed right-hand sides (checked).
    fn enqueue_pack(&self, ds: DeviceSolve) -> Result<()> {
        let (rows, mm, rs, cs, is_, item_r, cpi, grid) = self.rhs_copy_shape(&ds);
        let (src, y, keys, col0, any) =
            (ds.src, self.rhs.ptr, self.nonfinite.ptr, ds.col0 as i32, self.any_nonfinite_ptr());
        let mut a = args![src, y, rows, mm, rs, cs, is_, item_r, keys, cpi, col0, any];
        unsafe { self.launch(&self.k.pack_rhs[ds.format as usize], grid, 0, &mut a) }
    }

    /// Queues the solution of a pass into the caller's columns (factored items, all inputs finite).
    fn enqueue_unpack(&self, ds: DeviceSolve) -> Result<()> {
        let (rows, mm, rs, cs, is_, item_r, cpi, grid) = self.rhs_copy_shape(&ds);
        let (dst, sol, fail, any) = (ds.dst, self.solution_ptr(), self.fail.ptr, self.any_nonfinite_ptr());
        let (keys, report) = (self.nonfinite.ptr, self.solve_reports_mapped());
        let mut a = args![dst, sol, rows, mm, rs, cs, is_, item_r, fail, cpi, any, keys, report];
        unsafe { self.launch(&self.k.unpack_rhs, grid, 0, &mut a) }
    }

    pub fn logdet(&mut self, out: &mut [f64]) -> Result<()> {
        self.dev.bind()?;
        let d = self.dims;
        let buf = DeviceBuffer::<f64>::zeroed(&self.dev, d.batch, "logdet output")?;
        let (diag, n, nb, item_d, fail, o) = (
            self.factor_diag_ptr(),
            d.block_size as i32,
            d.n_blocks as i32,
            self.item_extents().0,
            self.fail.ptr,
            buf.ptr,
        );
        let mut a = args![diag, n, nb, item_d, fail, o];
        unsafe {
            self.launch(&self.k.logdet, d.batch, 0, &mut a)?;
            result::memcpy_dtoh_async(&mut out[..d.batch], buf.ptr, self.stream.raw)
                .map_err(|e| cuda_err("reading logdet", e))?;
        }
        self.stream.synchronize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The most L1 by default from CUDA 12.5 drivers (the launch attribute's first), nothing
    /// before; `none` and out-of-range settings leave the driver's choice.
    #[test]
    fn narrow_carveout_setting() {
        assert_eq!(narrow_carveout_from(None, 13000), Some(0));
        assert_eq!(narrow_carveout_from(None, 12050), Some(0));
        assert_eq!(narrow_carveout_from(None, 12040), None);
        assert_eq!(narrow_carveout_from(Some("none"), 13000), None);
        assert_eq!(narrow_carveout_from(Some("50"), 12040), Some(50));
        assert_eq!(narrow_carveout_from(Some("100"), 13000), Some(100));
        assert_eq!(narrow_carveout_from(Some("101"), 13000), None);
        assert_eq!(narrow_carveout_from(Some("-1"), 13000), None);
        assert_eq!(narrow_carveout_from(Some("most"), 13000), None);
    }

    /// f64 blocks padded to 32 (one panel CTA per SM) go wide once a level needs a second wave of
    /// panels; other f64 blocks at four waves' worth; f32 never; a count in the setting wins.
    #[test]
    fn wide_levels_from_the_second_wave_of_one_cta_panels() {
        let (f64_, f32_) = (DType::F64, DType::F32);
        let rule = |dtype, ld| wide_level_min_ctas_from(None, dtype, ld, 132);
        // 132 SMs: N = 1024's levels of 512 and 256 CTAs go wide, that of 128 stays on panels.
        assert_eq!(rule(f64_, 32), 133);
        for ld in [1, 2, 4, 8, 16, 24] {
            assert_eq!(rule(f64_, ld), 528, "ld {ld}");
        }
        for ld in [8, 16, 32] {
            assert_eq!(rule(f32_, ld), usize::MAX, "f32 ld {ld}");
        }
        assert_eq!(wide_level_min_ctas_from(Some("256"), f64_, 24, 132), 256);
        assert_eq!(wide_level_min_ctas_from(Some("many"), f64_, 32, 132), 133);
    }

    /// One stage only between what two stages and one stage hold (H100, f64 n = 32 solve: 6 and
    /// 12 items per SM of 132), and never when the driver cannot say.
    #[test]
    fn one_stage_only_where_it_makes_the_batch_resident() {
        let (two, one) = (Some(6 * 132), Some(12 * 132));
        for (batch, want) in [(1, false), (792, false), (793, true), (1024, true), (1584, true), (1585, false)] {
            assert_eq!(one_stage_holds_batch(batch, two, one), want, "B = {batch}");
        }
        assert!(!one_stage_holds_batch(1024, None, one));
        assert!(!one_stage_holds_batch(1024, two, None));
        assert!(!one_stage_holds_batch(1024, Some(1584), Some(1584)), "no more resident with one stage");
    }

    /// The merged tail of the solve starts at the first level from which every level is small,
    /// covers every level after it, and its table addresses exactly those levels' records.
    #[test]
    fn solve_tail_covers_the_deep_levels() {
        for nb in (1..=70).chain([127, 128, 129, 1000, 1024, 4097, 16384]) {
            let s = Schedule::new(nb);
            let (_, cta_levels) = level_cta_records(&s);
            let (_, levels) = schedule_records(&s);
            let small = |l: usize| cta_levels[l].1 <= TAIL_MAX_RECORDS && levels[l].n_elim <= TAIL_MAX_RECORDS;
            let (from, table) = solve_tail(&cta_levels, &levels, 0);
            assert!((from..levels.len()).all(small), "N={nb}");
            assert!(from == 0 || !small(from - 1), "N={nb}: the tail could start earlier");
            assert_eq!(table.len(), 4 * (levels.len() - from));
            for (k, l) in (from..levels.len()).enumerate() {
                let row = &table[4 * k..4 * k + 4];
                let want = [cta_levels[l].0, cta_levels[l].1, levels[l].elim_offset, levels[l].n_elim];
                assert_eq!(row, want.map(|v| v as i32), "N={nb} level {l}");
            }
            if nb <= 8 {
                assert_eq!(from, 0, "N={nb}: a short system solves in one launch");
            }
        }
        // A partitioned schedule's chunk levels stay out of the tail; with nothing but chunk
        // levels (one chunk) it is empty.
        for (nb, chunk) in [(16, 3), (37, 7), (1000, 15), (5, 5), (3, 8)] {
            let s = Schedule::partitioned(nb, chunk);
            let (_, cta_levels) = level_cta_records(&s);
            let (_, levels) = schedule_records(&s);
            let (from, table) = solve_tail(&cta_levels, &levels, s.chunk_levels());
            assert!(from >= s.chunk_levels(), "N={nb} chunk={chunk}");
            assert_eq!(table.is_empty(), s.chunk_levels() == levels.len(), "N={nb} chunk={chunk}");
        }
    }

    /// Every elimination of every level is written by exactly one CTA of the small-block path,
    /// and every Schur update is done by exactly one CTA, with its sources' coupling slots.
    #[test]
    fn level_ctas_own_each_elimination_once_and_cover_each_update() {
        for nb in (1..=70).chain([127, 128, 129, 1000, 1024, 4097]) {
            let s = Schedule::new(nb);
            let (recs, levels) = level_cta_records(&s);
            assert_eq!(recs.len() % LREC, 0);
            for (l, level) in s.levels().iter().enumerate() {
                let (first, count) = levels[l];
                let ctas: Vec<&[i32]> = (first..first + count).map(|k| &recs[k * LREC..(k + 1) * LREC]).collect();
                for e in &level.eliminations {
                    let owners = ctas
                        .iter()
                        .flat_map(|r| (0..r[1] as usize).map(move |g| &r[2 + 8 * g..10 + 8 * g]))
                        .filter(|x| x[0] == e.block as i32 && x[6] == 1)
                        .count();
                    assert_eq!(owners, 1, "N={nb} level {l} block {}", e.block);
                }
                for u in &level.updates {
                    let mine: Vec<_> = ctas.iter().filter(|r| r[0] == u.block as i32).collect();
                    assert_eq!(mine.len(), 1, "N={nb} level {l} update {}", u.block);
                    let r = mine[0];
                    assert_eq!(r[1] as usize, u.sources.len());
                    for (g, &(slot, block)) in u.sources.iter().enumerate() {
                        let x = &r[2 + 8 * g..10 + 8 * g];
                        assert_eq!(x[0], block as i32);
                        assert_eq!(x[2 + x[7] as usize], slot as i32, "the update reads its own coupling");
                    }
                }
            }
        }
    }
}
