//! The scenario reader: every error names the whole path of the bad field, inside tagged
//! sections (`topology`, `cc`, `transport`, `[[workloads]]`) too; defaults that depend on
//! another section are filled in after reading; controllers' parameter errors carry the value.

use rttlab_sim::Scenario;

/// Two hosts on a star, a message-transport connection from host 1 to 0, with `extra` TOML
/// appended at the top level.
fn base(extra: &str) -> String {
    format!(
        r#"
        duration = "1ms"
        {extra}
        [topology]
        kind = "star"
        hosts = 4
        link_rate = "10Gbps"
        link_delay = "1us"
        [[flows]]
        src = 1
        dst = 0
        "#
    )
}

fn error(toml: &str) -> String {
    Scenario::from_toml(toml).expect_err("an invalid scenario").to_string()
}

#[test]
fn errors_inside_tagged_sections_name_the_whole_path() {
    let e = error(&base("").replace("link_rate = \"10Gbps\"", "link_rate = \"fast\""));
    assert!(e.starts_with("topology.link_rate: "), "{e}");
    let e = error(&base("").replace("kind = \"star\"", "kind = \"ring\""));
    assert_eq!(e, "topology.kind = 'ring': one of star, fat_tree, leaf_spine, chain, graph");
    let e = error(&base("[cc]\nalgorithm = \"timely\"\nt_lo = \"10us\""));
    assert!(e.starts_with("cc.t_lo: unknown field `t_lo`"), "{e}");
    let e = error(&base("[cc]\nalgorithm = \"cubic\""));
    assert!(e.starts_with("cc.algorithm = 'cubic': one of none, timely,"), "{e}");
    let e = error(&base("[cc]\nbeta = 0.5"));
    assert!(e.starts_with("cc.algorithm: missing: one of none,"), "{e}");
    let pinger = "[[workloads]]\nkind = \"pinger\"\ninterval = \"10us\"\n[[workloads]]\nkind = \"flow_sizes\"\ncdf = \"websearch\"\nload = \"high\"";
    let e = error(&format!("{}\n{pinger}", base("")));
    assert!(e.starts_with("workloads[1].load: "), "{e}");
    let e = error(&format!("{}\n[[workloads]]\nkind = \"rpc\"\nsize = \"1KB\"\nrate = 1.0\nclass = 1\nextra = 2", base("")));
    assert!(e.starts_with("workloads[0].extra: unknown field `extra`"), "{e}");
}

#[test]
fn top_level_keys_are_checked_by_name() {
    let e = error(&base("durration = \"1ms\""));
    assert!(e.starts_with("durration: unknown key; expected one of name, seed, duration,"), "{e}");
    assert_eq!(error(&base("").replace("duration = \"1ms\"", "")), "duration: missing: this key is required");
    assert_eq!(error("duration = \"1ms\"\n[[flows]]\nsrc = 1\ndst = 0"), "topology: missing: this key is required");
    assert!(error(&base("seed = -1")).starts_with("seed: "));
    assert!(error(&base("flows = 3").replace("[[flows]]\n        src = 1\n        dst = 0", "")).starts_with("flows: "));
    assert_eq!(Scenario::from_json("[1, 2]").unwrap_err().to_string(), "scenario: an array is not a table");
}

/// A Swift section is read over its profile's defaults: the keys given replace those values,
/// the rest are the profile's (reference algorithms.md §3.4).
#[test]
fn swift_keys_override_their_profile() {
    let window = "[transport]\nkind = \"window\"\n[cc]\nalgorithm = \"swift\"\nprofile = \"htsim\"\nai = 2.5";
    let s = Scenario::from_toml(&base(window)).unwrap();
    let r = s.resolved();
    assert_eq!((r["cc"]["ai"].as_f64(), r["cc"]["base_target"].as_str()), (Some(2.5), Some("20us")));
    assert_eq!((r["cc"]["retx_reset_threshold"].as_u64(), r["cc"]["profile"].as_str()), (Some(5), Some("htsim")));
    assert_eq!(r["transport"]["delayed_ack"], false);
    let e = error(&base(&format!("{window}\nbogus = 1")));
    assert!(e.starts_with("cc.bogus: unknown field `bogus`, expected one of `profile`, `ai`"), "{e}");
    let e = error(&base(&format!("{window}\nmax_mdf = \"half\"")));
    assert!(e.starts_with("cc.max_mdf: invalid type"), "{e}");
}

