//! `rttlab-bench`: rttlab's speed benchmarks.
//!
//! - `rttlab-bench run SCENARIO.toml [--duration D]` runs one scenario once, with raw traces (queue
//!   trace, time series) off so that the figures are the simulator's, and prints them as JSON.
//! - `rttlab-bench compare SCENARIO.toml [--b-bin OTHER] [--a-set K=V] [--b-set K=V]` runs one
//!   scenario as A and as B (another build, other settings) in turn, round after round, and
//!   prints each round's wall times and ratio and the median ratio: how this project compares
//!   two builds on a machine whose speed drifts. With `--side-by-side` the two run at once, on
//!   a core each, swapping cores every round.
//! - `rttlab-bench suite [bench/suite.toml] [--out bench/results.json]` runs every benchmark of a
//!   suite `repeat` times, each run in a process of its own (so that its peak RSS is its own),
//!   one after another on one core, takes the median of each figure, checks the suite's targets
//!   on the medians, and writes everything with the rttlab git revision to the results file.
//!   A benchmark run at several values of one key (`[bench.scale]`) takes them in turn, round
//!   after round, and checks the median of the rounds' ratios: a machine whose speed drifts
//!   over minutes moves both runs of a round alike. It exits with status 1 when a target is
//!   missed.

mod partition;

use clap::{Parser, Subcommand};
use rttlab_cc::Time;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

#[derive(Parser)]
#[command(name = "rttlab-bench", version, about = "rttlab's speed benchmarks")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one scenario once and print events/s, data packets/s, simulated seconds per wall
    /// second, wall seconds and peak RSS as JSON.
    Run {
        scenario: PathBuf,
        /// Simulated time to run instead of the scenario's (e.g. 10ms).
        #[arg(long)]
        duration: Option<Time>,
        /// Set a scenario key first, KEY=VALUE with VALUE in TOML (`--set topology.k=16`).
        #[arg(long, value_parser = parse_set)]
        set: Vec<(String, toml::Value)>,
    },
    /// Predict what P threads would gain on one scenario, from its own event stream: the events
    /// of each lookahead window per partition (the critical path) and a barrier measured here,
    /// and the bound the same cut would have without windows (`partition.rs` states the model).
    /// Prints JSON.
    Partition {
        scenario: PathBuf,
        #[arg(long)]
        duration: Option<Time>,
        #[arg(long, value_parser = parse_set)]
        set: Vec<(String, toml::Value)>,
        /// Partition counts to predict.
        #[arg(long, value_delimiter = ',', default_value = "2,4,16,64")]
        partitions: Vec<usize>,
        /// What a packet crossing between partitions costs its sender and its receiver each,
        /// in ns (`partition.rs` says what it was measured at).
        #[arg(long, default_value_t = 40.0)]
        crossing_ns: f64,
    },
    /// Run one scenario as A and as B in turn, round after round (B: another rttlab-bench
    /// build, other settings, or both), and print each round's wall times and the ratio A / B,
    /// then the median ratio (above 1: B is faster).
    Compare {
        scenario: PathBuf,
        #[arg(long)]
        duration: Option<Time>,
        /// Set a scenario key for both, KEY=VALUE with VALUE in TOML.
        #[arg(long, value_parser = parse_set)]
        set: Vec<(String, toml::Value)>,
        /// Set a scenario key for A only.
        #[arg(long, value_parser = parse_set)]
        a_set: Vec<(String, toml::Value)>,
        /// Set a scenario key for B only.
        #[arg(long, value_parser = parse_set)]
        b_set: Vec<(String, toml::Value)>,
        /// The rttlab-bench binary that runs B (default: this one).
        #[arg(long)]
        b_bin: Option<PathBuf>,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Run A and B at the same time, each on one thread pinned to a core of its own, the
        /// cores swapped every round (an even number of rounds gives each side each core
        /// equally often): on a machine whose speed drifts within seconds, both runs of a
        /// round see the same machine. Both share the last-level cache and the memory, so a
        /// change in memory traffic shows in both and its ratio comes out nearer 1.
        #[arg(long)]
        side_by_side: bool,
    },
    /// Run a benchmark suite, check its targets on the medians and write the results.
    Suite {
        #[arg(default_value = "bench/suite.toml")]
        suite: PathBuf,
        #[arg(long, default_value = "bench/results.json")]
        out: PathBuf,
        /// Runs per benchmark instead of the suite's `repeat`.
        #[arg(long)]
        repeat: Option<usize>,
    },
}

