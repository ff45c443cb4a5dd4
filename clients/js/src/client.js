// JavaScript client of the sandbox service's public API (docs/api.md).
// ES modules with no dependency in the browser; under Node (20 and later) it
// takes the `ws` package as WebSocket and SANDBOX_URL / SANDBOX_API_KEY as
// defaults ("#platform" in package.json picks which, by runtime).
//
//   const sbx = await Sandbox.create({ ports: [3000] });   // or new SandboxClient({...}).create()
//   await sbx.writeFiles([{ path: 'main.py', content: 'print(1)' }]);
//   const cmd = await sbx.runCommand({ cmd: 'python3', args: ['main.py'], detached: true });
//   for await (const ev of sbx.logs(cmd.id)) ...           // stdout / stderr / exit
import { defaultWebSocket, environmentDefaults, missing } from '#platform';
import { CommandStream } from './command-stream.js';
import { PtySession } from './pty-session.js';
import { errorFor } from './errors.js';

export { CommandStream } from './command-stream.js';
export { PtySession } from './pty-session.js';
export { RenderWatermark } from './flow-control.js';
export { vercelSandboxOptions } from './vercel-options.js';
export {
	SandboxError, InvalidError, UnauthorizedError, NotFoundError, ConflictError,
	RateLimitedError, CapacityError, UnavailableError,
} from './errors.js';

/** One API key at one gateway; makes and finds sandboxes. */
export class SandboxClient {
	/** streamTokens (default true): WebSocket URLs carry a short-lived token of the sandbox
	 *  (POST .../token, docs/api.md) instead of the API key, where the gateway has them.
	 *  baseUrl and apiKey not given: SANDBOX_URL and SANDBOX_API_KEY under Node, the page's
	 *  origin in a browser. */
	constructor({ baseUrl, apiKey, WebSocket, fetch, streamTokens = true } = {}) {
		const env = environmentDefaults();
		this.baseUrl = String(baseUrl || env.baseUrl || '').replace(/\/+$/, '');
		if (!this.baseUrl) throw new TypeError(missing('baseUrl', 'SANDBOX_URL'));
		this.apiKey = apiKey || env.apiKey;
		if (!this.apiKey) throw new TypeError(missing('apiKey', 'SANDBOX_API_KEY'));
		this.WebSocket = WebSocket || defaultWebSocket();
		this.fetch = fetch || globalThis.fetch.bind(globalThis);
		this.streamTokens = streamTokens;
	}

	/** A request to the REST API; JSON in and out unless `raw` asks for the Response. */
	async request(method, path, { json, body, raw = false } = {}) {
		const headers = { Authorization: `Bearer ${this.apiKey}` };
		if (json !== undefined) {
			headers['Content-Type'] = 'application/json';
			body = JSON.stringify(json);
		}
		let res;
		try {
			res = await this.fetch(this.baseUrl + path, { method, headers, body });
		} catch (e) {
			throw errorFor(0, 'connection_failed', `${this.baseUrl}: ${e.cause ? e.cause.message || e.cause.code : e.message}`);
		}
		if (!res.ok) {
			let code = 'http_' + res.status, message = res.statusText;
			try {
				const e = (await res.json()).error;
				if (e) ({ code, message } = e);
			} catch { /* not a JSON error body: keep the status line */ }
			throw errorFor(res.status, code, message);
		}
		if (raw) return res;
		return res.json();
	}

