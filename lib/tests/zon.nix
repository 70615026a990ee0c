# Evaluation tests of lib/zon.nix, lib/devices.nix and lib/units.nix that
# need nothing but builtins: `failures` lists every case whose result is not
# the expected one (empty when all pass). lib/tests/run.sh evaluates it, and
# the flake's `zon` check asserts it is empty. The cases that must stop
# evaluation with an error are in bad.nix.
let
  zon = import ../zon.nix;
  devices = import ../devices.nix;
  units = import ../units.nix;
  inherit (builtins) readFile toJSON;

  sample = import ../../vm-tests/fixtures/settings.nix { inherit zon; };
  r = zon.render "services.chock.settings";
  fragment = v: zon.render "t" { v = v; };
  line = v: ".{\n    .v = ${v},\n}\n";
  # The socket unit of `chock <verb>`, as lib/units.nix writes it.
  socketUnit = verb: {
    Unit.Description = "Chock ${verb} socket";
    Socket = {
      ListenStream = "%h/.local/state/chock/${verb}.sock";
      SocketMode = "0600";
      DirectoryMode = "0700";
      RemoveOnStop = true;
    };
    Install.WantedBy = [ "sockets.target" ];
  };

  cases = {
    fixture = {
      got = r sample;
      want = readFile ../../vm-tests/fixtures/settings.expected.zon;
    };
    empty-struct = {
      got = r { };
      want = ".{}\n";
    };
    nested-layout = {
      got = r {
        a = {
          b = [ 1 ];
        };
      };
      want = ".{\n    .a = .{\n        .b = .{\n            1,\n        },\n    },\n}\n";
    };
    float-with-point = {
      got = fragment 1.0;
      want = line "1.0";
    };
    float-exponent = {
      got = fragment 1.0e20;
      want = line "1.0e+20";
    };
    float-negative = {
      got = fragment (-2.5);
      want = line "-2.5";
    };
    integer-negative = {
      got = fragment (-42);
      want = line "-42";
    };
    string-escapes = {
      got = fragment "a\"b\\c\nd\re\tf";
      want = line ''"a\"b\\c\nd\re\tf"'';
    };
    string-control = {
      got = fragment (builtins.fromJSON ''"\u0001\u001f\u007f"'');
      want = line ''"\x01\x1f\x7f"'';
    };
    string-utf8-verbatim = {
      got = fragment "✓ é";
      want = line ''"✓ é"'';
    };
    field-keyword = {
      got = r { error = 1; };
      want = ".{\n    .@\"error\" = 1,\n}\n";
    };
    field-with-dash = {
      got = r { "a-b" = 1; };
      want = ".{\n    .@\"a-b\" = 1,\n}\n";
    };
    field-quote = {
      got = r { "say \"hi\"" = 1; };
      want = ".{\n    .@\"say \\\"hi\\\"\" = 1,\n}\n";
    };
    enum-bare = {
      got = fragment (zon.enum "allow");
      want = line ".allow";
    };
    enum-quoted = {
      got = fragment (zon.enum "two words");
      want = line ''.@"two words"'';
    };
    derivation-as-path = {
      got = fragment {
        outPath = "/nix/store/aaaa-git";
        type = "derivation";
      };
      want = line ''"/nix/store/aaaa-git"'';
    };
    null-bool = {
      got = fragment [
        null
        true
        false
      ];
      want = ".{\n    .v = .{\n        null,\n        true,\n        false,\n    },\n}\n";
    };
    empty-list = {
      got = fragment [ ];
      want = line ".{}";
    };
    problems-name-the-place = {
      got = zon.problems "services.chock.settings" {
        policy.rules = [ { decision = x: x; } ];
        "odd name" = {
          "" = 1;
        };
      };
      want = [
        "services.chock.settings.\"odd name\": an empty attribute name cannot be a ZON field name"
        "services.chock.settings.policy.rules[0].decision: a function cannot be written as ZON; give a string, number, boolean, null, list, attribute set or zon.enum \"name\""
      ];
    };
    problems-none = {
      got = zon.problems "s" sample;
      want = [ ];
    };
    # An older Nix prints six significant digits; a float it would change is
    # refused, and a newer Nix writes it exactly.
    float-inexact = {
      got = zon.problems "s" { pi = 3.14159265358979; } == [ ];
      want = toJSON 3.14159265358979 == "3.14159265358979";
    };

    device-actions = {
      got = map devices.action [
        {
          vendor = "1d50";
          product = "6018";
        }
        { serial = "A10KZ3XQ"; }
      ];
      want = [
        "device.usb.1d50.6018"
        "device.tty.serial.A10KZ3XQ"
      ];
    };
    device-rules = {
      got = devices.udevRules "services.chock.devices" [
        {
          vendor = "1d50";
          product = "6018";
        }
        { serial = "A10KZ3XQ"; }
      ];
      want = readFile ./70-chock.rules.expected;
    };
    device-problems = {
      got = devices.problems "services.chock.devices" [
        {
          vendor = "1D50";
          product = "6018";
        }
        {
          vendor = "1d5";
          product = "6018";
        }
        { serial = "a.b"; }
        {
          vendor = "1d50";
          serial = "x";
        }
      ];
      want = [
        "services.chock.devices[0].vendor = \"1D50\": hex digits must be lower case; write \"1d50\""
        "services.chock.devices[1].vendor = \"1d5\": a USB id is exactly four hex digits, such as \"1d50\""
        "services.chock.devices[2].serial = \"a.b\": a serial is 1 to 64 letters, digits, '-' or '_' (it becomes the action device.tty.serial.<serial>)"
        "services.chock.devices[3]: has [\"serial\",\"vendor\"]; a device is { vendor = \"1d50\"; product = \"6018\"; } or { serial = \"A10KZ3XQ\"; }"
      ];
    };

    units-daemon-only = {
      got = builtins.attrNames (units.files (units.userUnits { chock = "/bin/chock"; }));
      want = [
        "chock-daemon.service"
        "chock-daemon.socket"
      ];
    };
    units-with-serve = {
      got = builtins.attrNames (
        units.files (
          units.userUnits {
            chock = "/bin/chock";
            serve = true;
          }
        )
      );
      want = [
        "chock-daemon.service"
        "chock-daemon.socket"
        "chock-serve.service"
        "chock-serve.socket"
      ];
    };
    units-daemon-service = {
      got =
        let
          s = (units.userUnits { chock = "/bin/chock"; }).services.chock-daemon.Service;
        in
        {
          inherit (s) Type ExecStart NotifyAccess;
          Environment = s.Environment.CHOCK_STATE_DIR;
        };
      want = {
        Type = "notify";
        NotifyAccess = "main";
        ExecStart = "/bin/chock daemon";
        Environment = "%h/.local/state/chock";
      };
    };
    units-socket-path = {
      got =
        (units.userUnits {
          chock = "/bin/chock";
          serve = true;
        }).sockets;
      want = {
        chock-daemon = socketUnit "daemon";
        chock-serve = socketUnit "serve";
      };
    };
    # The sandbox makes namespaces, may be granted devices, and may be
    # allowed W+X pages: no unit may take those away.
    units-hardening-keeps-the-sandbox = {
      got = builtins.filter (k: units.hardening ? ${k}) [
        "RestrictNamespaces"
        "PrivateUsers"
        "PrivateDevices"
        "DeviceAllow"
        "MemoryDenyWriteExecute"
        "ProtectKernelTunables"
        "ProtectProc"
        "SystemCallFilter"
      ];
      want = [ ];
    };
  };
in
import ./verdict.nix cases
