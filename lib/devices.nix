# USB and serial devices a machine grants to chock sessions, with builtins only.
#
# This file owns the shape of one entry of `services.chock.devices`, the
# checks on it, the policy action name it corresponds to, and the udev rules
# it becomes. Builtins only, for the same reason as zon.nix: the checks and
# the rules text can be evaluated and tested without nixpkgs.
#
# An entry is either { vendor = "1d50"; product = "6018"; } (a USB device,
# action device.usb.<vendor>.<product>; its tty and hidraw nodes too) or
# { serial = "A10KZ3XQ"; } (a serial adapter with a serial number of its own,
# action device.tty.serial.<serial>). Ids are four lower-case hex digits,
# because the action name is written in lower case and udev compares the
# sysfs attribute, which the kernel prints in lower case, byte for byte.
let
  inherit (builtins)
    attrNames
    concatLists
    concatStringsSep
    elemAt
    genList
    isAttrs
    isString
    length
    match
    sort
    toJSON
    ;

  hexId = s: isString s && match "[0-9a-f]{4}" s != null;
  # A serial becomes the last label of an action name and a udev match
  # string: a dot would name a class of actions, and glob or quote characters
  # would change what udev matches.
  serialOk = s: isString s && match "[A-Za-z0-9_-]{1,64}" s != null;

  shapes = "a device is { vendor = \"1d50\"; product = \"6018\"; } or { serial = \"A10KZ3XQ\"; }";

  idProblems =
    where: key: v:
    if !(isString v) then
      [ "${where}.${key}: must be a string of four lower-case hex digits, such as \"1d50\"" ]
    else if hexId v then
      [ ]
    else if match "[0-9A-Fa-f]{4}" v != null then
      [ "${where}.${key} = ${toJSON v}: hex digits must be lower case; write ${toJSON (lowerHex v)}" ]
    else
      [ "${where}.${key} = ${toJSON v}: a USB id is exactly four hex digits, such as \"1d50\"" ];

  lowerHex =
    builtins.replaceStrings [ "A" "B" "C" "D" "E" "F" ] [ "a" "b" "c" "d" "e" "f" ];

  entryProblems =
    where: d:
    if !(isAttrs d) then
      [ "${where}: ${shapes}" ]
    else
      let
        keys = sort (a: b: a < b) (attrNames d);
      in
      if keys == [ "product" "vendor" ] then
        idProblems where "vendor" d.vendor ++ idProblems where "product" d.product
      else if keys == [ "serial" ] then
        (
          if serialOk d.serial then
            [ ]
          else
            [
              "${where}.serial = ${toJSON d.serial}: a serial is 1 to 64 letters, digits, '-' or '_' (it becomes the action device.tty.serial.<serial>)"
            ]
        )
      else
        [ "${where}: has ${toJSON keys}; ${shapes}" ];

  listProblems =
    option: devices:
    if !(builtins.isList devices) then
      [ "${option}: must be a list; ${shapes}" ]
    else
      concatLists (
        genList (i: entryProblems "${option}[${toString i}]" (elemAt devices i)) (length devices)
      );

  grant = ''TAG+="uaccess", GROUP="chock", MODE="0660"'';

  rulesFor =
    d:
    if d ? serial then
      [
        "# device.tty.serial.${d.serial}"
        ''SUBSYSTEM=="tty", ATTRS{serial}=="${d.serial}", ${grant}''
      ]
    else
      let
        ids = ''ATTRS{idVendor}=="${d.vendor}", ATTRS{idProduct}=="${d.product}"'';
      in
      [
        "# device.usb.${d.vendor}.${d.product}"
        ''SUBSYSTEM=="usb", ENV{DEVTYPE}=="usb_device", ATTR{idVendor}=="${d.vendor}", ATTR{idProduct}=="${d.product}", ${grant}''
        ''SUBSYSTEM=="tty", ${ids}, ${grant}''
        ''SUBSYSTEM=="hidraw", ${ids}, ${grant}''
      ];
in
{
  # Every reason the list cannot be used, each naming `option` and the entry.
  problems = listProblems;

  # Every reason one entry cannot be used, each starting with `where`.
  entryProblems = entryProblems;

  # True when one entry has one of the two shapes and valid ids.
  valid = d: entryProblems "device" d == [ ];

  # The policy action a project's rule names to reach this device.
  action =
    d: if d ? serial then "device.tty.serial.${d.serial}" else "device.usb.${d.vendor}.${d.product}";

  # The text of 70-chock.rules, or an evaluation error naming `option`.
  # The number matters: TAG+="uaccess" is acted on by 73-seat-late.rules, so
  # a rule sorting after it would tag the node too late to grant the person
  # at the seat anything. GROUP and MODE cover sessions without a seat (a
  # lingering user's daemon, an ssh login), for members of group chock.
  udevRules =
    option: devices:
    let
      found = listProblems option devices;
    in
    if found != [ ] then
      throw (
        "invalid ${option}:\n" + concatStringsSep "\n" (map (p: "  - ${p}") found)
      )
    else
      concatStringsSep "\n" (
        [
          "# Generated from ${option}: devices chock sessions may be granted."
          "# uaccess gives the node to the person at the seat (it must sort before"
          "# 73-seat-late.rules); group chock covers sessions without a seat."
        ]
        ++ concatLists (map rulesFor devices)
      )
      + "\n";
}