/// The message transport's segment and cap default to 16 KB and 64 KB and are recorded; on
/// the window transport they are unset, and setting one is an error.
#[test]
fn segment_defaults_belong_to_the_message_transport() {
    let r = Scenario::from_toml(&base("")).unwrap().resolved();
    assert_eq!((r["nic"]["segment"].as_str(), r["nic"]["max_outstanding"].as_str()), (Some("16KB"), Some("64KB")));
    let window = "[transport]\nkind = \"window\"\n[cc]\nalgorithm = \"reno\"";
    let r = Scenario::from_toml(&base(window)).unwrap().resolved();
    assert!(r["nic"]["segment"].is_null() && r["nic"]["max_outstanding"].is_null());
    assert_eq!(r["transport"]["delayed_ack"], true);
    let e = error(&base(&format!("{window}\n[nic]\nsegment = \"16KB\"")));
    assert!(e.starts_with("nic.segment = 16KB: a message-transport NIC setting"), "{e}");
    assert_eq!(r["nic"]["arbitration"], serde_json::Value::Null);
    assert_eq!(Scenario::from_toml(&base("")).unwrap().resolved()["nic"]["arbitration"], "qp_round_robin");
    let e = error(&base(&format!("{window}\n[nic]\narbitration = \"segment_fifo\"")));
    assert!(e.starts_with("nic.arbitration = segment_fifo: a message-transport NIC setting"), "{e}");
    // What a result records reads back as the same scenario.
    for extra in ["", window] {
        let s = Scenario::from_toml(&base(extra)).unwrap();
        assert_eq!(Scenario::from_json(&s.resolved().to_string()).unwrap().resolved(), s.resolved());
    }
}

/// A zero start or cap rate would never send (and divides by zero in the pacing gap): every
/// rate controller refuses it, naming the key and the value.
#[test]
fn zero_rates_are_refused_by_every_rate_controller() {
    for algorithm in ["timely", "patched_timely", "fast"] {
        for key in ["initial_rate", "max_rate"] {
            let e = error(&base(&format!("[cc]\nalgorithm = \"{algorithm}\"\n{key} = \"0bps\"")));
            assert_eq!(e, format!("cc.{key} = 0bps: positive, or absent for the NIC line rate"), "{algorithm}");
        }
    }
    assert_eq!(error(&base("[cc]\nalgorithm = \"timely\"\nbeta = 1.5")), "cc.beta = 1.5: a factor in (0, 1]");
    assert_eq!(error(&base("[cc]\nalgorithm = \"timely\"\nmin_rtt = \"0us\"")), "cc.min_rtt = 0ps: must be positive");
}

/// Sizes that would not fit in memory or in 64-bit counters are errors naming the field and the
/// limit, before anything is built.
#[test]
fn what_cannot_fit_is_refused_with_its_limit() {
    let e = error(&(base("") + "[[workloads]]\nkind = \"incast\"\nreceiver = 0\nsenders = \"1-3\"\nsize = \"2TB\""));
    assert_eq!(e, "workloads[0].size = 2TB: positive and at most 1TB");
    let e = error(&(base("") + "[[workloads]]\nkind = \"incast\"\nreceiver = \"0-2\"\nsenders = \"2-3\"\nsize = \"1KB\""));
    assert_eq!(e, "workloads[0].senders = 2: no receiver can be a sender (unless senders_per_incast draws senders per incast)");
    let e = error(&(base("") + "[[workloads]]\nkind = \"incast\"\nreceiver = \"0-2\"\nsenders = \"2-3\"\nsenders_per_incast = 2\nsize = \"1KB\""));
    assert_eq!(e, "workloads[0].senders_per_incast = 2: 1 to 1 (the senders other than any one receiver)");
    let e = error(&base("").replace("src = 1", "src = \"1-3\"").replace("dst = 0", "dst = 0\nconnections = 400000"));
    assert_eq!(e, "flows[0].connections = 400000: at most 1048576 [[flows]] connections in all (sources × connections, summed over groups)");
    let e = error(&base("").replace("kind = \"star\"\n        hosts = 4", "kind = \"leaf_spine\"\nleaves = 20000\nspines = 1\nhosts_per_leaf = 1"));
    assert_eq!(e, "topology = 20000 switches with hosts: at most 16384 switches with hosts");
    let e = error(&base("[measure]\nqueue_trace = true\nqueue_interval = \"1ps\""));
    assert!(e.starts_with("measure.queue_interval = 1ps: a trace over duration (1ms) at this interval has 1000000000 samples; at most 10000000: an interval of at least 100ps"), "{e}");
    let e = error(&base("").replace("dst = 0", "dst = 0\nstart = \"2ms\""));
    assert_eq!(e, "flows[0].start = 2ms: start (+ start_step per later source) + start_jitter must fall before the end of the run (duration = 1ms): the last source starts by 2ms");
    // A start within the run whose later sources' starts are not: the last one's start is named.
    let e = error(&base("").replace("src = 1", "src = \"1-3\"").replace("dst = 0", "dst = 0\nstart_step = \"600us\""));
    assert_eq!(e, "flows[0].start = 0ps: start (+ start_step per later source) + start_jitter must fall before the end of the run (duration = 1ms): the last source starts by 1200us");
    let e = error(&base("").replace("duration = \"1ms\"", "duration = \"1000001s\""));
    assert_eq!(e, "duration = 1000001s: must be positive and at most 1000000s");
}

