//! Unit tests of the boundary itself: the panic guard, the message buffer, the options-struct
//! rules and the one-thread-per-plan check. End-to-end behaviour is tested through the C
//! programs in `c-examples/` and `tests/capi_*.rs`.

use std::ffi::CStr;
use std::ptr;

use super::boundary::{fail, guard};
use super::last_error;
use super::*;

fn message() -> String {
    unsafe { CStr::from_ptr(btchol_last_error_message()) }.to_str().unwrap().to_owned()
}

#[test]
fn panic_inside_an_entry_point_becomes_internal_status_with_message() {
    let status = guard("btchol_test_entry", || panic!("boom {}", 42));
    assert_eq!(status, BTCHOL_STATUS_INTERNAL);
    let m = message();
    assert!(m.starts_with("btchol_test_entry: internal error (panic: boom 42)"), "{m}");
}

#[test]
fn message_is_cleared_by_the_next_entry_point_and_kept_by_queries() {
    let status = guard("first", || Err(fail(BTCHOL_STATUS_INVALID_ARGUMENT, format_args!("bad {}", 1))));
    assert_eq!(status, BTCHOL_STATUS_INVALID_ARGUMENT);
    assert_eq!(message(), "first: bad 1");
    btchol_status_string(status);
    btchol_version();
    assert_eq!(message(), "first: bad 1");
    assert_eq!(guard("second", || Ok(())), BTCHOL_STATUS_SUCCESS);
    assert_eq!(message(), "");
}

#[test]
fn long_messages_are_cut_at_a_character_boundary() {
    let long = "é".repeat(2000);
    guard("long", || Err(fail(BTCHOL_STATUS_INVALID_ARGUMENT, format_args!("{long}"))));
    let m = last_error::current();
    assert!(m.len() < 1024 && m.ends_with("..."), "{} bytes", m.len());
    assert_eq!(message(), m);
}

#[test]
fn every_status_has_a_distinct_description() {
    let mut seen = std::collections::HashSet::new();
    for s in 0..=BTCHOL_STATUS_UNSUPPORTED {
        let text = unsafe { CStr::from_ptr(btchol_status_string(s)) }.to_str().unwrap();
        assert!(seen.insert(text), "status {s} repeats {text:?}");
    }
    let unknown = unsafe { CStr::from_ptr(btchol_status_string(-7)) }.to_str().unwrap();
    assert_eq!(unknown, "unknown status");
}

#[test]
fn status_values_are_fixed() {
    // The ABI: these numbers never change.
    let fixed = [
        (BTCHOL_STATUS_SUCCESS, 0),
        (BTCHOL_STATUS_INVALID_ARGUMENT, 1),
        (BTCHOL_STATUS_NULL_POINTER, 2),
        (BTCHOL_STATUS_INVALID_DIMENSION, 3),
        (BTCHOL_STATUS_BUFFER_TOO_SMALL, 4),
        (BTCHOL_STATUS_NON_FINITE_INPUT, 5),
        (BTCHOL_STATUS_NOT_POSITIVE_DEFINITE, 6),
        (BTCHOL_STATUS_INVALID_STATE, 7),
        (BTCHOL_STATUS_BACKEND_UNAVAILABLE, 8),
        (BTCHOL_STATUS_NO_CUDA, 8),
        (BTCHOL_STATUS_CUDA_ERROR, 9),
        (BTCHOL_STATUS_OUT_OF_MEMORY, 10),
        (BTCHOL_STATUS_INTERNAL, 11),
        (BTCHOL_STATUS_UNSUPPORTED, 12),
    ];
    for (got, want) in fixed {
        assert_eq!(got, want);
    }
}

fn create(options: *const btchol_plan_options) -> (btchol_status, *mut btchol_plan) {
    let mut plan = ptr::null_mut();
    let status = unsafe { btchol_plan_create(2, 3, 2, BTCHOL_DTYPE_F64, options, &mut plan) };
    (status, plan)
}

