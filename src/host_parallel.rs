//! Host passes over large right-hand sides split over a few threads.
//!
//! A GPU plan's host solve makes three passes over the caller's right-hand sides (the NaN/Inf
//! check, the pack into page-locked staging, the unpack of the solution) and one core of the
//! H200 machine copies 5.6 GB/s (`bench/results/experiments/host-copy-threads.py`; 8 threads:
//! 34 GB/s), so for B = 1024, N = 32, n = 16 (4 MB) the passes took most of a 1.8 ms solve
//! whose device part is 0.12 ms. Small right-hand sides stay on the calling thread, allocation
//! free: starting a thread costs more than a pass over less than `MIN_SHARE_BYTES`.

use std::ops::Range;

/// The least work (bytes) worth a thread of its own.
const MIN_SHARE_BYTES: usize = 512 << 10;
/// At most this many threads.
const MAX_SHARES: usize = 8;

/// The most threads a host pass or an upload uses: `BTCHOL_HOST_THREADS` (read once; 0 or 1:
/// none but the caller's, and uploads by the driver's own copy), else the cores, at most 8.
pub(crate) fn host_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        std::env::var("BTCHOL_HOST_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(cores.min(MAX_SHARES))
    })
}

/// Who runs a host pass: the caller's thread alone (CPU plans: their thread count is theirs to
/// choose), or up to [`host_threads`] (GPU plans, whose host passes are pure overhead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Threads {
    Caller,
    Host,
}

/// A pointer several threads write through, each to elements no other thread touches.
#[derive(Clone, Copy)]
pub(crate) struct Disjoint<T>(pub *mut T);
// SAFETY: the users of `Disjoint` hand each thread its own elements (see `shares`).
unsafe impl<T> Send for Disjoint<T> {}
unsafe impl<T> Sync for Disjoint<T> {}

impl<T> Disjoint<T> {
    /// The pointer (a method, so that closures capture the `Sync` wrapper, not the raw field).
    pub(crate) fn ptr(self) -> *mut T {
        self.0
    }
}

/// Runs `work` over `0..count` elements of `elem_bytes` each, split into contiguous shares on
/// rayon's global pool (the caller's thread takes the first), at most `threads` (see
/// [`Threads`]); returns the first `Some` in share order. One share (small inputs, or
/// `Threads::Caller`) runs inline and allocates nothing.
pub(crate) fn shares<R: Send>(
    count: usize,
    elem_bytes: usize,
    threads: Threads,
    work: impl Fn(Range<usize>) -> Option<R> + Sync,
) -> Option<R> {
    let wanted = count.saturating_mul(elem_bytes) / MIN_SHARE_BYTES;
    // (Small inputs do not even ask how many threads: the first asking reads the environment.)
    let n = match threads {
        Threads::Host if wanted >= 2 => wanted.min(host_threads().clamp(1, MAX_SHARES)),
        _ => 1,
    };
    if n == 1 {
        return work(0..count);
    }
    split_over(&mut vec![(); n], count, |_, range| work(range)).into_iter().flatten().next()
}

/// Runs `work(state, share)` for each of `states` on its own contiguous share of `0..count`,
/// the first on the caller's thread and the others on rayon's global pool (its threads are
/// started once per process: starting threads per call cost more than a pass saved on the H200
/// machine's virtual CPUs); returns the results in share order.
pub(crate) fn split_over<S: Send, R: Send>(
    states: &mut [S],
    count: usize,
    work: impl Fn(&mut S, Range<usize>) -> R + Sync,
) -> Vec<R> {
    let n = states.len();
    let bound = |k: usize| count * k / n;
    let mut results: Vec<Option<R>> = (0..n).map(|_| None).collect();
    rayon::in_place_scope(|scope| {
        let (first, rest) = results.split_at_mut(1);
        let (mine, theirs) = states.split_at_mut(1);
        let work = &work;
        for (k, (state, slot)) in theirs.iter_mut().zip(rest.iter_mut()).enumerate() {
            scope.spawn(move |_| *slot = Some(work(state, bound(k + 1)..bound(k + 2))));
        }
        first[0] = Some(work(&mut mine[0], bound(0)..bound(1)));
    });
    results.into_iter().map(|r| r.expect("every share ran")).collect()
}

/// Calls `f(k, c, rows)` for the runs of `range` in the index space of `items × m columns ×
/// rows rows` (item-major, then column, then row), in order: k is the item's position.
pub(crate) fn column_runs(range: Range<usize>, rows: usize, m: usize, mut f: impl FnMut(usize, usize, Range<usize>)) {
    let mut p = range.start;
    while p < range.end {
        let (col, r0) = (p / rows, p % rows);
        let r1 = rows.min(r0 + (range.end - p));
        f(col / m, col % m, r0..r1);
        p += r1 - r0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_runs_cover_a_range_once_in_order() {
        let (rows, m) = (7, 3);
        for (lo, hi) in [(0, 84), (5, 6), (6, 30), (20, 21), (13, 84), (0, 0)] {
            let mut seen = Vec::new();
            column_runs(lo..hi, rows, m, |k, c, rr| seen.extend(rr.map(|r| (k * m + c) * rows + r)));
            assert_eq!(seen, (lo..hi).collect::<Vec<_>>(), "{lo}..{hi}");
        }
    }

    #[test]
    fn shares_cover_the_work_once_and_return_the_first_hit_in_share_order() {
        let total = 1000;
        let seen = std::sync::Mutex::new(Vec::new());
        let none = shares(total, 1 << 20, Threads::Host, |r| -> Option<()> {
            seen.lock().unwrap().push(r);
            None
        });
        assert_eq!(none, None);
        let mut parts = seen.into_inner().unwrap();
        parts.sort_by_key(|r| r.start);
        assert!(parts.len() > 1 || host_threads() <= 1, "{parts:?}");
        assert_eq!((parts.first().unwrap().start, parts.last().unwrap().end), (0, total));
        assert!(parts.windows(2).all(|w| w[0].end == w[1].start), "{parts:?}");
        // The first hit in share order, not the first thread to finish.
        let want = parts.iter().find(|r| r.end > 400).unwrap().start;
        assert_eq!(shares(total, 1 << 20, Threads::Host, |r| (r.end > 400).then_some(r.start)), Some(want));
        assert_eq!(shares(10, 8, Threads::Host, Some), Some(0..10)); // small: one share, inline
        assert_eq!(shares(total, 1 << 20, Threads::Caller, Some), Some(0..total));
    }
}
