#!/usr/bin/env bash
# rttlab as a user gets it: the wheel, installed into a fresh virtualenv, run from a directory
# outside the repository. Its presets are found, a preset runs, and a quick reproduction writes
# its report. (Dependencies come from the project's .venv, which make installed from
# pyproject.toml, so this runs offline; rttlab itself comes only from the wheel.)
set -euo pipefail
repo=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$repo/.venv/bin/maturin" build --quiet --out "$tmp/wheel" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
python3 -m venv "$tmp/venv"
purelib() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
purelib "$repo/.venv/bin/python" > "$(purelib "$tmp/venv/bin/python")/rttlab-deps.pth"
"$tmp/venv/bin/pip" install --quiet --no-deps --no-index "$tmp"/wheel/rttlab-*.whl
# The wheel's native module is built stripped (the `dist` profile): a few MB, not ten.
so_bytes=$(stat -c %s "$(purelib "$tmp/venv/bin/python")"/rttlab/_core*.so)
test "$so_bytes" -lt 4000000 || { echo "wheel check: the native module is $so_bytes bytes (not stripped?)"; exit 1; }
"$tmp/venv/bin/rttlab" --version | grep -q "^rttlab [0-9]"
mkdir "$tmp/work" && cd "$tmp/work"
where=$("$tmp/venv/bin/python" -c 'import rttlab; print(rttlab.__file__)')
case "$where" in "$repo"*) echo "wheel check: rttlab was imported from the repository ($where)"; exit 1;; esac
rttlab="$tmp/venv/bin/rttlab"
"$rttlab" list --scenarios | grep -q "timely-testbed "
# The preset's 50 ms warm-up (TIMELY's convergence) must end before the run does.
"$rttlab" run timely-testbed --set duration=20ms --set warmup=5ms --json > summary.json
"$tmp/venv/bin/python" -c 'import json; s = json.load(open("summary.json")); assert s["flows"] == 40 and s["bytes_delivered"] > 0 and s["rtt_samples"] > 0, s'
"$rttlab" reproduce timely-table1 --quick --no-progress --cache "$tmp/cache" --out report > /dev/null
test -s report/index.html && test -s report/data/timely-table1-table1.csv
# A congestion controller written in Python, in the user's own directory, run by the wheel.
cp "$repo/examples/timely.py" mytimely.py
"$rttlab" run timely-testbed --set duration=20ms --set warmup=5ms --set cc.algorithm=python --set cc.class=mytimely:Timely --json > python-cc.json
"$tmp/venv/bin/python" -c 'import json; a, b = json.load(open("summary.json")), json.load(open("python-cc.json")); assert a == b, "the Python TIMELY differs from the native one"'
# The real host's sources ship in the wheel; where the machine can run it, a short kernel run
# builds them from the installed package.
"$tmp/venv/bin/python" -c 'from rttlab.host import build as b; assert all((b.SOURCES / f"{n}.bpf.c").exists() for n in b.OBJECTS) and (b.SOURCES / "loader.c").exists()'
"$tmp/venv/bin/python" -c 'from rttlab.experiments.uec.plans import DATA as d; assert (d / "plans/validate_uec_sender.txt").exists() and (d / "connection_matrices/perm_1024n_1024c_0u_2000000b.cm").exists() and (d / "LICENSE").exists()'
host=$("$tmp/venv/bin/python" -c 'import rttlab.host as h; print(h.missing() or "")')
if [ -z "$host" ]; then
	"$rttlab" host run host-swift --set duration=300ms --set warmup=50ms --json > host.json
	"$tmp/venv/bin/python" -c 'import json; s = json.load(open("host.json")); assert s["goodput_gbps"] > 0.1, s'
	host="a kernel run of host-swift"
else
	host="the host's sources (no kernel run: $host)"
fi
echo "wheel check of $(basename "$tmp"/wheel/*.whl) outside the repository: list --scenarios, run timely-testbed, reproduce timely-table1 --quick, a Python controller, $host"
echo "wheel: 5 passed, 0 failed"
