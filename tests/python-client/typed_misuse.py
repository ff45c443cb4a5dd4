"""Must fail mypy --strict (run.sh checks the errors): a client whose types
were not visible would let these through."""
from sbxgw import Sandbox

sbx = Sandbox.create()
name: str = sbx.run("true").exit_code
sbx.files.write("a.txt", 42)
