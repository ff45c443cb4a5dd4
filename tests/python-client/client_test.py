"""The Python client (clients/python, installed into a throwaway venv by
run.sh) against the real gateway, runner and sandboxes: the flows of the
JavaScript client's suite (tests/client), sync and asyncio, plus streams cut
mid-message by a proxy and resumed byte for byte. GW_URL, GW_KEY and GW_PORT
come from run.sh; SANDBOX_URL and SANDBOX_API_KEY are set to them too."""
import asyncio
import hashlib
import io
import os
import re
import sys

import sbxgw
from sbxgw import (AsyncSandbox, Client, ConflictError, InvalidError, NotFoundError, Sandbox,
                   SandboxError, UnauthorizedError)
from cut_proxy import CutProxy
from harness import run, test

URL, KEY, PORT = os.environ["GW_URL"], os.environ["GW_KEY"], int(os.environ["GW_PORT"])
TOP = os.environ["TOP"]  # the checkout
client = Client(URL, KEY)
state = {}


def eq(got, want, what=""):
    assert got == want, f"{what}: got {got!r}, want {want!r}"


def raises(cls, fn, check=lambda e: True):
    try:
        fn()
    except cls as e:
        assert check(e), f"{type(e).__name__} {e.status} {e.code}: {e.message}"
        return e
    raise AssertionError(f"no {cls.__name__} raised")


def text(chunks, stream):
    return b"".join(c.data for c in chunks if c.stream == stream).decode()


def runs(chunks):
    """(stream, bytes) runs with consecutive chunks of one stream merged: the
    order of the bytes across both streams, whatever the chunk boundaries."""
    out = []
    for c in chunks:
        if out and out[-1][0] == c.stream:
            out[-1] = (c.stream, out[-1][1] + c.data)
        else:
            out.append((c.stream, c.data))
    return out


def contiguous(chunks, since=0):
    at = since
    for c in chunks:
        eq(c.offset, at, "offset")
        at += len(c.data)


# A program whose output is spread over ~2 s on both streams, each line a chunk of
# its own (it waits until the agent has read each line), as in tests/client. With
# PACED_GO set it prints nothing after "out 0" until that file exists (then "nogo"
# after 30 s): a reader that makes the file on seeing "out 0" proves it came live.
PACED = ["python3", "-u", "-c", "\n".join([
    "import fcntl, os, struct, sys, termios, time",
    "def taken(f):",
    "    end = time.time() + 30",
    "    while struct.unpack('i', fcntl.ioctl(f, termios.FIONREAD, b'0000'))[0] and time.time() < end:",
    "        time.sleep(0.01)",
    "def say(line, f):",
    "    print(line, file=f, flush=True)",
    "    taken(f)",
    "go = os.environ.get('PACED_GO')",
    "for i in range(8):",
    "    say(f'out {i}', sys.stdout)",
    "    if i % 3 == 2: say(f'err {i}', sys.stderr)",
    "    end = time.time() + 30",
    "    while go and i == 0 and not os.path.exists(go) and time.time() < end:",
    "        time.sleep(0.05)",
    "    if go and i == 0 and not os.path.exists(go): say('nogo', sys.stdout)",
    "    time.sleep(0.25)",
    "sys.exit(5)",
])]
PACED_OUT = "".join(f"out {i}\n" for i in range(8))
PACED_ERR = "err 2\nerr 5\n"

# 240 000 bytes on stdout and 22 500 on stderr, every byte value, in writes of at
# most 4000 bytes (one pipe read each); after half of it the program waits for
# the file argv[1] (60 s, then "nogo"), so the first cut falls while it runs.
BIG = ["python3", "-c", "\n".join([
    "import os, sys, time",
    "def block(i, n): return bytes((i * 7 + j) % 256 for j in range(n))",
    "for i in range(60):",
    "    os.write(1, block(i, 4000))",
    "    if i % 4 == 3: os.write(2, block(i + 1000, 1500))",
    "    if i == 29:",
    "        end = time.time() + 60",
    "        while not os.path.exists(sys.argv[1]) and time.time() < end: time.sleep(0.05)",
    "        if not os.path.exists(sys.argv[1]): os.write(1, b'nogo')",
])]


def big_expected():
    def block(i, n):
        return bytes((i * 7 + j) % 256 for j in range(n))
    out = b"".join(block(i, 4000) for i in range(60))
    err = b"".join(block(i + 1000, 1500) for i in range(60) if i % 4 == 3)
    return out, err


