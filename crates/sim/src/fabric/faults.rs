//! Timed faults of the fabric (`[[faults]]`) as a plan fixed before the run: per egress port, the
//! spans in which it is down, runs at a fraction of its rate, or loses packets silently.
//!
//! The plan never changes while the run goes, so that any partition can ask what a port far
//! from it does at any time (whether a packet's link is cut before it arrives, which routes a
//! switch has when a packet reaches it) and every thread count gives the same bytes. Only what
//! a port's own node does at a fault's edges (flushing its queue, lifting PFC pauses, changing
//! its rate) happens as an event, at that node (`Fabric::fault_edge`).
//!
//! Routes: a link down stays in every switch's routes for `routing.failover_delay` (the black
//! hole a real fabric has while the link's ends detect it and the routing protocol withdraws
//! it); from then on the routes are the fabric's shortest paths without it (its routing has
//! converged), until it comes back up; one down from the start never was in them. A link counts as dead for routing while either of its
//! directions is, as bidirectional forwarding detection takes it.

use crate::core::engine::{rng_stream, Rng, Stream};
use crate::core::ids::PortId;
use crate::core::packet::Lost;
use crate::fabric::port::{port_name, Port};
use crate::fabric::routing::Routing;
use crate::fabric::topology::Graph;
use crate::scenario::{invalid, FaultConfig, FaultKind, Scenario, ScenarioError, Topology, Workload};
use rand::Rng as _;
use rttlab_cc::{Rate, Time};

const NONE: u32 = u32::MAX;

#[derive(Copy, Clone, Debug)]
enum What {
    Down,
    Degrade(f64),
    Drop(f64),
}

/// One fault on one egress, in force over `[from, until)`; a link down is out of the routes
/// over `[routed_from, until)`.
#[derive(Copy, Clone, Debug)]
struct Span {
    from: Time,
    until: Time,
    routed_from: Time,
    what: What,
}

/// One egress port's faults, its rate without them, and its draws for silent loss.
struct PortPlan {
    spans: Vec<Span>,
    rng: Rng,
}

/// The run's faults: the plan of every port that has one.
pub(crate) struct Faults {
    /// Per port: its plan's index (`NONE`: never faulty).
    of_port: Vec<u32>,
    plans: Vec<PortPlan>,
    /// The routes from each time on while some link is dead to them, in time order (`None`:
    /// the fabric's own, every link alive).
    epochs: Vec<(Time, Option<Routing>)>,
}

