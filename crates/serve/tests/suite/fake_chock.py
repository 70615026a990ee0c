#!/usr/bin/python3
# A stand-in for `chock run`, driven the way the daemon drives it:
#   run --session-id <id> -- <project> <message>
# It writes a session log in the documented format (one JSON event a line,
# ids from 1, O_APPEND, under an exclusive flock), asks one question, waits
# for its answer on approve.sock (docs/protocol.md), records the answer and
# ends. A message starting "quiet:" asks nothing and ends at once.
import datetime, fcntl, json, os, socket, sys

args = sys.argv[1:]
state = os.environ["CHOCK_STATE_DIR"]
if args[:2] == ["run", "--session-id"] and args[3] == "--":
    sid, message = args[2], args[5]
else:
    sys.exit("fake chock: unexpected arguments %r" % args)

sdir = os.path.join(state, "sessions", sid)
os.makedirs(sdir, exist_ok=True)
log = open(os.path.join(sdir, "log.jsonl"), "a+")
fcntl.flock(log, fcntl.LOCK_EX | fcntl.LOCK_NB)
next_id = 1


def emit(kind, **fields):
    global next_id
    at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    event = {"id": next_id, "at": at, "type": kind}
    event.update(fields)
    os.write(log.fileno(), (json.dumps(event) + "\n").encode())
    next_id += 1


emit("session.open", session_id=sid, project=os.getcwd(), model="fake", pid=os.getpid(), chock_version="fake")
emit("user.message", text=message)
if message.startswith("quiet:"):
    emit("assistant.message", text="Nothing to do.")
    emit("session.end", reason="done", detail="finished")
    sys.exit(0)

approve = os.path.join(sdir, "approve.sock")
listener = socket.socket(socket.AF_UNIX)
listener.bind(approve)
listener.listen(8)
emit("title.set", title="Push the branch")
emit("assistant.message", text="The tests pass. I would like to push the branch.")
emit("approval.request", request_id="r1", action="exec.git.push", question="Run git push origin main?")
answer = None
while answer is None:
    conn, _ = listener.accept()
    line = conn.makefile().readline().rstrip("\n")
    words = line.split(" ")
    if len(words) == 3 and words[0] == "answer" and words[2] in ("yes", "no"):
        if words[1] == "r1":
            answer = words[2]
            emit("approval.answer", request_id="r1", answer=answer, by="daemon")
            conn.sendall(b"ok\n")
        else:
            conn.sendall(("error no pending request %s\n" % words[1]).encode())
    else:
        conn.sendall(b"error malformed answer\n")
    conn.close()
listener.close()
os.unlink(approve)
emit("assistant.message", text="Pushed." if answer == "yes" else "Not pushing, as you said.")
emit("session.end", reason="done", detail="finished")
