"""Packet captures read back with dpkt, checked against the run's own counters and timeline."""

import struct
from decimal import Decimal
from io import BytesIO
from pathlib import Path

import dpkt
import pytest
import rttlab
from rttlab.cli import main as cli

ROOT = Path(__file__).resolve().parents[1]


def frames(data: bytes) -> list[tuple[Decimal, bytes]]:
    reader = dpkt.pcap.Reader(BytesIO(data))
    assert reader.datalink() == dpkt.pcap.DLT_EN10MB
    return list(reader)


@pytest.fixture(scope="module")
def pfc():
    """TIMELY's PFC testbed from time zero, capturing the bottleneck, one sender's link and the
    PFC frames the switch sends that sender."""
    ports = ["s0-h0_p0", "h1-s0", "s0-h1"]
    over = {
        "duration": "3ms",
        "warmup": "0us",
        "measure.pcap": {"ports": ports, "max_packets": 1_000_000},
        "measure.pfc_trace": True,
    }
    return rttlab.run(ROOT / "scenarios" / "timely-testbed-pfc.toml", overrides=over)


def test_every_packet_a_port_sent_is_captured_at_its_true_length(pfc):
    ports = pfc.ports.groupby("port")[["tx_packets", "tx_bytes", "pauses_sent", "resumes_sent"]].sum()
    for port, data in pfc.pcaps.items():
        got = frames(data)
        pfc_frames = ports.loc[port, "pauses_sent"] + ports.loc[port, "resumes_sent"]
        assert len(got) == ports.loc[port, "tx_packets"] + pfc_frames, port
        data_bytes = sum(len(buf) for _, buf in got if dpkt.ethernet.Ethernet(buf).type == dpkt.ethernet.ETH_TYPE_IP)
        assert data_bytes == ports.loc[port, "tx_bytes"], port
        times = [ts for ts, _ in got]
        assert times == sorted(times) and times[0] >= 0


def test_rocev2_headers_carry_the_connection_psn_and_ecn(pfc):
    seen = 0
    for _ts, buf in frames(pfc.pcaps["h1-s0"]):
        ip = dpkt.ethernet.Ethernet(buf).data
        assert isinstance(ip, dpkt.ip.IP) and ip.p == dpkt.ip.IP_PROTO_UDP and ip.data.dport == 4791
        assert ip.src == bytes([10, 0, 0, 1]) and ip.dst == bytes([10, 0, 0, 0])
        assert ip.tos & 3 == 2, "data is ECN-capable (ECT(0)), unmarked here"
        bth = bytes(ip.data.data)[:12]
        opcode, psn = bth[0], struct.unpack(">I", b"\0" + bth[9:12])[0]
        assert opcode in (0x00, 0x01, 0x02, 0x04)
        assert (bth[8] >> 7) == (opcode in (0x02, 0x04)), "the ACK request bit marks a segment's last packet"
        seen += 1
    assert seen > 100
    # The first packets of a connection count PSNs up from 0.
    first_qp = {}
    for _, buf in frames(pfc.pcaps["h1-s0"]):
        bth = bytes(dpkt.ethernet.Ethernet(buf).data.data.data)[:12]
        qp, psn = bth[5:8], struct.unpack(">I", b"\0" + bth[9:12])[0]
        first_qp.setdefault(qp, []).append(psn)
    for psns in first_qp.values():
        assert psns[: len(psns)] == list(range(len(psns)))


def test_pfc_frames_match_the_timeline(pfc):
    """Each PAUSE/RESUME the switch sends h1 starts at the capture's timestamp and takes effect
    at h1's egress 64 B at 10 Gbps (51.2 ns) and 1 µs of propagation later."""
    sent = []
    for ts, buf in frames(pfc.pcaps["s0-h1"]):
        eth = dpkt.ethernet.Ethernet(buf)
        if eth.type != 0x8808:
            continue
        body = bytes(eth.data)
        opcode, classes = struct.unpack(">HH", body[:4])
        quanta = struct.unpack(">8H", body[4:20])
        assert eth.dst == bytes.fromhex("0180c2000001") and opcode == 0x0101 and classes == 0b10
        sent.append((ts, "pause" if quanta[1] == 0xFFFF else "resume"))
    timeline = pfc.pfc[pfc.pfc.port == "h1-s0"]
    assert len(sent) == len(timeline) > 10
    assert [e for _, e in sent] == list(timeline.event)
    for (ts, _), applied in zip(sent, timeline.time_us):
        delay_ns = float(Decimal(str(applied)) * 1000 - ts * 10**9)
        assert delay_ns == pytest.approx(1051.2, abs=1.0), "pcap keeps nanoseconds"


def test_tcp_headers_carry_ce_ece_and_sequence_numbers():
    over = {
        "duration": "3ms",
        "warmup": "0us",
        "measure.pcap.ports": ["s0-h0_p0", "h0-h0_nic"],
        "measure.pcap.max_packets": 1_000_000,
    }
    r = rttlab.run(ROOT / "scenarios" / "timely-testbed-dctcp.toml", overrides=over)
    data = [dpkt.ethernet.Ethernet(b).data for _, b in frames(r.pcaps["s0-h0_p0"])]
    marked = sum(ip.tos & 3 == 3 for ip in data)
    assert marked == r.ports.set_index("port").loc["s0-h0_p0"].ecn_marks.sum() > 0
    assert all(
        ip.p == dpkt.ip.IP_PROTO_TCP and ip.data.dport == 5001 and len(ip.data.data) == 1436
        for ip in data
        if len(ip) > 100
    )
    acks = [dpkt.ethernet.Ethernet(b).data.data for _, b in frames(r.pcaps["h0-h0_nic"])]
    assert all(t.flags & dpkt.tcp.TH_ACK and len(t.data) == 0 for t in acks)
    assert any(t.flags & dpkt.tcp.TH_ECE for t in acks)


def test_capture_limits_are_counted_and_bad_ports_named(tmp_path, capsys):
    r = rttlab.run(
        ROOT / "scenarios" / "timely-testbed-pfc.toml",
        overrides={"duration": "2ms", "warmup": "0us", "measure.pcap": {"ports": ["s0-h0_p0"], "max_packets": 10}},
    )
    assert len(frames(r.pcaps["s0-h0_p0"])) == 10
    assert any("s0-h0_p0 kept its first 10 packets" in w for w in r.meta["warnings"])
    with pytest.raises(ValueError, match=r"measure.pcap.ports\[0\].*s9-h0"):
        rttlab.run(ROOT / "scenarios" / "timely-testbed-pfc.toml", overrides={"measure.pcap.ports": ["s9-h0"]})
    assert cli(["run", "timely-testbed-pfc", "--set", "duration=1ms", "--set", "warmup=0us", "--pcap", "s0-h0_p0"]) == 2
    assert "--pcap needs --out" in capsys.readouterr().err
    out = tmp_path / "run"
    assert (
        cli(
            [
                "run",
                "timely-testbed-pfc",
                "--set",
                "duration=1ms",
                "--set",
                "warmup=0us",
                "--pcap",
                "s0-h0_p0",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    assert len(frames((out / "pcap" / "s0-h0_p0.pcap").read_bytes())) > 100