impl Faults {
    /// The scenario's `[[faults]]` on these ports (`None`: there are none); a name that is not
    /// a link, port or switch of the fabric is an error with the nearest name.
    pub fn build(s: &Scenario, graph: &Graph, ports: &[Port]) -> Result<Option<Faults>, ScenarioError> {
        let failed = matrix_failures(s, graph)?;
        if s.faults.is_empty() && failed.is_empty() {
            return Ok(None);
        }
        let names: Vec<String> = (0..ports.len() as u32).map(|p| port_name(graph, ports, PortId(p))).collect();
        let mut faults = Faults { of_port: vec![NONE; ports.len()], plans: Vec::new(), epochs: Vec::new() };
        let failed = failed.iter().map(|(field, link)| {
            (
                field.clone(),
                FaultConfig {
                    at: Time::ZERO,
                    until: None,
                    link: Some(link.clone()),
                    port: None,
                    switch: None,
                    kind: FaultKind::Down,
                    fraction: None,
                    probability: None,
                },
            )
        });
        let listed = s.faults.iter().enumerate().map(|(i, f)| (format!("faults[{i}].{}", f.target().0), f.clone()));
        for (field, f) in listed.chain(failed) {
            let name = f.target().1;
            let egresses: Vec<PortId> = match (&f.link, &f.port, &f.switch) {
                (None, None, Some(sw)) => {
                    let node = (graph.hosts..graph.nodes()).find(|&n| graph.node_name(n) == *sw);
                    let Some(node) = node else {
                        let all = (graph.hosts..graph.nodes()).map(|n| graph.node_name(n));
                        return Err(not_found(&field, name, "the name of a switch", all));
                    };
                    (0..ports.len()).filter(|&p| ports[p].node == node).flat_map(|p| [PortId(p as u32), ports[p].peer]).collect()
                }
                _ => {
                    // A name with `*` names every port it matches (`"s*-s*"`: every switch link).
                    let matched: Vec<PortId> = (0..names.len() as u32).map(PortId).filter(|p| crate::fabric::wildcard_match(name, &names[p.idx()])).collect();
                    if matched.is_empty() {
                        return Err(not_found(&field, name, "a link named by one of its ports, NODE-PEER (`*` matches any characters)", names.iter().cloned()));
                    }
                    let mut egresses: Vec<PortId> =
                        matched.iter().flat_map(|&p| if f.link.is_some() { vec![p, ports[p.idx()].peer] } else { vec![p] }).collect();
                    egresses.sort_unstable_by_key(|p| p.0);
                    egresses.dedup();
                    egresses
                }
            };
            let what = match f.kind {
                FaultKind::Down => What::Down,
                FaultKind::Degrade => What::Degrade(f.fraction.unwrap_or(1.0)),
                FaultKind::Drop => What::Drop(f.probability.unwrap_or(0.0)),
            };
            // A link down from the start was never in the routes: the fabric began without it.
            let routed_from = if f.at == Time::ZERO { Time::ZERO } else { Time(f.at.0.saturating_add(s.routing.failover_delay.0)) };
            let span = Span { from: f.at, until: f.until.unwrap_or(Time::MAX), routed_from, what };
            for p in egresses {
                if faults.of_port[p.idx()] == NONE {
                    faults.of_port[p.idx()] = faults.plans.len() as u32;
                    faults.plans.push(PortPlan { spans: Vec::new(), rng: rng_stream(s.seed, Stream::Fault(p.0)) });
                }
                faults.plans[faults.of_port[p.idx()] as usize].spans.push(span);
            }
        }
        faults.check_partition(graph, ports)?;
        faults.epochs = faults.route_epochs(graph.hosts, graph.nodes(), ports);
        Ok(Some(faults))
    }

    /// The routes around the links dead to routing, each time that set changes.
    fn route_epochs(&self, hosts: u32, nodes: u32, ports: &[Port]) -> Vec<(Time, Option<Routing>)> {
        let mut times: Vec<Time> = Vec::new();
        for x in self.plans.iter().flat_map(|pl| &pl.spans).filter(|x| matches!(x.what, What::Down)) {
            if x.routed_from < x.until {
                times.extend([x.routed_from, x.until].into_iter().filter(|&t| t != Time::MAX));
            }
        }
        times.sort_unstable();
        times.dedup();
        let mut epochs: Vec<(Time, Option<Routing>)> = Vec::new();
        let mut last_dead: Vec<usize> = Vec::new();
        for t in times {
            let dead: Vec<usize> = (0..ports.len()).filter(|&p| self.failed_over(PortId(p as u32), t) || self.failed_over(ports[p].peer, t)).collect();
            if dead == last_dead {
                continue;
            }
            let routing = (!dead.is_empty()).then(|| {
                let mut node_ports: Vec<Vec<PortId>> = vec![Vec::new(); nodes as usize];
                for (p, port) in ports.iter().enumerate() {
                    // A host keeps its one port: what cuts it off is its link's own loss.
                    if port.node < hosts || dead.binary_search(&p).is_err() {
                        node_ports[port.node as usize].push(PortId(p as u32));
                    }
                }
                Routing::build(hosts, ports, &node_ports)
            });
            epochs.push((t, routing));
            last_dead = dead;
        }
        epochs
    }

