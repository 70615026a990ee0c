# The user units vm-tests/systemd-units.sh installs into a Debian container:
# lib/units.nix's userUnits, the same function both modules call, with the
# paths of that container (chock at /opt/chock/bin/chock, git in /usr/bin).
{
  chock,
  serve ? "0",
}:
let
  units = import ../../lib/units.nix;
in
units.files (
  units.userUnits {
    inherit chock;
    serve = serve == "1";
    path = [
      "/usr/local/bin"
      "/usr/bin"
      "/bin"
    ];
  }
)
