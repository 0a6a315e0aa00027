//! `rttlab-bench SCENARIO.toml [--duration 100ms]`: runs one scenario and prints, as JSON,
//! events/s, simulated seconds per wall second and peak memory. Raw traces (queue samples, time
//! series) are switched off so that the figures are the simulator's, not the trace's.

use std::process::ExitCode;

/// Peak resident set size of this process in bytes (Linux `VmHWM`).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, duration) = match args.as_slice() {
        [p] => (p, None),
        [p, flag, d] if flag == "--duration" => (p, Some(d)),
        _ => {
            eprintln!("usage: rttlab-bench SCENARIO.toml [--duration 100ms]");
            return ExitCode::from(2);
        }
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("rttlab-bench: cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let scenario = rttlab_sim::Scenario::from_toml(&text).and_then(|mut s| {
        s.measure.queue_trace = false;
        s.measure.timeseries_interval = None;
        if let Some(d) = duration {
            s.duration = d.parse().map_err(|e: rttlab_cc::units::UnitError| rttlab_sim::ScenarioError::Field {
                field: "--duration".into(),
                message: e.to_string(),
            })?;
            s.validate()?;
        }
        Ok(s)
    });
    let out = match scenario.and_then(|s| rttlab_sim::run(&s)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rttlab-bench: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let perf = &out.meta["perf"];
    let report = serde_json::json!({
        "scenario": out.meta["scenario"]["name"],
        "simulated_s": out.meta["scenario"]["duration"],
        "events": perf["events"],
        "wall_s": perf["wall_s"],
        "events_per_s": perf["events_per_s"],
        "sim_seconds_per_wall_second": perf["sim_seconds_per_wall_second"],
        "peak_rss_mb": peak_rss_bytes().map(|b| b as f64 / 1e6),
        "throughput_gbps": out.summary.throughput_gbps,
    });
    println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    ExitCode::SUCCESS
}
