//! Kernel compilation: NVRTC turns `kernels/*.cu` into a CUBIN for the device's exact `sm_XY`
//! (a CUBIN, not PTX: PTX from a newer NVRTC can carry an ISA version the driver cannot JIT).
//! Each variant is cached in memory and on disk (DeepGEMM's scheme): the file name is a hash of
//! the source, the options, the NVRTC version, the architecture and the btchol version, and files
//! are written to a temporary name and renamed, so concurrent processes never see half a file.
//! `BTCHOL_CACHE_DIR` overrides the cache folder (default `$XDG_CACHE_HOME/btchol` or
//! `~/.cache/btchol`); `BTCHOL_CACHE_DIR=off` disables the disk cache.

use std::collections::HashMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use cudarc::nvrtc::{result as nvrtc, sys as nvrtc_sys};

use crate::error::{Error, Result};
use crate::scalar::DType;

/// The kernel sources, concatenated into one translation unit (common definitions first).
pub const KERNEL_SOURCES: [(&str, &str); 8] = [
    ("common.cuh", include_str!("../../kernels/common.cuh")),
    ("block_ops.cuh", include_str!("../../kernels/block_ops.cuh")),
    ("factor.cu", include_str!("../../kernels/factor.cu")),
    ("solve.cu", include_str!("../../kernels/solve.cu")),
    ("small.cu", include_str!("../../kernels/small.cu")),
    ("sequential.cu", include_str!("../../kernels/sequential.cu")),
    ("chunks.cu", include_str!("../../kernels/chunks.cu")),
    ("layout.cu", include_str!("../../kernels/layout.cu")),
];

/// Above this padded block size the factor splits each level's gemms into tiles
/// (`KernelSpec::split_gemm`).
pub const SPLIT_ABOVE_LD: usize = 64;

/// Threads per CTA of the split gemm (kernels/block_ops.cuh `GEMM_TILE_THREADS`: 4 groups of 8 × 8
/// threads of 4 × 4 outputs per 32 × 32 tile, each group a quarter of the columns; 8 warps of
/// 16 × 32 outputs per 64 × 64 tile).
pub const GEMM_TILE_THREADS: usize = 256;

/// The kernel entry points every module exports.
pub const KERNEL_NAMES: [&str; 20] = [
    "btchol_factor_eliminate",
    "btchol_factor_eliminate_cluster",
    "btchol_factor_potrf_split",
    "btchol_factor_trsm_split",
    "btchol_factor_update",
    "btchol_factor_gemm",
    "btchol_factor_gemm_wide",
    "btchol_forward_eliminate",
    "btchol_forward_update",
    "btchol_backward_eliminate",
    "btchol_convert_blocks",
    "btchol_convert_blocks_f16",
    "btchol_convert_blocks_bf16",
    "btchol_convert_blocks_rhs",
    "btchol_convert_blocks_f16_rhs",
    "btchol_convert_blocks_bf16_rhs",
    "btchol_unpack_rhs",
    "btchol_mask_begin",
    "btchol_mask_end",
    "btchol_logdet",
];

/// Entry points of the small-block kernels (kernels/small.cu, sequential.cu, chunks.cu), present
/// when `ld ≤ 32`.
pub const SMALL_KERNEL_NAMES: [&str; 21] = [
    "btchol_factor_level_small",
    "btchol_factor_cluster_small",
    "btchol_factor_level_small_wide",
    "btchol_invert_small",
    "btchol_solve_tail_small",
    "btchol_solve_whole_small",
    "btchol_factor_whole_small",
    "btchol_solve_cluster_small",
    "btchol_forward_level_small",
    "btchol_backward_level_small",
    "btchol_factor_seq_small",
    "btchol_factor_seq_small_1stage",
    "btchol_factor_seq_pair_small",
    "btchol_solve_seq_small",
    "btchol_solve_seq_small_1stage",
    "btchol_solve_seq_inv_small",
    "btchol_factor_chunks_small",
    "btchol_chunk_separators",
    "btchol_forward_chunks_small",
    "btchol_chunk_solve_separators",
    "btchol_backward_chunks_small",
];
/// Threads per CTA of the small-block level kernels (kernels/small.cu `SNT`).
pub const SMALL_THREADS: usize = 256;
/// Threads per CTA of the inverse kernel (kernels/small.cu `INV_THREADS`: a warp per block).
pub const INV_THREADS: usize = 128;
/// Threads per CTA of the merged deep-level solve (kernels/small.cu `TAIL_GROUPS * SNT`).
pub const TAIL_THREADS: usize = 2 * SMALL_THREADS;
/// Threads per CTA of the whole solve in one CTA (kernels/small.cu `WS_THREADS`).
pub const WHOLE_SOLVE_THREADS: usize = 512;
/// Threads per CTA of the whole factor in one CTA (kernels/small.cu `WF_THREADS`): a warp per
/// elimination, whose sweep holds 3·ld values a lane.
/// Lanes per unit of the whole kernels (kernels/small.cu `WS_W`, `WF_W`): a power of two ≥ ld,
/// from 8, so that a warp works on 32 / lanes blocks side by side where they are small.
pub fn segment_lanes(ld: usize) -> usize {
    ld.next_power_of_two().clamp(8, 32)
}