#[test]
fn options_struct_size_and_reserved_words_are_checked() {
    let mut o = btchol_plan_options { struct_size: 0, ..Default::default() };
    assert_eq!(unsafe { btchol_plan_options_init(&mut o) }, BTCHOL_STATUS_SUCCESS);
    assert_eq!(o, btchol_plan_options::default());
    assert_eq!(o.struct_size, std::mem::size_of::<btchol_plan_options>());

    // Uninitialised (garbage or zero) struct_size.
    for size in [0, 7, 1 << 40] {
        let bad = btchol_plan_options { struct_size: size, ..o };
        let (status, plan) = create(&bad);
        assert_eq!(status, BTCHOL_STATUS_INVALID_ARGUMENT);
        assert!(plan.is_null());
        assert!(message().contains("btchol_plan_options_init"), "{}", message());
    }
    // A reserved word set by a newer caller.
    let mut newer = o;
    newer.reserved[0] = 5;
    assert_eq!(create(&newer).0, BTCHOL_STATUS_INVALID_ARGUMENT);
    assert!(message().contains("reserved[0]"), "{}", message());
    // The partition code: -2 and below are not codes.
    let bad = btchol_plan_options { partition_chunk: -2, ..o };
    assert_eq!(create(&bad).0, BTCHOL_STATUS_INVALID_ARGUMENT);
    assert!(message().contains("partition_chunk"), "{}", message());
    for chunk in [BTCHOL_PARTITION_AUTO, BTCHOL_PARTITION_NONE, 3] {
        let (status, plan) = create(&btchol_plan_options { partition_chunk: chunk, ..o });
        assert_eq!(status, BTCHOL_STATUS_SUCCESS, "{}", message());
        unsafe { btchol_plan_destroy(plan) };
    }

    // A shorter struct (no reserved words): only its first struct_size bytes are read.
    let older = btchol_plan_options {
        struct_size: 32,
        threads: 1,
        diag_shift: f64::NAN,
        pivot_boost: -1.0,
        deterministic: 7,
        partition_chunk: -9,
        reserved: [-99; 1],
        ..o
    };
    let (status, plan) = create(&older);
    assert_eq!(status, BTCHOL_STATUS_SUCCESS, "{}", message());
    unsafe { btchol_plan_destroy(plan) };

    // A newer caller's longer struct whose unknown tail is zero is accepted, non-zero rejected.
    #[repr(C)]
    struct Longer {
        o: btchol_plan_options,
        tail: [u8; 16],
    }
    let mut longer = Longer { o, tail: [0; 16] };
    longer.o.struct_size = std::mem::size_of::<Longer>();
    let (status, plan) = create(&longer.o);
    assert_eq!(status, BTCHOL_STATUS_SUCCESS, "{}", message());
    unsafe { btchol_plan_destroy(plan) };
    longer.tail[3] = 1;
    assert_eq!(create(&longer.o).0, BTCHOL_STATUS_INVALID_ARGUMENT);
    assert!(message().contains("knows only"), "{}", message());

    // Out-of-range codes.
    for bad in [
        btchol_plan_options { backend: 9, ..o },
        btchol_plan_options { algorithm: -1, ..o },
        btchol_plan_options { layout: 2, ..o },
        btchol_plan_options { threads: -1, ..o },
        btchol_plan_options { max_nrhs: -1, ..o },
    ] {
        assert_eq!(create(&bad).0, BTCHOL_STATUS_INVALID_ARGUMENT, "{bad:?}");
    }
}

#[test]
fn a_plan_in_use_on_another_thread_is_refused_not_raced() {
    let (status, plan) = create(ptr::null());
    assert_eq!(status, BTCHOL_STATUS_SUCCESS);
    let held = unsafe { plan::access(plan) }.unwrap();
    let addr = plan as usize;
    let other = std::thread::spawn(move || {
        let mut bytes = 0;
        let s = unsafe { btchol_plan_workspace_bytes(addr as *const btchol_plan, &mut bytes) };
        (s, message())
    })
    .join()
    .unwrap();
    assert_eq!(other.0, BTCHOL_STATUS_INVALID_STATE);
    assert!(other.1.contains("in use by another thread"), "{}", other.1);
    drop(held);
    let mut bytes = 0;
    assert_eq!(unsafe { btchol_plan_workspace_bytes(plan, &mut bytes) }, BTCHOL_STATUS_SUCCESS);
    assert!(bytes > 0);
    unsafe { btchol_plan_destroy(plan) };
}

#[test]
fn version_constants_match_the_crate() {
    let v = unsafe { CStr::from_ptr(btchol_version()) }.to_str().unwrap();
    assert_eq!(v, crate::VERSION);
    assert_eq!(
        btchol_version_number(),
        BTCHOL_VERSION_MAJOR * 1_000_000 + BTCHOL_VERSION_MINOR * 1_000 + BTCHOL_VERSION_PATCH
    );
}
