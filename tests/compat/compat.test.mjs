// The real @vercel/sandbox SDK (3.5.0, tests/compat/package.json) against
// the gateway's /v2 and /v3 surface, configured only by the spread of
// vercelSandboxOptions. Env: GW_URL, GW_KEY, GW_PREVIEW (https base of the
// gateway for domain(), its CA in NODE_EXTRA_CA_CERTS). Prints PASS/FAIL lines.
import { Sandbox, Snapshot, APIError } from '@vercel/sandbox';
import { SandboxClient, vercelSandboxOptions } from '../../clients/js/src/client.js';
import zlib from 'node:zlib';
import http from 'node:http';
import https from 'node:https';
import { result, skip, finish } from '../lib/results.mjs';

const URL_ = process.env.GW_URL, KEY = process.env.GW_KEY;
const opts = vercelSandboxOptions({ url: URL_, apiKey: KEY });
async function check(name, fn) {
	try { await fn(); result(name, true); }
	catch (e) { result(name, false, `: ${e && e.stack || e}`); }
}
function assert(c, m) { if (!c) throw new Error(m); }
function eq(a, b, m) { if (a !== b) throw new Error(`${m}: got ${JSON.stringify(a)}, want ${JSON.stringify(b)}`); }

/* ---- raw requests for what the SDK cannot send ---- */
async function raw(method, path, body, headers = {}) {
	const res = await fetch(URL_ + path, { method, body, headers: { authorization: `Bearer ${KEY}`, ...headers } });
	const text = await res.text();
	let json; try { json = JSON.parse(text); } catch { json = undefined; }
	return { status: res.status, ctype: res.headers.get('content-type'), text, json };
}
function tarHeader(name, size, type = '0', mode = 0o644, linkname = '') {
	const h = Buffer.alloc(512);
	h.write(name, 0, 100);
	h.write(mode.toString(8).padStart(7, '0') + '\0', 100);
	h.write('0001750\0', 108); h.write('0001750\0', 116);
	h.write(size.toString(8).padStart(11, '0') + '\0', 124);
	h.write('00000000000\0', 136);
	h.write('        ', 148);
	h.write(type, 156);
	h.write(linkname, 157, 100);
	h.write('ustar\0', 257); h.write('00', 263);
	let sum = 0; for (const b of h) sum += b;
	h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
	return h;
}
function tarEntry(name, data, type = '0', mode, linkname) {
	const d = Buffer.from(data);
	const pad = Buffer.alloc((512 - d.length % 512) % 512);
	return Buffer.concat([tarHeader(name, type === '0' ? d.length : 0, type, mode, linkname), type === '0' ? d : Buffer.alloc(0), type === '0' ? pad : Buffer.alloc(0)]);
}
const tarEnd = () => Buffer.alloc(1024);
const fsWrite = (sid, body, cwd = '/') => raw('POST', `/v2/sandboxes/sessions/${sid}/fs/write`, body,
	{ 'content-type': 'application/gzip', 'x-cwd': cwd });

const t0 = Date.now();
let sandbox;
await check('create with a timeout: {sandbox, session, routes} pass the SDK schemas', async () => {
	sandbox = await Sandbox.create({ ...opts, timeout: 120_000, ports: [3000] });
	eq(sandbox.status, 'running', 'status');
	eq(sandbox.timeout, 120_000, 'timeout');
	eq(sandbox.cwd, '/vercel/sandbox', 'cwd');
	assert(sandbox.name.startsWith('sbx_'), 'name is our id');
	assert(sandbox.createdAt instanceof Date && sandbox.createdAt.getTime() > Date.now() - 600_000, 'createdAt in ms');
});
if (!sandbox) finish();