pub fn whole_factor_threads(ld: usize) -> usize {
    if ld <= 8 {
        512
    } else {
        256
    }
}

/// Threads per CTA of the cluster solve (kernels/small.cu `CL_THREADS`: SMALL_THREADS compute
/// threads and one producer warp).
pub const CLUSTER_THREADS: usize = SMALL_THREADS + 32;
/// Phases (two per level) the cluster solve can run in one launch (kernels/small.cu `CL_MAX_PHASES`).
pub const CLUSTER_MAX_PHASES: usize = 64;

/// Threads per CTA of the per-item sequential kernels (kernels/sequential.cu `SEQ_THREADS`).
pub const SEQ_THREADS: usize = 32;
/// Threads per CTA of the chunk solve kernels (kernels/chunks.cu `CHUNK_THREADS`): one warp per chunk.
pub const CHUNK_THREADS: usize = 32;
/// Threads per CTA of the chunk factor (kernels/chunks.cu `CHUNK_FACTOR_THREADS`): a warp pair.
pub const CHUNK_FACTOR_THREADS: usize = 64;
/// Threads per CTA of the warp-pair sequential factor (kernels/sequential.cu `SEQ_PAIR_THREADS`).
pub const SEQ_PAIR_THREADS: usize = 64;
/// Helper warps of the sequential solve with inverses (kernels/sequential.cu `SEQ_INV_HELPERS`);
/// each owns two slots.
pub const SEQ_INV_HELPERS: usize = 3;
/// Threads per CTA of that solve: the sweeping warp and the helpers.
pub const SEQ_INV_THREADS: usize = 32 * (1 + SEQ_INV_HELPERS);
/// Largest block size of the per-item sequential kernels (the small-block variants).
pub const SEQ_MAX_BLOCK_SIZE: usize = 32;

/// Largest block size the CUDA backend supports.
pub const MAX_CUDA_BLOCK_SIZE: usize = 256;

/// One compiled variant: the template parameters of the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelSpec {
    pub dtype: DType,
    /// Padded leading dimension (≥ n).
    pub ld: usize,
    pub threads: usize,
    /// Stage blocks in shared memory (three ld×ld blocks must fit).
    pub fused: bool,
    /// Compile the pivot policy in (PlanOptions::pivot_boost > 0). Off, the pivot test is the
    /// plain `d > 0` and the serial potrf chain pays nothing for the option.
    pub boost: bool,
}

impl KernelSpec {
    /// The variant a plan uses for block size n: n padded to 64-byte multiples (8 f64, 16 f32, as
    /// the paper found fastest), or to a power of two below that; fused when three blocks fit in
    /// `smem_limit` bytes of shared memory.
    pub fn for_block_size(dtype: DType, n: usize, smem_limit: usize) -> KernelSpec {
        let align = 64 / dtype.size_bytes();
        let ld = if n >= align { n.div_ceil(align) * align } else { n.next_power_of_two() };
        // 384 threads for ld 72..128: one per row of the blocked panel [D; X_0; X_1] (3·ld ≤
        // 384), and at most 168 registers each (512 threads allow 128, and the 32-column panel
        // spilled there at f64; f32 n = 128 ran 5–15 % slower with 512 at N ≥ 1024, H100).
        // Above 128 one per panel row as well (kernels/block_ops.cuh BLOCKED_PANEL, 16 columns).
        let threads = match ld {
            0..=32 => 128,
            33..=64 => 256, // (the factor's level kernels: factor_spec)
            65..=128 => 384,
            _ => (3 * ld).next_multiple_of(32),
        };
        // Leave room for the kernels' static shared memory: 4 KiB (potrf's column buffer: 2·ld
        // elements). Split variants keep the blocks in global memory (the fill, which fusion
        // served, is done by the tile kernel).
        let staged = KernelSpec { dtype, ld, threads, fused: true, boost: false }.factor_smem_bytes();
        let fused = ld <= SPLIT_ABOVE_LD && staged + 4096 <= smem_limit;
        KernelSpec { dtype, ld, threads, fused, boost: false }
    }

    /// The variant whose btchol_factor_eliminate and btchol_factor_update a plan of this spec
    /// launches: for 33 ≤ ld ≤ 64 the same kernels with 192 threads (the 3·ld rows of the register
    /// sweep at ld = 64; two CTAs per SM at ≤ 168 registers instead of one of 256), elsewhere the
    /// spec itself. Only the factor's: every solve kernel lost 5–30 % with 192 (H200 A/B,
    /// 2026-12-02: factor f64 n = 64, N = 4096 / 16384 −11 / −16 %, n = 40 and 48 −21 … −24 %,
    /// f32 −7 … −20 %; bench/results/ab/README.md).
    pub fn factor_spec(&self) -> KernelSpec {
        match self.ld {
            33..=64 => KernelSpec { threads: 192, ..*self },
            _ => *self,
        }
    }

