//! Mixed precision with iterative refinement (`MixedPlan`) and the backward pass
//! (`Plan::gradient`), against the independent f64 reference and finite differences. The
//! backend is the CPU unless BTCHOL_TEST_BACKEND=cuda (the device script sets it for these too).

mod common;

use btchol::reference::*;
use btchol::*;
use common::*;

fn options(alg: Algorithm, layout: Layout) -> PlanOptions {
    let backend = match std::env::var("BTCHOL_TEST_BACKEND").as_deref() {
        Ok("cuda") => Backend::Cuda,
        _ => Backend::Cpu,
    };
    let algorithm = if backend == Backend::Cuda { Algorithm::NestedDissection } else { alg };
    PlanOptions { backend, algorithm, layout, threads: 2, ..Default::default() }
}

const SHAPES: [(usize, usize, usize, usize); 8] = [
    (1, 1, 1, 1),
    (1, 2, 3, 2),
    (2, 3, 1, 1),
    (1, 13, 5, 3),
    (3, 17, 8, 1),
    (1, 64, 33, 2),
    (2, 7, 9, 4),
    (1, 1, 16, 1),
];

#[test]
fn mixed_precision_reaches_f64_accuracy_on_well_conditioned_problems() {
    for (batch, nb, n, m) in SHAPES {
        for (alg, layout) in
            [(Algorithm::Sequential, Layout::RowMajor), (Algorithm::NestedDissection, Layout::ColMajor)]
        {
            let dims = Dims::new(batch, nb, n).unwrap();
            let seed = seed_from(&[batch, nb, n, m, layout as usize]);
            let (d, e) = random_problem::<f64>(seed, dims, layout, 1.0);
            let len = RhsShape::dense(dims, m, layout).required_len(dims).unwrap();
            let b = random_vec::<f64>(seed ^ 0xB, len);
            let mut x = b.clone();
            let mut plan = MixedPlan::new(dims, options(alg, layout), RefineOptions::default()).unwrap();
            let matrix = BlockTridiagRef::new(dims, layout, &d, &e).unwrap();
            plan.upload(&matrix).unwrap();
            plan.factor().unwrap();
            let report = plan.solve(&mut RhsMut::dense(dims, m, layout, &mut x).unwrap()).unwrap();
            let be = backward_error(
                &matrix,
                &RhsRef::dense(dims, m, layout, &x).unwrap(),
                &RhsRef::dense(dims, m, layout, &b).unwrap(),
                &[],
            );
            let shape = format!("B={batch} N={nb} n={n} m={m} {layout:?}");
            assert!(!report.fell_back, "{shape}: {report:?}");
            assert!((1..=6).contains(&report.iterations), "{shape}: {report:?}");
            assert!(report.backward_error <= 32.0 * f64::EPSILON, "{shape}: {report:?}");
            // The reference's own backward error agrees (it is computed independently).
            assert!(be <= 64.0 * f64::EPSILON, "{shape}: reference backward error {be:e}");
            // A second solve with the same factor works the same.
            let mut x2 = b.clone();
            let r2 = plan.solve(&mut RhsMut::dense(dims, m, layout, &mut x2).unwrap()).unwrap();
            assert_eq!(r2, report, "{shape}");
            assert_eq!(x2, x, "{shape}");
        }
    }
}

