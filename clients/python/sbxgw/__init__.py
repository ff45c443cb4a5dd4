"""sbxgw: the Python client of the self-hosted sandbox gateway (docs/api.md).

    from sbxgw import Sandbox
    sbx = Sandbox.create()                 # SANDBOX_URL, SANDBOX_API_KEY
    print(sbx.run("echo hi").stdout)
    sbx.stop()
"""
from ._async import AsyncClient, AsyncCommand, AsyncFork, AsyncSandbox, AsyncSnapshot
from ._errors import (CapacityError, ConflictError, InvalidError, NotFoundError,
                      RateLimitedError, SandboxError, UnauthorizedError, UnavailableError)
from ._files import AsyncFiles, Files
from ._logs import AsyncLogStream, LogStream
from ._pty import AsyncTerminal, Terminal
from ._sync import Client, Command, Fork, Sandbox, Snapshot
from ._types import (Chunk, CommandResult, EgressLogEntry, FileEntry, Image, ImageImport,
                     NetworkPolicy, Page)

__version__ = "0.1.0"
__all__ = [
    "AsyncClient", "AsyncCommand", "AsyncFiles", "AsyncFork", "AsyncLogStream", "AsyncSandbox",
    "AsyncSnapshot", "AsyncTerminal", "CapacityError", "Chunk", "Client", "Command",
    "CommandResult", "ConflictError", "EgressLogEntry", "FileEntry", "Files", "Fork", "Image",
    "ImageImport", "InvalidError", "LogStream", "NetworkPolicy", "NotFoundError", "Page",
    "RateLimitedError", "Sandbox", "SandboxError", "Snapshot", "Terminal",
    "UnauthorizedError", "UnavailableError",
]