    /// The routes at `t` when faults have changed them (`None`: the fabric's own).
    #[inline]
    pub fn routing_at(&self, t: Time) -> Option<&Routing> {
        let i = self.epochs.partition_point(|e| e.0 <= t);
        i.checked_sub(1).and_then(|i| self.epochs[i].1.as_ref())
    }

    /// A fabric whose faults cut some hosts off from others for the rest of the run is an
    /// error naming them: their flows could never finish.
    fn check_partition(&self, graph: &Graph, ports: &[Port]) -> Result<(), ScenarioError> {
        let (nodes, mut component) = (graph.nodes() as usize, vec![NONE; graph.nodes() as usize]);
        let forever = |p: usize| self.plan(PortId(p as u32)).is_some_and(|pl| pl.spans.iter().any(|x| matches!(x.what, What::Down) && x.until == Time::MAX));
        let mut at_node: Vec<Vec<usize>> = vec![Vec::new(); nodes];
        for (p, port) in ports.iter().enumerate() {
            at_node[port.node as usize].push(p);
        }
        let mut count = 0;
        for start in 0..nodes {
            if component[start] != NONE {
                continue;
            }
            let mut stack = vec![start];
            component[start] = count;
            while let Some(n) = stack.pop() {
                for &p in &at_node[n] {
                    let far = ports[ports[p].peer.idx()].node as usize;
                    // Both directions must carry: a connection needs its ACKs.
                    if !forever(p) && !forever(ports[p].peer.idx()) && component[far] == NONE {
                        component[far] = count;
                        stack.push(far);
                    }
                }
            }
            count += 1;
        }
        let mut sizes = vec![0u32; count as usize];
        (0..graph.hosts as usize).for_each(|h| sizes[component[h] as usize] += 1);
        let main = (0..count as usize).max_by_key(|&c| (sizes[c], std::cmp::Reverse(c))).unwrap_or(0) as u32;
        let cut: Vec<String> = (0..graph.hosts).filter(|&h| component[h as usize] != main).map(|h| graph.node_name(h)).collect();
        if cut.is_empty() {
            return Ok(());
        }
        let shown = if cut.len() > 8 { format!("{} and {} more", cut[..8].join(", "), cut.len() - 8) } else { cut.join(", ") };
        Err(invalid(
            "faults",
            format!("{} hosts cut off", cut.len()),
            format!("faults that leave every host reachable for the rest of the run: {shown} could never reach the other hosts (give the faults an `until`)"),
        ))
    }

    #[inline]
    fn plan(&self, p: PortId) -> Option<&PortPlan> {
        let i = self.of_port[p.idx()];
        (i != NONE).then(|| &self.plans[i as usize])
    }

    /// Whether egress `p` is down at `t`.
    #[inline]
    pub fn down(&self, p: PortId, t: Time) -> bool {
        self.plan(p).is_some_and(|pl| pl.spans.iter().any(|x| matches!(x.what, What::Down) && x.from <= t && t < x.until))
    }

    /// Whether egress `p` is down at some time in `[from, to]`: a packet on the wire then is lost.
    #[inline]
    pub fn cut(&self, p: PortId, from: Time, to: Time) -> bool {
        self.plan(p).is_some_and(|pl| pl.spans.iter().any(|x| matches!(x.what, What::Down) && x.from <= to && from < x.until))
    }

    /// Whether routes leave egress `p` out at `t`: it has been down for at least
    /// `routing.failover_delay`, or since the start.
    fn failed_over(&self, p: PortId, t: Time) -> bool {
        self.plan(p).is_some_and(|pl| pl.spans.iter().any(|x| matches!(x.what, What::Down) && x.routed_from <= t && t < x.until))
    }

    /// The rate egress `p`, of `nominal` rate without faults, runs at at `t`: times the least
    /// fraction of a degradation in force.
    pub fn rate(&self, p: PortId, nominal: Rate, t: Time) -> Rate {
        let Some(pl) = self.plan(p) else { return nominal };
        let fraction = pl.spans.iter().filter(|x| x.from <= t && t < x.until).fold(1.0f64, |f, x| match x.what {
            What::Degrade(g) => f.min(g),
            _ => f,
        });
        Rate(((nominal.bps() as f64 * fraction) as u64).max(1))
    }

