"""Published numbers to compare against (shared reference: published-numbers.md)."""

#: TIMELY (SIGCOMM 2015) Table 1, small-scale incast: 10 clients x 4 connections -> one server
#: on a 2x10 Gbps link. Keys: throughput (Gbps), average and 99th-percentile RTT (µs).
TIMELY_TABLE1 = {
    "DCTCP": {"throughput_gbps": 19.5, "rtt_avg_us": 598, "rtt_p99_us": 1490},
    "FAST* 10M": {"throughput_gbps": 7.5, "rtt_avg_us": 19, "rtt_p99_us": 49},
    "FAST* 50M": {"throughput_gbps": 12.5, "rtt_avg_us": 120, "rtt_p99_us": 280},
    "FAST* 100M": {"throughput_gbps": 17.5, "rtt_avg_us": 354, "rtt_p99_us": 460},
    "PFC": {"throughput_gbps": 19.5, "rtt_avg_us": 658, "rtt_p99_us": 1036},
    "TIMELY": {"throughput_gbps": 19.4, "rtt_avg_us": 61, "rtt_p99_us": 116},
}

#: TIMELY §6.1, Fig. 13 text: Jain's fairness index over the 40 connections.
TIMELY_JAIN = {"TIMELY": 0.953, "PFC": 0.909}