	/** ws:// or wss:// URL of an API path with `token` (default: the API key) as access_token:
	 *  browsers cannot set headers on a WebSocket. */
	socketUrl(path, params = {}, token = this.apiKey) {
		const u = new URL(this.baseUrl + path);
		u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
		for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, String(v));
		u.searchParams.set('access_token', token);
		return u.toString();
	}

	openSocket(path, params, token) {
		if (!this.WebSocket) throw new TypeError('no WebSocket implementation: pass options.WebSocket');
		const ws = new this.WebSocket(this.socketUrl(path, params, token));
		ws.binaryType = 'arraybuffer';
		return ws;
	}

	/** POST /v1/sandboxes; every field optional (timeout_ms, ports, env, network, image, ...). */
	async create(fields = {}) {
		return new Sandbox(this, await this.request('POST', '/v1/sandboxes', { json: fields }));
	}

	/** GET /v1/capabilities: {isolation: [{name, available, reason}], default}, what a create's
	 *  `isolation` may name on this gateway. */
	async capabilities() {
		return this.request('GET', '/v1/capabilities');
	}

	/** GET /v1/images: {images: [{name, digest, size, os, runtimes: {node, npm, corepack, python}}]},
	 *  what a create's `image` may name on this gateway. */
	async images() {
		return this.request('GET', '/v1/images');
	}

	/** POST /v1/images?name=: an OCI image layout tar or a `docker save` archive (plain or
	 *  gzip) as a Blob (a File in a browser; `await fs.openAsBlob(path)` under Node streams
	 *  it from disk) or bytes; the gateway needs its length, so no stream of unknown size. */
	async importImage(name, data) {
		return this.request('POST', `/v1/images?${new URLSearchParams({ name })}`, { body: data });
	}

	/** The runner pulls `ref` from a registry and imports it (as `name`, else ref's name). */
	async pullImage(ref, { name } = {}) {
		return this.request('POST', '/v1/images', { json: name === undefined ? { ref } : { ref, name } });
	}

	async deleteImage(name) {
		await this.request('DELETE', `/v1/images/${encodeURIComponent(name)}`, { raw: true });
	}

	async get(id) {
		return new Sandbox(this, await this.request('GET', `/v1/sandboxes/${encodeURIComponent(id)}`));
	}

	/** One page of this key's sandboxes in id order: at most `limit` (1..1000; the gateway's
	 *  default 100) whose id sorts after `cursor`; `next_cursor` is null on the last page. */
	async listPage({ limit, cursor } = {}) {
		const q = new URLSearchParams();
		if (limit !== undefined) q.set('limit', String(limit));
		if (cursor !== undefined && cursor !== null) q.set('cursor', cursor);
		const qs = q.toString();
		const r = await this.request('GET', `/v1/sandboxes${qs ? '?' + qs : ''}`);
		return { ...r, sandboxes: r.sandboxes.map((s) => new Sandbox(this, s)) };
	}

	/** Every sandbox of this key, page after page: `for await (const s of client.iterSandboxes())`. */
	async *iterSandboxes({ limit } = {}) {
		let cursor;
		for (;;) {
			const page = await this.listPage({ limit, cursor });
			yield* page.sandboxes;
			if (page.next_cursor === null || page.next_cursor === undefined) return;
			// a gateway that does not move on would loop forever
			if (page.next_cursor === cursor) throw errorFor(0, 'internal', `the list did not move past ${cursor}`);
			cursor = page.next_cursor;
		}
	}

	/** Every sandbox of this key (all pages). */
	async list() {
		const all = [];
		for await (const s of this.iterSandboxes()) all.push(s);
		return all;
	}

	/** A sandbox that starts with the snapshot's files (on the runner that holds it). */
	async createFromSnapshot(snapshotId, fields = {}) {
		return this.create({ ...fields, source: { snapshot: snapshotId } });
	}

	async snapshots() {
		const { snapshots } = await this.request('GET', '/v1/snapshots');
		return snapshots.map((s) => new Snapshot(this, s));
	}

	async getSnapshot(id) {
		return new Snapshot(this, await this.request('GET', `/v1/snapshots/${encodeURIComponent(id)}`));
	}

	/** Deletes it; resolves with it as it was (sandboxes made from it run on). */
	async deleteSnapshot(id) {
		return new Snapshot(this, await this.request('DELETE', `/v1/snapshots/${encodeURIComponent(id)}`));
	}
}

/** A snapshot of a sandbox's files. `info` is the gateway's object. */
export class Snapshot {
	constructor(client, info) {
		this.client = client;
		this.info = info;
		this.id = info.id;
	}

	async refresh() {
		this.info = (await this.client.getSnapshot(this.id)).info;
		return this;
	}

	/** A new sandbox that starts with this snapshot's files. */
	createSandbox(fields) { return this.client.createFromSnapshot(this.id, fields); }

	async delete() { await this.client.deleteSnapshot(this.id); }
}

/** The lines of an ndjson response body, parsed, as they arrive. */
async function* ndjson(res) {
	const decoder = new TextDecoder();
	let rest = '';
	const lines = function* (text) {
		const parts = (rest + text).split('\n');
		rest = parts.pop();
		for (const l of parts) if (l.trim()) yield JSON.parse(l);
	};
	for await (const chunk of res.body) yield* lines(decoder.decode(chunk, { stream: true }));
	yield* lines(decoder.decode() + '\n');
}

/** Shorthand: a client from {baseUrl, apiKey, WebSocket, fetch, streamTokens} and a sandbox
 *  from the other fields. */
