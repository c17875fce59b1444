//! The thread-local last-error message: the detail a status code cannot carry (which argument,
//! which item and block, which CUDA call).
//!
//! The message lives in a fixed per-thread buffer, so recording and clearing it never allocates
//! (the boundary adds no allocation to upload, factor or solve). Messages longer than the buffer
//! are cut at a character boundary and end in "...".

use std::cell::{Cell, RefCell};
use std::ffi::c_char;
use std::fmt::{self, Write};

/// Bytes of message kept per thread, including the terminating NUL.
const CAPACITY: usize = 1024;

struct Buffer {
    bytes: [u8; CAPACITY],
    /// Length of the message, excluding the NUL that always follows it.
    len: usize,
    truncated: bool,
}

thread_local! {
    static MESSAGE: RefCell<Buffer> =
        const { RefCell::new(Buffer { bytes: [0; CAPACITY], len: 0, truncated: false }) };
    /// The entry point running on this thread, prefixed to every message it records.
    static ENTRY_POINT: Cell<&'static str> = const { Cell::new("") };
}

impl Write for Buffer {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.truncated {
            return Ok(());
        }
        // Leave room for "..." and the NUL.
        let room = CAPACITY - 4 - self.len;
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        self.bytes[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        if take < s.len() {
            self.bytes[self.len..self.len + 3].copy_from_slice(b"...");
            self.len += 3;
            self.truncated = true;
        }
        Ok(())
    }
}

/// Marks the start of an entry point: clears the message and remembers the function's name.
pub(crate) fn begin(entry_point: &'static str) {
    ENTRY_POINT.with(|e| e.set(entry_point));
    MESSAGE.with(|m| {
        let mut m = m.borrow_mut();
        m.len = 0;
        m.truncated = false;
        m.bytes[0] = 0;
    });
}

/// Records `message` as this thread's last error, prefixed with the running entry point.
pub(crate) fn record(message: fmt::Arguments<'_>) {
    let entry_point = ENTRY_POINT.with(|e| e.get());
    MESSAGE.with(|m| {
        let mut m = m.borrow_mut();
        m.len = 0;
        m.truncated = false;
        if !entry_point.is_empty() {
            let _ = write!(m, "{entry_point}: ");
        }
        let _ = m.write_fmt(message);
        let len = m.len;
        m.bytes[len] = 0;
    });
}

/// This thread's last message as an owned string (for tests).
#[cfg(test)]
pub(crate) fn current() -> String {
    MESSAGE.with(|m| {
        let m = m.borrow();
        String::from_utf8_lossy(&m.bytes[..m.len]).into_owned()
    })
}

/// The message of the last failed btchol call on the calling thread, as a NUL-terminated UTF-8
/// string; the empty string when that call succeeded or no call failed yet. Never NULL.
///
/// Every fallible btchol function clears the message when it starts and sets it when it fails,
/// so read it right after the failing call. Lifetime: the pointer stays valid until the calling
/// thread exits, but its contents change with the next fallible btchol call on the same thread
/// (copy the string to keep it). `btchol_status_string`, `btchol_version*` and
/// `btchol_cuda_available` leave it untouched. Thread-safe: each thread has its own message.
#[no_mangle]
pub extern "C" fn btchol_last_error_message() -> *const c_char {
    MESSAGE
        .try_with(|m| match m.try_borrow() {
            Ok(m) => m.bytes.as_ptr() as *const c_char,
            Err(_) => c"".as_ptr(),
        })
        .unwrap_or(c"".as_ptr())
}
