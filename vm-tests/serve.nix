# chock-serve for a lingering user: socket-activated, answers its own user,
# and answers 403 Forbidden to another user who can reach the socket.
{ common }:
{
  name = "chock-serve";
  nodes.machine = {
    imports = [ common.node ];
    services.chock.serve.enable = true;
  };

  testScript = common.prelude + ''
    SERVE = f"{STATE}/serve.sock"
    machine.wait_for_unit("multi-user.target")
    machine.wait_for_unit("user@1000.service")

    with subtest("serve's socket listens and the service is not running"):
        machine.wait_until_succeeds(alice("systemctl --user is-active chock-serve.socket"))
        assert user_unit_state("chock-serve.service") == "inactive"

    with subtest("the page answers its own user"):
        status = machine.succeed(alice(
            f"curl -s -o /dev/null -w '%{{http_code}}' --unix-socket {SERVE} http://chock/"))
        assert status == "200", status
        machine.wait_until_succeeds(alice("systemctl --user is-active chock-serve.service"))

    with subtest("another user who can reach the socket is answered 403"):
        # The units keep the socket 0600 in a 0700 directory; open both so
        # the peer check itself is what bob meets.
        machine.succeed(f"chmod o+x /home/alice /home/alice/.local /home/alice/.local/state {STATE}")
        machine.succeed(f"chmod o+rw {SERVE}")
        status = machine.succeed(as_user("bob", 1001,
            f"curl -s -o /dev/null -w '%{{http_code}}' --unix-socket {SERVE} http://chock/"))
        assert status == "403", status
  '';
}
