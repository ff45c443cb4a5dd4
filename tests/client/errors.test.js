// The JS client's error classes (docs/errors.md) and its defaults from the
// environment, against the real gateway: GW_URL and GW_KEY from run.sh, and
// GW2_URL, a gateway whose runner is not there. Every row of docs/errors.md is
// checked against the client; the codes a gateway can be made to give are
// checked on its real refusals, and nothing a refusal answers is created.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as api from '../../clients/js/src/client.js';
import { test, run } from './harness.js';

const { SandboxClient, Sandbox, SandboxError } = api;
const baseUrl = process.env.GW_URL;
const apiKey = process.env.GW_KEY;
const client = new SandboxClient({ baseUrl, apiKey });
const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

/** The error a promise rejects with (fails if it resolves). */
async function refusal(promise) {
	try { await promise; } catch (e) { return e; }
	assert.fail('resolved, expected a refusal');
}

/** e is an instance of the class named `name` (exported by the package) with this status and code. */
function assertError(e, name, status, code) {
	assert.ok(api[name], `the package exports ${name}`);
	assert.ok(e instanceof api[name] && e instanceof SandboxError, `${e && e.name}: ${e && e.message} is not a ${name}`);
	assert.equal(e.name, name);
	assert.equal(e.status, status);
	assert.equal(e.code, code);
	assert.ok(e.message && !e.message.startsWith(String(status)), `message is the gateway's text: ${e.message}`);
}

/** A client whose fetch answers every request with this status and error body. */
const answering = (status, body) => new SandboxClient({
	baseUrl: 'http://gateway.invalid', apiKey: 'k',
	fetch: async () => new Response(typeof body === 'string' ? body : JSON.stringify(body), { status }),
});

const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| ([0-9, ]+) \| `(\w+)` \|/gm)]
	.map(([, code, statuses, name]) => ({ code, statuses: statuses.split(',').map(Number), name }));

test('errors.md: its table is sorted by code and names only classes the package exports', async () => {
	assert.ok(rows.length >= 15, `${rows.length} rows read`);
	const codes = rows.map((r) => r.code);
	assert.deepEqual(codes, [...codes].sort(), 'sorted by code');
	for (const r of rows) assert.ok(api[r.name] && (api[r.name] === SandboxError || api[r.name].prototype instanceof SandboxError), r.name);
});

test('errors.md: every code docs/api.md gives with a status has its row, with that status', async () => {
	const apiDoc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
	const given = [...apiDoc.matchAll(/\b([1-5]\d\d) `([a-z]+(?:_[a-z]+)*)`/g)];
	assert.ok(given.length >= 10, `${given.length} codes found in docs/api.md`);
	for (const [, status, code] of given) {
		const row = rows.find((r) => r.code === code);
		assert.ok(row, `${code} (${status}) has no row`);
		assert.ok(row.statuses.includes(Number(status)), `${code}: ${status} not in ${row.statuses}`);
	}
});

test('errors.md rows: each code, at each of its statuses, is an error of its class', async () => {
	for (const r of rows) {
		for (const status of r.statuses) {
			// status 0 (found on the client's side) cannot be a Response: any status shows the code wins
			const e = await refusal(answering(status || 500, { error: { code: r.code, message: 'why' } }).list());
			assertError(e, r.name, status || 500, r.code);
			assert.equal(e.message, 'why');
		}
	}
});

test('errors.md: a code not in the table goes by its status; a body not JSON keeps http_<status>', async () => {
	const para = doc.slice(doc.indexOf('A code not in the table'));
	const byStatus = [...para.matchAll(/((?:\d{3},\s+)*\d{3})\s+`(\w+)`/g)];
	assert.ok(byStatus.length >= 6, `${byStatus.length} status groups read`);
	for (const [, statuses, name] of byStatus) {
		for (const status of statuses.split(/,\s+/).map(Number)) {
			assertError(await refusal(answering(status, { error: { code: 'made_up_code', message: 'new' } }).list()), name, status, 'made_up_code');
		}
	}
	assertError(await refusal(answering(500, { error: { code: 'made_up_code', message: 'new' } }).list()), 'SandboxError', 500, 'made_up_code');
	const e = await refusal(answering(502, '<html>bad gateway</html>').list());
	assert.equal(e.code, 'http_502');
	assert.equal(e.name, 'SandboxError');
});

// Real refusals of the gateway: each class on the wire, and nothing made by any of them.
let before;
test('real refusals: not_found, its message the body\'s own', async () => {
	before = (await client.list()).length;
	const path = '/v1/sandboxes/sbx_local_aaaaaaaaaaaaaaaaaaaaaaaa';
	const body = await (await fetch(baseUrl + path, { headers: { Authorization: `Bearer ${apiKey}` } })).json();
	const e = await refusal(client.get('sbx_local_aaaaaaaaaaaaaaaaaaaaaaaa'));
	assertError(e, 'NotFoundError', 404, 'not_found');
	assert.equal(e.message, body.error.message);
});

test('real refusals: unauthorized (a wrong key)', async () => {
	assertError(await refusal(new SandboxClient({ baseUrl, apiKey: 'not-a-key' }).list()), 'UnauthorizedError', 401, 'unauthorized');
});