    /// Whether every level's fills and updates run as 32×32 output tiles, one CTA each
    /// (kernels/factor.cu btchol_factor_gemm), after eliminations that do no fill.
    pub fn split_gemm(&self) -> bool {
        self.ld > SPLIT_ABOVE_LD
    }

    /// Whether a level may be split (the engine splits narrow levels of 32 < ld ≤ 64 too).
    pub fn can_split_levels(&self) -> bool {
        !self.small()
    }

    /// CTAs per item of a level's split gemm (kernels/factor.cu factor_gemm_tiles) in tiles of
    /// `tile` × `tile`: the lower tiles of every update and all tiles of every elimination; 0
    /// where levels are never split.
    pub fn gemm_ctas_per_item(&self, tile: usize, n_update: usize, n_elim: usize) -> usize {
        let t = self.ld.div_ceil(tile);
        if self.can_split_levels() {
            n_update * t * (t + 1) / 2 + n_elim * t * t
        } else {
            0
        }
    }

    /// Whether the split gemm has its 64 × 64 tiles for wide levels (`-DBT_GEMM_WIDE`,
    /// kernels/factor.cu btchol_factor_gemm_wide): f64 blocks above 64 on the FP64 tensor cores
    /// (sm_80+; kernels/block_ops.cuh GemmDmma64). Not for 32 < ld ≤ 64: there only the narrow
    /// levels are split, with too few tiles, and splitting the wide ones too (their fills and
    /// updates in these tiles) measured no faster than fused (f64 n = 64, N = 4096 1199 → 1206 µs,
    /// n = 48, N = 16384 2080 → 2485, H200).
    pub fn wide_gemm(&self, arch: (i32, i32)) -> bool {
        self.dtype == DType::F64 && self.split_gemm() && self.ld % 8 == 0 && arch.0 >= 8
    }

    /// Dynamic shared memory of the wide split gemm: its cp.async stages (kernels/block_ops.cuh
    /// GEMM64_SMEM_BYTES: 2 stages × 2 operands × 32 columns × (64 + 4) rows).
    pub fn wide_gemm_smem_bytes(&self) -> usize {
        2 * 2 * 32 * (64 + 4) * self.dtype.size_bytes()
    }

    /// The same variant with the pivot policy compiled in or out.
    pub fn with_boost(self, boost: bool) -> KernelSpec {
        KernelSpec { boost, ..self }
    }

    /// Whether the blocked elimination has its cluster variant (kernels/factor.cu
    /// btchol_factor_eliminate_cluster: a cluster of three CTAs per elimination, one per block
    /// of rows): f64 blocks of ld = 64 and 72 < ld ≤ 128 (two to four 32-column panels swept by
    /// the diagonal warp), sm_90. (With the look-ahead D CTA, against one CTA per elimination,
    /// H100, N = 64: ld = 40 27 % and ld = 48 14 % slower, ld = 64 3–4 % faster (14 % at N = 3,
    /// 1 % slower at N = 1024), ld = 72 2 % slower, ld = 80 2 % and ld = 96 8 % faster;
    /// bench/results/ab.)
    pub fn eliminate_cluster(&self, arch: (i32, i32)) -> bool {
        self.dtype == DType::F64 && (self.ld > 56 && self.ld <= 64 || self.ld > 72 && self.ld <= 128) && arch.0 >= 9
    }

    /// Threads per CTA of the cluster elimination (kernels/block_ops.cuh `CLUSTER_ROW_THREADS`).
    pub fn eliminate_cluster_threads(&self) -> usize {
        self.ld.next_multiple_of(32)
    }

    /// Dynamic shared memory of the cluster elimination: every 32-column panel's diagonal block
    /// and pivot reciprocals, then the coupling CTAs' S (D's rows of a panel in the columns before
    /// it, sized for the last panel; kernels/block_ops.cuh `BlockedPanelShared<true>`,
    /// `BLOCKED_S_ELEMS`).
    pub fn eliminate_cluster_smem_bytes(&self) -> usize {
        self.potrf_split_smem_bytes() + (self.ld - 1) / 32 * 32 * 32 * self.dtype.size_bytes()
    }

    /// Dynamic shared memory of the split elimination's potrf (the cluster variant's D CTA
    /// alone, which stages no S): every panel's diagonal block and pivot reciprocals.
    pub fn potrf_split_smem_bytes(&self) -> usize {
        self.ld.div_ceil(32) * (32 * 32 + 32) * self.dtype.size_bytes()
    }

