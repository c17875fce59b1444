//! AVX2+FMA kernels: one register tile (MV vectors of rows × NC ≤ 4 columns) that accumulates
//! C − A·Bᵀ in ymm registers and then, still in registers, either stores it, solves it against a
//! small lower-triangular block (trsm), or factors it (potrf). The block operations below are
//! left-looking loops of such tiles over 4-column panels (the BLASFEO design, on column-major data).
//!
//! Rows: tiles of 2 vectors (8 f64 / 16 f32 rows); the last tile of a range may be one vector
//! and/or masked, so odd sizes never touch memory outside their operand. Where the output is the
//! lower triangle of a diagonal block, a panel's first tile starts at the diagonal rounded down to
//! a vector boundary: the rows above the diagonal get harmless garbage (upper triangle, never read).

// Index loops over the register arrays read like the math (acc[j][v], a[i][j]).
#![allow(clippy::needless_range_loop)]

use std::arch::x86_64::{__m256i, _mm256_setzero_si256};

use super::{madd, potrf::PivotPolicy, simd::Vx};

/// Columns of a register tile, and width of the potrf / trsm column panels.
const NR: usize = 4;

/// One rank-k source of a tile update: A (rows × k, leading dimension `lda`; the tile's row offset
/// is added) times B (NC × k, `ldb`)ᵀ.
#[derive(Clone, Copy)]
struct Src<S> {
    a: *const S,
    lda: usize,
    b: *const S,
    ldb: usize,
    k: usize,
}

/// What a tile does between its update and its store.
#[derive(Clone, Copy)]
enum Epi<S> {
    /// Nothing: C ← C − Σ A·Bᵀ.
    Store,
    /// C ← (C − Σ A·Bᵀ)·L⁻ᵀ, L the NC×NC lower block at `l`, `inv[c]` = 1/L[c,c].
    Trsm { l: *const S, ldl: usize, inv: [S; NR] },
    /// C ← chol of the NC×NC diagonal block at lane `o` of the tile's first vector, the rows below
    /// solved against it (C·L⁻ᵀ): the first tile of a potrf panel. A null `piv` is the strict
    /// policy (fail on d ≤ 0, the fast path); otherwise pivots go through `piv` (see
    /// [`PivotPolicy`]), boosted ones counted in `*boosted`.
    Potrf { o: usize, piv: *const PivotPolicy<f64>, boosted: *mut u32 },
}

/// A tile job: C[rows, 0..NC] ← epi((0 or C) − A·Bᵀ), C at `c` (the tile's row offset added).
#[derive(Clone, Copy)]
struct Job<S> {
    c: *mut S,
    ldc: usize,
    zero: bool,
    src: Src<S>,
    epi: Epi<S>,
}

/// Vector `v` of a tile's rows at `p`; the last vector masked when MASK.
#[inline(always)]
unsafe fn ld<S: Vx, const MV: usize, const MASK: bool>(p: *const S, v: usize, m: __m256i) -> S::V {
    if MASK && v == MV - 1 {
        S::vload_m(p.add(v * S::W), m)
    } else {
        S::vload(p.add(v * S::W))
    }
}

/// Stores vector `v` of a tile's rows at `p`; the last vector masked when MASK.
#[inline(always)]
unsafe fn st<S: Vx, const MV: usize, const MASK: bool>(p: *mut S, v: usize, m: __m256i, x: S::V) {
    if MASK && v == MV - 1 {
        S::vstore_m(p.add(v * S::W), m, x)
    } else {
        S::vstore(p.add(v * S::W), x)
    }
}

