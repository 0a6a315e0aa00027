//! Path choice: the routing modes of `[routing]`, PLB (`cc.plb`), REPS, and the transports'
//! reordering counters and time-based loss detection.

use crate::common::{cell, run_net, scenario};
use rttlab_sim::{Network, Scenario};

/// h0 to h1 over two paths (`common::two_paths`), the second 10 µs longer; 1500 B packets of
/// 1436 B payload (64 B headers).
fn two_paths(routing: &str, transport: &str, size_packets: u32) -> String {
    let rest = format!(
        "[transport]\nkind = \"window\"\ndelayed_ack = false\ntsq_limit = \"1MB\"\n{transport}\n[cc]\nalgorithm = \"reno\"\ninit_cwnd = 200\n[routing]\n{routing}\n[[flows]]\nsrc = 0\ndst = 1\nsize = \"{}B\"\n",
        size_packets * 1436
    );
    crate::common::two_paths("duration = \"5ms\"\nuntil = \"flows_done\"", "1500B", "11us", &rest)
}

/// The graph's two paths are not equally long, so ECMP has no choice there: the longer one is
/// not a shortest path. Its links are equal-cost when their delays are the routing's hop count,
/// as here: routes count hops, delays do not enter them.
#[test]
fn round_robin_spraying_reorders_every_odd_packet_but_the_last() {
    // 100 packets leave back to back, 1.2 µs apart; at s0 the even ones take the short path
    // and the odd ones the path 10 µs longer, so each odd packet k arrives after even packet
    // k + 1 — every odd one but 99, which no even packet follows: 49 packets.
    let net = run_net(&two_paths("mode = \"spray\"\nspray = \"round_robin\"", "dupthresh = 1000", 100));
    let s = net.summary();
    assert_eq!(s.reordered, 49);
    assert_eq!((s.retransmits, s.spurious_retransmits), (0, 0));
    assert_eq!(cell(&net, "flows", &[("flow", "0")], "reordered"), 49.0);
    // Per-flow ECMP keeps the flow on one path: nothing reordered.
    let net = run_net(&two_paths("mode = \"ecmp\"", "dupthresh = 1000", 100));
    assert_eq!(net.summary().reordered, 0);
}

/// Three duplicate ACKs take 10 µs of reordering for loss: spurious retransmissions of the odd
/// packets; RACK waits a quarter of the least RTT past the delivered packet's RTT, which covers
/// 10 µs here (the RTT is about 40 µs), and retransmits nothing.
#[test]
fn rack_rides_through_reordering_that_dupthresh_takes_for_loss() {
    let spray = "mode = \"spray\"\nspray = \"round_robin\"";
    let dup = run_net(&two_paths(spray, "", 100)).summary();
    // Nothing is lost on the way: every retransmission is spurious (some still in flight at
    // the end).
    assert!(dup.spurious_retransmits > 0 && dup.retransmits > 0 && dup.drops == 0, "{dup:?}");
    let rack = run_net(&two_paths(spray, "loss_detection = \"rack\"", 100)).summary();
    assert_eq!((rack.retransmits, rack.spurious_retransmits, rack.reordered), (0, 0, 49));
}

/// `k = 4` fat-tree, every host sending to the host half the fabric away under DCTCP.
fn permutation(routing: &str, cc: &str) -> String {
    format!(
        r#"
duration = "3ms"
warmup = "1ms"
[topology]
kind = "fat_tree"
k = 4
link_rate = "10Gbps"
link_delay = "1us"
[switch]
pfc = false
buffer = "4MB"
[switch.ecn]
kmin = "60KB"
kmax = "60KB"
pmax = 1.0
[nic]
mtu = "1500B"
[transport]
kind = "window"
loss_detection = "rack"
[cc]
algorithm = "dctcp"
{cc}
[routing]
{routing}
[[flows]]
src = "0-15"
dst = ["8-15", "0-7"]
"#
    )
}

