//! Packet capture (`[measure] pcap`): what an egress port starts to send, as a pcap file with
//! nanosecond timestamps (the simulated time the first bit leaves) and headers Wireshark
//! decodes. Each frame is as long as the simulation's packet (its wire bytes) and carries the
//! packet's payload length as the transport payload (zeros); what the configured header size
//! leaves beyond the real headers is an Ethernet trailer. Frames are kept up to the snap length.
//!
//! - Message transport: RoCEv2 (IBA Annex A17): Ethernet, IPv4 (ECT(0), or CE as marked), UDP to
//!   port 4791 from an ECMP-entropy source port, the InfiniBand BTH (RC SEND opcodes, destination
//!   QP = connection + 2 — QP0 and QP1 are the management QPs —, the ACK-request bit on a
//!   segment's last packet, the PSN) and the ICRC's 4 bytes; ACKs and NAKs as RC Acknowledge
//!   with an AETH (NAK: PSN sequence error).
//! - Window transport: Ethernet, IPv4, TCP with byte sequence numbers (packet number × payload
//!   per packet), the cumulative ACK, ECE, and one SACK block (RFC 2018) when the ACK has one.
//!   The sender's CWR is not modelled, so it is never set.
//! - PFC (IEEE 802.1Qbb): MAC control frames, EtherType 0x8808, opcode 0x0101, the class-enable
//!   vector and eight pause quanta (0xFFFF for a PAUSE, 0 for a RESUME).
//! - Pings: ICMP echo request and reply (a reply's source address is not kept: 0.0.0.0).
//!
//! Host `h` is 10.x.y.z with x.y.z = h, MAC 02:00:x:y:z:00; a switch port's PFC frames come from
//! 06:00 followed by the port's index.

use crate::core::ids::PortId;
use crate::core::packet::{Packet, PacketKind};
use etherparse::{EtherType, Ethernet2Header, IcmpEchoHeader, Icmpv4Header, Icmpv4Type, IpEcn, IpNumber, Ipv4Header, TcpHeader, TcpOptionElement, UdpHeader};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use rttlab_cc::Time;

/// RoCEv2's UDP destination port.
pub const ROCEV2_PORT: u16 = 4791;
/// The TCP port every window-transport connection is addressed to.
pub const TCP_PORT: u16 = 5001;
const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
const PFC_OPCODE: u16 = 0x0101;
/// IBA vol. 1 §9.2: RC SEND first/middle/last/only, RC Acknowledge.
const RC_SEND_FIRST: u8 = 0x00;
const RC_SEND_MIDDLE: u8 = 0x01;
const RC_SEND_LAST: u8 = 0x02;
const RC_SEND_ONLY: u8 = 0x04;
const RC_ACKNOWLEDGE: u8 = 0x11;
/// AETH syndromes (§9.7.5.1): an ACK with no credit information, a NAK for a PSN sequence error.
const AETH_ACK: u8 = 0x1F;
const AETH_NAK_SEQUENCE: u8 = 0x60;
const BTH_LEN: usize = 12;
const AETH_LEN: usize = 4;
const ICRC_LEN: usize = 4;

/// What a capture needs to know of a packet beyond the packet itself.
#[derive(Copy, Clone, Debug)]
pub struct Endpoints {
    /// Source and destination hosts (`None`: not known).
    pub src: Option<u32>,
    pub dst: u32,
    /// The connection's slot, and whether it runs on the message transport.
    pub flow: u32,
    pub message: bool,
    /// The window transport's payload per packet, for byte sequence numbers.
    pub payload_per_packet: u32,
    /// Whether the data packet begins its segment (message transport).
    pub first_of_segment: bool,
}

/// One port's capture.
pub struct Capture {
    pub port: PortId,
    pub name: String,
    writer: PcapWriter<Vec<u8>>,
    snaplen: u32,
    max_packets: u64,
    /// The most bytes the file may grow to.
    max_bytes: usize,
    pub packets: u64,
    /// Packets not kept because `max_packets` were.
    pub refused: u64,
    /// Bytes written so far.
    bytes: usize,
    frame: Vec<u8>,
    zeros: Vec<u8>,
}

