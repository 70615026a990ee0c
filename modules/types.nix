# Option types shared by the NixOS and home-manager modules.
#
# The ZON value type is what makes "a settings value ZON cannot hold" an
# evaluation error that names the option: the module system reports a
# definition that no branch accepts as "A definition for option
# `services.chock.settings.<path>' is not of type `ZON value ...'". It is
# recursive like nixpkgs' JSON format type, so nested settings from several
# modules merge, and mkDefault works on a leaf. lib/zon.nix checks again when
# it writes the file (for the one thing a type cannot see: a float this Nix
# would print inexactly), again naming the option.
{ lib }:
let
  inherit (lib) types mkOptionType;
  zon = import ../lib/zon.nix;
  devices = import ../lib/devices.nix;

  enumLiteral = mkOptionType {
    name = "zonEnum";
    description = "ZON enum literal (zon.enum \"name\")";
    check = v: zon.isEnum v && zon.representable v;
    merge = lib.options.mergeEqualOption;
  };
in
rec {
  # One ZON value: null, a boolean, an integer, a float, a string, a path, a
  # package (written as its store path), an enum literal, or a list or
  # attribute set of ZON values.
  value =
    (types.nullOr (
      types.oneOf [
        types.bool
        types.int
        types.float
        types.str
        types.path
        enumLiteral
        types.package
        (types.attrsOf value)
        (types.listOf value)
      ]
    ))
    // {
      description = "ZON value (null, bool, int, float, string, path, package, zon.enum \"name\", or a list or attribute set of these)";
    };

  # A whole .zon file: one struct.
  file = types.attrsOf value;

  # The check only asks for an attribute set; merge is where an entry is
  # checked, so that a bad one is refused with what is wrong with it
  # ("...vendor = "1D50": hex digits must be lower case; write "1d50"")
  # rather than only with the type's description.
  device = mkOptionType {
    name = "chockDevice";
    description = ''USB device { vendor = "1d50"; product = "6018"; } or serial adapter { serial = "A10KZ3XQ"; }, USB ids four lower-case hex digits'';
    check = builtins.isAttrs;
    merge =
      loc: defs:
      let
        value = lib.options.mergeEqualOption loc defs;
        found = devices.entryProblems (lib.showOption loc) value;
      in
      if found == [ ] then
        value
      else
        throw ("invalid device:\n" + lib.concatMapStringsSep "\n" (p: "  - ${p}") found);
  };
}