/// ECMP's hash collisions hold a permutation well below the fabric's bisection (160 Gbps
/// here); per-packet adaptive routing reaches it; PLB moves collided connections apart (DCTCP
/// marks some rounds and not others at K = 60 KB: a repath after one congested round).
#[test]
fn path_choice_lifts_a_permutation_towards_the_bisection() {
    let gbps = |routing: &str, cc: &str| run_net(&permutation(routing, cc)).summary().throughput_gbps;
    let ecmp = gbps("mode = \"ecmp\"", "");
    let adaptive = gbps("mode = \"adaptive\"", "");
    let spray = gbps("mode = \"spray\"", "");
    assert!(ecmp < 0.8 * 160.0, "ECMP {ecmp}");
    assert!(adaptive > 0.95 * 160.0, "adaptive {adaptive}");
    assert!(spray > ecmp, "spraying {spray}, ECMP {ecmp}");
    let plb = run_net(&permutation("mode = \"ecmp\"", "plb = { rounds = 1, threshold = 0.1 }"));
    let s = plb.summary();
    assert!(s.repaths > 0 && s.throughput_gbps > ecmp, "PLB {} Gbps, {} repaths; ECMP {ecmp}", s.throughput_gbps, s.repaths);
}

/// REPS: a connection's packets go out on many entropy values, so over many paths, and its
/// packets come back unmarked on an idle fabric, so the values are reused.
#[test]
fn reps_spreads_one_connection_over_the_spines() {
    let toml = permutation("mode = \"spray\"\nspray = \"reps\"", "").replace("src = \"0-15\"\ndst = [\"8-15\", \"0-7\"]", "src = 0\ndst = 15");
    let net = run_net(&toml);
    // Host 0's edge switch (s0) has two uplinks; both carry the connection's data (class 1),
    // about evenly.
    let up = ["s0-s8", "s0-s9"].map(|p| cell(&net, "ports", &[("port", p), ("class", "1")], "tx_packets"));
    assert!(up.iter().all(|&n| n > 0.4 * (up[0] + up[1])), "{up:?}");
}

/// The sender's walks (`spray = "oblivious"`, `"bitmap"`): each connection spreads over the
/// paths its 64 entropy values hash to, so that the permutation gets well past ECMP's
/// collisions (here 127 and 125 Gbps against 116) and within a tenth of a switch's own
/// spraying (136); one connection's packets leave its edge switch on both uplinks, split as
/// its 64 values hash (here about a third and two thirds; REPS's fresh draws split evenly).
#[test]
fn the_sender_walks_spread_a_permutation_and_one_connection() {
    let gbps = |routing: &str| run_net(&permutation(routing, "")).summary().throughput_gbps;
    let ecmp = gbps("mode = \"ecmp\"");
    let random = gbps("mode = \"spray\"");
    for spray in ["oblivious", "bitmap"] {
        let routing = format!("mode = \"spray\"\nspray = \"{spray}\"");
        let walk = gbps(&routing);
        assert!(walk > 1.05 * ecmp && walk > 0.9 * random, "{spray} {walk}, ECMP {ecmp}, switch spraying {random}");
        let one = permutation(&routing, "").replace("src = \"0-15\"\ndst = [\"8-15\", \"0-7\"]", "src = 0\ndst = 15");
        let net = run_net(&one);
        let up = ["s0-s8", "s0-s9"].map(|p| cell(&net, "ports", &[("port", p), ("class", "1")], "tx_packets"));
        assert!(up.iter().all(|&n| n > 0.25 * (up[0] + up[1])), "{spray}: {up:?}");
    }
}

