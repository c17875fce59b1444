//! Page-locked host memory for fast uploads (src/host_buffer.rs, `btchol_host_alloc`): page-locked
//! exactly where a GPU plan can be created, ordinary zeroed memory elsewhere, and a plan fed from
//! it solves to the same bits as one fed from a `Vec`. On a machine without a GPU the fallback is
//! what is tested (said on stderr); `BTCHOL_REQUIRE_GPU=1` makes that a failure instead.

mod common;

use std::ffi::c_void;

use btchol::capi::*;
use btchol::reference::{random_problem, random_vec};
use btchol::*;
use common::*;

/// Whether the driver counts `ptr` as page-locked memory (cuMemHostGetFlags fails otherwise);
/// false without a GPU (the driver library may be absent: not called then).
fn driver_says_page_locked(gpu: bool, ptr: *const c_void) -> bool {
    use cudarc::driver::sys;
    let mut flags = 0u32;
    gpu && unsafe { sys::cuMemHostGetFlags(&mut flags, ptr as *mut c_void) } == sys::CUresult::CUDA_SUCCESS
}

fn gpu_present(test: &str) -> bool {
    let gpu = btchol::cuda::cuda_available();
    if !gpu {
        assert_ne!(std::env::var("BTCHOL_REQUIRE_GPU").as_deref(), Ok("1"), "BTCHOL_REQUIRE_GPU=1 but no usable GPU");
        eprintln!("{test}: no usable GPU, so the ordinary-memory fallback is what is tested");
    }
    gpu
}

/// A drawn problem (row-major), with its blocks also copied into `HostBuffer`s.
struct TwoCopies {
    dims: Dims,
    d: Vec<f64>,
    e: Vec<f64>,
    b: Vec<f64>,
    hd: HostBuffer<f64>,
    he: HostBuffer<f64>,
}

fn two_copies(dims: Dims, salt: usize) -> TwoCopies {
    let seed = seed_from(&[dims.batch, dims.n_blocks, dims.block_size, salt]);
    let (d, e) = random_problem::<f64>(seed, dims, Layout::RowMajor, 1.0);
    let b = random_vec::<f64>(seed ^ 0xB, dims.batch * dims.rows());
    let (mut hd, mut he) = (HostBuffer::<f64>::zeroed(d.len()).unwrap(), HostBuffer::<f64>::zeroed(e.len()).unwrap());
    hd.copy_from_slice(&d);
    he.copy_from_slice(&e);
    TwoCopies { dims, d, e, b, hd, he }
}

/// `plan.factor_solve` of the blocks `(d, e)` and the problem's b: the solution, after checking
/// its backward error against the reference.
fn factor_solve_checked(plan: &mut Plan<f64>, p: &TwoCopies, d: &[f64], e: &[f64]) -> Vec<f64> {
    let m = BlockTridiagRef::new(p.dims, Layout::RowMajor, d, e).unwrap();
    let mut x = p.b.clone();
    plan.factor_solve(&m, &mut RhsMut::dense(p.dims, 1, Layout::RowMajor, &mut x).unwrap()).unwrap();
    let be = backward_error_of(&m, RhsShape::dense(p.dims, 1, Layout::RowMajor), &x, &p.b, &[]);
    assert!(be < tolerance::<f64>(p.dims.block_size), "{:?}: backward error {be:e}", p.dims);
    x
}

#[test]
fn host_buffers_are_zeroed_and_page_locked_exactly_where_a_gpu_is() {
    let gpu = gpu_present("host_buffers_are_zeroed_and_page_locked_exactly_where_a_gpu_is");
    for len in [0usize, 1, 4097, 1 << 20] {
        let mut buf = HostBuffer::<f64>::zeroed(len).unwrap();
        assert_eq!((buf.len(), buf.is_page_locked()), (len, gpu), "len {len}");
        assert!(buf.iter().all(|&v| v == 0.0), "len {len}: not zeroed");
        if len > 0 {
            assert_eq!(driver_says_page_locked(gpu, buf.as_ptr() as *const c_void), gpu, "len {len}");
            buf[len - 1] = 2.5;
            assert_eq!(buf[len - 1], 2.5);
        }
    }
    match HostBuffer::<f64>::zeroed(usize::MAX / 4) {
        Err(Error::InvalidDimension(m)) => assert!(m.contains("overflows"), "{m}"),
        other => panic!("an overflowing size gave {other:?}"),
    }
}