/// acc ← acc − A[r.., 0..k]·B[0..NC, 0..k]ᵀ. One-vector tiles split k over two accumulator sets
/// so that 2·NC independent FMA chains hide the FMA latency.
#[inline(always)]
unsafe fn update<S: Vx, const MV: usize, const NC: usize, const MASK: bool>(
    acc: &mut [[S::V; MV]; NC],
    r: usize,
    m: __m256i,
    s: &Src<S>,
) {
    if s.k == 0 {
        return;
    }
    let mut a = s.a.add(r);
    let mut b = s.b;
    let step = |acc: &mut [[S::V; MV]; NC], a: *const S, b: *const S| {
        let mut av = [S::vzero(); MV];
        for (v, x) in av.iter_mut().enumerate() {
            *x = ld::<S, MV, MASK>(a, v, m);
        }
        for (j, col) in acc.iter_mut().enumerate() {
            let bv = S::vbcast(b.add(j));
            for v in 0..MV {
                col[v] = S::vnmadd(av[v], bv, col[v]);
            }
        }
    };
    let mut k = s.k;
    if MV == 1 && k >= 2 {
        let mut acc2 = [[S::vzero(); MV]; NC];
        while k >= 2 {
            step(acc, a, b);
            step(&mut acc2, a.add(s.lda), b.add(s.ldb));
            a = a.wrapping_add(2 * s.lda);
            b = b.wrapping_add(2 * s.ldb);
            k -= 2;
        }
        for (col, col2) in acc.iter_mut().zip(acc2.iter()) {
            for v in 0..MV {
                col[v] = S::vadd(col[v], col2[v]);
            }
        }
    }
    for _ in 0..k {
        step(acc, a, b);
        a = a.wrapping_add(s.lda);
        b = b.wrapping_add(s.ldb);
    }
}

/// Stores a tile.
#[inline(always)]
unsafe fn store_tile<S: Vx, const MV: usize, const NC: usize, const MASK: bool>(
    acc: &[[S::V; MV]; NC],
    c: *mut S,
    ldc: usize,
    m: __m256i,
) {
    for (j, col) in acc.iter().enumerate() {
        for (v, x) in col.iter().enumerate() {
            st::<S, MV, MASK>(c.add(j * ldc), v, m, *x);
        }
    }
}

/// acc ← acc·L⁻ᵀ for the NC×NC lower L with `l(i, j)` = L[i,j] broadcast, `inv[j]` = 1/L[j,j].
#[inline(always)]
unsafe fn solve_lt<S: Vx, const MV: usize, const NC: usize>(
    acc: &mut [[S::V; MV]; NC],
    l: impl Fn(usize, usize) -> S::V,
    inv: &[S; NR],
) {
    for j in 0..NC {
        let s = S::vsplat(inv[j]);
        for v in 0..MV {
            acc[j][v] = S::vmul(acc[j][v], s);
        }
        for j2 in j + 1..NC {
            let f = l(j2, j);
            for v in 0..MV {
                acc[j2][v] = S::vnmadd(acc[j][v], f, acc[j2][v]);
            }
        }
    }
}

/// a ← chol(a) for the NC×NC lower block in scalars (`a[j][i]` = row i, column j), `inv[j]` =
/// 1/L[j,j]; `Err(j)` for pivot j not above the threshold (unless boosted) or not finite.
/// Right-looking on unscaled columns, a[i2,i] −= a[i2,j]·a[i,j]/d_j, so the pivot chain is one
/// division and one FMA per column (pivots below √MIN_POSITIVE, where the unscaled product would
/// underflow, take 1/√d on both factors instead). BOOST = false is the strict policy (d ≤ 0
/// fails) and does not read `piv`.
#[inline(always)]
unsafe fn chol_small<S: Vx, const NC: usize, const BOOST: bool>(
    a: &mut [[S; NR]; NR],
    inv: &mut [S; NR],
    piv: *const PivotPolicy<f64>,
    boosted: *mut u32,
) -> Result<(), usize> {
    let mut l = [[S::ZERO; NR]; NR];
    let thr = if BOOST { S::from_f64((*piv).threshold) } else { S::ZERO };
    let unscaled_min = S::from_f64(S::MIN_POSITIVE.sqrt());
    for j in 0..NC {
        let mut d = a[j][j];
        if !(d > thr && d.is_finite()) {
            if !BOOST {
                return Err(j);
            }
            let p = PivotPolicy { threshold: thr, boost: S::from_f64((*piv).boost) };
            d = p.small_pivot(d, &mut *boosted).ok_or(j)?;
        }
        if d >= unscaled_min {
            let r = S::ONE / d;
            for i in j + 1..NC {
                for i2 in i..NC {
                    a[i][i2] = madd::<S, true>(-(a[j][i2] * a[j][i]), r, a[i][i2]);
                }
            }
        } else {
            // Below √MIN_POSITIVE the product a_ji·a_ji2 underflows (and 1/d overflows for
            // subnormal d): scale each factor by 1/√d instead.
            let t = S::ONE / d.sqrt();
            for i in j + 1..NC {
                for i2 in i..NC {
                    a[i][i2] = madd::<S, true>(-(a[j][i2] * t), a[j][i] * t, a[i][i2]);
                }
            }
        }
        let s = d.sqrt();
        inv[j] = S::ONE / s;
        l[j][j] = s;
        for i in j + 1..NC {
            l[j][i] = a[j][i] * inv[j];
        }
    }
    *a = l;
    Ok(())
}

