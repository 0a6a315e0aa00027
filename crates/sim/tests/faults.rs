//! Fabric faults (`[[faults]]`): links down, degraded and lossy, switches down; the fabric's
//! failover and the hosts' repair (PRR), each checked against a hand computation.

use crate::common::{cell, run_net, scenario};
use rttlab_sim::{Network, Scenario};

/// h0 to h1 over two equal paths (`common::two_paths`), 1000 B packets on the wire (936 B
/// payload, 64 B headers): one takes 800 ns to serialize.
fn two_paths(rest: &str) -> String {
    crate::common::two_paths("duration = \"1ms\"", "1000B", "1us", rest)
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

#[test]
fn an_outage_lasts_from_the_last_delivery_before_the_fault_to_the_repair_after_it() {
    // h0's NIC cannot send from T = 100 µs to 300 µs (its port is down): packets 123 and 124,
    // on the wire at T (packet k leaves at 0.8k µs and is on the wire 1.8 µs), are lost; the
    // last delivered in order, 122, reached h1 at 0.8·122 + 7.2 = 104.8 µs (four hops of 1.8
    // µs, serialization of 0.8 after the first). At 300 µs packet 125 leaves, reaches h1 at
    // 307.2 and shows the gap: h1's NAK (64 B, four hops of 1.0512 µs) reaches h0 at 311.4048,
    // while packet 139 (started at 311.2) is on the wire; 123 goes again at 312.0 and arrives at
    // 319.2. Outage: 319.2 − 104.8 = 214.4 µs.
    let net = run_net(&two_paths(&format!("{LINE_RATE_FLOW}[[faults]]\nat = \"100us\"\nuntil = \"300us\"\nport = \"h0-s0\"\nkind = \"down\"\n")));
    assert_eq!(cell(&net, "flows", &[("flow", "0")], "drops_down"), 2.0);
    assert!((cell(&net, "flows", &[("flow", "0")], "outage_us") - 214.4).abs() < 1e-6, "{}", cell(&net, "flows", &[("flow", "0")], "outage_us"));
    assert_eq!(net.summary().outage_max_us, Some(cell(&net, "flows", &[("flow", "0")], "outage_us")));
}

/// A 2 MB window flow (DCTCP) whose spine link goes down at 200 µs for the rest of the run,
/// the routes never leaving it out (a failover slower than the run): `prr` or not.
fn stalled_flow(prr: bool) -> String {
    let rest = format!(
        "[transport]\nkind = \"window\"\nprr = {prr}\nmin_rto = \"200us\"\n[cc]\nalgorithm = \"dctcp\"\n[routing]\nfailover_delay = \"1s\"\n[[flows]]\nsrc = 0\ndst = 1\nsize = \"2MB\"\n"
    );
    let base = two_paths(&rest).replace("duration = \"1ms\"", "duration = \"10ms\"");
    let spine = spine_of_flow(&base);
    format!("{base}[[faults]]\nat = \"200us\"\nlink = \"s0-{spine}\"\nkind = \"down\"\n")
}

#[test]
fn prr_moves_a_connection_off_a_black_hole_at_its_first_timeout() {
    // Without PRR the connection's retransmissions keep taking the dead link: it never
    // finishes, and its outage runs from its last delivery to the end.
    let net = run_net(&stalled_flow(false));
    let flow = |net: &Network, col: &str| cell(net, "flows", &[("flow", "0")], col);
    assert!(flow(&net, "finish_us").is_nan() && flow(&net, "repaths") == 0.0);
    assert!(flow(&net, "timeouts") >= 3.0 && flow(&net, "outage_us") > 9_700.0, "{} µs", flow(&net, "outage_us"));
    let warned = net.warnings(&net.summary()).join("\n");
    assert!(
        warned.contains("1 connections lost packets to faults and were stalled at the end, nothing delivered for a retransmission timeout or longer (h0→h1)"),
        "{warned}"
    );
    // With PRR each timeout draws the sender a new label, and each copy of data the receiver
    // already had draws its ACKs one (the link's loss cut both directions); each draw takes
    // the live spine with probability 1/2. This seed's connection is through after two
    // timeouts, the second backed off to twice the first: its outage is under 200 + 400 µs
    // and a round trip.
    let net = run_net(&stalled_flow(true));
    assert!(flow(&net, "finish_us") > 0.0 && flow(&net, "timeouts") == 2.0 && flow(&net, "repaths") > flow(&net, "timeouts"));
    let outage = flow(&net, "outage_us");
    assert!((400.0..650.0).contains(&outage), "outage {outage} µs");
    assert!(flow(&net, "retransmitted_bytes") > 0.0 && flow(&net, "drops_down") > 0.0);
}

#[test]
fn a_degraded_link_serializes_at_its_fraction_of_the_rate() {
    // 100 packets at line rate into the flow's uplink, degraded to 25 % (2.5 Gbps, 3.2 µs a
    // packet) from the start: packet k reaches s0 at 1.8 + 0.8k µs, but leaves the uplink at
    // 1.8 + 3.2(k + 1) (a queue builds), then crosses three links of 1 + 0.8 µs and one of 1
    // µs at the degraded rate's end: the last, k = 99, reaches h1 at 6.4 + 320 = 326.4 µs.
    let flow = LINE_RATE_FLOW.replace("dst = 1\n", "dst = 1\nsize = \"93600B\"\n");
    let base = two_paths(&flow);
    let spine = spine_of_flow(&base);
    let net = run_net(&format!("{base}[[faults]]\nat = \"0s\"\nlink = \"s0-{spine}\"\nkind = \"degrade\"\nfraction = 0.25\n"));
    assert!((cell(&net, "flows", &[("flow", "0")], "finish_us") - 326.4).abs() < 1e-6, "{}", cell(&net, "flows", &[("flow", "0")], "finish_us"));
    assert_eq!(cell(&net, "ports", &[("port", &format!("s0-{spine}")), ("class", "1")], "rate_gbps"), 2.5);
    assert_eq!(net.summary().drops + net.summary().lost_down + net.summary().lost_silent, 0);
}

#[test]
fn silent_losses_draw_each_packet_with_the_link_probability() {
    let base = two_paths(LINE_RATE_FLOW);
    let spine = spine_of_flow(&base);
    let port = format!("s0-{spine}");
    for (p, lo, hi) in [(1.0, 1.0, 1.0), (0.5, 0.45, 0.55), (0.0, 0.0, 0.0)] {
        let net = run_net(&format!("{base}[[faults]]\nat = \"0s\"\nport = \"{port}\"\nkind = \"drop\"\nprobability = {p}\n"));
        let sent = cell(&net, "ports", &[("port", &port), ("class", "1")], "tx_packets");
        let lost = cell(&net, "ports", &[("port", &port), ("class", "1")], "lost_silent");
        // About 1 250 packets cross: p = 0.5 loses a share within 0.05 of a half (5 σ).
        assert!(sent > 1000.0 && (lo..=hi).contains(&(lost / sent)), "p = {p}: {lost} of {sent}");
        // Every lost packet is the flow's data, counted by its flow when it would have arrived:
        // all but those still on the wire at the end.
        let counted = cell(&net, "flows", &[("flow", "0")], "drops_silent");
        assert!(counted <= lost && lost - counted <= 2.0, "{counted} of {lost}");
        assert_eq!(net.summary().drops, 0, "nor are they buffer drops");
    }
}

#[test]
fn a_switch_down_loses_what_it_holds_and_its_routes_go_around_it() {
    let base = two_paths(&format!("{LINE_RATE_FLOW}[routing]\nfailover_delay = \"10us\"\n"));
    let spine = spine_of_flow(&base);
    let other = if spine == "s1" { "s2" } else { "s1" };
    let net = run_net(&format!("{base}[[faults]]\nat = \"100us\"\nswitch = \"{spine}\"\nkind = \"down\"\n"));
    // The 15 data packets a link down to it loses, and the two on its link onward at T:
    // packet k leaves the spine at t_k + 1.8 and is on that wire until t_k + 3.6, so t_k in
    // [96.4, 98.2): k = 119, 120.
    assert_eq!(cell(&net, "flows", &[("flow", "0")], "drops_down"), 17.0);
    assert!(cell(&net, "ports", &[("port", &format!("s0-{other}")), ("class", "1")], "tx_packets") > 1000.0);
    assert_eq!(cell(&net, "ports", &[("port", &format!("{spine}-s3")), ("class", "1")], "tx_packets"), 121.0, "packets 0 to 120 crossed it");
}

/// A fabric, transport and workload drawn from `seed`, with one to three faults of any kind on
/// its switch links and switches, at random times, most of them ending; flows that end the run
/// when they are done, under a generous cap.
fn drawn(seed: u64) -> String {
    use rand::{Rng, SeedableRng};
    let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let topology = if r.random_bool(0.5) {
        "kind = \"fat_tree\"\nk = 4\nlink_rate = \"25Gbps\"\nlink_delay = \"1us\"".to_string()
    } else {
        format!(
            "kind = \"leaf_spine\"\nleaves = {}\nspines = {}\nhosts_per_leaf = 3\nlink_rate = \"25Gbps\"\nlink_delay = \"1us\"",
            r.random_range(2..=4),
            r.random_range(2..=3)
        )
    };
    let (transport, cc) = [
        ("kind = \"window\"\nmin_rto = \"200us\"", "algorithm = \"dctcp\""),
        ("kind = \"window\"\nmin_rto = \"200us\"\nloss_detection = \"rack\"", "algorithm = \"swift\""),
        ("kind = \"message\"", "algorithm = \"dcqcn\""),
        ("kind = \"message\"", "algorithm = \"timely\""),
    ][r.random_range(0..4)];
    let mode = ["ecmp", "ecmp", "spray", "adaptive", "flowlet"][r.random_range(0..5)];
    let prr = r.random_bool(0.5);
    let mut s = format!(
        "seed = {}\nduration = \"200ms\"\nuntil = \"flows_done\"\n[topology]\n{topology}\n[switch]\nbuffer = \"{}KB\"\npfc = {}\n[switch.ecn]\nk = \"30KB\"\n[transport]\n{transport}\nprr = {prr}\n[cc]\n{cc}\n[routing]\nmode = \"{mode}\"\nfailover_delay = \"{}us\"\nweights = \"{}\"\n[measure]\nfct_until = \"300us\"\n[[flows]]\nsrc = \"0-2\"\ndst = 5\nsize = \"{}KB\"\n[[workloads]]\nkind = \"flow_sizes\"\ncdf = \"websearch\"\nload = 0.3\n",
        r.random_range(1..1000),
        r.random_range(300..=3000),
        transport.contains("message") && r.random_bool(0.5),
        r.random_range(10..=500),
        ["equal", "capacity"][r.random_range(0..2)],
        r.random_range(20..=300),
    );
    let net = Network::new(&scenario(&s)).expect("the drawn fabric");
    let names: Vec<String> = (0..net.ports().len() as u32)
        .map(rttlab_sim::core::ids::PortId)
        .filter(|&p| net.ports()[p.idx()].node >= net.graph().hosts && net.ports()[net.ports()[p.idx()].peer.idx()].node >= net.graph().hosts)
        .map(|p| format!("{}-{}", net.graph().node_name(net.ports()[p.idx()].node), net.graph().node_name(net.ports()[net.ports()[p.idx()].peer.idx()].node)))
        .collect();
    if transport.contains("message") && mode != "ecmp" {
        // Go-back-N collapses under reordering whatever the faults (the multipath tests).
        s += "[nic]\nrecovery = \"selective_repeat\"\n";
    }
    for _ in 0..r.random_range(1..=3) {
        let at = r.random_range(0..400);
        let until = if r.random_bool(0.7) { format!("until = \"{}us\"\n", at + r.random_range(1..=500)) } else { String::new() };
        let link = &names[r.random_range(0..names.len())];
        let target = match r.random_range(0..10) {
            0 => format!("switch = \"{}\"", link.split('-').next().unwrap_or("s0")),
            1 | 2 => format!("port = \"{link}\""),
            _ => format!("link = \"{link}\""),
        };
        let kind = if target.starts_with("switch") {
            "kind = \"down\"".to_string()
        } else {
            match r.random_range(0..3) {
                0 => "kind = \"down\"".to_string(),
                1 => format!("kind = \"degrade\"\nfraction = {:.2}", r.random_range(0.1..1.0)),
                _ => format!("kind = \"drop\"\nprobability = {:.4}", r.random_range(0.0..0.02)),
            }
        };
        s += &format!("[[faults]]\nat = \"{at}us\"\n{until}{target}\n{kind}\n");
    }
    s
}

/// Property: on drawn fabrics with drawn faults, every packet is delivered, queued, on a link
/// or dropped with a cause at every instant looked at (`Network::check_invariants`, every
/// 65 536 events and at the end), and a run either finishes its flows or was refused for
/// faults that cut hosts off for good. `RTTLAB_FAULT_CASES` sets the count (`make fuzz` runs
/// more).
#[test]
fn random_faults_lose_nothing_unaccounted_and_runs_finish_their_flows() {
    let cases: u64 = std::env::var("RTTLAB_FAULT_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12);
    let first: u64 = std::env::var("RTTLAB_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    for seed in first..first + cases {
        let text = drawn(seed);
        let s = scenario(&text);
        let mut net = match Network::new(&s) {
            Ok(net) => net,
            Err(e) => {
                assert!(e.to_string().contains("cut off") && s.faults.iter().any(|f| f.until.is_none()), "case {seed}: {e}\n{text}");
                continue;
            }
        };
        while net.run_observed(|_| std::ops::ControlFlow::Break(())).is_err() {
            net.check_invariants().unwrap_or_else(|e| panic!("case {seed}: {e}\n{text}"));
        }
        net.check_invariants().unwrap_or_else(|e| panic!("case {seed}: {e}\n{text}"));
        // Ended by its flows (`until = "flows_done"`), well before the cap.
        assert!(net.now() < s.duration, "case {seed}: {} of {} flows finished by the cap\n{text}", net.summary().flows_finished, net.summary().flows);
    }
}

#[test]
fn a_name_with_a_star_names_every_link_it_matches() {
    // s0's two uplinks lose everything sent on them; its link to h0 and the spines' links do not.
    let net = run_net(&two_paths(&format!("{LINE_RATE_FLOW}[[faults]]\nat = \"0s\"\nport = \"s0-s*\"\nkind = \"drop\"\nprobability = 1.0\n")));
    let lost = |port: &str, class: &str| cell(&net, "ports", &[("port", port), ("class", class)], "lost_silent");
    let sent = |port: &str| cell(&net, "ports", &[("port", port), ("class", "1")], "tx_packets");
    assert_eq!(lost("s0-s1", "1") + lost("s0-s2", "1"), sent("s0-s1") + sent("s0-s2"));
    assert!(sent("s0-s1") + sent("s0-s2") > 0.0);
    assert_eq!(lost("s0-h0", "0") + lost("s1-s3", "1") + lost("s2-s3", "1"), 0.0);
    assert_eq!(cell(&net, "flows", &[("flow", "0")], "bytes_delivered"), 0.0);
}

/// PRR and PLB together (Linux `tcp_plb_update_state_upon_rto`), on `stalled_flow` with the
/// last link at 5 Gbps and a 20 KB marking step, so that every round is congested and PLB
/// (`rounds = 1`) repaths at each: after the timeout whose repath took the connection off the
/// black hole, PLB waits out its pause, and the connection finishes (this seed: one timeout, at
/// 3.6 ms). Without the pause each of PLB's repaths sends it back to the dead link with
/// probability 1/2: six timeouts, and it is not through at the end of the 10 ms run.
#[test]
fn plb_pauses_after_a_timeout_so_as_not_to_undo_prrs_repath() {
    let run = |suspend: &str| {
        let plb = format!("algorithm = \"dctcp\"\nplb = {{ rounds = 1, threshold = 0.1, suspend_after_rto = \"{suspend}\" }}");
        let slow_last_link = "{ a = \"s3\", b = \"h1\", rate = \"5Gbps\" }";
        let toml = stalled_flow(true).replace("algorithm = \"dctcp\"", &plb).replace("{ a = \"s3\", b = \"h1\" }", slow_last_link);
        run_net(&(toml + "[switch.ecn]\nk = \"20KB\"\n"))
    };
    let flow = |net: &Network, col: &str| cell(net, "flows", &[("flow", "0")], col);
    let paused = run("60s");
    assert_eq!(flow(&paused, "timeouts"), 1.0);
    assert!((3_000.0..4_000.0).contains(&flow(&paused, "finish_us")), "{} µs", flow(&paused, "finish_us"));
    let unpaused = run("0s");
    assert!(flow(&unpaused, "timeouts") >= 4.0 && flow(&unpaused, "finish_us").is_nan(), "{} timeouts", flow(&unpaused, "timeouts"));
}
