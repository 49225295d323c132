//! `memtx bench`: the fast explorer against stateright's BFS on the same model, in one run,
//! printing distinct states/s, memory and the ratio (speed targets live here, never in tests).

use crate::bench::{bench_model, BenchOptions};
use crate::cli::BenchArgs;
use crate::error::{ErrorKind, UserError};
use crate::setup;
use crate::two_phase_commit::TwoPhaseSys;
use memtx_model::{MemTx, Variant};

/// Runs `memtx bench`; exit code 0.
pub fn bench_command(args: &BenchArgs) -> Result<u8, UserError> {
    if args.threads.iter().any(|&t| t == 0 || t > 256) {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--threads must be between 1 and 256",
        ));
    }
    let cfg = setup::config(&args.preset, &Default::default(), Variant::Memtx)
        .map_err(|m| UserError::new(ErrorKind::InvalidConfig, m))?;
    let mut out = format!(
        "# memtx bench\n\ncommand: `{}`\n\n",
        std::env::args().collect::<Vec<_>>().join(" ")
    );
    let model = MemTx::new(cfg);
    let mut options = BenchOptions::new(&args.threads);
    options.stateright = !args.skip_stateright;
    options.next_state_into = Some(MemTx::next_state_into);
    let result = bench_model(&format!("MemTX, preset {}", args.preset), &model, &options)
        .map_err(|e| UserError::new(ErrorKind::Usage, e.to_string()))?;
    out.push_str(&result.to_markdown());
    out.push('\n');
    for &rms in &args.two_phase {
        let two_phase = TwoPhaseSys::new(rms).map_err(|m| UserError::new(ErrorKind::Usage, m))?;
        let mut two_phase_options = BenchOptions::new(&args.threads);
        two_phase_options.stateright = !args.skip_stateright;
        let r = bench_model(&format!("2PC, {rms} RMs"), &two_phase, &two_phase_options)
            .map_err(|e| UserError::new(ErrorKind::Usage, e.to_string()))?;
        out.push_str(&r.to_markdown());
        out.push('\n');
    }
    print!("{out}");
    if let Some(path) = &args.out {
        crate::fsutil::write_atomic(path, out.as_bytes())?;
    }
    Ok(0)
}
