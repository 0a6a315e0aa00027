//! DCQCN in the network (reference §5): convergence of two flows to C/2, the fluid model's
//! fixed point on one bottleneck, and the dynamic PFC threshold its fabrics run with.

use crate::common::{cell, run_net};
use rttlab_sim::Network;

/// `n` long flows into host 0 of a 40 Gbps star (the DCQCN paper's link speed), started 10 µs
/// apart, DCQCN with `profile` and its default marking; 60 ms, the first 20 ms warm-up.
fn incast(n: u32, profile: &str) -> Network {
    run_net(&format!(
        r#"
        duration = "60ms"
        warmup = "20ms"
        [topology]
        kind = "star"
        hosts = {hosts}
        link_rate = "40Gbps"
        link_delay = "1us"
        [switch]
        buffer = "32MB"
        [nic]
        mtu = "1064B"
        [cc]
        algorithm = "dcqcn"
        profile = "{profile}"
        [measure]
        queue_ports = ["s0-h0"]
        [[flows]]
        src = "1-{n}"
        dst = 0
        start_step = "10us"
        "#,
        hosts = n + 1
    ))
}

#[test]
fn two_flows_converge_to_half_the_link_each() {
    for profile in ["paper", "mellanox"] {
        let net = incast(2, profile);
        let rates: Vec<f64> = (0..2).map(|f| cell(&net, "flows", &[("flow", &f.to_string())], "goodput_gbps")).collect();
        let total: f64 = rates.iter().sum();
        assert!(total > 0.93 * 40.0 * 1000.0 / 1064.0, "{profile}: {total} Gbps of payload");
        for r in &rates {
            assert!((r / (total / 2.0) - 1.0).abs() < 0.15, "{profile}: {rates:?} against C/2 each");
        }
    }
}

#[test]
fn the_queue_sits_at_the_fluid_models_fixed_point() {
    // Reference §5.2 (ECNvsDelay's DCQCN analysis), in packets: p* ≈ ∛(R_AI·N²/(τ′·C²)·(1/B +
    // N/(T·C))²), q* = (p*/Pmax)(Kmax − Kmin) + Kmin, with the paper's R_AI 40 Mbps, τ′ = T =
    // 55 µs, B = 10 MB, Kmin 5 KB, Kmax 200 KB, Pmax 1 %, at 40 Gbps in 1000 B packets:
    // N = 2 gives 23.0 KB, N = 10 gives 158 KB.
    let pkt = 1000.0 * 8.0;
    let (c, r_ai, tau, b) = (40e9 / pkt, 40e6 / pkt, 55e-6, 10e6 / 1000.0);
    for n in [2.0, 10.0f64] {
        let p = (r_ai * n * n / (tau * c * c) * (1.0 / b + n / (tau * c)).powi(2)).cbrt();
        let q_star = (p / 0.01) * (200.0 - 5.0) + 5.0;
        let net = incast(n as u32, "paper");
        let q = cell(&net, "ports", &[("port", "s0-h0"), ("class", "1")], "queue_avg_kb");
        assert!((q / q_star - 1.0).abs() < 0.2, "N = {n}: queue {q:.1} KB against q* {q_star:.1} KB");
    }
}

/// Two senders at line rate into one 100 Gbps port, no congestion control, `switch` settings.
fn two_to_one(switch: &str) -> Network {
    run_net(&format!(
        r#"
        duration = "3ms"
        [topology]
        kind = "star"
        hosts = 3
        link_rate = "100Gbps"
        link_delay = "1us"
        [switch]
        buffer = "32MB"
        {switch}
        [nic]
        mtu = "1064B"
        max_outstanding = "100MB"
        [[flows]]
        src = "1-2"
        dst = 0
        "#
    ))
}

#[test]
fn dynamic_pfc_pauses_at_a_fraction_of_the_free_buffer() {
    // Each ingress holds half the queue x; with XOFF = α·(B − 2x) and α = 1/8 it pauses at
    // x = B/10 = 3.2 MB: a 6.4 MB queue, plus what was on the wire; static XOFF 100 KB: 200 KB.
    let max_kb = |net: &Network| cell(net, "ports", &[("port", "s0-h0"), ("class", "1")], "queue_max_kb");
    let dynamic = max_kb(&two_to_one("pfc_alpha = 0.125"));
    assert!((6400.0..6460.0).contains(&dynamic), "dynamic: {dynamic} KB");
    let fixed = max_kb(&two_to_one(""));
    assert!((200.0..230.0).contains(&fixed), "static: {fixed} KB");
}

#[test]
fn bad_dcqcn_and_pfc_settings_name_the_field() {
    let base = |extra: &str| {
        format!(
            "duration = \"1ms\"\n{extra}\n[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[[flows]]\nsrc = 1\ndst = 0\n"
        )
    };
    for (extra, field) in [
        ("[cc]\nalgorithm = \"dcqcn\"\ngg = 1", "cc.gg"),
        ("[cc]\nalgorithm = \"dcqcn\"\nprofile = \"foo\"", "cc.profile"),
        ("[cc]\nalgorithm = \"dcqcn\"\ng = 0.0", "cc.g"),
        ("[switch]\npfc_alpha = -1.0", "switch.pfc_alpha"),
        ("[switch]\npfc = false\npfc_alpha = 0.1", "switch.pfc_alpha"),
    ] {
        let err = rttlab_sim::Scenario::from_toml(&base(extra)).expect_err(extra).to_string();
        assert!(err.starts_with(field), "{extra}: {err}");
    }
    // Unset, DCQCN's marking comes from its profile and is recorded in the resolved scenario.
    let s = rttlab_sim::Scenario::from_toml(&base("[cc]\nalgorithm = \"dcqcn\"\nprofile = \"mellanox\"")).unwrap_or_else(|e| panic!("{e}"));
    let ecn = &s.resolved()["switch"]["ecn"];
    assert_eq!((ecn["kmin"].as_str(), ecn["kmax"].as_str(), ecn["scale_rate"].as_str()), (Some("100KB"), Some("400KB"), Some("25Gbps")), "{ecn}");
}

#[test]
fn keys_given_replace_a_profiles_values_and_keep_the_rest() {
    let resolved = |cc: &str| {
        let toml = format!("duration = \"1ms\"\n[cc]\n{cc}\n[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[[flows]]\nsrc = 1\ndst = 0\n");
        rttlab_sim::Scenario::from_toml(&toml).unwrap_or_else(|e| panic!("{e}")).resolved()["cc"].clone()
    };
    let d = resolved("algorithm = \"dcqcn\"\nprofile = \"mellanox\"\nfast_recovery = 3");
    assert_eq!((d["fast_recovery"].as_u64(), d["increase_timer"].as_str()), (Some(3), Some("300us")), "{d}");
    let s = resolved("algorithm = \"swift\"\nprofile = \"htsim\"\nai = 2.0\n[transport]\nkind = \"window\"");
    assert_eq!((s["ai"].as_f64(), s["base_target"].as_str(), s["retx_reset_threshold"].as_u64()), (Some(2.0), Some("20us"), Some(5)), "{s}");
}
