# services.chock: chock on a NixOS machine, for every user.
#
# This module owns what a machine gives every user's chock: the package, the
# operator settings (rendered to /etc/xdg/chock/config.zon and linked into
# each user's ~/.config/chock unless they have a config.zon of their own),
# the organisation's bundle at /etc/chock/org.zon, the devices sessions may
# be granted (udev rules at 70-chock.rules and group chock), a dev shell
# whose closure sessions may run (exec.devshell.*), and socket-activated user
# units for the daemon and serve. The units themselves come from
# lib/units.nix, shared with the home-manager module and with the systemd
# test in vm-tests/systemd-units.sh.
{
  config,
  lib,
  pkgs,
  ...
}:
let
  cfg = config.services.chock;
  devices = import ../lib/devices.nix;
  chockTypes = import ./types.nix { inherit lib; };
  common = import ./common.nix { inherit lib pkgs cfg; };
  inherit (common) zon;

  inherit (lib)
    literalExpression
    mkEnableOption
    mkForce
    mkIf
    mkMerge
    mkOption
    mkPackageOption
    types
    ;

  userUnits = common.userUnits [
    "/run/wrappers/bin"
    "/etc/profiles/per-user/%u/bin"
    "/run/current-system/sw/bin"
  ];

  nixosUnit = unit: {
    description = unit.Unit.Description;
    unitConfig = removeAttrs unit.Unit [ "Description" ];
  };

  nixosSocket = unit: nixosUnit unit // {
    socketConfig = unit.Socket;
    wantedBy = unit.Install.WantedBy;
  };

  nixosService =
    unit:
    nixosUnit unit
    // {
      serviceConfig = removeAttrs unit.Service [ "Environment" ];
      # PATH is the units' own; NixOS would otherwise build one from `path`.
      environment = lib.mapAttrs (
        name: value: if name == "PATH" then mkForce value else value
      ) unit.Service.Environment;
    };
in
{
  options.services.chock = {
    enable = mkEnableOption "chock: the daemon as a socket-activated user service for every user, and the chock command";

    package = mkPackageOption pkgs "chock" { };

    stateDir = common.stateDirOption ''
      Each user's chock state directory, as systemd writes it (`%h` is the
      home directory). The daemon's socket is `daemon.sock` in it and
      serve's is `serve.sock`; the services get it as `CHOCK_STATE_DIR`.
      The default is where chock looks when `XDG_STATE_HOME` is unset.
    '';

    settings = common.settingsOption {
      exampleLines = [
        "policy.rules = ["
        "  { action = \"git.push\"; decision = chock.lib.zon.enum \"ask\"; }"
        "];"
      ];
      description = ''
        The operator config, written as ZON to /etc/xdg/chock/config.zon and
        linked to `~/.config/chock/config.zon` of every user who has no file
        there. Attribute sets become structs, lists become tuples, and
        `chock.lib.zon.enum "name"` becomes the enum literal `.name`. A value
        ZON cannot hold (a function, for one) is refused at evaluation.
      '';
    };

    orgBundle = mkOption {
      type = types.nullOr chockTypes.file;
      default = null;
      example = literalExpression ''
        {
          policy.rules = [
            { action = "sandbox.jit"; decision = chock.lib.zon.enum "deny"; }
          ];
        }
      '';
      description = ''
        The organisation's policy bundle, written as ZON to /etc/chock/org.zon:
        a ceiling no project can raise. Null writes no bundle.
      '';
    };

    serve.enable = mkEnableOption "chock serve, the browser front of each user's daemon, as a socket-activated user service (needs services.chock.enable)";

    devices = mkOption {
      type = types.listOf chockTypes.device;
      default = [ ];
      example = [
        {
          vendor = "1d50";
          product = "6018";
        }
        { serial = "A10KZ3XQ"; }
      ];
      description = ''
        USB and serial devices sessions may be granted. Each becomes udev
        rules in 70-chock.rules giving the node to the person at the seat
        (`TAG+="uaccess"`) and to group `chock` (for sessions without a
        seat: add those users to the group). A project still names the device
        in its chock.zon and allows `device.usb.<vendor>.<product>` or
        `device.tty.serial.<serial>` in a rule.
      '';
    };

    skills = common.skillsOption ''
      Directories of packaged skills (each holding skill directories with a
      SKILL.md) offered to every user's sessions in the `packaged` layer,
      beside `share/chock/skills` of each profile on PATH. They are given
      to chock as `CHOCK_SKILLS_PATH`, in the units and in the login
      environment. Reading one is decided at `skill.read.packaged`, which
      ships as ask; docs/skills.md has the format.
    '';

    devShell = common.devShellOption ''
      A dev shell (a mkShell derivation, or any package) whose closure
      sessions may run: programs in it are `exec.devshell.*` (allowed by
      default) rather than `exec.nix.store.*` (asked). The closure's list of
      store paths is given to chock as `settings.devshell.closure`, and the
      shell's programs are put on the services' PATH.
    '';
  };

  config = mkMerge [
    # Outside mkIf: serve enabled on its own must still be refused.
    common.always

    (mkIf cfg.enable (mkMerge [
      {
        environment.systemPackages = [ cfg.package ];

        systemd.user.sockets = lib.mapAttrs (_: nixosSocket) userUnits.sockets;
        systemd.user.services = lib.mapAttrs (_: nixosService) userUnits.services;
      }

      (mkIf (cfg.settings != { }) {
        environment.etc."xdg/chock/config.zon".text = zon.render "services.chock.settings" cfg.settings;
        # `L` without `+` never replaces a file the user wrote themselves.
        systemd.user.tmpfiles.rules = [
          "d %h/.config/chock 0700 - - -"
          "L %h/.config/chock/config.zon - - - - /etc/xdg/chock/config.zon"
        ];
      })

      (mkIf (cfg.skills != [ ]) {
        environment.sessionVariables.CHOCK_SKILLS_PATH = common.skillsPath;
      })

      (mkIf (cfg.orgBundle != null) {
        environment.etc."chock/org.zon".text = zon.render "services.chock.orgBundle" cfg.orgBundle;
      })

      (mkIf (cfg.devices != [ ]) {
        users.groups.chock = { };
        services.udev.packages = [
          (pkgs.writeTextFile {
            name = "chock-udev-rules";
            destination = "/etc/udev/rules.d/70-chock.rules";
            text = devices.udevRules "services.chock.devices" cfg.devices;
          })
        ];
      })

      common.devShellSettings
    ]))
  ];
}