CUT_AFTER = 50_003  # bytes of a cut connection, 101 head and frame headers included


@test("package: installed in the venv with py.typed, not imported from the source tree")
def _():
    assert sys.prefix != sys.base_prefix, "not in a venv"
    assert sbxgw.__file__.startswith(sys.prefix), sbxgw.__file__
    assert os.path.exists(os.path.join(os.path.dirname(sbxgw.__file__), "py.typed"))
    eq(sbxgw.__version__, "0.1.0")


@test("errors: docs/errors.md, the README's table and the client's mapping are the same, sorted by code")
def _():
    from sbxgw._errors import CODE_CLASSES

    def table(path):
        rows = re.findall(r"^\| `([a-z_]+)` \| ([0-9, ]+) \| `(\w+)` \|", open(path).read(), re.M)
        return [(code, cls) for code, _, cls in rows]
    doc = table(os.path.join(TOP, "docs/errors.md"))
    eq(doc, table(os.path.join(TOP, "clients/python/README.md")), "README vs docs/errors.md")
    eq([c for c, _ in doc], sorted(c for c, _ in doc), "sorted by code")
    eq(doc, [(c, k.__name__) for c, k in sorted(CODE_CLASSES.items())], "docs vs sbxgw")
    for _, cls in doc:
        assert issubclass(getattr(sbxgw, cls), SandboxError), cls


@test("config: SANDBOX_URL and SANDBOX_API_KEY when no URL or key is given; neither: a clear error")
def _():
    with Client() as c:
        eq(c.api.base, URL.rstrip("/"))
        assert any(i.name == "default" for i in c.images())
    saved = os.environ.pop("SANDBOX_API_KEY")
    try:
        try:
            Client()
            raise AssertionError("a client without a key")
        except ValueError as e:
            assert "SANDBOX_API_KEY" in str(e), e
    finally:
        os.environ["SANDBOX_API_KEY"] = saved


@test("create: a running sandbox with a preview route for port 3000")
def _():
    sbx = Sandbox.create(ports=[3000], timeout_ms=300000)
    state["sbx"] = sbx
    assert sbx.id.startswith("sbx_"), sbx.id
    eq(sbx.status, "running")
    eq(sbx.domain(3000).split("//")[1].split(":")[0], f"3000-{sbx.id}.localhost".lower())
    raises(InvalidError, lambda: sbx.domain(4000), lambda e: e.code == "no_route" and "not declared" in e.message)


@test("get and list find the sandbox; another key does not; an unknown id is not_found")
def _():
    sbx = state["sbx"]
    eq(Sandbox.get(sbx.id).id, sbx.id)
    assert any(s.id == sbx.id for s in Sandbox.list())
    with Client(URL, "not-a-key") as stranger:
        raises(UnauthorizedError, lambda: stranger.get(sbx.id),
               lambda e: e.status == 401 and e.code == "unauthorized")
    raises(NotFoundError, lambda: client.get("sbx_local_aaaaaaaaaaaaaaaaaaaaaaaa"),
           lambda e: e.status == 404 and e.code == "not_found")


@test("errors from real answers: 422 invalid and unknown_isolation as InvalidError, nothing created")
def _():
    before = len(client.list())
    raises(InvalidError, lambda: client.create(image="no-such-image"),
           lambda e: e.status == 422 and e.code == "invalid" and "default" in e.message)
    raises(InvalidError, lambda: client.create(isolation="no-such-driver"),
           lambda e: e.status == 422 and e.code == "unknown_isolation")
    eq(len(client.list()), before, "sandboxes after refused creates")


@test("files: write then read, text and every byte value, parents created; list, mkdir; absent is 404")
def _():
    sbx = state["sbx"]
    binary = bytes(i % 256 for i in range(512))
    sbx.files.write("src/deep/hello.txt", "héllo\nwörld\n")
    sbx.files.write("/home/sandbox/bin.dat", binary, mode=0o600)
    eq(sbx.files.read("src/deep/hello.txt").decode(), "héllo\nwörld\n")
    eq(sbx.files.read("bin.dat"), binary)
    sbx.files.mkdir("made/here")
    names = {e.name: e for e in sbx.files.list("/home/sandbox")}
    eq(names["bin.dat"].size, 512)
    eq(names["bin.dat"].mode & 0o777, 0o600)
    eq(names["made"].type, "dir")
    eq([e.name for e in sbx.files.list("src/deep")], ["hello.txt"])
    raises(NotFoundError, lambda: sbx.files.read("no/such/file"), lambda e: e.status == 404)


