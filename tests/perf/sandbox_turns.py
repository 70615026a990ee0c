#!/usr/bin/env python3
"""Wall-clock A/B of sandbox builds against bubblewrap, taking turns.

    tests/perf/sandbox_turns.py ROUNDS CHOCK [CHOCK...]

Runs bare `true`, `bwrap --unshare-all --ro-bind / / true` and
`CHOCK sandbox --workspace <tmp> -- true` for each CHOCK given (two builds of
the front, say), one after the other, ROUNDS times, so that a busy moment
of the machine hits all of them; prints the median wall time of each and
each chock's overhead (minus bare) over bubblewrap's. The CPU-time
counterpart is tests/perf/cpu_blocks.sh.
"""
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rounds, builds = int(sys.argv[1]), sys.argv[2:]
    ws = tempfile.mkdtemp()
    cmds = {
        "bare": ["true"],
        "bwrap": ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"],
    }
    for b in builds:
        cmds[b] = [b, "sandbox", "--workspace", ws, "--", "true"]
    wall = {k: [] for k in cmds}
    for _ in range(rounds):
        for k, c in cmds.items():
            t = time.perf_counter()
            subprocess.run(c, check=True)
            wall[k].append(time.perf_counter() - t)
    m = {k: statistics.median(v) * 1e3 for k, v in wall.items()}
    ob = m["bwrap"] - m["bare"]
    print(f"bare {m['bare']:.3f} ms, bwrap {m['bwrap']:.3f} ms (overhead {ob:.3f} ms)")
    for b in builds:
        o = m[b] - m["bare"]
        print(f"{b}: {m[b]:.3f} ms, overhead {o:.3f} ms, ratio {o / ob:.3f}")


if __name__ == "__main__":
    main()
