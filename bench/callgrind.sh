#!/bin/sh
# Instructions per data packet of each benchmark scenario at a short length, counted by
# valgrind's callgrind (repeatable for the same binary and inputs, unlike wall time).
# Usage: bench/callgrind.sh [OUTDIR]   (`make callgrind`); callgrind_annotate OUTDIR/NAME.out
# shows where the instructions go.
set -e
out=${1:-target/callgrind}
mkdir -p "$out"
bin=./target/release/rttlab-bench
for run in "fat-incast-100g 5ms" "timely-testbed 100ms" "fat-tree-websearch-dctcp 2500us"; do
    set -- $run
    # One thread: the count is of the packet path's work, not of the barrier's spinning.
    valgrind --tool=callgrind --callgrind-out-file="$out/$1.out" "$bin" run "scenarios/$1.toml" --duration "$2" --set run.threads=1 \
        > "$out/$1.json" 2> "$out/$1.log"
    ir=$(grep -m1 '^summary:' "$out/$1.out" | cut -d' ' -f2)
    packets=$(sed -n 's/.*"data_packets": \([0-9]*\).*/\1/p' "$out/$1.json")
    events=$(sed -n 's/.*"events": \([0-9]*\).*/\1/p' "$out/$1.json")
    echo "$1 ($2): $ir instructions, $packets data packets, $events events: $((ir / packets)) per data packet, $((ir / events)) per event"
done
