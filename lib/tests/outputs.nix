# The flake's outputs function, evaluated with stand-ins for nixpkgs and
# home-manager (stub.nix's lib, and a `pkgs` whose builders return their
# arguments): which outputs exist for which systems, what the package is
# built from and which tests it skips, what `nix run` runs, which checks each
# system has. Nothing is built; a stand-in cannot say whether nixpkgs accepts
# these arguments, only that the flake passes the ones it means to.
let
  stub = import ./stub.nix;
  flake = import ../../flake.nix;
  systems = [
    "x86_64-linux"
    "aarch64-linux"
  ];

  lib = stub.lib // {
    genAttrs =
      names: f:
      builtins.listToAttrs (
        map (n: {
          name = n;
          value = f n;
        }) names
      );
    optionalAttrs = cond: attrs: if cond then attrs else { };
    concatMap = f: list: builtins.concatLists (map f list);
    fileset = {
      unions = paths: paths;
      toSource = { root, fileset }: { inherit root fileset; };
    };
    licenses = {
      mit = "mit";
      asl20 = "asl20";
    };
  };

  pkgsFor =
    system:
    let
      self = stub.pkgs system // {
        inherit lib;
        callPackage =
          path: overrides:
          let
            f = import path;
          in
          f (builtins.intersectAttrs (builtins.functionArgs f) self // overrides);
        rustPlatform.buildRustPackage = args: stub.drv "${args.pname}-${args.version}" // args;
        # The script's text stands in for its store path, so a case can read
        # what the flake puts in it.
        writeShellScript = name: text: stub.drv name // { outPath = "script ${name}: ${text}"; };
        mkShell = args: stub.drv "shell" // args;
        runCommand = name: _env: _script: stub.drv name;
        testers.runNixOSTest = test: test;
        path = "/nixpkgs";
        cargo = stub.drv "cargo";
        rustc = stub.drv "rustc";
        clippy = stub.drv "clippy";
        rustfmt = stub.drv "rustfmt";
        cargo-nextest = stub.drv "cargo-nextest";
        socat = stub.drv "socat";
      };
    in
    self;

  nixpkgs = {
    inherit lib;
    legacyPackages = lib.genAttrs systems pkgsFor;
  };
  home-manager.lib.homeManagerConfiguration = args: {
    activationPackage = stub.drv "home-manager-generation" // {
      inherit (args) modules;
    };
  };

  outputs = flake.outputs {
    self = outputs;
    inherit nixpkgs home-manager;
  };

  package = outputs.packages.x86_64-linux.default;

  cases = {
    inputs = {
      got = {
        nixpkgs = flake.inputs.nixpkgs.url;
        home-manager = flake.inputs.home-manager.url;
        follows = flake.inputs.home-manager.inputs.nixpkgs.follows;
      };
      want = {
        nixpkgs = "github:NixOS/nixpkgs/nixos-unstable";
        home-manager = "github:nix-community/home-manager";
        follows = "nixpkgs";
      };
    };
    output-names = {
      got = builtins.attrNames outputs;
      want = [
        "apps"
        "checks"
        "devShells"
        "homeManagerModules"
        "lib"
        "nixosModules"
        "overlays"
        "packages"
      ];
    };
    systems = {
      got = map builtins.attrNames [
        outputs.packages
        outputs.apps
        outputs.devShells
        outputs.checks
      ];
      want = [
        systems'
        systems'
        systems'
        systems'
      ];
    };
    package = {
      got = {
        inherit (package) pname version cargoBuildFlags;
        lock = package.cargoLock.lockFile == ../../Cargo.lock;
        source = package.src.fileset == [
          ../../Cargo.toml
          ../../Cargo.lock
          ../../crates
          ../../tests
        ];
        main = package.meta.mainProgram;
        # The front finds the full program in ../libexec/chock.
        libexec = builtins.match ".*mv [$]out/bin/chock-full [$]out/libexec/chock/chock-full.*" package.postInstall != null;
        # The completions and man pages, where each shell and man look.
        share = map (line: builtins.match ".*\n *[$]out/bin/chock ${line}\n.*" package.postInstall != null) [
          "completions bash > [$]out/share/bash-completion/completions/chock"
          "completions zsh > [$]out/share/zsh/site-functions/_chock"
          "completions fish > [$]out/share/fish/vendor_completions.d/chock.fish"
          "man --dir [$]out/share/man/man1"
        ];
      };
      want = {
        pname = "chock";
        version = (builtins.fromTOML (builtins.readFile ../../Cargo.toml)).workspace.package.version;
        cargoBuildFlags = [
          "--package"
          "chock"
        ];
        lock = true;
        source = true;
        main = "chock";
        libexec = true;
        share = [
          true
          true
          true
          true
        ];
      };
    };
    package-skips-what-the-build-sandbox-cannot-run = {
      got = package.cargoTestFlags;
      want = [
        "--workspace"
        "--exclude"
        "chock-sandbox"
        "--exclude"
        "chock-runner"
        "--exclude"
        "chock-daemon"
        "--exclude"
        "chock-serve"
        "--exclude"
        "chock-e2e"
      ];
    };
    package-is-the-default = {
      got = outputs.packages.aarch64-linux.chock.outPath == outputs.packages.aarch64-linux.default.outPath;
      want = true;
    };
    nix-run-starts-a-session = {
      got = {
        inherit (outputs.apps.x86_64-linux.default) type;
        runs = builtins.match ".*exec [^ ]*-chock-0[.]1[.]0/bin/chock run \"[$]@\".*" (
          builtins.replaceStrings [ "\n" ] [ " " ] outputs.apps.x86_64-linux.default.program
        ) != null;
      };
      want = {
        type = "app";
        runs = true;
      };
    };
    checks-per-system = {
      got = map (s: builtins.attrNames outputs.checks.${s}) systems;
      want = [
        [
          "home-manager-module"
          "module-refusals"
          "package"
          "vm-daemon"
          "vm-devices"
          "vm-devshell"
          "vm-serve"
          "zon"
        ]
        [
          "home-manager-module"
          "package"
          "zon"
        ]
      ];
    };
    vm-test-names = {
      got = map (t: outputs.checks.x86_64-linux.${t}.name) [
        "vm-daemon"
        "vm-serve"
        "vm-devices"
        "vm-devshell"
      ];
      want = [
        "chock-daemon"
        "chock-serve"
        "chock-devices"
        "chock-devshell"
      ];
    };
    modules-default-the-package = {
      got = map (m: builtins.length m.imports) [
        outputs.nixosModules.default
        outputs.homeManagerModules.default
      ];
      want = [
        2
        2
      ];
    };
    lib-exposes-the-writer = {
      got = outputs.lib.zon.render "x" { d = outputs.lib.zon.enum "allow"; };
      want = ".{\n    .d = .allow,\n}\n";
    };
  };
  systems' = builtins.sort (a: b: a < b) systems;
in
import ./verdict.nix cases
