//! The explorer over timely workers: the same counts, levels, verdicts, coverage and
//! counterexamples as one thread of the threaded engine, in one process (library level)
//! and over local processes (through the binary).

mod binary_support;

use binary_support::{children, scratch};
use memtx_checker::bench::two_phase_commit::{
    self, canonicalize, TwoPhaseAction, TwoPhaseState, TwoPhaseSys,
};
use memtx_checker::explore::{explore, explore_timely, Cluster, ExploreOptions, ExploreReport};

type Report = ExploreReport<TwoPhaseState, TwoPhaseAction>;

fn model(rms: usize) -> TwoPhaseSys {
    TwoPhaseSys::new(rms).expect("supported RM count")
}

/// Everything that must not depend on the engine or the worker count.
fn assert_same(a: &Report, b: &Report, what: &str) {
    assert_eq!(a.unique_states, b.unique_states, "{what}: unique");
    assert_eq!(a.total_states, b.total_states, "{what}: total");
    assert_eq!(a.max_depth, b.max_depth, "{what}: max depth");
    assert_eq!(a.states_per_depth, b.states_per_depth, "{what}: per depth");
    assert_eq!(a.stopped_early, b.stopped_early, "{what}: stop");
    assert_eq!(a.properties, b.properties, "{what}: discoveries and paths");
}

#[test]
fn two_phase_commit_on_2_and_3_timely_workers_matches_one_thread() {
    for rms in [3, 5] {
        let m = model(rms);
        let one = explore(&m, &ExploreOptions::new().threads(1)).expect("no eventually");
        for workers in [1, 2, 3] {
            let report = explore_timely(&m, &ExploreOptions::new(), &Cluster::InProcess(workers))
                .expect("no eventually")
                .expect("worker 0 is in this process");
            assert_same(&one, &report, &format!("{rms} RMs, {workers} workers"));
            let cluster = report.cluster.as_ref().expect("a cluster report");
            assert_eq!(cluster.threads_per_process, workers);
            assert_eq!(report.states_per_worker.len(), workers);
            if workers > 1 {
                assert!(cluster.bytes_to_other_workers > 0);
            }
        }
    }
}

#[test]
fn two_phase_commit_with_symmetry_locality_and_a_depth_bound_matches_one_thread() {
    let m = model(4);
    let options = || {
        ExploreOptions::new()
            .symmetry(|_, s| canonicalize(s))
            .locality(two_phase_commit::locality)
            .target_max_depth(7)
    };
    let one = explore(&m, &options().threads(1)).expect("no eventually");
    for workers in [2, 3] {
        let report = explore_timely(&m, &options(), &Cluster::InProcess(workers))
            .expect("no eventually")
            .expect("worker 0 is in this process");
        assert_same(&one, &report, &format!("{workers} workers"));
    }
}

// ---- Through the binary: `--local N` processes over loopback. ----

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn memtx(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memtx"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("memtx runs")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The fields a run over processes must share with one thread.
fn essentials(v: &serde_json::Value) -> serde_json::Value {
    let properties: Vec<serde_json::Value> = v["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .map(|p| {
            let mut p = p.clone();
            if let Some(o) = p.as_object_mut() {
                o.remove("trace");
                o.remove("replay_command");
            }
            p
        })
        .collect();
    serde_json::json!({
        "unique": v["unique_states"],
        "total": v["total_states"],
        "depth": v["max_depth"],
        "per_depth": v["states_per_depth"],
        "result": v["result"],
        "complete": v["complete"],
        "rules": v["rules"],
        "properties": properties,
    })
}

fn compare_local(name: &str, args: &[&str], locals: &[&str]) {
    let dir = scratch(name);
    let mut one = vec!["check", "--json", "--threads", "1"];
    one.extend_from_slice(args);
    let reference = memtx(&dir, &one);
    let expected = essentials(&json(&reference));
    for n in locals {
        let mut many = one.clone();
        many.extend_from_slice(&["--local", n]);
        let out = memtx(&dir, &many);
        assert_eq!(
            out.status.code(),
            reference.status.code(),
            "{name} --local {n}"
        );
        let report = json(&out);
        assert_eq!(essentials(&report), expected, "{name} --local {n}");
        assert_eq!(report["engine"], "timely");
        let processes: usize = n.parse().expect("a number");
        assert_eq!(report["cluster"]["processes"], processes);
        assert_eq!(
            report["cluster"]["per_process"].as_array().map(Vec::len),
            Some(processes)
        );
        assert!(report["command"]
            .as_str()
            .is_some_and(|c| c.contains(&format!("--local {n}"))));
    }
}

