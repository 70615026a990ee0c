# The flake's NixOS checks: VM tests (pkgs.testers.runNixOSTest) and the
# evaluation checks of the module's refusals. x86_64-linux only; they need
# nixpkgs and KVM, so CI on a machine without Nix cannot run them (see
# docs/nix.md for what runs where).
{ pkgs, module }:
let
  common = import ./common.nix { inherit module; };
in
{
  vm-daemon = pkgs.testers.runNixOSTest (import ./daemon.nix { inherit common; });
  vm-serve = pkgs.testers.runNixOSTest (import ./serve.nix { inherit common; });
  vm-devices = pkgs.testers.runNixOSTest (import ./devices.nix { inherit common; });
  vm-devshell = pkgs.testers.runNixOSTest (import ./devshell.nix { inherit common; });
  module-refusals = import ./refusals.nix { inherit pkgs module; };
}
