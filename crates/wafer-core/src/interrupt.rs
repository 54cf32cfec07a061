//! A stop asked for from outside (Ctrl-C): the binding sets [`flag`] from
//! its SIGINT handler (the interpreter's own handler still runs), and the
//! long loops (a replay's steps, the prefill, the lifetime annotation, a
//! trace's footprint pass, NoDaP's search) call [`check`] often enough to
//! stop within a second. The engine itself installs no handler: a Rust
//! caller that wants the same sets the flag itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

use crate::error::{Error, Result};

static FLAG: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// The flag a signal handler sets to stop the running calls.
pub fn flag() -> Arc<AtomicBool> {
    FLAG.clone()
}

/// Forget an earlier stop (a new call starts).
pub fn clear() {
    FLAG.store(false, Ordering::Relaxed);
}

/// Ask the running calls to stop.
pub fn request() {
    FLAG.store(true, Ordering::Relaxed);
}

/// [`Error::Interrupted`] once a stop was asked for.
#[inline]
pub fn check() -> Result<()> {
    if FLAG.load(Ordering::Relaxed) {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}
