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
  zon = import ../lib/zon.nix;
  chockTypes = import ./types.nix { inherit lib; };

  inherit (lib)
    literalExpression
    mkEnableOption
    mkIf
    mkMerge
    mkOption
    mkPackageOption
    types
    ;

  common = import ./common.nix { inherit lib pkgs cfg; };
  inherit (common) devShellClosure;
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

    stateDir = mkOption {
      type = types.str;
      default = "%h/.local/state/chock";
      description = ''
        The chock state directory, as systemd writes it (`%h` is the home
        directory); the sockets live in it and the services get it as
        `CHOCK_STATE_DIR`.
      '';
    };

    settings = mkOption {
      type = chockTypes.file;
      default = { };
      example = literalExpression ''
        {
          model = "local/qwen2.5-coder";
          providers.local = {
            kind = chock.lib.zon.enum "openai";
            base_url = "http://127.0.0.1:11434/v1";
          };
        }
      '';
      description = ''
        The operator config, written as ZON to
        `$XDG_CONFIG_HOME/chock/config.zon`. See the NixOS option of the same
        name for the mapping; a value ZON cannot hold is refused at
        evaluation.
      '';
    };

    serve.enable = mkEnableOption "chock serve, the browser front of the daemon, as a socket-activated user service (needs services.chock.enable)";

    devShell = mkOption {
      type = types.nullOr types.package;
      default = null;
      example = literalExpression "inputs.self.devShells.x86_64-linux.default";
      description = ''
        A dev shell whose closure sessions may run as `exec.devshell.*`; given
        to chock as `settings.devshell.closure`, its programs put on the
        services' PATH.
      '';
    };
  };

  config = mkMerge [
    {
      # For settings written in a configuration that cannot see the flake:
      # `config.lib.chock.zon.enum "allow"` is `.allow`.
      lib.chock.zon = zon;

      assertions = [
        {
          assertion = cfg.serve.enable -> cfg.enable;
          message = "services.chock.serve.enable is set but services.chock.enable is not: serve is a client of the daemon, so set services.chock.enable = true as well";
        }
      ];
    }

    (mkIf cfg.enable (mkMerge [
      {
        assertions = [ (lib.hm.assertions.assertPlatform "services.chock" pkgs lib.platforms.linux) ];

        home.packages = [ cfg.package ];

        systemd.user.sockets = userUnits.sockets;
        systemd.user.services = lib.mapAttrs (_: hmService) userUnits.services;
      }

      (mkIf (cfg.settings != { }) {
        xdg.configFile."chock/config.zon".text = zon.render "services.chock.settings" cfg.settings;
      })

      (mkIf (cfg.devShell != null) {
        services.chock.settings.devshell.closure = lib.mkDefault "${devShellClosure}/store-paths";
      })
    ]))
  ];
}
