#!/usr/bin/python3
# A stand-in for `chock run`, driven the way the daemon drives it:
#   run --session-id <id> -- <project> <message>
#   run --adopt <id>
# It writes a session log in the documented format (one JSON event a line,
# ids from 1, O_APPEND, under an exclusive flock) and answers approvals on
# approve.sock (docs/protocol.md). What it does after opening the log is its
# behaviour: the one installed (below), or the one a message "behave:<name>"
# names.
#   ends-on-release  asks "push?" (when started with a message), takes any
#                    number of answers, and ends when `release` appears
#                    beside the log
#   ends-on-answer   titles itself, asks one question, and ends once it is
#                    answered, saying whether it pushed
#   quiet            asks nothing and ends at once
#   crash            hangs after opening, until it is killed
#   exit-early       exits 3 before writing anything
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
# A test that races an adopt puts `adopt-delay` beside the log: the child
# waits that long before it takes the lock.
delay = os.path.join(sdir, "adopt-delay")
if message is None and os.path.exists(delay):
    time.sleep(float(open(delay).read() or "1"))
try:
    fcntl.flock(log, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    sys.exit("chock: session %s is owned by another process" % sid)
log.seek(0)
next_id = sum(1 for line in log.read().split("\n") if line) + 1
lock = threading.Lock()
pending = set()
answers = {}
answered = threading.Event()


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def emit(kind, **fields):
    global next_id
    with lock:
        event = {"id": next_id, "at": now(), "type": kind}
        event.update(fields)
        os.write(log.fileno(), (json.dumps(event) + "\n").encode())
        next_id += 1


def ask(question):
    pending.add("r1")
    emit("approval.request", request_id="r1", action="exec.git.push", question=question)


def serve_approvals(listener):
    while True:
        conn, _ = listener.accept()
        line = conn.makefile().readline().rstrip("\n")
        words = line.split(" ")
        if len(words) == 3 and words[0] == "answer" and words[2] in ("yes", "no"):
            if words[1] in pending:
                pending.discard(words[1])
                emit("approval.answer", request_id=words[1], answer=words[2], by="daemon")
                answers[words[1]] = words[2]
                conn.sendall(b"ok\n")
                answered.set()
            else:
                conn.sendall(("error no pending request %s\n" % words[1]).encode())
        else:
            conn.sendall(b"error malformed answer\n")
        conn.close()


emit("session.open", session_id=sid, project=os.getcwd(), model="fake", pid=os.getpid(), chock_version="fake")
if message is not None:
    emit("user.message", text=message)
if BEHAVIOUR == "crash":
    time.sleep(3600)
if BEHAVIOUR == "quiet":
    emit("assistant.message", text="Nothing to do.")
    emit("session.end", reason="done", detail="finished")
    sys.exit(0)

approve = os.path.join(sdir, "approve.sock")
if os.path.exists(approve):
    os.unlink(approve)
listener = socket.socket(socket.AF_UNIX)
listener.bind(approve)
listener.listen(8)
threading.Thread(target=serve_approvals, args=(listener,), daemon=True).start()

if BEHAVIOUR == "ends-on-answer":
    emit("title.set", title="Push the branch")
    emit("assistant.message", text="The tests pass. I would like to push the branch.")
    ask("Run git push origin main?")
    answered.wait()
    os.unlink(approve)
    pushed = answers["r1"] == "yes"
    emit("assistant.message", text="Pushed." if pushed else "Not pushing, as you said.")
    emit("session.end", reason="done", detail="finished")
    sys.exit(0)

if message is not None:
    ask("push?")
release = os.path.join(sdir, "release")
deadline = time.time() + 120
while not os.path.exists(release) and time.time() < deadline:
    time.sleep(0.01)
emit("assistant.message", text="done")
emit("turn.end")
os.unlink(approve)
emit("session.end", reason="done", detail="finished")
