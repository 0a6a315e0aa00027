//! Controllers declare what they need (`rttlab_cc::Needs`) and the simulator reads only that:
//! every registered controller runs from its registration alone, its needs become the
//! scenario's defaults, and no algorithm's name or variant is matched in the simulator.

use crate::common::{run_net, scenario, star_pair};
use rttlab_cc::{Cc, Kind};
use rttlab_sim::scenario::CcConfig;

/// A 2-host star running `algorithm` on its own transport, 2 ms.
fn scenario_for(algorithm: &str, kind: Kind) -> String {
    let transport = match kind {
        Kind::Rate => "message",
        Kind::Window => "window",
    };
    star_pair("2ms", "", &format!("[transport]\nkind = \"{transport}\"\n[cc]\nalgorithm = \"{algorithm}\"\n[[flows]]\nsrc = 0\ndst = 1\n"))
}

fn native(s: &rttlab_sim::Scenario) -> &Cc {
    match &s.cc.controller {
        CcConfig::Native(c) => c,
        CcConfig::Python(_) => unreachable!("a registered algorithm"),
    }
}

#[test]
fn every_registered_controller_runs_on_its_transport_and_moves_data() {
    for &name in Cc::NAMES {
        let kind = [Kind::Rate, Kind::Window].into_iter().find(|&k| Cc::names_of(k).contains(&name)).expect("every name has a kind");
        let net = run_net(&scenario_for(name, kind));
        let delivered: u64 = net.flows().iter().map(|f| f.stats.delivered_bytes).sum();
        // 10 Gbps for 2 ms is 2.5 MB: any working controller delivers far more than 100 KB.
        assert!(delivered > 100_000, "{name}: {delivered} bytes delivered");
    }
}

#[test]
fn a_controllers_needs_become_the_scenarios_defaults() {
    for &name in Cc::NAMES {
        let kind = if Cc::names_of(Kind::Window).contains(&name) { Kind::Window } else { Kind::Rate };
        let s = scenario(&scenario_for(name, kind));
        let needs = native(&s).needs();
        assert_eq!(s.switch.int, Some(needs.int), "{name}: switch.int follows needs.int");
        if needs.ecn_profile.is_some() {
            assert!(s.switch.ecn.is_some(), "{name}: its marking profile is the switches' default");
        }
        match &s.transport {
            rttlab_sim::scenario::TransportConfig::Window(w) => assert_eq!(w.delayed_ack, !needs.ack_per_packet, "{name}: delayed ACKs"),
            rttlab_sim::scenario::TransportConfig::Message { .. } => {
                if needs.ack_per_packet {
                    assert_eq!(s.nic.segment().0, s.nic.payload_per_packet(), "{name}: a segment of one packet");
                }
                if needs.rate_limiter {
                    assert_eq!(s.nic.max_outstanding(), rttlab_sim::scenario::NicConfig::UNLIMITED_OUTSTANDING, "{name}: no outstanding cap");
                }
            }
        }
    }
}

#[test]
fn a_controller_on_the_other_transport_is_an_error_listing_each_transports_controllers() {
    let text = star_pair("1ms", "", "[transport]\nkind = \"window\"\n[cc]\nalgorithm = \"timely\"\n[[flows]]\nsrc = 0\ndst = 1\n");
    let e = rttlab_sim::Scenario::from_toml(&text).unwrap_err().to_string();
    let rate = Cc::names_of(Kind::Rate).join(", ");
    let window = Cc::names_of(Kind::Window).join(", ");
    assert!(e.contains(&format!("timely is a rate controller ({rate})")) && e.contains(&format!("takes a window controller ({window})")), "{e}");
}

/// The simulator's and the Python bindings' sources name no registered algorithm: neither its
/// variant (`Cc::Timely`) nor its name as a string. (The kernel programs' replay picks the
/// parameters it replays by their type, `Cc::params`.)
#[test]
fn no_algorithm_is_matched_by_name_outside_the_registry() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = vec![crates.join("sim/src"), crates.join("py/src")];
    let mut found = Vec::new();
    let variants: Vec<String> = Cc::NAMES.iter().map(|n| n.split('_').map(|w| w[..1].to_uppercase() + &w[1..]).collect::<String>()).collect();
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for (name, variant) in Cc::NAMES.iter().zip(&variants) {
                if code.contains(&format!("Cc::{variant}")) || code.contains(&format!("\"{name}\"")) {
                    found.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "algorithms matched by name:\n{}", found.join("\n"));
}