#[test]
fn quick_on_2_and_3_local_processes_matches_one_thread() {
    compare_local("quick", &["--preset", "quick"], &["2", "3"]);
}

#[test]
fn a_suite_preset_on_2_local_processes_matches_one_thread() {
    compare_local("lineage", &["--preset", "lineage"], &["2"]);
}

#[test]
fn a_violation_on_2_local_processes_writes_the_same_counterexample_as_one_thread() {
    let dir = scratch("violation");
    let base = [
        "check",
        "--preset",
        "quick",
        "--variant",
        "missed-cascade",
        "--json",
    ];
    let one = memtx(
        &dir,
        &[&base[..], &["--threads", "1", "--traces", "one"]].concat(),
    );
    let two = memtx(
        &dir,
        &[
            &base[..],
            &["--threads", "1", "--local", "2", "--traces", "two"],
        ]
        .concat(),
    );
    assert_eq!(one.status.code(), Some(1), "the variant has a violation");
    assert_eq!(two.status.code(), Some(1));
    assert_eq!(essentials(&json(&one)), essentials(&json(&two)));
    let mut traces = 0;
    for entry in std::fs::read_dir(dir.join("one/quick")).expect("traces of one thread") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().expect("a file name");
        let read = |p: &Path| -> serde_json::Value {
            let mut v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(p).expect("a trace file")).expect("JSON");
            v.as_object_mut().expect("an object").remove("command");
            v
        };
        assert_eq!(
            read(&path),
            read(&dir.join("two/quick").join(name)),
            "{name:?}"
        );
        traces += 1;
    }
    assert!(traces > 0);
}

