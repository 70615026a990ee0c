#!/usr/bin/env bash
# Whole-process cost of the sandbox, measured in one run beside bubblewrap:
#   bare `true`, `chock sandbox -- true`, `bwrap --unshare-all --ro-bind / / true`.
# Prints hyperfine's table and the ratio of the overheads (each minus bare).
# Usage: tests/perf/sandbox.sh [hyperfine options]   (builds chock --release)
set -euo pipefail
cd "$(dirname "$0")/../.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v hyperfine >/dev/null || need+=(hyperfine)
if [ "${#need[@]}" -gt 0 ]; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi

cargo build --release -p chock --quiet
chock="$PWD/target/release/chock"
ws="$(mktemp -d)"
json="$(mktemp)"
trap 'rm -rf "$ws" "$json"' EXIT

hyperfine --warmup 50 --min-runs "${RUNS:-500}" -N "$@" --export-json "$json" \
    -n bare "true" \
    -n chock "$chock sandbox --workspace $ws -- true" \
    -n bwrap "bwrap --unshare-all --ro-bind / / true"

echo "== hyperfine (one command after the other)"
python3 - "$json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
for stat in ("mean", "median", "min"):
    bare, chock, bwrap = (r[k][stat] * 1e3 for k in ("bare", "chock", "bwrap"))
    oc, ob = chock - bare, bwrap - bare
    print(f"{stat:6}: bare {bare:.3f} ms, chock {chock:.3f} ms, bwrap {bwrap:.3f} ms;"
          f" overhead chock {oc:.3f} ms, bwrap {ob:.3f} ms, ratio {oc / ob:.2f}")
PY

# On a shared machine the load drifts between hyperfine's three blocks;
# taking turns (bare, chock, bwrap, bare, ...) exposes all three to the same
# load. Wall-clock medians.
echo "== interleaved, ${ROUNDS:=300} rounds, wall-clock medians"
tests/perf/sandbox_turns.py "$ROUNDS" "$chock"

# CPU time of the whole process tree (perf stat's task-clock follows every
# child, including ones a namespace's init reaps), which load inflates far
# less than wall time. Five alternating blocks per command.
if perf stat -e task-clock true >/dev/null 2>&1; then
    echo "== CPU time (perf stat task-clock, 5 x 100 runs each, alternating)"
    declare -A cpu=([bare]=0 [chock]=0 [bwrap]=0)
    for _ in 1 2 3 4 5; do
        for k in bare chock bwrap; do
            case $k in
                bare) c=(true) ;;
                chock) c=("$chock" sandbox --workspace "$ws" -- true) ;;
                bwrap) c=(bwrap --unshare-all --ro-bind / / true) ;;
            esac
            v=$(perf stat -x, -r 100 -e task-clock "${c[@]}" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}')
            cpu[$k]=$(python3 -c "print(${cpu[$k]} + $v / 5)")
        done
    done
    python3 -c "
b, c, w = ${cpu[bare]}, ${cpu[chock]}, ${cpu[bwrap]}
print(f'bare {b:.3f} ms, chock {c:.3f} ms, bwrap {w:.3f} ms; overhead chock {c - b:.3f} ms, bwrap {w - b:.3f} ms, ratio {(c - b) / (w - b):.2f}')"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