const big = Buffer.alloc(5 * 1024 * 1024);
for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 13)) & 255;
await check('writeFiles: nested dirs, a 5 MB file, a mode, relative and absolute paths', async () => {
	await sandbox.writeFiles([
		{ path: 'hello.txt', content: Buffer.from('héllo wörld\n') },
		{ path: 'a/b/c/deep.txt', content: Buffer.from('deep') },
		{ path: 'big.bin', content: big },
		{ path: 'run.sh', content: Buffer.from('#!/bin/sh\necho ran "$@"\n'), mode: 0o755 },
		{ path: '/tmp/abs.txt', content: Buffer.from('abs') },
	]);
	const r = await sandbox.runCommand('sh', ['-c', 'cat hello.txt a/b/c/deep.txt /tmp/abs.txt; stat -c %a run.sh; stat -c %s big.bin; sha256sum big.bin | cut -c1-64; pwd; ./run.sh x']);
	const crypto = await import('node:crypto');
	const sha = crypto.createHash('sha256').update(big).digest('hex');
	eq(await r.stdout(), `héllo wörld\ndeepabs755\n${big.length}\n${sha}\n/vercel/sandbox\nran x\n`, 'files as written');
	const ls = await sandbox.runCommand('sh', ['-c', 'ls -a /tmp | grep -c vercel-write || true']);
	eq((await ls.stdout()).trim(), '0', 'no staging directory left');
});

await check('runCommand waited: exitCode, stdout(), stderr(), output()', async () => {
	const r = await sandbox.runCommand('sh', ['-c', 'echo out; echo err >&2; printf "ünï\\n"; exit 3']);
	eq(r.exitCode, 3, 'exitCode');
	eq(await r.stdout(), 'out\nünï\n', 'stdout');
	eq(await r.stderr(), 'err\n', 'stderr');
	eq((await r.output()).length, 'out\nünï\nerr\n'.length, 'output both');
	assert(typeof r.cmdId === 'string' && r.cmdId.length > 0, 'cmdId');
});

await check('utf-8: a character split across output chunks arrives whole', async () => {
	// 3-byte characters written one byte at a time, with pauses
	const r = await sandbox.runCommand('python3', ['-c',
		'import sys,time\nb="€".encode()*3\nfor x in b:\n sys.stdout.buffer.write(bytes([x])); sys.stdout.flush(); time.sleep(0.02)']);
	eq(await r.stdout(), '€€€', 'exact text');
	// bytes that are not UTF-8 cannot be a JS string: U+FFFD (docs/vercel.md); NUL stays
	const b = await sandbox.runCommand('printf', ['a\\377b\\000c']);
	eq(await b.stdout(), 'a\ufffdb\u0000c', 'binary output');
});

await check('python script exiting 1 with a traceback on stderr', async () => {
	await sandbox.writeFiles([{ path: 'boom.py', content: Buffer.from('def f():\n    raise ValueError("boom")\nf()\n') }]);
	const r = await sandbox.runCommand('python3', ['boom.py']);
	eq(r.exitCode, 1, 'exitCode');
	const err = await r.stderr();
	assert(err.includes('Traceback (most recent call last)') && err.includes('ValueError: boom'), `stderr: ${err}`);
	eq(await r.stdout(), '', 'stdout empty');
});

await check('detached: logs() lines arrive while the command runs (a line every 200 ms)', async () => {
	// the command waits (up to 30 s) for a file the test makes only once
	// line1 reached it: lines that came only at the end would print "nogo"
	const cmd = await sandbox.runCommand({ cmd: 'sh', args: ['-c',
		'echo line1; i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; ' +
		'[ -e go ] || echo nogo; for i in 2 3 4 5 6; do echo line$i; sleep 0.2; done'], detached: true });
	eq(cmd.exitCode, null, 'running');
	const seen = [];
	for await (const log of cmd.logs()) {
		if (!log.data) continue;
		seen.push(log.data);
		if (seen.length === 1) {
			const st = await sandbox.getCommand(cmd.cmdId);
			eq(st.exitCode, null, 'still running when the first line arrived');
			await sandbox.writeFiles([{ path: 'go', content: Buffer.from('') }]);
		}
	}
	eq(seen.join(''), 'line1\nline2\nline3\nline4\nline5\nline6\n', 'all lines in order, each while it ran');
	const done = await cmd.wait();
	eq(done.exitCode, 0, 'wait exitCode');
});

