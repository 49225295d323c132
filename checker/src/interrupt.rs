//! Interrupts: the first SIGINT or SIGTERM (or SIGHUP) stops a run gracefully, the second
//! quits at once.
//!
//! A long check that is interrupted should not lose what it found. [`install`] turns the
//! signals into a flag ([`flag`]) that the explorer polls at every check point (about every
//! 256 expanded states, and every 20 ms while a worker waits). The run then stops within a
//! fraction of a second as [`crate::explore::StopReason::Interrupted`]; `memtx check` prints
//! the partial summary (counts, depth reached, coverage so far), writes its reports marked
//! incomplete, and exits with [`EXIT_CODE`] (130, the shell's code for an interrupt).
//!
//! A second signal means "now": the handler removes the temporary files of writes in
//! progress ([`crate::fsutil::remove_temporaries_and_exit`]) and exits with code 130 without a report.
//!
//! The handler runs on a thread of its own (the `ctrlc` crate's), not in signal context, so
//! it may print, lock and remove files.

use crate::error::{ErrorKind, UserError};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The exit code of an interrupted run: 128 + SIGINT, as shells report it.
pub const EXIT_CODE: u8 = 130;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicUsize = AtomicUsize::new(0);

/// The flag the explorer polls; `true` once a signal arrived.
pub fn flag() -> &'static AtomicBool {
    &INTERRUPTED
}

/// Whether a SIGINT or SIGTERM arrived since the process started.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Installs the handler (once per process; later calls do nothing).
pub fn install() -> Result<(), UserError> {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    ctrlc::set_handler(on_signal).map_err(|e| {
        UserError::new(
            ErrorKind::Io,
            format!("cannot install the SIGINT/SIGTERM handler: {e}"),
        )
    })
}

fn on_signal() {
    if SIGNALS.fetch_add(1, Ordering::SeqCst) == 0 {
        INTERRUPTED.store(true, Ordering::SeqCst);
        eprintln!(
            "\nmemtx: interrupted: stopping at the next check point and reporting what was found so far (interrupt again to quit at once)"
        );
    } else {
        let _ = writeln!(
            std::io::stderr(),
            "memtx: interrupted twice: quitting without a report"
        );
        crate::fsutil::remove_temporaries_and_exit(i32::from(EXIT_CODE));
    }
}
