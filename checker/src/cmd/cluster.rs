//! `memtx check` over processes: `--processes N --process I --hostfile FILE` runs one
//! process of a cluster ([`cluster_of`]), `--local N` starts N such processes on this
//! machine over loopback and relays process 0's output ([`run_local`]). `memtx bench
//! --processes N` starts its 2PC cluster members the same way and keeps process 0's output
//! (`run_local_capturing`).
//!
//! The exploration itself is [`crate::explore::explore_timely`]; this module only places
//! the processes and watches them. A process that dies ends the whole run with one line
//! on stderr and exit code 2: the survivors lose their connection to it and stop
//! ([`crate::explore::ExploreError::Cluster`]), and `--local` kills whatever is left.
//!
//! A process that never comes up makes the others give up after `--connect-timeout`
//! (default 60 s), naming the addresses not reached; a process that hangs (stopped, or its
//! machine unreachable without a reset) makes the others end the run after
//! `--peer-timeout` (default 120 s) of silence; both with one line and exit code 2. Under
//! `--local`, process 0's line and exit code are relayed (a hung process 0 is reported by
//! process 1, relayed by the supervisor), and the processes left are killed.

use crate::cli::ClusterArgs;
use crate::error::{ErrorKind, UserError};
use crate::explore::{Cluster, DEFAULT_CONNECT_TIMEOUT, DEFAULT_PEER_TIMEOUT};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The environment variable through which `--local` hands its children the command as
/// the user typed it, so that process 0's report and traces record that command.
pub const COMMAND_VARIABLE: &str = "MEMTX_LOCAL_COMMAND";

/// Set by `--local` in its children's environment: the child watches its standard input,
/// a pipe from the supervising process, and stops when it closes ([`watch_supervisor`]).
pub const SUPERVISED_VARIABLE: &str = "MEMTX_LOCAL_SUPERVISED";

/// Most processes `--local` and `--processes` accept.
const MAX_PROCESSES: usize = 1024;
/// How long `--local` waits for process 0 to report a lost peer itself before killing it.
const GRACE: Duration = Duration::from_secs(5);

/// This process's place in a cluster from `--processes`, `--process` and `--hostfile`
/// (`None` without `--processes`).
///
/// # Errors
///
/// A one-line [`UserError`] for an index out of range or a hostfile that cannot be read
/// or has fewer than N `host:port` lines.
pub fn cluster_of(args: &ClusterArgs, threads: usize) -> Result<Option<Cluster>, UserError> {
    let Some(processes) = args.processes else {
        if args.local.is_none() && (args.connect_timeout.is_some() || args.peer_timeout.is_some()) {
            return Err(UserError::new(
                ErrorKind::Usage,
                "--connect-timeout and --peer-timeout apply to runs over processes: add --processes or --local, or drop them",
            ));
        }
        return Ok(None);
    };
    member_of(
        processes,
        args.process,
        args.hostfile.as_deref(),
        threads,
        timeouts(args)?,
    )
    .map(Some)
}

/// Process `process` (0 if `None`) of a cluster of `processes` processes with `threads`
/// workers each, at the addresses of `hostfile`, with the connect and peer timeouts: what `--processes N --process I --hostfile
/// FILE` mean for `memtx check` and for `memtx bench --run-one`.
///
/// # Errors
///
/// A one-line [`UserError`] for a count or index out of range, a missing hostfile, or one
/// that cannot be read or has fewer than N `host:port` lines.
pub(crate) fn member_of(
    processes: usize,
    process: Option<usize>,
    hostfile: Option<&Path>,
    threads: usize,
    (connect_timeout, peer_timeout): (Duration, Duration),
) -> Result<Cluster, UserError> {
    if processes == 0 || processes > MAX_PROCESSES {
        return Err(UserError::new(
            ErrorKind::Usage,
            format!("--processes {processes} is out of range: use 1 to {MAX_PROCESSES}"),
        ));
    }
    let process = process.unwrap_or(0);
    if process >= processes {
        return Err(UserError::new(
            ErrorKind::Usage,
            format!(
                "--process {process} is out of range: use 0 to {}",
                processes - 1
            ),
        ));
    }
    let Some(hostfile) = hostfile else {
        return Err(UserError::new(
            ErrorKind::Usage,
            "--processes needs --hostfile FILE (one host:port per line)",
        ));
    };
    let addresses = read_hostfile(hostfile, processes)?;
    Ok(Cluster::Processes {
        threads,
        process,
        addresses,
        connect_timeout,
        peer_timeout,
    })
}

