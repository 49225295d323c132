//! Connecting the processes of a cluster run, with a deadline.
//!
//! timely's own connection loop (`Config::try_build`) retries for ever and cannot be
//! cancelled, so a process that never comes up (a wrong hostfile address, a process never
//! started) would make the others wait for ever. This module makes the same connections
//! with the same handshake (process `i` connects to every process below it and sends its
//! index as a big-endian `u64`; it accepts a connection from every process above it on its
//! own address) and gives up at a deadline, naming the processes it could not reach. The
//! sockets are then handed to timely's networking unchanged.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The longest a single connection attempt may take (a host that drops packets).
const ATTEMPT: Duration = Duration::from_secs(1);
/// The pause between two attempts to reach a process that refused.
const RETRY: Duration = Duration::from_millis(250);
/// How long an accepted connection may take to say which process it is.
const HANDSHAKE: Duration = Duration::from_secs(5);

/// A socket to every process of the run but `me` (`None` at `me`), connected within
/// `timeout`.
///
/// # Errors
///
/// One line: the address of `me` cannot be listened on, or which processes could not be
/// reached (or did not connect) within `timeout`, and the fix.
pub(super) fn connect(
    addresses: &[String],
    me: usize,
    timeout: Duration,
) -> Result<Vec<Option<TcpStream>>, String> {
    let deadline = Instant::now() + timeout;
    let n = addresses.len();
    let listeners: Vec<TcpListener> = if me + 1 < n {
        addresses[me]
            .split_whitespace()
            .map(|a| {
                let l = TcpListener::bind(a).map_err(|e| {
                    format!(
                        "process {me} cannot listen on {a}, its address in the hostfile ({e}): give this machine's address and a free port"
                    )
                })?;
                l.set_nonblocking(true)
                    .map_err(|e| format!("process {me} cannot listen on {a}: {e}"))?;
                Ok(l)
            })
            .collect::<Result<_, String>>()?
    } else {
        Vec::new()
    };
    let mut sockets: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    // Per lower process: when to try next, and why the last attempt failed.
    let mut next_try: Vec<Instant> = vec![Instant::now(); me];
    let mut failure: Vec<Option<String>> = vec![None; me];
    loop {
        for listener in &listeners {
            loop {
                match listener.accept() {
                    Ok((stream, _)) => {
                        if let Some((from, stream)) = handshake(stream, me, n, &sockets) {
                            sockets[from] = Some(stream);
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    // A connection that failed before it was accepted: wait for the next.
                    Err(_) => break,
                }
            }
        }
        for to in 0..me {
            if sockets[to].is_some() || Instant::now() < next_try[to] {
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match reach(&addresses[to], me, left.min(ATTEMPT)) {
                Ok(stream) => {
                    sockets[to] = Some(stream);
                    failure[to] = None;
                }
                Err(why) => {
                    failure[to] = Some(why);
                    next_try[to] = Instant::now() + RETRY;
                }
            }
        }
        let missing: Vec<usize> = (0..n)
            .filter(|&i| i != me && sockets[i].is_none())
            .collect();
        if missing.is_empty() {
            return Ok(sockets);
        }
        if Instant::now() >= deadline {
            let named: Vec<String> = missing
                .iter()
                .map(|&i| {
                    if i < me {
                        let why = failure[i]
                            .as_deref()
                            .map_or(String::new(), |w| format!(": {w}"));
                        format!("process {i} at {} not reached{why}", addresses[i])
                    } else {
                        format!("process {i} ({}) never connected", addresses[i])
                    }
                })
                .collect();
            return Err(format!(
                "the cluster did not connect within {} ({}); check the hostfile's addresses and start every process of the run (the same command with its own --process), or raise --connect-timeout",
                shown(timeout),
                named.join("; ")
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Connects to `address` (process `to`, below `me`) and says who this is.
fn reach(address: &str, me: usize, within: Duration) -> Result<TcpStream, String> {
    let targets: Vec<SocketAddr> = address
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve it ({e})"))?
        .collect();
    let mut last = "no address".to_string();
    for target in targets {
        match TcpStream::connect_timeout(&target, within.max(Duration::from_millis(1))) {
            Ok(mut stream) => {
                let _ = stream.set_nodelay(true);
                stream
                    .write_all(&(me as u64).to_be_bytes())
                    .map_err(|e| e.to_string())?;
                return Ok(stream);
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

/// Reads the index of the process that connected; `None` (the connection dropped) for a
/// stranger: a connection that does not say a process index above `me` in time, or says
/// one that is already connected.
fn handshake(
    mut stream: TcpStream,
    me: usize,
    n: usize,
    sockets: &[Option<TcpStream>],
) -> Option<(usize, TcpStream)> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(HANDSHAKE)).ok()?;
    let mut index = [0u8; 8];
    stream.read_exact(&mut index).ok()?;
    stream.set_read_timeout(None).ok()?;
    let _ = stream.set_nodelay(true);
    let from = usize::try_from(u64::from_be_bytes(index)).ok()?;
    (from > me && from < n && sockets[from].is_none()).then_some((from, stream))
}

/// A duration as a person would write it: `120 s`, `2 s`, `1500 ms`.
pub(super) fn shown(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}
