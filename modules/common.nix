# What the NixOS and home-manager modules compute the same way from
# services.chock: the dev shell's closure and programs, and the user units
# (lib/units.nix) with a PATH of git, the dev shell's programs, then the
# directories each module's kind of system keeps programs in.
{
  lib,
  pkgs,
  cfg,
}:
let
  units = import ../lib/units.nix;
  devShellBins =
    if cfg.devShell == null then
      [ ]
    else
      map (p: "${lib.getBin p}/bin") (
        (cfg.devShell.nativeBuildInputs or [ ]) ++ (cfg.devShell.buildInputs or [ ])
      );
in
{
  devShellClosure = pkgs.closureInfo {
    # A mkShell derivation cannot be built, but its inputDerivation can, and
    # its closure is everything the shell puts in reach.
    rootPaths = [ (cfg.devShell.inputDerivation or cfg.devShell) ];
  };

  userUnits =
    systemPath:
    units.userUnits {
      chock = lib.getExe' cfg.package "chock";
      inherit (cfg) stateDir;
      serve = cfg.serve.enable;
      path = [ "${lib.getBin pkgs.git}/bin" ] ++ devShellBins ++ systemPath;
    };
}
