"""sbxgw: the Python client of the self-hosted sandbox gateway (docs/api.md).

    from sbxgw import Sandbox
    sbx = Sandbox.create()                 # SANDBOX_URL, SANDBOX_API_KEY
    print(sbx.run("echo hi").stdout)
    sbx.stop()
"""
from ._async import AsyncClient, AsyncCommand, AsyncSandbox
from ._errors import (CapacityError, ConflictError, InvalidError, NotFoundError,
                      RateLimitedError, SandboxError, UnauthorizedError, UnavailableError)
from ._files import AsyncFiles, Files
from ._logs import AsyncLogStream, LogStream
from ._pty import AsyncTerminal, Terminal
from ._sync import Client, Command, Sandbox
from ._types import Chunk, CommandResult, FileEntry, Image

__version__ = "0.1.0"
__all__ = [
    "AsyncClient", "AsyncCommand", "AsyncFiles", "AsyncLogStream", "AsyncSandbox",
    "AsyncTerminal", "CapacityError", "Chunk", "Client", "Command", "CommandResult",
    "ConflictError", "FileEntry", "Files", "Image", "InvalidError", "LogStream",
    "NotFoundError", "RateLimitedError", "Sandbox", "SandboxError", "Terminal",
    "UnauthorizedError", "UnavailableError",
]
