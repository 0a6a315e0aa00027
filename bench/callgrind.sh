#!/bin/sh
# Instructions per data packet of each benchmark scenario at a short length, counted by
# valgrind's callgrind (repeatable for the same binary and inputs, unlike wall time).
# Usage: bench/callgrind.sh [OUTDIR]   (`make callgrind`); callgrind_annotate OUTDIR/NAME.out
# shows where the instructions go. The WebSearch runs under spraying and adaptive routing are
# path choice's cost per data packet beside ECMP's (at most 15 % more).
set -e
out=${1:-target/callgrind}
mkdir -p "$out"
bin=./target/release/rttlab-bench
status=0
for run in "fat-incast-100g 5ms fat-incast-100g" "timely-testbed 100ms timely-testbed" \
    "fat-tree-websearch-dctcp 2500us fat-tree-websearch-dctcp" \
    "fat-tree-websearch-dctcp 2500us websearch-spray routing.mode=\"spray\"" \
    "fat-tree-websearch-dctcp 2500us websearch-adaptive routing.mode=\"adaptive\""; do
    set -- $run
    extra=${4:+--set $4}
    # One thread: the count is of the packet path's work, not of the barrier's spinning.
    valgrind --tool=callgrind --callgrind-out-file="$out/$3.out" "$bin" run "scenarios/$1.toml" --duration "$2" --set run.threads=1 $extra \
        > "$out/$3.json" 2> "$out/$3.log"
    ir=$(grep -m1 '^summary:' "$out/$3.out" | cut -d' ' -f2)
    packets=$(sed -n 's/.*"data_packets": \([0-9]*\).*/\1/p' "$out/$3.json")
    events=$(sed -n 's/.*"events": \([0-9]*\).*/\1/p' "$out/$3.json")
    per=$((ir / packets))
    echo "$3 ($2): $ir instructions, $packets data packets, $events events: $per per data packet, $((ir / events)) per event"
    case $3 in
    fat-tree-websearch-dctcp) ecmp=$per ;;
    websearch-*)
        if [ $((per * 100)) -gt $((ecmp * 115)) ]; then
            echo "  $3: $per instructions per data packet, more than 115 % of ECMP's $ecmp"
            status=1
        fi
        ;;
    esac
done
exit $status