    /// Whether the small-block level kernels (one launch per level, blocks in registers) apply.
    pub fn small(&self) -> bool {
        self.ld <= 32
    }

    /// Dynamic shared memory of the small-block factor kernels: the four solved couplings, the
    /// two factors and D_a (kernels/small.cu factor_record).
    pub fn small_factor_smem_bytes(&self) -> usize {
        7 * self.ld * self.ld * self.dtype.size_bytes()
    }

    /// Dynamic shared memory of the merged deep-level solve (kernels/small.cu `TAIL_GROUP_SMEM`
    /// per group of 256 threads, two groups): the forward scratch (8 warps × ld) and the staged
    /// factor block and two couplings (leading dimension ld + 1).
    pub fn tail_solve_smem_bytes(&self) -> usize {
        2 * (8 * self.ld + 3 * self.ld * (self.ld + 1)) * self.dtype.size_bytes()
    }

    /// Dynamic shared memory of the whole solve in one CTA (kernels/small.cu
    /// `btchol_solve_whole_small`) of an item of `n_blocks` blocks of size n and `n_slots`
    /// couplings with a program of `prog_len` ints: the program (rounded up to 16 bytes), every
    /// block's n×n part with leading dimension n | 1, then y and z, each rows·m elements and ld of
    /// padding.
    pub fn whole_solve_smem_bytes(
        &self,
        prog_len: usize,
        (n, n_blocks, n_slots): (usize, usize, usize),
        m: usize,
    ) -> usize {
        let blocks = (n_blocks + n_slots) * n * (n | 1);
        (prog_len * 4).next_multiple_of(16) + (blocks + 2 * (n_blocks * n * m + self.ld)) * self.dtype.size_bytes()
    }

    /// Dynamic shared memory of the whole factor in one CTA (kernels/small.cu
    /// `btchol_factor_whole_small`) with a program of `prog_len` ints: the program (rounded up to
    /// 16 bytes), the n_blocks diagonal blocks, the n_slots couplings (rounded up to 16 bytes),
    /// then per warp segment the inversion's scratch (`WF_INV`: `INV_BUF` + ld, in 16-byte pieces).
    pub fn whole_factor_smem_bytes(&self, prog_len: usize, n_blocks: usize, n_slots: usize) -> usize {
        let (ld, elem) = (self.ld, self.dtype.size_bytes());
        let piece = |x: usize| x.next_multiple_of(16 / elem);
        let inv_sld = piece(ld + 2) - 1;
        let inv_buf = piece(ld * inv_sld + piece(ld));
        let warps = whole_factor_threads(ld) / 32;
        (prog_len * 4).next_multiple_of(16)
            + n_blocks * ld * ld * elem
            + (n_slots * ld * ld * elem).next_multiple_of(16)
            + warps * (32 / segment_lanes(ld)) * piece(inv_buf + ld) * elem
    }

    /// Dynamic shared memory of the sequential factor kernel with `stages` staging buffers (1 or
    /// 2) for D and E each, and X.
    pub fn seq_factor_smem_bytes(&self, stages: usize) -> usize {
        (2 * stages + 1) * self.ld * self.ld * self.dtype.size_bytes()
    }

    /// Dynamic shared memory of the warp-pair sequential factor: D and E per warp, X by step parity.
    pub fn seq_pair_factor_smem_bytes(&self) -> usize {
        6 * self.ld * self.ld * self.dtype.size_bytes()
    }

    /// Padded leading dimension of the solves' shared blocks (kernels/sequential.cu `SEQ_SLD`):
    /// ld plus one 16-byte piece where ld is a multiple of two pieces (16-byte copies and
    /// loads), else ld + 1.
    pub fn solve_block_ld(&self) -> usize {
        let piece = 16 / self.dtype.size_bytes();
        if self.ld % (2 * piece) == 0 {
            self.ld + piece
        } else {
            self.ld + 1
        }
    }

    /// Dynamic shared memory of the sequential solve with inverses (kernels/sequential.cu
    /// `SEQ_INV_SLOT`): per slot, D̂_i⁻¹ (leading dimension ld + 16 bytes) and the coupling
    /// (`solve_block_ld`), two slots per helper.
    pub fn seq_inv_solve_smem_bytes(&self) -> usize {
        let size = self.dtype.size_bytes();
        2 * SEQ_INV_HELPERS * self.ld * ((self.ld + 16 / size) + self.solve_block_ld()) * size
    }

    /// Leading dimension of the chunk sweeps' shared blocks (kernels/chunks.cu `CHS_LD`): ld
    /// where their 16-byte pieces are swizzled instead of padded (kernels/sequential.cu
    /// `SEQ_SWIZZLE_OK`: ld a multiple of two pieces, a power-of-two number of them), else
    /// `solve_block_ld`.
    pub fn chunk_block_ld(&self) -> usize {
        let piece = 16 / self.dtype.size_bytes();
        if self.ld % (2 * piece) == 0 && (self.ld / piece).is_power_of_two() {
            self.ld
        } else {
            self.solve_block_ld()
        }
    }

