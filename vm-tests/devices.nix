# services.chock.devices: the udev rules file is installed where udev reads
# it, before 73-seat-late.rules, with uaccess and group chock.
{ common }:
{
  name = "chock-devices";
  nodes.machine = {
    imports = [ common.node ];
    services.chock.devices = [
      {
        vendor = "1d50";
        product = "6018";
      }
      { serial = "A10KZ3XQ"; }
    ];
  };

  testScript = ''
    machine.wait_for_unit("multi-user.target")
    rules = machine.succeed("cat /etc/udev/rules.d/70-chock.rules")
    assert 'ATTR{idVendor}=="1d50", ATTR{idProduct}=="6018", TAG+="uaccess", GROUP="chock", MODE="0660"' in rules, rules
    assert 'ATTRS{serial}=="A10KZ3XQ", TAG+="uaccess", GROUP="chock", MODE="0660"' in rules, rules
    machine.succeed("getent group chock")
    # Sorted before the rules that act on uaccess.
    names = machine.succeed("ls /etc/udev/rules.d").split()
    assert "70-chock.rules" in names, names
    machine.succeed("udevadm verify /etc/udev/rules.d/70-chock.rules")
  '';
}
