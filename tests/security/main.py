"""Runs the probes of groups A-D (see run.sh for the processes it expects).

Usage: main.py [N ...]   (only these probe numbers; default all)
Sandboxes shared by many probes are made once here (ctx); a probe that
needs special limits makes its own and deletes it."""
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lib  # noqa: E402
from lib import Api, Skip, result, say, sid_of  # noqa: E402

class Ctx:
    def __init__(self):
        e = os.environ
        self.port = int(e["SEC_PORT"])
        self.ka, self.kb, self.canary = e["SEC_KA"], e["SEC_KB"], e["SEC_CANARY"]
        self.dir, self.name = e["SEC_DIR"], e["SEC_NAME"]
        self.state = os.path.join(self.dir, "state")
        self.runner_pid, self.gw_pid = int(e["SEC_RUNNER_PID"]), int(e["SEC_GW_PID"])
        self.imgdir, self.root = e["SEC_IMGDIR"], e["SEC_ROOT"]
        self.a = Api(self.port, self.ka)
        self.b = Api(self.port, self.kb)
        self._sb = {}
        self.extra = []          # sandboxes made by probes, deleted at the end
        self.cleanups = []       # host-side undo steps (netns, routes, firewall)
        self.cache = {}

    def sandbox(self, key="A", api=None, **kw):
        """A shared sandbox by role name, made on first use."""
        if key not in self._sb:
            api = api or self.a
            sid = sid_of(api.create(timeout_ms=600000, **kw))
            api.put_helper(sid)
            self._sb[key] = (api, sid)
        return self._sb[key][1]

    def own(self, api=None, **kw):
        """A sandbox for one probe; deleted by the caller or at the end."""
        api = api or self.a
        kw.setdefault("timeout_ms", 300000)
        sid = sid_of(api.create(**kw))
        api.put_helper(sid)
        self.extra.append((api, sid))
        return sid

    def drop(self, sid):
        for api, s in list(self.extra):
            if s == sid:
                api.delete(s)
                self.extra.remove((api, s))

    def healthy(self):
        """The gateway answers and the runner/gateway processes live."""
        st, _ = Api(self.port, None).req("GET", "/healthz", timeout=10)
        return st == 200 and lib.alive(self.runner_pid) and lib.alive(self.gw_pid)

    def close(self):
        for api, s in self.extra:
            api.delete(s)
        for api, s in self._sb.values():
            api.delete(s)
        for fn in reversed(self.cleanups):
            try:
                fn()
            except Exception as e:  # noqa
                say("cleanup:", repr(e))


import probes_a  # noqa: E402,F401  (each registers its probes with @probe)
import probes_b  # noqa: E402,F401
import probes_c  # noqa: E402,F401
import probes_d  # noqa: E402,F401
import probes_paths  # noqa: E402,F401
import probes_limits  # noqa: E402,F401
import probes_flood  # noqa: E402,F401  (the flood section, 70-72)
import probes_gvisor  # noqa: E402,F401  (80-84: which kernel a sandbox reaches)
import probes_kernel_surface  # noqa: E402,F401  (180-184: socket memory, /proc, memfd_secret)
import probes_sock_budget  # noqa: E402,F401  (185: connections refused at the socket budget)


def main():
    only = {int(a) for a in sys.argv[1:]}
    ctx = Ctx()
    t_all = time.time()
    try:
        for n, name, fn in sorted(lib.PROBES, key=lambda p: p[0]):
            if only and n not in only:
                continue
            print("-- %d %s" % (n, name))
            t = time.time()
            try:
                if lib.ISOLATION != "jail" and n in probes_gvisor.JAIL_ONLY:
                    raise Skip("%s: %s" % (lib.ISOLATION, probes_gvisor.JAIL_ONLY[n]))
                ok, detail = fn(ctx)
            except Skip as e:
                ok, detail = None, str(e)
            except Exception as e:  # noqa
                ok, detail = False, "probe error: %r\n%s" % (e, traceback.format_exc()[-1500:])
            say("(%.1fs)" % (time.time() - t))
            result(n, name, ok, detail)
    finally:
        ctx.close()
        if not only or 0 in only:
            leaks_after(ctx)
    say("total %.0fs" % (time.time() - t_all))
    c = lib.counts
    print("%d passed, %d failed, %d skipped" % (c["passed"], c["failed"], c["skipped"]))
    return 1 if c["failed"] else 0


def leaks_after(ctx):
    """Every sandbox deleted through the API: the leak checker finds nothing
    of this runner's (the runner is still running)."""
    r = lib.wait_until(lambda: lib.run([os.path.join(lib.HERE, "leaks.sh"), ctx.name,
                                        ctx.state]).returncode == 0, 10, 0.5)
    p = lib.run([os.path.join(lib.HERE, "leaks.sh"), ctx.name, ctx.state])
    result(0, "leak checker after every sandbox was deleted", r and p.returncode == 0,
           p.stdout[-2000:])


if __name__ == "__main__":
    sys.exit(main())