await check('kill: a detached sleep ends with SIGTERM (143) and wait() says so', async () => {
	const cmd = await sandbox.runCommand({ cmd: 'sleep', args: ['60'], detached: true });
	await cmd.kill();
	const done = await cmd.wait();
	eq(done.exitCode, 143, 'exitCode 128+15');
	eq(cmd.cmdId, done.cmdId, 'same command');
});

await check('readFile / readFileToBuffer: bytes exact; a missing file is null', async () => {
	const buf = await sandbox.readFileToBuffer({ path: 'big.bin' });
	assert(buf && buf.equals(big), '5 MB back exact');
	const s = await sandbox.readFile({ path: '/tmp/abs.txt' });
	let text = ''; for await (const ch of s) text += ch;
	eq(text, 'abs', 'stream');
	eq(await sandbox.readFileToBuffer({ path: 'nope.txt' }), null, 'missing');
});

await check('readFileToBuffer of a file whose size says 0 (/proc/version): its whole content, five times', async () => {
	const want = await (await sandbox.runCommand('cat', ['/proc/version'])).stdout();
	assert(want.length > 0, 'cat /proc/version');
	for (let i = 0; i < 5; i++) {
		const buf = await sandbox.readFileToBuffer({ path: '/proc/version' });
		eq(buf && buf.toString(), want, `try ${i + 1}`);
	}
});

await check('mkDir: a new directory the sandbox user owns; an existing one is an APIError', async () => {
	await sandbox.mkDir('made');
	const r = await sandbox.runCommand('stat', ['-c', '%U %F', 'made']);
	eq(await r.stdout(), 'sandbox directory\n', 'owner and type');
	let e; try { await sandbox.mkDir('made'); } catch (x) { e = x; }
	assert(e instanceof APIError && e.response.status === 409, `409: ${e}`);
});

await check('env, cwd and sudo pass through', async () => {
	const r = await sandbox.runCommand({ cmd: 'sh', args: ['-c', 'echo $FOO; pwd; id -u'], env: { FOO: 'bar' }, cwd: '/tmp', sudo: true });
	eq(await r.stdout(), 'bar\n/tmp\n0\n', 'env/cwd/sudo');
});

await check('domain(port): the SDK\'s URL reaches the server in the sandbox through our preview proxy', async () => {
	const d = sandbox.domain(3000);
	assert(d.startsWith('https://3000-') && d.endsWith('/.vercel.run'), `domain ${d}`);
	const route = sandbox.routes.find(r => r.port === 3000);
	assert(route && route.url.startsWith('http'), 'route url');
	await sandbox.writeFiles([{ path: 'www/index.html', content: Buffer.from('hi from the sandbox') }]);
	await sandbox.runCommand({ cmd: 'python3', args: ['-m', 'http.server', '3000', '--bind', '0.0.0.0', '--directory', 'www'], detached: true });
	const preview = process.env.GW_PREVIEW;   // https://127.0.0.1:port of the TLS gateway
	if (!preview) throw new Error('GW_PREVIEW not set');
	const target = new URL(preview);
	const get = (u) => new Promise((res, rej) => {
		const url = new URL(u);
		const rq = https.request({ host: target.hostname, port: target.port, path: url.pathname + url.search,
			rejectUnauthorized: false, headers: { host: url.host } }, (rs) => {
			let b = ''; rs.on('data', (c) => { b += c; }); rs.on('end', () => res({ status: rs.statusCode, body: b }));
		});
		rq.on('error', rej); rq.end();
	});
	let r;
	for (let i = 0; i < 50; i++) {
		r = await get(d);
		if (r.status === 200) break;
		await new Promise((ok) => setTimeout(ok, 100));
	}
	eq(r.status, 200, 'status');
	eq(r.body, 'hi from the sandbox', 'body');
	const r2 = await get(`${d}/index.html`);
	eq(r2.body, 'hi from the sandbox', 'a path appended to domain()');
});