    /// kernels/chunks.cu btchol_forward_chunks_small / btchol_backward_chunks_small for `m`
    /// right-hand sides: two stages of three blocks (`chunk_block_ld`) and m vectors, two sets
    /// of m vectors, one vector.
    pub fn chunk_solve_smem_bytes(&self, m: usize) -> usize {
        let (ld, block) = (self.ld, self.ld * self.chunk_block_ld());
        (2 * (3 * block + m * ld) + 2 * m * ld + ld) * self.dtype.size_bytes()
    }

    /// kernels/chunks.cu btchol_factor_chunks_small: six blocks per warp pair.
    pub fn chunk_factor_smem_bytes(&self) -> usize {
        6 * self.ld * self.ld * self.dtype.size_bytes()
    }

    /// Dynamic shared memory of the forward / backward eliminate kernels: for 32 < ld ≤ 128 they
    /// stage D̂_i (padded leading dimension ld + 1) and its reciprocal pivots (kernels/solve.cu).
    pub fn solve_smem_bytes(&self) -> usize {
        if self.ld > 32 && self.ld <= 128 {
            (self.ld * (self.ld + 1) + self.ld) * self.dtype.size_bytes()
        } else {
            0
        }
    }

    /// Dynamic shared memory of the factor kernel: fused, the three blocks; otherwise none.
    pub fn factor_smem_bytes(&self) -> usize {
        if self.fused {
            (self.ld * self.ld + 2 * self.ld * self.staged_ld()) * self.dtype.size_bytes()
        } else {
            0
        }
    }

    /// Dynamic shared memory of the factor's update kernel: fused, the two couplings it stages.
    pub fn update_smem_bytes(&self) -> usize {
        if self.fused {
            2 * self.ld * self.staged_ld() * self.dtype.size_bytes()
        } else {
            0
        }
    }

    /// Column stride of the couplings the fused factor kernels stage in shared memory for their
    /// products (kernels/common.cuh SLD): ld + 4, so that the tensor-core fragments' loads (four
    /// columns of eight rows) fall in distinct banks (kernels/block_ops.cuh gemm_nt_staged_dmma).
    pub fn staged_ld(&self) -> usize {
        self.ld + 4
    }

    /// Every variant a plan can choose for `n` in 1..=MAX_CUDA_BLOCK_SIZE (for `btchol kernels`),
    /// plus the pivot-boosting variants of one block size per code path (register, small-block
    /// and memory potrf; the others differ only in constants and compile on first use).
    pub fn all(smem_limit: usize) -> Vec<KernelSpec> {
        let mut v: Vec<KernelSpec> = Vec::new();
        for dtype in [DType::F32, DType::F64] {
            for n in 1..=MAX_CUDA_BLOCK_SIZE {
                let s = Self::for_block_size(dtype, n, smem_limit);
                if !v.contains(&s) {
                    v.push(s);
                }
            }
            for n in [4, 32, 128, 256] {
                v.push(Self::for_block_size(dtype, n, smem_limit).with_boost(true));
            }
        }
        for s in v.clone() {
            if !v.contains(&s.factor_spec()) {
                v.push(s.factor_spec());
            }
        }
        v
    }

    /// NVRTC options. `BTCHOL_NVRTC_LINEINFO=1` adds `-lineinfo`, so compute-sanitizer and
    /// Nsight name source lines (the options are part of the cache key).
    pub fn options(&self, arch: (i32, i32)) -> Vec<String> {
        let mut v = vec![
            format!("--gpu-architecture=sm_{}{}", arch.0, arch.1),
            "--std=c++17".into(),
            format!("-DBT_T={}", if self.dtype == DType::F64 { "double" } else { "float" }),
            format!("-DBT_LD={}", self.ld),
            format!("-DBT_NT={}", self.threads),
            format!("-DBT_FUSED={}", self.fused as i32),
            format!("-DBT_SLD={}", self.staged_ld()),
            format!("-DBT_SPLIT={}", self.split_gemm() as i32),
            format!("-DBT_GEMM_WIDE={}", self.wide_gemm(arch) as i32),
            format!("-DBT_BOOST={}", self.boost as i32),
            format!("-DBT_ELIMINATE_CLUSTER={}", self.eliminate_cluster(arch) as i32),
        ];
        if std::env::var("BTCHOL_NVRTC_LINEINFO").is_ok_and(|v| v == "1") {
            v.push("-lineinfo".into());
        }
        v
    }
}

/// The NVRTC library can be loaded (checked first: cudarc panics on a missing library).
pub fn nvrtc_available() -> bool {
    std::panic::catch_unwind(|| unsafe { nvrtc_sys::is_culib_present() }).unwrap_or(false)
}