impl Capture {
    /// A capture of port `port` keeping frames up to `snaplen` bytes, at most `max_packets` of
    /// them and `max_bytes` in all.
    pub fn new(port: PortId, name: String, snaplen: u32, max_packets: u64, max_bytes: u64) -> Capture {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
        };
        let writer = PcapWriter::with_header(Vec::new(), header).expect("writing to memory cannot fail");
        Capture {
            port,
            name,
            writer,
            snaplen,
            max_packets,
            max_bytes: max_bytes as usize,
            packets: 0,
            refused: 0,
            bytes: 24,
            frame: Vec::new(),
            zeros: Vec::new(),
        }
    }

    /// Records `pkt`, which starts leaving the port at `now`.
    pub fn record(&mut self, now: Time, pkt: &Packet, ends: Endpoints) {
        let wire = pkt.wire_bytes as usize;
        self.frame.clear();
        if self.zeros.len() < pkt.payload_bytes as usize {
            self.zeros.resize(pkt.payload_bytes as usize, 0);
        }
        let payload = pkt.payload_bytes as usize;
        match pkt.kind {
            PacketKind::Pause | PacketKind::Resume => self.pfc(pkt),
            PacketKind::Ping | PacketKind::Pong => self.icmp(pkt, ends, payload),
            _ if ends.message => self.rocev2(pkt, ends, payload),
            _ => self.tcp(pkt, ends, payload),
        }
        let orig_len = wire.max(self.frame.len());
        let kept = orig_len.min(self.snaplen as usize);
        if self.packets >= self.max_packets || self.bytes + kept + 16 > self.max_bytes {
            self.refused += 1;
            return;
        }
        self.packets += 1;
        self.bytes += kept + 16;
        self.frame.resize(kept, 0);
        let ts = std::time::Duration::from_nanos(now.ps() / 1000);
        self.writer.write_packet(&PcapPacket::new(ts, orig_len as u32, &self.frame)).expect("writing to memory cannot fail");
    }

    /// The pcap file's bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.writer.into_writer()
    }

    fn ethernet(&mut self, src: [u8; 6], dst: [u8; 6], ether_type: EtherType) {
        Ethernet2Header { source: src, destination: dst, ether_type }.write(&mut self.frame).expect("memory");
    }

    /// Ethernet and IPv4 headers for `l4` bytes of IPv4 payload.
    fn ip(&mut self, pkt: &Packet, ends: Endpoints, protocol: IpNumber, l4: usize, ecn: IpEcn) -> Ipv4Header {
        let (src, dst) = (ends.src.map_or([0; 4], host_ip), host_ip(ends.dst));
        self.ethernet(ends.src.map_or([0; 6], host_mac), host_mac(ends.dst), EtherType::IPV4);
        let mut ip = Ipv4Header::new(l4 as u16, 64u8.saturating_sub(pkt.hops), protocol, src, dst).expect("an MTU fits an IPv4 packet");
        ip.ecn = ecn;
        ip.header_checksum = ip.calc_header_checksum();
        ip.write(&mut self.frame).expect("memory");
        ip
    }

    fn rocev2(&mut self, pkt: &Packet, ends: Endpoints, payload: usize) {
        let aeth = if pkt.kind == PacketKind::Data { 0 } else { AETH_LEN };
        let udp_len = BTH_LEN + aeth + payload + ICRC_LEN;
        self.ip(pkt, ends, IpNumber::UDP, UdpHeader::LEN + udp_len, ecn(pkt));
        let mut udp = UdpHeader::without_ipv4_checksum(0xC000 | (pkt.hash & 0x3FFF) as u16, ROCEV2_PORT, udp_len).expect("an MTU fits");
        udp.checksum = 0; // RoCEv2 sends no UDP checksum (the ICRC covers the packet)
        udp.write(&mut self.frame).expect("memory");
        let (opcode, ack_req, psn) = match pkt.kind {
            PacketKind::Data => {
                let opcode = match (ends.first_of_segment, pkt.last_of_segment()) {
                    (true, true) => RC_SEND_ONLY,
                    (true, false) => RC_SEND_FIRST,
                    (false, true) => RC_SEND_LAST,
                    (false, false) => RC_SEND_MIDDLE,
                };
                (opcode, pkt.last_of_segment(), pkt.seq)
            }
            // An ACK names the last PSN it acknowledges; a NAK the PSN expected.
            PacketKind::Ack => (RC_ACKNOWLEDGE, false, pkt.seq.wrapping_sub(1)),
            _ => (RC_ACKNOWLEDGE, false, pkt.seq),
        };
        let qpn = ends.flow.wrapping_add(2) & 0xFF_FFFF;
        let mut bth = [opcode, 0, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0];
        bth[5..8].copy_from_slice(&qpn.to_be_bytes()[1..]);
        bth[8] = (ack_req as u8) << 7;
        bth[9..12].copy_from_slice(&(psn & 0xFF_FFFF).to_be_bytes()[1..]);
        self.frame.extend_from_slice(&bth);
        if pkt.kind != PacketKind::Data {
            let syndrome = if pkt.kind == PacketKind::Nak { AETH_NAK_SEQUENCE } else { AETH_ACK };
            self.frame.extend_from_slice(&[syndrome, 0, 0, 0]);
        }
        self.frame.resize(self.frame.len() + payload + ICRC_LEN, 0);
    }

    fn tcp(&mut self, pkt: &Packet, ends: Endpoints, payload: usize) {
        let bytes = |packets: u32| packets.wrapping_mul(ends.payload_per_packet);
        let src_port = 0xC000 | (ends.flow & 0x3FFF) as u16;
        let mut tcp = if pkt.kind == PacketKind::Data {
            TcpHeader::new(src_port, TCP_PORT, bytes(pkt.seq), u16::MAX)
        } else {
            let mut t = TcpHeader::new(TCP_PORT, src_port, 0, u16::MAX);
            t.ack = true;
            t.acknowledgment_number = bytes(pkt.seq);
            t.ece = pkt.ecn;
            if pkt.sack[0] < pkt.sack[1] {
                let block = (bytes(pkt.sack[0]), bytes(pkt.sack[1]));
                t.set_options(&[TcpOptionElement::Noop, TcpOptionElement::Noop, TcpOptionElement::SelectiveAcknowledgement(block, [None; 3])])
                    .expect("one SACK block fits");
            }
            t
        };
        let ip = self.ip(pkt, ends, IpNumber::TCP, tcp.header_len() + payload, ecn(pkt));
        tcp.checksum = tcp.calc_checksum_ipv4(&ip, &self.zeros[..payload]).expect("an MTU fits");
        tcp.write(&mut self.frame).expect("memory");
        self.frame.resize(self.frame.len() + payload, 0);
    }

    fn icmp(&mut self, pkt: &Packet, ends: Endpoints, payload: usize) {
        let echo = IcmpEchoHeader { id: ends.flow as u16, seq: pkt.seq as u16 };
        let kind = if pkt.kind == PacketKind::Ping { Icmpv4Type::EchoRequest(echo) } else { Icmpv4Type::EchoReply(echo) };
        let icmp = Icmpv4Header::with_checksum(kind, &self.zeros[..payload]);
        self.ip(pkt, ends, IpNumber::ICMP, icmp.header_len() + payload, IpEcn::NotEct);
        icmp.write(&mut self.frame).expect("memory");
        self.frame.resize(self.frame.len() + payload, 0);
    }

    fn pfc(&mut self, pkt: &Packet) {
        let mut src = [0x06, 0x00, 0, 0, 0, 0];
        src[2..].copy_from_slice(&self.port.0.to_be_bytes());
        self.ethernet(src, [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01], EtherType(ETHERTYPE_MAC_CONTROL));
        self.frame.extend_from_slice(&PFC_OPCODE.to_be_bytes());
        let class = pkt.class as usize;
        self.frame.extend_from_slice(&(1u16 << class).to_be_bytes());
        for c in 0..8 {
            let quanta: u16 = if c == class && pkt.kind == PacketKind::Pause { 0xFFFF } else { 0 };
            self.frame.extend_from_slice(&quanta.to_be_bytes());
        }
        self.frame.resize(self.frame.len().max(60), 0); // the minimum frame, FCS excluded
    }
}

/// IPv4's ECN field: data is ECN-capable (ECT(0)), or CE as marked; ACKs are not.
fn ecn(pkt: &Packet) -> IpEcn {
    match (pkt.kind, pkt.ecn) {
        (PacketKind::Data, true) => IpEcn::CongestionExperienced,
        (PacketKind::Data, false) => IpEcn::Ect0,
        _ => IpEcn::NotEct,
    }
}

/// Host `h`'s IPv4 address, 10.x.y.z.
pub fn host_ip(h: u32) -> [u8; 4] {
    let b = h.to_be_bytes();
    [10, b[1], b[2], b[3]]
}

fn host_mac(h: u32) -> [u8; 6] {
    let b = h.to_be_bytes();
    [0x02, 0x00, b[1], b[2], b[3], 0x00]
}