await check('extendTimeout: the session timeout grows', async () => {
	const before = sandbox.timeout;
	await sandbox.extendTimeout(30_000);
	eq(sandbox.currentSession().timeout, before + 30_000, 'timeout');
});

await check('Sandbox.get by name, list', async () => {
	const again = await Sandbox.get({ ...opts, name: sandbox.name });
	eq(again.name, sandbox.name, 'name');
	const r = await again.runCommand('echo', ['via get']);
	eq(await r.stdout(), 'via get\n', 'works');
	const list = await Sandbox.list({ ...opts });
	assert(list.sandboxes.some(s => s.name === sandbox.name), 'listed');
});

await check('updateNetworkPolicy on a deny-all sandbox: deny-all is fine; anything else is a clear 409 (it has no interface)', async () => {
	eq(await sandbox.updateNetworkPolicy('deny-all'), 'deny-all', 'same mode');
	let e; try { await sandbox.updateNetworkPolicy('allow-all'); } catch (x) { e = x; }
	assert(e instanceof APIError && e.response.status === 409 && /network/.test(e.message), `409: ${e}`);
	e = undefined; try { await sandbox.updateNetworkPolicy({ allow: ['example.com'] }); } catch (x) { e = x; }
	assert(e instanceof APIError && e.response.status === 409 && /deny-all/.test(e.message), `409 list: ${e}`);
});

await check('snapshot(), create from it, Snapshot.get/list/delete: the SDK schemas pass, the files come along', async () => {
	await sandbox.writeFiles([{ path: 'snap.txt', content: Buffer.from('in the snapshot\n') }]);
	const snap = await sandbox.snapshot({ expiration: 0 });
	assert(snap.snapshotId.startsWith('snp_'), `snapshot id: ${snap.snapshotId}`);
	eq(snap.sourceSessionId, sandbox.name, 'sourceSessionId');
	eq(snap.status, 'created', 'status');
	eq(sandbox.status, 'running', 'the sandbox runs on (here; Vercel stops it)');
	const from = await Sandbox.create({ ...opts, timeout: 60_000, source: { type: 'snapshot', snapshotId: snap.snapshotId } });
	eq((await (await from.runCommand('cat', ['snap.txt'])).stdout()), 'in the snapshot\n', 'file from the snapshot');
	await from.stop();
	eq((await Snapshot.get({ ...opts, snapshotId: snap.snapshotId })).snapshotId, snap.snapshotId, 'get');
	const listed = await Snapshot.list({ ...opts });
	assert(listed.snapshots.some((x) => x.id === snap.snapshotId), 'list has it');
	await snap.delete();
	eq(snap.status, 'deleted', 'deleted');
	let e; try { await Snapshot.get({ ...opts, snapshotId: snap.snapshotId }); } catch (x) { e = x; }
	assert(e instanceof APIError && e.response.status === 404, `gone: ${e}`);
});

await check('Sandbox.fork: the source\'s files and settings, env given again, each diverging on its own', async () => {
	await sandbox.writeFiles([{ path: 'fork.txt', content: Buffer.from('at the fork\n') }]);
	const fork = await Sandbox.fork({ ...opts, sourceSandbox: sandbox.name, env: { GIVEN: 'again' } });
	assert(fork.name !== sandbox.name, 'a new sandbox');
	eq(fork.memory, sandbox.memory, 'its memory');
	eq((await (await fork.runCommand('sh', ['-c', 'cat fork.txt; echo "[$GIVEN]"; echo mine > fork.txt'])).stdout()),
		'at the fork\n[again]\n', 'the file at the fork, the env given');
	eq((await (await sandbox.runCommand('cat', ['fork.txt'])).stdout()), 'at the fork\n', 'the source sees none of it');
	await fork.delete();
	let e; try { await Sandbox.fork({ ...opts, sourceSandbox: sandbox.name, name: 'mine' }); } catch (x) { e = x; }
	assert(e instanceof APIError && e.response.status === 422 && /name/.test(e.message), `name refused: ${e}`);
});

