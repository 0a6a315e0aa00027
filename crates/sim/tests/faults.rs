//! Fabric faults (`[[faults]]`): links down, degraded and lossy, switches down; the fabric's
//! failover and the hosts' repair (PRR), each checked against a hand computation.

mod common;

use common::{cell, run_net, scenario};
use rttlab_sim::{Network, Scenario};

/// h0 to h1 over two equal paths, s0–s1–s3 and s0–s2–s3, 10 Gbps and 1 µs links, 1000 B
/// packets on the wire (936 B payload, 64 B headers): one takes 800 ns to serialize.
fn two_paths(rest: &str) -> String {
    format!(
        r#"
duration = "1ms"
[topology]
kind = "graph"
hosts = ["h0", "h1"]
switches = ["s0", "s1", "s2", "s3"]
link_rate = "10Gbps"
link_delay = "1us"
links = [
  {{ a = "h0", b = "s0" }}, {{ a = "s0", b = "s1" }}, {{ a = "s0", b = "s2" }},
  {{ a = "s1", b = "s3" }}, {{ a = "s2", b = "s3" }}, {{ a = "s3", b = "h1" }},
]
[switch]
pfc = false
[nic]
mtu = "1000B"
header = "64B"
ack = "64B"
{rest}
"#
    )
}

/// A flow at line rate, nothing holding it back: the message transport without a controller or
/// a cap on what is outstanding, one packet per segment.
const LINE_RATE_FLOW: &str = r#"
segment = "936B"
max_outstanding = "1TB"
[cc]
algorithm = "none"
[[flows]]
src = 0
dst = 1
"#;

/// The spine (s1 or s2) flow 0's data packets cross.
fn spine_of_flow(toml: &str) -> String {
    let net = Network::new(&scenario(toml)).expect("network");
    let f = net.flow(0);
    let path = net.path(f.src, f.dst, f.hash[0]);
    let hop = &net.ports()[path[1].idx()];
    net.graph().node_name(net.ports()[hop.peer.idx()].node)
}

#[test]
fn a_link_down_loses_what_is_on_it_and_what_is_forwarded_into_it_until_failover() {
    // Packet k leaves h0 at 0.8k µs and reaches s0 1.8 µs later, at t_k = 1.8 + 0.8k µs, when
    // s0 starts it on the uplink (in and out at line rate: no queue). The uplink goes down at
    // T = 100 µs, and s0's routes drop it at T + 10 µs. Lost: a packet started before T but
    // still on the wire at T (t_k + 1.8 ≥ T), and every packet s0 forwards into the dead port
    // until the failover (t_k < T + 10): t_k in [98.2, 110), k = 121..=135, 15 packets —
    // (failover + serialization + propagation) / serialization, rounded up; the black hole
    // alone is failover × rate / packet = 12.5.
    let base = two_paths(&format!("{LINE_RATE_FLOW}[routing]\nfailover_delay = \"10us\"\n"));
    let spine = spine_of_flow(&base);
    let net = run_net(&format!("{base}[[faults]]\nat = \"100us\"\nlink = \"s0-{spine}\"\nkind = \"down\"\n"));
    let s = net.summary();
    assert_eq!(cell(&net, "flows", &[("flow", "0")], "drops_down"), 15.0);
    assert_eq!(cell(&net, "ports", &[("port", &format!("s0-{spine}")), ("class", "1")], "lost_down"), 15.0);
    assert_eq!(s.drops, 0, "no buffer drops");
    // The rest are ACKs, lost on the link's other direction if theirs hash to it.
    let acks = cell(&net, "ports", &[("port", &format!("{spine}-s0")), ("class", "0")], "lost_down");
    assert_eq!(s.lost_down as f64, 15.0 + acks);
    // After the failover everything takes the other spine: the flow goes on at line rate.
    let other = if spine == "s1" { "s2" } else { "s1" };
    let after = cell(&net, "ports", &[("port", &format!("s0-{other}")), ("class", "1")], "tx_packets");
    // Packets with t_k ≥ 110 µs and started by the end: k = 136 .. (1000 − 1.8) / 0.8.
    assert_eq!(after, (((1000.0 - 1.8) / 0.8) as u64 - 136 + 1) as f64);
}

#[test]
fn bad_fault_targets_and_times_are_one_line_errors() {
    let base = two_paths(LINE_RATE_FLOW);
    let error = |fault: &str| match Scenario::from_toml(&format!("{base}[[faults]]\n{fault}\n")).and_then(|s| Network::new(&s).map(|_| ())) {
        Ok(()) => panic!("{fault} was accepted"),
        Err(e) => e.to_string(),
    };
    let e = error("at = \"1us\"\nlink = \"s0-s9\"\nkind = \"down\"");
    assert!(e.contains("faults[0].link = s0-s9") && e.contains("did you mean `s0-s"), "{e}");
    let e = error("at = \"1us\"\nswitch = \"s7\"\nkind = \"down\"");
    assert!(e.contains("faults[0].switch = s7") && e.contains("switch"), "{e}");
    let e = error("at = \"2ms\"\nlink = \"s0-s1\"\nkind = \"down\"");
    assert!(e.contains("faults[0].at = 2ms") && e.contains("within the run"), "{e}");
    let e = error("at = \"10us\"\nuntil = \"5us\"\nlink = \"s0-s1\"\nkind = \"down\"");
    assert!(e.contains("faults[0].until"), "{e}");
    let e = error("at = \"10us\"\nlink = \"s0-s1\"\nkind = \"drop\"\nprobability = 1.5");
    assert!(e.contains("faults[0].probability = 1.5") && e.contains("[0, 1]"), "{e}");
    let e = error("at = \"10us\"\nlink = \"s0-s1\"\nkind = \"degrade\"");
    assert!(e.contains("faults[0].fraction"), "{e}");
    let e = error("at = \"10us\"\nlink = \"s0-s1\"\nkind = \"dwn\"");
    assert!(e.contains("did you mean `down`"), "{e}");
    let e = error("at = \"10us\"\nlink = \"s3-h1\"\nkind = \"down\"");
    assert!(e.contains("faults") && e.contains("h1") && e.contains("cut off"), "{e}");
}
