# A session in services.chock.devShell: the module writes the shell's
# closure and variables into alice's config.zon, the script provider's
# session runs `hello` (a program of the shell), and the log shows it
# decided at exec.devshell.hello, allowed, with the shell's notice first.
{ common }:
{
  name = "chock-devshell";
  nodes.machine =
    { pkgs, lib, ... }:
    let
      turns = pkgs.writeText "devshell-turns.jsonl" ''
        {"tool_calls": [{"name": "run_command", "arguments": {"command": ["hello"]}}]}
        {"text": "ran hello from the dev shell"}
      '';
    in
    {
      imports = [ common.node ];
      services.chock.devShell = pkgs.mkShell { nativeBuildInputs = [ pkgs.hello ]; };
      services.chock.settings.providers.script.path = lib.mkForce "${turns}";
    };

  testScript = common.prelude + ''
    machine.wait_for_unit("multi-user.target")
    machine.wait_for_unit("user@1000.service")
    machine.wait_until_succeeds(alice("systemctl --user is-active chock-daemon.socket"))

    with subtest("the dev shell's closure and variables reached alice's config"):
        machine.succeed(alice("grep -q '.closure = \"/nix/store/' ~/.config/chock/config.zon"))
        machine.succeed(alice("grep -q 'chock-devshell-env.json' ~/.config/chock/config.zon"))

    with subtest("a session's command in the dev shell is exec.devshell and runs"):
        machine.succeed(alice(
            "mkdir -p ~/project && cd ~/project && git init -q && "
            "git -c user.name=a -c user.email=a@b commit -q --allow-empty -m init"))
        reply = daemon_says("start /home/alice/project\trun hello")
        assert reply[1].startswith("ok "), reply
        session_id, log_path = reply[1][3:].split("\t")
        machine.wait_until_succeeds(alice(f"grep -q '\"type\":\"session.end\"' {log_path}"), timeout=120)
        machine.succeed(alice(f"grep -q '\"subject\":\"devshell\"' {log_path}"))
        machine.succeed(alice(f"grep '\"type\":\"decision\"' {log_path} | grep -q '\"action\":\"exec.devshell.hello\".*\"decision\":\"allow\"'"))
        machine.succeed(alice(f"grep -q 'Hello, world!' {log_path}"))
  '';
}
