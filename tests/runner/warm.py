"""Runner suite, the warm pool (--warm-pool N, runner/rn_warm.h); test_runner.py
calls run(t) with itself as t, RUNNER_CHECKS=warm runs only these. Jail only:
the pool holds jail sandboxes of the default image.

A warm sandbox is found from outside by its dir, which holds the file
"warm" until a create takes it. Each check asserts what is deterministic:
which sandbox a create got, what its cgroup and rlimits say, which files
it sees, what is left on the host."""
import json
import os
import signal
import subprocess
import time

POOL = 2
# only the jail: the other drivers' probes (a vm's takes seconds) are no
# part of what is checked here
EXTRA = ["--warm-pool", str(POOL), "--drivers", "jail"]


def warm_ids(r):
    root = os.path.join(r.state, "sandboxes")
    if not os.path.isdir(root):
        return set()
    return {d for d in os.listdir(root) if os.path.exists(os.path.join(root, d, "warm"))}


def status(r):
    return r.req({"op": "status"})["runner"]


def wait_full(t, r):
    """The pool full again (its sandboxes ready): the status says so."""
    return t.wait_until(lambda: status(r)["warm_ready"] == POOL and
                        len(warm_ids(r)) == POOL, 30)


def cg_file(sid, ctrl, name):
    for p in ("/sys/fs/cgroup/%s/sandbox/%s/%s" % (ctrl, sid, name),
              "/sys/fs/cgroup/sandbox/%s/%s" % (sid, name)):
        if os.path.exists(p):
            with open(p) as f:
                return f.read().strip()
    return None


def t_taken(t, r):
    result = t.result
    st = status(r)
    lst = r.req({"op": "list"})["sandboxes"]
    before = warm_ids(r)
    result("warm pool: %d warm sandboxes, none listed or counted, their memory_mb held in "
           "admission" % POOL, st["warm"] == POOL and st["warm_pool"] == POOL and st["warm_ready"] == POOL and
           st["sandboxes"] == 0 and lst == [] and len(before) == POOL and
           st["memory_mb_used"] == POOL * 512, "%s %s %s" % (st, lst, before))
    result("warm pool: a warm sandbox's id is no sandbox to get or stop",
           all(r.req({"op": "get", "id": i})["error"]["code"] == "not_found" and
               r.req({"op": "stop", "id": i})["error"]["code"] == "not_found" for i in before),
           str(before))
    rep = r.create(owner="warmowner", vcpus=2, timeout_ms=60000)
    sb = rep.get("sandbox", {})
    sid = sb.get("id", "")
    sdir = os.path.join(r.state, "sandboxes", sid)
    try:
        with open(os.path.join(sdir, "state.json")) as f:
            state = json.load(f)
    except OSError:
        state = {}
    meminfo = sid and r.sh(sid, "head -1 /proc/meminfo").split()
    cpu = cg_file(sid, "cpu", "cpu.cfs_quota_us") or cg_file(sid, "", "cpu.max")
    result("warm pool: a create of the default shape takes a warm sandbox, running at once",
           rep.get("ok") and sid in before and sb["status"] == "running" and
           not os.path.exists(os.path.join(sdir, "warm")), "%s %s" % (rep, before))
    result("warm pool: the take applies the create's vcpus to its cgroup, its timeout "
           "from the take",
           cpu in ("200000", "200000 100000") and sb.get("vcpus") == 2 and
           sb["expires_at"] - sb["created_at"] == 60000 and
           meminfo == ["MemTotal:", str(512 * 1024), "kB"], "%s %s %s" % (cpu, meminfo, sb))
    result("warm pool: the taken sandbox is listed and its state.json names its owner",
           [s["id"] for s in r.req({"op": "list"})["sandboxes"]] == [sid] and
           state.get("owner") == "warmowner", "%s" % state)
    full = wait_full(t, r)
    after = warm_ids(r)
    result("warm pool: refilled in the background with new sandboxes",
           full and len(after) == POOL and sid not in after and
           len(after - before) == 1, "%s %s %s" % (before, after, status(r)))
    return sid


def t_mismatch(t, r):
    result = t.result
    wait_full(t, r)
    before = warm_ids(r)
    got = []
    for kw in ({"env": {"WARM_T": "yes"}}, {"disk_mb": 256}, {"network": "allow-all"},
               {"nofile": 2048}, {"pids": 300}, {"memory_mb": 256}):
        rep = r.create(**kw)
        got.append(rep)
    ids = [x.get("sandbox", {}).get("id") for x in got]
    env = got[0].get("ok") and r.sh(ids[0], "echo $WARM_T").strip()
    # the child wrote memory_mb into /proc/meminfo: a take could not change it
    mem = got[5].get("ok") and r.sh(ids[5], "head -1 /proc/meminfo").split()
    result("warm pool: a create the pool cannot serve (env, disk_mb, network, nofile, pids, "
           "memory_mb) "
           "starts cold "
           "and leaves the pool as it was",
           all(x.get("ok") for x in got) and not set(ids) & before and
           warm_ids(r) == before and env == "yes" and mem == ["MemTotal:", str(256 * 1024), "kB"],
           "%s %s %s %s" % (ids, before, env, mem))
    for i in ids:
        if i:
            r.req({"op": "stop", "id": i})