/// NVRTC's (major, minor) version.
pub fn nvrtc_version() -> Result<(i32, i32)> {
    if !nvrtc_available() {
        return Err(Error::BackendUnavailable(
            "NVRTC (libnvrtc.so) not found: install the CUDA toolkit or `pip install nvidia-cuda-nvrtc` and put its lib folder on LD_LIBRARY_PATH".into(),
        ));
    }
    let (mut major, mut minor) = (0, 0);
    unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Error::Cuda(format!("nvrtcVersion: {e:?}")))?;
    Ok((major, minor))
}

/// The kernels' translation unit. `BTCHOL_KERNEL_DIR=DIR` (kernel development) takes each file
/// found in DIR instead of the compiled-in one, so kernel variants can be measured on a GPU
/// machine with one binary; the disk cache keys on the source, so variants never mix.
fn source() -> String {
    source_from(std::env::var_os("BTCHOL_KERNEL_DIR").map(PathBuf::from).as_deref())
}

/// The translation unit with the files found in `dir` in place of the compiled-in ones.
fn source_from(dir: Option<&Path>) -> String {
    KERNEL_SOURCES
        .iter()
        .map(|&(name, built_in)| {
            let text = dir.and_then(|d| std::fs::read_to_string(d.join(name)).ok());
            format!("#line 1 \"{name}\"\n{}\n", text.as_deref().unwrap_or(built_in))
        })
        .collect()
}

/// Compiles the kernels for `spec` to a CUBIN for `arch`, without the cache.
pub fn compile(spec: &KernelSpec, arch: (i32, i32)) -> Result<Vec<u8>> {
    compile_source(&source(), &spec.options(arch), &format!("{spec:?}"), arch)
}

/// Compiles one translation unit with `opts` to a CUBIN for `arch` (`what` names it in errors).
fn compile_source(source: &str, opts: &[String], what: &str, arch: (i32, i32)) -> Result<Vec<u8>> {
    nvrtc_version()?;
    let src = CString::new(source).expect("kernel source has no NUL");
    let prog = nvrtc::create_program(&src, Some(c"btchol.cu"))
        .map_err(|e| Error::Cuda(format!("nvrtcCreateProgram: {e:?}")))?;
    let compiled = unsafe { nvrtc::compile_program(prog, opts) };
    let out = match compiled {
        Err(e) => {
            let log = unsafe { nvrtc::get_program_log(prog) }
                .map(|l| String::from_utf8_lossy(&l.iter().map(|&c| c as u8).collect::<Vec<u8>>()).into_owned())
                .unwrap_or_default();
            Err(Error::Cuda(format!("NVRTC failed for {what} on sm_{}{}: {e:?}\n{log}", arch.0, arch.1)))
        }
        Ok(()) => {
            let mut size = 0usize;
            unsafe { nvrtc_sys::nvrtcGetCUBINSize(prog, &mut size) }
                .result()
                .map_err(|e| Error::Cuda(format!("nvrtcGetCUBINSize: {e:?}")))?;
            let mut cubin = vec![0u8; size];
            unsafe { nvrtc_sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr() as *mut _) }
                .result()
                .map_err(|e| Error::Cuda(format!("nvrtcGetCUBIN: {e:?}")))?;
            Ok(cubin)
        }
    };
    let _ = unsafe { nvrtc::destroy_program(prog) };
    out
}

/// The mixed-precision refinement kernels (kernels/refine.cu): one module per architecture,
/// independent of the block size and working precision (they are written for f64 and f32).
pub const REFINE_SOURCE: &str = include_str!("../../kernels/refine.cu");

fn refine_options(arch: (i32, i32)) -> Vec<String> {
    vec![format!("--gpu-architecture=sm_{}{}", arch.0, arch.1), "--std=c++17".into()]
}

/// Compiles the refinement kernels for `arch`, without the cache (`btchol kernels --check`).
pub fn compile_refine(arch: (i32, i32)) -> Result<Vec<u8>> {
    compile_source(REFINE_SOURCE, &refine_options(arch), "refine.cu", arch)
}

/// The refinement kernels' CUBIN for `arch`, cached like the solver variants.
pub fn load_or_compile_refine(arch: (i32, i32)) -> Result<std::sync::Arc<Vec<u8>>> {
    load_or_compile_source("refine", "refine.cu", || REFINE_SOURCE.to_string(), &refine_options(arch), arch)
}

/// FNV-1a, 64 bits: a stable hash for cache keys (std's hasher may change between releases).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.iter().chain(&[0xffu8]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The cache folder (shared with the dispatch calibration file).
fn cache_dir() -> Option<PathBuf> {
    crate::plan::dispatch::cache_dir()
}

/// The cache file of a variant (also used by `btchol kernels --warm` to report where it wrote).
pub fn cache_key(spec: &KernelSpec, arch: (i32, i32)) -> Result<String> {
    source_cache_key("", &source(), &spec.options(arch), arch)
}