#[test]
fn bad_path_options_are_one_line_errors() {
    let e = |toml: &str| Scenario::from_toml(toml).unwrap_err().to_string();
    let msg = e(&permutation("mode = \"sprey\"", ""));
    assert!(msg.contains("routing.mode") && msg.contains("spray"), "{msg}");
    let line_rate = permutation("", "").replace("algorithm = \"dctcp\"", "algorithm = \"reno\"\nplb = { rounds = 3 }");
    let msg = e(&line_rate);
    assert!(msg.starts_with("cc.plb = ") && msg.contains("\"reno\" gives none"), "{msg}");
    let msg = e(&permutation("", "feedback = \"median\""));
    assert!(msg.starts_with("cc.feedback = median") && msg.contains("dctcp"), "{msg}");
    let msg = e(&permutation("", "plb = { rounds = 0 }"));
    assert!(msg.starts_with("cc.plb.rounds = 0"), "{msg}");
    let msg = e(&permutation("flowlet_gap = \"0us\"", ""));
    assert!(msg.starts_with("routing.flowlet_gap = 0"), "{msg}");
}

/// A mode on a fabric without equal-cost paths changes nothing, and says so.
#[test]
fn a_mode_without_choices_warns() {
    let toml = crate::common::window_pair("")
        .replace("[transport]", "[cc]\nalgorithm = \"reno\"\n[routing]\nmode = \"spray\"\n[[flows]]\nsrc = 0\ndst = 1\n[transport]");
    let s = scenario(&toml);
    let out = rttlab_sim::run(&s).unwrap();
    let w: Vec<&str> = out.meta["warnings"].as_array().unwrap().iter().filter_map(|w| w.as_str()).collect();
    assert!(w.iter().any(|w| w.starts_with("routing.mode = \"spray\": the topology has no equal-cost paths")), "{w:?}");
}

/// Swift with the median of its last samples runs, and the result records the choice.
#[test]
fn median_feedback_is_recorded() {
    let toml = permutation("mode = \"spray\"", "").replace("algorithm = \"dctcp\"", "algorithm = \"swift\"\nfeedback = \"median\"");
    let s = scenario(&toml);
    let r = s.resolved();
    assert_eq!((r["cc"]["feedback"].as_str(), r["cc"]["feedback_samples"].as_u64()), (Some("median"), Some(5)));
    assert_eq!(r["routing"]["mode"], "spray");
    let mut net = rttlab_sim::Network::new(&s).unwrap();
    net.run();
    assert!(net.summary().throughput_gbps > 100.0);
}

/// The two-path fabric under the message transport at line rate, in 16 KB segments. Nothing
/// is lost, so every retransmission is spurious. Go-back-N discards what arrives beyond each
/// gap the longer path opens and goes back to it; its resent packets alternate paths too, so
/// each round trip gains a packet or two and the 100 packets take milliseconds. Selective
/// repeat places them and resends a packet once three beyond it are reported, which the longer
/// path's odd packets, about eight behind, often are. (The NAKs are sprayed too and some come
/// late; each NAK's bitmap of the placed PSNs before its own covers them.)
#[test]
fn selective_repeat_resends_less_than_go_back_n_under_reordering() {
    let message = |recovery: &str| {
        two_paths("mode = \"spray\"\nspray = \"round_robin\"", "", 100)
            .replace("kind = \"window\"\ndelayed_ack = false\ntsq_limit = \"1MB\"", "kind = \"message\"")
            .replace("algorithm = \"reno\"\ninit_cwnd = 200", "algorithm = \"none\"")
            .replace("[nic]\n", &format!("[nic]\nrecovery = \"{recovery}\"\n"))
    };
    let sr = run_net(&message("selective_repeat")).summary();
    let gbn = run_net(&message("go_back_n")).summary();
    assert_eq!((sr.drops, sr.timeouts, sr.bytes_delivered, sr.flows_finished), (0, 0, 143_600, 1), "{sr:?}");
    assert!(sr.retransmits > 0 && sr.spurious_retransmits > 0, "{sr:?}");
    assert_eq!((gbn.drops, gbn.flows_finished), (0, 0), "{gbn:?}");
    assert!(gbn.retransmits > 5 * sr.retransmits, "go-back-N {} retransmissions, selective repeat {}", gbn.retransmits, sr.retransmits);
}