#[test]
fn mixed_precision_falls_back_to_f64_when_refinement_cannot_converge() {
    // D_i = [[1, 1−δ], [1−δ, 1]] (eigenvalues 2−δ and δ), E_i = 0.005·[[1, 1], [1, 1]] (acts on the large eigenvector only): cond ≈ 2/δ.
    // δ = 1e-7: the f32 rounding of 1−δ is off by ~20% in δ, so refinement contracts by ~0.2 per
    // step and needs ~9 steps to reach 7e-15: with at most 4 it falls back. δ = 1e-10: 1−δ rounds to 1 in f32, the f32 factor
    // fails, and the plan factors in f64 at once.
    for (delta, batch, nb, max_iterations) in [(1e-7, 1, 3, 4), (1e-10, 2, 4, 0)] {
        let (n, layout) = (2, Layout::RowMajor);
        let dims = Dims::new(batch, nb, n).unwrap();
        let d: Vec<f64> = (0..batch * nb).flat_map(|_| [1.0, 1.0 - delta, 1.0 - delta, 1.0]).collect();
        let e: Vec<f64> = (0..batch * (nb - 1)).flat_map(|_| [0.005; 4]).collect();
        let b = random_vec::<f64>(77, dims.batch * dims.rows());
        let mut x = b.clone();
        let refine = RefineOptions { max_iterations, ..Default::default() };
        let mut plan = MixedPlan::new(dims, options(Algorithm::Sequential, layout), refine).unwrap();
        let matrix = BlockTridiagRef::new(dims, layout, &d, &e).unwrap();
        plan.upload(&matrix).unwrap();
        plan.factor().unwrap();
        let report = plan.solve(&mut RhsMut::dense(dims, 1, layout, &mut x).unwrap()).unwrap();
        assert!(report.fell_back, "delta {delta}: {report:?}");
        assert!(report.iterations <= max_iterations.max(10), "delta {delta}: {report:?}"); // stagnation may stop it sooner
        let be = backward_error(
            &matrix,
            &RhsRef::dense(dims, 1, layout, &x).unwrap(),
            &RhsRef::dense(dims, 1, layout, &b).unwrap(),
            &[],
        );
        assert!(be <= tolerance::<f64>(n) && report.backward_error <= tolerance::<f64>(n), "{report:?} {be:e}");
    }
}

#[test]
fn mixed_precision_rejects_bad_input_and_wrong_order() {
    let dims = Dims::new(1, 3, 2).unwrap();
    let mut plan = MixedPlan::new(dims, options(Algorithm::Auto, Layout::RowMajor), RefineOptions::default()).unwrap();
    let mut x = vec![1.0; 6];
    assert!(matches!(
        plan.solve(&mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap()),
        Err(Error::InvalidState(_))
    ));
    assert!(matches!(plan.factor(), Err(Error::InvalidState(_))));
    let (mut d, e) = random_problem::<f64>(5, dims, Layout::RowMajor, 1.0);
    d[0] = 1e300; // finite in f64, overflows f32
    let r = plan.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap());
    assert!(matches!(r, Err(Error::InvalidArgument(ref s)) if s.contains("f32")), "{r:?}");
    d[0] = f64::NAN;
    assert!(matches!(
        plan.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()),
        Err(Error::NonFinite { .. })
    ));
    // Not positive definite in f64 either: the f64 error.
    let (mut d, e) = random_problem::<f64>(6, dims, Layout::RowMajor, 1.0);
    d[2 * 4] = -5.0; // D_2(0, 0) of an N = 3, n = 2 item
    plan.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap();
    assert!(matches!(plan.factor(), Err(Error::NotPositiveDefinite { item: 0, block: 2, column: 0 })));
    assert!(MixedPlan::new(dims, PlanOptions::default(), RefineOptions { tolerance: f64::NAN, ..Default::default() })
        .is_err());
}

/// L(x) = Σ w ⊙ x for fixed weights w, so ∂L/∂x = w.
#[allow(clippy::too_many_arguments)] // (the problem's parts, spelled out for the gradient checks)
fn loss(dims: Dims, layout: Layout, opts: PlanOptions, d: &[f64], e: &[f64], b: &[f64], w: &[f64], m: usize) -> f64 {
    let mut x = b.to_vec();
    let mut p = Plan::<f64>::new(dims, opts).unwrap();
    p.factor_solve(
        &BlockTridiagRef::new(dims, layout, d, e).unwrap(),
        &mut RhsMut::dense(dims, m, layout, &mut x).unwrap(),
    )
    .unwrap();
    x.iter().zip(w).map(|(a, b)| a * b).sum()
}

