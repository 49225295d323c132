//! The HTML report, a trace page and the Explorer, opened in a real (headless) Chromium.
//!
//! Each test asserts what a person looks for (the verdict, a plot's SVG with its data points,
//! a counterexample step with its DAG, the Explorer's states after a click) and saves a
//! screenshot under `target/tmp/browser/`. Without Chromium the tests print why and pass,
//! unless `MEMTX_REQUIRE_BROWSER` is set, as `.ci/run` sets it after installing Debian's
//! `chromium` and `chromium-driver`: CI runs them, never skips them.
//!
//! The Explorer test drives Chromium through ChromeDriver's W3C WebDriver protocol, spoken
//! here over plain HTTP (a handful of requests: no client library needed).

mod binary_support;
use binary_support::*;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn which(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for n in names {
            let p = dir.join(n);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Chromium, and a temporary directory of its own for one test.
///
/// Chromium makes its profile (`org.chromium.Chromium.*`) under `TMPDIR` and does not always
/// remove it when it exits; given the test's scratch directory as `TMPDIR`, it leaves nothing
/// in the system's temporary directory once the test passes. The directory's name is short:
/// the profile holds a Unix socket, whose path may not exceed 107 bytes.
struct Browser {
    binary: PathBuf,
    tmp: Scratch,
}

/// Chromium for the test that calls itself `test` (a few letters), or `None` with the reason
/// printed (a failure when a browser is required).
fn chromium(test: &str) -> Option<Browser> {
    chromium_binary().map(|binary| Browser {
        binary,
        tmp: Scratch::new(&format!("cr-{test}")),
    })
}

fn chromium_binary() -> Option<PathBuf> {
    let found = which(&["chromium", "chromium-browser", "google-chrome"]);
    if found.is_none() {
        assert!(
            std::env::var_os("MEMTX_REQUIRE_BROWSER").is_none(),
            "MEMTX_REQUIRE_BROWSER is set but no chromium is on PATH"
        );
        eprintln!("skipped: no chromium on PATH (install Debian's chromium to run this test)");
    }
    found
}

fn shots() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn headless(chromium: &Browser) -> Command {
    let mut c = Command::new(&chromium.binary);
    c.env("TMPDIR", &*chromium.tmp).args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--virtual-time-budget=5000",
    ]);
    c
}

/// The DOM of `url` after it rendered, and a screenshot of it saved as `shot`.
fn render(chromium: &Browser, url: &str, shot: &str) -> String {
    let out = headless(chromium)
        .arg("--dump-dom")
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = shots().join(shot);
    let status = headless(chromium)
        .arg("--window-size=1200,3000")
        .arg(format!("--screenshot={}", png.display()))
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(status.status.success());
    assert!(
        std::fs::metadata(&png)
            .map(|m| m.len() > 10_000)
            .unwrap_or(false),
        "no screenshot at {}",
        png.display()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The run's page of the no-cascade check: the verdict names I2, the plots are SVG with
/// their data points, the counterexample's last step is drawn with the retracted belief and
/// the view the cascade missed, and never-exercised rules are marked.
#[test]
fn the_run_report_renders_its_verdict_plots_and_drawn_counterexample() {
    let Some(chromium) = chromium("report") else {
        return;
    };
    let dir = scratch("report");
    let out = memtx(
        &[
            "check",
            "--preset",
            "quick",
            "--variant",
            "no-cascade",
            "--report",
            "rep",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1));
    let page = dir.join("rep/index.html");
    let dom = render(
        &chromium,
        &format!("file://{}", page.display()),
        "report-no-cascade.png",
    );
    assert!(dom.contains("data-result=\"fail\""), "the verdict banner");
    assert!(dom.contains("result: FAIL (I2 violated"), "what failed");
    let plots = &dom[dom.find("class=\"plots\"").expect("the plots")..];
    assert!(plots.contains("<svg"), "a plot as SVG");
    assert!(plots.contains("<circle"), "its data points");
    let cx = &dom[dom.find("id=\"cx-I2\"").expect("the I2 counterexample")..];
    let last = &cx[cx.find("id=\"step-6\"").expect("its step 6")..];
    assert!(last.contains("<svg"), "the step's DAG");
    assert!(last.contains("r0 Belief"), "the retracted belief drawn");
    assert!(last.contains("Revoked"), "in its lifecycle state");
    assert!(last.contains("r1 Summary"), "the view the cascade missed");
    assert!(
        dom.contains("class=\"never\""),
        "never-exercised rules marked"
    );
}

/// `memtx replay --html` of a scenario file: every step drawn.
#[test]
fn a_trace_page_draws_every_step() {
    let Some(chromium) = chromium("trace") else {
        return;
    };
    let dir = scratch("trace");
    let scenario =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../regressions/scenarios/cascade-trap.json");
    let out = memtx(
        &[
            "replay",
            &scenario.display().to_string(),
            "--html",
            "cascade.html",
        ],
        &dir,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = render(
        &chromium,
        &format!("file://{}", dir.join("cascade.html").display()),
        "trace-cascade-trap.png",
    );
    let steps = dom.matches("class=\"step\"").count();
    assert!(steps >= 5, "{steps} steps drawn");
    assert!(dom.matches("<svg").count() >= steps - 1, "a DAG per step");
    assert!(dom.contains("Lifecycle colours"));
}

/// A free TCP port on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One HTTP/1.1 request to `127.0.0.1:port`; the response body as JSON.
fn http(port: u16, method: &str, path: &str, body: &serde_json::Value) -> serde_json::Value {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let payload = if method == "GET" || method == "DELETE" {
        String::new()
    } else {
        body.to_string()
    };
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
        payload.len()
    )
    .unwrap();
    // Read the headers, then exactly Content-Length bytes (ChromeDriver keeps the
    // connection open whatever the request says).
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).unwrap() == 0 {
            break;
        }
        raw.push(byte[0]);
    }
    let headers = String::from_utf8_lossy(&raw).to_lowercase();
    let length: usize = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    s.read_exact(&mut body).unwrap();
    let body = String::from_utf8_lossy(&body);
    serde_json::from_str(&body).unwrap_or(serde_json::Value::Null)
}

