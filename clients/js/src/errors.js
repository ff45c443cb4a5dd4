// The API's errors as classes: every refusal is a SandboxError carrying the
// body's code and message and the HTTP status; its subclass names the family
// of the code (docs/errors.md is the table), so callers catch `NotFound`
// instead of comparing strings. A code this client does not know yet falls
// back to its HTTP status's family, then to SandboxError itself.

/** An API error: the HTTP status plus the body's error code and message. */
export class SandboxError extends Error {
	constructor(status, code, message) {
		super(message);
		this.status = status;
		this.code = code;
	}
}

/** not_found: no such sandbox, command, file or path (or another key's). */
export class NotFound extends SandboxError {}
/** unauthorized, forbidden: no key, a wrong key, or a token without the scope. */
export class Unauthorized extends SandboxError {}
/** invalid, bad_request and the other refusals of what was sent. */
export class Invalid extends SandboxError {}
/** conflict: the sandbox or command is not in a state that allows it (stopped, exited). */
export class Conflict extends SandboxError {}
/** insufficient_storage: the runner's disk cannot hold it. */
export class InsufficientStorage extends SandboxError {}
/** limit_reached, too_many_connections: a per-key or per-sandbox limit; retry later or ask for less. */
export class RateLimited extends SandboxError {}
/** no_capacity, runner_unavailable: no runner can take it now. */
export class Unavailable extends SandboxError {}
/** internal: the gateway or its runner failed. */
export class Internal extends SandboxError {}

// Each class's name set by hand: a minifying bundler renames the classes themselves.
const CLASSES = { SandboxError, NotFound, Unauthorized, Invalid, Conflict, InsufficientStorage, RateLimited, Unavailable, Internal };
for (const [name, Class] of Object.entries(CLASSES)) Class.prototype.name = name;

const CLASS_OF_CODE = {
	bad_request: Invalid,
	conflict: Conflict,
	forbidden: Unauthorized,
	insufficient_storage: InsufficientStorage,
	internal: Internal,
	invalid: Invalid,
	isolation_unavailable: Invalid,
	length_required: Invalid,
	limit_reached: RateLimited,
	method_not_allowed: Invalid,
	no_capacity: Unavailable,
	not_found: NotFound,
	runner_unavailable: Unavailable,
	too_large: Invalid,
	too_many_connections: RateLimited,
	unauthorized: Unauthorized,
	unknown_isolation: Invalid,
	upgrade_required: Invalid,
};

function classOfStatus(status) {
	if (status === 401 || status === 403) return Unauthorized;
	if (status === 404) return NotFound;
	if (status === 409) return Conflict;
	if (status === 429) return RateLimited;
	if (status === 503) return Unavailable;
	if (status === 507) return InsufficientStorage;
	if (status >= 400 && status < 500) return Invalid;
	if (status >= 500) return Internal;
	return SandboxError;
}

/** The error for a refusal: the class of its code, else of its status. */
export function errorFor(status, code, message) {
	const Class = Object.hasOwn(CLASS_OF_CODE, code) ? CLASS_OF_CODE[code] : classOfStatus(status);
	return new Class(status, code, message);
}
