#!/usr/bin/env bash
# Lints each VM test's Python the way the NixOS test driver does before it
# builds a test: pyflakes over the test script, with the names the driver
# defines (its symbols and the test's machines) as builtins. The scripts are
# evaluated from the test files with nix-instantiate (no nixpkgs: a test's
# script does not depend on it), so what is linted is what the driver gets.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nix-instantiate >/dev/null || { echo "vm-tests/lint.sh: nix-instantiate is missing: apt-get install nix-bin" >&2; exit 1; }
python3 -c 'import pyflakes' 2>/dev/null || { echo "vm-tests/lint.sh: pyflakes is missing: pip install pyflakes" >&2; exit 1; }

# The driver's own names (nixos/lib/test-driver: test_symbols), and the one
# machine each test here has.
builtins="start_all,test_script,machines,vlans,driver,log,os,create_machine,subtest,run_tests,join_all,retry,serial_stdout_off,serial_stdout_on,polling_condition,Machine,machine"

failed=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for test in vm-tests/daemon.nix vm-tests/serve.nix vm-tests/devices.nix vm-tests/devshell.nix; do
    name=$(basename "$test" .nix)
    nix-instantiate --store dummy:// --eval --strict --json -E \
        "(import ./$test { common = import ./vm-tests/common.nix { module = { }; }; }).testScript" |
        python3 -c 'import json, sys; sys.stdout.write(json.load(sys.stdin))' >"$dir/$name.py"
    if ! PYFLAKES_BUILTINS="$builtins" python3 -m pyflakes "$dir/$name.py"; then
        echo "FAIL pyflakes $test" >&2
        failed=1
    fi
done
[ "$failed" = 0 ] && echo "pyflakes: the VM test scripts are clean"
exit "$failed"
