//! The CPU backend: executes the sequential algorithm or the nested-dissection schedule on a batch,
//! with a rayon pool owned by the plan. Knows nothing of the C API.

pub mod isa;
mod nested;
mod sequential;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::dense::{potrf::PivotPolicy, trsv::Strided};
use crate::error::{Error, Result};
use crate::model::{BlockTridiagRef, Dims, RhsMut};
use crate::plan::{Algorithm, ItemStatus};
use crate::scalar::Scalar;
use crate::schedule::Schedule;

/// A raw pointer that may cross threads. Sound here because the schedule hands every parallel task
/// disjoint output blocks (checked by the schedule's tests).
#[derive(Clone, Copy)]
struct SyncPtr<T>(*mut T);
unsafe impl<T> Send for SyncPtr<T> {}
unsafe impl<T> Sync for SyncPtr<T> {}

/// Plan-owned CPU workspace and the pool that works on it.
pub struct CpuEngine<T> {
    dims: Dims,
    algorithm: Algorithm,
    schedule: Option<Schedule>,
    /// Coupling slots per item: N−1 (sequential) or the schedule's count.
    slots_per_item: usize,
    diag: Vec<T>,
    slots: Vec<T>,
    pool: Option<rayon::ThreadPool>,
    /// Per-item failure keys of the running factorization (allocated once: factor never allocates).
    fail: Vec<AtomicU64>,
    /// Per-item count of boosted pivots of the running factorization.
    boosted: Vec<AtomicU32>,
    /// Added to every diagonal entry of D_i on upload.
    diag_shift: T,
    /// What potrf does with small pivots.
    pivots: PivotPolicy<T>,
}

/// Allocates a zeroed vector, turning allocation failure into an error instead of an abort.
pub(crate) fn try_zeroed<T: Scalar>(len: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| Error::OutOfMemory(format!("{what}: {} bytes", len.saturating_mul(std::mem::size_of::<T>()))))?;
    v.resize(len, T::ZERO);
    Ok(v)
}