#[test]
fn a_killed_process_ends_the_local_run_with_one_line_and_exit_2() {
    let dir = scratch("killed");
    let mut parent = Command::new(env!("CARGO_BIN_EXE_memtx"))
        .current_dir(&dir)
        .args([
            "check",
            "--preset",
            "paper",
            "--threads",
            "1",
            "--local",
            "2",
            "--json",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("memtx runs");
    // Find a child (process 1 or 0) once both run, and kill it.
    let started = Instant::now();
    let child = loop {
        let children = std::fs::read_to_string(format!(
            "/proc/{}/task/{}/children",
            parent.id(),
            parent.id()
        ))
        .unwrap_or_default();
        let pids: Vec<u32> = children
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if pids.len() == 2 {
            break pids[1];
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "children never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_secs(3));
    let killed = Command::new("kill")
        .args(["-9", &child.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = parent.try_wait().expect("wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the run did not end after a process was killed"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    use std::io::Read;
    parent
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr is text");
    assert_eq!(status.code(), Some(2), "{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("memtx: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("lost") || errors[0].contains("killed"),
        "{stderr}"
    );
}

/// Two loopback addresses nobody listens on (bound and released).
fn two_free_addresses() -> Vec<String> {
    let listeners: Vec<std::net::TcpListener> = (0..2)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    listeners
        .iter()
        .map(|l| format!("{}", l.local_addr().expect("an address")))
        .collect()
}

/// Starts `memtx args… --processes N --process i --hostfile FILE` for every i over loopback
/// and returns process 0's output once every process ended (each must end within a minute).
fn cluster_of_binaries(dir: &Path, args: &[&str], n: usize) -> Output {
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    let hosts: String = listeners
        .iter()
        .map(|l| format!("{}\n", l.local_addr().expect("an address")))
        .collect();
    drop(listeners);
    let hostfile = dir.join(format!("hosts-{n}"));
    std::fs::write(&hostfile, hosts).expect("a hostfile");
    let mut children: Vec<std::process::Child> = (0..n)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_memtx"))
                .current_dir(dir)
                .args(args)
                .args(["--processes", &n.to_string(), "--process", &i.to_string()])
                .arg("--hostfile")
                .arg(&hostfile)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("memtx runs")
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while children
        .iter_mut()
        .any(|c| c.try_wait().expect("wait").is_none())
    {
        if Instant::now() > deadline {
            for c in &mut children {
                let _ = c.kill();
            }
            panic!("a process of the cluster did not end within a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut outputs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("output"))
        .collect();
    for (i, out) in outputs.iter().enumerate() {
        assert_eq!(
            out.status.code(),
            Some(0),
            "process {i}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    outputs.swap_remove(0)
}

/// The JSON lines a process printed (timely's connection lines are not JSON).
fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn a_process_nobody_connects_to_gives_up_after_the_connect_timeout_with_one_line() {
    let dir = scratch("connect-timeout");
    let addresses = two_free_addresses();
    std::fs::write(dir.join("hosts"), addresses.join("\n")).expect("a hostfile");
    // Process 0 waits for process 1, which never comes; process 1 reaches for process 0,
    // which is not there.
    for (me, other) in [("0", "1"), ("1", "0")] {
        let started = Instant::now();
        let out = memtx(
            &dir,
            &[
                "check",
                "--preset",
                "quick",
                "--threads",
                "1",
                "--processes",
                "2",
                "--process",
                me,
                "--hostfile",
                "hosts",
                "--connect-timeout",
                "2s",
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "process {me}: {stderr}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "process {me} took {:?}",
            started.elapsed()
        );
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "process {me}: {stderr}");
        let index = other.parse::<usize>().expect("an index");
        assert!(
            lines[0].contains(&format!("process {other}"))
                && lines[0].contains(&addresses[index])
                && lines[0].contains("hostfile")
                && lines[0].contains("--connect-timeout"),
            "process {me}: {stderr}"
        );
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("error connecting"),
            "no connection chatter on stdout"
        );
    }
    // A timeout that is not a duration is refused in one line.
    let out = memtx(
        &dir,
        &[
            "check",
            "--preset",
            "quick",
            "--local",
            "2",
            "--peer-timeout",
            "soon",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--peer-timeout"), "{stderr}");
}

/// Kills (and resumes, should it be stopped) a process when dropped, test failure or not.
struct Leftover(u32);

impl Drop for Leftover {
    fn drop(&mut self) {
        for signal in ["-CONT", "-KILL"] {
            let _ = Command::new("kill")
                .args([signal, &self.0.to_string()])
                .stderr(Stdio::null())
                .status();
        }
    }
}

#[test]
fn a_hung_process_ends_the_local_run_after_the_peer_timeout_with_one_line_and_exit_2() {
    let dir = scratch("hung");
    let mut parent = Command::new(env!("CARGO_BIN_EXE_memtx"))
        .current_dir(&dir)
        .args([
            "check",
            "--preset",
            "paper",
            "--threads",
            "1",
            "--local",
            "2",
            "--peer-timeout",
            "3s",
            "--json",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("memtx runs");
    let _parent_guard = Leftover(parent.id());
    let started = Instant::now();
    let process_1 = loop {
        let found = children(parent.id());
        if found.len() == 2 {
            if let Some((pid, _)) = found.iter().find(|(_, cmd)| cmd.contains("--process 1 ")) {
                break *pid;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "children never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let _child_guard = Leftover(process_1);
    // Let the processes connect and explore a little, then freeze process 1.
    std::thread::sleep(Duration::from_secs(2));
    let stopped = Command::new("kill")
        .args(["-STOP", &process_1.to_string()])
        .status()
        .expect("kill runs");
    assert!(stopped.success());
    let frozen = Instant::now();
    let status = loop {
        if let Some(status) = parent.try_wait().expect("wait") {
            break status;
        }
        assert!(
            frozen.elapsed() < Duration::from_secs(20),
            "the run did not end after a process hung"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    use std::io::Read;
    parent
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr is text");
    assert_eq!(status.code(), Some(2), "{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("memtx: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("process 1 (worker 1) has sent nothing for 3 s")
            && errors[0].contains("--peer-timeout"),
        "{stderr}"
    );
}

#[test]
fn two_phase_commit_on_2_and_3_local_processes_of_the_binary_matches_one_thread() {
    let dir = scratch("two-phase-processes");
    let rms = 5;
    let one = explore(&model(rms), &ExploreOptions::new().threads(1)).expect("no eventually");
    for n in [2, 3] {
        let out = cluster_of_binaries(
            &dir,
            &[
                "bench",
                "--two-phase",
                &rms.to_string(),
                "--threads",
                "1",
                "--run-one",
                "fast",
            ],
            n,
        );
        let lines = json_lines(&out);
        assert_eq!(lines.len(), 1, "{}", String::from_utf8_lossy(&out.stdout));
        let run = &lines[0];
        assert_eq!(run["engine"], "Timely", "{n} processes");
        assert_eq!(run["unique_states"], one.unique_states, "{n} processes");
        assert_eq!(run["total_states"], one.total_states, "{n} processes");
        assert_eq!(run["max_depth"], one.max_depth, "{n} processes");
        assert_eq!(run["threads"], n, "one worker per process");
        assert!(
            run["bytes_to_other_processes"]
                .as_u64()
                .is_some_and(|b| b > 0),
            "{run}"
        );
    }
}
