//! Invariants of a network's state that hold between any two events: what the packet path
//! conserves and balances. Integration tests check them after every run they make (and debug
//! builds after every run), so a change that breaks one fails loudly.

use crate::fabric::port::MAX_CLASSES;
use crate::network::Network;

/// Every invariant, or a description of the first one that fails:
/// - each connection's live packet count is the number of its data, ACK and NAK packets alive;
/// - no connection has more distinct payload delivered than it sent, nor a sized one more
///   than its size;
/// - payload is conserved: sent = delivered + duplicate + in flight + dropped (for want of
///   buffer, or lost to a fault);
/// - every dropped data packet is counted by its flow, or its notice is on its way there;
/// - each port has sent one PFC PAUSE more than RESUMEs for each class it is pausing, and
///   as many otherwise (IEEE 802.1Qbb frames alternate per class);
/// - a switch's headroom in use is what its ports' headroom holds, each within its reserve;
/// - packets stay in order per class: a connection's packets take one path in one class, so
///   with every queue and link on it FIFO, a message-transport receiver sees a gap (and
///   NAKs) only after a drop (without faults, whose new routes may reorder).
pub(crate) fn check(net: &Network) -> Result<(), String> {
    for (f, _) in net.hosts.flows.slots.iter().filter(|(_, x)| x.open) {
        let st = &net.hosts.flows.stats(f);
        if st.delivered_bytes > st.tx_bytes || st.size.is_some_and(|size| st.delivered_bytes > size) {
            return Err(format!("flow {f}: delivered {} bytes of {} sent (size {:?})", st.delivered_bytes, st.tx_bytes, st.size));
        }
    }
    let s = net.summary();
    if s.bytes_sent != s.bytes_delivered + s.bytes_duplicate + s.bytes_in_flight + s.bytes_dropped {
        return Err(format!(
            "payload not conserved: sent {} ≠ delivered {} + duplicate {} + in flight {} + dropped {}",
            s.bytes_sent, s.bytes_delivered, s.bytes_duplicate, s.bytes_in_flight, s.bytes_dropped
        ));
    }
    let c = net.counters();
    // Per-flow ECMP keeps a connection's packets in order while its label and the routes hold:
    // a NAK needs a loss. (The other modes, subflows, repaths and faults' new routes reorder, and
    // count it.)
    let one_path = net.cx.cfg.conns.iter().all(|c| !matches!(&c.transport, crate::scenario::TransportConfig::Window(w) if w.subflows > 1));
    let in_order = net.cx.cfg.routing.mode == crate::scenario::RoutingMode::Ecmp && one_path && s.repaths == 0 && net.fabric.faults.is_none();
    if in_order && c.drops + c.host_drops + c.trims == 0 && (c.naks > 0 || s.reordered > 0) {
        return Err(format!("{} NAKs and {} reordered packets without a drop: packets of a connection were reordered", c.naks, s.reordered));
    }
    let port_drops: u64 = net.fabric.port_views().flat_map(|p| p.class).map(|q| q.counts.drops).sum();
    let port_marks: u64 = net.fabric.port_views().flat_map(|p| p.class).map(|q| q.counts.ecn_marks).sum();
    let port_trims: u64 = net.fabric.port_views().flat_map(|p| p.class).map(|q| q.counts.trims).sum();
    if (port_drops, port_marks, port_trims) != (c.drops, c.marks, c.trims) {
        return Err(format!("ports count {port_drops} drops, {port_marks} marks and {port_trims} trims, switches {}, {} and {}", c.drops, c.marks, c.trims));
    }
    let flow_trims: u64 = net.all_stats().map(|s| s.trims).sum();
    if flow_trims > c.trims {
        return Err(format!("receivers count {flow_trims} trimmed packets, switches trimmed {}", c.trims));
    }
    let flow_drops: u64 = net.all_stats().map(|s| s.drops).sum();
    let on_their_way = net.cx.measure.drop_notices;
    if flow_drops as i64 + on_their_way != c.data_drops as i64 {
        return Err(format!("flows count {flow_drops} dropped data packets and {on_their_way} notices are on their way, the network {}", c.data_drops));
    }
    for h in &net.hosts.nodes {
        let port = net.fabric.port(h.port);
        for (c, q) in h.nic.iter().enumerate() {
            let held: u64 = q.iter().map(|s| s.wire_left(net.cx.cfg.payload_per_packet, net.cx.cfg.header_bytes)).sum();
            let counted = port.class.get(c).map_or(0, |q| q.nic_bytes);
            if held != counted {
                return Err(format!("host {}: its NIC holds {held} bytes of class {c}, its port counts {counted}", h.node));
            }
        }
    }
    for (i, port) in net.fabric.port_views().enumerate() {
        let pausing = (0..MAX_CLASSES).filter(|&c| port.pausing[c]).count() as u64;
        let resumes: u64 = port.class.iter().map(|q| q.counts.resumes_sent).sum();
        if port.pauses_sent() != resumes + pausing {
            return Err(format!("port {i}: {} PAUSEs, {resumes} RESUMEs, {pausing} classes paused", port.pauses_sent()));
        }
        if port.class.iter().any(|q| q.headroom_used > port.pfc_headroom) {
            return Err(format!(
                "port {i}: headroom holds {:?}, its reserve is {}",
                port.class.iter().map(|q| q.headroom_used).collect::<Vec<_>>(),
                port.pfc_headroom
            ));
        }
    }
    for sw in &net.fabric.switches {
        let held: u64 = net.fabric.port_views().filter(|p| p.node == sw.node).map(|p| p.class.iter().map(|q| q.headroom_used).sum::<u64>()).sum();
        if held != sw.headroom_used {
            return Err(format!("switch {}: headroom in use {}, its ports hold {held}", sw.node, sw.headroom_used));
        }
    }
    Ok(())
}