test('real refusals: bad_request (cut JSON), invalid, unknown_isolation: InvalidError', async () => {
	assertError(await refusal(client.request('POST', '/v1/sandboxes', { body: '{"timeout_ms":' })), 'InvalidError', 400, 'bad_request');
	assertError(await refusal(client.create({ timeout_ms: -5 })), 'InvalidError', 422, 'invalid');
	assertError(await refusal(client.create({ isolation: 'nosuch' })), 'InvalidError', 422, 'unknown_isolation');
});

test('real refusals: limit_reached (timeout_ms over the key\'s bound): RateLimitedError', async () => {
	assertError(await refusal(client.create({ timeout_ms: 1e12 })), 'RateLimitedError', 429, 'limit_reached');
});

test('real refusals: no_capacity (more memory than the runner has): CapacityError', async () => {
	assertError(await refusal(client.create({ memory_mb: 1 << 20 })), 'CapacityError', 503, 'no_capacity');
});

test('real refusals: runner_unavailable (a gateway whose runner is not there): UnavailableError', async () => {
	const gw2 = new SandboxClient({ baseUrl: process.env.GW2_URL, apiKey });
	assertError(await refusal(gw2.create({})), 'UnavailableError', 503, 'runner_unavailable');
});

test('real refusals: connection_failed (nothing listens), status 0: UnavailableError', async () => {
	const e = await refusal(new SandboxClient({ baseUrl: 'http://127.0.0.1:1', apiKey }).list());
	assertError(e, 'UnavailableError', 0, 'connection_failed');
});

test('real refusals: none of them made a sandbox', async () => {
	assert.equal((await client.list()).length, before);
});

test('real refusals: no_route (a port not declared), then conflict (a command in a stopped sandbox)', async () => {
	const sbx = await client.create({ timeout_ms: 60000, ports: [3000] });
	try {
		assertError(await refusal((async () => sbx.domain(4000))()), 'InvalidError', 0, 'no_route');
	} finally {
		await sbx.stop();
	}
	assertError(await refusal(sbx.runCommand({ cmd: 'true' })), 'ConflictError', 409, 'conflict');
});

// Defaults from the environment (Node): SANDBOX_URL, SANDBOX_API_KEY; options given win.
function withEnv(vars, fn) {
	const saved = { SANDBOX_URL: process.env.SANDBOX_URL, SANDBOX_API_KEY: process.env.SANDBOX_API_KEY };
	const set = (k, v) => { if (v === undefined) delete process.env[k]; else process.env[k] = v; };
	for (const [k, v] of Object.entries(vars)) set(k, v);
	const restore = () => { for (const [k, v] of Object.entries(saved)) set(k, v); };
	return Promise.resolve().then(fn).finally(restore);
}

test('env: no options: the gateway and key from SANDBOX_URL and SANDBOX_API_KEY', () => withEnv(
	{ SANDBOX_URL: `${baseUrl}/`, SANDBOX_API_KEY: apiKey },
	async () => {
		const c = new SandboxClient();
		assert.equal(c.baseUrl, baseUrl);
		assert.equal(c.apiKey, apiKey);
		assert.ok(Array.isArray(await c.list()));
	}));

test('env: Sandbox.create() from the environment alone streams a command (ws as WebSocket under Node)', () => withEnv(
	{ SANDBOX_URL: baseUrl, SANDBOX_API_KEY: apiKey },
	async () => {
		if (Number(process.versions.node.split('.')[0]) < 22) assert.equal(globalThis.WebSocket, undefined, 'Node 20 has no WebSocket');
		const sbx = await Sandbox.create({ timeout_ms: 60000 });
		try {
			const cmd = await sbx.runCommand({ cmd: 'echo', args: ['from-env'], detached: true });
			let out = '', exit;
			for await (const ev of cmd.logs()) {
				if (ev.type === 'stdout') out += Buffer.from(ev.data).toString();
				if (ev.type === 'exit') exit = ev.exit_code;
			}
			assert.equal(out, 'from-env\n');
			assert.equal(exit, 0);
		} finally {
			await sbx.stop();
		}
	}));

test('env: options given win over the environment', () => withEnv(
	{ SANDBOX_URL: 'http://127.0.0.1:1', SANDBOX_API_KEY: apiKey },
	async () => {
		assert.ok(Array.isArray(await new SandboxClient({ baseUrl }).list()), 'baseUrl given, key from the environment');
		assertError(await refusal(new SandboxClient({ baseUrl, apiKey: 'not-a-key' }).list()), 'UnauthorizedError', 401, 'unauthorized');
	}));

test('env: neither given nor set (or empty): a TypeError naming the variable', async () => {
	await withEnv({ SANDBOX_URL: undefined, SANDBOX_API_KEY: undefined },
		() => assert.throws(() => new SandboxClient(), (e) => e instanceof TypeError && /SANDBOX_URL/.test(e.message)));
	await withEnv({ SANDBOX_URL: baseUrl, SANDBOX_API_KEY: '' },
		() => assert.throws(() => new SandboxClient(), (e) => e instanceof TypeError && /SANDBOX_API_KEY/.test(e.message)));
});

process.exit((await run()) ? 0 : 1);
