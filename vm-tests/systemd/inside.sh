#!/bin/bash
# The checks vm-tests/systemd-units.sh runs inside the booted container, as a
# system service ordered after the lingering user's manager. Results go to
# /chock-vmtest/result, one line each ("ok ..." or "FAIL ..."), ending with
# "done"; the host reads that file after the container powers off.
set -u
. /chock-vmtest/env # USER_NAME USER_UID OTHER_USER PROTOCOL STANDIN SERVE

out=/chock-vmtest/result
diag=/chock-vmtest/diagnostics
: >"$out"
: >"$diag"
state=/home/$USER_NAME/.local/state/chock
sock=$state/daemon.sock
serve_sock=$state/serve.sock

pass() { echo "ok   $*" >>"$out"; }
fail() { echo "FAIL $*" >>"$out"; }
check() { # description, command...
    local what=$1
    shift
    if "$@" >>"$diag" 2>&1; then pass "$what"; else fail "$what"; fi
}
as_user() { runuser -u "$USER_NAME" -- env XDG_RUNTIME_DIR="/run/user/$USER_UID" "$@"; }
uctl() { as_user systemctl --user "$@"; }

# Poll until the command succeeds or the deadline (seconds) passes.
wait_for() {
    local deadline=$(($(date +%s) + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

greet() { # extra lines to send after the greeting...
    { printf 'hello chock-control %s\n' "$PROTOCOL"; printf '%s\n' "$@"; } |
        as_user socat -t 20 - "UNIX-CONNECT:$sock"
}

service_state() { uctl is-active chock-daemon.service; }
journal_lines() { journalctl --no-pager -q -o cat "_SYSTEMD_USER_UNIT=chock-daemon.service"; }

# 1. The lingering user's socket listens with nobody having logged in.
check "a lingering user's chock-daemon.socket is active at boot" \
    wait_for 60 uctl is-active --quiet chock-daemon.socket
check "the socket is at the path the daemon expects, mode 0600, owned by the user" \
    test "$(stat -c '%U %a %F' "$sock" 2>&1)" = "$USER_NAME 600 socket"
check "its directory is mode 0700" test "$(stat -c '%a' "$(dirname "$sock")")" = 700
check "chock-daemon.service is not running before a connection" \
    test "$(service_state)" = inactive

# 2. Another user cannot reach it at all (SocketMode and DirectoryMode).
check "another user cannot connect to the socket" \
    bash -c "! runuser -u '$OTHER_USER' -- socat -t 2 - 'UNIX-CONNECT:$sock' </dev/null"

# 3. A connection starts the service, which greets back.
reply=$(greet)
echo "first reply: $reply" >>"$diag"
check "a connection is answered with the greeting" \
    test "${reply%%$'\n'*}" = "ok chock-control $PROTOCOL"
check "the connection started chock-daemon.service (Type=notify reached active)" \
    wait_for 20 test "$(service_state)" = active
check "the service is Type=notify" \
    test "$(uctl show -p Type --value chock-daemon.service)" = notify
pid=$(uctl show -p MainPID --value chock-daemon.service)
check "the daemon runs with no_new_privs" grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$pid/status"
check "the daemon runs under the unit's seccomp filter" grep -q '^Seccomp:[[:space:]]*2' "/proc/$pid/status"
check "CHOCK_STATE_DIR is the socket's directory" \
    grep -qz "^CHOCK_STATE_DIR=/home/$USER_NAME/.local/state/chock\$" "/proc/$pid/environ"
check "PATH holds git" \
    as_user env "$(tr '\0' '\n' <"/proc/$pid/environ" | grep '^PATH=')" sh -c 'command -v git'

# 4. journald has its lines.
check "journald holds the daemon's lines" wait_for 10 bash -c "journalctl --no-pager -q _SYSTEMD_USER_UNIT=chock-daemon.service | grep -q ."
if [ "$STANDIN" = 1 ]; then
    check "the daemon saw its socket and the journal stream" \
        wait_for 10 bash -c "journalctl --no-pager -q -o cat _SYSTEMD_USER_UNIT=chock-daemon.service | grep -q 'one listener on fd 3; JOURNAL_STREAM set'"
    # 5. The hardening leaves user namespaces to the sandbox.
    probe=$(greet probe-userns)
    echo "probe reply: $probe" >>"$diag"
    check "a child of the service can make user, mount, pid, ipc, uts and net namespaces" \
        test "$(echo "$probe" | sed -n 2p)" = "ok userns uid=0"
fi

# 6. Stopped, the socket stays, and the next connection starts it again.
uctl stop chock-daemon.service >>"$diag" 2>&1
check "after a stop the service is inactive" test "$(service_state)" = inactive
check "after a stop the socket still listens" uctl is-active --quiet chock-daemon.socket
reply=$(greet)
check "the next connection starts it again" \
    test "${reply%%$'\n'*}" = "ok chock-control $PROTOCOL"
check "and it is active again" wait_for 20 test "$(service_state)" = active

# 7. serve: socket-activated the same way, 200 to its user, 403 to another.
if [ "$SERVE" = 1 ]; then
    # The status line of serve's answer to GET /, as the user named: an
    # HTTP/1.0 request may be answered in HTTP/1.0 or 1.1, so the version
    # is not part of what is checked.
    http_status() {
        runuser -u "$1" -- sh -c "printf 'GET / HTTP/1.0\r\n\r\n' | socat -t 10 - UNIX-CONNECT:$serve_sock" |
            head -n 1 | tr -d '\r' | sed 's#^HTTP/1\.[01] ##'
    }
    check "chock-serve.socket is active at boot" uctl is-active --quiet chock-serve.socket
    check "serve's socket is beside the daemon's, mode 0600" \
        test "$(stat -c '%U %a %F' "$serve_sock" 2>&1)" = "$USER_NAME 600 socket"
    check "chock-serve.service is not running before a request" \
        test "$(uctl is-active chock-serve.service)" = inactive
    status=$(http_status "$USER_NAME" 2>>"$diag")
    echo "serve to its user: $status" >>"$diag"
    check "a request is answered 200 to the user" test "$status" = "200 OK"
    check "the request started chock-serve.service" \
        wait_for 20 test "$(uctl is-active chock-serve.service)" = active
    # The units keep the socket 0600 in a 0700 directory; open both so the
    # peer check itself is what the other user meets.
    chmod o+x "/home/$USER_NAME" "/home/$USER_NAME/.local" "/home/$USER_NAME/.local/state" "$state"
    chmod o+rw "$serve_sock"
    status=$(http_status "$OTHER_USER")
    echo "serve to another user: $status" >>"$diag"
    check "another user who reaches the socket is answered 403" \
        test "$status" = "403 Forbidden"
fi

{
    echo "--- systemctl --user status"
    uctl status --no-pager chock-daemon.socket chock-daemon.service
    echo "--- journal of chock-daemon.service"
    journal_lines | tail -n 50
    if [ "$SERVE" = 1 ]; then
        echo "--- journal of chock-serve.service"
        journalctl --no-pager -q -o cat "_SYSTEMD_USER_UNIT=chock-serve.service" 2>&1 | tail -n 30
    fi
} >>"$diag" 2>&1
echo done >>"$out"
systemctl poweroff --no-block
