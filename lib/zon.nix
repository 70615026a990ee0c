# ZON (Zig Object Notation) from Nix values, with builtins only.
#
# This file owns the one translation from a Nix attribute set to the text of
# a config.zon or org.zon. It uses nothing but builtins so that it can be
# evaluated, and tested, by a bare `nix-instantiate --eval` on a machine
# without nixpkgs; the NixOS and home-manager modules import it as is.
#
# Mapping (docs/nix.md has the table with examples):
#   attribute set   -> .{ .name = value, ... }   (names sorted, as Nix sorts them)
#   list            -> .{ value, ... }
#   empty set/list  -> .{}
#   string          -> "..." with Zig escapes
#   integer, float  -> 42, 1.5 (a float always has a '.' or an exponent)
#   true/false/null -> true/false/null
#   path            -> the store path it is copied to, as a string
#   derivation      -> its output path, as a string
#   enum "allow"    -> .allow  (an enum literal; see `enum` below)
#
# What ZON cannot hold is refused with a message that names the option and
# the place inside it: a function, an attribute set carrying some other
# `_type` (an unmerged mkIf, a literalExpression), an empty attribute name,
# an empty enum literal, and a float this Nix cannot print exactly.
let
  inherit (builtins)
    attrNames
    concatLists
    concatStringsSep
    elem
    elemAt
    filter
    fromJSON
    genList
    isAttrs
    isBool
    isFloat
    isFunction
    isInt
    isList
    isPath
    isString
    length
    match
    replaceStrings
    throw
    toJSON
    typeOf
    ;

  hexDigits = [ "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "a" "b" "c" "d" "e" "f" ];
  hex2 = n: elemAt hexDigits (n / 16) + elemAt hexDigits (n - (n / 16) * 16);

  # Nix string literals cannot spell most control characters, but JSON can,
  # so the table of characters to escape is built through fromJSON.
  controlCodes = filter (n: !(elem n [ 9 10 13 ])) (genList (i: i + 1) 31 ++ [ 127 ]);
  controlChars = map (n: fromJSON "\"\\u00${hex2 n}\"") controlCodes;
  controlEscapes = map (n: "\\x${hex2 n}") controlCodes;

  escape =
    s:
    replaceStrings
      ([ "\\" "\"" "\n" "\r" "\t" ] ++ controlChars)
      ([ "\\\\" "\\\"" "\\n" "\\r" "\\t" ] ++ controlEscapes)
      s;

  quote = s: "\"${escape s}\"";

  # Zig's keywords, and the primitive values, cannot stand as a bare field
  # name or enum literal; `.@"..."` can hold any name at all.
  zigKeywords = [
    "addrspace" "align" "allowzero" "and" "anyframe" "anytype" "asm" "break"
    "callconv" "catch" "comptime" "const" "continue" "defer" "else" "enum"
    "errdefer" "error" "export" "extern" "fn" "for" "if" "inline" "linksection"
    "noalias" "noinline" "nosuspend" "opaque" "or" "orelse" "packed" "pub"
    "resume" "return" "struct" "suspend" "switch" "test" "threadlocal" "try"
    "union" "unreachable" "usingnamespace" "var" "volatile" "while"
    "true" "false" "null" "undefined"
  ];

  isBareIdentifier = s: match "[A-Za-z_][A-Za-z0-9_]*" s != null && !(elem s zigKeywords);

  identifier = s: if isBareIdentifier s then s else "@${quote s}";

  isEnum = v: isAttrs v && (v._type or null) == "zon-enum";
  isDerivationLike = v: isAttrs v && !(v ? _type) && v ? outPath;

  # How a place inside the option is written in a message: the way a person
  # would write it in their configuration.
  attrStep = n: if match "[A-Za-z_][A-Za-z0-9_'-]*" n != null then ".${n}" else ".${toJSON n}";
  listStep = i: "[${toString i}]";

  expected = "give a string, number, boolean, null, list, attribute set or zon.enum \"name\"";

  # Every reason `v` cannot be written, each naming where it sits.
  problemsAt =
    where: v:
    if isFunction v then
      [ "${where}: a function cannot be written as ZON; ${expected}" ]
    else if isFloat v then
      (
        if fromJSON (toJSON v) == v then
          [ ]
        else
          [
            "${where}: the float ${toJSON v} (as this Nix prints it) is not the value you wrote; this Nix cannot write it exactly as ZON, so write it as a string or with fewer digits"
          ]
      )
    else if isEnum v then
      (
        let
          extra = filter (n: n != "_type" && n != "value") (attrNames v);
        in
        if !(v ? value) || !(isString v.value) then
          [ "${where}: an enum literal needs a string value, as in zon.enum \"allow\"" ]
        else if v.value == "" then
          [ "${where}: an enum literal cannot be empty; write zon.enum \"name\"" ]
        else if extra != [ ] then
          [ "${where}: an enum literal has only a value, not ${concatStringsSep ", " extra}" ]
        else
          [ ]
      )
    else if isDerivationLike v then
      [ ]
    else if isAttrs v && v ? _type then
      [
        "${where}: a value of _type ${toJSON v._type} is not ZON (an unmerged mkIf or mkMerge, or a documentation literal?); ${expected}"
      ]
    else if isAttrs v then
      concatLists (
        map (
          n:
          if n == "" then
            [ "${where}: an empty attribute name cannot be a ZON field name" ]
          else
            problemsAt "${where}${attrStep n}" v.${n}
        ) (attrNames v)
      )
    else if isList v then
      concatLists (genList (i: problemsAt "${where}${listStep i}" (elemAt v i)) (length v))
    else if isString v || isInt v || isBool v || v == null || isPath v then
      [ ]
    else
      [ "${where}: a ${typeOf v} cannot be written as ZON; ${expected}" ];

  formatFloat =
    f:
    let
      s = toJSON f;
      hasDot = match ".*[.].*" s != null;
      exponent = match "([^e]*)(e.*)" s;
    in
    if hasDot then
      s
    else if exponent != null then
      "${elemAt exponent 0}.0${elemAt exponent 1}"
    else
      "${s}.0";

  indentOf = depth: concatStringsSep "" (genList (_: "    ") depth);

  # `depth` is the nesting of the value being written; its members sit one
  # level deeper, and its closing brace at its own level.
  write =
    depth: v:
    let
      inner = indentOf (depth + 1);
      closing = indentOf depth;
      block = items: if items == [ ] then ".{}" else ".{\n${concatStringsSep "" items}${closing}}";
    in
    if v == null then
      "null"
    else if isBool v then
      (if v then "true" else "false")
    else if isInt v then
      toString v
    else if isFloat v then
      formatFloat v
    else if isString v then
      quote v
    else if isPath v then
      quote "${v}"
    else if isEnum v then
      ".${identifier v.value}"
    else if isDerivationLike v then
      quote "${v.outPath}"
    else if isAttrs v then
      block (map (n: "${inner}.${identifier n} = ${write (depth + 1) v.${n}},\n") (attrNames v))
    else if isList v then
      block (map (x: "${inner}${write (depth + 1) x},\n") v)
    else
      throw "zon.nix: no writer for a ${typeOf v}";
in
rec {
  # An enum literal: `enum "allow"` is written `.allow`.
  enum = name: {
    _type = "zon-enum";
    value = name;
  };

  inherit isEnum;

  # Every reason `value` cannot be written as ZON, each message starting with
  # `option` and the place inside it. Empty when it can.
  problems =
    option: value:
    if isAttrs value && !(isEnum value) && !(isDerivationLike value) then
      problemsAt option value
    else
      [ "${option}: must be an attribute set, since a ZON file holds one struct" ];

  # True when `value` can be written as ZON (it need not be a struct).
  representable = value: problemsAt "value" value == [ ];

  # The text of a .zon file holding `value`, or an evaluation error naming
  # `option` and the first place inside it that ZON cannot hold.
  render =
    option: value:
    let
      found = problems option value;
    in
    if found == [ ] then
      "${write 0 value}\n"
    else
      throw (
        "cannot render ${option} as ZON:\n"
        + concatStringsSep "\n" (map (p: "  - ${p}") found)
      );
}