await check('snapshotExpiration and keepLastSnapshots: the sandbox\'s snapshots expire and only the last N stay', async () => {
	const s = await Sandbox.create({ ...opts, timeout: 120_000, snapshotExpiration: 3_600_000, keepLastSnapshots: { count: 1 } });
	eq(s.snapshotExpiration, 3_600_000, 'snapshotExpiration');
	eq(s.keepLastSnapshots?.count, 1, 'keepLastSnapshots');
	const a = await s.snapshot();
	eq(a.expiresAt.getTime() - a.createdAt.getTime(), 3_600_000, 'expiresAt from the sandbox\'s default');
	const b = await s.snapshot();
	let e; try { await Snapshot.get({ ...opts, snapshotId: a.snapshotId }); } catch (x) { e = x; }
	assert(e instanceof APIError && e.response.status === 404, `the older one is gone: ${e}`);
	eq((await Snapshot.get({ ...opts, snapshotId: b.snapshotId })).snapshotId, b.snapshotId, 'the last one stays');
	await b.delete();
	await s.delete();
});

await check('persistent: stop() keeps it, runCommand resumes it (the SDK\'s auto-resume), its files are there', async () => {
	const p = await Sandbox.create({ ...opts, timeout: 120_000, persistent: true });
	eq(p.persistent, true, 'persistent');
	await p.writeFiles([{ path: 'kept.txt', content: Buffer.from('before the stop\n') }]);
	const st = await p.stop();
	eq(st.status, 'stopped', 'stopped');
	eq((await Sandbox.get({ ...opts, name: p.name })).status, 'stopped', 'get shows stopped');
	eq((await (await p.runCommand('cat', ['kept.txt'])).stdout()), 'before the stop\n', 'resumed with its file');
	eq((await Sandbox.get({ ...opts, name: p.name })).status, 'running', 'running again under its name');
	await p.stop();
	let resumedBy;
	const again = await Sandbox.get({ ...opts, name: p.name, resume: true, onResume: (x) => { resumedBy = x.name; } });
	eq(again.status, 'running', 'Sandbox.get with resume brings it back');
	eq(resumedBy, p.name, 'onResume was told');
	await p.stop();
	const f = await Sandbox.fork({ ...opts, sourceSandbox: p.name });
	eq((await (await f.runCommand('cat', ['kept.txt'])).stdout()), 'before the stop\n', 'Sandbox.fork of a kept one resumes it first, then forks it');
	eq((await Sandbox.get({ ...opts, name: p.name })).status, 'running', 'the forked kept one runs again');
	await f.delete();
	await p.delete();
	let e; try { await p.runCommand('true'); } catch (x) { e = x; }
	assert(e instanceof APIError && e.response.status === 410, `deleted: no resume: ${e}`);
});

await check('unsupported calls answer a clear APIError (interactive)', async () => {
	for (const fn of [() => sandbox.openInteractive()]) {
		let e; try { await fn(); } catch (x) { e = x; }
		assert(e instanceof APIError && e.response.status === 422 && /not supported/.test(e.message), `unsupported: ${e}`);
		eq(e.json.error.code, 'unsupported', 'code');
	}
});