#[test]
fn plans_fed_from_host_buffers_solve_to_the_bits_of_plans_fed_from_vecs() {
    let gpu = gpu_present("plans_fed_from_host_buffers_solve_to_the_bits_of_plans_fed_from_vecs");
    let backend = if gpu { Backend::Cuda } else { Backend::Cpu };
    for (batch, nb, n, alg) in [
        (1, 1, 1, Algorithm::Auto),
        (1, 37, 8, Algorithm::Auto),
        (3, 5, 13, Algorithm::Auto),
        (16, 11, 16, Algorithm::Sequential),
    ] {
        let p = two_copies(Dims::new(batch, nb, n).unwrap(), 77);
        let options = PlanOptions { backend, algorithm: alg, ..Default::default() };
        let solutions: Vec<Vec<f64>> = [(&p.d[..], &p.e[..]), (&p.hd[..], &p.he[..])]
            .into_iter()
            .map(|(d, e)| factor_solve_checked(&mut Plan::<f64>::new(p.dims, options).unwrap(), &p, d, e))
            .collect();
        assert!(solutions[0] == solutions[1], "B={batch} N={nb} n={n}: other bits from a HostBuffer");
    }
}

#[test]
fn the_c_api_allocates_page_locked_memory_and_frees_only_its_own() {
    let gpu = gpu_present("the_c_api_allocates_page_locked_memory_and_frees_only_its_own");
    unsafe {
        let (mut p, mut locked) = (std::ptr::null_mut::<c_void>(), -1i32);
        assert_eq!(btchol_host_alloc(1000, &mut p, &mut locked), BTCHOL_STATUS_SUCCESS);
        assert!(!p.is_null() && p as usize % 64 == 0, "{p:p} is not 64-byte aligned");
        assert_eq!(locked, gpu as i32);
        assert_eq!(driver_says_page_locked(gpu, p), gpu);
        let bytes = std::slice::from_raw_parts_mut(p as *mut u8, 1000);
        assert!(bytes.iter().all(|&v| v == 0), "not zeroed");
        bytes.fill(7);
        // Inside the block, someone else's memory, twice: rejected, nothing freed.
        assert_eq!(btchol_host_free((p as *mut u8).add(8) as *mut c_void), BTCHOL_STATUS_INVALID_ARGUMENT);
        let m = std::ffi::CStr::from_ptr(btchol_last_error_message()).to_string_lossy().into_owned();
        assert!(m.contains("not memory from btchol_host_alloc"), "{m}");
        let mut other = vec![0u8; 64];
        assert_eq!(btchol_host_free(other.as_mut_ptr() as *mut c_void), BTCHOL_STATUS_INVALID_ARGUMENT);
        assert_eq!(btchol_host_free(p), BTCHOL_STATUS_SUCCESS);
        assert_eq!(btchol_host_free(p), BTCHOL_STATUS_INVALID_ARGUMENT);
        assert_eq!(btchol_host_free(std::ptr::null_mut()), BTCHOL_STATUS_SUCCESS);
        // Bad arguments: a clear status, no output written.
        let mut q = std::ptr::null_mut::<c_void>();
        assert_eq!(btchol_host_alloc(0, &mut q, std::ptr::null_mut()), BTCHOL_STATUS_INVALID_DIMENSION);
        assert_eq!(btchol_host_alloc(-5, &mut q, std::ptr::null_mut()), BTCHOL_STATUS_INVALID_DIMENSION);
        assert_eq!(btchol_host_alloc(8, std::ptr::null_mut(), std::ptr::null_mut()), BTCHOL_STATUS_NULL_POINTER);
        assert!(q.is_null());
        // (The driver may call 4 EiB of page-locked memory an invalid value rather than too much.)
        let huge = btchol_host_alloc(1 << 62, &mut q, std::ptr::null_mut());
        assert!(huge == BTCHOL_STATUS_OUT_OF_MEMORY || (gpu && huge == BTCHOL_STATUS_CUDA_ERROR), "status {huge}");
        assert!(q.is_null());
    }
}

