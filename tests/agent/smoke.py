import sys; sys.path.insert(0, sys.argv[2] if len(sys.argv) > 2 else '.')
import agentc
p = sys.argv[1]
print(agentc.call(p, {"op": "ping"}))
print(agentc.run(p, "sh", ["-c", "echo hi; echo err >&2; exit 3"]))
