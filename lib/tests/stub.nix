# Just enough of nixpkgs' `lib` and `pkgs` to call modules/nixos.nix and
# modules/home-manager.nix as functions, on a machine with no nixpkgs, and a
# `resolve` that applies mkIf/mkMerge the way the module system would for a
# single module. It does not check option types (that is the module system's
# job, exercised by vm-tests/refusals.nix on a machine with nixpkgs); it lets
# lib/tests/modules.nix check what the modules define from a given `cfg`.
let
  inherit (builtins)
    attrNames
    concatLists
    foldl'
    isAttrs
    isList
    listToAttrs
    mapAttrs
    replaceStrings
    ;

  type = name: {
    _type = "option-type";
    inherit name;
  };
  typeFn = name: _: type name;

  lib = rec {
    mkIf = condition: content: {
      _type = "if";
      inherit condition content;
    };
    mkMerge = contents: {
      _type = "merge";
      inherit contents;
    };
    mkOverride = priority: content: {
      _type = "override";
      inherit priority content;
    };
    mkDefault = mkOverride 1000;
    mkForce = mkOverride 50;
    mkOption = attrs: attrs // { _type = "option"; };
    mkEnableOption =
      name:
      mkOption {
        type = types.bool;
        default = false;
        description = "Whether to enable ${name}.";
      };
    mkPackageOption =
      pkgs: name: _:
      mkOption {
        type = types.package;
        default = pkgs.${name};
      };
    mkOptionType = attrs: attrs // { _type = "option-type"; };
    literalExpression = text: {
      _type = "literalExpression";
      inherit text;
    };
    types = {
      str = type "str";
      bool = type "bool";
      int = type "int";
      float = type "float";
      path = type "path";
      package = type "package";
      nullOr = typeFn "nullOr";
      attrsOf = typeFn "attrsOf";
      listOf = typeFn "listOf";
      oneOf = typeFn "oneOf";
    };
    options.mergeEqualOption = _loc: defs: (builtins.head defs).value;
    showOption = builtins.concatStringsSep ".";
    concatMapStringsSep = sep: f: list: builtins.concatStringsSep sep (map f list);
    inherit mapAttrs;
    mapAttrsToList = f: attrs: map (n: f n attrs.${n}) (attrNames attrs);
    escape = chars: replaceStrings chars (map (c: "\\${c}") chars);
    getBin = drv: drv;
    optionalString = cond: string: if cond then string else "";
    getExe' = drv: name: "${drv}/bin/${name}";
    platforms.linux = [
      "x86_64-linux"
      "aarch64-linux"
    ];
    hm.assertions.assertPlatform = module: pkgs: platforms: {
      assertion = builtins.elem pkgs.stdenv.hostPlatform.system platforms;
      message = "${module}: not available on ${pkgs.stdenv.hostPlatform.system}";
    };
  };

  drv = name: {
    type = "derivation";
    outPath = "/nix/store/00000000000000000000000000000000-${name}";
    inherit name;
  };

  pkgs = system: {
    chock = drv "chock";
    git = drv "git";
    nix = drv "nix";
    stdenv.hostPlatform.system = system;
    stdenv.buildPlatform.canExecute = _: true;
    closureInfo = { rootPaths }: drv "closure-info" // { inherit rootPaths; };
    writeTextFile = args: drv args.name // { inherit (args) destination text; };
  };

  # One module's config with its mkIf and mkMerge applied: a false mkIf
  # defines nothing, merges combine attribute sets and concatenate lists, and
  # an mkOverride is kept (as `{ _type = "override"; ... }`) so a test can
  # see it.
  resolve =
    v:
    if isAttrs v && v ? _type && v._type == "if" then
      (if v.condition then resolve v.content else { })
    else if isAttrs v && v ? _type && v._type == "merge" then
      foldl' merge { } (map resolve v.contents)
    else if isAttrs v && !(v ? _type) && !(v ? outPath) then
      mapAttrs (_: resolve) v
    else
      v;

  merge =
    a: b:
    a
    // listToAttrs (
      map (n: {
        name = n;
        value =
          if !(a ? ${n}) then
            b.${n}
          else if isList a.${n} && isList b.${n} then
            a.${n} ++ b.${n}
          else if isAttrs a.${n} && isAttrs b.${n} && !(a.${n} ? _type) && !(b.${n} ? _type) then
            merge a.${n} b.${n}
          else
            throw "stub: two definitions of ${n}";
      }) (attrNames b)
    );
in
{
  inherit
    lib
    pkgs
    resolve
    drv
    ;
  concat = concatLists;
}
