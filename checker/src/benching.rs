//! `memtx bench`: the fast explorer against stateright's BFS on the same model, in one run,
//! printing distinct states/s, memory and the ratio (speed targets live here, never in tests).

use crate::bench::{bench_model, bench_two_phase, BenchOptions};
use crate::cli::BenchArgs;
use crate::error::{ErrorKind, UserError};
use crate::setup;
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
    let result = bench_model(
        &format!("MemTX, preset {}", args.preset),
        &model,
        &BenchOptions::new(&args.threads),
    )
    .map_err(|e| UserError::new(ErrorKind::Usage, e.to_string()))?;
    out.push_str(&result.to_markdown());
    out.push('\n');
    for &rms in &args.two_phase {
        let r =
            bench_two_phase(rms, &args.threads).map_err(|m| UserError::new(ErrorKind::Usage, m))?;
        out.push_str(&r.to_markdown());
        out.push('\n');
    }
    print!("{out}");
    if let Some(path) = &args.out {
        crate::fsutil::write_atomic(path, out.as_bytes())?;
    }
    Ok(0)
}
