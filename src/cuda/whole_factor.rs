//! The whole factorization of a small system in one CTA per item (kernels/small.cu
//! `btchol_factor_whole_small`): every level's eliminations and updates with CTA barriers
//! between them, the item's blocks in shared memory throughout, then L⁻¹ of every diagonal
//! block, in place of the per-level launches and the inverse's (a launch and the blocks' round
//! trips per level cost more than a small level's work). Which plans take it and its launch; the
//! program is the whole solve's (whole_solve.rs `whole_solve_program`), uploaded once for both.

use cudarc::driver::CudaFunction;

use super::jit::{whole_factor_threads, KernelSpec};
use super::runtime::{Device, KernelLaunch};
use super::whole_solve::{ProgramSource, WholeProgram};
use crate::error::Result;
use crate::model::Dims;
use crate::scalar::DType;

/// The whole-factor kernel of a plan.
pub(super) struct WholeFactor {
    func: CudaFunction,
    pub(super) prog: WholeProgram,
    threads: usize,
    smem: usize,
}

impl WholeFactor {
    /// The kernel for a plan whose factors take it: its schedule has no chunk levels
    /// (`first == 0`), its item (program, blocks, couplings and the inversion's scratch) fits a
    /// CTA's shared memory, and [`default_rule`] says so (`BTCHOL_WHOLE_FACTOR=0`: never, `1`:
    /// wherever it fits, for A/B runs and tests); `None` otherwise.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        dev: &Device,
        spec: &KernelSpec,
        func: CudaFunction,
        dims: Dims,
        n_slots: usize,
        first: usize,
        program: &mut ProgramSource,
    ) -> Result<Option<WholeFactor>> {
        let take = super::engine::env_switch("BTCHOL_WHOLE_FACTOR")
            .unwrap_or_else(|| default_rule(spec, dims.n_blocks, dims.batch, dev.sm_count));
        if first > 0 || !take {
            return Ok(None);
        }
        let smem = spec.whole_factor_smem_bytes(program.len(), dims.n_blocks, n_slots);
        if smem > super::engine::dynamic_smem_limit(&func, dev) {
            return Ok(None);
        }
        super::engine::opt_in_shared_memory(&func, smem)?;
        let threads = whole_factor_threads(spec.ld);
        Ok(Some(WholeFactor { func, prog: program.device()?, threads, smem }))
    }

    /// Enqueues the factorization of `batch` items with `args` (kernels/small.cu's parameter
    /// order; the engine builds them, `prog` and its sizes from here).
    pub(super) unsafe fn enqueue(
        &self,
        stream: cudarc::driver::sys::CUstream,
        early: bool,
        batch: usize,
        args: &mut [*mut std::ffi::c_void],
    ) -> Result<()> {
        let launch =
            KernelLaunch { grid: batch, threads: self.threads, smem: self.smem, cluster: 1, early, carveout: None };
        launch.launch(&self.func, stream, args)
    }
}

/// Where the kernel is the default, from the A/B on the H200 of 2026-12-01 (single systems and
/// batches of 8, one binary, `BTCHOL_WHOLE_FACTOR=0` against `1`, the whole solve on in both;
/// bench/results/ab/README.md): blocks padded to 8 (n ≤ 8) up to N = 64, where the factor took
/// 0.80–0.95 of the level launches' time (f64 n = 8: N = 16 26.2 → 21.1 µs, N = 64 33.9 → 32.3;
/// f32 n = 8, N = 64: 29.8 → 26.2), but 1.02–1.14 at N = 100 (one CTA's sweeps, a chain of
/// barriers and dependent instructions per level, against the level launches' spread over SMs);
/// f32 blocks padded to 16 up to N = 16 (0.90–0.92; N = 32: 1.08, N = 64: 1.40); not f64 blocks of
/// 16 (0.99–1.48); one CTA per item in one wave (batches up to the SM count). From N = 1: the one
/// launch replaces the merged tail's and the inverse's (N = 2: 0.87–0.91).
fn default_rule(spec: &KernelSpec, n_blocks: usize, batch: usize, sm_count: usize) -> bool {
    let max_blocks = match (spec.ld, spec.dtype) {
        (ld, _) if ld <= 8 => 64,
        (16, DType::F32) => 16,
        _ => 0,
    };
    n_blocks <= max_blocks && batch <= sm_count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_rule_takes_blocks_of_8_to_n_64_f32_blocks_of_16_to_n_16_and_one_wave() {
        let spec = |dtype, n| KernelSpec::for_block_size(dtype, n, 227 * 1024);
        let (f64_8, f32_8, f32_16, f64_16) =
            (spec(DType::F64, 5), spec(DType::F32, 8), spec(DType::F32, 16), spec(DType::F64, 16));
        assert_eq!((f64_8.ld, f32_8.ld, f32_16.ld, f64_16.ld), (8, 8, 16, 16));
        assert!(
            default_rule(&f64_8, 1, 1, 132) && default_rule(&f64_8, 64, 1, 132) && !default_rule(&f64_8, 65, 1, 132)
        );
        assert!(default_rule(&f32_8, 64, 8, 132) && !default_rule(&f32_8, 100, 1, 132));
        assert!(default_rule(&f32_16, 16, 1, 132) && !default_rule(&f32_16, 32, 1, 132), "f32 16: N ≤ 16");
        assert!(!default_rule(&f64_16, 2, 1, 132), "f64 blocks of 16: not faster");
        assert!(!default_rule(&spec(DType::F64, 32), 2, 1, 132), "blocks of 32");
        assert!(default_rule(&f64_8, 16, 132, 132) && !default_rule(&f64_8, 16, 133, 132), "one wave");
    }
}
