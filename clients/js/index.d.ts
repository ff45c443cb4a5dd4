// Types of @sandbox-service/client (src/client.js and what it re-exports).
// Field names are the API's own (snake_case), as the gateway sends them
// (docs/api.md); the client passes objects through unchanged.

/** The constructor of a WebSocket: the browser's, `ws` under Node, or any with the same surface. */
export interface WebSocketLike {
	readonly readyState: number;
	binaryType: string;
	onopen: ((ev: any) => void) | null;
	onmessage: ((ev: { data: any }) => void) | null;
	onerror: ((ev: any) => void) | null;
	onclose: ((ev: { code: number; reason: string }) => void) | null;
	send(data: string | ArrayBufferView | ArrayBuffer): void;
	close(code?: number, reason?: string): void;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface SandboxClientOptions {
	/** The gateway, e.g. `https://sandbox.example.com`. Default: SANDBOX_URL under Node, the page's origin in a browser. */
	baseUrl?: string;
	/** Default: SANDBOX_API_KEY under Node. */
	apiKey?: string;
	/** Default: the `ws` package under Node, the global WebSocket in a browser. */
	WebSocket?: WebSocketConstructor;
	/** Default: the global fetch. */
	fetch?: typeof globalThis.fetch;
	/** WebSocket URLs carry a short-lived token of the sandbox instead of the API key (default true). */
	streamTokens?: boolean;
}

/** Network access of a sandbox: none, all, or these host names (`*.` wildcards) and
 *  address ranges refused besides the always-denied ones. */
export type NetworkPolicy = 'deny-all' | 'allow-all' | { allow?: string[]; deny_cidrs?: string[] };

/** POST /v1/sandboxes; every field optional. */
export interface CreateSandboxFields {
	timeout_ms?: number;
	idle_timeout_ms?: number;
	vcpus?: number;
	memory_mb?: number;
	ports?: number[];
	env?: Record<string, string>;
	network?: NetworkPolicy;
	image?: string;
	isolation?: string;
	/** Start with a snapshot's files (createFromSnapshot() says the same). */
	source?: { snapshot: string };
	[field: string]: unknown;
}

export type CreateSandboxOptions = SandboxClientOptions & CreateSandboxFields;

export type SandboxStatus = 'starting' | 'running' | 'paused' | 'stopping' | 'stopped' | 'failed';

export interface Route {
	port: number;
	/** The preview URL of the port. */
	url: string;
}

/** The sandbox object as the gateway returns it. */
export interface SandboxInfo {
	id: string;
	status: SandboxStatus;
	created_at: number;
	expires_at: number;
	isolation?: string;
	network?: NetworkPolicy;
	/** The snapshot it was made from. */
	source?: { snapshot: string };
	routes?: Route[];
	ports?: number[];
	stop_reason?: 'requested' | 'timeout' | 'error' | 'out_of_memory' | 'runner_restart' | string;
	error?: string;
	[field: string]: unknown;
}

export interface IsolationCapability {
	name: string;
	available: boolean;
	reason: string | null;
}

export interface Capabilities {
	isolation: IsolationCapability[];
	default: string;
}

export interface RequestOptions {
	/** Sent as the JSON body. */
	json?: unknown;
	/** Sent as the body as it is. */
	body?: BodyInit;
	/** Resolve with the Response instead of its JSON. */
	raw?: boolean;
}

/** An image of GET /v1/images. */
export interface ImageInfo {
	name: string;
	created_at: number;
	os?: string;
	/** sha256 over the image's tree, or of an imported image's config.json. */
	digest?: string;
	size?: number;
	runtimes?: Record<string, string>;
}

/** What POST /v1/images made of an archive or a pull. */
export interface ImageImportResult {
	name: string;
	source: 'oci' | 'docker-archive';
	layers: number;
	/** Layers (and their bytes) the runner's store did not have yet. */
	layers_new: number;
	bytes_new: number;
	/** Files whose setuid/setgid bits were removed. */
	setuid_stripped: number;
}

export interface PullImageOptions {
	/** The name to import it as (default: from the reference). */
	name?: string;
}

/** The snapshot object as the gateway returns it. */
export interface SnapshotInfo {
	id: string;
	sandbox_id: string;
	image: string;
	isolation: string;
	/** Bytes of file content in its layer. */
	size: number;
	created_at: number;
	expires_at: number | null;
	/** The snapshot its sandbox was made from. */
	parent: string | null;
	/** Layers it stacks over the image (1..8). */
	depth: number;
}

export interface SnapshotOptions {
	/** Delete it after this long (1 ms .. 30 days). */
	expires_in_ms?: number;
	/** Keep only this sandbox's newest N snapshots. */
	keep_last?: number;
}

/** A snapshot of a sandbox's files. */
export class Snapshot {
	constructor(client: SandboxClient, info: SnapshotInfo);
	readonly client: SandboxClient;
	info: SnapshotInfo;
	readonly id: string;
	refresh(): Promise<this>;
	/** A new sandbox that starts with this snapshot's files. */
	createSandbox(fields?: CreateSandboxFields): Promise<Sandbox>;
	delete(): Promise<void>;
}

/** What fork() made. */
export interface ForkResult {
	snapshot: Snapshot;
	sandboxes: Sandbox[];
}

export interface ForkOptions {
	/** How many sandboxes (1..10, default 1). */
	count?: number;
}

export interface ListOptions {
	/** A page's size, at most (1..1000; the gateway's default 100). */
	limit?: number;
	/** Sandboxes whose id sorts after this one (the `next_cursor` of the page before). */
	cursor?: string | null;
}

/** One page of GET /v1/sandboxes. */
export interface SandboxPage {
	sandboxes: Sandbox[];
	/** The cursor of the next page; null on the last. */
	next_cursor: string | null;
	/** Runners that did not answer: their sandboxes are missing from the page. */
	unavailable_runners: string[];
}

/** One decision of a sandbox's resolver (port 53) or egress proxy (80, 443). */
export interface EgressLogEntry {
	seq: number;
	time_ms: number;
	/** The name asked for ("" when none was found). */
	name: string;
	port: number;
	verdict: 'allowed' | 'denied';
	/** The pattern that allowed it, or why it was denied. */
	rule: string;
	bytes_out: number;
	bytes_in: number;
}

export interface NetworkLogOptions {
	/** The last seq already had (default 0: every entry kept). */
	since?: number;
}

/** One API key at one gateway; makes and finds sandboxes. */
export class SandboxClient {
	constructor(options?: SandboxClientOptions);
	readonly baseUrl: string;
	readonly apiKey: string;
	readonly streamTokens: boolean;
	request(method: string, path: string, options: RequestOptions & { raw: true }): Promise<Response>;
	request<T = any>(method: string, path: string, options?: RequestOptions): Promise<T>;
	/** ws:// or wss:// URL of an API path with `token` (default: the API key) as access_token. */
	socketUrl(path: string, params?: Record<string, string | number | undefined>, token?: string): string;
	create(fields?: CreateSandboxFields): Promise<Sandbox>;
	capabilities(): Promise<Capabilities>;
	get(id: string): Promise<Sandbox>;
	/** Every sandbox of this key (all pages). */
	list(): Promise<Sandbox[]>;
	listPage(options?: ListOptions): Promise<SandboxPage>;
	/** Every sandbox of this key, page after page. */
	iterSandboxes(options?: { limit?: number }): AsyncGenerator<Sandbox, void, undefined>;
	images(): Promise<{ images: ImageInfo[] }>;
	/** An OCI image layout tar or a `docker save` archive; under Node `await fs.openAsBlob(path)` streams a file. */
	importImage(name: string, data: Blob | Uint8Array | ArrayBuffer): Promise<ImageImportResult>;
	pullImage(ref: string, options?: PullImageOptions): Promise<ImageImportResult>;
	deleteImage(name: string): Promise<void>;
	createFromSnapshot(snapshotId: string, fields?: CreateSandboxFields): Promise<Sandbox>;
	snapshots(): Promise<Snapshot[]>;
	getSnapshot(id: string): Promise<Snapshot>;
	/** Resolves with it as it was. */
	deleteSnapshot(id: string): Promise<Snapshot>;
}

/** A client from the client options and a sandbox from the other fields. */
export function createSandbox(options?: CreateSandboxOptions): Promise<Sandbox>;

export interface FileToWrite {
	/** Absolute, or relative to /home/sandbox; parent directories are created. */
	path: string;
	content: string | Uint8Array | Blob;
	/** 0o644 or '0644'. */
	mode?: number | string;
}

export interface RunCommandOptions {
	cmd: string;
	args?: string[];
	cwd?: string;
	env?: Record<string, string>;
	sudo?: boolean;
	detached?: boolean;
	timeout_ms?: number;
}

/** What a command that ran to its end gives. */
export interface CommandResult {
	id: string;
	status: string;
	exit_code: number | null;
	signal: string | null;
	stdout: string;
	stderr: string;
	stdout_truncated?: boolean;
	stderr_truncated?: boolean;
	duration_ms?: number;
	[field: string]: unknown;
}

/** A command's status (GET .../commands/{cid}). */
export interface CommandInfo {
	id: string;
	status: string;
	pid?: number;
	started_at?: number;
	exit_code?: number | null;
	signal?: string | null;
	[field: string]: unknown;
}

export type StreamScope = 'read' | 'write' | 'terminal';

export interface LogsOptions {
	/** Chunk bytes the caller already has (both streams): the stream starts after them. */
	since?: number;
	/** Reopenings in a row that bring nothing before the stream gives up (default 8). */
	maxReconnects?: number;
	/** Also send stdin and signals over the stream (its token then allows it). */
	input?: boolean;
}

/** A chunk of one stream (OutputEvent<'stdout'> narrows to stdout only). */
export interface OutputEvent<Stream extends 'stdout' | 'stderr' = 'stdout' | 'stderr'> {
	type: Stream;
	data: Uint8Array;
	/** Chunk bytes of both streams before this one. */
	offset: number;
}
export interface TruncatedEvent {
	type: 'truncated';
	/** Bytes lost to the gateway's retention bound. */
	bytes: number;
}
export interface ExitEvent {
	type: 'exit';
	exit_code: number | null;
	signal: string | null;
}
export type StreamEvent = OutputEvent<'stdout'> | OutputEvent<'stderr'> | TruncatedEvent | ExitEvent;

/** A command's output over its WebSocket stream, resumed where it left off after a drop. */
export class CommandStream implements AsyncIterableIterator<StreamEvent> {
	constructor(connect: (params: { since: number }) => Promise<WebSocketLike>, options?: LogsOptions);
	/** Chunk bytes delivered so far (the offset a reopening resumes at). */
	readonly received: number;
	/** How many times the socket was reopened. */
	readonly reconnects: number;
	readonly exit: { type: 'exit'; exit_code?: number | null; signal?: string | null } | null;
	readonly ended: boolean;
	readonly error: Error | null;
	/** Drops the current socket and resumes on a new one. */
	reconnect(): void;
	/** Bytes for the command's stdin (needs `input: true`). */
	write(data: string | Uint8Array): void;
	/** Closes the command's stdin (needs `input: true`). */
	end(): void;
	/** Signals the command, e.g. 'SIGINT' (needs `input: true`). */
	kill(signal?: string): void;
	/** Stops reading; the command keeps running. */
	close(): void;
	next(): Promise<IteratorResult<StreamEvent, undefined>>;
	return(): Promise<IteratorResult<StreamEvent, undefined>>;
	[Symbol.asyncIterator](): CommandStream;
}

export interface PtyOptions {
	cmd?: string;
	cols?: number;
	rows?: number;
}

export interface PtyEvents {
	data: Uint8Array;
	exit: { type: 'exit'; exit_code: number | null; signal: string | null };
	error: { code?: string; message?: string };
	close: { code: number; reason: string };
}

/** A terminal in a sandbox. Closing it ends the shell. */
export class PtySession {
	constructor(socket: WebSocketLike | Promise<WebSocketLike>);
	/** Resolves once the socket is open; rejects if it closed first. */
	readonly opened: Promise<PtySession>;
	/** Resolves when the socket has closed. */
	readonly closed: Promise<{ code: number; reason: string }>;
	readonly exit: PtyEvents['exit'] | null;
	readonly isOpen: boolean;
	/** Adds a listener; the returned function removes it. */
	on<E extends keyof PtyEvents>(event: E, fn: (arg: PtyEvents[E]) => void): () => void;
	/** Keystrokes: a string (sent as UTF-8) or bytes. */
	write(data: string | Uint8Array): void;
	resize(cols: number, rows: number): void;
	/** Ask the gateway to stop reading the terminal until resume(). */
	pause(): void;
	resume(): void;
	close(): Promise<{ code: number; reason: string }>;
}

/** One sandbox; `info` is the latest object the gateway returned for it. */
export class Sandbox {
	constructor(client: SandboxClient, info: SandboxInfo);
	/** A new sandbox, with the client made from the options (SANDBOX_URL / SANDBOX_API_KEY by default under Node). */
	static create(options?: CreateSandboxOptions): Promise<Sandbox>;
	readonly client: SandboxClient;
	info: SandboxInfo;
	readonly id: string;
	readonly status: SandboxStatus;
	readonly isolation: string | undefined;
	/** Milliseconds until it times out, by this machine's clock. */
	timeLeft(now?: number): number;
	/** The API path of this sandbox plus `rest`. */
	path(rest?: string): string;
	/** A stream token of these scopes (the API key where the gateway has none). */
	streamToken(scopes?: StreamScope[]): Promise<string>;
	refresh(): Promise<this>;
	writeFiles(files: FileToWrite[]): Promise<void>;
	readFile(path: string): Promise<Uint8Array>;
	readTextFile(path: string): Promise<string>;
	runCommand(options: RunCommandOptions & { detached: true }): Promise<Command>;
	runCommand(options: RunCommandOptions & { detached?: false }): Promise<CommandResult>;
	runCommand(options: RunCommandOptions): Promise<Command | CommandResult>;
	getCommand(cid: string, options?: { wait?: boolean }): Promise<CommandInfo>;
	logs(cid: string, options?: LogsOptions): CommandStream;
	kill(cid: string, signal?: string): Promise<unknown>;
	/** The preview URL of a port declared at creation; throws SandboxError `no_route` otherwise. */
	domain(port: number): string;
	pty(options?: PtyOptions): PtySession;
	extendTimeout(durationMs: number): Promise<this>;
	snapshot(options?: SnapshotOptions): Promise<Snapshot>;
	fork(options?: ForkOptions): Promise<ForkResult>;
	/** Commands and files are refused with ConflictError `paused` until resume(). */
	pause(): Promise<this>;
	resume(): Promise<this>;
	/** The policy in force. */
	readonly network: NetworkPolicy;
	setNetwork(policy: NetworkPolicy): Promise<this>;
	/** The egress log's entries after `since`, oldest first. */
	networkLog(options?: NetworkLogOptions): AsyncGenerator<EgressLogEntry, void, undefined>;
	/** Stops it; a persistent one is kept and its next command or file call
	 * resumes it. Repeating it is not an error. */
	stop(): Promise<this>;
	/** Stops and destroys it for good, a persistent one's kept files too;
	 * repeating it is not an error. */
	delete(): Promise<this>;
}

/** A detached command. */
export class Command {
	constructor(sandbox: Sandbox, info: CommandInfo);
	readonly sandbox: Sandbox;
	readonly info: CommandInfo;
	readonly id: string;
	logs(options?: LogsOptions): CommandStream;
	kill(signal?: string): Promise<unknown>;
	/** Resolves with its status once it has ended. */
	wait(): Promise<CommandInfo>;
}

/** An API error: the HTTP status, the body's code and its message (docs/errors.md). */
export class SandboxError extends Error {
	constructor(status: number, code: string, message: string);
	/** The HTTP status (0: found on this side, e.g. connection_failed, no_route). */
	readonly status: number;
	/** The API's error code, e.g. `not_found`. */
	readonly code: string;
	/** On errors that ended a stream: its close code (4000 + the HTTP status). */
	closeCode?: number;
}
// The classes of docs/errors.md's table (by code, else by status).
/** The request itself is wrong (bad_request, invalid, too_large, ...): fix it, do not retry. */
export class InvalidError extends SandboxError {}
/** unauthorized, forbidden: no key, a wrong or revoked key, or a token without the scope. */
export class UnauthorizedError extends SandboxError {}
/** not_found: no such sandbox, command or file. */
export class NotFoundError extends SandboxError {}
/** conflict, paused, sandbox_stopped: the sandbox or command is not in a state for this. */
export class ConflictError extends SandboxError {}
/** limit_reached: this key is at its limit. */
export class RateLimitedError extends SandboxError {}
/** no_capacity, too_many_connections, insufficient_storage: no room now. */
export class CapacityError extends SandboxError {}
/** runner_unavailable, connection_failed: the runner or the gateway cannot be reached now. */
export class UnavailableError extends SandboxError {}

export interface RenderWatermarkOptions {
	/** Pause above this many unrendered bytes (default 256 KiB). */
	high?: number;
	/** Resume below this many (default 64 KiB); must be below `high`. */
	low?: number;
	onPause?: () => void;
	onResume?: () => void;
}

/** Terminal flow control: counts bytes written to a renderer and not yet rendered. */
export class RenderWatermark {
	constructor(options?: RenderWatermarkOptions);
	readonly high: number;
	readonly low: number;
	readonly pending: number;
	readonly paused: boolean;
	written(n: number): void;
	rendered(n: number): void;
}

export interface VercelSandboxOptions {
	token: string;
	teamId: string;
	projectId: string;
	fetch: typeof globalThis.fetch;
}

/** Options for the `@vercel/sandbox` SDK that send its calls to this gateway (docs/vercel.md). */
export function vercelSandboxOptions(options: { url: string; apiKey: string; fetch?: typeof globalThis.fetch }): VercelSandboxOptions;
