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

hyperfine --warmup 50 --min-runs 500 -N "$@" --export-json "$json" \
    -n bare "true" \
    -n chock "$chock sandbox --workspace $ws -- true" \
    -n bwrap "bwrap --unshare-all --ro-bind / / true"

python3 - "$json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
bare, chock, bwrap = (r[k]["mean"] * 1e3 for k in ("bare", "chock", "bwrap"))
oc, ob = chock - bare, bwrap - bare
print(f"bare {bare:.3f} ms, chock {chock:.3f} ms, bwrap {bwrap:.3f} ms")
print(f"overhead: chock {oc:.3f} ms, bwrap {ob:.3f} ms, ratio chock/bwrap = {oc / ob:.2f}")
PY
