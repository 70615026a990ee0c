# services.chock for one home-manager user, on Linux.
#
# The same user units as the NixOS module (both come from lib/units.nix), in
# home-manager's Unit/Socket/Service/Install form, plus the user's own
# config.zon in ~/.config/chock. Machine-wide parts (the org bundle, udev
# rules for devices) belong to the system and are left to the NixOS module.
# systemd user units exist only on Linux, so another platform is refused at
# evaluation rather than given units that never run.
{
  config,
  lib,
  pkgs,
  ...
}:
let
  cfg = config.services.chock;
  common = import ./common.nix { inherit lib pkgs cfg; };
  inherit (common) zon;

  inherit (lib)
    mkEnableOption
    mkIf
    mkMerge
    mkPackageOption
    ;

  userUnits = common.userUnits [
    "%h/.nix-profile/bin"
    "/etc/profiles/per-user/%u/bin"
    "/run/wrappers/bin"
    "/run/current-system/sw/bin"
    "/usr/local/bin"
    "/usr/bin"
    "/bin"
  ];

  # home-manager writes a list as repeated keys; the quotes keep a value
  # with spaces in one assignment.
  hmService =
    unit:
    unit
    // {
      Service = unit.Service // {
        Environment = lib.mapAttrsToList (
          name: value: "\"${lib.escape [ "\\" "\"" ] "${name}=${value}"}\""
        ) unit.Service.Environment;
      };
    };
in
{
  options.services.chock = {
    enable = mkEnableOption "chock's daemon as a socket-activated user service, and the chock command";

    package = mkPackageOption pkgs "chock" { };

    stateDir = common.stateDirOption ''
      The chock state directory, as systemd writes it (`%h` is the home
      directory); the sockets live in it and the services get it as
      `CHOCK_STATE_DIR`.
    '';

    settings = common.settingsOption {
      description = ''
        The operator config, written as ZON to
        `$XDG_CONFIG_HOME/chock/config.zon`. See the NixOS option of the same
        name for the mapping; a value ZON cannot hold is refused at
        evaluation.
      '';
    };

    serve.enable = mkEnableOption "chock serve, the browser front of the daemon, as a socket-activated user service (needs services.chock.enable)";

    skills = common.skillsOption ''
      Directories of packaged skills offered to your sessions in the
      `packaged` layer, given to chock as `CHOCK_SKILLS_PATH` in the units
      and in your session variables; see the NixOS option of the same name.
    '';

    devShell = common.devShellOption ''
      A dev shell whose closure sessions may run as `exec.devshell.*`; given
      to chock as `settings.devshell.closure`, its programs put on the
      services' PATH.
    '';
  };

  config = mkMerge [
    common.always

    (mkIf cfg.enable (mkMerge [
      {
        assertions = [ (lib.hm.assertions.assertPlatform "services.chock" pkgs lib.platforms.linux) ];

        home.packages = [ cfg.package ];

        systemd.user.sockets = userUnits.sockets;
        systemd.user.services = lib.mapAttrs (_: hmService) userUnits.services;
      }

      (mkIf (cfg.skills != [ ]) {
        home.sessionVariables.CHOCK_SKILLS_PATH = common.skillsPath;
      })

      (mkIf (cfg.settings != { }) {
        xdg.configFile."chock/config.zon".text = zon.render "services.chock.settings" cfg.settings;
      })

      common.devShellSettings
    ]))
  ];
}
