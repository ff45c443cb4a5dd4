"""The API's errors as exceptions: one class per family of error codes.

The gateway answers an error with a status and {"error":{"code","message"}}
(docs/errors.md lists every code). The same table is in the JS client and
sbx, so a code means the same thing whichever client sees it.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Type


class SandboxError(Exception):
    """An error of the API: the HTTP status, the body's code and its message.

    status is 0 for errors found on this side (no connection, a port that was
    not declared); a WebSocket closed with 4000 + status gives that status.
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class InvalidError(SandboxError):
    """The request itself is wrong (bad JSON, a field's value, a size): fix it, do not retry."""


class UnauthorizedError(SandboxError):
    """No key, a wrong or revoked key, or a token without the scope."""


class NotFoundError(SandboxError):
    """No such sandbox, command or file (another key's sandbox is not found too)."""


class ConflictError(SandboxError):
    """The sandbox or command is not in a state for this (e.g. not running)."""


class RateLimitedError(SandboxError):
    """This key is at its limit (sandboxes at once, timeout): stop one or ask for less."""


class CapacityError(SandboxError):
    """The service has no room now (memory, slots, storage): try again later or elsewhere."""


class UnavailableError(SandboxError):
    """The sandbox's runner (or the gateway) cannot be reached now: try again."""


# docs/errors.md: one row per code, sorted by code.
CODE_CLASSES: Dict[str, Type[SandboxError]] = {
    "bad_request": InvalidError,
    "conflict": ConflictError,
    "connection_failed": UnavailableError,
    "forbidden": UnauthorizedError,
    "insufficient_storage": CapacityError,
    "internal": SandboxError,
    "invalid": InvalidError,
    "isolation_unavailable": InvalidError,
    "length_required": InvalidError,
    "limit_reached": RateLimitedError,
    "method_not_allowed": InvalidError,
    "no_capacity": CapacityError,
    "no_route": InvalidError,
    "not_found": NotFoundError,
    "paused": ConflictError,
    "pull_failed": SandboxError,
    "runner_unavailable": UnavailableError,
    "sandbox_stopped": ConflictError,
    "too_large": InvalidError,
    "too_many_connections": CapacityError,
    "unauthorized": UnauthorizedError,
    "unknown_isolation": InvalidError,
    "unsupported": InvalidError,
    "upgrade_required": InvalidError,
    "write_failed": SandboxError,
}

# A code not in the table (a newer gateway's) goes by its status.
STATUS_CLASSES: Dict[int, Type[SandboxError]] = {
    400: InvalidError, 401: UnauthorizedError, 403: UnauthorizedError,
    404: NotFoundError, 405: InvalidError, 409: ConflictError, 410: ConflictError,
    411: InvalidError, 413: InvalidError, 414: InvalidError, 422: InvalidError,
    426: InvalidError, 429: RateLimitedError, 503: UnavailableError, 507: CapacityError,
}


def error_class(status: int, code: str) -> Type[SandboxError]:
    cls = CODE_CLASSES.get(code)
    if cls is not None:
        return cls
    return STATUS_CLASSES.get(status, SandboxError)


def make_error(status: int, code: str, message: str) -> SandboxError:
    return error_class(status, code)(status, code, message)


def error_from_body(status: int, body: bytes, reason: str = "") -> SandboxError:
    """The exception for an error response; a body that is not the API's
    JSON error keeps the status line (code "http_<status>")."""
    code, message = f"http_{status}", reason or "HTTP error"
    try:
        err: Any = json.loads(body.decode("utf-8")).get("error")
        if isinstance(err, dict):
            code = str(err.get("code", code))
            message = str(err.get("message", message))
    except (ValueError, AttributeError, UnicodeDecodeError):
        pass
    return make_error(status, code, message)
