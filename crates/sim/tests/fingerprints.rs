//! Fingerprints: every shipped scenario (the benchmarks among them) runs at a short length and
//! its summary must equal, bit for bit, the one stored in `tests/fingerprints/NAME.json`. A
//! speed-up that changes behaviour (an event reordered, a rounding moved) fails here. When a
//! change of behaviour is intended, re-record with
//! `RTTLAB_BLESS_FINGERPRINTS=1 cargo test --release -p rttlab-sim --test sim -- fingerprints::`
//! and say why in the commit.

use rttlab_cc::Time;
use rttlab_sim::{Network, Scenario};
use serde_json::{json, Value};
use std::path::PathBuf;

use crate::common::RUNS;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The summary of a short run, with the count of data packets sent.
fn fingerprint(name: &str, duration: &str, warmup: &str) -> Value {
    let text = std::fs::read_to_string(root().join(format!("scenarios/{name}.toml"))).expect("scenario file");
    let mut s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    s.duration = duration.parse::<Time>().expect("duration");
    s.warmup = warmup.parse::<Time>().expect("warmup");
    s.measure.queue_trace = false;
    s.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut net = Network::new(&s).expect("network");
    net.run();
    json!({ "duration": duration, "warmup": warmup, "data_packets": net.data_packets_sent(), "summary": net.summary() })
}

#[test]
fn summaries_match_the_stored_fingerprints() {
    let bless = std::env::var_os("RTTLAB_BLESS_FINGERPRINTS").is_some();
    let mut differ = Vec::new();
    for &(name, duration, warmup) in RUNS {
        let got = fingerprint(name, duration, warmup);
        let path = root().join(format!("crates/sim/tests/fingerprints/{name}.json"));
        if bless {
            std::fs::write(&path, serde_json::to_string_pretty(&got).unwrap() + "\n").expect("write fingerprint");
            continue;
        }
        let stored: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).expect("fingerprint JSON");
        if stored != got {
            let keys: Vec<String> = got["summary"]
                .as_object()
                .expect("summary object")
                .iter()
                .filter(|(k, v)| stored["summary"].get(k.as_str()) != Some(v))
                .map(|(k, v)| format!("{k}: stored {} now {v}", stored["summary"][k.as_str()]))
                .chain(
                    (stored["data_packets"] != got["data_packets"])
                        .then(|| format!("data_packets: stored {} now {}", stored["data_packets"], got["data_packets"])),
                )
                .collect();
            differ.push(format!("{name}:\n    {}", keys.join("\n    ")));
        }
    }
    assert!(differ.is_empty(), "summaries differ from the stored fingerprints:\n  {}", differ.join("\n  "));
}

#[test]
fn a_run_is_bit_identical_when_repeated() {
    let (name, duration, warmup) = RUNS[2];
    assert_eq!(fingerprint(name, duration, warmup), fingerprint(name, duration, warmup));
}
