"""Run a command on a pseudo-terminal and answer one prompt, as a person would.

Usage: answer.py <prompt substring> <answer> -- <command...>
Prints everything the command wrote to the terminal; exits with its status.
"""
import os
import pty
import select
import sys
import time

prompt, answer = sys.argv[1].encode(), sys.argv[2]
command = sys.argv[sys.argv.index("--") + 1 :]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(command[0], command)
seen, sent, deadline = b"", False, time.monotonic() + 30
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        seen += data
    if not sent and prompt in seen:
        os.write(fd, (answer + "\n").encode())
        sent = True
else:
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
