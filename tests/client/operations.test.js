// The JS client's wrappers of snapshots, fork, pause/resume, images, network
// policy (and its egress log) and the paged list, against the real gateway and
// runner (run.sh gives the runner an image dir of the suite's own, so an
// imported image never lands in the shared store). GW_URL and GW_KEY come from
// run.sh.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, openAsBlob, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import {
	SandboxClient, Snapshot, Sandbox, ConflictError, InvalidError, NotFoundError, SandboxError,
} from '../../clients/js/src/client.js';
import { test, run, Skip } from './harness.js';

const client = new SandboxClient({ baseUrl: process.env.GW_URL, apiKey: process.env.GW_KEY, WebSocket });
const made = []; // every sandbox a case made: deleted at the end whatever happened
const keep = (...s) => { made.push(...s); return s[0]; };
const text = (bytes) => Buffer.from(bytes).toString('utf8');

async function rejects(Class, fn) {
	try {
		await fn();
	} catch (e) {
		if (e instanceof Class) return e;
		throw e;
	}
	throw new Error(`no ${Class.name}`);
}

/** A two-layer OCI layout tar (busybox and /app/hello.txt) by tests/oci's builder. */
function buildImage(dir, content) {
	try { accessSync('/bin/busybox', constants.X_OK); } catch { throw new Skip('no /bin/busybox to build a test image with'); }
	const tar = join(dir, 'app.tar');
	execFileSync('python3', ['tests/oci/mkimage.py', 'good', tar, content]);
	return tar;
}

test('snapshot: a sandbox created from it sees the file as it was at the snapshot', async () => {
	const sbx = keep(await client.create({ timeout_ms: 300000 }));
	await sbx.writeFiles([{ path: 'note.txt', content: 'before the snapshot\n' }]);
	const snap = await sbx.snapshot({ expires_in_ms: 600000 });
	assert.ok(snap instanceof Snapshot);
	assert.equal(snap.info.sandbox_id, sbx.id);
	assert.ok(snap.info.expires_at > 0 && snap.info.size > 0, JSON.stringify(snap.info));
	await sbx.writeFiles([{ path: 'note.txt', content: 'after the snapshot\n' }]);
	const fresh = keep(await snap.createSandbox({ timeout_ms: 300000 }));
	assert.deepEqual(fresh.info.source, { snapshot: snap.id });
	assert.equal(await fresh.readTextFile('note.txt'), 'before the snapshot\n');
	assert.equal(await sbx.readTextFile('note.txt'), 'after the snapshot\n');
	assert.equal((await client.getSnapshot(snap.id)).id, snap.id);
	assert.ok((await client.snapshots()).some((s) => s.id === snap.id), 'listed');
	const second = await sbx.snapshot({ keep_last: 1 }); // deletes the first
	await rejects(NotFoundError, () => client.getSnapshot(snap.id));
	const fromSecond = keep(await client.createFromSnapshot(second.id, { timeout_ms: 300000 }));
	assert.equal(await fromSecond.readTextFile('note.txt'), 'after the snapshot\n');
	assert.equal((await client.deleteSnapshot(second.id)).id, second.id);
	const e = await rejects(NotFoundError, () => second.refresh());
	assert.deepEqual([e.status, e.code], [404, 'not_found']);
});

test('fork: 2 sandboxes with the source\'s files, which then diverge', async () => {
	const sbx = keep(await client.create({ timeout_ms: 300000, memory_mb: 256 }));
	await sbx.writeFiles([{ path: 'shared.txt', content: 'from the source\n' }]);
	const { snapshot, sandboxes } = await sbx.fork({ count: 2 });
	keep(...sandboxes);
	assert.equal(sandboxes.length, 2);
	assert.ok(sandboxes.every((s) => s instanceof Sandbox && s.info.memory_mb === 256));
	assert.equal(snapshot.info.sandbox_id, sbx.id);
	const [a, b] = sandboxes;
	await a.writeFiles([{ path: 'shared.txt', content: 'changed in a\n' }]);
	await b.runCommand({ cmd: 'sh', args: ['-c', 'echo b only > b.txt'] });
	assert.equal(await a.readTextFile('shared.txt'), 'changed in a\n');
	assert.equal(await b.readTextFile('shared.txt'), 'from the source\n');
	assert.equal(await sbx.readTextFile('shared.txt'), 'from the source\n');
	assert.equal((await b.runCommand({ cmd: 'cat', args: ['b.txt'] })).stdout, 'b only\n');
	assert.equal((await a.runCommand({ cmd: 'test', args: ['-e', 'b.txt'] })).exit_code, 1);
	await snapshot.delete();
});

test('pause: a command is refused with ConflictError "paused"; after resume it runs', async () => {
	const sbx = keep(await client.create({ timeout_ms: 300000 }));
	assert.equal((await sbx.pause()).status, 'paused');
	assert.equal((await client.get(sbx.id)).status, 'paused');
	const e = await rejects(ConflictError, () => sbx.runCommand({ cmd: 'echo', args: ['hi'] }));
	assert.deepEqual([e.status, e.code], [409, 'paused']);
	await rejects(ConflictError, () => sbx.readFile('/etc/hostname'));
	assert.equal((await sbx.resume()).status, 'running');
	assert.equal((await sbx.runCommand({ cmd: 'echo', args: ['hi'] })).stdout, 'hi\n');
});

