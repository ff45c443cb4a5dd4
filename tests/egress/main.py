"""The egress suite's cases (run.sh sets up the fake internet, the runner
and the gateway). Prints PASS/FAIL/SKIP lines and the closing count."""
import http.client
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PORT, KEY, DIR = int(os.environ["EG_PORT"]), os.environ["EG_KEY"], os.environ["EG_DIR"]
INET_LOG = os.path.join(DIR, "inet.log")
counts = [0, 0, 0]


def result(name, ok, detail=""):
    counts[0 if ok else 1] += 1
    print("%s: %s%s" % ("PASS" if ok else "FAIL", name, "" if ok else " (%s)" % detail),
          flush=True)


def check(name, got, want):
    result(name, got == want, "got %r, want %r" % (got, want))


def req(method, path, body=None, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    h = {"Authorization": "Bearer " + KEY}
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    try:
        return r.status, json.loads(data) if data else None
    except ValueError:
        return r.status, data.decode("utf-8", "replace")


def create(network):
    st, d = req("POST", "/v1/sandboxes", {"network": network})
    if st != 201:
        raise RuntimeError("create %r: %s %s" % (network, st, d))
    sid = d["id"]
    for name, path in (("cl.py", "/tmp/cl.py"), ("ca.pem", "/tmp/ca.pem")):
        src = os.path.join(HERE if name == "cl.py" else DIR, name)
        with open(src, "rb") as f:
            st, d = req("PUT", "/v1/sandboxes/%s/files?path=%s" % (sid, path), f.read())
        if st != 200:
            raise RuntimeError("upload %s: %s %s" % (name, st, d))
    # its gateway address, for run.sh's check that no rule of it is left
    gw = sh(sid, "cat /etc/resolv.conf").split()
    if len(gw) == 2 and gw[0] == "nameserver":
        with open(os.path.join(DIR, "gateways"), "a") as f:
            f.write(gw[1] + "\n")
    return sid


def cl(sid, *args, timeout=60):
    st, d = req("POST", "/v1/sandboxes/%s/commands" % sid,
                {"cmd": "python3", "args": ["/tmp/cl.py"] + [str(a) for a in args]},
                timeout=timeout)
    if st != 200:
        raise RuntimeError("cl %r: %s %s" % (args, st, d))
    try:
        return json.loads(d["stdout"])
    except ValueError:
        return "no result: %r %r" % (d["stdout"][-300:], d["stderr"][-300:])


def sh(sid, line):
    st, d = req("POST", "/v1/sandboxes/%s/commands" % sid, {"cmd": "bash", "args": ["-c", line]})
    return d["stdout"] + d["stderr"]


def inet_log():
    with open(INET_LOG) as f:
        return f.read()


def patch(sid, network):
    return req("PATCH", "/v1/sandboxes/%s/network" % sid, {"network": network})


def log_entries(sid, since=None):
    st, d = req("GET", "/v1/sandboxes/%s/network/log%s" % (sid, "" if since is None else
                                                          "?since=%d" % since))
    if st != 200:
        raise RuntimeError("network/log: %s %s" % (st, d))
    return [json.loads(l) for l in d.splitlines() if l.strip()] if isinstance(d, str) else \
        ([d] if d else [])


POLICY = {"allow": ["allowed.test", "*.pkg.test", "rebind.test"]}


def policy_cases():
    st, d = req("POST", "/v1/sandboxes", {"network": {"allow": ["ok.test", "bad name!"]}})
    result("invalid name: 422 invalid naming network.allow[1]",
           st == 422 and d["error"]["code"] == "invalid" and "network.allow[1]" in d["error"]["message"],
           "%s %s" % (st, d))
    st, d = req("POST", "/v1/sandboxes", {"network": {"allow": ["10.0.0.1"]}})
    result("an address in allow: 422 invalid", st == 422 and d["error"]["code"] == "invalid",
           "%s %s" % (st, d))
    st, d = req("POST", "/v1/sandboxes", {"network": {"allow": [], "deny_cidrs": ["1.2.3/8"]}})
    result("bad CIDR: 422 naming network.deny_cidrs[0]",
           st == 422 and "network.deny_cidrs[0]" in d["error"]["message"], "%s %s" % (st, d))
    for rule, field in (
            ({"transform": [{"headers": {"content-length": "1"}}]},
             'network.allow["api.x.test"][0].transform[0].headers.content-length'),
            ({"response": {"body": "x", "contentType": "text/plain"}},
             'network.allow["api.x.test"][0].response'),
            ({"forwardURL": "http://plain.test/"}, 'network.allow["api.x.test"][0].forwardURL'),
            ({"match": {"path": {"exact": "/a"}}}, 'network.allow["api.x.test"][0]'),
            ({"transform": [], "response": {"statusCode": 200}}, 'network.allow["api.x.test"][0]')):
        st, d = req("POST", "/v1/sandboxes", {"network": {"allow": {"api.x.test": [rule]}}})
        result("a bad rule %s: 422 invalid naming %s" % (json.dumps(rule), field),
               st == 422 and d["error"]["code"] == "invalid" and field in d["error"]["message"],
               "%s %s" % (st, d))
    st, d = req("POST", "/v1/sandboxes", {"network": {"allow": {"api.x.test": [{"bogus": 1}]}}})
    result("an unknown rule field: 422 invalid", st == 422 and d["error"]["code"] == "invalid",
           "%s %s" % (st, d))
    st, d = req("POST", "/v1/sandboxes", {"network": {"allow": ["a.test"], "mode": "x"}})
    result("unknown policy field: 422 invalid naming network.mode",
           st == 422 and "network.mode" in d["error"]["message"], "%s %s" % (st, d))


def allow_list_cases(sid):
    r = cl(sid, "http", "allowed.test", "allowed.test")
    check("exact name over HTTP reaches its server", r, "200 server=198.51.100.1 host=allowed.test sni=-")
    r = cl(sid, "https", "allowed.test", "allowed.test")
    check("exact name over HTTPS (spliced, the sandbox verifies the real certificate)", r,
          "200 server=198.51.100.1 host=allowed.test sni=allowed.test")
    r = cl(sid, "https", "api.pkg.test", "api.pkg.test")
    check("wildcard *.pkg.test allows api.pkg.test", r,
          "200 server=198.51.100.1 host=api.pkg.test sni=api.pkg.test")
    r = cl(sid, "https", "deep.api.pkg.test", "deep.api.pkg.test")
    check("wildcard allows a deeper name", r,
          "200 server=198.51.100.1 host=deep.api.pkg.test sni=deep.api.pkg.test")
    check("wildcard does not allow the bare suffix (pkg.test): NXDOMAIN",
          cl(sid, "dns", "pkg.test", 1), "nxdomain ")
    check("a denied name does not resolve", cl(sid, "dns", "denied.test", 1), "nxdomain ")
    r = cl(sid, "http", "198.51.100.2", "denied.test")
    result("a denied Host to its own server's address: 403 page",
           r.startswith("403 ") and "denied.test" in r, r)
    check("a denied SNI to its own server's address: reset",
          cl(sid, "https", "198.51.100.2", "denied.test"), "reset")
    r = cl(sid, "http", "198.51.100.1", "198.51.100.1")
    result("an IP literal as Host: 403", r.startswith("403 "), r)
    check("TLS without SNI (an IP literal): reset", cl(sid, "https", "198.51.100.1", None), "reset")
    r = cl(sid, "https", "198.51.100.2", "allowed.test")
    check("an allowed SNI sent to a denied server's address reaches the allowed name's "
          "server, never the one chosen", r, "200 server=198.51.100.1 host=allowed.test sni=allowed.test")
    r = cl(sid, "http", "198.51.100.2", "allowed.test")
    check("an allowed Host sent to a denied server's address: the same", r,
          "200 server=198.51.100.1 host=allowed.test sni=-")
    r = cl(sid, "http", "198.51.100.1", "allowed.test", "http://denied.test/")
    result("HTTP target naming another host than Host: 403", r.startswith("403 "), r)
    r = cl(sid, "https", "allowed.test", "allowed.test", "denied.test")
    check("Host disagreeing with SNI inside TLS reaches only the SNI's server", r,
          "200 server=198.51.100.1 host=denied.test sni=allowed.test")
    check("ECH in the ClientHello: reset", cl(sid, "raw_tls", "198.51.100.1", "allowed.test", "ech"),
          "reset")
    check("the same ClientHello without ECH gets a ServerHello",
          cl(sid, "raw_tls", "198.51.100.1", "allowed.test", "-"), "server-hello")
    check("another TCP port: refused at once", cl(sid, "tcp", "198.51.100.1", 8080), "refused")
    cl(sid, "udp", "198.51.100.1", 443)
    r = cl(sid, "dns", "direct-query.test", 1, "198.51.100.1")
    check("UDP 53 to an outside server is answered by the runner's resolver", r, "nxdomain ")
    for name in ("x1.tunnel.evil.test", "allowed.test"):
        cl(sid, "dns", name, 16)
        cl(sid, "dns", "n." + name, 10)
    check("rebinding: an allowed name answering an always-denied address gets no address",
          cl(sid, "dns", "rebind.test", 1), "noerror ")
    r = cl(sid, "http", "198.51.100.1", "rebind.test")
    result("rebinding: the proxy refuses to connect (403, always-denied)",
           r.startswith("403 ") and "always-denied" in r, r)
    time.sleep(0.5)
    log = inet_log()
    check("nothing reached the denied server's address", "server=198.51.100.2" in log, False)
    check("UDP 443 (QUIC) never reached the outside", "udp 443" in log, False)
    check("the direct DNS query never reached the outside", "direct-query" in log, False)
    check("TXT/NULL queries (tunnelling) never reached the fake DNS server",
          [l for l in log.splitlines() if l.startswith("dns ") and not l.startswith("dns A ")], [])
    check("no query for a denied name reached it", "denied.test" in
          "".join(l for l in log.splitlines() if l.startswith("dns ")), False)


def splice_cases(sid):
    """A spliced connection (kernel pipes in the runner) carries 8 MiB
    each way at once byte-exact, passes the client's half-close on after
    its last byte, and the log counts every byte."""
    since = max([e["seq"] for e in log_entries(sid)] or [0])
    r = cl(sid, "pipe", "allowed.test", "allowed.test", 8 << 20, timeout=300)
    check("spliced HTTP: 8 MiB each way at once, echoed byte-exact, then the half-close "
          "reaches the server after the last byte (its count and digest match)",
          r[0] if isinstance(r, list) else r, "200 same tail-ok")
    counts = r[-1].split() if isinstance(r, list) else []
    ent = []
    for _ in range(50):
        ent = [e for e in log_entries(sid, since) if e["name"] == "allowed.test" and e["port"] == 80]
        if ent:
            break
        time.sleep(0.1)
    result("... the log's byte counts are exactly the client's",
           len(ent) == 1 and len(counts) == 4 and
           [ent[0]["bytes_out"], ent[0]["bytes_in"]] == [int(counts[1]), int(counts[3])],
           "%r %r" % (counts, ent))


def leg_cases(sid):
    """The proxy's socket toward the sandbox (a veth on the host) uses a
    congestion control that does not pace, whatever the host's default:
    BBR's pacing timers halved the spliced throughput (docs/runner.md)."""
    sh(sid, "rm -f /tmp/conn /tmp/go")
    since = max([e["seq"] for e in log_entries(sid)] or [0])
    req("POST", "/v1/sandboxes/%s/commands" % sid,
        {"cmd": "python3", "args": ["-c", HOLD_CONN], "env": {"ADDR": "198.51.100.1", "HOST": "allowed.test"},
         "detached": True})
    gw = sh(sid, "cat /etc/resolv.conf").split()[-1]
    opened = wait_file(sid, "/tmp/conn")
    ss = subprocess.run(["ss", "-Htni", "state", "established", "src", gw + ":15080"],
                        capture_output=True, text=True).stdout
    sh(sid, "touch /tmp/go")
    ccs = sorted({w for w in ss.split() if w in ("bbr", "cubic", "reno")})
    check("the proxy's leg toward the sandbox is cubic or reno, never the host's BBR",
          (opened, ccs in (["cubic"], ["reno"]), wait_file(sid, "/tmp/conn", "open")),
          ("open", True, "echoed"))
    # its log entry is in before the log's own cases count entries
    for _ in range(300):
        if [e for e in log_entries(sid, since) if e["name"] == "allowed.test" and e["port"] == 80]:
            break
        time.sleep(0.1)


def log_cases(sid):
    entries = log_entries(sid)
    ok = [e for e in entries if e["name"] == "allowed.test" and e["port"] == 443 and
          e["verdict"] == "allowed"]
    result("log: an allowed HTTPS connection with its rule and bytes each way",
           ok and ok[0]["rule"] == "allowed.test" and ok[0]["bytes_out"] > 200 and
           ok[0]["bytes_in"] > 500, ok[:1] or entries[-5:])
    den = [e for e in entries if e["name"] == "denied.test" and e["port"] == 80]
    result("log: the denied Host, denied with its reason",
           den and den[0]["verdict"] == "denied" and den[0]["rule"] == "not allowed", den[:1])
    seqs = [e["seq"] for e in entries]
    result("log: numbered in order", seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seqs)
    later = log_entries(sid, seqs[-3])
    check("log: since=N gives the entries after N", [e["seq"] for e in later], seqs[-2:])


def update_cases(sid):
    # an open spliced connection to a name the update drops is closed
    sh(sid, "rm -f /tmp/hold /tmp/hold.go; (python3 /tmp/cl.py hold /tmp/hold allowed.test "
       "allowed.test >/dev/null 2>&1 &)")
    for _ in range(200):
        if "open" in sh(sid, "cat /tmp/hold 2>/dev/null"):
            break
        time.sleep(0.1)
    # a loop of requests to other.test, denied at first
    st, d = req("POST", "/v1/sandboxes/%s/commands" % sid,
                {"cmd": "python3", "args": ["/tmp/cl.py", "loop", "/tmp/loop", "4000",
                                            "198.51.100.3", "other.test"], "detached": True})
    result("the request loop started", st == 201, "%s %s" % (st, d))
    for _ in range(300):
        if len(sh(sid, "cat /tmp/loop 2>/dev/null").split()) > 2:
            break
        time.sleep(0.1)
    st, d = patch(sid, {"allow": ["other.test"]})
    result("PATCH .../network: 200 with the new policy",
           st == 200 and d["network"] == {"allow": ["other.test"], "deny_cidrs": []}, "%s %s" % (st, d))
    seen = ""
    for _ in range(600):
        seen = sh(sid, "cat /tmp/loop").split()
        if "200" in seen:
            break
        time.sleep(0.1)
    first = seen.index("200") if "200" in seen else len(seen)
    result("the loop's requests switch from 403 to 200 with the update, never back",
           first > 0 and set(seen[:first]) == {"403"} and set(seen[first:]) == {"200"} and
           len(seen) > first, seen[:5] + ["..."] + seen[-5:])
    sh(sid, "touch /tmp/hold.go")
    r = ""
    for _ in range(200):
        r = sh(sid, "cat /tmp/hold")
        if len(r.split("\n")) > 2:
            break
        time.sleep(0.1)
    result("an open connection to a name the update dropped is closed",
           r.split("\n")[1] in ("reset", "eof", "tls:UNEXPECTED_EOF_WHILE_READING", "SSLEOFError",
                                "tls:EOF") or r.split("\n")[1].startswith("tls:"), r)
    check("the dropped name no longer resolves", cl(sid, "dns", "allowed.test", 1), "nxdomain ")
    st, d = patch(sid, "allow-all")
    result("PATCH to allow-all: 200", st == 200 and d["network"] == "allow-all", "%s %s" % (st, d))
    check("under allow-all TCP goes out directly", cl(sid, "tcp", "198.51.100.1", 80), "open")
    st, d = patch(sid, {"allow": ["x.test"], "bogus": 1})
    result("an invalid PATCH: 422 and the policy stays",
           st == 422 and req("GET", "/v1/sandboxes/" + sid)[1]["network"] == "allow-all",
           "%s %s" % (st, d))
    st, d = patch(sid, "deny-all")
    result("PATCH to deny-all: an empty allow-list",
           st == 200 and d["network"] == {"allow": [], "deny_cidrs": []}, "%s %s" % (st, d))
    check("... nothing goes out", cl(sid, "tcp", "198.51.100.1", 8080), "refused")
    check("... names do not resolve", cl(sid, "dns", "allowed.test", 1), "nxdomain ")


def allow_all_cases():
    sid = create("allow-all")
    r = sh(sid, "cat /etc/resolv.conf")
    result("allow-all: resolv.conf names the runner's resolver on the gateway, not 1.1.1.1",
           r.startswith("nameserver 10.201.") and int(r.split()[1].split(".")[3]) % 4 == 1 and
           "1.1.1.1" not in r, r)
    check("allow-all: a DNS server of the sandbox's choice is reachable (nothing is denied)",
          cl(sid, "dns", "denied.test", 1, "198.51.100.1"), "noerror 198.51.100.2")
    check("allow-all: names resolve through the host's resolver",
          cl(sid, "dns", "denied.test", 1), "noerror 198.51.100.2")
    check("allow-all: rebinding answers still lose always-denied addresses",
          cl(sid, "dns", "rebind.test", 1), "noerror ")
    check("allow-all: HTTP goes out directly",
          cl(sid, "http", "denied.test", "denied.test"), "200 server=198.51.100.2 host=denied.test sni=-")
    req("DELETE", "/v1/sandboxes/" + sid)
    sid = create({"allow": []})
    out = subprocess.run([os.path.join(ROOT, "bin/sbx"), "--url", "http://127.0.0.1:%d" % PORT,
                          "--key", KEY, "net", sid, "allowed.test,*.pkg.test"],
                         capture_output=True, text=True, timeout=60)
    check("sbx net ID names: the allow-list in force",
          out.stdout.strip(), '{"allow":["allowed.test","*.pkg.test"],"deny_cidrs":[]}')
    check("... and it works", cl(sid, "http", "allowed.test", "allowed.test"),
          "200 server=198.51.100.1 host=allowed.test sni=-")
    st, d = req("POST", "/v2/sandboxes/sessions/%s/network-policy" % sid,
                {"allow": ["other.test"], "subnets": {"deny": ["198.51.100.3/32"]}})
    pol = json.dumps(d)
    result("Vercel updateNetworkPolicy: the allow-list and subnets.deny, shown as mode custom",
           st == 200 and '"custom"' in pol and '"other.test"' in pol and "198.51.100.3/32" in pol,
           "%s %s" % (st, d))
    r = cl(sid, "http", "198.51.100.3", "other.test")
    result("... a name whose address is in subnets.deny is refused (403, deny_cidrs)",
           r.startswith("403 ") and "deny_cidrs" in r, r)
    st, d = req("POST", "/v2/sandboxes/sessions/%s/network-policy" % sid,
                {"allow": {"other.test": [{"transform": [{"headers": {"x-k": "v-secret"}}]}]}})
    result("Vercel: a transform rule is taken, its value not shown back",
           st == 200 and "v-secret" not in json.dumps(d), "%s %s" % (st, d))
    req("DELETE", "/v1/sandboxes/" + sid)
    sid = create("deny-all")
    st, d = patch(sid, "deny-all")
    result("PATCH deny-all on a deny-all sandbox: 200, nothing to change", st == 200, "%s %s" % (st, d))
    st, d = patch(sid, {"allow": ["allowed.test"]})
    result("PATCH on a deny-all sandbox: 409 conflict (no interface)",
           st == 409 and d["error"]["code"] == "conflict", "%s %s" % (st, d))
    req("DELETE", "/v1/sandboxes/" + sid)


ISOLATION = os.environ.get("SANDBOX_TEST_ISOLATION", "jail")
# what a connection open at a pause gets for its next byte after resume:
# the jail's frozen one goes on; gvisor's checkpoint aborts one over the
# veth (runsc --net-disconnect-ok: it cannot save it)
CONN_AFTER = {"gvisor": "ConnectionAbortedError"}.get(ISOLATION, "echoed")
SECRET = "sk-" + os.urandom(12).hex()
ECHO_RULES = [
    {"match": {"path": {"startsWith": "/blocked"}},
     "response": {"statusCode": 403, "headers": {"x-why": "policy"}, "body": "blocked here",
                  "contentType": "text/plain"}},
    {"match": {"path": {"startsWith": "/echo/fwd"}}, "forwardURL": "https://198.51.100.3/proxy"},
    {"match": {"method": ["POST"], "path": {"startsWith": "/echo/v1/"},
               "headers": [{"key": {"exact": "x-api-key"}, "value": {"exact": "placeholder"}}]},
     "transform": [{"headers": {"authorization": "Bearer " + SECRET}}]},
    {"match": {"method": ["GET"], "queryString": [{"key": {"exact": "k"}, "value": {"regex": "^v[0-9]+$"}}]},
     "transform": [{"headers": {"authorization": "Bearer " + SECRET}}]},
]
BROKER = {"allow": {"allowed.test": ECHO_RULES, "other.test": [],
                    "wrong.test": [{"transform": [{"headers": {"x-k": "v"}}]}],
                    "selfsigned.test": [{"transform": [{"headers": {"x-k": "v"}}]}]}}
SHA = __import__("hashlib").sha256(("Bearer " + SECRET).encode()).hexdigest()


def echo(sid, scheme, reqs, host="allowed.test"):
    r = cl(sid, "api", scheme, host, host, json.dumps(reqs))
    out = []
    for x in r if isinstance(r, list) else [r]:
        st, _, body = x.partition(" ")
        try:
            out.append((st, json.loads(body)))
        except ValueError:
            out.append((st, body))
    return out


def upgrade_cases(sid):
    """A WebSocket through a rule name (decrypted): after the 101 the
    proxy relays both ways; the server got the injected credential."""
    sizes = [5, 300000, 1 << 20]
    for scheme, port in (("https", 443), ("http", 80)):
        since = max([e["seq"] for e in log_entries(sid)] or [0])
        r = cl(sid, "ws", scheme, "allowed.test", "allowed.test", "/ws?k=v7", json.dumps(sizes),
               timeout=180)
        want = ["101", "hello auth=" + SHA] + ["echo %d same" % n for n in sizes] + ["close", "eof"]
        check("WebSocket over %s through a decrypted name: 101, the server's first frame with "
              "the injected credential, 5 B / 300 KB / 1 MiB echoed byte-exact, close, the end"
              % scheme, r[:-1] if isinstance(r, list) else r, want)
        counts = r[-1].split() if isinstance(r, list) else []
        ent = []
        for _ in range(50):
            ent = [e for e in log_entries(sid, since) if e["name"] == "allowed.test" and
                   e["port"] == port and "upgraded (101)" in e["rule"]]
            if ent:
                break
            time.sleep(0.1)
        result("... logged as upgraded, with exactly the bytes the client sent and got",
               len(ent) == 1 and len(counts) == 4 and "error" not in ent[0]["rule"] and
               [ent[0]["bytes_out"], ent[0]["bytes_in"]] == [int(counts[1]), int(counts[3])],
               "%r %r" % (counts, ent or log_entries(sid, since)))


def broker_cases():
    sid = create(BROKER)
    r = echo(sid, "https", [["POST", "/echo/v1/chat", {"x-api-key": "placeholder"}, "hi", False]])
    ok = r and r[0][0] == "200" and isinstance(r[0][1], dict)
    result("transform: the server gets the injected Authorization (POST /v1/ with the "
           "placeholder key)", ok and r[0][1]["auth"] == SHA and r[0][1]["body"] == "hi",
           "%r %r" % (r, log_entries(sid)[-6:]))
    result("... over TLS the sandbox verified with its own trust store (the runner's CA)",
           ok and r[0][1]["sni"] == "allowed.test", r)
    r = echo(sid, "https", [["GET", "/echo/v1/chat", {"x-api-key": "placeholder"}, "", False],
                            ["POST", "/echo/v1/chat", {"x-api-key": "other"}, "", False],
                            ["POST", "/echo/v2/chat", {"x-api-key": "placeholder"}, "", False],
                            ["GET", "/echo/q?k=v12", {}, "", False],
                            ["GET", "/echo/q?k=x12", {}, "", False],
                            ["POST", "/echo/v1/chunked", {"x-api-key": "placeholder"}, "chunky body", True]])
    check("match by method, path, header and query: which of 6 requests on one kept-alive "
          "connection got the header", [x[1].get("auth") == SHA if isinstance(x[1], dict) else x
                                       for x in r], [False, False, False, True, False, True])
    result("... a chunked body arrives whole", len(r) == 6 and isinstance(r[5][1], dict) and
           r[5][1]["body"] == "chunky body", r[5:])
    r = echo(sid, "http", [["POST", "/echo/v1/plain", {"x-api-key": "placeholder"}, "", False]])
    result("plain HTTP on port 80 to a rule name gets the same rules",
           r and isinstance(r[0][1], dict) and r[0][1]["auth"] == SHA and r[0][1]["sni"] == "-", r)
    before = inet_log()
    r = echo(sid, "https", [["GET", "/blocked/x", {}, "", False], ["GET", "/echo/after", {}, "", False]])
    result("response rule: answered by the proxy (403, its body), the connection goes on",
           len(r) == 2 and r[0] == ("403", "blocked here") and isinstance(r[1][1], dict), r)
    check("... the server never saw /blocked", "/blocked" in inet_log()[len(before):], False)
    r = echo(sid, "https", [["GET", "/echo/fwd/a?b=1", {}, "", False]])
    result("forwardURL: the request goes to the forward origin under its path, saying where "
           "it was going", r and isinstance(r[0][1], dict) and r[0][1]["server"] == "198.51.100.3" and
           r[0][1]["path"] == "/proxy/echo/fwd/a?b=1" and r[0][1]["fwd"] == "allowed.test", r)
    upgrade_cases(sid)
    for scheme in ("http", "https"):
        check("decrypted %s: 3 MiB up and 5 MiB down, twice on one connection, byte-exact"
              % scheme, cl(sid, "big", scheme, "allowed.test", "allowed.test", 3 << 20, 5 << 20,
                           timeout=180), ["200 up=same down=same"] * 2)
    check("an unruled name is spliced: the sandbox sees the real server's certificate",
          cl(sid, "peer", "other.test", "other.test"), "egress-test-ca|h2")
    result("a rule name is decrypted with the runner's CA, ALPN http/1.1 only",
           cl(sid, "peer", "allowed.test", "allowed.test") == "sandbox runner egress CA|http/1.1",
           cl(sid, "peer", "allowed.test", "allowed.test"))
    r = cl(sid, "raw_https", "allowed.test", "allowed.test",
           "GET /echo HTTP/1.1\\r\\nHost: allowed.test\\r\\nBad header\\r\\n\\r\\n")
    result("a malformed request: 400 and the connection closes", r.startswith("HTTP/1.1 400 "), r)
    r = cl(sid, "raw_https", "allowed.test", "allowed.test",
           "GET /echo HTTP/1.1\\r\\nHost: denied.test\\r\\n\\r\\n")
    result("a Host other than the decrypted name: 421", r.startswith("HTTP/1.1 421 "), r)
    r = cl(sid, "raw_https", "allowed.test", "allowed.test",
           "GET /echo HTTP/1.1\\r\\nHost: allowed.test\\r\\nX: " + "a" * 40000 + "\\r\\n\\r\\n")
    result("a head over the bound: 400", r.startswith("HTTP/1.1 400 "), r[:80])
    for name in ("wrong.test", "selfsigned.test"):
        r = echo(sid, "https", [["GET", "/echo", {}, "", False]], host=name)
        result("upstream %s: refused with 502" % name, r and r[0][0] == "502", r)
    time.sleep(0.5)
    log = inet_log()
    result("... neither server got a request", "wrong.test" not in
           "".join(l for l in log.splitlines() if l.startswith("echo")) and "selfsigned" not in
           "".join(l for l in log.splitlines() if l.startswith("echo")), "")
    entries = log_entries(sid)
    bad = [e for e in entries if e["name"] in ("wrong.test", "selfsigned.test") and e["port"] == 443]
    result("... both logged as denied with the certificate's fault",
           len(bad) == 2 and all(e["verdict"] == "denied" and "certificate refused" in e["rule"]
                                 for e in bad), bad)
    dec = [e for e in entries if e["name"] == "allowed.test" and "decrypted" in e["rule"]]
    result("the egress log shows decrypted connections with their counts", dec and
           dec[0]["verdict"] == "allowed" and dec[0]["bytes_in"] > 0, entries[-4:])
    # the secret reached the server, and nowhere the sandbox or the API can see
    check("the fake server saw the secret", ("Bearer " + SECRET) in inet_log(), True)
    # the secret travels here reversed: no command line or file of the
    # search itself holds it
    inside = sh(sid, "s=$(echo '%s' | rev); "
                "grep -rslF -f <(printf '%%s\\n' \"$s\") /etc /tmp /home /root /.sandbox /usr/local /var 2>/dev/null; "
                "cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | grep -cF -f <(printf '%%s\\n' \"$s\"); "
                "env | grep -cF -f <(printf '%%s\\n' \"$s\")" % SECRET[::-1])
    check("the sandbox never sees the secret (files, /proc environ and cmdline, env)",
          inside.split(), ["0", "0"])
    st, d = req("GET", "/v1/sandboxes/" + sid)
    got = json.dumps(d)
    result("GET of the sandbox shows the transform redacted",
           SECRET not in got and '"authorization": "<redacted>"' in got, got[:400])
    st, d = req("GET", "/v1/sandboxes/%s/network/log" % sid)
    check("the egress log never holds the secret", SECRET in json.dumps(d), False)
    check("the sandbox's own env names the bundle",
          sh(sid, "echo $SSL_CERT_FILE $NODE_EXTRA_CA_CERTS $REQUESTS_CA_BUNDLE").split(),
          ["/etc/ssl/certs/ca-certificates.crt", "/.sandbox/egress-ca.pem",
           "/etc/ssl/certs/ca-certificates.crt"])
    check("the CA key is nowhere inside", sh(sid, "grep -rslE 'PRIVATE KEY' /.sandbox /etc/ssl "
                                             "2>/dev/null | head -3").strip(), "")
    # a fork: the secret is not kept to copy, so the policy is given again
    st, d = req("POST", "/v1/sandboxes/%s/fork" % sid, {"count": 1})
    result("fork of a brokering sandbox without its policy: 422 before anything is made",
           st == 422 and "network" in d["error"]["message"], "%s %s" % (st, d))
    st, d = req("POST", "/v1/sandboxes", {"network": json.loads(
        json.dumps(req("GET", "/v1/sandboxes/" + sid)[1]["network"]))})
    result("a policy sent back as shown (\"<redacted>\"): 422 naming the header",
           st == 422 and "authorization" in d["error"]["message"], "%s %s" % (st, d))
    if os.environ.get("SANDBOX_TEST_ISOLATION", "jail") == "jail":
        st, d = req("POST", "/v1/sandboxes/%s/fork" % sid, {"count": 1, "network": BROKER})
        ok = st == 201 and len(d.get("sandboxes", [])) == 1
        result("fork with the policy given again: 201", ok, "%s %s" % (st, d))
        if ok:
            fid = d["sandboxes"][0]["id"]
            r = echo(fid, "https", [["POST", "/echo/v1/fork", {"x-api-key": "placeholder"}, "", False]])
            result("... the fork injects the secret (its bundle holds the CA once)",
                   r and isinstance(r[0][1], dict) and r[0][1]["auth"] == SHA and
                   sh(fid, "grep -c 'BEGIN CERTIFICATE' /.sandbox/egress-ca.pem; "
                       "grep -cF \"$(sed -n 2p /.sandbox/egress-ca.pem)\" "
                       "/etc/ssl/certs/ca-certificates.crt").split() == ["1", "1"], r)
            req("DELETE", "/v1/sandboxes/" + fid)
            snap = d.get("snapshot", {}).get("id")
            if snap:
                req("DELETE", "/v1/snapshots/" + snap)
    req("DELETE", "/v1/sandboxes/" + sid)
    for f in (os.environ.get("EG_RUNNER_LOG"), os.path.join(DIR, "gw.log")):
        if f and os.path.exists(f):
            with open(f, errors="replace") as fh:
                check("%s never holds the secret" % os.path.basename(f), SECRET in fh.read(), False)


# Runs inside a sandbox: a connection to the fake internet's /pipe (every
# byte echoed) open across a pause; /tmp/conn says "open" once the first
# byte came back, then, after /tmp/go appears, what a second byte got.
HOLD_CONN = r"""
import os, socket, time
s = socket.create_connection((os.environ["ADDR"], 80), timeout=30)
s.sendall(b"GET /pipe HTTP/1.1\r\nHost: " + os.environ["HOST"].encode() + b"\r\n\r\na")
got = b""
while not got.endswith(b"a"):
    got += s.recv(4096)
open("/tmp/conn", "w").write("open")
while not os.path.exists("/tmp/go"):
    time.sleep(0.05)
try:
    s.settimeout(20)
    s.sendall(b"b")
    c = s.recv(4096)
    out = "echoed" if c == b"b" else ("eof" if not c else "other")
except ConnectionResetError:
    out = "reset"
except socket.timeout:
    out = "timeout"
except OSError as e:
    out = type(e).__name__
open("/tmp/conn", "w").write(out)
"""


def pause_resume(sid, who):
    """Pause and resume sid; under gvisor the pause is a checkpoint on disk."""
    st, d = req("POST", "/v1/sandboxes/%s/pause" % sid, timeout=300)
    check("%s: paused" % who, (st, d.get("status") if isinstance(d, dict) else d), (200, "paused"))
    if ISOLATION == "gvisor":
        img = os.path.join(DIR, "state", "sandboxes", sid, "checkpoint", "checkpoint.img")
        check("%s: paused to disk (a checkpoint image, no process left)" % who,
              os.path.exists(img), True)
    st, d = req("POST", "/v1/sandboxes/%s/resume" % sid, timeout=300)
    check("%s: resumed" % who, (st, d.get("status") if isinstance(d, dict) else d), (200, "running"))


def wait_file(sid, path, want_not=""):
    for _ in range(300):
        r = sh(sid, "cat %s 2>/dev/null" % path)
        if r and r != want_not:
            return r
        time.sleep(0.1)
    return r


def pause_cases():
    """The network across a pause: the allow-list still enforced, allow-all
    still out, an open connection as docs/runner.md says."""
    if ISOLATION not in ("jail", "gvisor"):
        counts[2] += 1
        print("SKIP: pause and the network: pause under %s is not this suite's" % ISOLATION)
        return
    sid = create({"allow": ["allowed.test"]})
    check("pause (allow-list): before, the allowed name is reached",
          cl(sid, "http", "allowed.test", "allowed.test"), "200 server=198.51.100.1 host=allowed.test sni=-")
    req("POST", "/v1/sandboxes/%s/commands" % sid,
        {"cmd": "python3", "args": ["-c", HOLD_CONN], "env": {"ADDR": "198.51.100.1", "HOST": "allowed.test"},
         "detached": True})
    check("pause (allow-list): a proxied connection is open before", wait_file(sid, "/tmp/conn"), "open")
    pause_resume(sid, "pause (allow-list)")
    sh(sid, "touch /tmp/go")
    check("pause (allow-list): the connection open at the pause, as docs/runner.md says",
          wait_file(sid, "/tmp/conn", "open"), CONN_AFTER)
    check("pause (allow-list): after resume the allowed name is reached through the proxy",
          cl(sid, "http", "allowed.test", "allowed.test"), "200 server=198.51.100.1 host=allowed.test sni=-")
    check("pause (allow-list): ... over HTTPS too",
          cl(sid, "https", "allowed.test", "allowed.test"),
          "200 server=198.51.100.1 host=allowed.test sni=allowed.test")
    check("pause (allow-list): after resume a denied name still does not resolve",
          cl(sid, "dns", "denied.test", 1), "nxdomain ")
    check("pause (allow-list): after resume a denied SNI to its server's address is still reset",
          cl(sid, "https", "198.51.100.2", "denied.test"), "reset")
    r = cl(sid, "http", "198.51.100.1", "198.51.100.1")
    result("pause (allow-list): after resume an IP literal as Host is still 403", r.startswith("403 "), r)
    req("DELETE", "/v1/sandboxes/" + sid)
    sid = create("allow-all")
    pause_resume(sid, "pause (allow-all)")
    check("pause (allow-all): after resume names resolve through the runner's resolver",
          cl(sid, "dns", "denied.test", 1), "noerror 198.51.100.2")
    check("pause (allow-all): after resume HTTP goes out directly",
          cl(sid, "http", "denied.test", "denied.test"), "200 server=198.51.100.2 host=denied.test sni=-")
    req("DELETE", "/v1/sandboxes/" + sid)


def main():
    policy_cases()
    broker_cases()
    sid = create(POLICY)
    st, d = req("GET", "/v1/sandboxes/" + sid)
    check("the sandbox shows its policy", d["network"],
          {"allow": ["allowed.test", "*.pkg.test", "rebind.test"], "deny_cidrs": []})
    allow_list_cases(sid)
    splice_cases(sid)
    leg_cases(sid)
    log_cases(sid)
    update_cases(sid)
    req("DELETE", "/v1/sandboxes/" + sid)
    allow_all_cases()
    # last: its allow-all sandbox reaches the denied server, as allow_all_cases'
    pause_cases()


try:
    main()
except Exception as e:  # a broken step: count it, never hide it
    import traceback
    traceback.print_exc()
    result("suite ran to the end", False, repr(e))
print("%d passed, %d failed, %d skipped" % tuple(counts))
