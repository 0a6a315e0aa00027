//! The partitions merged back into one network after a run, for its summary and tables. Every
//! part of a partition is destructured field by field, each with its rule, so that a field
//! added later does not compile until its rule is chosen.

use super::Partitioned;
use crate::core::ids::PortId;
use crate::core::packet::Packet;
use crate::ctx::Ctx;
use crate::fabric::Fabric;
use crate::host::flow::{FlowTable, RxEnd};
use crate::host::Hosts;
use crate::network::Network;
use crate::parallel::boundary::Boundary;
use crate::report::measure::Measurements;

impl Partitioned {
    /// One network holding what each partition owns (its ports, switches, hosts, connections
    /// and their receiving ends, its measurements added up), whose summary and tables are the
    /// whole network's: the same as one partition's run gives (`tests/partitions.rs`).
    pub fn merge(self) -> Network {
        let Partitioned { parts, of_node, .. } = self;
        let mut parts: Vec<Option<Network>> = parts.into_iter().map(Some).collect();
        let mut base = parts[0].take().expect("a partition");
        let mut ends: Vec<(u32, RxEnd)> = Vec::new();
        for (q, other) in parts.iter_mut().enumerate() {
            let net = other.as_mut().unwrap_or(&mut base);
            // Packets handed over are the receivers' now.
            let cx = &mut net.cx;
            for c in cx.boundary.handed_over.drain(..) {
                cx.pkts.free(c.pkt);
            }
            // Each receiving end is its receiver's partition's.
            for (id, mut end) in net.hosts.flows.rx.drain() {
                if end.serial == u32::MAX || of_node[end.dst as usize] != q {
                    continue;
                }
                if let Some(next) = end.next.take() {
                    ends.push((id, *next));
                }
                ends.push((id, end));
            }
            if let Some(net) = other.take() {
                absorb(&mut base, net, |node| of_node[node] == q);
            }
        }
        receiving_ends(&mut base.hosts.flows, ends);
        base.cx.boundary.part = None;
        base
    }
}

/// Partition `net`'s own (`owns(node)`) into `base`.
fn absorb(base: &mut Network, net: Network, owns: impl Fn(usize) -> bool) {
    let events = net.events_processed();
    let Network { cx, fabric, hosts } = net;
    // The run's clock, queue and configuration are every partition's alike; the boundary is
    // spent (its handed-over packets freed above, its mail delivered by the runner).
    let Ctx { now: _, seq_now: _, events: _, pkts, cfg: _, measure, notice_delay: _, end: _, boundary } = cx;
    let Boundary { part: _, crossings: _, handed_over: _, outbox: _, events_elsewhere: _, events_not_counted: _ } = boundary;
    base.cx.boundary.events_elsewhere += events;
    // Packets still in flight in this partition, at the same slots.
    for p in pkts.iter_live().copied().collect::<Vec<Packet>>() {
        base.cx.pkts.alloc(p);
    }
    let hosts_count = base.hosts.nodes.len();
    let Fabric { graph: _, routing: _, mut ports, mut queues, mut switches, host_ports: _, lose_once: _, faults: _ } = fabric;
    let Measurements {
        groups,
        fct_buckets: _,
        flow_records,
        rtt_hist,
        mut samplers,
        // One-thread runs only (`parallel::threads`).
        timeseries: _,
        at_warmup,
        mut ports_at_warmup,
        pfc_trace: _,
        pfc_trace_refused: _,
        captures: _,
        data_sent,
        data_drops,
        lost_payload,
        drop_notices,
        transfers,
        steps,
    } = measure;
    // Each time is noted by the partition of the host where it happens; the others hold MAX.
    for (mine, theirs) in base.cx.measure.transfers.iter_mut().zip(transfers) {
        for (a, b) in mine.iter_mut().zip(theirs) {
            for k in 0..3 {
                a[k] = a[k].min(b[k]);
            }
        }
    }
    for (mine, theirs) in base.cx.measure.steps.iter_mut().zip(steps) {
        for (a, b) in mine.iter_mut().zip(theirs) {
            *a = crate::report::measure::StepSpan { start: a.start.min(b.start), end: a.end.max(b.end), arrived: a.arrived + b.arrived };
        }
    }
    // Its own ports with their queues, what they held at the warm-up's end, their samplers.
    for p in 0..base.fabric.ports.len() {
        if owns(base.fabric.ports[p].node as usize) {
            std::mem::swap(&mut base.fabric.ports[p], &mut ports[p]);
            base.fabric.queues.of_mut(PortId(p as u32)).swap_with_slice(queues.of_mut(PortId(p as u32)));
            std::mem::swap(&mut base.cx.measure.ports_at_warmup[p], &mut ports_at_warmup[p]);
            if let Some(s) = base.fabric.ports[p].sampler() {
                std::mem::swap(&mut base.cx.measure.samplers[s as usize], &mut samplers[s as usize]);
            }
        }
    }
    for s in 0..base.fabric.switches.len() {
        if owns(hosts_count + s) {
            std::mem::swap(&mut base.fabric.switches[s], &mut switches[s]);
        }
    }
    // Generators, buffers and Python controllers stay with the partition that ran them.
    let Hosts { mut nodes, flows, generators: _, window_actions: _, workload_acts: _, external: _ } = hosts;
    // The run's `FlowsDone` counts are the first partition's, which heard every end.
    let FlowTable { mut slots, rx: _, retired, retired_count, done: _ } = flows;
    for h in (0..hosts_count).filter(|&h| owns(h)) {
        std::mem::swap(&mut base.hosts.nodes[h], &mut nodes[h]);
        base.hosts.flows.slots.swap_host(&mut slots, h);
    }
    base.hosts.flows.retired.absorb(&retired);
    base.hosts.flows.retired_count += retired_count;
    let m = &mut base.cx.measure;
    for (g, x) in m.groups.iter_mut().zip(&groups) {
        g.absorb(x);
    }
    if let (Some(r), Some(x)) = (&mut m.flow_records, &flow_records) {
        r.extend_from_slice(x);
    }
    m.rtt_hist.add(&rtt_hist).expect("auto-resizing histogram");
    m.at_warmup += &at_warmup;
    m.data_sent += data_sent;
    m.data_drops += data_drops;
    m.lost_payload += lost_payload;
    m.drop_notices += drop_notices;
}

/// A slot's receiving end is its latest connection's that has received anything (the next one
/// waits), as on one partition; the ends before it join the retired totals.
fn receiving_ends(flows: &mut FlowTable, mut ends: Vec<(u32, RxEnd)>) {
    ends.sort_by_key(|(id, e)| (*id, e.serial));
    let mut absorbed = Vec::new();
    let mut i = 0;
    while i < ends.len() {
        let id = ends[i].0;
        let j = i + ends[i..].iter().take_while(|(x, _)| *x == id).count();
        let started = |e: &RxEnd| e.stats.delivered_bytes + e.stats.duplicate_bytes > 0;
        let current = (i..j).rev().find(|&k| started(&ends[k].1)).unwrap_or(i);
        absorbed.extend(i..current);
        let mut group: Vec<_> = ends[current..j].iter_mut().map(|(_, e)| std::mem::take(e)).collect();
        let mut end = group.remove(0);
        end.next = group.into_iter().next().map(Box::new);
        *flows.rx.entry(id) = end;
        i = j;
    }
    for k in absorbed {
        flows.retired.absorb(&ends[k].1.stats);
    }
}
