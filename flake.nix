{
  description = "chock: run AI coding agents on Linux with a person in control";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
    home-manager = {
      url = "github:nix-community/home-manager";
      inputs.nixpkgs.follows = "nixpkgs";
    };
  };

  outputs =
    {
      self,
      nixpkgs,
      home-manager,
    }:
    let
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      forAllSystems = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});

      # Both modules default services.chock.package to this flake's build,
      # so a configuration that imports them needs no overlay.
      defaultPackage =
        { lib, pkgs, ... }:
        {
          services.chock.package = lib.mkDefault self.packages.${pkgs.stdenv.hostPlatform.system}.default;
        };
    in
    {
      packages = forAllSystems (pkgs: rec {
        chock = pkgs.callPackage ./pkgs/chock.nix { };
        default = chock;
      });

      # `nix run` starts a session in the current directory; arguments go to
      # `chock run`.
      apps = forAllSystems (pkgs: {
        default = {
          type = "app";
          program = "${
            pkgs.writeShellScript "chock-run" ''
              exec ${self.packages.${pkgs.stdenv.hostPlatform.system}.default}/bin/chock run "$@"
            ''
          }";
          meta.description = "Start a chock session in the current directory";
        };
      });

      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          packages = with pkgs; [
            cargo
            rustc
            clippy
            rustfmt
            cargo-nextest
            git
            socat
          ];
        };
      });

      overlays.default = final: _prev: {
        chock = final.callPackage ./pkgs/chock.nix { };
      };

      nixosModules.default = {
        imports = [
          ./modules/nixos.nix
          defaultPackage
        ];
      };

      homeManagerModules.default = {
        imports = [
          ./modules/home-manager.nix
          defaultPackage
        ];
      };

      # Builtins-only helpers, for writing settings: `chock.lib.zon.enum "allow"`.
      lib = {
        zon = import ./lib/zon.nix;
        devices = import ./lib/devices.nix;
        units = import ./lib/units.nix;
      };

      checks = forAllSystems (
        pkgs:
        {
          # The package's build runs the workspace's tests that need no
          # namespaces (see pkgs/chock.nix).
          package = self.packages.${pkgs.stdenv.hostPlatform.system}.default;

          # lib/zon.nix still renders the checked-in fixture the Rust suite
          # parses, and refuses what ZON cannot hold.
          zon =
            assert (import ./lib/tests/zon.nix).failures == [ ];
            assert (import ./lib/tests/modules.nix).failures == [ ];
            pkgs.runCommand "chock-zon-check" { } "touch $out";

          home-manager-module =
            (home-manager.lib.homeManagerConfiguration {
              inherit pkgs;
              modules = [
                self.homeManagerModules.default
                {
                  home = {
                    username = "alice";
                    homeDirectory = "/home/alice";
                    stateVersion = "25.11";
                  };
                  services.chock = {
                    enable = true;
                    serve.enable = true;
                    settings.model = "local/qwen2.5-coder";
                  };
                }
              ];
            }).activationPackage;
        }
        // nixpkgs.lib.optionalAttrs (pkgs.stdenv.hostPlatform.system == "x86_64-linux") (
          import ./vm-tests {
            inherit pkgs;
            module = self.nixosModules.default;
          }
        )
      );
    };
}
