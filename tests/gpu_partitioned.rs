//! Partitioned nested dissection on the GPU (`Partition::Chunks`: chunks swept by one warp each,
//! kernels/chunks.cu, then the separators by nested dissection) against the dense f64 reference
//! and the CPU executor of the same schedule. Each test skips (saying so) where no GPU is usable
//! and fails instead when `BTCHOL_REQUIRE_GPU=1`. scripts/gpu-check.sh also runs this file with
//! `BTCHOL_CHUNK_KERNEL=0` (the chunk levels as per-level launches).

mod common;
use btchol::reference::*;
use btchol::*;
use common::*;

fn options(backend: Backend, chunk: usize) -> PlanOptions {
    PlanOptions {
        backend,
        algorithm: Algorithm::NestedDissection,
        partition: Partition::Chunks(chunk),
        threads: 2,
        ..Default::default()
    }
}

/// Solves a random problem with `opts` and checks its backward error against the reference.
fn solve_accurately<T: Scalar>(seed: u64, dims: Dims, nrhs: usize, layout: Layout, opts: PlanOptions) -> Solved<T> {
    let g = solve_random::<T>(seed, dims, nrhs, layout, opts);
    let be = g.backward_error();
    let (nb, n, batch) = (dims.n_blocks, dims.block_size, dims.batch);
    let partition = opts.partition;
    assert!(
        be < tolerance::<T>(n),
        "{:?} {partition:?} N={nb} n={n} B={batch} m={nrhs} max_nrhs={} seed={seed}: {be:e}",
        T::DTYPE,
        opts.max_nrhs
    );
    g
}

/// Backward error against the reference, and the CPU executor of the same schedule agrees.
fn check<T: Scalar>(chunk: usize, (nb, n, batch, nrhs): (usize, usize, usize, usize), layout: Layout) {
    let dims = Dims::new(batch, nb, n).unwrap();
    let seed = seed_from(&[nb, n, batch, nrhs, chunk, layout as usize]);
    let g = solve_accurately::<T>(seed, dims, nrhs, layout, options(Backend::Cuda, chunk));
    let c = solve_random::<T>(seed, dims, nrhs, layout, options(Backend::Cpu, chunk));
    let diff = relative_difference(&g.x, &c.x);
    assert!(
        diff <= 1e3 * n as f64 * T::EPSILON,
        "{:?} chunk={chunk} N={nb} n={n}: GPU and CPU differ by {diff:e}",
        T::DTYPE
    );
}

#[test]
fn gpu_partitioned_matches_reference_over_chunks_and_shapes() {
    if !gpu_or_skip("gpu_partitioned_matches_reference_over_chunks_and_shapes") {
        return;
    }
    for chunk in [1, 2, 3, 5, 7, 15] {
        for nb in [1, 2, 3, 5, 16, 17, 64, 131] {
            for n in [1, 3, 8, 16, 31, 32, 33] {
                check::<f64>(chunk, (nb, n, 1, 1), Layout::RowMajor);
                check::<f32>(chunk, (nb, n, 3, 5), Layout::ColMajor);
            }
        }
    }
    // Long horizons: many chunks, a short last chunk, batches.
    for (chunk, nb, n, batch) in
        [(15, 1000, 32, 1), (7, 1021, 16, 3), (31, 4097, 8, 2), (24, 2000, 32, 2), (31, 1500, 24, 1)]
    {
        check::<f64>(chunk, (nb, n, batch, 2), Layout::RowMajor);
        check::<f32>(chunk, (nb, n, batch, 1), Layout::ColMajor);
    }
}

/// The plan's own choice (`Partition::Auto`) on either side of each horizon where its chunk
/// length changes (src/plan.rs `auto_chunk`): every one solves to the reference's accuracy.
#[test]
fn gpu_default_partition_matches_reference_at_the_rule_boundaries() {
    if !gpu_or_skip("gpu_default_partition_matches_reference_at_the_rule_boundaries") {
        return;
    }
    let auto = PlanOptions { partition: Partition::Auto, ..options(Backend::Cuda, 1) };
    for (nb, n) in [(127, 8), (128, 8), (131, 5), (1023, 16), (1024, 16), (1031, 12), (1535, 32), (1536, 32)] {
        for (batch, nrhs) in [(1, 1), (2, 3)] {
            let dims = Dims::new(batch, nb, n).unwrap();
            let seed = seed_from(&[nb, n, batch, nrhs, 17]);
            solve_accurately::<f64>(seed, dims, nrhs, Layout::RowMajor, auto);
            solve_accurately::<f32>(seed, dims, nrhs, Layout::ColMajor, auto);
        }
    }
}