/// The permutation under DCQCN with PFC: spraying reorders, go-back-N collapses, selective
/// repeat keeps most of ECMP's throughput.
#[test]
fn go_back_n_collapses_under_spraying_and_selective_repeat_does_not() {
    let gbps = |recovery: &str, mode: &str| {
        let toml = permutation(&format!("mode = \"{mode}\""), "")
            .replace("kind = \"window\"\nloss_detection = \"rack\"", "kind = \"message\"")
            .replace("algorithm = \"dctcp\"", "algorithm = \"dcqcn\"")
            .replace("pfc = false", "pfc = true")
            .replace("[nic]\n", &format!("[nic]\nrecovery = \"{recovery}\"\n"));
        run_net(&toml).summary().throughput_gbps
    };
    let (gbn, sr, ecmp) = (gbps("go_back_n", "spray"), gbps("selective_repeat", "spray"), gbps("go_back_n", "ecmp"));
    assert!(gbn < 0.3 * ecmp && sr > 0.8 * ecmp, "go-back-N {gbn}, selective repeat {sr}, ECMP {ecmp}");
}

/// Flowlets on the two-path fabric, one connection whose application writes a 1436 B packet
/// every 20 µs (574 Mbps): with `flowlet_gap` above that gap the flowlet never ends and one
/// spine carries everything; below it every packet starts a flowlet, and both spines carry
/// some (the draw is the switch's own).
#[test]
fn a_flowlet_ends_at_a_gap_longer_than_flowlet_gap() {
    let spines = |gap: &str| {
        let toml = two_paths(&format!("mode = \"flowlet\"\nflowlet_gap = \"{gap}\""), "", 100)
            .replace("until = \"flows_done\"", "")
            .replace("size = \"143600B\"", "size = \"143600B\"\nrate = \"574.4Mbps\"");
        let net = run_net(&toml);
        ["s0-s1", "s0-s2"].map(|p| cell(&net, "ports", &[("port", p), ("class", "1")], "tx_packets"))
    };
    let long = spines("50us");
    assert!(long.contains(&0.0) && long.iter().sum::<f64>() >= 100.0, "{long:?}");
    let short = spines("10us");
    assert!(short.iter().all(|&n| n > 20.0), "{short:?}");
}

/// PLB on the message transport: DCQCN's congestion notifications count a round congested,
/// and its connections repath, where without PLB they keep their path.
#[test]
fn plb_repaths_an_rdma_connection_on_its_cnps() {
    let toml = |plb: &str| {
        permutation("mode = \"ecmp\"", plb)
            .replace("kind = \"window\"\nloss_detection = \"rack\"", "kind = \"message\"")
            .replace("algorithm = \"dctcp\"", "algorithm = \"dcqcn\"")
            .replace("pfc = false", "pfc = true")
    };
    assert_eq!(run_net(&toml("")).summary().repaths, 0);
    let s = run_net(&toml("plb = { rounds = 1, threshold = 0.1 }")).summary();
    assert!(s.repaths > 0, "{s:?}");
}

/// RACK's tail-loss probe (RFC 8985 §7): the last of 100 packets is lost, so no later packet
/// shows the gap. RACK probes two smoothed RTTs after the last ACK (the RTTs include the
/// 100-packet burst's wait in the NIC, up to 120 µs): the last packet again, one retransmission,
/// no timeout, done under 500 µs. Three duplicate ACKs never come either: dupthresh waits for
/// the 1 ms retransmission timeout.
#[test]
fn a_lost_tail_is_probed_not_timed_out() {
    let finish = |transport: &str| {
        let mut net = Network::new(&scenario(&two_paths("mode = \"ecmp\"", transport, 100))).expect("network");
        net.lose_once(0, 99);
        net.run();
        net.check_invariants().unwrap_or_else(|e| panic!("{e}"));
        let f = net.flow(0);
        (f.stats.finish.expect("finished").as_us(), f.stats.timeouts, f.stats.retransmits)
    };
    let (rack, rack_timeouts, rack_retransmits) = finish("loss_detection = \"rack\"");
    assert!(rack < 500.0 && rack_timeouts == 0 && rack_retransmits == 1, "RACK-TLP: {rack} µs, {rack_timeouts} timeouts, {rack_retransmits} retransmissions");
    let (dup, dup_timeouts, _) = finish("dupthresh = 3");
    assert!(dup > 1000.0 && dup_timeouts == 1, "dupthresh: {dup} µs, {dup_timeouts} timeouts");
}