/// `--connect-timeout` and `--peer-timeout`, or their defaults.
///
/// # Errors
///
/// A one-line [`UserError`] for a value that is not a duration or is under a second.
pub fn timeouts(args: &ClusterArgs) -> Result<(Duration, Duration), UserError> {
    let parse = |flag: &str, text: &Option<String>, default: Duration| {
        let Some(text) = text else {
            return Ok(default);
        };
        let d = crate::setup::duration(text)
            .map_err(|m| UserError::new(ErrorKind::Usage, format!("{flag} {m}")))?;
        if d < Duration::from_secs(1) {
            return Err(UserError::new(
                ErrorKind::Usage,
                format!("{flag} {text} is too short: give at least 1s"),
            ));
        }
        Ok(d)
    };
    Ok((
        parse(
            "--connect-timeout",
            &args.connect_timeout,
            DEFAULT_CONNECT_TIMEOUT,
        )?,
        parse("--peer-timeout", &args.peer_timeout, DEFAULT_PEER_TIMEOUT)?,
    ))
}

/// The first `processes` addresses of a hostfile (blank lines and `#` comments skipped).
fn read_hostfile(path: &Path, processes: usize) -> Result<Vec<String>, UserError> {
    // A hostfile names a few addresses: 1 MiB is far more than any (`/dev/zero` read until
    // memory ran out).
    let text = crate::input::read_limited(path, "--hostfile", 1 << 20)?;
    let addresses: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .take(processes)
        .map(str::to_string)
        .collect();
    if addresses.len() < processes {
        return Err(UserError::new(
            ErrorKind::Usage,
            format!(
                "--hostfile {} has {} address(es), --processes asks for {processes}",
                path.display(),
                addresses.len()
            ),
        ));
    }
    if let Some(bad) = addresses.iter().find(|a| a.rsplit_once(':').is_none()) {
        return Err(UserError::new(
            ErrorKind::Usage,
            format!("--hostfile {}: {bad:?} is not host:port", path.display()),
        ));
    }
    Ok(addresses)
}

/// Free loopback ports (bound and released; another program could take one meanwhile, in
/// which case process setup fails with a one-line error).
pub(crate) fn free_ports(n: usize) -> Result<Vec<u16>, UserError> {
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<_, _>>()
        .map_err(|e| UserError::new(ErrorKind::Cluster, format!("no free loopback port: {e}")))?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect::<Result<_, _>>()
        .map_err(|e| UserError::new(ErrorKind::Cluster, format!("no free loopback port: {e}")))
}

/// This command's arguments without `--local N`.
fn arguments_without_local() -> Vec<OsString> {
    let mut out = Vec::new();
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--local" {
            args.next();
            continue;
        }
        if arg.to_str().is_some_and(|a| a.starts_with("--local=")) {
            continue;
        }
        out.push(arg);
    }
    out
}

/// A child process of a `--local` run and what it wrote on stderr (process 0's is relayed
/// as it comes while `relay` is set; the others' is kept to explain a failure).
struct Member {
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    status: Option<ExitStatus>,
}

/// `memtx check … --local N` (or `memtx resume … --local N`): starts N processes of this
/// binary with the same command and `--processes N --process i --hostfile <loopback
/// addresses>`, relays process 0's output and exit code, and turns the death of any process
/// into one line on stderr and exit code 2 (killing the others).
///
/// # Errors
///
/// A one-line [`UserError`] when the processes cannot be started or one of them is lost.
pub fn run_local(args: &ClusterArgs, command: &str) -> Result<u8, UserError> {
    let n = args.local.unwrap_or(1);
    if n == 0 || n > MAX_PROCESSES {
        return Err(UserError::new(
            ErrorKind::Usage,
            format!("--local {n} is out of range: use 1 to {MAX_PROCESSES}"),
        ));
    }
    // Refused here, not once per child.
    timeouts(args)?;
    // The children get SIGINT from the terminal too; this process waits for them.
    crate::interrupt::install()?;
    with_hostfile(n, |hostfile| {
        supervise(n, hostfile, &arguments_without_local(), command, None)
    })
}