test('images: import a tar streamed from disk, create from it, delete it', async () => {
	const dir = mkdtempSync(join(tmpdir(), 'jsclient-img-'));
	try {
		const tar = buildImage(dir, 'hello from the js client\n');
		const got = await client.importImage('jsclient-app', await openAsBlob(tar));
		assert.deepEqual([got.name, got.source, got.layers], ['jsclient-app', 'oci', 2]);
		assert.ok((await client.images()).images.some((i) => i.name === 'jsclient-app'), 'listed');
		const dup = await rejects(ConflictError, async () => client.importImage('jsclient-app', await openAsBlob(tar)));
		assert.equal(dup.code, 'conflict');
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
	const sbx = keep(await client.create({ image: 'jsclient-app', timeout_ms: 300000 }));
	assert.equal((await sbx.runCommand({ cmd: 'cat', args: ['/app/hello.txt'] })).stdout, 'hello from the js client\n');
	await rejects(ConflictError, () => client.deleteImage('jsclient-app')); // in use
	await sbx.stop();
	await client.deleteImage('jsclient-app');
	assert.ok(!(await client.images()).images.some((i) => i.name === 'jsclient-app'), 'gone');
	assert.equal((await rejects(NotFoundError, () => client.deleteImage('jsclient-app'))).code, 'not_found');
	assert.equal((await rejects(InvalidError, () => client.importImage('Bad Name', new Uint8Array([1])))).code, 'invalid');
});

test('images: a pull sends {ref, name}; a registry that is not there is pull_failed', async () => {
	const e = await rejects(SandboxError, () => client.pullImage('127.0.0.1:9/nothing:1', { name: 'pulled' }));
	assert.deepEqual([e.status, e.code], [502, 'pull_failed']);
	assert.ok(!(await client.images()).images.some((i) => i.name === 'pulled'));
});

test('network: a policy set and read back; a bad one is InvalidError and changes nothing', async () => {
	const sbx = keep(await client.create({ timeout_ms: 300000, network: { allow: ['first.example'] } }));
	const policy = { allow: ['allowed.example'], deny_cidrs: ['192.0.2.0/24'] };
	assert.deepEqual((await sbx.setNetwork(policy)).network, policy);
	assert.deepEqual((await client.get(sbx.id)).network, policy);
	const e = await rejects(InvalidError, () => sbx.setNetwork({ allow: 'not-a-list' }));
	assert.deepEqual([e.status, e.code], [422, 'invalid']);
	assert.deepEqual((await client.get(sbx.id)).network, policy, 'unchanged');
});

test('network log: a denied lookup in the sandbox is an entry; since= skips what was had', async () => {
	const sbx = keep(await client.create({ timeout_ms: 300000, network: { allow: ['allowed.example'] } }));
	const r = await sbx.runCommand({ cmd: 'getent', args: ['hosts', 'denied.example'] });
	assert.equal(r.exit_code, 2, r.stderr);
	const entries = [];
	for await (const e of sbx.networkLog()) entries.push(e);
	const denied = entries.find((e) => e.name === 'denied.example');
	assert.ok(denied, JSON.stringify(entries));
	assert.deepEqual([denied.port, denied.verdict, denied.rule], [53, 'denied', 'not allowed']);
	const after = [];
	for await (const e of sbx.networkLog({ since: entries.at(-1).seq })) after.push(e);
	assert.deepEqual(after, []);
	const from = [];
	for await (const e of sbx.networkLog({ since: denied.seq - 1 })) from.push(e.seq);
	assert.equal(from[0], denied.seq);
});

test('stop() keeps a persistent sandbox, its next command resumes it; delete() ends it for good', async () => {
	const sbx = keep(await client.create({ timeout_ms: 300000, persistent: true }));
	await sbx.writeFiles([{ path: 'kept.txt', content: 'kept across the stop\n' }]);
	await sbx.stop();
	assert.deepEqual([sbx.info.status, sbx.info.resumable], ['stopped', true], JSON.stringify(sbx.info));
	const r = await sbx.runCommand({ cmd: 'cat', args: ['kept.txt'] });
	assert.equal(r.stdout, 'kept across the stop\n');
	await sbx.delete();
	assert.deepEqual([sbx.info.status, sbx.info.resumable], ['stopped', false], JSON.stringify(sbx.info));
	const e = await rejects(ConflictError, () => sbx.runCommand({ cmd: 'true' }));
	assert.equal(e.code, 'conflict');
	const plain = keep(await client.create({ timeout_ms: 300000 }));
	await plain.stop();
	assert.deepEqual([plain.info.status, plain.info.persistent], ['stopped', false], 'a plain one just stops');
});

test('paged list: iterSandboxes walks every page, each sandbox once, in id order', async () => {
	const ours = [];
	for (let i = 0; i < 5; i++) ours.push(keep(await client.create({ timeout_ms: 300000, memory_mb: 128 })).id);
	const page = await client.listPage({ limit: 2 });
	assert.equal(page.sandboxes.length, 2);
	assert.ok(page.sandboxes[0] instanceof Sandbox);
	assert.equal(typeof page.next_cursor, 'string');
	assert.deepEqual(page.unavailable_runners, []);
	const walked = [];
	for await (const s of client.iterSandboxes({ limit: 2 })) walked.push(s.id);
	assert.equal(new Set(walked).size, walked.length, 'each once');
	assert.deepEqual(walked, [...walked].sort(), 'id order');
	assert.ok(ours.every((id) => walked.includes(id)), 'every one of ours');
	assert.ok(walked.length > 4, 'more than two pages');
	assert.deepEqual((await client.list()).map((s) => s.id), walked, 'list() is every page');
	assert.equal((await rejects(InvalidError, () => client.listPage({ limit: 0 }))).code, 'invalid');
});

const ok = await run();
for (const s of made) await s.delete().catch(() => {});
process.exit(ok ? 0 : 1);