/// A suite file (`bench/suite.toml`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Suite {
    /// Runs of each benchmark; targets apply to the median.
    repeat: usize,
    bench: Vec<Bench>,
}

#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
struct Bench {
    name: String,
    /// Path relative to the suite file's directory's parent (the repository root).
    scenario: PathBuf,
    /// Simulated time instead of the scenario's.
    duration: Option<Time>,
    /// Run the benchmark at each value of one scenario key (`[bench.scale]`), to see how the
    /// cost per packet grows with the network.
    scale: Option<Scale>,
    /// Scenario keys set for every run (`[bench.set]`, dotted keys: `"run.threads" = 1`).
    #[serde(default)]
    set: std::collections::BTreeMap<String, toml::Value>,
    #[serde(default)]
    targets: Targets,
}

/// One scenario key and the values a scaling benchmark runs it at, smallest network first.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
struct Scale {
    key: String,
    values: Vec<toml::Value>,
}

#[derive(Deserialize, Serialize, Clone, Default)]
#[serde(deny_unknown_fields)]
struct Targets {
    max_wall_s: Option<f64>,
    max_peak_rss_mb: Option<f64>,
    min_sim_seconds_per_wall_second: Option<f64>,
    /// Every sized connection delivered all its bytes.
    #[serde(default)]
    every_flow_completes: bool,
    /// No packet dropped anywhere (switch buffers, host Rx queues).
    #[serde(default)]
    no_drops: bool,
    /// Also run at twice the duration: the peak RSS may grow by at most this fraction (memory
    /// bounded by the network, not the run length).
    max_rss_growth_when_doubled: Option<f64>,
    /// Scaling benchmarks: data packets/s at the last value at least this fraction of the
    /// first's (a flat cost per packet is 1), and the peak RSS at the last value below this.
    min_packet_rate_ratio_largest_to_smallest: Option<f64>,
    max_peak_rss_mb_at_largest: Option<f64>,
}

/// What one run measured.
#[derive(Serialize, Deserialize, Clone, Debug)]
struct Figures {
    scenario: String,
    simulated_s: f64,
    wall_s: f64,
    events: u64,
    events_per_s: f64,
    data_packets: u64,
    data_packets_per_s: f64,
    sim_seconds_per_wall_second: f64,
    peak_rss_mb: f64,
    /// High-water marks of the simulator's memory: packets alive at once, connection slots,
    /// events pending at once.
    packet_slots: u64,
    flow_slots: u64,
    events_pending_peak: u64,
    flows: u64,
    flows_finished: u64,
    drops: u64,
    host_drops: u64,
    throughput_gbps: f64,
    /// On more than one thread: where each partition's thread spent the run
    /// (`rttlab_sim::parallel::Phases`).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    partitions: Value,
}

/// Peak resident set size of this process in MB (Linux `VmHWM`).
fn peak_rss_mb() -> Result<f64, String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("/proc/self/status: {e}"))?;
    let kb: f64 =
        status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.split_whitespace().next()?.parse().ok()).ok_or("no VmHWM in /proc/self/status")?;
    Ok(kb * 1024.0 / 1e6)
}

/// `KEY=VALUE` of `--set`, the value read as TOML (a bare word is a string).
fn parse_set(arg: &str) -> Result<(String, toml::Value), String> {
    let (key, value) = arg.split_once('=').ok_or(format!("{arg:?}: expected KEY=VALUE, e.g. topology.k=16"))?;
    let value =
        toml::from_str::<toml::Table>(&format!("v = {value}")).ok().and_then(|mut t| t.remove("v")).unwrap_or_else(|| toml::Value::String(value.to_string()));
    Ok((key.trim().to_string(), value))
}