/* ---- hand-made archives ---- */
const sid = sandbox.name;
const before = async () => (await (await sandbox.runCommand('sh', ['-c', 'ls -a /vercel/sandbox /tmp | sort | md5sum'])).stdout());
await check('tar path escape: "..", absolute names, symlinks, hardlinks, devices: 400 and nothing written', async () => {
	const was = await before();
	const cases = [
		[tarEntry('ok1.txt', 'fine'), tarEntry('../escape.txt', 'bad')],
		[tarEntry('ok2.txt', 'fine'), tarEntry('/etc/evil', 'bad')],
		[tarEntry('ok3.txt', 'fine'), tarEntry('sub/../../x', 'bad')],
		[tarEntry('ok4.txt', 'fine'), tarEntry('link', '', '2', 0o777, '/etc/passwd')],
		[tarEntry('ok5.txt', 'fine'), tarEntry('hard', '', '1', 0o644, 'ok5.txt')],
		[tarEntry('ok6.txt', 'fine'), tarEntry('dev', '', '3')],
	];
	for (const parts of cases) {
		const r = await fsWrite(sid, zlib.gzipSync(Buffer.concat([...parts, tarEnd()])), '/vercel/sandbox');
		eq(r.status, 400, `status for ${parts[1].subarray(0, 20).toString()}`);
		assert(r.json && r.json.error && /nothing was written/.test(r.json.error.message), r.text);
	}
	const x = await fsWrite(sid, zlib.gzipSync(Buffer.concat([tarEntry('ok.txt', 'x'), tarEnd()])), '/vercel/../etc');
	eq(x.status, 400, 'x-cwd with ..');
	eq(await before(), was, 'nothing changed in /vercel/sandbox and /tmp');
});

await check('tar bomb: a declared size over the cap, and an inflate bomb: 413, nothing written', async () => {
	const was = await before();
	const hdr = tarHeader('huge.bin', 300 * 1024 * 1024);
	const r = await fsWrite(sid, zlib.gzipSync(Buffer.concat([tarEntry('first.txt', 'x'), hdr, Buffer.alloc(4096)])), '/vercel/sandbox');
	eq(r.status, 413, 'declared size');
	// 300 MiB of zeros inflating from about 300 KB (after a good entry)
	const z = zlib.createGzip({ level: 9 });
	const chunks = []; z.on('data', (c) => chunks.push(c));
	z.write(Buffer.concat([tarEntry('bomb-first.txt', 'x'), tarEnd()]));
	const zero = Buffer.alloc(1024 * 1024);
	for (let i = 0; i < 300; i++) z.write(zero);
	await new Promise((ok) => z.end(ok));
	const bomb = Buffer.concat(chunks);
	assert(bomb.length < 2 * 1024 * 1024, `bomb is small: ${bomb.length}`);
	const r2 = await fsWrite(sid, bomb, '/vercel/sandbox');
	eq(r2.status, 413, `inflate bomb: ${r2.text}`);
	eq(await before(), was, 'nothing changed');
});

await check('bad input: bad gzip, cut gzip, malformed JSON, unknown ids: JSON errors, nothing changed', async () => {
	const was = await before();
	let r = await fsWrite(sid, Buffer.from('this is not gzip at all'));
	eq(r.status, 400, 'bad gzip'); assert(r.json && r.json.error.code, 'json');
	const good = zlib.gzipSync(Buffer.concat([tarEntry('cut.txt', 'x'.repeat(5000)), tarEnd()]));
	r = await fsWrite(sid, good.subarray(0, good.length - 10));
	eq(r.status, 400, 'cut gzip'); assert(/cut short|end blocks/.test(r.json.error.message), r.text);
	r = await raw('POST', `/v2/sandboxes/sessions/${sid}/cmd`, '{"command": "echo", oops', { 'content-type': 'application/json' });
	eq(r.status, 400, 'malformed JSON'); eq(r.ctype, 'application/json', 'JSON answer');
	r = await raw('GET', `/v2/sandboxes/sessions/sbx_nope/cmd/cmd_nope`);
	eq(r.status, 404, 'unknown sandbox');
	r = await raw('GET', `/v2/sandboxes/sessions/${sid}/cmd/cmd_nope`);
	eq(r.status, 404, 'unknown command');
	r = await raw('POST', `/v2/sandboxes/sessions/${sid}/cmd`, 'x'.repeat(70000));
	eq(r.status, 413, 'huge JSON body');
	// an archive over 256 MiB is refused from its Content-Length, before a byte is read
	const big413 = await new Promise((ok, no) => {
		const u = new URL(URL_);
		const rq = (u.protocol === 'https:' ? https : http).request({ host: u.hostname, port: u.port, method: 'POST',
			path: `/v2/sandboxes/sessions/${sid}/fs/write`, rejectUnauthorized: false,
			headers: { authorization: `Bearer ${KEY}`, 'content-length': 300 * 1024 * 1024, 'x-cwd': '/' } }, (rs) => {
			let b = ''; rs.on('data', (c) => { b += c; }); rs.on('end', () => ok({ status: rs.statusCode, body: b }));
		});
		rq.on('error', no);
		rq.write('x');
	});
	eq(big413.status, 413, `archive over the cap: ${big413.body}`);
	r = await raw('GET', `/v2/sandboxes/sessions/${sid}`, undefined, { authorization: 'Bearer wrong' });
	eq(r.status, 401, 'wrong key');
	r = await raw('GET', `/v2/sandboxes/nope/nope/nope`);
	eq(r.status, 404, 'unknown path'); eq(r.ctype, 'application/json', 'JSON 404');
	eq(await before(), was, 'nothing changed');
});