/// A retransmission lost again is found by time, as the first loss was: once a packet sent
/// after it is delivered and a reordering window has passed, with no timeout. (Here the
/// scoreboard's order is not the send order, which RACK's loss scan goes by.) Three duplicate
/// ACKs do not find it: dupthresh waits for the retransmission timeout.
#[test]
fn a_lost_retransmission_is_found_by_time() {
    let finish = |transport: &str| {
        let mut net = Network::new(&scenario(&two_paths("mode = \"ecmp\"", transport, 1000))).expect("network");
        net.lose_once(0, 10);
        net.lose_once(0, 10);
        net.run();
        net.check_invariants().unwrap_or_else(|e| panic!("{e}"));
        let f = net.flow(0);
        (f.stats.timeouts, f.stats.retransmits)
    };
    assert_eq!(finish("loss_detection = \"rack\""), (0, 2));
    assert_eq!(finish("dupthresh = 3").0, 1);
}

/// h0 to h1 at 40 Gbps through two leaves and four 10 Gbps spines; a backlogged Swift
/// connection of `subflows` subflows under per-flow ECMP.
fn four_spines(subflows: u8) -> String {
    let spines: String = (0..4).map(|i| format!("{{ a = \"L0\", b = \"S{i}\" }}, {{ a = \"S{i}\", b = \"L1\" }}, ")).collect();
    format!(
        r#"
duration = "3ms"
warmup = "1ms"
[topology]
kind = "graph"
hosts = ["h0", "h1"]
switches = ["L0", "L1", "S0", "S1", "S2", "S3"]
link_rate = "10Gbps"
link_delay = "1us"
links = [ {{ a = "h0", b = "L0", rate = "40Gbps" }}, {{ a = "L1", b = "h1", rate = "40Gbps" }}, {spines} ]
[switch]
pfc = false
buffer = "16MB"
[nic]
mtu = "1064B"
[transport]
kind = "window"
delayed_ack = false
loss_detection = "rack"
subflows = {subflows}
[cc]
algorithm = "swift"
[[flows]]
src = 0
dst = 1
"#
    )
}

/// Per-path state (`transport.subflows`): each subflow's packets keep to the spine its label
/// hashes to, and each subflow's Swift fills its own 10 Gbps path, so one connection carries
/// what its distinct paths can (the 40 Gbps host link the limit at four), where on one path it
/// carries one spine's 10 Gbps.
#[test]
fn subflows_carry_one_connection_over_as_many_paths_as_they_hash_to() {
    for subflows in [1, 4, 8] {
        let net = run_net(&four_spines(subflows));
        let used = (0..4).filter(|i| cell(&net, "ports", &[("port", &format!("L0-S{i}")), ("class", "1")], "tx_packets") > 0.0).count();
        let capacity = (10.0 * used as f64).min(40.0) * 1000.0 / 1064.0;
        let goodput = net.summary().goodput_gbps;
        assert!(goodput > 0.95 * capacity && goodput <= capacity * 1.001, "{subflows} subflows on {used} spines: {goodput:.2} Gbps of {capacity:.2}");
        if subflows == 1 {
            assert_eq!(used, 1);
        } else {
            assert!(used >= 2, "{subflows} subflows on {used} spines");
        }
    }
}
