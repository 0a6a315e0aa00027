//! Knobs that never silently do nothing: a controller's parameters that leave it unable to act
//! on the scenario's paths, and settings it ignores, are warnings in the run's metadata.

use crate::common::scenario;

fn warnings(toml: &str) -> Vec<String> {
    let out = rttlab_sim::run(&scenario(toml)).unwrap();
    out.meta["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect()
}

/// Four senders into one host on a star at `rate`, with `cc` and `rest` appended.
fn star(rate: &str, transport: &str, cc: &str, rest: &str) -> String {
    format!(
        "duration = \"2ms\"\n[topology]\nkind = \"star\"\nhosts = 5\nlink_rate = \"{rate}\"\nlink_delay = \"1us\"\n[transport]\nkind = \"{transport}\"\n[cc]\n{cc}\n{rest}\n[[flows]]\nsrc = \"1-4\"\ndst = 0\n"
    )
}

#[test]
fn swifts_target_below_the_paths_base_rtt_is_named_with_a_value_that_works() {
    // At 500 Mbps a 1500-byte packet takes 24 µs a hop: two hops of data, the ACK and 4 µs of
    // links make an unloaded RTT above 52 µs, against a target of 25 µs + 1 hop × 1 µs.
    let w = warnings(&star("500Mbps", "window", "algorithm = \"swift\"", ""));
    let advice = w.iter().find(|w| w.starts_with("cc.base_target = 25us")).unwrap_or_else(|| panic!("{w:?}"));
    assert!(advice.contains("not above the path's unloaded RTT"), "{advice}");
    // The value offered clears the RTT: round the RTT less the hop's 1 µs up to 1 µs, add 25 µs.
    let tried: String = advice.rsplit("try cc.base_target = ").next().unwrap().chars().take_while(|c| c.is_ascii_digit()).collect();
    assert!(tried.parse::<u64>().unwrap() >= 52 + 25, "{advice}");
    // At 100 Gbps the same target is well above the path's RTT: no advice.
    assert!(warnings(&star("100Gbps", "window", "algorithm = \"swift\"", "")).iter().all(|w| !w.starts_with("cc.")));
}

#[test]
fn ecn_marking_for_a_controller_that_ignores_marks_is_a_warning_naming_those_that_read_them() {
    let ecn = "[switch]\necn = { k = \"20KB\" }";
    let w = warnings(&star("10Gbps", "message", "algorithm = \"timely\"", ecn));
    let line = w.iter().find(|w| w.starts_with("switch.ecn:")).unwrap_or_else(|| panic!("{w:?}"));
    assert!(line.contains("\"timely\" does not react to marks") && line.contains("dcqcn") && line.contains("dctcp"), "{line}");
    let w = warnings(&star("10Gbps", "window", "algorithm = \"dctcp\"", ecn));
    assert!(w.iter().all(|w| !w.starts_with("switch.ecn:")), "{w:?}");
}

#[test]
fn timelys_t_high_below_the_segments_that_meet_at_a_port_is_named_with_a_value_that_works() {
    // Four senders' 16 KB segments at 500 Mbps: the last waits 3 × 256 µs = 768 µs for
    // the others, above t_high = 500 µs before the base RTT is even added.
    let w = warnings(&star("500Mbps", "message", "algorithm = \"timely\"", ""));
    let advice = w.iter().find(|w| w.starts_with("cc.t_high = 500us")).unwrap_or_else(|| panic!("{w:?}"));
    assert!(advice.contains("4 senders' segments of 16000 B") && advice.contains("768us"), "{advice}");
    // Twice the burst and the base RTT (about 54 µs), rounded up to 100 µs.
    assert!(advice.contains("try cc.t_high = 1700us"), "{advice}");
    // One sender, or 10 Gbps: nothing to say.
    let one =
        "duration = \"2ms\"\n[topology]\nkind = \"star\"\nhosts = 2\nlink_rate = \"500Mbps\"\nlink_delay = \"1us\"\n[cc]\nalgorithm = \"timely\"\n[[flows]]\nsrc = 1\ndst = 0\n";
    assert!(warnings(one).iter().all(|w| !w.starts_with("cc.")));
    assert!(warnings(&star("10Gbps", "message", "algorithm = \"timely\"", "")).iter().all(|w| !w.starts_with("cc.")));
    // Workload flows come and go: twelve incast senders of 100 KB every 2 ms are not twelve
    // backlogged connections whose segments always meet.
    let incast = "duration = \"4ms\"\n[topology]\nkind = \"star\"\nhosts = 13\nlink_rate = \"500Mbps\"\nlink_delay = \"1us\"\n[cc]\nalgorithm = \"timely\"\n[[workloads]]\nkind = \"incast\"\nsenders = \"1-12\"\nreceiver = 0\nsize = \"100KB\"\nrate = 500.0\n";
    assert!(warnings(incast).iter().all(|w| !w.starts_with("cc.t_high")), "{:?}", warnings(incast));
}

#[test]
fn ecn_thresholds_above_what_a_queue_holds_are_named() {
    // A 100 KB buffer and K = 200 KB: no queue ever reaches K.
    let w = warnings(&star("10Gbps", "window", "algorithm = \"dctcp\"", "[switch]\npfc = false\nbuffer = \"100KB\"\necn = { k = \"200KB\" }"));
    let ecn = w.iter().find(|w| w.starts_with("switch.ecn.k = 200KB")).unwrap_or_else(|| panic!("{w:?}"));
    assert!(ecn.contains("at most 100KB") && ecn.contains("try switch.ecn.k = 25KB"), "{ecn}");
    // With alpha = 1 one busy queue may take half the buffer: K = 80 KB of 100 KB is out of reach too.
    let w = warnings(&star("10Gbps", "window", "algorithm = \"dctcp\"", "[switch]\npfc = false\nbuffer = \"100KB\"\nalpha = 1.0\necn = { k = \"80KB\" }"));
    assert!(w.iter().any(|w| w.starts_with("switch.ecn.k = 80KB") && w.contains("at most 50KB")), "{w:?}");
    // K well inside the buffer: nothing.
    let w = warnings(&star("10Gbps", "window", "algorithm = \"dctcp\"", "[switch]\necn = { k = \"80KB\" }"));
    assert!(w.iter().all(|w| !w.starts_with("switch.ecn")), "{w:?}");
}

#[test]
fn a_measurement_that_begins_before_the_connections_settle_is_named() {
    // TIMELY's 40 connections on the §6.1 testbed cut hard at first and ramp up for tens of
    // milliseconds: measured from 10 ms they carry about a third of the link.
    let testbed = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/timely-testbed.toml")).unwrap();
    let short = testbed.replace("duration = \"250ms\"", "duration = \"30ms\"").replace("warmup = \"50ms\"", "warmup = \"10ms\"");
    assert_ne!(short, testbed, "the preset's duration and warm-up lines");
    let w = warnings(&short);
    let line = w.iter().find(|w| w.starts_with("warmup = 10ms: the measurement began before the connections had settled")).unwrap_or_else(|| panic!("{w:?}"));
    assert!(line.contains("try warmup = 40ms"), "{line}");
    // Its own lengths (250 ms after a 50 ms warm-up) are settled: nothing to say.
    assert!(warnings(&testbed).iter().all(|w| !w.starts_with("warmup")));
}

/// A ring all-reduce of 4 MB over the 16 hosts of a k = 4 fat-tree at 100 Gbps under DCQCN
/// (ideal 600 µs), for 20 ms, with `rest` appended.
fn ring(rest: &str) -> String {
    format!(
        "duration = \"20ms\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[switch]\nbuffer = \"32MB\"\npfc = true\n[cc]\nalgorithm = \"dcqcn\"\n[[jobs]]\ncollective = \"allreduce_ring\"\nhosts = \"0-15\"\nsize = \"4MB\"\n{rest}\n"
    )
}

#[test]
fn per_packet_path_choice_under_a_transport_that_takes_reordering_for_loss_is_named() {
    // Go-back-N discards every packet that overtakes another: the ring never finishes.
    let w = warnings(&ring("[routing]\nmode = \"spray\""));
    let line = w.iter().find(|w| w.starts_with("routing.mode = \"spray\"")).unwrap_or_else(|| panic!("{w:?}"));
    assert!(line.contains("nic.recovery = \"go_back_n\"") && line.contains("set nic.recovery = \"selective_repeat\""), "{line}");
    let undone = w.iter().find(|w| w.starts_with("did not finish in the run (20ms)")).unwrap_or_else(|| panic!("{w:?}"));
    assert!(undone.contains("jobs[0] (1 of 1 iterations"), "{undone}");
    // Selective repeat places reordered packets: nothing to say, and the ring finishes.
    let w = warnings(&ring("[routing]\nmode = \"spray\"\n[nic]\nrecovery = \"selective_repeat\""));
    assert!(w.iter().all(|w| !w.starts_with("routing.mode") && !w.starts_with("did not finish")), "{w:?}");
    // The window transport's three duplicate ACKs, and RACK, which detects loss by time.
    let toml = |loss: &str| {
        format!("duration = \"2ms\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nlink_rate = \"100Gbps\"\nlink_delay = \"1us\"\n[routing]\nmode = \"spray\"\n[transport]\nkind = \"window\"\n{loss}\n[cc]\nalgorithm = \"dctcp\"\n[[flows]]\nsrc = 0\ndst = 5\nsize = \"1MB\"\n")
    };
    let w = warnings(&toml(""));
    let line = w.iter().find(|w| w.starts_with("routing.mode = \"spray\"")).unwrap_or_else(|| panic!("{w:?}"));
    assert!(line.contains("transport.loss_detection = \"dupthresh\"") && line.contains("set transport.loss_detection = \"rack\""), "{line}");
    assert!(warnings(&toml("loss_detection = \"rack\"")).iter().all(|w| !w.starts_with("routing.mode")));
    // Ultra Ethernet's sender takes only a NACK or a timeout for a loss: nothing to say.
    let uet = toml("").replace("kind = \"window\"", "kind = \"uet\"").replace("\"dctcp\"", "\"nscc\"");
    assert!(warnings(&uet).iter().all(|w| !w.starts_with("routing.mode")), "{:?}", warnings(&uet));
}

#[test]
fn a_lost_tail_behind_a_timeout_longer_than_the_run_is_named() {
    // Selective repeat, a link down for 300 µs and one losing a packet in a thousand: a lost
    // tail waits for RoCE's 67 ms timeout, which never comes in a 20 ms run.
    let faults = "[nic]\nrecovery = \"selective_repeat\"\n[[faults]]\nat = \"100us\"\nuntil = \"400us\"\nlink = \"s8-s16\"\nkind = \"down\"\n[[faults]]\nat = \"0s\"\nlink = \"s9-s18\"\nkind = \"drop\"\nprobability = 0.001";
    let w = warnings(&ring(faults));
    let undone = w.iter().find(|w| w.starts_with("did not finish in the run (20ms)")).unwrap_or_else(|| panic!("{w:?}"));
    assert!(undone.contains("jobs[0] (1 of 1 iterations") && undone.contains("nic.retransmit_timeout = 67108864ns"), "{undone}");
    assert!(undone.contains("set nic.retransmit_timeout = \"320us\""), "{undone}");
    // IRN's timeout recovers the tail within the run.
    let w = warnings(&ring(&faults.replace("recovery = \"selective_repeat\"", "recovery = \"selective_repeat\"\nretransmit_timeout = \"320us\"")));
    assert!(w.iter().all(|w| !w.starts_with("did not finish")), "{w:?}");
}