fn run_once(path: &Path, duration: Option<Time>, set: &[(String, toml::Value)]) -> Result<Figures, String> {
    let mut s = rttlab_sim::Scenario::from_toml_file_with(path, set).map_err(|e| format!("{}: {e}", path.display()))?;
    s.measure.queue_trace = false;
    s.measure.timeseries_interval = None;
    if let Some(d) = duration {
        s.duration = d;
        s.validate().map_err(|e| format!("{} with --duration {d}: {e}", path.display()))?;
    }
    let out = rttlab_sim::run(&s).map_err(|e| format!("{}: {e}", path.display()))?;
    let perf = &out.meta["perf"];
    let num = |k: &str| perf[k].as_f64().ok_or(format!("perf.{k} missing"));
    let sum = &out.summary;
    Ok(Figures {
        scenario: s.name.clone(),
        simulated_s: num("simulated_s")?,
        wall_s: num("wall_s")?,
        events: num("events")? as u64,
        events_per_s: num("events_per_s")?,
        data_packets: num("data_packets")? as u64,
        data_packets_per_s: num("data_packets_per_s")?,
        sim_seconds_per_wall_second: num("sim_seconds_per_wall_second")?,
        peak_rss_mb: peak_rss_mb()?,
        packet_slots: num("packet_slots")? as u64,
        flow_slots: num("flow_slots")? as u64,
        events_pending_peak: num("events_pending_peak")? as u64,
        flows: sum.flows,
        flows_finished: sum.flows_finished,
        drops: sum.drops,
        host_drops: sum.host_drops,
        throughput_gbps: sum.throughput_gbps,
        partitions: perf["partitions"].clone(),
    })
}

/// `rttlab-bench partition`: the single-threaded run's cost per event, then the same run
/// inspected event by event (`partition::predict`).
fn predict_partitions(path: &Path, duration: Option<Time>, set: &[(String, toml::Value)], counts: &[usize], crossing_ns: f64) -> Result<Value, String> {
    if counts.contains(&0) {
        return Err("--partitions: each count must be at least 1".into());
    }
    if !(crossing_ns >= 0.0 && crossing_ns.is_finite()) {
        return Err(format!("--crossing-ns: {crossing_ns} is not a time; give nanoseconds, 0 or more"));
    }
    // The model takes the single-threaded run's time per event.
    let one: Vec<(String, toml::Value)> = set.iter().cloned().chain([("run.threads".to_string(), toml::Value::Integer(1))]).collect();
    let plain = run_once(path, duration, &one)?;
    let mut s = rttlab_sim::Scenario::from_toml_file_with(path, set).map_err(|e| format!("{}: {e}", path.display()))?;
    s.measure.queue_trace = false;
    s.measure.timeseries_interval = None;
    if let Some(d) = duration {
        s.duration = d;
    }
    let net = rttlab_sim::Network::new(&s).map_err(|e| format!("{}: {e}", path.display()))?;
    let event_us = plain.wall_s / plain.events as f64 * 1e6;
    let b2 = partition::barrier_us();
    let (events, by_kind, predictions) = partition::predict(net, counts, event_us, b2, crossing_ns / 1e3 / event_us);
    Ok(
        json!({ "scenario": s.name, "simulated_s": plain.simulated_s, "events": events, "events_by_kind": by_kind, "wall_s": plain.wall_s, "event_us": event_us, "barrier_2_threads_us": b2, "crossing_ns": crossing_ns, "predictions": predictions }),
    )
}

/// Runs `rttlab-bench run` in a child process and reads its figures.
fn run_child(
    scenario: &Path,
    duration: Option<Time>,
    set: Option<(&str, &toml::Value)>,
    fixed: &std::collections::BTreeMap<String, toml::Value>,
) -> Result<Figures, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    run_with(&exe, scenario, duration, fixed.iter().map(|(k, v)| (k.as_str(), v)).chain(set))
}

/// `run` of `scenario` by the rttlab-bench binary `exe`, in a process of its own.
fn run_with<'a>(exe: &Path, scenario: &Path, duration: Option<Time>, set: impl IntoIterator<Item = (&'a str, &'a toml::Value)>) -> Result<Figures, String> {
    let mut cmd = Command::new(exe);
    cmd.arg("run").arg(scenario);
    if let Some(d) = duration {
        cmd.arg("--duration").arg(d.to_string());
    }
    for (key, value) in set {
        cmd.arg("--set").arg(format!("{key}={value}"));
    }
    let out = cmd.output().map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("unreadable run output: {e}"))
}

/// The settings and binary of one side of a comparison.
struct Side<'a> {
    exe: PathBuf,
    set: Vec<&'a (String, toml::Value)>,
}

