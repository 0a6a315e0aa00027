//! No input crashes the simulator. Every shipped scenario, resolved (so that every parameter is
//! written out), has one to three of its values replaced by edge cases of the same kind (zero,
//! one, the largest representable, beyond it, negative, a wrong type, an empty table); the
//! result either fails validation with an error or builds and runs (a bounded number of events)
//! and reports, without a panic, and with the network's invariants intact.
//!
//! `make fuzz` runs many more cases, in a debug build where integer overflow panics too.

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngSeed};
use rttlab_cc::{Bytes, Rate, Time};
use rttlab_sim::{Network, Scenario};
use serde_json::{json, Value};
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// Events a generated scenario may run for: enough to reach steady state on small topologies.
const EVENT_BUDGET: u64 = 200_000;

/// The shipped scenarios, resolved.
fn presets() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/rttlab/scenarios");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let s = Scenario::from_toml(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), s.resolved())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 10, "{}", dir.display());
    out
}

/// A step into a JSON value.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Item(usize),
}

/// The path of every leaf (and of every table and array, which may be emptied).
fn paths(v: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                at.push(Step::Key(k.clone()));
                paths(x, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(Step::Item(i));
                paths(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn get_mut<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Item(i) => &mut v[*i],
    })
}

/// Edge cases of the same kind as `v`.
fn edges(v: &Value) -> Vec<Value> {
    let mut out = vec![Value::Null, json!("x"), json!(true)];
    match v {
        Value::String(s) if s.parse::<Time>().is_ok() => {
            out.extend(["0ps", "1ps", "1ns", "1000000s", "18446744s", "1000000000000s", "-1us", "0.5ps"].map(|s| json!(s)))
        }
        Value::String(s) if s.parse::<Rate>().is_ok() => out.extend(["0bps", "1bps", "1Kbps", "1Tbps", "18446744Tbps", "1e300Gbps"].map(|s| json!(s))),
        Value::String(s) if s.parse::<Bytes>().is_ok() => out.extend(["0B", "1B", "63B", "18446744073GB", "1GB"].map(|s| json!(s))),
        Value::String(_) => out.extend([json!(""), json!("none")]),
        Value::Number(_) => out.extend([
            json!(0),
            json!(1),
            json!(2),
            json!(3),
            json!(-1),
            json!(255),
            json!(65536),
            json!(u32::MAX),
            json!(u32::MAX as u64 + 1),
            json!(u64::MAX),
            json!(0.0),
            json!(0.5),
            json!(-0.5),
            json!(1e-300),
            json!(1e300),
        ]),
        Value::Bool(b) => out.push(json!(!b)),
        Value::Array(_) => out.extend([json!([]), json!([0])]),
        Value::Object(_) => out.push(json!({})),
        Value::Null => {}
    }
    out
}

/// Networks larger than this are validated but not built: building one is correct but takes
/// seconds and up to a gigabyte (tests/scenario.rs checks the limits on size).
const MAX_BUILT_HOSTS: u32 = 4096;

/// Builds and runs `text` for at most [`EVENT_BUDGET`] events and computes its report.
fn build_run_report(text: &str) {
    let Ok(s) = Scenario::from_json(text) else { return };
    if s.hosts() > MAX_BUILT_HOSTS || s.topology.switches() > MAX_BUILT_HOSTS {
        return;
    }
    let Ok(mut net) = Network::new(&s) else { return };
    let _ = net.run_observed(|p| if p.events >= EVENT_BUDGET { ControlFlow::Break(()) } else { ControlFlow::Continue(()) });
    net.check_invariants().unwrap_or_else(|e| panic!("invariant broken: {e}"));
    let _ = (net.summary(), net.tables());
}

fn cases() -> u32 {
    std::env::var("RTTLAB_FUZZ_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(1000)
}

fn seed() -> RngSeed {
    match std::env::var("RTTLAB_FUZZ_SEED").ok().and_then(|c| c.parse().ok()) {
        Some(s) => RngSeed::Fixed(s),
        None if std::env::var_os("RTTLAB_FUZZ_CASES").is_some() => RngSeed::Random,
        None => RngSeed::Fixed(1),
    }
}

proptest! {
    #![proptest_config(Config { cases: cases(), rng_seed: seed(), failure_persistence: None, ..Config::default() })]

    #[test]
    fn any_mutated_scenario_is_an_error_or_runs(preset in any::<Index>(), edits in prop::collection::vec((any::<Index>(), any::<Index>()), 1..4)) {
        let all = presets();
        let (name, mut value) = all[preset.index(all.len())].clone();
        let mut described = Vec::new();
        for (at, pick) in edits {
            let mut ps = Vec::new();
            paths(&value, &mut Vec::new(), &mut ps);
            let path = &ps[at.index(ps.len())];
            let target = get_mut(&mut value, path);
            let choices = edges(target);
            let new = choices[pick.index(choices.len())].clone();
            described.push(format!("{path:?} = {new}"));
            *target = new;
        }
        let text = value.to_string();
        if std::env::var_os("RTTLAB_FUZZ_TRACE").is_some() {
            eprintln!("{name} {described:?}");
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| build_run_report(&text)));
        prop_assert!(outcome.is_ok(), "{name} with {described:?} panicked; scenario: {text}");
    }
}