export async function createSandbox({ baseUrl, apiKey, WebSocket, fetch, streamTokens, ...fields } = {}) {
	return new SandboxClient({ baseUrl, apiKey, WebSocket, fetch, streamTokens }).create(fields);
}

const encoder = new TextEncoder();

/** One sandbox. `info` is the latest object the gateway returned for it. */
export class Sandbox {
	constructor(client, info) {
		this.client = client;
		this.info = info;
		this.id = info.id;
	}

	/** The same as createSandbox(): a new sandbox, with the client made from the options. */
	static create(options) { return createSandbox(options); }

	get status() { return this.info.status; }
	/** How it is isolated: 'jail', 'gvisor', ... (GET /v1/capabilities lists them). */
	get isolation() { return this.info.isolation; }
	/** The image it started from: 'default', 'node22', ... (GET /v1/images lists them). */
	get image() { return this.info.image; }
	/** Milliseconds until the sandbox times out, by this machine's clock. */
	timeLeft(now = Date.now()) { return Math.max(0, (this.info.expires_at || 0) - now); }

	path(rest = '') { return `/v1/sandboxes/${encodeURIComponent(this.id)}${rest}`; }

	/**
	 * What goes in this sandbox's WebSocket URLs: a stream token (valid for this sandbox's
	 * sockets only, for 10 minutes; fetched again a minute before it ends), so the API key
	 * stays out of URLs and logs. The API key where the gateway has no tokens.
	 * scopes: what the socket needs, no more (docs/api.md): ['read'] to watch a stream,
	 * ['read', 'write'] to also send it stdin or signals, ['terminal'] for /pty.
	 */
	async streamToken(scopes = ['read']) {
		if (!this.client.streamTokens || this.noStreamTokens) return this.client.apiKey;
		const k = scopes.join(',');
		this.tokens = this.tokens || {};
		const t = this.tokens[k];
		if (t && t.expires_at - Date.now() > 60000) return t.token;
		try {
			this.tokens[k] = await this.client.request('POST', this.path('/token'), { json: { scopes } });
			return this.tokens[k].token;
		} catch (e) {
			if (e.status !== 404 && e.status !== 405) throw e;
			this.noStreamTokens = true; // an older gateway: the key itself is accepted
			return this.client.apiKey;
		}
	}

	/** A WebSocket on one of this sandbox's endpoints (rest: '/pty', '/commands/{cid}/stream'),
	 *  with a token of those scopes. */
	async openSocket(rest, params, scopes) {
		return this.client.openSocket(this.path(rest), params, await this.streamToken(scopes));
	}

	async refresh() {
		this.info = await this.client.request('GET', this.path());
		return this;
	}

	/** files: [{path, content (string | Uint8Array | Blob), mode?}], written one after another. */
	async writeFiles(files) {
		for (const f of files) {
			const q = new URLSearchParams({ path: f.path });
			if (f.mode !== undefined) q.set('mode', typeof f.mode === 'number' ? f.mode.toString(8).padStart(4, '0') : f.mode);
			const body = typeof f.content === 'string' ? encoder.encode(f.content) : f.content;
			await this.client.request('PUT', this.path(`/files?${q}`), { body, raw: true });
		}
	}

	/** The file's bytes as a Uint8Array. */
	async readFile(path) {
		const res = await this.client.request('GET', this.path(`/files?${new URLSearchParams({ path })}`), { raw: true });
		return new Uint8Array(await res.arrayBuffer());
	}

	async readTextFile(path) { return new TextDecoder().decode(await this.readFile(path)); }

	/**
	 * {cmd, args, cwd, env, sudo, detached, timeout_ms}. Not detached: resolves when it
	 * ends with {exit_code, signal, stdout, stderr, ...}. Detached: resolves at once
	 * with a Command (id, logs(), kill(), wait()).
	 */
	async runCommand({ cmd, args, cwd, env, sudo, detached, timeout_ms } = {}) {
		const body = { cmd, args, cwd, env, sudo, detached, timeout_ms };
		for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
		const r = await this.client.request('POST', this.path('/commands'), { json: body });
		return detached ? new Command(this, r) : r;
	}

	async getCommand(cid, { wait = false } = {}) {
		return this.client.request('GET', this.path(`/commands/${encodeURIComponent(cid)}${wait ? '?wait=1' : ''}`));
	}