#[test]
fn gradient_matches_finite_differences() {
    for (batch, nb, n, m) in [(1, 1, 1, 1), (1, 2, 3, 2), (2, 3, 2, 1), (1, 5, 3, 3), (1, 4, 5, 1)] {
        for (alg, layout) in
            [(Algorithm::Sequential, Layout::RowMajor), (Algorithm::NestedDissection, Layout::ColMajor)]
        {
            let dims = Dims::new(batch, nb, n).unwrap();
            let opts = options(alg, layout);
            let seed = seed_from(&[batch, nb, n, m, 11]);
            let (d, e) = random_problem::<f64>(seed, dims, layout, 1.0);
            let len = RhsShape::dense(dims, m, layout).required_len(dims).unwrap();
            let b = random_vec::<f64>(seed ^ 1, len);
            let w = random_vec::<f64>(seed ^ 2, len);
            let mut plan = Plan::<f64>::new(dims, opts).unwrap();
            let mut x = b.clone();
            let matrix = BlockTridiagRef::new(dims, layout, &d, &e).unwrap();
            plan.factor_solve(&matrix, &mut RhsMut::dense(dims, m, layout, &mut x).unwrap()).unwrap();
            let mut grad_b = w.clone();
            let (mut gd, mut ge) = (vec![0.0; dims.diag_len()], vec![0.0; dims.sub_len()]);
            plan.gradient(
                &RhsRef::dense(dims, m, layout, &x).unwrap(),
                &mut RhsMut::dense(dims, m, layout, &mut grad_b).unwrap(),
                &mut gd,
                &mut ge,
            )
            .unwrap();
            let h = 1e-6;
            let fd = |dd: &[f64], ee: &[f64], bb: &[f64]| loss(dims, layout, opts, dd, ee, bb, &w, m);
            let close = |what: String, fd: f64, an: f64| {
                assert!(
                    (fd - an).abs() <= 1e-6 * (1.0 + an.abs()),
                    "{what}: finite difference {fd:e}, gradient {an:e}"
                );
            };
            // ∂L/∂b, every entry.
            for k in 0..len {
                let (mut bp, mut bm) = (b.clone(), b.clone());
                bp[k] += h;
                bm[k] -= h;
                close(format!("db[{k}]"), (fd(&d, &e, &bp) - fd(&d, &e, &bm)) / (2.0 * h), grad_b[k]);
            }
            // D (lower triangle, mirrored) and E, every entry of item 0 and the last item.
            for item in [0, batch - 1] {
                for i in 0..nb {
                    for r in 0..n {
                        for c in 0..=r {
                            let k = (item * nb + i) * n * n + layout.offset(r, c, n);
                            let (mut dp, mut dm) = (d.clone(), d.clone());
                            for (v, s) in [(&mut dp, h), (&mut dm, -h)] {
                                v[k] += s;
                                if r != c {
                                    v[(item * nb + i) * n * n + layout.offset(c, r, n)] += s;
                                    // keep D symmetric
                                }
                            }
                            let want = if r == c { gd[k] } else { 2.0 * gd[k] };
                            close(
                                format!("{alg:?} {layout:?} dD[{item},{i}]({r},{c})"),
                                (fd(&dp, &e, &b) - fd(&dm, &e, &b)) / (2.0 * h),
                                want,
                            );
                        }
                    }
                    if i + 1 < nb {
                        for r in 0..n {
                            for c in 0..n {
                                let k = (item * (nb - 1) + i) * n * n + layout.offset(r, c, n);
                                let (mut ep, mut em) = (e.clone(), e.clone());
                                ep[k] += h;
                                em[k] -= h;
                                close(
                                    format!("{alg:?} dE[{item},{i}]({r},{c})"),
                                    (fd(&d, &ep, &b) - fd(&d, &em, &b)) / (2.0 * h),
                                    2.0 * ge[k],
                                );
                            }
                        }
                    }
                }
            }
            // D gradient blocks are symmetric.
            for blk in gd.chunks_exact(n * n) {
                for r in 0..n {
                    for c in 0..n {
                        assert_eq!(blk[layout.offset(r, c, n)], blk[layout.offset(c, r, n)]);
                    }
                }
            }
        }
    }
}

