#!/usr/bin/python3
"""Drive `sbx sh ID` under a real pseudo-terminal, as a person would.

usage: pty_drive.py SBX ID DIR MODE
  MODE exit: type a command, check `stty size` against the pty's size,
         resize the pty (the kernel sends SIGWINCH), check again, `exit 5`.
  MODE drop: open the shell, print the line "READY" on stdout and wait for
         the connection to drop (the caller kills the gateway).
  MODE exec: `sbx exec` with the terminal as its stdin: `cat` ends at once
         (the command's stdin is closed), and Ctrl-C typed at the terminal
         reaches a command that traps SIGINT (its status in DIR/rc).
The shell wrapper saves `stty -g` before and after sbx into DIR/before and
DIR/after and sbx's status into DIR/rc. Prints PASS:/FAIL: lines. Waits
for output are bounded at 60 s only so that a broken client cannot hang
the suite; nothing asserts how fast anything is.
"""
import fcntl, os, pty, re, select, struct, sys, termios, time

sbx, sid, d, mode = sys.argv[1:5]
WAIT = 60.0
ok = True


def report(name, good, detail=""):
    global ok
    print(("PASS: " if good else "FAIL: ") + name + ("" if good else " (" + detail + ")"), flush=True)
    ok = ok and good


def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


pid, fd = pty.fork()
if pid == 0:
    set_size(0, 30, 100)
    if mode == "exec":
        script = ('trap : INT; "$SBX" exec "$ID" -- cat; echo "cat-rc=$((40+$?))"; '
                  '"$SBX" exec "$ID" -- sh -c \'trap "echo caught; exit 7" INT; echo STARTED; '
                  'for i in $(seq 120); do sleep 1; done\'; echo $? > "$D/rc"; echo WRAPPER-DONE')
    else:
        script = ('stty -g > "$D/before"; "$SBX" sh "$ID"; echo $? > "$D/rc"; '
                  'stty -g > "$D/after"; echo WRAPPER-DONE')
    os.execve("/bin/sh", ["sh", "-c", script],
              dict(os.environ, D=d, SBX=sbx, ID=sid, TERM="xterm"))

seen = b""


def wait_for(pattern, start=0):
    """Read until pattern (a regex on bytes) matches seen[start:]; the match or None."""
    global seen
    end = time.monotonic() + WAIT
    while True:
        m = re.search(pattern, seen[start:])
        if m:
            return m
        left = end - time.monotonic()
        if left <= 0:
            return None
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        try:
            b = os.read(fd, 65536)
        except OSError:
            return re.search(pattern, seen[start:])
        if not b:
            return re.search(pattern, seen[start:])
        seen += b


def typed(cmd):
    os.write(fd, cmd.encode() + b"\r")


if mode == "exec":
    report("exec: with a terminal as stdin, cat sees EOF at once", wait_for(rb"cat-rc=40") is not None,
           repr(seen[-200:]))
    report("exec: the trapping command started", wait_for(rb"STARTED\r\n") is not None, repr(seen[-200:]))
    os.write(fd, b"\x03")  # Ctrl-C: the terminal sends SIGINT to sbx
    report("exec: Ctrl-C reached the command", wait_for(rb"caught") is not None, repr(seen[-200:]))
    report("exec: sbx ended after it", wait_for(rb"WRAPPER-DONE") is not None, repr(seen[-200:]))
    os.waitpid(pid, 0)
    sys.exit(0 if ok else 1)

report("sh: the remote prompt shows", wait_for(rb"\$ ") is not None, repr(seen[-200:]))
# a command typed runs: its output is computed, so an echo of the typing
# cannot match it
mark = len(seen)
typed("echo $((6*7))-ok")
report("sh: a typed command runs", wait_for(rb"42-ok", mark) is not None, repr(seen[-200:]))

if mode == "exit":
    mark = len(seen)
    typed("stty size")
    m = wait_for(rb"[\r\n](\d+) (\d+)\r\n", mark)
    report("sh: stty size shows the pty's size at start", bool(m) and m.group(1, 2) == (b"30", b"100"),
           repr(m.group(0) if m else seen[-200:]))
    set_size(fd, 40, 132)  # the kernel signals SIGWINCH to sbx
    # the resize goes out as a message while this keeps typing; a shell
    # reads its size at each command, so ask until the new one shows (a
    # strict order exists only inside the gateway, which has its own test)
    got = None
    for _ in range(20):
        mark = len(seen)
        typed("stty size")
        m = wait_for(rb"[\r\n](\d+) (\d+)\r\n", mark)
        if m and m.group(1, 2) == (b"40", b"132"):
            got = m
            break
        time.sleep(0.2)
    report("sh: a resize is seen by stty size", got is not None, repr(seen[-300:]))
    typed("exit 5")
    report("sh: the wrapper goes on after sbx", wait_for(rb"WRAPPER-DONE") is not None, repr(seen[-200:]))
else:
    print("READY", flush=True)
    report("sh: the wrapper goes on after the drop", wait_for(rb"WRAPPER-DONE") is not None, repr(seen[-200:]))

_, status = os.waitpid(pid, 0)
sys.exit(0 if ok else 1)