/// One register tile at row offset `r`: see [`Job`]. Returns the reciprocal pivots of a potrf
/// tile, or `Err(c)` for its first non-positive (or non-finite) pivot.
#[inline(always)]
unsafe fn tile<S: Vx, const MV: usize, const NC: usize, const MASK: bool>(
    r: usize,
    m: __m256i,
    job: &Job<S>,
) -> Result<[S; NR], usize> {
    let c = job.c.add(r);
    let ldc = job.ldc;
    let mut acc = [[S::vzero(); MV]; NC];
    if !job.zero {
        for (j, col) in acc.iter_mut().enumerate() {
            for (v, x) in col.iter_mut().enumerate() {
                *x = ld::<S, MV, MASK>(c.add(j * ldc), v, m);
            }
        }
    }
    update::<S, MV, NC, MASK>(&mut acc, r, m, &job.src);
    let mut inv = [S::ZERO; NR];
    match job.epi {
        Epi::Store => {}
        Epi::Trsm { l, ldl, inv } => solve_lt::<S, MV, NC>(&mut acc, |i, j| S::vbcast(l.add(i + j * ldl)), &inv),
        Epi::Potrf { o, piv, boosted } => {
            // The NC×NC diagonal block as scalars (lanes o.. of the first vector), factored there.
            let mut blk = [[S::ZERO; NR]; NR];
            let mut buf = [S::ZERO; 8];
            for j in 0..NC {
                S::vstore(buf.as_mut_ptr(), acc[j][0]);
                blk[j][j..NC].copy_from_slice(&buf[o + j..o + NC]);
            }
            if piv.is_null() {
                chol_small::<S, NC, false>(&mut blk, &mut inv, piv, boosted)?;
            } else {
                chol_small::<S, NC, true>(&mut blk, &mut inv, piv, boosted)?;
            }
            if S::W != NR {
                // Rows of the tile outside the diagonal block: C·L⁻ᵀ.
                solve_lt::<S, MV, NC>(&mut acc, |i, j| S::vsplat(blk[j][i]), &inv);
                store_tile::<S, MV, NC, MASK>(&acc, c, ldc, m);
            }
            // (f64: the one-vector tile is exactly the diagonal block.)
            for j in 0..NC {
                for i in j..NC {
                    *c.add(o + i + j * ldc) = blk[j][i];
                }
            }
            return Ok(inv);
        }
    }
    store_tile::<S, MV, NC, MASK>(&acc, c, ldc, m);
    Ok(inv)
}

/// Runs the tile at row `r` of a range ending at `m` (2 vectors, or the masked / short tail).
/// Returns the rows it covered and the tile's result.
#[inline(always)]
unsafe fn tile_at<S: Vx, const NC: usize>(r: usize, m: usize, job: &Job<S>) -> (usize, Result<[S; NR], usize>) {
    let w = S::W;
    let rem = m - r;
    let none = _mm256_setzero_si256();
    if rem >= 2 * w {
        (2 * w, tile::<S, 2, NC, false>(r, none, job))
    } else if rem > w {
        (rem, tile::<S, 2, NC, true>(r, S::vmask(rem - w), job))
    } else if rem == w {
        (w, tile::<S, 1, NC, false>(r, none, job))
    } else {
        (rem, tile::<S, 1, NC, true>(r, S::vmask(rem), job))
    }
}

/// All tiles of rows [r, m) of one column panel.
#[inline(always)]
unsafe fn rows<S: Vx, const NC: usize>(mut r: usize, m: usize, job: &Job<S>) {
    while r < m {
        r += tile_at::<S, NC>(r, m, job).0;
    }
}