    /// Whether a packet leaving egress `p` at `now` and arriving at `arrive` is lost, and why:
    /// its link goes down meanwhile, or a silent loss in force draws it.
    #[inline]
    pub fn lost_on_wire(&mut self, p: PortId, now: Time, arrive: Time) -> Option<Lost> {
        let i = self.of_port[p.idx()];
        if i == NONE {
            return None;
        }
        if self.cut(p, now, arrive) {
            return Some(Lost::Down);
        }
        let pl = &mut self.plans[i as usize];
        let keep = pl.spans.iter().filter(|x| x.from <= now && now < x.until).fold(1.0f64, |k, x| match x.what {
            What::Drop(q) => k * (1.0 - q),
            _ => k,
        });
        (keep < 1.0 && pl.rng.random::<f64>() >= keep).then_some(Lost::Silent)
    }

    /// Where a fault starts or ends on some egress, the instants its node, and the node at the
    /// link's other end (whose PFC pauses from it lapse), act: (time, port).
    pub fn edges(&self, ports: &[Port]) -> Vec<(Time, PortId)> {
        let mut out = Vec::new();
        for (p, &i) in self.of_port.iter().enumerate().filter(|(_, &i)| i != NONE) {
            let p = PortId(p as u32);
            for x in &self.plans[i as usize].spans {
                for t in [x.from, x.until].into_iter().filter(|&t| t != Time::MAX) {
                    out.push((t, p));
                    if matches!(x.what, What::Down) {
                        out.push((t, ports[p.idx()].peer));
                    }
                }
            }
        }
        out.sort_unstable_by_key(|&(t, p)| (t, p.0));
        out.dedup();
        out
    }
}

/// The links the scenario's connection matrices fail (htsim's `failure` lines: aggregation switch
/// S's uplink L, to core L of its group, as htsim's `add_failed_link` numbers them and as
/// `Topology::FatTree` links them): (the field to blame, the link's name).
fn matrix_failures(s: &Scenario, graph: &Graph) -> Result<Vec<(String, String)>, ScenarioError> {
    let mut out = Vec::new();
    for (w, m) in s.workloads.iter().enumerate().filter_map(|(w, x)| if let Workload::Matrix(m) = x { Some((w, m)) } else { None }) {
        let field = format!("workloads[{w}].file");
        for &(line, agg, up) in &m.matrix.failures {
            let Topology::FatTree(t) = &s.topology else {
                return Err(ScenarioError::Field {
                    field,
                    message: format!("{}:{line}: a failure line names a fat-tree's aggregation switch: the topology is not a fat-tree", m.file),
                });
            };
            let half = t.k / 2;
            if agg >= t.k * half || up >= half {
                let message = format!(
                    "{}:{line}: switch_id {agg} link_id {up}: a k = {} fat-tree has aggregation switches 0..{} with uplinks 0..{}",
                    m.file,
                    t.k,
                    t.k * half - 1,
                    half - 1
                );
                return Err(ScenarioError::Field { field, message });
            }
            let edges = t.k * half;
            let (a, c) = (graph.hosts + edges + agg, graph.hosts + 2 * edges + (agg % half) * half + up);
            out.push((field.clone(), format!("{}-{}", graph.node_name(a), graph.node_name(c))));
        }
    }
    Ok(out)
}

/// `field = name` is not a name of the fabric: the error says what is allowed and suggests the
/// nearest of `names`.
fn not_found(field: &str, name: &str, what: &str, names: impl Iterator<Item = String>) -> ScenarioError {
    let names: Vec<String> = names.collect();
    let hint = crate::scenario::did_you_mean(name, names.iter().map(String::as_str));
    invalid(field, name, format!("{what} of the fabric (e.g. \"{}\"){hint}", names.first().map_or("", String::as_str)))
}
