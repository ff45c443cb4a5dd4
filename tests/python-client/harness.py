"""A tiny sequential runner for this suite, like tests/client/harness.js:
test(name) registers a case; run() executes them in order, prints
PASS/FAIL/SKIP lines and closes with "N passed, N failed, N skipped"."""
import asyncio
import inspect
import os
import re
import signal
import time
import traceback

CASES = []
ONLY = re.compile(os.environ["TEST_ONLY"]) if os.environ.get("TEST_ONLY") else None
# A case stuck on a socket that never answers fails instead of holding the
# suite; generous, for a busy machine: no case is timed.
CASE_LIMIT_S = 300


class Skip(Exception):
    """Raised inside a case: it counts as skipped, with the reason."""


def test(name):
    def register(fn):
        if not ONLY or ONLY.search(name):
            CASES.append((name, fn))
        return fn
    return register


def _stuck(signum, frame):
    raise TimeoutError(f"no end after {CASE_LIMIT_S} s")


def run():
    passed = failed = skipped = 0
    signal.signal(signal.SIGALRM, _stuck)
    for name, fn in CASES:
        t0 = time.monotonic()
        signal.alarm(CASE_LIMIT_S)
        try:
            if inspect.iscoroutinefunction(fn):
                asyncio.run(fn())
            else:
                fn()
            passed += 1
            print(f"PASS: {name} ({int((time.monotonic() - t0) * 1000)} ms)", flush=True)
        except Skip as e:
            skipped += 1
            print(f"SKIP: {name}: {e}", flush=True)
        except BaseException as e:  # noqa: BLE001 - a failing case must not stop the others
            failed += 1
            detail = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            print(f"FAIL: {name}: {detail}", flush=True)
        finally:
            signal.alarm(0)
    print(f"{passed} passed, {failed} failed, {skipped} skipped", flush=True)
    return failed == 0