/// Cache file name of a translation unit: a hash of the source, the options, the NVRTC version,
/// the architecture and the btchol version.
fn source_cache_key(name: &str, source: &str, opts: &[String], arch: (i32, i32)) -> Result<String> {
    let (maj, min) = nvrtc_version()?;
    let h = fnv1a(&[
        source.as_bytes(),
        opts.join(" ").as_bytes(),
        format!("nvrtc {maj}.{min}").as_bytes(),
        crate::VERSION.as_bytes(),
    ]);
    let sep = if name.is_empty() { "" } else { "-" };
    Ok(format!("btchol-{}{sep}{name}-sm{}{}-{h:016x}.cubin", crate::VERSION, arch.0, arch.1))
}

/// The CUBIN for `spec` on `arch`: from memory, else from disk, else compiled (and stored).
pub fn load_or_compile(spec: &KernelSpec, arch: (i32, i32)) -> Result<std::sync::Arc<Vec<u8>>> {
    load_or_compile_source("", &format!("{spec:?}"), source, &spec.options(arch), arch)
}

/// `name`: the unit's part of the cache file name; `what`: how errors name it; `source`: its text,
/// only built on a miss of the in-memory cache (keyed by name, options and architecture: the
/// source of a name is fixed in a build).
fn load_or_compile_source(
    name: &str,
    what: &str,
    source: impl FnOnce() -> String,
    opts: &[String],
    arch: (i32, i32),
) -> Result<std::sync::Arc<Vec<u8>>> {
    type Memory = HashMap<(String, Vec<String>, (i32, i32)), std::sync::Arc<Vec<u8>>>;
    static MEMORY: OnceLock<Mutex<Memory>> = OnceLock::new();
    let memory = MEMORY.get_or_init(Default::default);
    let mem_key = (name.to_string(), opts.to_vec(), arch);
    if let Some(c) = memory.lock().unwrap_or_else(|p| p.into_inner()).get(&mem_key) {
        return Ok(c.clone());
    }
    let source = source();
    let key = source_cache_key(name, &source, opts, arch)?;
    let path = cache_dir().map(|d| d.join(&key));
    let cubin = match path.as_ref().and_then(|p| std::fs::read(p).ok()) {
        Some(c) if !c.is_empty() => c,
        _ => {
            let c = compile_source(&source, opts, what, arch)?;
            if let Some(p) = &path {
                // Best effort: a read-only cache folder only costs a recompile next time.
                let _ = write_atomically(p, &c);
            }
            c
        }
    };
    let c = std::sync::Arc::new(cubin);
    memory.lock().unwrap_or_else(|p| p.into_inner()).insert(mem_key, c.clone());
    Ok(c)
}

