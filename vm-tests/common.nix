# What the VM tests share: a lingering user alice (uid 1000) with a git
# project, a second user bob, the script provider configured through
# services.chock.settings, and Python helpers for the test scripts.
{ module }:
let
  zon = import ../lib/zon.nix;
in
{
  node =
    { pkgs, ... }:
    let
      # One scripted assistant turn (the script provider's JSON Lines).
      turns = pkgs.writeText "turns.jsonl" ''
        {"text": "hello from the script provider"}
      '';
    in
    {
      imports = [ module ];
      services.chock = {
        enable = true;
        settings = {
          providers.script = {
            kind = zon.enum "script";
            path = "${turns}";
          };
          model = "script/turns";
        };
      };
      users.users.alice = {
        isNormalUser = true;
        uid = 1000;
        linger = true;
      };
      users.users.bob = {
        isNormalUser = true;
        uid = 1001;
      };
      environment.systemPackages = [
        pkgs.socat
        pkgs.curl
        pkgs.git
      ];
      virtualisation.memorySize = 2048;
    };

  # Python for the start of every test script.
  prelude = ''
    import shlex

    # The control protocol's number (crates/control); the greeting must match.
    PROTOCOL = 1
    STATE = "/home/alice/.local/state/chock"
    DAEMON = f"{STATE}/daemon.sock"

    def as_user(user, uid, cmd):
        return (f"runuser -u {user} -- env XDG_RUNTIME_DIR=/run/user/{uid} "
                f"sh -c {shlex.quote(cmd)}")

    def alice(cmd):
        return as_user("alice", 1000, cmd)

    def daemon_says(*lines):
        """Greets the daemon, sends the lines, returns its reply lines."""
        text = "".join(l + "\n" for l in [f"hello chock-control {PROTOCOL}", *lines])
        out = machine.succeed(alice(
            f"printf %s {shlex.quote(text)} | socat -t 30 - UNIX-CONNECT:{DAEMON}"))
        return out.splitlines()

    def user_unit_state(unit):
        return machine.execute(alice(f"systemctl --user is-active {unit}"))[1].strip()
  '';
}