/// Operands smaller than this (bytes) are left to the hardware prefetcher.
const PREFETCH_MIN_BYTES: usize = 8192;

/// Software prefetch of the `len` elements that follow the operand at `p`, slice [j0, j0+nc)/n of
/// them per panel. The sequential sweep stores its blocks back to back, so these are the next
/// iteration's E or D block; elsewhere it is a harmless hint (prefetches never fault).
#[inline(always)]
unsafe fn prefetch_next<S>(p: *const S, len: usize, j0: usize, nc: usize, n: usize) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    let bytes = len * std::mem::size_of::<S>();
    if bytes < PREFETCH_MIN_BYTES {
        return;
    }
    let next = p.wrapping_add(len) as *const i8;
    let (lo, hi) = (bytes * j0 / n, bytes * (j0 + nc) / n);
    let mut o = lo & !63;
    while o < hi {
        _mm_prefetch::<_MM_HINT_T0>(next.wrapping_add(o));
        o += 64;
    }
}

/// Calls `$f::<S, NC>(args)` with NC = the runtime panel width `$nc` (1..=4).
macro_rules! by_nc {
    ($nc:expr, $f:ident::<$s:ty>($($arg:expr),* $(,)?)) => {
        match $nc {
            4 => $f::<$s, 4>($($arg),*),
            3 => $f::<$s, 3>($($arg),*),
            2 => $f::<$s, 2>($($arg),*),
            _ => $f::<$s, 1>($($arg),*),
        }
    };
}

// ---------------------------------------------------------------------------------------------
// gemm / syrk
// ---------------------------------------------------------------------------------------------

#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_panel<S: Vx, const NC: usize>(
    m: usize,
    k: usize,
    a: *const S,
    lda: usize,
    b: *const S,
    ldb: usize,
    c: *mut S,
    ldc: usize,
    zero: bool,
) {
    let job = Job { c, ldc, zero, src: Src { a, lda, b, ldb, k }, epi: Epi::Store };
    rows::<S, NC>(0, m, &job);
}

/// C[m×p] ← (C or 0) − A[m×k]·B[p×k]ᵀ, column-major.
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm_nt<S: Vx>(
    m: usize,
    p: usize,
    k: usize,
    a: *const S,
    lda: usize,
    b: *const S,
    ldb: usize,
    c: *mut S,
    ldc: usize,
    zero: bool,
) {
    if m == 0 {
        return;
    }
    let mut j = 0;
    while j < p {
        let nc = NR.min(p - j);
        by_nc!(nc, gemm_panel::<S>(m, k, a, lda, b.add(j), ldb, c.add(j * ldc), ldc, zero));
        j += nc;
    }
}

#[inline(always)]
unsafe fn syrk_panel<S: Vx, const NC: usize>(
    m: usize,
    k: usize,
    a: *const S,
    lda: usize,
    c: *mut S,
    ldc: usize,
    j0: usize,
) {
    let job =
        Job { c: c.add(j0 * ldc), ldc, zero: false, src: Src { a, lda, b: a.add(j0), ldb: lda, k }, epi: Epi::Store };
    rows::<S, NC>(j0 - j0 % S::W, m, &job);
}

/// Lower part of C[m×m] ← C − A[m×k]·A[m×k]ᵀ (upper triangle: garbage near the diagonal).
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn syrk_lower<S: Vx>(m: usize, k: usize, a: *const S, lda: usize, c: *mut S, ldc: usize) {
    if k == 0 {
        return;
    }
    let mut j0 = 0;
    while j0 < m {
        let nc = NR.min(m - j0);
        prefetch_next::<S>(c, m * ldc, j0, nc, m);
        by_nc!(nc, syrk_panel::<S>(m, k, a, lda, c, ldc, j0));
        j0 += nc;
    }
}

// ---------------------------------------------------------------------------------------------
// trsm / potrf
// ---------------------------------------------------------------------------------------------

#[inline(always)]
unsafe fn trsm_panel<S: Vx, const NC: usize>(m: usize, l: *const S, ldl: usize, x: *mut S, ldx: usize, j0: usize) {
    let d = l.add(j0 + j0 * ldl);
    let mut inv = [S::ZERO; NR];
    for (j, v) in inv.iter_mut().enumerate().take(NC) {
        *v = S::ONE / *d.add(j + j * ldl);
    }
    let job = Job {
        c: x.add(j0 * ldx),
        ldc: ldx,
        zero: false,
        src: Src { a: x, lda: ldx, b: l.add(j0), ldb: ldl, k: j0 },
        epi: Epi::Trsm { l: d, ldl, inv },
    };
    rows::<S, NC>(0, m, &job);
}

