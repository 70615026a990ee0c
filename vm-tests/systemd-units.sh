#!/usr/bin/env bash
# Socket activation of the chock user units under a real systemd.
#
#   vm-tests/systemd-units.sh [--protocol N] [--show-diagnostics] [BINARY]
#
# Boots a minimal Debian 12 (debootstrap, cached) with systemd-nspawn, with a
# lingering user and the user units lib/units.nix produces (the same function
# the NixOS and home-manager modules call) installed in /etc/systemd/user, and
# checks inside it: the socket listens while the service is inactive, a
# connection starts the Type=notify service, journald has its lines, the
# hardening leaves user namespaces, and a stopped service is started again
# by the next connection. See vm-tests/systemd/inside.sh for each check.
#
# BINARY is run as `BINARY daemon`; it must behave like `chock daemon` under
# systemd (LISTEN_FDS, READY=1, the control greeting). When `BINARY serve
# --help` succeeds, serve's units are installed and checked too (200 to the
# user, 403 to another). Without a BINARY, the script builds
# vm-tests/systemd/standin.rs, a stand-in that does only that, for both.
# --protocol N is the control protocol number to greet with (default 1).
# --show-diagnostics prints what the checks saw (replies, unit status, the
# daemon's journal) even when every check passes.
#
# Needs root, debootstrap, systemd-nspawn (systemd-container), nix-instantiate
# (nix-bin) and python3; rustc for the stand-in. The Debian tree is cached in
# $CHOCK_CI_CACHE (default /var/cache/chock-ci) and never written to: each
# run boots an overlay of it. The whole run is bounded by
# $CHOCK_SYSTEMD_TEST_TIMEOUT seconds (default 180) on top of a first
# debootstrap, itself bounded at 600.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
protocol=1
binary=
show=0
while [ $# -gt 0 ]; do
    case $1 in
    --protocol) protocol=$2; shift 2 ;;
    --show-diagnostics) show=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "systemd-units.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) binary=$1; shift ;;
    esac
done

cache=${CHOCK_CI_CACHE:-/var/cache/chock-ci}
bound=${CHOCK_SYSTEMD_TEST_TIMEOUT:-180}
# Bump the suffix when the package list changes, so a stale cache is rebuilt.
packages=systemd,systemd-sysv,dbus,libpam-systemd,socat,git,procps
image=$cache/debian-bookworm-systemd-v1

die() { echo "systemd-units.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (it boots a container)"
for tool in debootstrap systemd-nspawn nix-instantiate python3; do
    command -v "$tool" >/dev/null || die "$tool is missing: apt-get install debootstrap systemd-container nix-bin python3"
done

if [ ! -e "$image/.complete" ]; then
    echo "== building the Debian image in $image (cached for later runs)"
    rm -rf "$image.tmp"
    mkdir -p "$cache"
    timeout 600 debootstrap --variant=minbase --include="$packages" \
        bookworm "$image.tmp" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1 ||
        die "debootstrap failed; see $cache/debootstrap.log"
    chroot "$image.tmp" useradd --create-home --uid 1000 --shell /bin/bash alice
    chroot "$image.tmp" useradd --create-home --uid 1001 --shell /bin/bash bob
    # Lingering: the user's manager starts at boot with nobody logged in.
    mkdir -p "$image.tmp/var/lib/systemd/linger"
    touch "$image.tmp/var/lib/systemd/linger/alice"
    touch "$image.tmp/.complete"
    rm -rf "$image"
    mv "$image.tmp" "$image"
fi

run=$(mktemp -d /tmp/chock-systemd-units.XXXXXX)
cleanup() {
    mountpoint -q "$run/root" && umount "$run/root"
    rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # so the EXIT trap unmounts on a signal too
mkdir -p "$run/upper" "$run/work" "$run/root"
mount -t overlay overlay -o "lowerdir=$image,upperdir=$run/upper,workdir=$run/work" "$run/root"
root=$run/root

standin=0
if [ -z "$binary" ]; then
    command -v rustc >/dev/null || die "rustc is missing, and no BINARY was given"
    rustc --edition 2021 -O "$here/systemd/standin.rs" -o "$run/standin"
    binary=$run/standin
    standin=1
fi
[ -x "$binary" ] || die "$binary is not an executable"
serve=0
if [ "$standin" = 1 ] || timeout 10 "$binary" serve --help >/dev/null 2>&1 </dev/null; then serve=1; fi
install -D -m 0755 "$binary" "$root/opt/chock/bin/chock"
# The chock front hands every command but `chock sandbox` to chock-full,
# which a build puts beside it.
if [ "$standin" = 0 ] && [ -x "$(dirname "$binary")/chock-full" ]; then
    install -D -m 0755 "$(dirname "$binary")/chock-full" "$root/opt/chock/bin/chock-full"
fi

# The units, rendered by the same Nix function the modules use.
nix-instantiate --store dummy:// --eval --strict --json "$here/systemd/units.nix" \
    --argstr chock /opt/chock/bin/chock --argstr serve "$serve" >"$run/units.json"
python3 - "$run/units.json" "$root/etc/systemd/user" <<'EOF'
import json, os, sys
units, target = json.load(open(sys.argv[1])), sys.argv[2]
os.makedirs(os.path.join(target, "sockets.target.wants"), exist_ok=True)
for name, text in units.items():
    with open(os.path.join(target, name), "w") as f:
        f.write(text)
    if name.endswith(".socket"):
        os.symlink("../" + name, os.path.join(target, "sockets.target.wants", name))
EOF

# The checks, as a system service after the lingering user's manager.
install -D -m 0755 "$here/systemd/inside.sh" "$root/chock-vmtest/inside.sh"
cat >"$root/chock-vmtest/env" <<EOF
USER_NAME=alice
USER_UID=1000
OTHER_USER=bob
PROTOCOL=$protocol
STANDIN=$standin
SERVE=$serve
EOF
cat >"$root/etc/systemd/system/chock-vmtest.service" <<'EOF'
[Unit]
Description=chock systemd unit checks
Wants=user@1000.service
After=user@1000.service multi-user.target
[Service]
Type=oneshot
ExecStart=/chock-vmtest/inside.sh
StandardOutput=journal+console
EOF
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -s ../chock-vmtest.service "$root/etc/systemd/system/multi-user.target.wants/chock-vmtest.service"

echo "== booting (bounded at ${bound}s); console log in the failure report"
status=0
timeout --kill-after=10 "$bound" systemd-nspawn --quiet --keep-unit --register=no \
    --directory="$root" --machine=chock-vmtest --boot </dev/null >"$run/console.log" 2>&1 || status=$?

result=$root/chock-vmtest/result
if [ -f "$result" ]; then cat "$result"; fi
if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    echo "systemd-units.sh: the container did not power off within ${bound}s" >&2
fi
if [ -f "$result" ] && grep -qx done "$result" && ! grep -q '^FAIL' "$result"; then
    [ "$show" = 1 ] && cat "$root/chock-vmtest/diagnostics"
    echo "== systemd units: all checks passed"
    exit 0
fi
echo "== systemd units: FAILED; diagnostics:" >&2
cat "$root/chock-vmtest/diagnostics" >&2 2>/dev/null || true
echo "--- console (last 40 lines)" >&2
tail -n 40 "$run/console.log" >&2
exit 1