/// `rttlab-bench compare`: A and B in turn, `rounds` times; each round's ratio of wall times
/// A / B, and their median, printed, and returned as JSON. Each round's line says so when the
/// two handled different numbers of events (a build that changes the results).
fn compare(scenario: &Path, duration: Option<Time>, a: Side, b: Side, rounds: usize, side_by_side: bool) -> Result<Value, String> {
    if rounds == 0 {
        return Err("--rounds: 0; at least 1".into());
    }
    let cores = if side_by_side {
        if let Some((k, v)) = a.set.iter().chain(&b.set).find(|(k, v)| k == "run.threads" && v.as_integer() != Some(1)) {
            return Err(format!("--side-by-side runs A and B on a core each: {k} = {v}, but each must run on 1 thread"));
        }
        match core_affinity::get_core_ids() {
            Some(ids) if ids.len() >= 2 => Some((ids[0], ids[1])),
            _ => return Err("--side-by-side needs two cores this process may run on".into()),
        }
    } else {
        None
    };
    let run = |side: &Side| run_with(&side.exe, scenario, duration, side.set.iter().map(|(k, v)| (k.as_str(), v)));
    let mut pairs = Vec::new();
    for i in 0..rounds {
        let (fa, fb, placed) = match cores {
            None => (run(&a)?, run(&b)?, String::new()),
            Some((first, second)) => {
                let (ca, cb) = if i % 2 == 0 { (first, second) } else { (second, first) };
                // A process starts on the cores of the thread that starts it.
                let pinned = |side: &Side, core: core_affinity::CoreId| {
                    if !core_affinity::set_for_current(core) {
                        return Err(format!("--side-by-side: cannot pin a run to core {}", core.id));
                    }
                    run(side)
                };
                let (fa, fb) = std::thread::scope(|s| {
                    let (ta, tb) = (s.spawn(|| pinned(&a, ca)), s.spawn(|| pinned(&b, cb)));
                    (ta.join().expect("A's thread"), tb.join().expect("B's thread"))
                });
                (fa?, fb?, format!(" (A on core {}, B on core {})", ca.id, cb.id))
            }
        };
        let ratio = fa.wall_s / fb.wall_s;
        let events = if fa.events == fb.events { String::new() } else { format!(" (events: A {}, B {})", fa.events, fb.events) };
        eprintln!("round {}: A {:.3} s, B {:.3} s, A / B {ratio:.3}{events}{placed}", i + 1, fa.wall_s, fb.wall_s);
        pairs.push((fa, fb, ratio));
    }
    let mut ratios: Vec<f64> = pairs.iter().map(|p| p.2).collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    eprintln!("median A / B: {median:.3} over {rounds} rounds (above 1: B is faster)");
    Ok(json!({
        "scenario": scenario,
        "a": { "exe": a.exe, "set": a.set.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>() },
        "b": { "exe": b.exe, "set": b.set.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>() },
        "rounds": pairs.iter().map(|(fa, fb, r)| json!({ "a_wall_s": fa.wall_s, "b_wall_s": fb.wall_s, "a_events": fa.events, "b_events": fb.events, "ratio": r })).collect::<Vec<_>>(),
        "median_ratio": median,
        "side_by_side": side_by_side,
    }))
}

/// The median of each figure over the runs (the runs are deterministic, so only the wall-clock
/// and memory figures differ between them).
fn median(runs: &[Figures]) -> Figures {
    let mid = |f: fn(&Figures) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Figures {
        wall_s: mid(|r| r.wall_s),
        events_per_s: mid(|r| r.events_per_s),
        data_packets_per_s: mid(|r| r.data_packets_per_s),
        sim_seconds_per_wall_second: mid(|r| r.sim_seconds_per_wall_second),
        peak_rss_mb: mid(|r| r.peak_rss_mb),
        ..runs[0].clone()
    }
}

/// One target checked: what it asks, the measured value, and whether it holds.
fn check(target: String, value: Value, holds: bool) -> Value {
    json!({ "target": target, "value": value, "holds": holds })
}

fn checks(t: &Targets, m: &Figures, doubled: Option<&Figures>) -> Vec<Value> {
    let mut c = Vec::new();
    if let Some(max) = t.max_wall_s {
        c.push(check(format!("wall_s <= {max}"), json!(m.wall_s), m.wall_s <= max));
    }
    if let Some(max) = t.max_peak_rss_mb {
        c.push(check(format!("peak_rss_mb < {max}"), json!(m.peak_rss_mb), m.peak_rss_mb < max));
    }
    if let Some(min) = t.min_sim_seconds_per_wall_second {
        let v = m.sim_seconds_per_wall_second;
        c.push(check(format!("sim_seconds_per_wall_second >= {min}"), json!(v), v >= min));
    }
    if t.every_flow_completes {
        c.push(check("every flow completes".into(), json!(format!("{}/{}", m.flows_finished, m.flows)), m.flows_finished == m.flows));
    }
    if t.no_drops {
        let drops = m.drops + m.host_drops;
        c.push(check("no drop".into(), json!(drops), drops == 0));
    }
    if let (Some(max), Some(d)) = (t.max_rss_growth_when_doubled, doubled) {
        let growth = d.peak_rss_mb / m.peak_rss_mb - 1.0;
        c.push(check(format!("peak RSS grows by at most {:.0} % at twice the simulated time", max * 100.0), json!(growth), growth <= max));
    }
    c
}

