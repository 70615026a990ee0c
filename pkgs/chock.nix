# The chock package: the workspace's `chock` front and the `chock-full`
# program behind it, built from Cargo.lock.
#
# The check phase runs the workspace's tests except those of the packages
# that need what the Nix build sandbox does not give: user namespaces inside
# the build (chock-sandbox, and chock-runner, chock-daemon and chock-serve
# whose tests run sandboxed commands or make a second user), a browser
# (chock-serve), or the built binary running sessions end to end (chock-e2e).
# `sandboxBoundPackages` is that list; docs/nix.md explains it and
# .ci/run runs every one of them outside Nix.
{
  lib,
  stdenv,
  rustPlatform,
  git,
  sandboxBoundPackages ? [
    "chock-sandbox"
    "chock-runner"
    "chock-daemon"
    "chock-serve"
    "chock-e2e"
  ],
}:
let
  workspace = (builtins.fromTOML (builtins.readFile ../Cargo.toml)).workspace.package;
in
rustPlatform.buildRustPackage {
  pname = "chock";
  inherit (workspace) version;

  src = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions [
      ../Cargo.toml
      ../Cargo.lock
      ../crates
      ../tests
    ];
  };

  cargoLock.lockFile = ../Cargo.lock;

  cargoBuildFlags = [
    "--package"
    "chock"
  ];

  # `chock` is a small front that runs `chock sandbox` itself and hands
  # every other command to chock-full, which it looks for beside itself or
  # in ../libexec/chock: keep the second one off PATH. Then the shell
  # completions and the man pages, which the built program writes from its
  # own command line (so not when it cannot run on the build machine).
  postInstall = ''
    mkdir -p $out/libexec/chock
    mv $out/bin/chock-full $out/libexec/chock/chock-full
  ''
  + lib.optionalString (stdenv.buildPlatform.canExecute stdenv.hostPlatform) ''
    mkdir -p $out/share/bash-completion/completions $out/share/zsh/site-functions \
      $out/share/fish/vendor_completions.d
    $out/bin/chock completions bash > $out/share/bash-completion/completions/chock
    $out/bin/chock completions zsh > $out/share/zsh/site-functions/_chock
    $out/bin/chock completions fish > $out/share/fish/vendor_completions.d/chock.fish
    $out/bin/chock man --dir $out/share/man/man1
  '';

  nativeCheckInputs = [ git ];

  cargoTestFlags = [ "--workspace" ] ++ lib.concatMap (p: [ "--exclude" p ]) sandboxBoundPackages;

  preCheck = ''
    # Tests make git repositories; git wants a home and an identity.
    export HOME=$TMPDIR
    git config --global user.name "chock tests"
    git config --global user.email "tests@chock.invalid"
    git config --global init.defaultBranch main
  '';

  passthru = {
    inherit sandboxBoundPackages;
  };

  meta = {
    description = "Run AI coding agents on Linux with a person in control";
    license = with lib.licenses; [
      mit
      asl20
    ];
    mainProgram = "chock";
    platforms = lib.platforms.linux;
  };
}