/// Uploads of 4 MB and more from ordinary memory are copied by several threads through
/// page-locked slots (src/cuda/host_stager.rs); from page-locked memory, by the DMA directly. Both
/// must deliver every byte: shares that split a block, a share that spans D and E, E empty
/// (N = 1), a batch of sequential plans.
#[test]
fn large_uploads_from_ordinary_memory_match_uploads_from_page_locked_memory() {
    if !gpu_or_skip("large_uploads_from_ordinary_memory_match_uploads_from_page_locked_memory") {
        return;
    }
    let cases = [
        (1, 1024, 32, Algorithm::Auto),       // 16.8 MB: eight workers
        (1, 3001, 13, Algorithm::Auto),       // 8.1 MB, odd n: shares end inside blocks
        (2000, 1, 29, Algorithm::Auto),       // 13.5 MB of D alone (N = 1, E empty)
        (512, 33, 16, Algorithm::Sequential), // 68 MB, a batch
    ];
    for (batch, nb, n, algorithm) in cases {
        let p = two_copies(Dims::new(batch, nb, n).unwrap(), 78);
        let options = PlanOptions { backend: Backend::Cuda, algorithm, ..Default::default() };
        let mut plan = Plan::<f64>::new(p.dims, options).unwrap();
        // Ordinary, page-locked, ordinary again (the slots reused by a second staged upload).
        let solutions: Vec<Vec<f64>> = [(&p.d[..], &p.e[..]), (&p.hd[..], &p.he[..]), (&p.d[..], &p.e[..])]
            .into_iter()
            .map(|(d, e)| factor_solve_checked(&mut plan, &p, d, e))
            .collect();
        assert!(solutions[0] == solutions[1] && solutions[1] == solutions[2], "B={batch} N={nb} n={n}: other bits");
    }
}

/// Host right-hand sides of more than a megabyte are checked, packed and unpacked over several
/// threads (src/host_parallel.rs): padded row- and column-major shapes, a batch mask, and the
/// padding and unselected items left as they were.
#[test]
fn large_host_right_hand_sides_solve_over_threads_in_every_layout() {
    let backend = if gpu_present("large_host_right_hand_sides_solve_over_threads_in_every_layout") {
        Backend::Cuda
    } else {
        Backend::Cpu
    };
    let dims = Dims::new(3, 1500, 16).unwrap();
    let (d, e) = random_problem::<f64>(9, dims, Layout::RowMajor, 1.0);
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    let mut plan = Plan::<f64>::new(dims, PlanOptions { backend, ..Default::default() }).unwrap();
    plan.upload(&m).unwrap();
    plan.factor().unwrap();
    let (rows, nrhs) = (dims.rows(), 3);
    let shapes = [
        RhsShape { nrhs, layout: Layout::RowMajor, ld: nrhs + 2, item_stride: rows * (nrhs + 2) + 7 },
        RhsShape { nrhs, layout: Layout::ColMajor, ld: rows + 3, item_stride: (rows + 3) * nrhs + 5 },
    ];
    for shape in shapes {
        let len = shape.required_len(dims).unwrap();
        let b = random_vec::<f64>(seed_from(&[shape.ld]), len);
        let mut x = b.clone();
        plan.solve(&mut RhsMut::new(dims, shape, &mut x).unwrap()).unwrap();
        let be = backward_error_of(&m, shape, &x, &b, &[]);
        assert!(be < tolerance::<f64>(16), "{:?}: backward error {be:e}", shape.layout);
        // Every element that is not part of the right-hand sides is as it was (the padding).
        let mut used = vec![false; len];
        for item in 0..dims.batch {
            for r in 0..rows {
                for c in 0..nrhs {
                    used[shape.offset(item, r, c)] = true;
                }
            }
        }
        assert!((0..len).filter(|&k| !used[k]).all(|k| x[k].to_bits() == b[k].to_bits()), "{:?}", shape.layout);
        // Masked: item 1 is left alone, the others solved.
        let mut y = b.clone();
        plan.solve_masked(&[true, false, true], &mut RhsMut::new(dims, shape, &mut y).unwrap()).unwrap();
        let be = backward_error_of(&m, shape, &y, &b, &[1]);
        assert!(be < tolerance::<f64>(16), "{:?} masked: backward error {be:e}", shape.layout);
        assert!((0..rows).all(|r| (0..nrhs).all(|c| y[shape.offset(1, r, c)] == b[shape.offset(1, r, c)])));
    }
}
