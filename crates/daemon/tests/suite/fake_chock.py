#!/usr/bin/python3
# A stand-in for `chock run`, driven the way the daemon drives it:
#   run --session-id <id> -- <project> <message>
#   run --adopt <id>
# It writes a session log in the documented format (one JSON event a line,
# ids from 1, O_APPEND, under an exclusive flock), answers approvals on
# approve.sock, and ends when `release` appears beside the log.
import datetime, fcntl, json, os, socket, sys, threading, time

BEHAVIOUR = "@BEHAVIOUR@"
args = sys.argv[1:]
state = os.environ["CHOCK_STATE_DIR"]
if args[:2] == ["run", "--adopt"]:
    sid, message = args[2], None
elif args[:2] == ["run", "--session-id"] and args[3] == "--":
    sid, message = args[2], args[5]
else:
    sys.exit("fake chock: unexpected arguments %r" % args)
if message and message.startswith("behave:"):
    BEHAVIOUR = message[len("behave:"):]
if BEHAVIOUR == "exit-early":
    sys.exit(3)

sdir = os.path.join(state, "sessions", sid)
os.makedirs(sdir, exist_ok=True)
log = open(os.path.join(sdir, "log.jsonl"), "a+")
fcntl.flock(log, fcntl.LOCK_EX | fcntl.LOCK_NB)
log.seek(0)
next_id = sum(1 for line in log.read().split("\n") if line) + 1
lock = threading.Lock()
pending = set()


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def emit(kind, **fields):
    global next_id
    with lock:
        event = {"id": next_id, "at": now(), "type": kind}
        event.update(fields)
        os.write(log.fileno(), (json.dumps(event) + "\n").encode())
        next_id += 1


def serve_approvals(listener):
    while True:
        conn, _ = listener.accept()
        line = conn.makefile().readline().rstrip("\n")
        words = line.split(" ")
        if len(words) == 3 and words[0] == "answer" and words[2] in ("yes", "no"):
            if words[1] in pending:
                pending.discard(words[1])
                emit("approval.answer", request_id=words[1], answer=words[2], by="daemon")
                conn.sendall(b"ok\n")
            else:
                conn.sendall(("error no pending request %s\n" % words[1]).encode())
        else:
            conn.sendall(b"error malformed answer\n")
        conn.close()


if message is None:
    emit("session.open", session_id=sid, project=os.getcwd(), model="fake", pid=os.getpid(), chock_version="fake")
else:
    emit("session.open", session_id=sid, project=os.getcwd(), model="fake", pid=os.getpid(), chock_version="fake")
    emit("user.message", text=message)
if BEHAVIOUR == "crash":
    time.sleep(3600)

approve = os.path.join(sdir, "approve.sock")
if os.path.exists(approve):
    os.unlink(approve)
listener = socket.socket(socket.AF_UNIX)
listener.bind(approve)
listener.listen(8)
threading.Thread(target=serve_approvals, args=(listener,), daemon=True).start()
if message is not None:
    pending.add("r1")
    emit("approval.request", request_id="r1", action="exec.git.push", question="push?")

release = os.path.join(sdir, "release")
deadline = time.time() + 120
while not os.path.exists(release) and time.time() < deadline:
    time.sleep(0.01)
emit("assistant.message", text="done")
emit("turn.end")
os.unlink(approve)
emit("session.end", reason="done", detail="finished")
