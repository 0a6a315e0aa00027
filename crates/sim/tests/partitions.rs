//! A network cut into partitions handles, in each partition, the same events in the same order
//! as the whole network on one partition (`rttlab_sim::partition`).

use rttlab_sim::core::engine::{Event, EventKind};
use rttlab_sim::parallel::{partition, Partitioned};
use rttlab_sim::{Network, Scenario};

/// An event without its packet's slab slot (which differs between partitions).
fn key(ev: &Event) -> (u64, u64, String) {
    let kind = match ev.kind {
        EventKind::Arrive { port, .. } => format!("Arrive {}", port.0),
        EventKind::TxDone { port, pkt } => format!("TxDone {} {}", port.0, pkt.is_some()),
        k => format!("{k:?}"),
    };
    (ev.time.ps(), ev.seq, kind)
}

/// Each partition's events, as the whole network handles them and as the cut one does.
type Streams = Vec<Vec<(u64, u64, String)>>;

fn streams(s: &Scenario, p: usize) -> (Streams, Streams) {
    let mut whole = Network::new(s).unwrap();
    let of_node = partition(whole.graph(), p);
    let mut one = vec![Vec::new(); p];
    whole.run_inspected(|n, ev| {
        let q = n.owner(&ev.kind).map_or(0, |x| of_node[x as usize]);
        one[q].push(key(ev));
    });
    let mut cut = Partitioned::new(s, p).unwrap();
    let many: Vec<_> = (0..p).map(|_| std::sync::Mutex::new(Vec::new())).collect();
    let record = |q: usize, n: &Network, ev: &Event| {
        if n.owner(&ev.kind).is_some() || q == 0 {
            many[q].lock().unwrap().push(key(ev));
        }
    };
    cut.run(Some(&record), |_| std::ops::ControlFlow::Continue(())).unwrap();
    (one, many.into_iter().map(|m| m.into_inner().unwrap()).collect())
}