#[test]
fn gradient_checks_its_arguments() {
    let dims = Dims::new(1, 3, 2).unwrap();
    let (d, e) = random_problem::<f64>(9, dims, Layout::RowMajor, 1.0);
    let mut plan = Plan::<f64>::new(dims, options(Algorithm::Auto, Layout::RowMajor)).unwrap();
    let x = vec![1.0; 6];
    let mut g = vec![1.0; 6];
    let (mut gd, mut ge) = (vec![0.0; dims.diag_len()], vec![0.0; dims.sub_len()]);
    let xr = RhsRef::dense(dims, 1, Layout::RowMajor, &x).unwrap();
    let r = plan.gradient(&xr, &mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut g).unwrap(), &mut gd, &mut ge);
    assert!(matches!(r, Err(Error::InvalidState(_))), "{r:?}");
    plan.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap();
    plan.factor().unwrap();
    let mut short = vec![0.0; dims.sub_len() - 1];
    let r = plan.gradient(&xr, &mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut g).unwrap(), &mut gd, &mut short);
    assert!(matches!(r, Err(Error::BufferTooSmall { .. })), "{r:?}");
    let bad = vec![f64::NAN; 6];
    let r = plan.gradient(
        &RhsRef::dense(dims, 1, Layout::RowMajor, &bad).unwrap(),
        &mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut g).unwrap(),
        &mut gd,
        &mut ge,
    );
    assert!(matches!(r, Err(Error::NonFinite { .. })), "{r:?}");
    assert_eq!(g, vec![1.0; 6], "nothing written on error");
}

#[test]
fn half_precision_inputs_are_widened_exactly() {
    use half::{bf16, f16};
    for (batch, nb, n, m) in [(1, 1, 1, 1), (2, 5, 3, 2), (1, 17, 8, 1)] {
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            let dims = Dims::new(batch, nb, n).unwrap();
            let (d, e) = random_problem::<f64>(seed_from(&[batch, nb, n, 21]), dims, layout, 1.0);
            let len = RhsShape::dense(dims, m, layout).required_len(dims).unwrap();
            let b = random_vec::<f64>(5, len);
            // The half-precision problem, and the same values widened by hand (the reference).
            let (dh, eh, bh): (Vec<f16>, Vec<f16>, Vec<f16>) = (
                d.iter().map(|&v| f16::from_f64(v)).collect(),
                e.iter().map(|&v| f16::from_f64(v)).collect(),
                b.iter().map(|&v| f16::from_f64(v)).collect(),
            );
            let (db, eb, bb): (Vec<bf16>, Vec<bf16>, Vec<bf16>) = (
                d.iter().map(|&v| bf16::from_f64(v)).collect(),
                e.iter().map(|&v| bf16::from_f64(v)).collect(),
                b.iter().map(|&v| bf16::from_f64(v)).collect(),
            );
            let shape = RhsShape::dense(dims, m, layout);
            for (wd, we, wb, x) in [
                {
                    let mut p = Plan::<f64>::new(dims, options(Algorithm::Auto, layout)).unwrap();
                    p.upload_half(&dh, &eh).unwrap();
                    p.factor().unwrap();
                    let mut x = vec![0.0; len];
                    p.solve_half(shape, &bh, &mut x).unwrap();
                    let w = |v: &[f16]| v.iter().map(|h| h.to_f64()).collect::<Vec<f64>>();
                    (w(&dh), w(&eh), w(&bh), x)
                },
                {
                    let mut p = Plan::<f64>::new(dims, options(Algorithm::Auto, layout)).unwrap();
                    p.upload_half(&db, &eb).unwrap();
                    p.factor().unwrap();
                    let mut x = vec![0.0; len];
                    p.solve_half(shape, &bb, &mut x).unwrap();
                    let w = |v: &[bf16]| v.iter().map(|h| h.to_f64()).collect::<Vec<f64>>();
                    (w(&db), w(&eb), w(&bb), x)
                },
            ] {
                let matrix = BlockTridiagRef::new(dims, layout, &wd, &we).unwrap();
                let be = backward_error(
                    &matrix,
                    &RhsRef::new(dims, shape, &x).unwrap(),
                    &RhsRef::new(dims, shape, &wb).unwrap(),
                    &[],
                );
                assert!(be <= tolerance::<f64>(n), "B={batch} N={nb} n={n} {layout:?}: {be:e}");
            }
        }
    }
    // Short buffers and non-finite halves are refused.
    let dims = Dims::new(1, 2, 2).unwrap();
    let mut p = Plan::<f32>::new(dims, options(Algorithm::Auto, Layout::RowMajor)).unwrap();
    assert!(matches!(p.upload_half(&[f16::ONE; 7], &[f16::ZERO; 4]), Err(Error::BufferTooSmall { .. })));
    let mut d = [f16::ZERO; 8];
    d[0] = f16::INFINITY;
    assert!(matches!(p.upload_half(&d, &[f16::ZERO; 4]), Err(Error::NonFinite { .. })));
}