	/**
	 * The command's output over the WebSocket stream, as an async iterator of
	 * {type:'stdout'|'stderr', data: Uint8Array, offset}, {type:'truncated', bytes},
	 * then {type:'exit', exit_code, signal}. A dropped socket is reopened with
	 * since = bytes received, so nothing is lost or doubled. input: true to also send
	 * the command stdin (write, end) and signals (kill) over it; a stream without it
	 * only reads (its token cannot do more).
	 */
	logs(cid, { since = 0, maxReconnects = 8, input = false } = {}) {
		const path = `/commands/${encodeURIComponent(cid)}/stream`;
		const scopes = input ? ['read', 'write'] : ['read'];
		return new CommandStream((params) => this.openSocket(path, params, scopes), { since, maxReconnects, input });
	}

	async kill(cid, signal = 'SIGTERM') {
		return this.client.request('POST', this.path(`/commands/${encodeURIComponent(cid)}/kill`), { json: { signal } });
	}

	/** The preview URL of a port the sandbox declared at creation. */
	domain(port) {
		const r = (this.info.routes || []).find((x) => Number(x.port) === Number(port));
		if (!r) throw errorFor(0, 'no_route', `port ${port} was not declared when the sandbox was created`);
		return r.url;
	}

	/** A terminal: {cmd='bash', cols=80, rows=24}; see PtySession. */
	pty({ cmd = 'bash', cols = 80, rows = 24 } = {}) {
		return new PtySession(this.openSocket('/pty', { cmd, cols, rows }, ['terminal']));
	}

	async extendTimeout(durationMs) {
		this.info = await this.client.request('POST', this.path('/extend'), { json: { duration_ms: durationMs } });
		return this;
	}

	/** Keeps the sandbox's files (not its processes) as a snapshot: {expires_in_ms, keep_last}. */
	async snapshot({ expires_in_ms, keep_last } = {}) {
		const body = {};
		if (expires_in_ms !== undefined) body.expires_in_ms = expires_in_ms;
		if (keep_last !== undefined) body.keep_last = keep_last;
		return new Snapshot(this.client, await this.client.request('POST', this.path('/snapshots'), { json: body }));
	}

	/** A snapshot and `count` new sandboxes from it, with this one's settings and without its env. */
	async fork({ count = 1 } = {}) {
		const r = await this.client.request('POST', this.path('/fork'), { json: { count } });
		return { snapshot: new Snapshot(this.client, r.snapshot), sandboxes: r.sandboxes.map((s) => new Sandbox(this.client, s)) };
	}

	/** Stops every process where it stands and the timeout clock; commands and files are refused
	 *  with ConflictError (code `paused`) until resume(). */
	async pause() {
		this.info = await this.client.request('POST', this.path('/pause'));
		return this;
	}

	async resume() {
		this.info = await this.client.request('POST', this.path('/resume'));
		return this;
	}

	/** The network policy in force: 'deny-all', 'allow-all' or {allow, deny_cidrs}. */
	get network() { return this.info.network ?? 'deny-all'; }

	/** Applies a network policy at once, without a restart. */
	async setNetwork(policy) {
		this.info = await this.client.request('PATCH', this.path('/network'), { json: { network: policy } });
		return this;
	}

	/** The egress log's entries after seq `since`, oldest first, as an async iterator. */
	async *networkLog({ since = 0 } = {}) {
		const res = await this.client.request('GET', this.path(`/network/log?since=${since}`), { raw: true });
		yield* ndjson(res);
	}

	/** Stops the sandbox; a persistent one is kept and its next command or file
	 * call resumes it (delete() ends it for good). Repeating it is not an error. */
	async stop() {
		this.info = await this.client.request('POST', this.path('/stop'));
		return this;
	}

	/** Stops and destroys the sandbox for good, a persistent one's kept files
	 * too; repeating it is not an error. */
	async delete() {
		await this.client.request('DELETE', this.path(), { raw: true });
		try { await this.refresh(); } catch { this.info = { ...this.info, status: 'stopped' }; }
		return this;
	}
}

/** A detached command. */
export class Command {
	constructor(sandbox, info) {
		this.sandbox = sandbox;
		this.info = info;
		this.id = info.id;
	}
	logs(opts) { return this.sandbox.logs(this.id, opts); }
	kill(signal) { return this.sandbox.kill(this.id, signal); }
	/** Resolves with the command's status once it has ended. */
	wait() { return this.sandbox.getCommand(this.id, { wait: true }); }
}