/// More right-hand sides a pass than the chunk sweeps can stage in shared memory (f64 n = 32:
/// about 200): the chunk levels run as per-level launches, and the solution is as good.
#[test]
fn gpu_partitioned_solves_more_right_hand_sides_than_the_chunk_kernels_stage() {
    if !gpu_or_skip("gpu_partitioned_solves_more_right_hand_sides_than_the_chunk_kernels_stage") {
        return;
    }
    for (nb, n, nrhs) in [(37, 32, 300), (20, 8, 1200)] {
        let dims = Dims::new(1, nb, n).unwrap();
        let opts = PlanOptions { max_nrhs: nrhs, ..options(Backend::Cuda, 7) };
        solve_accurately::<f64>(seed_from(&[nb, n, nrhs, 5]), dims, nrhs, Layout::RowMajor, opts);
    }
}

/// A pivot failing inside a chunk, at a chunk's first block, at a separator and at the last
/// block: the GPU reports the CPU executor's (item, block, column), factors the other items, and
/// the plan factors a good matrix afterwards.
#[test]
fn gpu_partitioned_reports_failures_like_the_cpu() {
    if !gpu_or_skip("gpu_partitioned_reports_failures_like_the_cpu") {
        return;
    }
    let chunk = 3;
    for (nb, n, batch) in [(37, 32, 2), (23, 5, 3), (8, 16, 1)] {
        for block in [0, 1, 3, 4, 5, 7, nb / 2, nb - 1] {
            let dims = Dims::new(batch, nb, n).unwrap();
            let (good, e) = random_problem::<f64>(seed_from(&[nb, n, block, 11]), dims, Layout::RowMajor, 1.0);
            let mut d = good.clone();
            let bad = batch - 1;
            let col = (n - 1).min(1 + block % n);
            d[(bad * nb + block) * n * n + col * n + col] = -1e3;
            let (cpu_opts, gpu_opts) = (options(Backend::Cpu, chunk), options(Backend::Cuda, chunk));
            let what = format!("N={nb} n={n} block={block} column={col}");
            check_gpu_fails_like_cpu(dims, (&d, &good, &e), bad, cpu_opts, gpu_opts, &what);
        }
    }
}

/// Subnormal pivots take the chunk kernel's exact-square-root sweep again; the solution matches
/// the CPU's of the unscaled problem.
#[test]
fn gpu_partitioned_factors_subnormal_pivots() {
    if !gpu_or_skip("gpu_partitioned_factors_subnormal_pivots") {
        return;
    }
    fn run<T: Scalar>(scale: f64, tol: f64) {
        for (nb, n, batch, chunk) in [(9, 8, 2, 2), (37, 16, 1, 3), (17, 32, 1, 7), (5, 1, 1, 1)] {
            let dims = Dims::new(batch, nb, n).unwrap();
            let (d_tiny, gpu) = solve_scaled_with::<T>(67, dims, options(Backend::Cuda, chunk), scale);
            assert!(d_tiny.iter().any(|v| v.to_f64() > 0.0 && v.to_f64() < T::MIN_POSITIVE), "pivots are subnormal");
            let (_, cpu) = solve_scaled_with::<T>(67, dims, options(Backend::Cpu, chunk), 1.0);
            let diff = relative_difference(&gpu, &cpu);
            assert!(diff <= tol, "{:?} N={nb} n={n} chunk={chunk}: {diff:e}", T::DTYPE);
        }
    }
    run::<f64>(1e-310, 1e-8);
    run::<f32>(1e-39, 3e-2);
}

/// Boosted pivots are counted per item as the CPU executor of the same order counts them.
#[test]
fn gpu_partitioned_boosts_pivots_like_the_cpu() {
    if !gpu_or_skip("gpu_partitioned_boosts_pivots_like_the_cpu") {
        return;
    }
    let (nb, n, batch, chunk) = (29, 8, 2, 4);
    let dims = Dims::new(batch, nb, n).unwrap();
    let (mut d, e) = random_problem::<f64>(seed_from(&[nb, n, 5]), dims, Layout::RowMajor, 1.0);
    for block in [2, 4, 13, 28] {
        // A zero row and column: its pivot is 0 whatever came before, so both boost it.
        let blk = &mut d[(nb + block) * n * n..][..n * n];
        for k in 0..n {
            blk[3 * n + k] = 0.0;
            blk[k * n + 3] = 0.0;
        }
    }
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    let counts = |backend| {
        let opts = PlanOptions { pivot_threshold: 1e-8, pivot_boost: 1.0, ..options(backend, chunk) };
        let mut p = Plan::<f64>::new(dims, opts).unwrap();
        p.upload(&m).unwrap();
        p.factor().unwrap();
        p.boosted_pivots().to_vec()
    };
    let (gpu, cpu) = (counts(Backend::Cuda), counts(Backend::Cpu));
    assert_eq!(gpu, cpu);
    assert_eq!(cpu[0], 0);
    assert!(cpu[1] >= 1, "{cpu:?}");
}
