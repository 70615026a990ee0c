#!/usr/bin/env bash
# CPU time (perf stat task-clock, whole process tree) of several commands,
# measured in one run taking turns: BLOCKS blocks of 10 runs per command,
# the commands alternating block by block so that a busy moment of the
# machine hits all of them. Prints the median and the minimum of the block
# means. Used to compare two builds of `chock` against bubblewrap:
#
#   ws=$(mktemp -d)
#   tests/perf/cpu_blocks.sh "bare=true" \
#       "old=/tmp/chock-old sandbox --workspace $ws -- true" \
#       "new=target/release/chock sandbox --workspace $ws -- true" \
#       "bwrap=bwrap --unshare-all --ro-bind / / true"
#
# Each argument is NAME=COMMAND (split on spaces, no quoting). RUNS sets the
# runs per block (default 10); RUNS=1 BLOCKS=300 gives the median of single
# runs, which one slow run moves less than a block's mean.
set -euo pipefail
blocks=${BLOCKS:-20}
runs=${RUNS:-10}
declare -A vals
for ((i = 0; i < blocks; i++)); do
    for spec in "$@"; do
        name=${spec%%=*}
        read -r -a cmd <<<"${spec#*=}"
        v=$(perf stat -x, -r "$runs" -e task-clock "${cmd[@]}" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}')
        vals[$name]+="$v "
    done
done
for spec in "$@"; do
    name=${spec%%=*}
    python3 - "$name" "$runs" ${vals[$name]} <<'PY'
import statistics, sys
name, v = sys.argv[1], [float(x) for x in sys.argv[3:]]
print(f"{name:10} median {statistics.median(v):.3f} ms, min {min(v):.3f} ms ({len(v)} blocks of {sys.argv[2]})")
PY
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