/// A running `memtx explore --port 0` (the system picks a free port; the command prints it):
/// its URL, port, and the lines it printed up to the URL and, with `--trace`, the verdicts.
/// A thread drains its standard output for as long as it runs.
struct Running {
    _child: Killed,
    port: u16,
    url: String,
    lines: Vec<String>,
}

fn start_explorer(args: &[&str], dir: Option<&Path>) -> Running {
    use std::io::BufRead;
    let mut command = Command::new(env!("CARGO_BIN_EXE_memtx"));
    command
        .args(["explore", "--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let mut child = Killed(command.spawn().unwrap());
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let tracing = args.contains(&"--trace");
    let mut lines = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(60)) {
        let last = if tracing {
            line.contains("at the trace's end")
        } else {
            line.contains("Explorer at ")
        };
        lines.push(line);
        if last {
            break;
        }
    }
    let text = lines.join("\n");
    let url = text
        .split("Explorer at ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no URL in:\n{text}"))
        .to_string();
    let port = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {url}"));
    wait_for_port(port);
    Running {
        _child: child,
        port,
        url,
        lines,
    }
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `memtx explore` serves the Explorer on 127.0.0.1: the page lists the initial state;
/// clicking it moves there (the URL follows) and lists the operations enabled in it.
#[test]
fn the_explorer_lists_states_and_follows_a_click() {
    let Some(chromium) = chromium("click") else {
        return;
    };
    let Some(driver) = which(&["chromedriver"]) else {
        assert!(
            std::env::var_os("MEMTX_REQUIRE_BROWSER").is_none(),
            "MEMTX_REQUIRE_BROWSER is set but no chromedriver is on PATH"
        );
        eprintln!("skipped: no chromedriver on PATH (install Debian's chromium-driver)");
        return;
    };
    let explorer = start_explorer(&["--preset", "quick"], None);
    let wd = free_port();
    let _driver = Killed(
        Command::new(driver)
            .env("TMPDIR", &*chromium.tmp)
            .arg(format!("--port={wd}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for_port(wd);
    let session = http(
        wd,
        "POST",
        "/session",
        &serde_json::json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium.binary.display().to_string(),
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,1600"]
            }
        }}}),
    );
    let id = session["value"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no WebDriver session: {session}"))
        .to_string();
    let at = |p: &str| format!("/session/{id}{p}");
    let null = serde_json::Value::Null;
    http(
        wd,
        "POST",
        &at("/url"),
        &serde_json::json!({"url": explorer.url}),
    );
    // Wait for the next action choices (rendered by the page's script from /api/path/).
    let find_links = || {
        http(
            wd,
            "POST",
            &at("/elements"),
            &serde_json::json!({"using": "css selector", "value": "a.next[href^='#/path/']"}),
        )["value"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut links = find_links();
    while links.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        links = find_links();
    }
    assert!(!links.is_empty(), "the Explorer lists no next states");
    let source = http(wd, "GET", &at("/source"), &null)["value"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        source.contains("initial state"),
        "the initial state is listed"
    );
    assert!(
        source.contains("Every invariant holds at this state"),
        "the verdict at the state shown"
    );
    let element = links[0]
        .as_object()
        .and_then(|o| o.values().next())
        .and_then(|v| v.as_str())
        .expect("an element reference")
        .to_string();
    http(
        wd,
        "POST",
        &at(&format!("/element/{element}/click")),
        &serde_json::json!({}),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut url = String::new();
    let mut after = String::new();
    while Instant::now() < deadline {
        url = http(wd, "GET", &at("/url"), &null)["value"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        after = http(wd, "GET", &at("/source"), &null)["value"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if url.ends_with("#/path/0") && after.contains("state at depth 1") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        url.ends_with("#/path/0"),
        "the click moved to a state: {url}"
    );
    assert!(after.contains("Begin"), "the step taken is on the path");
    let shot = http(wd, "GET", &at("/screenshot"), &null)["value"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(shot.len() > 1000, "a screenshot");
    std::fs::write(shots().join("explorer-after-click.png"), base64(&shot)).unwrap();
    http(wd, "DELETE", &at(""), &null);
    assert!(
        after.contains("id=\"path\""),
        "the path of actions is shown"
    );
}

/// Decodes standard base64 (WebDriver's screenshot encoding).
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for v in text.bytes().filter_map(value) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// `memtx explore --trace` of a scenario whose trap steps the model refuses: the refused steps
/// are left out and said so, the Explorer opens at the scenario's end (its state API answers
/// for the path in the printed URL), and the terminal says what holds there. No browser needed.
#[test]
fn the_explorer_opens_a_scenario_with_refused_steps_at_its_end() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../regressions/scenarios/dirty-read-trap.json")
        .display()
        .to_string();
    let explorer = start_explorer(&["--preset", "quick", "--trace", &scenario], None);
    let (port, url) = (explorer.port, explorer.url.as_str());
    let text = explorer.lines.join("\n");
    assert!(
        text.contains("the model refuses step") && text.contains("left out"),
        "{text}"
    );
    // The trap's refund is blocked: nothing executes, every invariant holds.
    assert!(
        text.contains("at the trace's end: invariants violated: none"),
        "{text}"
    );
    let encoded = url.split("#/path/").nth(1).expect("a path in the URL");
    let (status, body) = get(port, &format!("/api/path/{encoded}"));
    assert_eq!(
        status, 200,
        "the Explorer does not follow the printed path:\n{body}"
    );
    let view: serde_json::Value = serde_json::from_str(&body).unwrap();
    // The page's verdicts are the terminal's: nothing violated at the trap's end.
    let failing: Vec<&serde_json::Value> = view["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["kind"] == "invariant" && v["holds"] == false)
        .collect();
    assert!(failing.is_empty(), "{failing:?}");
    assert_eq!(
        view["depth"].as_u64().unwrap() as usize,
        encoded.split(',').count()
    );
}

/// [`render`] of a page that fills itself from the Explorer's API: tried again (up to five
/// times) until its DOM contains `needle`, since headless Chromium's virtual time budget may
/// run out before a real request returns on a loaded machine.
fn render_until(chromium: &Browser, url: &str, shot: &str, needle: &str) -> String {
    let mut dom = String::new();
    for _ in 0..5 {
        dom = render(chromium, url, shot);
        if dom.contains(needle) {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    dom
}

/// Waits until the Explorer on `port` answers `GET /` with 200 (its connection slots free).
fn wait_until_serving(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while get(port, "/").0 != 200 {
        assert!(Instant::now() < deadline, "the Explorer stopped serving");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One request to the Explorer on `port`, read until it closes: status and body.
fn get(port: u16, target: &str) -> (u16, String) {
    raw(
        port,
        format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").as_bytes(),
    )
}

/// Sends `request` as is and reads the answer until the server closes: status and body.
fn raw(port: u16, request: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(request).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut response = String::new();
    let _ = s.read_to_string(&mut response);
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// `memtx explore --trace` of a counterexample, under the variant that produced it: the page
/// opens at the trace's end and says, at that state, which invariant is violated and since
/// which step (stateright's Explorer said "Searching" there, and counted its own search).
#[test]
fn the_explorer_judges_the_state_it_shows() {
    let Some(chromium) = chromium("judge") else {
        return;
    };
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../regressions/quick/no-cascade-I2.trace.json")
        .display()
        .to_string();
    let explorer = start_explorer(
        &[
            "--preset",
            "quick",
            "--variant",
            "no-cascade",
            "--trace",
            &trace,
        ],
        None,
    );
    let url = explorer.url.clone();
    let depth = url.split("#/path/").nth(1).unwrap().split(',').count();
    let dom = render_until(
        &chromium,
        &url,
        "explorer-violation.png",
        "id=\"where\">preset",
    );
    assert!(
        dom.contains("VIOLATED here: I2"),
        "the verdict at the state shown"
    );
    assert!(
        dom.contains(&format!("VIOLATED (first at step {depth})")),
        "the step where I2 first failed"
    );
    assert!(dom.contains(&format!("state at depth {depth}")));
    assert!(dom.contains("<svg"), "the DAG is drawn");
    // One step back, before the retraction's missed repair, I2 holds.
    let back = url.rsplit_once(',').map(|(b, _)| b.to_string()).unwrap();
    let dom = render_until(
        &chromium,
        &back,
        "explorer-before-violation.png",
        "state at depth",
    );
    assert!(dom.contains("Every invariant holds at this state"));
}

/// A hostile or careless client does not stop the Explorer: connections reset before or in
/// the middle of a request, an oversized head, a method other than GET, a path that names
/// no state, more connections than it serves at once. Each gets a status line or nothing,
/// and the Explorer still answers afterwards. It reads nothing from the working directory
/// (stateright's served `./ui/` when one existed).
#[test]
fn the_explorer_survives_hostile_clients() {
    let dir = binary_support::scratch("explorer-hostile");
    std::fs::create_dir_all(dir.join("ui")).unwrap();
    std::fs::write(dir.join("ui/index.htm"), "PLANTED").unwrap();
    std::fs::write(dir.join("ui/index.html"), "PLANTED").unwrap();
    let explorer = start_explorer(&["--preset", "quick"], Some(&dir));
    let port = explorer.port;
    for _ in 0..50 {
        // Connect and go.
        drop(TcpStream::connect(("127.0.0.1", port)).unwrap());
        // Half a request line, then reset.
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let _ = s.write_all(b"GET /api/pa");
        drop(s);
    }
    // The handlers of those connections end as soon as they read the reset.
    wait_until_serving(port);
    let mut huge = b"GET / HTTP/1.1\r\nX: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 20_000));
    huge.extend_from_slice(b"\r\n\r\n");
    assert_eq!(raw(port, &huge).0, 431);
    assert_eq!(raw(port, b"POST / HTTP/1.1\r\n\r\n").0, 405);
    assert_eq!(raw(port, b"\x00\x01garbage\r\n\r\n").0, 400);
    assert_eq!(get(port, "/api/path/0,x").0, 400);
    assert_eq!(get(port, "/api/path/999").0, 404);
    assert_eq!(get(port, "/ui/index.htm").0, 404);
    // More idle connections than it serves at once: the extra ones are told so at once.
    let idle: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    // Once the server has taken them all (they hold their handlers for its 10 s read
    // timeout), a request is told to come back.
    let busy = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        get(port, "/").0 == 503
    });
    assert!(busy, "no 503 with 40 idle connections held");
    drop(idle);
    // Still serving, and its own page, not the planted one.
    wait_until_serving(port);
    let (status, page) = get(port, "/");
    assert_eq!(status, 200);
    assert!(page.contains("memtx Explorer") && !page.contains("PLANTED"));
    assert_eq!(get(port, "/api/path/").0, 200);
    drop(explorer);
}
