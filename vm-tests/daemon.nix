# chock-daemon for a lingering user: the socket listens at boot while the
# service is not running; the first connection starts it (Type=notify); a
# session with the script provider runs to its end; the user's journal has
# the daemon's lines with the session's id.
{ common }:
{
  name = "chock-daemon";
  nodes.machine = common.node;

  testScript = common.prelude + ''
    machine.wait_for_unit("multi-user.target")
    machine.wait_for_unit("user@1000.service")

    with subtest("a lingering user's socket listens and the service is not running"):
        machine.wait_until_succeeds(alice("systemctl --user is-active chock-daemon.socket"))
        machine.succeed(f"test -S {DAEMON}")
        machine.succeed(f"test \"$(stat -c '%U %a' {DAEMON})\" = 'alice 600'")
        assert user_unit_state("chock-daemon.service") == "inactive"

    with subtest("the socket is alice's alone"):
        machine.fail(as_user("bob", 1001, f"socat -t 2 - UNIX-CONNECT:{DAEMON} </dev/null"))

    with subtest("chock sessions through the socket starts the service"):
        machine.succeed(alice(
            "mkdir -p ~/project && cd ~/project && git init -q && "
            "git -c user.name=a -c user.email=a@b commit -q --allow-empty -m init"))
        listed = machine.succeed(alice("chock sessions --from-daemon /home/alice/project"))
        assert "the daemon lists no session of this project" in listed, listed
        machine.wait_until_succeeds(alice("systemctl --user is-active chock-daemon.service"))
        assert machine.succeed(alice(
            "systemctl --user show -p Type --value chock-daemon.service")).strip() == "notify"

    with subtest("the operator settings reached alice's config"):
        machine.succeed(alice("grep -q '.kind = .script' ~/.config/chock/config.zon"))

    with subtest("a session with the script provider runs to its end"):
        reply = daemon_says("start /home/alice/project\tsay hello")
        assert reply[1].startswith("ok "), reply
        session_id, log_path = reply[1][3:].split("\t")
        machine.wait_until_succeeds(alice(f"grep -q '\"type\":\"session.end\"' {log_path}"), timeout=120)
        machine.succeed(alice(f"grep -q 'hello from the script provider' {log_path}"))
        listed = machine.succeed(alice("chock sessions --from-daemon --json /home/alice/project"))
        assert session_id in listed and '"status":"ended"' in listed, listed

    with subtest("journalctl --user -u chock-daemon shows the session"):
        machine.wait_until_succeeds(alice(
            f"journalctl --user -u chock-daemon -o json | grep -q {session_id}"))
  '';
}
