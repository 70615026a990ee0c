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
# Each argument is NAME=COMMAND (split on spaces, no quoting).
set -euo pipefail
blocks=${BLOCKS:-20}
declare -A vals
for ((i = 0; i < blocks; i++)); do
    for spec in "$@"; do
        name=${spec%%=*}
        read -r -a cmd <<<"${spec#*=}"
        v=$(perf stat -x, -r 10 -e task-clock "${cmd[@]}" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}')
        vals[$name]+="$v "
    done
done
for spec in "$@"; do
    name=${spec%%=*}
    python3 - "$name" ${vals[$name]} <<'PY'
import statistics, sys
name, v = sys.argv[1], [float(x) for x in sys.argv[2:]]
print(f"{name:10} median {statistics.median(v):.3f} ms, min {min(v):.3f} ms ({len(v)} blocks of 10)")
PY
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