@test("files streamed: 5 MiB from a file object and from an iterator, read back piece by piece")
def _():
    sbx = state["sbx"]
    blob = hashlib.sha256(b"seed").digest() * (5 * 1024 * 1024 // 32)
    sbx.files.write("big.bin", io.BytesIO(blob))
    out = io.BytesIO()
    eq(sbx.files.read_into("big.bin", out), len(blob))
    eq(hashlib.sha256(out.getvalue()).hexdigest(), hashlib.sha256(blob).hexdigest())
    pieces = [blob[i:i + 100_000] for i in range(0, len(blob), 100_000)]
    sbx.files.write("big2.bin", iter(pieces), size=len(blob))
    got = list(sbx.files.iter_read("big2.bin"))
    assert len(got) > 1, "read in one piece"
    eq(b"".join(got) == blob, True, "streamed bytes")
    eq(sbx.run(["sha256sum", "big2.bin"]).stdout.split()[0], hashlib.sha256(blob).hexdigest())


@test("run: stdout, stderr and exit code when it ends; env, sudo and cwd")
def _():
    sbx = state["sbx"]
    r = sbx.run(["python3", "-c", "import sys,os; print('out', os.getcwd()); print('err', file=sys.stderr); sys.exit(3)"])
    eq((r.exit_code, r.stdout, r.stderr), (3, "out /home/sandbox\n", "err\n"))
    eq(sbx.run("echo $GREETING; id -u", env={"GREETING": "hi"}).stdout, "hi\n1000\n")
    eq(sbx.run(["id", "-u"], sudo=True, cwd="/tmp").stdout, "0\n")
    eq(sbx.run("pwd", cwd="/tmp").stdout, "/tmp\n")


@test("exec + logs: chunks live and in order on both streams, then the exit")
def _():
    sbx = state["sbx"]
    go = "/tmp/paced-go"
    cmd = sbx.exec(PACED, env={"PACED_GO": go})
    assert cmd.id.startswith("cmd_"), cmd.id
    assert cmd.exit_code is None and cmd.status == "running", cmd.info
    logs = cmd.logs()
    chunks, released = [], None
    for c in logs:
        chunks.append(c)
        if released is None and c.stream == "stdout":
            released = sbx.run(["touch", go])  # the program goes on only once we saw "out 0"
    eq(released.exit_code, 0)
    eq((logs.exit_code, logs.signal), (5, None))
    eq(text(chunks, "stdout"), PACED_OUT, "no 'nogo': the first line came while the program waited")
    eq(text(chunks, "stderr"), PACED_ERR)
    assert sum(c.stream == "stdout" for c in chunks) >= 4, "several separate chunks"
    contiguous(chunks)
    order = b"".join(c.data for c in chunks).decode()
    assert order.index("out 2") < order.index("err 2") < order.index("out 3"), order
    eq(cmd.wait().exit_code, 5)


@test("since: a late reader resumes at any byte offset, nothing lost or doubled")
def _():
    cmd = state["sbx"].exec(PACED)
    whole = cmd.logs().read_all()
    for since in (1, 7, len(whole) - 3, len(whole)):
        logs = cmd.logs(since=since)
        chunks = list(logs)
        eq(b"".join(c.data for c in chunks), whole[since:], f"since={since}")
        contiguous(chunks, since)
        eq(logs.exit_code, 5)


@test("a socket dropped mid-run is reopened with since: output whole, once")
def _():
    cmd = state["sbx"].exec(PACED)
    logs = cmd.logs()
    chunks = []
    for c in logs:
        chunks.append(c)
        if len(chunks) in (2, 5):
            logs.reconnect()  # the socket goes as in a network cut
    eq(logs.reconnects, 2)
    eq(text(chunks, "stdout"), PACED_OUT)
    eq(text(chunks, "stderr"), PACED_ERR)
    contiguous(chunks)
    eq(logs.exit_code, 5)


@test("a loop left early closes its socket; iterating the stream again goes on at the next byte")
def _():
    cmd = state["sbx"].exec(PACED)
    logs = cmd.logs()
    first = []
    for c in logs:
        first.append(c)
        if len(first) == 3:
            break
    assert logs.ws is None, "the socket stayed open"
    rest = list(logs)
    chunks = first + rest
    eq(text(chunks, "stdout"), PACED_OUT)
    eq(text(chunks, "stderr"), PACED_ERR)
    contiguous(chunks)
    eq(logs.exit_code, 5)


def check_cut(proxy, chunks, logs, reference):
    out, err = big_expected()
    eq(proxy.cuts_done, 3, "connections cut by the proxy")
    eq(logs.reconnects, 3, "streams reopened")
    eq(proxy.stream_opens, 4, "stream connections")
    eq(b"".join(c.data for c in chunks if c.stream == "stdout") == out, True, "stdout bytes")
    eq(b"".join(c.data for c in chunks if c.stream == "stderr") == err, True, "stderr bytes")
    contiguous(chunks)
    eq(runs(chunks) == runs(reference), True, "order across the streams, as an uncut read has it")
    eq(logs.exit_code, 0)


@test("resume, byte-exact: a proxy cuts the stream 3 times inside messages; every byte once, in order")
def _():
    sbx = state["sbx"]
    go = "/tmp/big-go"
    proxy = CutProxy(PORT, CUT_AFTER, cuts=3)
    try:
        with Client(proxy.url, KEY) as via:
            cmd = via.get(sbx.id).command(sbx.exec(BIG + [go]).id)
            logs = cmd.logs()
            chunks, released = [], False
            for c in logs:
                chunks.append(c)
                if not released and logs.reconnects >= 1:
                    released = sbx.run(["touch", go]).exit_code == 0
            assert released, "the program was not released after the first cut"
        check_cut(proxy, chunks, logs, list(sbx.command(cmd.id).logs()))
        for head in proxy.heads:
            assert KEY.encode() not in head.split(b"\r\n", 1)[0], head[:200]
            assert b"access_token" not in head, head[:200]
    finally:
        proxy.close()


@test("stdin over the stream reaches the command, stdin_eof ends it")
def _():
    cmd = state["sbx"].exec("cat")
    logs = cmd.logs()
    logs.write("hello ")
    logs.write(bytes([0xC3, 0xA9, 0x0A]))  # "é\n" as raw bytes
    logs.end()
    eq(logs.read_all(), "hello é\n".encode())
    eq(logs.exit_code, 0)
    cmd2 = state["sbx"].exec(["cat"])
    cmd2.send_stdin(b"over rest\n", eof=True)
    eq(cmd2.logs().read_all(), b"over rest\n")


@test("kill: through the API (SIGTERM) and through the stream (SIGINT)")
def _():
    sbx = state["sbx"]
    a = sbx.exec(["sleep", "60"])
    a.kill("SIGTERM")
    logs = a.logs()
    list(logs)
    eq(logs.signal, "SIGTERM")
    b = sbx.exec(["sleep", "60"])
    s = b.logs()
    s.kill("SIGINT")
    list(s)
    eq(s.signal, "SIGINT")
    eq(b.wait().signal, "SIGINT")


@test("a stream the gateway refuses for good (unknown command) fails at once, no retrying")
def _():
    sbx = state["sbx"]
    from sbxgw import Command
    logs = Command(sbx, {"id": "cmd_aaaaaaaaaaaaaaaaaaaaaaaa"}).logs()
    raises(NotFoundError, lambda: list(logs), lambda e: e.status == 404)
    eq(logs.reconnects, 0, "reopened")


@test("a refusal after the upgrade (close 4422 after an error message) raises the code's class, status 422")
def _():
    sbx = state["sbx"]
    cmd = sbx.exec("true")
    logs = cmd.logs(since=-1)
    raises(InvalidError, lambda: list(logs),
           lambda e: e.status == 422 and e.code == "invalid" and "since" in e.message)
    eq(logs.reconnects, 0, "reopened")
    term = sbx.pty(cols=5000)
    raises(InvalidError, term.read, lambda e: e.status == 422 and "cols" in e.message)


def screen(term, pattern):
    """Terminal output until its plain text (escapes and CRs removed) matches."""
    seen = b""
    while True:
        b = term.read()
        if b is None:
            raise AssertionError(f"terminal ended before {pattern}; saw {seen[-300:]!r}")
        seen += b
        plain = re.sub(r"\x1b\][^\x07]*\x07|\x1b\[[0-9;?]*[A-Za-z]|\r", "", seen.decode("utf-8", "replace"))
        if re.search(pattern, plain, re.M):
            return plain


@test("pty: `echo $((6*7))` prints 42; resize reaches the terminal; pause/resume; exit code")
def _():
    with state["sbx"].pty("bash", cols=80, rows=24) as term:
        term.write("echo $((6*7))\r")
        screen(term, r"^42$")
        term.write("stty size\r")
        screen(term, r"^24 80$")
        term.resize(100, 30)
        term.write("stty size\r")
        screen(term, r"^30 100$")
        term.pause()
        term.write("echo flow-$((40+2))\r")  # keystrokes go in while output is paused
        term.resume()
        screen(term, r"^flow-42$")
        term.write("exit 7\r")
        while term.read() is not None:
            pass
        eq(term.exit_code, 7)


@test("extend moves expires_at later")
def _():
    sbx = state["sbx"]
    before = sbx.refresh().info["expires_at"]
    sbx.extend(120000)
    assert sbx.info["expires_at"] > before, (sbx.info["expires_at"], before)
    eq(client.get(sbx.id).info["expires_at"], sbx.info["expires_at"])


@test("async: create, run, exec + logs, files streamed, pty, stop")
async def _():
    async with await AsyncSandbox.create(timeout_ms=120000, ports=[8000]) as sbx:
        assert sbx.domain(8000).startswith("http://8000-")
        r = await sbx.run("echo out; echo err >&2; exit 4")
        eq((r.exit_code, r.stdout, r.stderr), (4, "out\n", "err\n"))
        cmd = await sbx.exec(PACED)
        logs = cmd.logs()
        chunks = [c async for c in logs]
        eq(text(chunks, "stdout"), PACED_OUT)
        eq(text(chunks, "stderr"), PACED_ERR)
        contiguous(chunks)
        eq(logs.exit_code, 5)

        async def pieces():
            for i in range(40):
                yield bytes([i]) * 10_000
        await sbx.files.write("a/stream.bin", pieces(), size=400_000)
        got = await sbx.files.read("a/stream.bin")
        eq(got == b"".join(bytes([i]) * 10_000 for i in range(40)), True, "async file bytes")
        eq([e.name for e in await sbx.files.list("a")], ["stream.bin"])
        cat = await sbx.exec("cat")
        s = cat.logs()
        await s.write("typed\n")
        await s.end()
        eq(await s.read_all(), b"typed\n")
        term = await sbx.pty("bash", cols=80, rows=24)
        await term.write("echo $((6*7)); exit 3\r")
        seen = b""
        while (b := await term.read()) is not None:
            seen += b
        assert b"42" in seen, seen[-200:]
        eq(term.exit_code, 3)
        assert any(s.id == sbx.id for s in await AsyncSandbox.list())
        sid = sbx.id
    eq(sbx.status, "stopped")
    eq((await AsyncSandbox.get(sid)).status, "stopped")


@test("async resume, byte-exact: the same cuts under asyncio")
async def _():
    sbx = state["sbx"]
    go = "/tmp/big-go-async"
    proxy = CutProxy(PORT, CUT_AFTER, cuts=3)
    try:
        via = sbxgw.AsyncClient(proxy.url, KEY)
        try:
            asbx = await via.get(sbx.id)
            cmd = await asbx.exec(BIG + [go])
            logs = cmd.logs()
            chunks, released = [], False
            async for c in logs:
                chunks.append(c)
                if not released and logs.reconnects >= 1:
                    released = (await asyncio.to_thread(sbx.run, ["touch", go])).exit_code == 0
            assert released, "the program was not released after the first cut"
        finally:
            await via.aclose()
        check_cut(proxy, chunks, logs, list(sbx.command(cmd.id).logs()))
    finally:
        proxy.close()


@test("stop: status stopped (requested); repeating it is fine; commands then fail")
def _():
    sbx = state["sbx"]
    sbx.stop()
    eq(sbx.status, "stopped")
    eq(sbx.info.get("stop_reason"), "requested")
    sbx.stop()
    raises(SandboxError, lambda: sbx.run("true"),
           lambda e: isinstance(e, (ConflictError, NotFoundError)) and e.status in (404, 409))


ok = run()
sbx = state.get("sbx")
if sbx is not None and sbx.status == "running":
    try:
        sbx.stop()
    except SandboxError:
        pass
sys.exit(0 if ok else 1)
