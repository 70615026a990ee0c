# The systemd user units chock runs under, as data, with builtins only.
#
# This file owns what the daemon and serve units say: socket paths, Type,
# the environment, and the hardening. The NixOS module, the home-manager
# module and the systemd test in vm-tests/systemd-units.sh all take their
# units from `userUnits`, so the unit a real systemd is tested with is the
# unit the modules install. Units are in home-manager's form
# ({ Unit; Socket | Service; Install; }), except that `Service.Environment` is
# an attribute set, which each consumer writes its own way.
#
# Hardening keeps what the sandbox needs. Everything below is a seccomp
# filter or a process attribute, which a user manager can apply without
# namespaces of its own. Left out on purpose, each for a reason:
#   RestrictNamespaces, PrivateUsers  the sandbox makes user, mount, pid, ipc,
#                                     uts and net namespaces for every command
#   PrivateDevices, DeviceAllow       devices granted by services.chock.devices
#                                     must stay reachable
#   ProtectProc, ProtectKernelTunables, ProtectControlGroups, ProtectSystem,
#   ProtectHome, PrivateTmp           each needs a mount namespace the whole
#                                     tree inherits; overmounts on /proc or /sys
#                                     make the kernel refuse the fresh procfs the
#                                     sandbox mounts in its pid namespace, and
#                                     sessions work in the person's own home
#   MemoryDenyWriteExecute            inherited by every command, and
#                                     sandbox.jit exists to allow W+X pages
#   SystemCallFilter                  the sandbox calls mount, unshare,
#                                     pivot_root and seccomp itself
let
  inherit (builtins)
    attrNames
    concatLists
    concatStringsSep
    isBool
    isList
    map
    replaceStrings
    toString
    ;

  hardening = {
    NoNewPrivileges = true;
    LockPersonality = true;
    RestrictRealtime = true;
    RestrictSUIDSGID = true;
    SystemCallArchitectures = "native";
    # AF_NETLINK stays: the session sets up its network namespace's links.
    RestrictAddressFamilies = "AF_UNIX AF_INET AF_INET6 AF_NETLINK";
    UMask = "0077";
  };

  listener = description: socketPath: {
    Unit.Description = description;
    Socket = {
      ListenStream = socketPath;
      SocketMode = "0600";
      DirectoryMode = "0700";
      RemoveOnStop = true;
    };
    Install.WantedBy = [ "sockets.target" ];
  };

  service =
    {
      description,
      socket,
      execStart,
      environment,
      extraUnit ? { },
    }:
    {
      Unit = {
        Description = description;
        Requires = [ socket ];
        After = [ socket ];
      }
      // extraUnit;
      Service = {
        Type = "notify";
        NotifyAccess = "main";
        ExecStart = execStart;
        Environment = environment;
        Restart = "on-failure";
        RestartSec = "2s";
        TimeoutStopSec = "30s";
      }
      // hardening;
    };

  renderValue =
    v:
    if isBool v then
      (if v then "yes" else "no")
    else
      toString v;

  quoteEnv = s: "\"${replaceStrings [ "\\" "\"" ] [ "\\\\" "\\\"" ] s}\"";

  renderSection =
    name: attrs:
    let
      line =
        key:
        let
          v = attrs.${key};
        in
        if key == "Environment" then
          map (n: "Environment=${quoteEnv "${n}=${v.${n}}"}") (attrNames v)
        else if isList v then
          map (x: "${key}=${renderValue x}") v
        else
          [ "${key}=${renderValue v}" ];
    in
    "[${name}]\n" + concatStringsSep "" (map (l: "${l}\n") (concatLists (map line (attrNames attrs))));
in
rec {
  inherit hardening;

  # The units for one user's daemon (and serve, when asked), in
  # home-manager's form. `chock` is the path of the chock executable;
  # `path` the directories the services' PATH holds, in order.
  userUnits =
    {
      chock,
      stateDir ? "%h/.local/state/chock",
      path ? [ ],
      environment ? { },
      serve ? false,
      daemonArgs ? [ ],
      serveArgs ? [ ],
    }:
    let
      env = {
        CHOCK_STATE_DIR = stateDir;
        PATH = concatStringsSep ":" path;
      }
      // environment;
      exec = words: concatStringsSep " " words;
    in
    {
      sockets = {
        chock-daemon = listener "Chock daemon socket" "${stateDir}/daemon.sock";
      }
      // (if serve then { chock-serve = listener "Chock serve socket" "${stateDir}/serve.sock"; } else { });
      services = {
        chock-daemon = service {
          description = "Chock daemon: this user's agent sessions";
          socket = "chock-daemon.socket";
          execStart = exec ([ chock "daemon" ] ++ daemonArgs);
          environment = env;
        };
      }
      // (
        if serve then
          {
            chock-serve = service {
              description = "Chock serve: the browser front of this user's daemon";
              socket = "chock-serve.socket";
              execStart = exec ([ chock "serve" ] ++ serveArgs);
              environment = env;
              # serve is a client of the daemon; asking for its socket lets the
              # first page load start the daemon too.
              extraUnit = {
                Wants = [ "chock-daemon.socket" ];
                After = [
                  "chock-serve.socket"
                  "chock-daemon.socket"
                ];
              };
            };
          }
        else
          { }
      );
    };

  # A unit in home-manager's form as the text of a unit file.
  render =
    unit:
    concatStringsSep "\n" (
      map (s: renderSection s unit.${s}) (
        builtins.filter (s: unit ? ${s}) [
          "Unit"
          "Socket"
          "Service"
          "Install"
        ]
      )
    );

  # Every unit file of `userUnits`' result, as { "chock-daemon.socket" = text; }.
  files =
    units:
    builtins.listToAttrs (
      map (n: {
        name = "${n}.socket";
        value = render units.sockets.${n};
      }) (attrNames units.sockets)
      ++ map (n: {
        name = "${n}.service";
        value = render units.services.${n};
      }) (attrNames units.services)
    );
}
