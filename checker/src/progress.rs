//! Progress on stderr while a check runs: an `indicatif` spinner on a terminal, otherwise a plain
//! line every few seconds (total and distinct states, queue, depth, distinct states/s: the unit
//! of the summary printed at the end, so that the two can be compared).

use crate::explore::Progress;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

/// Where progress goes.
pub struct ProgressSink {
    bar: Option<ProgressBar>,
    last: Mutex<u64>,
}

impl ProgressSink {
    /// A spinner on a terminal (and not in CI), plain lines otherwise.
    pub fn new() -> Self {
        let terminal = std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
        let bar = terminal.then(|| {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}") {
                bar.set_style(style);
            }
            bar
        });
        ProgressSink {
            bar,
            last: Mutex::new(0),
        }
    }

    /// Reports one progress snapshot.
    pub fn update(&self, p: &Progress) {
        let line = line(p);
        match &self.bar {
            Some(bar) => {
                bar.set_message(line);
                bar.tick();
            }
            None => {
                let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
                if p.elapsed.as_secs() >= *last + 5 {
                    *last = p.elapsed.as_secs();
                    eprintln!("progress: {line}");
                }
            }
        }
    }

    /// Clears the spinner.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// One progress line: total states (repeats included), distinct states, queue, depth and
/// distinct states per second (the summary's unit).
fn line(p: &Progress) -> String {
    let secs = p.elapsed.as_secs_f64().max(1e-9);
    format!(
        "total {} | distinct {} | queue {} | depth {} | {:.0} distinct states/s",
        p.generated,
        p.distinct,
        p.queue,
        p.depth,
        p.distinct as f64 / secs
    )
}

impl Default for ProgressSink {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_progress_line_counts_per_second_what_the_summary_counts() {
        let p = Progress {
            generated: 1_920_611,
            distinct: 369_413,
            queue: 10,
            depth: 4,
            elapsed: Duration::from_secs(1),
            memory: 0,
        };
        assert_eq!(
            line(&p),
            "total 1920611 | distinct 369413 | queue 10 | depth 4 | 369413 distinct states/s"
        );
    }
}
