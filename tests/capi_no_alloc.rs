//! The C API's real-time promise: once a plan exists, the boundary adds no allocation to upload,
//! factor, solve, logdet and item_status, on success and on a "not positive definite" failure
//! (whose message goes to a fixed thread-local buffer). Checked with a global allocator that counts
//! the calling thread's allocations (single-threaded plans: a multi-threaded pool's scheduler is
//! rayon's business, not the boundary's). The CPU engine keeps its per-item failure keys in the
//! plan, so a whole factor allocates nothing either.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;

use btchol::capi::*;

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        System.realloc(p, layout, new_size)
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout)
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(|c| c.get());
    f();
    ALLOCATIONS.with(|c| c.get()) - before
}

/// A diagonally dominant batch (B items, N blocks of n), row-major, full symmetric D blocks.
fn problem(b: usize, nb: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut state = 0x5EEDu64;
    let mut uniform = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut d = vec![0.0; b * nb * n * n];
    let e: Vec<f64> = (0..b * (nb - 1) * n * n).map(|_| uniform()).collect();
    for blk in 0..b * nb {
        for r in 0..n {
            for c in 0..=r {
                let v = if r == c { 2.0 * n as f64 + 2.0 } else { 0.2 * uniform() };
                d[blk * n * n + r * n + c] = v;
                d[blk * n * n + c * n + r] = v;
            }
        }
    }
    (d, e)
}

fn plan_with(algorithm: btchol_algorithm, b: i64, nb: i64, n: i64) -> *mut btchol_plan {
    let mut o = btchol_plan_options { struct_size: 0, ..unsafe { std::mem::zeroed() } };
    unsafe {
        assert_eq!(btchol_plan_options_init(&mut o), BTCHOL_STATUS_SUCCESS);
        o.backend = BTCHOL_BACKEND_CPU;
        o.algorithm = algorithm;
        o.threads = 1;
        let mut plan = ptr::null_mut();
        assert_eq!(btchol_plan_create(b, nb, n, BTCHOL_DTYPE_F64, &o, &mut plan), BTCHOL_STATUS_SUCCESS);
        plan
    }
}

fn upload(plan: *mut btchol_plan, d: &[f64], e: &[f64]) -> btchol_status {
    unsafe { btchol_plan_upload(plan, d.as_ptr() as *const c_void, e.as_ptr() as *const c_void) }
}

fn factor(plan: *mut btchol_plan) -> btchol_status {
    let (mut failed_item, mut info) = (0i64, 0i64);
    unsafe { btchol_plan_factor(plan, &mut failed_item, &mut info) }
}

const SHAPE: (usize, usize, usize, usize) = (3, 37, 5, 4); // B, N, n, nrhs

#[test]
fn upload_solve_logdet_and_item_status_do_not_allocate_for_either_algorithm() {
    let (b, nb, n, m) = SHAPE;
    let (d, e) = problem(b, nb, n);
    let rhs0: Vec<f64> = (0..b * nb * n * m).map(|k| (k % 11) as f64 - 5.0).collect();
    for algorithm in [BTCHOL_ALGORITHM_SEQUENTIAL, BTCHOL_ALGORITHM_NESTED_DISSECTION] {
        let plan = plan_with(algorithm, b as i64, nb as i64, n as i64);
        let mut rhs = rhs0.clone();
        let mut logdet = vec![0.0; b];
        let mut info = vec![0i64; b];
        // Warm up once (thread-local state of the boundary and of std is set up lazily).
        assert_eq!(upload(plan, &d, &e), BTCHOL_STATUS_SUCCESS);
        assert_eq!(factor(plan), BTCHOL_STATUS_SUCCESS);
        for _ in 0..3 {
            let allocations = allocations_during(|| unsafe {
                assert_eq!(btchol_plan_solve(plan, rhs.as_mut_ptr() as *mut c_void, m as i64, 0, 0, 0), 0);
                assert_eq!(btchol_plan_logdet(plan, logdet.as_mut_ptr()), 0);
                assert_eq!(btchol_plan_item_status(plan, info.as_mut_ptr()), 0);
                assert_eq!(upload(plan, &d, &e), BTCHOL_STATUS_SUCCESS);
            });
            assert_eq!(allocations, 0, "algorithm {algorithm}: {allocations} allocations");
            assert_eq!(factor(plan), BTCHOL_STATUS_SUCCESS);
            rhs.copy_from_slice(&rhs0);
        }
        assert!(logdet.iter().all(|x| x.is_finite()) && info.iter().all(|&i| i == 0));
        unsafe { btchol_plan_destroy(plan) };
    }
}

#[test]
fn factor_does_not_allocate() {
    let (b, nb, n, m) = SHAPE;
    let (d, e) = problem(b, nb, n);
    let mut rhs = vec![1.0; b * nb * n * m];
    for algorithm in [BTCHOL_ALGORITHM_SEQUENTIAL, BTCHOL_ALGORITHM_NESTED_DISSECTION] {
        let plan = plan_with(algorithm, b as i64, nb as i64, n as i64);
        assert_eq!(upload(plan, &d, &e), BTCHOL_STATUS_SUCCESS);
        assert_eq!(factor(plan), BTCHOL_STATUS_SUCCESS);
        assert_eq!(upload(plan, &d, &e), BTCHOL_STATUS_SUCCESS);
        let allocations = allocations_during(|| unsafe {
            assert_eq!(factor(plan), BTCHOL_STATUS_SUCCESS);
            let (mut failed_item, mut info) = (0i64, 0i64);
            let status = btchol_plan_factor_solve(
                plan,
                d.as_ptr() as *const c_void,
                e.as_ptr() as *const c_void,
                rhs.as_mut_ptr() as *mut c_void,
                m as i64,
                BTCHOL_LAYOUT_ROW_MAJOR,
                0,
                0,
                &mut failed_item,
                &mut info,
            );
            assert_eq!(status, BTCHOL_STATUS_SUCCESS);
        });
        assert_eq!(allocations, 0, "algorithm {algorithm}: {allocations} allocations in factor/factor_solve");
        unsafe { btchol_plan_destroy(plan) };
    }
}

#[test]
fn reporting_not_positive_definite_does_not_allocate() {
    let (b, nb, n) = (2usize, 9usize, 3usize);
    let (mut d, e) = problem(b, nb, n);
    d[(nb + 4) * n * n + n + 1] = -1e3; // item 1, block 4, element (1, 1)
    let plan = plan_with(BTCHOL_ALGORITHM_SEQUENTIAL, b as i64, nb as i64, n as i64);
    let mut rhs = vec![1.0; b * nb * n];
    let mut status = vec![0i64; b];
    let (mut failed_item, mut info) = (0i64, 0i64);
    assert_eq!(upload(plan, &d, &e), BTCHOL_STATUS_SUCCESS);
    assert_eq!(unsafe { btchol_plan_factor(plan, &mut failed_item, &mut info) }, BTCHOL_STATUS_NOT_POSITIVE_DEFINITE);
    assert_eq!((failed_item, info), (1, (4 * n + 1 + 1) as i64));
    let allocations = allocations_during(|| unsafe {
        let s = btchol_plan_solve(plan, rhs.as_mut_ptr() as *mut c_void, 1, 0, 0, 0);
        assert_eq!(s, BTCHOL_STATUS_NOT_POSITIVE_DEFINITE);
        assert_eq!(btchol_plan_item_status(plan, status.as_mut_ptr()), BTCHOL_STATUS_SUCCESS);
    });
    assert_eq!(allocations, 0);
    assert_eq!(status, [0, info]);
    unsafe { btchol_plan_destroy(plan) };
}