await check('early disconnect mid-upload: nothing written at the target, the gateway serves on', async () => {
	const body = zlib.gzipSync(Buffer.concat([tarEntry('early.txt', 'y'.repeat(200000)), tarEnd()]));
	await new Promise((ok) => {
		const u = new URL(URL_);
		const rq = (u.protocol === 'https:' ? https : http).request({ host: u.hostname, port: u.port, method: 'POST',
			path: `/v2/sandboxes/sessions/${sid}/fs/write`, rejectUnauthorized: false,
			headers: { authorization: `Bearer ${KEY}`, 'content-length': body.length + 100000, 'x-cwd': '/vercel/sandbox' } });
		rq.on('error', () => ok());
		rq.write(body);
		setTimeout(() => { rq.destroy(); ok(); }, 300);
	});
	const r = await sandbox.runCommand('sh', ['-c', 'test -e early.txt && echo there || echo absent']);
	eq(await r.stdout(), 'absent\n', 'no file');
});

let stopped;
await check('stop; then the SDK gets 410 (it tries to resume, which is refused)', async () => {
	const s = await sandbox.stop();
	eq(s.status, 'stopped', 'stop status');
	let e; try { await sandbox.runCommand('echo', ['x']); } catch (x) { e = x; }
	assert(e instanceof APIError && e.response.status === 410, `410: ${e}`);
	const again = await Sandbox.get({ ...opts, name: sandbox.name });
	eq(again.status, 'stopped', 'get shows stopped');
	let e2; try { await Sandbox.get({ ...opts, name: 'sbx_does_not_exist' }); } catch (x) { e2 = x; }
	assert(e2 instanceof APIError && e2.response.status === 404, `404: ${e2}`);
	stopped = true;
});

await check('delete: DELETE /v2/sandboxes/{name} stops it; listSessions shows its one session', async () => {
	const s = await Sandbox.create({ ...opts, timeout: 60_000 });
	const sessions = await s.listSessions();
	eq(sessions.sessions.length, 1, 'one session');
	eq(sessions.sessions[0].id, s.name, 'the session id is the name');
	await s.delete();
	eq((await Sandbox.get({ ...opts, name: s.name })).status, 'stopped', 'stopped');
});

