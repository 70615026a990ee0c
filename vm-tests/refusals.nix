# Evaluation checks of the NixOS module: each bad configuration the issue
# lists fails to evaluate, and a good one evaluates. (The message each prints
# names the option; lib/tests/run.sh checks the generators' messages on a
# machine with no nixpkgs, and the module system names the option of a
# definition whose type check fails.)
{ pkgs, module }:
let
  zon = import ../lib/zon.nix;
  # The whole system's derivation: building its path checks the assertions,
  # renders the .zon files and udev rules, and type-checks every option.
  toplevel =
    config:
    (import (pkgs.path + "/nixos/lib/eval-config.nix") {
      inherit (pkgs.stdenv.hostPlatform) system;
      modules = [
        module
        {
          boot.loader.grub.enable = false;
          fileSystems."/".device = "/dev/null";
          system.stateVersion = "25.11";
        }
        config
      ];
    }).config.system.build.toplevel;
  outcome = config: builtins.tryEval (toplevel config).drvPath;
  refused = config: !(outcome config).success;
  accepted = config: (outcome config).success;
  # A policy rule and a USB device entry, as services.chock takes them.
  rule = action: decision: {
    inherit action;
    decision = zon.enum decision;
  };
  usb = vendor: product: { inherit vendor product; };
  refusedDevice =
    vendor: product:
    refused {
      services.chock = {
        enable = true;
        devices = [ (usb vendor product) ];
      };
    };
in
assert accepted {
  services.chock = {
    enable = true;
    serve.enable = true;
    settings.policy.rules = [ (rule "git.push" "ask") ];
    devices = [ (usb "1d50" "6018") ];
  };
};
assert refused { services.chock.serve.enable = true; };
assert refused {
  services.chock = {
    enable = true;
    settings.hook = x: x;
  };
};
assert refusedDevice "1D50" "6018";
assert refusedDevice "1d50" "601";
pkgs.runCommand "chock-module-refusals" { } "touch $out"
