# Inputs that must stop evaluation, each with a piece of the error message
# it must print (which names the option). lib/tests/run.sh evaluates every
# `expr` and checks both.
let
  zon = import ../zon.nix;
  devices = import ../devices.nix;
  stub = import ./stub.nix;
  chockTypes = import ../../modules/types.nix { inherit (stub) lib; };
in
{
  # What the module system prints for a bad entry of services.chock.devices.
  device-type-upper-case = {
    expr = chockTypes.device.merge [ "services" "chock" "devices" "[definition 1-entry 1]" ] [
      {
        value = {
          vendor = "1D50";
          product = "6018";
        };
      }
    ];
    error = "services.chock.devices.[definition 1-entry 1].vendor = \"1D50\": hex digits must be lower case; write \"1d50\"";
  };
  settings-function = {
    expr = zon.render "services.chock.settings" {
      policy.rules = [ { decision = x: x; } ];
    };
    error = "services.chock.settings.policy.rules[0].decision: a function cannot be written as ZON";
  };
  settings-unmerged-mkif = {
    expr = zon.render "services.chock.settings" {
      model = {
        _type = "if";
        condition = true;
        content = "x";
      };
    };
    error = "services.chock.settings.model: a value of _type \"if\" is not ZON";
  };
  settings-empty-name = {
    expr = zon.render "services.chock.settings" { "" = 1; };
    error = "services.chock.settings: an empty attribute name cannot be a ZON field name";
  };
  settings-empty-enum = {
    expr = zon.render "services.chock.settings" { decision = zon.enum ""; };
    error = "services.chock.settings.decision: an enum literal cannot be empty";
  };
  settings-not-a-struct = {
    expr = zon.render "services.chock.orgBundle" [ 1 ];
    error = "services.chock.orgBundle: must be an attribute set";
  };
  device-upper-case = {
    expr = devices.udevRules "services.chock.devices" [
      {
        vendor = "1D50";
        product = "6018";
      }
    ];
    error = "services.chock.devices[0].vendor = \"1D50\": hex digits must be lower case; write \"1d50\"";
  };
  device-five-digits = {
    expr = devices.udevRules "services.chock.devices" [
      {
        vendor = "1d50";
        product = "60180";
      }
    ];
    error = "services.chock.devices[0].product = \"60180\": a USB id is exactly four hex digits";
  };
  device-missing-product = {
    expr = devices.udevRules "services.chock.devices" [ { vendor = "1d50"; } ];
    error = "services.chock.devices[0]: has [\"vendor\"]; a device is";
  };
  device-serial-with-dot = {
    expr = devices.udevRules "services.chock.devices" [ { serial = "FT.1"; } ];
    error = "services.chock.devices[0].serial = \"FT.1\": a serial is 1 to 64 letters";
  };
}