/* ---- runtime: the SDK's RUNTIMES start from the runtime images ---- */
const images = (await raw('GET', '/v1/images')).json?.images?.map((i) => i.name) || [];
for (const [runtime, cmd, want] of [['node22', 'node', /^v22\.\d+\.\d+\n$/], ['node24', 'node', /^v24\./],
	['node26', 'node', /^v26\./], ['python3.13', 'python3', /^Python 3\.13\.\d+\n$/]]) {
	const image = runtime.startsWith('node') ? runtime : 'default';
	if (!images.includes(image)) {
		skip(`runtime ${runtime}`, `no image ${image} on the runner (make image)`);
		continue;
	}
	await check(`runtime ${runtime}: ${cmd} --version answers ${want}`, async () => {
		const s = await Sandbox.create({ ...opts, timeout: 60_000, runtime });
		try {
			const r = await s.runCommand(cmd, ['--version']);
			const out = await r.stdout();
			assert(want.test(out), `${cmd} --version: ${JSON.stringify(out)}`);
		} finally { await s.stop(); }
	});
}
await check('runtime: one outside the SDK\'s RUNTIMES is a 400 APIError naming the four, and nothing is created', async () => {
	const before = (await raw('GET', '/v1/sandboxes')).json.sandboxes.length;
	let e;
	try { await Sandbox.create({ ...opts, timeout: 60_000, runtime: 'node18' }); } catch (x) { e = x; }
	assert(e instanceof APIError && e.response.status === 400, `400: ${e}`);
	assert(/node22.*node24.*node26.*python3\.13/.test(e.message), `message: ${e.message}`);
	eq((await raw('GET', '/v1/sandboxes')).json.sandboxes.length, before, 'sandboxes');
});

/* ---- image: a reference pushed to a loopback registry (run.sh), pulled by the runner ---- */
if (!process.env.COMPAT_IMAGE_REF) {
	skip('image: a registry reference', 'no loopback registry here (docker-registry, skopeo, busybox-static)');
} else {
	await check('image: Sandbox.create({image: <a pushed reference>}) runs in that image: its file, its Env', async () => {
		const s = await Sandbox.create({ ...opts, timeout: 120_000, image: process.env.COMPAT_IMAGE_REF });
		try {
			const r = await s.runCommand('cat', ['/app/hello.txt']);
			eq(await r.stdout(), 'from the SDK\'s image', 'the image\'s file');
			const e = await s.runCommand('sh', ['-c', 'echo "$GREETING"']);
			eq(await e.stdout(), 'hello from the image\n', 'the image\'s Env');
		} finally { await s.stop(); }
	});
	await check('image: with runtime as well it is a 400 APIError, and nothing is created', async () => {
		const before = (await raw('GET', '/v1/sandboxes')).json.sandboxes.length;
		const r = await raw('POST', '/v2/sandboxes', JSON.stringify({ runtime: 'node22', image: process.env.COMPAT_IMAGE_REF }),
			{ 'content-type': 'application/json' });
		eq(r.status, 400, `status (${JSON.stringify(r.json)})`);
		eq((await raw('GET', '/v1/sandboxes')).json.sandboxes.length, before, 'sandboxes');
	});
}

/* ---- round trip: create + write + run + stop, SDK versus our client ---- */
async function viaSdk() {
	const t = performance.now();
	const s = await Sandbox.create({ ...opts, timeout: 60_000 });
	await s.writeFiles([{ path: 'main.py', content: Buffer.from('print(6*7)') }]);
	const r = await s.runCommand('python3', ['main.py']);
	if ((await r.stdout()) !== '42\n') throw new Error('sdk run');
	await s.stop();
	return performance.now() - t;
}
async function viaClient() {
	const t = performance.now();
	const c = new SandboxClient({ baseUrl: URL_, apiKey: KEY });
	const s = await c.create({ timeout_ms: 60_000 });
	await s.writeFiles([{ path: 'main.py', content: 'print(6*7)' }]);
	const r = await s.runCommand({ cmd: 'python3', args: ['main.py'] });
	if (r.stdout !== '42\n') throw new Error('client run ' + JSON.stringify(r));
	await s.stop();
	return performance.now() - t;
}
await check('round trip create+write+run+stop (SDK and our client)', async () => {
	const a = [], b = [];
	for (let i = 0; i < 5; i++) { a.push(await viaSdk()); b.push(await viaClient()); }
	const med = (x) => x.sort((p, q) => p - q)[2].toFixed(0);
	console.log(`figure: vercel sdk round trip p50|${med(a)}|ms|-`);
	console.log(`figure: own client round trip p50|${med(b)}|ms|-`);
});
console.log(`(${((Date.now() - t0) / 1000).toFixed(1)} s)`);
finish();
