#!/usr/bin/env bash
# Evaluation tests of the builtins-only Nix (lib/): every .nix file in the
# repository parses; lib/tests/zon.nix (the generators) and
# lib/tests/modules.nix (the modules, called with the stub lib of stub.nix)
# and lib/tests/outputs.nix (the flake's outputs, with stand-in inputs) have
# no failures; every case of lib/tests/bad.nix stops evaluation with its
# message. Needs nix-instantiate
# only (Debian's nix-bin), no nixpkgs.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v nix-instantiate >/dev/null || { echo "lib/tests/run.sh: nix-instantiate is missing: apt-get install nix-bin" >&2; exit 1; }

failed=0
parsed=0
while IFS= read -r -d '' file; do
    if ! nix-instantiate --store dummy:// --parse "$file" >/dev/null; then
        echo "FAIL parse $file" >&2
        failed=1
    fi
    parsed=$((parsed + 1))
done < <(git ls-files -z --cached --others --exclude-standard -- '*.nix')
echo "parsed $parsed .nix files"

for cases in zon modules outputs; do
    out=$(nix-instantiate --store dummy:// --eval --strict --json -E "(import ./lib/tests/$cases.nix)") || { failed=1; continue; }
    python3 - "$cases" "$out" <<'PY' || failed=1
import json, sys
name, r = sys.argv[1], json.loads(sys.argv[2])
for f in r["failures"]:
    print(f"FAIL {name}: {f}", file=sys.stderr)
print(f"lib/tests/{name}.nix: {r['count'] - len(r['failures'])} of {r['count']} cases pass")
sys.exit(1 if r["failures"] else 0)
PY
done

names=$(nix-instantiate --store dummy:// --eval --strict --json -E 'builtins.attrNames (import ./lib/tests/bad.nix)' |
    python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)))')
bad=0
for name in $names; do
    want=$(nix-instantiate --store dummy:// --eval --strict --json -E "(import ./lib/tests/bad.nix).\"$name\".error" |
        python3 -c 'import json,sys; print(json.load(sys.stdin))')
    if err=$(nix-instantiate --store dummy:// --eval --strict -E "(import ./lib/tests/bad.nix).\"$name\".expr" 2>&1); then
        echo "FAIL $name: evaluated, but must be refused with: $want" >&2
        failed=1
    elif [[ "$err" != *"$want"* ]]; then
        echo "FAIL $name: the error does not say: $want" >&2
        echo "$err" >&2
        failed=1
    fi
    bad=$((bad + 1))
done
echo "$bad refusal cases checked"
exit $failed
