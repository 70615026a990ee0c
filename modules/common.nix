# What the NixOS and home-manager modules compute the same way from
# services.chock: the dev shell's closure and programs, the user units
# (lib/units.nix) with a PATH of git, the dev shell's programs, then the
# directories each module's kind of system keeps programs in; the options
# both declare alike (each in its own words); and the definitions both make.
{
  lib,
  pkgs,
  cfg,
}:
let
  units = import ../lib/units.nix;
  zon = import ../lib/zon.nix;
  chockTypes = import ./types.nix { inherit lib; };
  inherit (lib) literalExpression mkOption types;
  devShellBins =
    if cfg.devShell == null then
      [ ]
    else
      map (p: "${lib.getBin p}/bin") (
        (cfg.devShell.nativeBuildInputs or [ ]) ++ (cfg.devShell.buildInputs or [ ])
      );
  # The dev shell's variables, in the form `nix print-dev-env --json`
  # prints: PATH from its inputs' bin directories, and the string values of
  # a mkShell's `env`.
  devShellEnv = pkgs.writeTextFile {
    name = "chock-devshell-env.json";
    destination = "";
    text = builtins.toJSON {
      variables =
        lib.mapAttrs (_: value: {
          type = "exported";
          inherit value;
        }) (lib.filterAttrs (_: builtins.isString) (cfg.devShell.env or { }))
        // {
          PATH = {
            type = "exported";
            value = builtins.concatStringsSep ":" devShellBins;
          };
        };
    };
  };
  devShellClosure = pkgs.closureInfo {
    # A mkShell derivation cannot be built, but its inputDerivation can, and
    # its closure is everything the shell puts in reach.
    rootPaths = [ (cfg.devShell.inputDerivation or cfg.devShell) ];
  };
  # services.chock.skills as $CHOCK_SKILLS_PATH (a path is copied to the
  # store by the interpolation; a string is used as it is).
  skillsPath = builtins.concatStringsSep ":" (map (p: "${p}") cfg.skills);
  skillsEnv = if cfg.skills == [ ] then { } else { CHOCK_SKILLS_PATH = skillsPath; };
in
{
  inherit zon skillsPath;

  userUnits =
    systemPath:
    units.userUnits {
      chock = lib.getExe' cfg.package "chock";
      inherit (cfg) stateDir;
      serve = cfg.serve.enable;
      # git for the workspaces, Nix for the dev shell, nix_eval and
      # provide_tool, then the shell's programs and the system's.
      path = [
        "${lib.getBin pkgs.git}/bin"
        "${lib.getBin pkgs.nix}/bin"
      ]
      ++ devShellBins
      ++ systemPath;
      environment = skillsEnv;
    };

  # services.chock.skills, described by the module.
  skillsOption =
    description:
    mkOption {
      type = types.listOf types.path;
      default = [ ];
      example = literalExpression ''[ ./skills "''${pkgs.team-skills}/share/chock/skills" ]'';
      inherit description;
    };

  # services.chock.stateDir, described by the module.
  stateDirOption =
    description:
    mkOption {
      type = types.str;
      default = "%h/.local/state/chock";
      inherit description;
    };

  # services.chock.settings, described by the module; its example ends with
  # the module's `exampleLines`.
  settingsOption =
    {
      exampleLines ? [ ],
      description,
    }:
    mkOption {
      type = chockTypes.file;
      default = { };
      example = literalExpression ''
        {
          model = "local/qwen2.5-coder";
          providers.local = {
            kind = chock.lib.zon.enum "openai";
            base_url = "http://127.0.0.1:11434/v1";
          };
        ${builtins.concatStringsSep "" (map (line: "  ${line}\n") exampleLines)}}
      '';
      inherit description;
    };

  # services.chock.devShell, described by the module.
  devShellOption =
    description:
    mkOption {
      type = types.nullOr types.package;
      default = null;
      example = literalExpression "inputs.self.devShells.x86_64-linux.default";
      inherit description;
    };

  # Defined whether or not chock is enabled: the generators for settings
  # written where the flake is out of sight (`config.lib.chock.zon.enum
  # "allow"` is `.allow`), and the refusal of serve without the daemon.
  always = {
    lib.chock.zon = zon;
    assertions = [
      {
        assertion = cfg.serve.enable -> cfg.enable;
        message = "services.chock.serve.enable is set but services.chock.enable is not: serve is a client of the daemon, so set services.chock.enable = true as well";
      }
    ];
  };

  # A dev shell's closure and variables are the default
  # `settings.devshell.closure` and `.env`.
  devShellSettings = lib.mkIf (cfg.devShell != null) {
    services.chock.settings.devshell = {
      closure = lib.mkDefault "${devShellClosure}/store-paths";
      env = lib.mkDefault "${devShellEnv}";
    };
  };
}