/// X[m×n] ← X·L⁻ᵀ, L lower n×n.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn trsm_rlt<S: Vx>(m: usize, n: usize, l: *const S, ldl: usize, x: *mut S, ldx: usize) {
    if m == 0 {
        return;
    }
    let mut j0 = 0;
    while j0 < n {
        let nc = NR.min(n - j0);
        prefetch_next::<S>(x, n * ldx, j0, nc, n);
        by_nc!(nc, trsm_panel::<S>(m, l, ldl, x, ldx, j0));
        j0 += nc;
    }
}

/// The tile job of potrf panel `j0`: its columns minus the panels to the left.
#[inline(always)]
unsafe fn potrf_job<S: Vx>(a: *mut S, lda: usize, j0: usize, epi: Epi<S>) -> Job<S> {
    Job { c: a.add(j0 * lda), ldc: lda, zero: false, src: Src { a, lda, b: a.add(j0), ldb: lda, k: j0 }, epi }
}

/// First row of panel `j0`'s diagonal tile (the diagonal rounded down to a vector boundary).
#[inline(always)]
fn diag_row<S: Vx>(j0: usize) -> usize {
    j0 - j0 % S::W
}

/// Diagonal tile of potrf panel `j0` (one vector high, so its pivot chain starts early):
/// factors the NC×NC diagonal block, returns 1/L[j,j] or the failing column.
#[inline(always)]
unsafe fn potrf_diag<S: Vx, const NC: usize>(
    n: usize,
    a: *mut S,
    lda: usize,
    j0: usize,
    piv: *const PivotPolicy<f64>,
    boosted: *mut u32,
) -> Result<[S; NR], usize> {
    let r0 = diag_row::<S>(j0);
    let job = potrf_job(a, lda, j0, Epi::Potrf { o: j0 - r0, piv, boosted });
    let res = if n - r0 >= S::W {
        tile::<S, 1, NC, false>(r0, _mm256_setzero_si256(), &job)
    } else {
        tile::<S, 1, NC, true>(r0, S::vmask(n - r0), &job)
    };
    res.map_err(|c| j0 + c)
}

/// Potrf panel `j0`: factors its diagonal block, then L[r.., panel] ← (A − L·Lᵀ)[r.., panel]·L_jj⁻ᵀ
/// for the rows below the diagonal tile.
#[inline(always)]
unsafe fn potrf_panel<S: Vx, const NC: usize>(
    n: usize,
    a: *mut S,
    lda: usize,
    j0: usize,
    piv: *const PivotPolicy<f64>,
    boosted: *mut u32,
) -> Result<(), usize> {
    let inv = potrf_diag::<S, NC>(n, a, lda, j0, piv, boosted)?;
    let job = potrf_job(a, lda, j0, Epi::Trsm { l: a.add(j0 + j0 * lda), ldl: lda, inv });
    rows::<S, NC>((diag_row::<S>(j0) + S::W).min(n), n, &job);
    Ok(())
}

/// A ← chol(A) (lower, n×n), left-looking by 4-column panels. `Err(j)`: pivot j not above
/// `piv.threshold` and not boosted (see [`PivotPolicy`]); boosted pivots are added to `*boosted`.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn potrf_lower<S: Vx>(
    n: usize,
    a: *mut S,
    lda: usize,
    piv: PivotPolicy<f64>,
    boosted: &mut u32,
) -> Result<(), usize> {
    let mut j0 = 0;
    let strict = piv.threshold == 0.0 && piv.boost == 0.0;
    let (piv, boosted) = (if strict { std::ptr::null() } else { &piv as *const PivotPolicy<f64> }, boosted as *mut u32);
    while j0 < n {
        let nc = NR.min(n - j0);
        by_nc!(nc, potrf_panel::<S>(n, a, lda, j0, piv, boosted))?;
        j0 += nc;
    }
    Ok(())
}