/// Prints a line per check; true if every one holds.
fn report_checks(name: &str, checks: &[Value]) -> bool {
    let mut all = true;
    for c in checks {
        let holds = c["holds"].as_bool() == Some(true);
        all &= holds;
        eprintln!("  {} {name}: {} ({})", if holds { "✔" } else { "✘ MISSED" }, c["target"].as_str().unwrap_or(""), c["value"]);
    }
    all
}

fn git_revision(dir: &Path) -> Value {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    json!({
        "commit": git(&["rev-parse", "HEAD"]),
        "uncommitted_changes": git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty()),
    })
}

fn machine() -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| c.lines().find_map(|l| l.strip_prefix("model name")).map(|v| v.trim_start_matches([' ', '\t', ':']).to_string()));
    json!({
        "cpu": cpu,
        "cores": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
    })
}

fn suite(path: &Path, out: &Path, repeat: Option<usize>) -> Result<bool, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let suite: Suite = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let repeat = repeat.unwrap_or(suite.repeat);
    if repeat == 0 {
        return Err("repeat: 0 runs; at least 1".into());
    }
    let root = path.parent().and_then(Path::parent).filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut results = Vec::new();
    let mut all_hold = true;
    for b in &suite.bench {
        let scenario = root.join(&b.scenario);
        let run_for = |i: usize, set: Option<(&str, &toml::Value)>, duration: Option<Time>| {
            let at = set.map(|(k, v)| format!(" at {k} = {v}")).unwrap_or_default();
            eprintln!("{}: run {}/{repeat}{at}", b.name, i + 1);
            run_child(&scenario, duration, set, &b.set).map_err(|e| format!("{}: {e}", b.name))
        };
        let run = |i: usize, set: Option<(&str, &toml::Value)>| run_for(i, set, b.duration);
        if let Some(scale) = &b.scale {
            let (first, last) = match (scale.values.first(), scale.values.last()) {
                (Some(f), Some(l)) if scale.values.len() >= 2 => (f, l),
                _ => return Err(format!("{}: scale.values needs at least two values", b.name)),
            };
            // runs[value][round]
            let mut runs: Vec<Vec<Figures>> = vec![Vec::new(); scale.values.len()];
            // Where the threads are scaled, what a two-thread barrier costs before each
            // round: on a shared machine it comes and goes, and the threads' speed-up with it.
            let mut barriers_us = Vec::new();
            for i in 0..repeat {
                if scale.key == "run.threads" {
                    barriers_us.push(partition::barrier_us());
                }
                for (j, v) in scale.values.iter().enumerate() {
                    runs[j].push(run(i, Some((&scale.key, v)))?);
                }
            }
            if !barriers_us.is_empty() {
                eprintln!(
                    "  {}: a two-thread barrier before each round: {} µs",
                    b.name,
                    barriers_us.iter().map(|h| format!("{h:.3}")).collect::<Vec<_>>().join(", ")
                );
            }
            let mut points = Vec::new();
            for (v, runs) in scale.values.iter().zip(&runs) {
                let m = median(runs);
                eprintln!(
                    "  {} at {} = {v}: {:.0} k data packets/s, {:.1} M events/s, {:.1} MB peak RSS",
                    b.name,
                    scale.key,
                    m.data_packets_per_s / 1e3,
                    m.events_per_s / 1e6,
                    m.peak_rss_mb
                );
                points.push(json!({ "value": v, "median": m, "runs": runs }));
            }
            let large = &points[points.len() - 1];
            let mut checks = Vec::new();
            if let Some(min) = b.targets.min_packet_rate_ratio_largest_to_smallest {
                let (small, large) = (&runs[0], &runs[runs.len() - 1]);
                let mut ratios: Vec<f64> = small.iter().zip(large).map(|(s, l)| l.data_packets_per_s / s.data_packets_per_s).collect();
                eprintln!(
                    "  {}: each round's ratio, {} = {last} to {first}: {}",
                    b.name,
                    scale.key,
                    ratios.iter().map(|r| format!("{r:.3}")).collect::<Vec<_>>().join(", ")
                );
                ratios.sort_by(f64::total_cmp);
                let ratio = ratios[ratios.len() / 2];
                checks.push(check(
                    format!("data packets/s at {} = {last} at least {min:.3} of {first}'s (median of the rounds' ratios)", scale.key),
                    json!(ratio),
                    ratio >= min,
                ));
            }
            if let Some(max) = b.targets.max_peak_rss_mb_at_largest {
                let rss = large["median"]["peak_rss_mb"].as_f64().unwrap_or(f64::INFINITY);
                checks.push(check(format!("peak_rss_mb at {} = {last} < {max}", scale.key), json!(rss), rss < max));
            }
            all_hold &= report_checks(&b.name, &checks);
            results.push(json!({ "name": b.name, "scenario": b.scenario, "duration": b.duration.map(|d| d.to_string()), "scale": scale, "targets": b.targets, "points": points, "checks": checks, "barrier_us_before_rounds": barriers_us }));
            continue;
        }
        let runs = (0..repeat).map(|i| run(i, None)).collect::<Result<Vec<_>, _>>()?;
        let m = median(&runs);
        let doubled = match b.targets.max_rss_growth_when_doubled {
            Some(_) => {
                let d = b.duration.ok_or(format!("{}: max_rss_growth_when_doubled needs a duration to double", b.name))?;
                Some(median(&(0..repeat).map(|i| run_for(i, None, Some(Time(d.ps() * 2)))).collect::<Result<Vec<_>, _>>()?))
            }
            None => None,
        };
        let checks = checks(&b.targets, &m, doubled.as_ref());
        all_hold &= report_checks(&b.name, &checks);
        eprintln!(
            "  {}: {:.2} s wall, {:.1} M events/s, {:.0} k data packets/s, {:.3} sim-s/wall-s, {:.1} MB peak RSS",
            b.name,
            m.wall_s,
            m.events_per_s / 1e6,
            m.data_packets_per_s / 1e3,
            m.sim_seconds_per_wall_second,
            m.peak_rss_mb
        );
        results.push(json!({
            "name": b.name,
            "scenario": b.scenario,
            "duration": b.duration.map(|d| d.to_string()),
            "targets": b.targets,
            "median": m,
            "runs": runs,
            "doubled": doubled,
            "checks": checks,
        }));
    }
    let report = json!({
        "rttlab": { "version": env!("CARGO_PKG_VERSION"), "git": git_revision(root) },
        "machine": machine(),
        "repeat": repeat,
        "all_targets_hold": all_hold,
        "benchmarks": results,
    });
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = out.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&report).expect("json") + "\n").map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, out).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    eprintln!("wrote {}", out.display());
    Ok(all_hold)
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Cmd::Run { scenario, duration, set } => run_once(&scenario, duration, &set).map(|f| {
            println!("{}", serde_json::to_string_pretty(&f).expect("json"));
            true
        }),
        Cmd::Suite { suite: path, out, repeat } => suite(&path, &out, repeat),
        Cmd::Compare { scenario, duration, set, a_set, b_set, b_bin, rounds, side_by_side } => {
            std::env::current_exe().map_err(|e| e.to_string()).and_then(|me| {
                // Side by side, each runs on one thread unless told otherwise (`compare` refuses more).
                let one_thread = ("run.threads".to_string(), toml::Value::Integer(1));
                let threads = side_by_side.then_some(&one_thread);
                let a = Side { exe: me.clone(), set: threads.into_iter().chain(&set).chain(&a_set).collect() };
                let b = Side { exe: b_bin.unwrap_or(me), set: threads.into_iter().chain(&set).chain(&b_set).collect() };
                compare(&scenario, duration, a, b, rounds, side_by_side).map(|v| {
                    println!("{}", serde_json::to_string_pretty(&v).expect("json"));
                    true
                })
            })
        }
        Cmd::Partition { scenario, duration, set, partitions, crossing_ns } => {
            predict_partitions(&scenario, duration, &set, &partitions, crossing_ns).map(|v| {
                println!("{}", serde_json::to_string_pretty(&v).expect("json"));
                true
            })
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("rttlab-bench: {e}");
            ExitCode::from(2)
        }
    }
}