#[test]
fn misspellings_get_a_suggestion() {
    let e = error(&base("[cc]\nalgorithm = \"timely\"\nt_lo = \"10us\""));
    assert!(e.ends_with("; did you mean `t_low`?"), "{e}");
    let e = error(&base("durration = \"1ms\""));
    assert!(e.starts_with("durration: unknown key; expected one of name, seed, duration") && e.ends_with("did you mean `duration`?"), "{e}");
    let e = error(&base("").replace("kind = \"star\"", "kind = \"fattree\""));
    assert!(e.ends_with("did you mean `fat_tree`?"), "{e}");
    let e = error(&base("").replace("hosts = 4", "hosts = 4\nbogus = 1"));
    assert!(!e.contains("did you mean"), "nothing close: {e}");
}

#[test]
fn topologies_too_large_to_build_are_refused() {
    let e = error(&base("").replace("kind = \"star\"\n        hosts = 4", "kind = \"leaf_spine\"\nleaves = 4\nspines = 4294967295\nhosts_per_leaf = 1"));
    assert_eq!(e, "topology = 4294967299 switches: at most 65536 switches");
    let e = error(&base("").replace("kind = \"star\"\n        hosts = 4", "kind = \"leaf_spine\"\nleaves = 16000\nspines = 300\nhosts_per_leaf = 1"));
    assert_eq!(e, "topology = 4816000 links: at most 4194304 links");
    let e =
        error(&base("").replace("kind = \"star\"\n        hosts = 4", "kind = \"leaf_spine\"\nleaves = 4294967295\nspines = 1\nhosts_per_leaf = 4294967295"));
    assert!(e.starts_with("topology = 18446744065119617025 hosts: at most 1048576 hosts"), "{e}");
}

/// `transport.subflows`: each subflow keeps the path its label hashes to, and each ACK echoes
/// one packet; the errors name the field, the value and what is allowed.
#[test]
fn subflows_need_ecmp_an_ack_per_packet_and_a_built_in_controller() {
    let swift = |transport: &str, extra: &str| base(&format!("[transport]\nkind = \"window\"\n{transport}\n[cc]\nalgorithm = \"swift\"\n{extra}"));
    assert!(Scenario::from_toml(&swift("subflows = 4", "")).is_ok());
    assert_eq!(error(&swift("subflows = 0", "")), "transport.subflows = 0: 1 to 64 subflows a connection");
    assert_eq!(
        error(&swift("subflows = 4", "[routing]\nmode = \"spray\"")),
        "routing.mode = spray: \"ecmp\" with transport.subflows = 4: each subflow keeps the path its label hashes to"
    );
    let dctcp = base("[transport]\nkind = \"window\"\nsubflows = 2\n[cc]\nalgorithm = \"dctcp\"\n[switch.ecn]\nk = \"20KB\"");
    assert_eq!(error(&dctcp), "transport.delayed_ack = true: false with subflows: each ACK then echoes one packet's send time, on its subflow's path");
    assert!(Scenario::from_toml(&dctcp.replace("subflows = 2", "subflows = 2\ndelayed_ack = false")).is_ok());
    assert!(error(&base("[transport]\nkind = \"uet\"\nsubflows = 2\n[cc]\nalgorithm = \"nscc\"")).starts_with("transport.subflows"));
    let python = base("[transport]\nkind = \"window\"\nsubflows = 2\ndelayed_ack = false\n[cc]\nalgorithm = \"python\"\nclass = \"m:C\"");
    assert_eq!(error(&python), "transport.subflows = 2: 1 with a Python controller (one instance a connection)");
}