#[test]
fn every_partition_handles_the_same_events_as_the_whole() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "toml")).collect();
    paths.sort();
    let only = std::env::var("RTTLAB_PARTITION_ONLY").ok();
    let mut bad = Vec::new();
    for path in paths {
        if only.as_ref().is_some_and(|o| !path.to_string_lossy().contains(o.as_str())) {
            continue;
        }
        let mut s = Scenario::from_toml_file(&path).unwrap();
        if matches!(s.cc.controller, rttlab_sim::scenario::CcConfig::Python(_)) {
            continue;
        }
        s.duration = s.duration.min(rttlab_cc::Time::from_us(300));
        s.warmup = s.warmup.min(rttlab_cc::Time::from_us(100));
        for p in [2, 3] {
            let Ok((one, many)) = std::panic::catch_unwind(|| streams(&s, p)) else {
                bad.push(format!("{} p={p}: panicked", path.display()));
                continue;
            };
            for q in 0..p {
                let first = one[q].iter().zip(&many[q]).position(|(a, b)| a != b);
                if first.is_some() || one[q].len() != many[q].len() {
                    let i = first.unwrap_or(one[q].len().min(many[q].len()));
                    if only.is_some() {
                        for j in i.saturating_sub(12)..(i + 3) {
                            eprintln!("{j}: {:?}   |   {:?}", one[q].get(j), many[q].get(j));
                        }
                    }
                    bad.push(format!(
                        "{} p={p} part {q}: {} vs {} events, first difference at {i}: {:?} vs {:?}",
                        path.display(),
                        one[q].len(),
                        many[q].len(),
                        one[q].get(i),
                        many[q].get(i)
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The scenario cut short, as every partition count can run it.
fn partitionable(path: &std::path::Path) -> Option<Scenario> {
    let mut s = Scenario::from_toml_file(path).unwrap();
    if matches!(s.cc.controller, rttlab_sim::scenario::CcConfig::Python(_)) {
        return None;
    }
    s.duration = s.duration.min(rttlab_cc::Time::from_us(300));
    s.warmup = s.warmup.min(rttlab_cc::Time::from_us(100));
    s.measure.timeseries_interval = None;
    s.measure.pfc_trace = false;
    s.measure.pcap = None;
    Some(s)
}

fn results(net: &Network) -> (String, String) {
    (serde_json::to_string(&net.summary()).unwrap(), format!("{:?}", net.tables()))
}

#[test]
fn a_cut_network_gives_the_same_summary_and_tables() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "toml")).collect();
    paths.sort();
    let mut bad = Vec::new();
    for path in paths {
        let Some(s) = partitionable(&path) else { continue };
        let mut whole = Network::new(&s).unwrap();
        whole.run();
        let want = results(&whole);
        for p in [2, 3] {
            let mut cut = Partitioned::new(&s, p).unwrap();
            cut.run(None, |_| std::ops::ControlFlow::Continue(())).unwrap();
            let got = results(&cut.merge());
            if got.0 != want.0 {
                bad.push(format!("{} p={p}: summary\n  {}\n  {}", path.display(), want.0, got.0));
            } else if got.1 != want.1 {
                let i = got.1.chars().zip(want.1.chars()).position(|(a, b)| a != b).unwrap_or(0);
                bad.push(format!(
                    "{} p={p}: tables from char {i}: {} | {}",
                    path.display(),
                    &want.1[i.saturating_sub(200)..(i + 100).min(want.1.len())],
                    &got.1[i.saturating_sub(200)..(i + 100).min(got.1.len())]
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A run told to stop (Ctrl-C) stops in every partition at the same window, however the
/// threads are scheduled: with more threads than this machine's cores, one is often descheduled
/// just as another calls for the stop. Each run must end (the test fails on a wait of a minute,
/// not hang) with `Err(Stopped)`.
#[test]
fn a_stop_ends_every_partition() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/fat-incast-100g.toml");
    let s = Scenario::from_toml_file(std::path::Path::new(path)).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..40 {
            let mut cut = Partitioned::new(&s, 3).unwrap();
            let stopped = cut.run(None, |_| std::ops::ControlFlow::Break(()));
            tx.send(stopped.is_err()).unwrap();
        }
    });
    for run in 0..40 {
        let stopped =
            rx.recv_timeout(std::time::Duration::from_secs(60)).unwrap_or_else(|_| panic!("run {run}: a partition still waits a minute after the stop"));
        assert!(stopped, "run {run} was told to stop");
    }
}

/// The WebSearch fat-tree for `duration_us` (warm-up `warmup_us`) run whole and cut into `p`.
fn websearch_whole_and_cut(duration_us: u64, warmup_us: u64, p: usize) -> (Network, Partitioned) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/fat-tree-websearch-dctcp.toml");
    let mut s = Scenario::from_toml_file(std::path::Path::new(path)).unwrap();
    s.duration = rttlab_cc::Time::from_us(duration_us);
    s.warmup = rttlab_cc::Time::from_us(warmup_us);
    let mut whole = Network::new(&s).unwrap();
    whole.run();
    let mut cut = Partitioned::new(&s, p).unwrap();
    cut.run(None, |_| std::ops::ControlFlow::Continue(())).unwrap();
    (whole, cut)
}

/// Where each partition's thread spent the run: one record a partition, its events its own
/// (together the whole network's: not the others' it was built with and drops, and the run's
/// own once), its times estimates that are never negative, and the time on events not zero
/// where there were events.
#[test]
fn each_partition_says_where_its_time_went() {
    let (whole, cut) = websearch_whole_and_cut(300, 100, 3);
    assert_eq!(cut.phases.len(), 3);
    for (p, net) in cut.phases.iter().zip(&cut.parts) {
        assert_eq!(p.events, net.events_processed());
    }
    let events: u64 = cut.phases.iter().map(|p| p.events).sum();
    assert_eq!(events, whole.events_processed(), "events in the partitions and in the whole");
    for p in &cut.phases {
        assert!(p.events > 0 && p.events_s > 0.0, "{p:?}");
        assert!(p.waiting_s >= 0.0 && p.mail_s >= 0.0, "{p:?}");
    }
}

/// More partitions than a status's mailbox mask has bits (64): a partition may then look into
/// a mailbox that holds nothing for it, never past one that does; the results stay the whole
/// network's.
#[test]
fn more_partitions_than_mailbox_bits_give_the_same_results() {
    let (whole, cut) = websearch_whole_and_cut(60, 10, 70);
    assert!(whole.summary().flows > 10, "flows to cross between the partitions");
    assert_eq!(results(&cut.merge()), results(&whole));
}