impl<T: Scalar> CpuEngine<T> {
    /// `algorithm` must be resolved (not `Auto`), `schedule` given exactly for nested dissection
    /// (plain or partitioned); `threads` ≥ 1. `diag_shift` is added to every diagonal entry on
    /// upload; `pivots` says what potrf does with small pivots.
    pub fn new(
        dims: Dims,
        algorithm: Algorithm,
        schedule: Option<Schedule>,
        threads: usize,
        diag_shift: T,
        pivots: PivotPolicy<T>,
    ) -> Result<Self> {
        assert_eq!(
            schedule.is_some(),
            algorithm == Algorithm::NestedDissection,
            "a schedule exactly for nested dissection"
        );
        assert!(schedule.as_ref().map_or(true, |s| s.n_blocks() == dims.n_blocks));
        let slots_per_item = schedule.as_ref().map_or(dims.n_blocks - 1, |s| s.n_slots());
        let diag = try_zeroed(dims.diag_len(), "CPU diagonal-block workspace")?;
        let slots = try_zeroed(dims.batch * slots_per_item * dims.block_len(), "CPU coupling workspace")?;
        let pool = if threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("btchol-{i}"))
                    .build()
                    .map_err(|e| Error::BackendUnavailable(format!("cannot start {threads} CPU threads: {e}")))?,
            )
        } else {
            None
        };
        let fail = (0..dims.batch).map(|_| AtomicU64::new(u64::MAX)).collect();
        let boosted = (0..dims.batch).map(|_| AtomicU32::new(0)).collect();
        Ok(CpuEngine {
            dims,
            algorithm,
            schedule,
            slots_per_item,
            diag,
            slots,
            pool,
            fail,
            boosted,
            diag_shift,
            pivots,
        })
    }

    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
    pub fn threads(&self) -> usize {
        self.pool.as_ref().map_or(1, |p| p.current_num_threads())
    }
    pub fn workspace_bytes(&self) -> usize {
        (self.diag.len() + self.slots.len()) * std::mem::size_of::<T>()
    }

    /// Runs `f(0..count)` on the pool (or inline with one thread); tasks of at least ~`grain` flops.
    fn par_for(&self, count: usize, work_per_task: usize, f: impl Fn(usize) + Sync + Send) {
        match &self.pool {
            Some(pool) if count > 1 => {
                let min_len = (16384 / work_per_task.max(1)).max(1);
                pool.install(|| (0..count).into_par_iter().with_min_len(min_len).for_each(f))
            }
            _ => (0..count).for_each(f),
        }
    }

    /// Copies the caller's blocks into the workspace: column-major, lower triangle of D (plus the
    /// diagonal shift), and each E_i in the orientation its slot stores (transposed where the
    /// schedule says so). Only the listed `items` are copied; the others keep their workspace.
    pub fn upload(&mut self, m: &BlockTridiagRef<T>, items: &[usize]) {
        let d = self.dims;
        let (n, nb, bl) = (d.block_size, d.n_blocks, d.block_len());
        let shift = self.diag_shift;
        for &b in items {
            for i in 0..nb {
                let dst = &mut self.diag[(b * nb + i) * bl..][..bl];
                for c in 0..n {
                    dst[c + c * n] = m.d(b, i, c, c) + shift;
                    for r in c + 1..n {
                        dst[r + c * n] = m.d(b, i, r, c);
                    }
                }
            }
            for i in 0..nb - 1 {
                let transposed = self.schedule.as_ref().is_some_and(|s| s.sub_block_transposed(i));
                let dst = &mut self.slots[(b * self.slots_per_item + i) * bl..][..bl];
                for c in 0..n {
                    for r in 0..n {
                        dst[r + c * n] = if transposed { m.e(b, i, c, r) } else { m.e(b, i, r, c) };
                    }
                }
            }
        }
    }

    /// Factors the listed `items` (distinct, ascending or not); fills their entries of `status`
    /// and `boosted_out` (the count of boosted pivots). Failed items are left partially factored;
    /// the other items, their workspace and their entries are not touched, and the work is
    /// proportional to the number of listed items.
    pub fn factor(&mut self, status: &mut [ItemStatus], boosted_out: &mut [u32], items: &[usize]) {
        let d = self.dims;
        let (n, nb, bl, spi) = (d.block_size, d.n_blocks, d.block_len(), self.slots_per_item);
        let diag = SyncPtr(self.diag.as_mut_ptr());
        let slots = SyncPtr(self.slots.as_mut_ptr());
        // Failure key per item: level · 2^40 + block · 2^20 + column, minimum wins (earliest pivot
        // in elimination order); u64::MAX = no failure.
        let fail = &self.fail;
        let boosted = &self.boosted;
        for &b in items {
            fail[b].store(u64::MAX, Ordering::Relaxed);
            boosted[b].store(0, Ordering::Relaxed);
        }
        let piv = self.pivots;
        let key = |level: usize, block: usize, col: usize| ((level as u64) << 42) | ((block as u64) << 16) | col as u64;
        let work = n * n * n;
        match &self.schedule {
            None => self.par_for(items.len(), work * nb, |k| {
                let (diag, slots, b) = (diag, slots, items[k]);
                let mut count = 0;
                let r = unsafe {
                    sequential::factor_item::<T>(
                        n,
                        nb,
                        diag.0.add(b * nb * bl),
                        slots.0.add(b * spi * bl),
                        piv,
                        &mut count,
                    )
                };
                boosted[b].store(count, Ordering::Relaxed);
                if let Err((block, col)) = r {
                    fail[b].store(key(0, block, col), Ordering::Relaxed);
                }
            }),
            Some(s) => {
                for (l, level) in s.levels().iter().enumerate() {
                    let ne = level.eliminations.len();
                    self.par_for(items.len() * ne, work * 5, |t| {
                        let (diag, slots) = (diag, slots);
                        let (b, e) = (items[t / ne], &level.eliminations[t % ne]);
                        // Skip items that failed at an earlier level only: every failing pivot of
                        // this level must be recorded so the minimum (earliest) one is reported.
                        if fail[b].load(Ordering::Relaxed) < key(l, 0, 0) {
                            return;
                        }
                        let mut count = 0;
                        let r = unsafe {
                            nested::eliminate::<T>(
                                n,
                                e,
                                diag.0.add(b * nb * bl),
                                slots.0.add(b * spi * bl),
                                piv,
                                &mut count,
                            )
                        };
                        if count > 0 {
                            // Integer sums: the total is the same in any order.
                            boosted[b].fetch_add(count, Ordering::Relaxed);
                        }
                        if let Err(col) = r {
                            fail[b].fetch_min(key(l, e.block, col), Ordering::Relaxed);
                        }
                    });
                    let nu = level.updates.len();
                    self.par_for(items.len() * nu, work * 2, |t| {
                        let (diag, slots) = (diag, slots);
                        let (b, u) = (items[t / nu], &level.updates[t % nu]);
                        if fail[b].load(Ordering::Relaxed) != u64::MAX {
                            return;
                        }
                        unsafe { nested::schur_update::<T>(n, u, diag.0.add(b * nb * bl), slots.0.add(b * spi * bl)) };
                    });
                }
            }
        }
        for &b in items {
            boosted_out[b] = boosted[b].load(Ordering::Relaxed);
            let k = fail[b].load(Ordering::Relaxed);
            status[b] = if k == u64::MAX {
                ItemStatus::Factored
            } else {
                ItemStatus::NotPositiveDefinite {
                    block: ((k >> 16) & ((1 << 26) - 1)) as usize,
                    column: (k & 0xffff) as usize,
                }
            };
        }
    }

    /// Solves in place for the listed `items` whose status is `Factored`; other items are left
    /// untouched (not even read), and the work is proportional to the number of listed items.
    pub fn solve(&self, status: &[ItemStatus], rhs: &mut RhsMut<T>, items: &[usize]) {
        let d = self.dims;
        let (n, nb, bl, spi) = (d.block_size, d.n_blocks, d.block_len(), self.slots_per_item);
        let shape = rhs.shape;
        let m = shape.nrhs;
        let (rs, cs) = match shape.layout {
            crate::model::Layout::RowMajor => (shape.ld, 1),
            crate::model::Layout::ColMajor => (1, shape.ld),
        };
        let base = SyncPtr(rhs.data.as_mut_ptr());
        let y_of = move |b: usize| {
            let base = base;
            Strided { ptr: base.0.wrapping_add(b * shape.item_stride), rs, cs }
        };
        let diag = SyncPtr(self.diag.as_ptr() as *mut T);
        let slots = SyncPtr(self.slots.as_ptr() as *mut T);
        let ok = |b: usize| status[b] == ItemStatus::Factored;
        let work = n * n * m;
        match &self.schedule {
            None => self.par_for(items.len(), work * nb * 4, |k| {
                let (diag, slots, b) = (diag, slots, items[k]);
                if ok(b) {
                    unsafe {
                        sequential::solve_item::<T>(
                            n,
                            nb,
                            m,
                            diag.0.add(b * nb * bl),
                            slots.0.add(b * spi * bl),
                            y_of(b),
                        )
                    }
                }
            }),
            Some(s) => {
                for level in s.levels() {
                    let ne = level.eliminations.len();
                    self.par_for(items.len() * ne, work, |t| {
                        // Rebound so the closure captures the whole (Sync) SyncPtr, not its raw
                        // pointer field (edition 2021's disjoint captures would).
                        #[allow(clippy::redundant_locals)]
                        let diag = diag;
                        let (b, e) = (items[t / ne], &level.eliminations[t % ne]);
                        if ok(b) {
                            unsafe { nested::forward_eliminate::<T>(n, m, e, diag.0.add(b * nb * bl), y_of(b)) }
                        }
                    });
                    let nu = level.updates.len();
                    self.par_for(items.len() * nu, work * 4, |t| {
                        #[allow(clippy::redundant_locals)] // (as `diag` above)
                        let slots = slots;
                        let (b, u) = (items[t / nu], &level.updates[t % nu]);
                        if ok(b) {
                            unsafe { nested::forward_update::<T>(n, m, u, slots.0.add(b * spi * bl), y_of(b)) }
                        }
                    });
                }
                for level in s.levels().iter().rev() {
                    let ne = level.eliminations.len();
                    self.par_for(items.len() * ne, work * 5, |t| {
                        let (diag, slots) = (diag, slots);
                        let (b, e) = (items[t / ne], &level.eliminations[t % ne]);
                        if ok(b) {
                            unsafe {
                                nested::backward_eliminate::<T>(
                                    n,
                                    m,
                                    e,
                                    diag.0.add(b * nb * bl),
                                    slots.0.add(b * spi * bl),
                                    y_of(b),
                                )
                            }
                        }
                    });
                }
            }
        }
    }

    /// log det Ψ = 2 Σ log diag(D̂_i) for each factored item (NaN for the others).
    pub fn logdet(&self, status: &[ItemStatus], out: &mut [f64]) {
        let d = self.dims;
        let (n, bl) = (d.block_size, d.block_len());
        for (b, o) in out.iter_mut().enumerate().take(d.batch) {
            *o = if status[b] == ItemStatus::Factored {
                let mut s = 0.0;
                for i in 0..d.n_blocks {
                    let blk = &self.diag[(b * d.n_blocks + i) * bl..];
                    for k in 0..n {
                        s += blk[k + k * n].to_f64().ln();
                    }
                }
                2.0 * s
            } else {
                f64::NAN
            };
        }
    }
}
