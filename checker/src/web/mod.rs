//! The Explorer `memtx explore` serves: a page and a small JSON API over one MemTX model, so a
//! person can walk the state space by hand.
//!
//! * `GET /` is the page ([`page.html`](self), self-contained: no script, style or font from
//!   anywhere else). Its address names a path: `#/path/` is the initial state, `#/path/3,0`
//!   the state reached by the fourth operation enabled in it, then the first enabled there.
//! * `GET /api/path/<indices>` is that state as JSON ([`api::view`]): the steps that reach it
//!   and what each changed, the state's record table and derivation DAG, **every property's
//!   verdict at that state** (and the step of the path where each invariant first failed or
//!   each example was first reached), the operations enabled there and those refused, with the
//!   model's reason.
//!
//! It replaced stateright's Explorer (issue 23, item 5; issue 26): that page's status panel and
//! property list described its own on-demand search from the initial state, never the state on
//! screen; its server panicked a handler thread on a client that reset its connection and
//! served `./ui/` from the working directory when one existed. This one judges the state it
//! shows and searches nothing (`memtx check` searches; the page prints the command), answers
//! every request it can read with a status line, never panics on a client, and reads nothing
//! from disk.
//!
//! The server is deliberately small (std only): one thread per connection, at most
//! [`MAX_CONNECTIONS`] at a time (more get `503`), request heads of at most [`MAX_HEAD`]
//! bytes, 10-second socket timeouts, `GET` and `HEAD` only, `Connection: close`.

pub mod api;

use memtx_model::MemTx;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Connections served at once; more are answered `503` at once.
pub const MAX_CONNECTIONS: usize = 32;
/// Longest request head (request line and headers) read, in bytes; longer gets `431`.
pub const MAX_HEAD: usize = 8 * 1024;
const TIMEOUT: Duration = Duration::from_secs(10);
const PAGE: &str = include_str!("page.html");

/// What the Explorer serves: the model and how to name it.
pub struct Explorer {
    /// The model walked (its configuration and the properties judged).
    pub model: MemTx,
    /// The command that searches this configuration exhaustively (shown on the page).
    pub check_command: String,
}

/// Serves `explorer` on `listener` until accepting fails (it never returns otherwise).
pub fn serve(listener: TcpListener, explorer: Explorer) -> std::io::Error {
    let explorer = Arc::new(explorer);
    let active = Arc::new(AtomicUsize::new(0));
    loop {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            // A connection reset before it was accepted, or a descriptor limit reached:
            // wait a little and go on; anything else ends the server.
            Err(e) if transient(&e) => {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            Err(e) => return e,
        };
        if active.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            active.fetch_sub(1, Ordering::AcqRel);
            let mut stream = stream;
            let _ = stream.set_write_timeout(Some(Duration::from_millis(200)));
            let _ = Response::error(503, "too many connections at once; try again")
                .write(&mut stream, false);
            continue;
        }
        let (shared, counter) = (Arc::clone(&explorer), Arc::clone(&active));
        let spawned = std::thread::Builder::new()
            .name("memtx-explorer".into())
            .spawn(move || {
                handle(stream, &shared);
                counter.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            // No thread for it (the stream was dropped with the closure): count it out.
            active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock | TimedOut
    ) || e
        .raw_os_error()
        .is_some_and(|code| code == 24 || code == 23)
}

/// Answers one connection; every I/O error (a client gone, a timeout) just ends it.
fn handle(mut stream: TcpStream, explorer: &Explorer) {
    let _ = stream.set_read_timeout(Some(TIMEOUT));
    let _ = stream.set_write_timeout(Some(TIMEOUT));
    let (response, head_only) = match read_head(&mut stream) {
        Ok(head) => {
            let head_only = head.method == "HEAD";
            (respond(&head, explorer), head_only)
        }
        Err(Head::TooLong) => (Response::error(431, "request head too large"), false),
        Err(Head::Malformed) => (Response::error(400, "malformed request line"), false),
        Err(Head::Gone) => return,
    };
    let _ = response.write(&mut stream, head_only);
    let _ = stream.flush();
}

/// The request line of a request.
struct RequestHead {
    method: String,
    target: String,
}

/// Why no request head was read.
enum Head {
    TooLong,
    Malformed,
    Gone,
}

/// Reads up to the end of the request head (`\r\n\r\n`), at most [`MAX_HEAD`] bytes, and
/// parses its first line.
fn read_head(stream: &mut TcpStream) -> Result<RequestHead, Head> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = find(&buf, b"\r\n\r\n").or_else(|| find(&buf, b"\n\n")) {
            buf.truncate(end);
            break;
        }
        if buf.len() > MAX_HEAD {
            return Err(Head::TooLong);
        }
        match stream.read(&mut chunk) {
            Ok(0) if buf.is_empty() => return Err(Head::Gone),
            // A client that ends its head with the connection: take what came.
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(Head::Gone),
        }
    }
    let text = std::str::from_utf8(&buf).map_err(|_| Head::Malformed)?;
    let line = text.lines().next().ok_or(Head::Malformed)?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Head::Malformed);
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return Err(Head::Malformed);
    }
    Ok(RequestHead {
        method: method.to_string(),
        target: target.to_string(),
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The response to a request that was read.
fn respond(head: &RequestHead, explorer: &Explorer) -> Response {
    if head.method != "GET" && head.method != "HEAD" {
        return Response::error(405, "only GET and HEAD are served");
    }
    let target = head.target.split(['?', '#']).next().unwrap_or("/");
    match target {
        "/" | "/index.html" => Response::page(),
        "/api/path" => api_response(explorer, ""),
        _ => match target.strip_prefix("/api/path/") {
            Some(encoded) => api_response(explorer, encoded),
            None => Response::error(404, "no such page: the Explorer serves / and /api/path/"),
        },
    }
}

fn api_response(explorer: &Explorer, encoded: &str) -> Response {
    match api::view(explorer, encoded) {
        Ok(view) => Response::json(200, view.to_string()),
        Err(api::PathError::Malformed(why)) => Response::error(400, &why),
        Err(api::PathError::NotFollowed(why)) => Response::error(404, &why),
    }
}

/// A response: status, content type and body.
struct Response {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
    page: bool,
}

impl Response {
    fn page() -> Self {
        Response {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: PAGE.as_bytes().to_vec(),
            page: true,
        }
    }

    fn json(status: u16, body: String) -> Self {
        Response {
            status,
            content_type: "application/json",
            body: body.into_bytes(),
            page: false,
        }
    }

    fn error(status: u16, message: &str) -> Self {
        Self::json(status, serde_json::json!({ "error": message }).to_string())
    }

    fn write(&self, stream: &mut TcpStream, head_only: bool) -> std::io::Result<()> {
        let reason = match self.status {
            200 => "OK",
            400 => "Bad Request",
            404 => "Not Found",
            405 => "Method Not Allowed",
            431 => "Request Header Fields Too Large",
            _ => "Service Unavailable",
        };
        let mut head = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n",
            self.status,
            self.content_type,
            self.body.len()
        );
        if self.status == 405 {
            head.push_str("Allow: GET, HEAD\r\n");
        }
        if self.page {
            // The page's own inline script and style; the DAG is inline SVG. Nothing else.
            head.push_str(
                "Content-Security-Policy: default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:\r\n",
            );
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        if !head_only {
            stream.write_all(&self.body)?;
        }
        Ok(())
    }
}