def t_isolated(t, r):
    result = t.result
    wait_full(t, r)
    a = r.create()["sandbox"]["id"]
    r.sh(a, "echo a > /tmp/mark; echo a > /home/sandbox/mark")
    r.sh(a, "root:echo a > /root/mark; echo a > /etc/mark")
    wait_full(t, r)
    b = r.create()["sandbox"]["id"]
    seen = r.sh(b, "root:ls /tmp /home/sandbox /root /etc/mark 2>&1; id -u")

    def slot(sid):
        with open(os.path.join(r.state, "sandboxes", sid, "state.json")) as f:
            return json.load(f)["slot"]
    result("warm pool: two creates get two sandboxes, own uid ranges, no file of one "
           "in the other", a != b and slot(a) != slot(b) and "mark" not in seen.replace(
               "/etc/mark", "") and "No such file" in seen, "%s %s %r" % (a, b, seen))
    r.req({"op": "stop", "id": a})
    t.wait_until(lambda: r.req({"op": "get", "id": a})["sandbox"]["status"] == "stopped", 30)
    wait_full(t, r)
    result("warm pool: a stopped sandbox never comes back to the pool",
           a not in warm_ids(r) and not t.leftovers(r, a), "%s %s" % (warm_ids(r),
                                                                     t.leftovers(r, a)))
    r.req({"op": "stop", "id": b})


def t_stop(t):
    result = t.result
    r = t.Runner("tw%d" % t.N, t.AGENT, extra=EXTRA)
    wait_full(t, r)
    ids = warm_ids(r)
    r.p.send_signal(signal.SIGTERM)
    try:
        rc_ = r.p.wait(30)
    except subprocess.TimeoutExpired:
        rc_ = None
        r.p.kill()
    left = [(i, t.leftovers(r, i)) for i in ids if t.leftovers(r, i)]
    result("warm pool: SIGTERM stops the warm sandboxes too, nothing left, exit 0",
           len(ids) == POOL and rc_ == 0 and not left, "%s %s %s" % (ids, rc_, left))


def t_crash(t):
    result = t.result
    r = t.Runner("tw%d" % t.N, t.AGENT, extra=EXTRA)
    try:
        wait_full(t, r)
        taken = r.create(owner="crashowner")["sandbox"]["id"]
        wait_full(t, r)
        ids = warm_ids(r)
        r.p.kill()
        r.p.wait()
        r.extra = ["--drivers", "jail"]   # back without a pool
        r.start()
        left = [(i, t.leftovers(r, i)) for i in ids if t.leftovers(r, i)]
        lst = {s["id"]: s for s in r.req({"op": "list"})["sandboxes"]}
        result("warm pool: kill -9, restart: the warm sandboxes are removed and leave no "
               "record; the taken one is kept as lost",
               len(ids) == POOL and not left and not set(ids) & set(lst) and
               lst.get(taken, {}).get("stop_reason") == "runner_restart" and
               lst[taken].get("owner") == "crashowner" and status(r)["warm"] == 0,
               "%s %s %s" % (ids, left, lst))
    finally:
        r.stop_all()
        r.kill()


def t_broken_agent(t):
    """An agent that exits at once: each warm start fails, and the pool
    waits 5 s before the next (a slower host makes fewer, never more)."""
    result = t.result
    r = t.Runner("tw%d" % t.N, "/bin/false", extra=EXTRA)
    try:
        t.wait_until(lambda: "failed (error)" in r.logtext(), 30)
        t0 = r.logtext().count("failed (error)")
        time.sleep(3)
        n = r.logtext().count("failed (error)") - t0
        st = status(r)
        result("warm pool: a warm start that fails waits before the next (not a loop)",
               t0 >= 1 and n <= 1 and st["warm_ready"] == 0 and st["sandboxes"] == 0,
               "%d then %d in 3 s, %s" % (t0, n, st))
    finally:
        r.kill()


def t_flags(t):
    result = t.result
    bad = []
    for v in ("65", "-1", "x"):
        p = subprocess.run([t.RUNNER, "--warm-pool", v, "--socket", "/nonexistent/s"],
                           capture_output=True, text=True, timeout=30)
        if p.returncode != 2 or "--warm-pool must be a number in [0, 64]" not in p.stderr:
            bad.append((v, p.returncode, p.stderr[-200:]))
    result("warm pool: --warm-pool outside [0, 64] exits 2 naming the range", not bad, str(bad))


def run(t):
    if t.skip_unless_jail("warm pool", "the pool holds jail sandboxes"):
        return
    t_flags(t)
    r = t.Runner("tw%d" % t.N, t.AGENT, extra=EXTRA)
    try:
        if not wait_full(t, r):
            t.result("warm pool: fills at start", False, "%s\n%s" % (status(r),
                                                                     r.logtext()[-2000:]))
            return
        sid = t_taken(t, r)
        if sid:
            r.req({"op": "stop", "id": sid})
        t_mismatch(t, r)
        t_isolated(t, r)
    finally:
        r.stop_all()
        r.kill()
    t_stop(t)
    t_crash(t)
    t_broken_agent(t)
