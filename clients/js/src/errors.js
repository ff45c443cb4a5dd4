// The API's errors as classes: every refusal is a SandboxError carrying the
// body's code and message and the HTTP status; its subclass names the family
// of the code, so callers catch `NotFoundError` instead of comparing strings.
// docs/errors.md is the table, the same for every client (the Python client,
// sbx). A code this client does not know yet goes by its HTTP status.

/** An API error: the HTTP status (0: found on this side), the body's code and its message. */
export class SandboxError extends Error {
	constructor(status, code, message) {
		super(message);
		this.status = status;
		this.code = code;
	}
}

/** The request itself is wrong (bad JSON, a field's value, a size): fix it, do not retry. */
export class InvalidError extends SandboxError {}
/** No key, a wrong or revoked key, or a token without the scope. */
export class UnauthorizedError extends SandboxError {}
/** No such sandbox, command or file (another key's sandbox is not found too). */
export class NotFoundError extends SandboxError {}
/** The sandbox or command is not in a state for this (e.g. not running). */
export class ConflictError extends SandboxError {}
/** This key is at its limit (sandboxes at once, timeout): stop one or ask for less. */
export class RateLimitedError extends SandboxError {}
/** The service has no room now (memory, slots, storage): try again later or elsewhere. */
export class CapacityError extends SandboxError {}
/** The sandbox's runner (or the gateway) cannot be reached now: try again. */
export class UnavailableError extends SandboxError {}

// Each class's name set by hand: a minifying bundler renames the classes themselves.
const CLASSES = {
	SandboxError, InvalidError, UnauthorizedError, NotFoundError, ConflictError,
	RateLimitedError, CapacityError, UnavailableError,
};
for (const [name, Class] of Object.entries(CLASSES)) Class.prototype.name = name;

// docs/errors.md: one row per code, sorted by code (tests/openapi compares it
// with docs/openapi.yaml, the Python client's and sbx's).
export const CLASS_OF_CODE = {
	bad_request: InvalidError,
	conflict: ConflictError,
	connection_failed: UnavailableError,
	forbidden: UnauthorizedError,
	insufficient_storage: CapacityError,
	internal: SandboxError,
	invalid: InvalidError,
	isolation_unavailable: InvalidError,
	length_required: InvalidError,
	limit_reached: RateLimitedError,
	method_not_allowed: InvalidError,
	no_capacity: CapacityError,
	no_route: InvalidError,
	not_found: NotFoundError,
	paused: ConflictError,
	pull_failed: SandboxError,
	runner_unavailable: UnavailableError,
	sandbox_stopped: ConflictError,
	too_large: InvalidError,
	too_many_connections: CapacityError,
	unauthorized: UnauthorizedError,
	unknown_isolation: InvalidError,
	unsupported: InvalidError,
	upgrade_required: InvalidError,
	write_failed: SandboxError,
};

// A code not in the table (a newer gateway's) goes by its status.
const CLASS_OF_STATUS = {
	400: InvalidError, 401: UnauthorizedError, 403: UnauthorizedError,
	404: NotFoundError, 405: InvalidError, 409: ConflictError, 410: ConflictError,
	411: InvalidError, 413: InvalidError, 414: InvalidError, 422: InvalidError,
	426: InvalidError, 429: RateLimitedError, 503: UnavailableError, 507: CapacityError,
};

/** The error for a refusal: the class of its code, else of its status, else SandboxError. */
export function errorFor(status, code, message) {
	const Class = (Object.hasOwn(CLASS_OF_CODE, code) && CLASS_OF_CODE[code])
		|| (Object.hasOwn(CLASS_OF_STATUS, status) && CLASS_OF_STATUS[status]) || SandboxError;
	return new Class(status, code, message);
}