fn write_atomically(path: &std::path::Path, data: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().expect("cache file has a folder");
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{}.{}.tmp", path.file_name().unwrap().to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, data)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helper-warp sequential solve is chosen for up to four items per SM on the premise that
    /// two of its CTAs fit an sm_90 SM (228 KB, 1 KB reserved per CTA, ~1.1 KB static each), and
    /// its kernel needs every slot 16-byte aligned (kernels/sequential.cu `SEQ_INV_SLOT`).
    #[test]
    fn the_helper_solve_fits_two_items_per_sm90_and_aligns_its_slots() {
        for dtype in [DType::F64, DType::F32] {
            for n in 1..=SEQ_MAX_BLOCK_SIZE {
                let spec = KernelSpec::for_block_size(dtype, n, 227 * 1024);
                if spec.ld * dtype.size_bytes() < 16 {
                    continue; // (not used: engine.rs seq_inv_solve)
                }
                let bytes = spec.seq_inv_solve_smem_bytes();
                assert!(2 * (bytes + 1024 + 1120) <= 228 * 1024, "{dtype:?} n = {n}: {bytes} bytes");
                assert_eq!(bytes % (2 * SEQ_INV_HELPERS * 16), 0, "{dtype:?} n = {n}: slot not 16-byte aligned");
            }
        }
        let f64_32 = KernelSpec::for_block_size(DType::F64, 32, 227 * 1024);
        // D̂⁻¹ and the coupling both padded by one 16-byte piece (ld 32 → 34), two slots per helper.
        assert_eq!(f64_32.seq_inv_solve_smem_bytes(), 6 * 32 * (34 + 34) * 8);
    }

    /// The chunk sweeps' blocks are unpadded where their 16-byte pieces can be swizzled (a
    /// power-of-two number of them), so that f32 blocks of 32 keep 8 sweep CTAs per sm_90 SM
    /// (228 KB, 1 KB reserved and 1 KB static per CTA; padded, 7); elsewhere padded as the
    /// other solves'.
    #[test]
    fn the_chunk_sweeps_swizzle_power_of_two_pieces_and_pad_the_rest() {
        let spec = |dtype, n| KernelSpec::for_block_size(dtype, n, 227 * 1024);
        let f32_32 = spec(DType::F32, 32);
        assert_eq!(f32_32.chunk_block_ld(), 32);
        assert!(8 * (f32_32.chunk_solve_smem_bytes(1) + 2048) <= 228 * 1024);
        for (dtype, n, ld) in [(DType::F64, 32, 32), (DType::F64, 16, 16), (DType::F64, 8, 8), (DType::F64, 4, 4)] {
            assert_eq!(spec(dtype, n).chunk_block_ld(), ld, "{dtype:?} n = {n}");
        }
        // 12 pieces a column (f64 blocks of 24): padded by a piece; under two pieces: by one element.
        assert_eq!(spec(DType::F64, 24).chunk_block_ld(), 26);
        assert_eq!(spec(DType::F64, 2).chunk_block_ld(), 3);
        assert_eq!(spec(DType::F32, 4).chunk_block_ld(), 5);
    }

    /// The wide split gemm's dynamic shared memory is what its kernel stages (kernels/block_ops.cuh
    /// GEMM64_STAGES × 2 operands × GEMM64_KC columns × GEMM64_SL rows), and three of its CTAs
    /// fit an sm_90 SM (228 KB, 1 KB reserved and 1 KB static per CTA: `__launch_bounds__(256, 3)`).
    #[test]
    fn the_wide_gemm_stages_match_the_kernel_and_fit_three_ctas_per_sm90() {
        let block_ops = KERNEL_SOURCES.iter().find(|(name, _)| *name == "block_ops.cuh").unwrap().1;
        let define = |name: &str| -> usize {
            let line = block_ops.lines().find(|l| l.starts_with(&format!("#define {name} "))).expect(name);
            let value = line[format!("#define {name} ").len()..].trim().trim_matches(|c| c == '(' || c == ')');
            value.split('+').map(|t| t.trim().parse::<usize>().expect(line)).sum()
        };
        let stages = define("GEMM64_STAGES") * 2 * define("GEMM64_KC") * define("GEMM64_SL");
        for n in [72, 100, 128, 200, 256] {
            let spec = KernelSpec::for_block_size(DType::F64, n, 227 * 1024);
            assert!(spec.wide_gemm((9, 0)) && spec.wide_gemm((8, 0)) && !spec.wide_gemm((7, 5)), "n = {n}");
            assert_eq!(spec.wide_gemm_smem_bytes(), stages * 8, "n = {n}");
            assert!(3 * (spec.wide_gemm_smem_bytes() + 2048) <= 228 * 1024);
        }
        for (dtype, n) in [(DType::F64, 64), (DType::F64, 40), (DType::F64, 32), (DType::F32, 128)] {
            assert!(!KernelSpec::for_block_size(dtype, n, 227 * 1024).wide_gemm((9, 0)), "{dtype:?} n = {n}");
        }
    }

    /// The split elimination's shared memory as the kernels lay it out: the potrf's (every
    /// panel's T and pivot reciprocals) lets four of its CTAs share an sm_90 SM
    /// (`SPLIT_POTRF_MIN_CTAS`), and with the cluster variant's S (`BLOCKED_S_ELEMS`) added,
    /// three of the cluster's or the split trsm's CTAs do.
    #[test]
    fn the_split_eliminations_shared_memory_fits_its_ctas_per_sm90() {
        for n in [73, 80, 96, 100, 104, 127, 128] {
            let spec = KernelSpec::for_block_size(DType::F64, n, 227 * 1024);
            assert!(spec.eliminate_cluster((9, 0)), "n = {n}");
            let (ld, panels) = (spec.ld, spec.ld.div_ceil(32));
            assert_eq!(spec.potrf_split_smem_bytes(), panels * (32 * 32 + 32) * 8, "n = {n}");
            assert_eq!(
                spec.eliminate_cluster_smem_bytes() - spec.potrf_split_smem_bytes(),
                (ld - 1) / 32 * 32 * 32 * 8
            );
            // (1 KB reserved and at most 2.5 KB static per CTA)
            assert!(4 * (spec.potrf_split_smem_bytes() + 3584) <= 228 * 1024, "n = {n}");
            assert!(3 * (spec.eliminate_cluster_smem_bytes() + 3584) <= 228 * 1024, "n = {n}");
        }
    }

    #[test]
    fn a_kernel_dir_replaces_only_the_files_it_holds() {
        let dir = std::env::temp_dir().join(format!("btchol-kernel-dir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("sequential.cu"), "// variant under test\n").unwrap();
        let src = source_from(Some(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(src.contains("#line 1 \"sequential.cu\"\n// variant under test\n"));
        for (name, text) in KERNEL_SOURCES {
            assert_eq!(src.contains(text), name != "sequential.cu", "{name}");
        }
    }
}