/// Runs `memtx <args>` as N local processes over loopback, as `--local N` does (each with
/// `--processes N --process i --hostfile <loopback addresses>` appended), and returns
/// process 0's exit code and its stdout (without timely's connection lines) instead of
/// relaying it. `memtx bench --processes N` measures a model over processes this way.
///
/// # Errors
///
/// A one-line [`UserError`] when the processes cannot be started or one of them is lost.
pub(crate) fn run_local_capturing(n: usize, args: &[OsString]) -> Result<(u8, Vec<u8>), UserError> {
    if n == 0 || n > MAX_PROCESSES {
        return Err(UserError::new(
            ErrorKind::Usage,
            format!("--processes {n} is out of range: use 1 to {MAX_PROCESSES}"),
        ));
    }
    let kept = Arc::new(Mutex::new(Vec::new()));
    let command = std::iter::once("memtx".to_string())
        .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ");
    let code = with_hostfile(n, |hostfile| {
        supervise(n, hostfile, args, &command, Some(Arc::clone(&kept)))
    })?;
    let out = std::mem::take(&mut *lock(&kept));
    Ok((code, out))
}

/// Calls `run` with the path of a fresh hostfile of `n` free loopback addresses, in a
/// temporary directory removed afterwards (also when a second interrupt quits at once).
fn with_hostfile(
    n: usize,
    run: impl FnOnce(&Path) -> Result<u8, UserError>,
) -> Result<u8, UserError> {
    let ports = free_ports(n)?;
    let dir = std::env::temp_dir().join(format!(
        "memtx-local-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    // Removed when this function returns, and on a second interrupt, which exits at once.
    let dir = crate::fsutil::TempDir::create(dir.clone()).map_err(|e| {
        UserError::new(
            ErrorKind::Io,
            format!("cannot create {}: {e}", dir.display()),
        )
    })?;
    let hostfile = dir.path().join("hosts");
    let hosts: String = ports.iter().map(|p| format!("127.0.0.1:{p}\n")).collect();
    std::fs::write(&hostfile, hosts)
        .map_err(|e| {
            UserError::new(
                ErrorKind::Io,
                format!("cannot write {}: {e}", hostfile.display()),
            )
        })
        .and_then(|()| run(&hostfile))
}

/// Starts the `n` processes of a local run (`base` plus each one's cluster arguments) and
/// watches them until process 0 ends or another fails. Process 0's stdout goes to `keep`
/// when given, else to this process's stdout.
fn supervise(
    n: usize,
    hostfile: &Path,
    base: &[OsString],
    command: &str,
    keep: Option<Arc<Mutex<Vec<u8>>>>,
) -> Result<u8, UserError> {
    let exe = std::env::current_exe().map_err(|e| {
        UserError::new(
            ErrorKind::Cluster,
            format!("cannot find this program to start its processes: {e}"),
        )
    })?;
    let relay = Arc::new(AtomicBool::new(true));
    // The threads copying process 0's output: joined before returning, so that the last of
    // it (the report) is written before this process exits.
    let mut relays: Vec<std::thread::JoinHandle<()>> = Vec::new();
    let mut members: Vec<Member> = Vec::with_capacity(n);
    for i in 0..n {
        let mut child_command = Command::new(&exe);
        child_command
            .args(base)
            .arg("--processes")
            .arg(n.to_string())
            .arg("--process")
            .arg(i.to_string())
            .arg("--hostfile")
            .arg(hostfile)
            .stdin(Stdio::piped())
            .env(COMMAND_VARIABLE, command)
            .env(SUPERVISED_VARIABLE, "1")
            .stdout(if i == 0 {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped());
        let mut child = match child_command.spawn() {
            Ok(child) => child,
            Err(e) => {
                kill_all(&mut members);
                return Err(UserError::new(
                    ErrorKind::Cluster,
                    format!("cannot start process {i} of the local run: {e}"),
                ));
            }
        };
        if let Some(pipe) = child.stdout.take() {
            let keep = keep.clone();
            relays.push(std::thread::spawn(move || relay_stdout(pipe, keep)));
        }
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut pipe) = child.stderr.take() {
            let keep = Arc::clone(&stderr);
            let relay = (i == 0).then(|| Arc::clone(&relay));
            let handle = std::thread::spawn(move || {
                let mut buffer = [0u8; 4096];
                while let Ok(read) = pipe.read(&mut buffer) {
                    if read == 0 {
                        break;
                    }
                    match &relay {
                        Some(flag) if flag.load(Ordering::SeqCst) => {
                            let mut err = std::io::stderr().lock();
                            let _ = err.write_all(&buffer[..read]);
                            let _ = err.flush();
                        }
                        _ => lock(&keep).extend_from_slice(&buffer[..read]),
                    }
                }
            });
            if i == 0 {
                relays.push(handle);
            }
        }
        members.push(Member {
            child,
            stderr,
            status: None,
        });
    }
    loop {
        for m in &mut members {
            if m.status.is_none() {
                m.status = m.child.try_wait().ok().flatten();
            }
        }
        // Process 0 ended: its output is the run's. Let the others finish (they end with it),
        // unless it failed as a run over processes fails (exit 2: a peer lost or hung, a
        // user error): then what is left may never end.
        if let Some(status) = members[0].status {
            let grace = if status.code() == Some(2) {
                Duration::ZERO
            } else {
                GRACE
            };
            let deadline = Instant::now() + grace;
            while members.iter().any(|m| m.status.is_none()) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
                for m in &mut members {
                    if m.status.is_none() {
                        m.status = m.child.try_wait().ok().flatten();
                    }
                }
            }
            kill_all(&mut members);
            join_all(relays);
            return match status.code() {
                Some(code) => Ok(u8::try_from(code).unwrap_or(2)),
                None => Err(UserError::new(
                    ErrorKind::Cluster,
                    format!("process 0 of the local run was killed ({status}); the run is lost"),
                )),
            };
        }
        // Another process failed: process 0 notices the lost connection and says so; if it
        // does not within the grace period, it is stopped and the failure is reported here.
        if let Some(i) = (1..n).find(|&i| members[i].status.is_some_and(|s| !s.success())) {
            let deadline = Instant::now() + GRACE;
            while members[0].status.is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
                members[0].status = members[0].child.try_wait().ok().flatten();
            }
            if let Some(code) = members[0].status.and_then(|s| s.code()) {
                if code != 0 {
                    kill_all(&mut members);
                    join_all(relays);
                    return Ok(u8::try_from(code).unwrap_or(2));
                }
            }
            relay.store(false, Ordering::SeqCst);
            kill_all(&mut members);
            join_all(relays);
            let status = members[i]
                .status
                .map_or_else(|| "ended".to_string(), |s| s.to_string());
            let said = String::from_utf8_lossy(&lock(&members[i].stderr))
                .lines()
                .next()
                .map(|l| format!(": {}", l.trim_start_matches("memtx: ")))
                .unwrap_or_default();
            let lost = if said.contains("the run is lost") {
                ""
            } else {
                "; the run is lost"
            };
            return Err(UserError::new(
                ErrorKind::Cluster,
                format!("process {i} of the local run failed ({status}){said}{lost}"),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// In a process started by `--local` ([`SUPERVISED_VARIABLE`] set): a thread that waits
/// for the end of standard input, the pipe from the supervising process, and ends this
/// process (exit code 2) when it comes. The supervisor keeps the pipe open as long as it
/// lives, so that when it is killed (even by SIGKILL, which it cannot catch) its processes
/// do not run on unwatched; the run then resumes from its last checkpoint, like any kill.
pub fn watch_supervisor() {
    if std::env::var_os(SUPERVISED_VARIABLE).is_none() {
        return;
    }
    std::thread::spawn(|| {
        let mut sink = [0u8; 64];
        let mut stdin = std::io::stdin().lock();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
        // Not `eprintln!`: stderr was a pipe to the supervisor too, and a failed print
        // panics (this thread only), which would leave the process running.
        let _ = writeln!(
            std::io::stderr().lock(),
            "memtx: the --local process that started this one is gone; stopping"
        );
        std::process::exit(2);
    });
}

/// Copies process 0's stdout to `keep`, or to this process's stdout, without the connection
/// progress lines timely's networking prints there while the processes connect.
fn relay_stdout(pipe: std::process::ChildStdout, keep: Option<Arc<Mutex<Vec<u8>>>>) {
    use std::io::BufRead;
    let mut out = std::io::stdout();
    for line in std::io::BufReader::new(pipe).split(b'\n') {
        let Ok(line) = line else {
            break;
        };
        if is_connection_chatter(&String::from_utf8_lossy(&line)) {
            continue;
        }
        if let Some(keep) = &keep {
            let mut kept = lock(keep);
            kept.extend_from_slice(&line);
            kept.push(b'\n');
            continue;
        }
        let _ = out.write_all(&line);
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
}

/// Whether `line` is one of the lines timely's networking prints on stdout while it
/// connects the processes.
pub fn is_connection_chatter(line: &str) -> bool {
    line.starts_with("awaiting connections (at ")
        || (line.starts_with("worker ") && line.contains("error connecting to worker"))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits for the relay threads: process 0 has ended (or was killed), so its pipes are
/// closed and they end as soon as they have copied what was left.
fn join_all(relays: Vec<std::thread::JoinHandle<()>>) {
    for handle in relays {
        let _ = handle.join();
    }
}

fn kill_all(members: &mut [Member]) {
    for m in members.iter_mut() {
        if m.status.is_none() {
            let _ = m.child.kill();
            m.status = m.child.wait().ok();
        }
    }
}
