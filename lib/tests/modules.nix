# What modules/nixos.nix and modules/home-manager.nix define for a given
# `services.chock` value, checked with the stub lib of stub.nix (no nixpkgs):
# the NixOS shapes of the shared units, the rendered files, the udev package,
# the assertions, and home-manager's forms. `failures` lists every case that
# does not hold.
let
  stub = import ./stub.nix;
  zon = import ../zon.nix;

  chock = stub.pkgs "x86_64-linux";
  # The NixOS form of the socket unit of `chock <verb>`.
  socketWant = verb: {
    description = "Chock ${verb} socket";
    unitConfig = { };
    socketConfig = {
      ListenStream = "%h/.local/state/chock/${verb}.sock";
      SocketMode = "0600";
      DirectoryMode = "0700";
      RemoveOnStop = true;
    };
    wantedBy = [ "sockets.target" ];
  };
  cfgWith =
    overrides:
    {
      enable = true;
      package = chock.chock;
      stateDir = "%h/.local/state/chock";
      settings = { };
      orgBundle = null;
      serve.enable = false;
      devices = [ ];
      devShell = null;
      skills = [ ];
    }
    // overrides;

  nixos =
    overrides:
    stub.resolve
      (import ../../modules/nixos.nix {
        config.services.chock = cfgWith overrides;
        inherit (stub) lib;
        pkgs = chock;
      }).config;

  hm =
    system: overrides:
    stub.resolve
      (import ../../modules/home-manager.nix {
        config.services.chock = cfgWith overrides;
        inherit (stub) lib;
        pkgs = stub.pkgs system;
      }).config;

  failedAssertions = c: map (a: a.message) (builtins.filter (a: !a.assertion) c.assertions);

  settings = {
    model = "local/m";
    policy.rules = [
      {
        action = "git.push";
        decision = zon.enum "ask";
      }
    ];
  };

  full = nixos {
    serve.enable = true;
    inherit settings;
    orgBundle.policy.rules = [
      {
        action = "sandbox.jit";
        decision = zon.enum "deny";
      }
    ];
    devices = [
      {
        vendor = "1d50";
        product = "6018";
      }
    ];
  };
  daemon = full.systemd.user.services.chock-daemon;
  store = "/nix/store/00000000000000000000000000000000";

  devShell = stub.drv "dev-shell" // {
    inputDerivation = stub.drv "dev-shell-inputs";
    nativeBuildInputs = [ (stub.drv "cargo") ];
    buildInputs = [ ];
  };
  withShell = nixos { devShell = devShell; };

  home = hm "x86_64-linux" {
    serve.enable = true;
    inherit settings;
  };

  cases = {
    nixos-sockets = {
      got = full.systemd.user.sockets;
      want = {
        chock-daemon = socketWant "daemon";
        chock-serve = socketWant "serve";
      };
    };
    nixos-daemon-service = {
      got = {
        inherit (daemon.serviceConfig) Type ExecStart NoNewPrivileges;
        hasEnvironmentKey = daemon.serviceConfig ? Environment;
        inherit (daemon) unitConfig;
        state = daemon.environment.CHOCK_STATE_DIR;
      };
      want = {
        Type = "notify";
        ExecStart = "${store}-chock/bin/chock daemon";
        NoNewPrivileges = true;
        hasEnvironmentKey = false;
        unitConfig = {
          Requires = [ "chock-daemon.socket" ];
          After = [ "chock-daemon.socket" ];
        };
        state = "%h/.local/state/chock";
      };
    };
    # NixOS would build its own PATH from `path`; the units' PATH wins.
    nixos-path-is-forced = {
      got = daemon.environment.PATH;
      want = lib.mkForce "${store}-git/bin:${store}-nix/bin:/run/wrappers/bin:/etc/profiles/per-user/%u/bin:/run/current-system/sw/bin";
    };
    nixos-serve-service = {
      got = full.systemd.user.services.chock-serve.serviceConfig.ExecStart;
      want = "${store}-chock/bin/chock serve";
    };
    nixos-config-zon = {
      got = full.environment.etc."xdg/chock/config.zon".text;
      want = zon.render "services.chock.settings" settings;
    };
    nixos-config-linked-into-homes = {
      got = full.systemd.user.tmpfiles.rules;
      want = [
        "d %h/.config/chock 0700 - - -"
        "L %h/.config/chock/config.zon - - - - /etc/xdg/chock/config.zon"
      ];
    };
    nixos-exposes-zon = {
      got = full.lib.chock.zon.enum "allow";
      want = zon.enum "allow";
    };
    hm-exposes-zon = {
      got = home.lib.chock.zon.enum "deny";
      want = zon.enum "deny";
    };
    nixos-org-zon = {
      got = full.environment.etc."chock/org.zon".text;
      want = ".{\n    .policy = .{\n        .rules = .{\n            .{\n                .action = \"sandbox.jit\",\n                .decision = .deny,\n            },\n        },\n    },\n}\n";
    };
    nixos-udev-package = {
      got = map (p: { inherit (p) destination text; }) full.services.udev.packages;
      want = [
        {
          destination = "/etc/udev/rules.d/70-chock.rules";
          text = (import ../devices.nix).udevRules "services.chock.devices" [
            {
              vendor = "1d50";
              product = "6018";
            }
          ];
        }
      ];
    };
    nixos-group = {
      got = full.users.groups;
      want = {
        chock = { };
      };
    };
    nixos-package-installed = {
      got = full.environment.systemPackages;
      want = [ chock.chock ];
    };
    nixos-good-config-asserts-nothing = {
      got = failedAssertions full;
      want = [ ];
    };
    nixos-minimal-defines-no-files = {
      got = builtins.attrNames (nixos { });
      want = [
        "assertions"
        "environment"
        "lib"
        "systemd"
      ];
    };
    nixos-minimal-has-no-etc = {
      got = (nixos { }).environment ? etc;
      want = false;
    };
    nixos-serve-without-daemon = {
      got =
        let
          c = nixos {
            enable = false;
            serve.enable = true;
          };
        in
        {
          failed = failedAssertions c;
          defines = builtins.attrNames c;
        };
      want = {
        failed = [
          "services.chock.serve.enable is set but services.chock.enable is not: serve is a client of the daemon, so set services.chock.enable = true as well"
        ];
        defines = [
          "assertions"
          "lib"
        ];
      };
    };
    nixos-devshell-closure = {
      got = withShell.services.chock.settings.devshell.closure;
      want = lib.mkDefault "${store}-closure-info/store-paths";
    };
    nixos-devshell-env = {
      got = withShell.services.chock.settings.devshell.env;
      want = lib.mkDefault "${store}-chock-devshell-env.json";
    };
    skills-reach-the-units-and-the-login-environment =
      let
        dirs = {
          skills = [
            "/nix/store/aaaa-team-skills/share/chock/skills"
            "/srv/skills"
          ];
        };
        n = nixos dirs;
        h = hm "x86_64-linux" dirs;
        path = "/nix/store/aaaa-team-skills/share/chock/skills:/srv/skills";
      in
      {
        got = {
          nixosUnit = n.systemd.user.services.chock-daemon.environment.CHOCK_SKILLS_PATH;
          nixosLogin = n.environment.sessionVariables.CHOCK_SKILLS_PATH;
          hmUnit = builtins.elem "\"CHOCK_SKILLS_PATH=${path}\"" h.systemd.user.services.chock-daemon.Service.Environment;
          hmLogin = h.home.sessionVariables.CHOCK_SKILLS_PATH;
          none = (nixos { }).systemd.user.services.chock-daemon.environment ? CHOCK_SKILLS_PATH;
        };
        want = {
          nixosUnit = path;
          nixosLogin = path;
          hmUnit = true;
          hmLogin = path;
          none = false;
        };
      };
    nixos-devshell-on-path = {
      got = withShell.systemd.user.services.chock-daemon.environment.PATH;
      want = lib.mkForce "${store}-git/bin:${store}-nix/bin:${store}-cargo/bin:/run/wrappers/bin:/etc/profiles/per-user/%u/bin:/run/current-system/sw/bin";
    };

    hm-units = {
      got = {
        sockets = builtins.attrNames home.systemd.user.sockets;
        services = builtins.attrNames home.systemd.user.services;
        daemonSocket = home.systemd.user.sockets.chock-daemon.Socket.ListenStream;
        install = home.systemd.user.sockets.chock-daemon.Install;
        serveWants = home.systemd.user.services.chock-serve.Unit.Wants;
      };
      want = {
        sockets = [
          "chock-daemon"
          "chock-serve"
        ];
        services = [
          "chock-daemon"
          "chock-serve"
        ];
        daemonSocket = "%h/.local/state/chock/daemon.sock";
        install.WantedBy = [ "sockets.target" ];
        serveWants = [ "chock-daemon.socket" ];
      };
    };
    hm-environment-lines = {
      got = home.systemd.user.services.chock-daemon.Service.Environment;
      want = [
        "\"CHOCK_STATE_DIR=%h/.local/state/chock\""
        "\"PATH=${store}-git/bin:${store}-nix/bin:%h/.nix-profile/bin:/etc/profiles/per-user/%u/bin:/run/wrappers/bin:/run/current-system/sw/bin:/usr/local/bin:/usr/bin:/bin\""
      ];
    };
    hm-config-zon = {
      got = home.xdg.configFile."chock/config.zon".text;
      want = zon.render "services.chock.settings" settings;
    };
    hm-linux-passes = {
      got = failedAssertions home;
      want = [ ];
    };
    hm-refused-off-linux = {
      got = failedAssertions (hm "aarch64-darwin" { });
      want = [ "services.chock: not available on aarch64-darwin" ];
    };
    hm-serve-without-daemon = {
      got = failedAssertions (
        hm "x86_64-linux" {
          enable = false;
          serve.enable = true;
        }
      );
      want = [
        "services.chock.serve.enable is set but services.chock.enable is not: serve is a client of the daemon, so set services.chock.enable = true as well"
      ];
    };

    type-device-accepts = {
      got = map (d: types.device.merge deviceLoc [ { value = d; } ]) [
        {
          vendor = "1d50";
          product = "6018";
        }
        { serial = "A10KZ3XQ"; }
      ];
      want = [
        {
          vendor = "1d50";
          product = "6018";
        }
        { serial = "A10KZ3XQ"; }
      ];
    };
    type-device-refuses = {
      got = map (d: (builtins.tryEval (types.device.merge deviceLoc [ { value = d; } ])).success) [
        {
          vendor = "1D50";
          product = "6018";
        }
        {
          vendor = "1d50";
          product = "60180";
        }
        { vendor = "1d50"; }
        { serial = "a b"; }
      ];
      want = [
        false
        false
        false
        false
      ];
    };
    type-device-needs-an-attribute-set = {
      got = types.device.check "1d50:6018";
      want = false;
    };
  };

  inherit (stub) lib;
  types = import ../../modules/types.nix { inherit (stub) lib; };
  deviceLoc = [
    "services"
    "chock"
    "devices"
    "[definition 1-entry 1]"
  ];
in
import ./verdict.nix cases
