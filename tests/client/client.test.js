// Node tests of the JS client (clients/js) against the real gateway, runner and a
// real sandbox. GW_URL and GW_KEY come from run.sh; `ws` stands in for the
// browser's WebSocket (Node 20 has fetch but no WebSocket).
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { SandboxClient, SandboxError, NotFoundError, ConflictError, createSandbox, RenderWatermark } from '../../clients/js/src/client.js';
import { test, run } from './harness.js';

const baseUrl = process.env.GW_URL;
const apiKey = process.env.GW_KEY;
// Every WebSocket URL the client opens, to check what they carry.
const socketUrls = [];
class RecordingWebSocket extends WebSocket {
	constructor(url, ...rest) { socketUrls.push(String(url)); super(url, ...rest); }
}
const client = new SandboxClient({ baseUrl, apiKey, WebSocket: RecordingWebSocket });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (bytes) => Buffer.from(bytes).toString('utf8');
let sbx;

/** Every event of a stream, with the time each arrived. */
async function collect(stream, onEvent = () => {}) {
	const events = [];
	for await (const ev of stream) {
		events.push({ ...ev, at: Date.now() });
		onEvent(ev, events);
	}
	return events;
}
const streamText = (events, type) => events.filter((e) => e.type === type).map((e) => text(e.data)).join('');
const allBytes = (events) => Buffer.concat(events.filter((e) => e.data).map((e) => Buffer.from(e.data)));

/** Terminal bytes as plain lines: escape sequences (colours, title, bracketed paste) and CRs removed. */
const plain = (s) => s.replace(/\x1b\][^\x07]*\x07/g, '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

/** Resolves with the terminal output once `re` matches its plain text (or rejects after ms). */
function waitForScreen(term, re, ms = 10000) {
	return new Promise((resolve, reject) => {
		let seen = '';
		const timer = setTimeout(() => { off(); reject(new Error(`no ${re} on the terminal within ${ms} ms; saw ${JSON.stringify(plain(seen).slice(-300))}`)); }, ms);
		const off = term.on('data', (b) => {
			seen += text(b);
			if (re.test(plain(seen))) { clearTimeout(timer); off(); resolve(seen); }
		});
	});
}

test('RenderWatermark: pause above the high mark, resume below the low one, no flapping between', async () => {
	const calls = [];
	const w = new RenderWatermark({ high: 100, low: 40, onPause: () => calls.push('pause'), onResume: () => calls.push('resume') });
	w.written(60); w.written(40);
	assert.deepEqual(calls, [], 'exactly at the high mark is not above it');
	w.written(1);
	w.written(500);
	assert.deepEqual(calls, ['pause']);
	w.rendered(500);
	assert.deepEqual(calls, ['pause'], '101 still unrendered');
	w.rendered(70);
	assert.deepEqual(calls, ['pause', 'resume']);
	w.written(50); w.rendered(50);
	assert.deepEqual(calls, ['pause', 'resume']);
	assert.throws(() => new RenderWatermark({ high: 10, low: 10 }), RangeError);
});

test('create: a running sandbox with a preview route for port 3000', async () => {
	sbx = await createSandbox({ baseUrl, apiKey, WebSocket: RecordingWebSocket, ports: [3000], timeout_ms: 300000 });
	assert.match(sbx.id, /^sbx_/);
	assert.equal(sbx.status, 'running');
	const url = new URL(sbx.domain(3000));
	assert.equal(url.hostname, `3000-${sbx.id}.localhost`.toLowerCase());
	assert.throws(() => sbx.domain(4000), /not declared/);
	assert.ok(sbx.timeLeft() > 200000 && sbx.timeLeft() <= 300000, `time left ${sbx.timeLeft()}`);
});

test('get and list find the sandbox; another key does not', async () => {
	const again = await client.get(sbx.id);
	assert.equal(again.id, sbx.id);
	assert.ok((await client.list()).some((s) => s.id === sbx.id));
	const stranger = new SandboxClient({ baseUrl, apiKey: 'not-a-key', WebSocket });
	await assert.rejects(stranger.get(sbx.id), (e) => e instanceof SandboxError && e.status === 401);
	await assert.rejects(client.get('sbx_local_aaaaaaaaaaaaaaaaaaaaaaaa'), (e) => e.status === 404 && e.code === 'not_found');
});

test('writeFiles then readFile: text and every byte value, parents created', async () => {
	const binary = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
	await sbx.writeFiles([
		{ path: 'src/deep/hello.txt', content: 'héllo\nwörld\n' },
		{ path: '/home/sandbox/bin.dat', content: binary },
	]);
	assert.equal(await sbx.readTextFile('src/deep/hello.txt'), 'héllo\nwörld\n');
	assert.deepEqual(await sbx.readFile('bin.dat'), binary);
	await assert.rejects(sbx.readFile('no/such/file'), (e) => e.status === 404);
});

test('runCommand, not detached: stdout, stderr and exit code when it ends', async () => {
	const r = await sbx.runCommand({
		cmd: 'python3', args: ['-c', 'import sys,os; print("out", os.getcwd()); print("err", file=sys.stderr); sys.exit(3)'],
		env: { GREETING: 'hi' },
	});
	assert.equal(r.exit_code, 3);
	assert.equal(r.stdout, 'out /home/sandbox\n');
	assert.equal(r.stderr, 'err\n');
	const env = await sbx.runCommand({ cmd: 'sh', args: ['-c', 'echo $GREETING; id -u'], env: { GREETING: 'hi' } });
	assert.equal(env.stdout, 'hi\n1000\n');
	const root = await sbx.runCommand({ cmd: 'id', args: ['-u'], sudo: true, cwd: '/tmp' });
	assert.equal(root.stdout, '0\n');
});

// A program whose output is spread over ~2 s on both streams, each line numbered. After each
// line it waits (up to 30 s) until the agent has read it from the pipe, so every line is a
// chunk of its own and the two streams are read in the order they were written, however the
// agent is scheduled (an agent kept off the CPU past the 250 ms found "out 2\nout 3\n" before
// "err 2"). With PACED_GO set it prints nothing after "out 0" until that file exists (up to
// 30 s, then "nogo"): a reader that makes the file on seeing "out 0" proves it came live.
const paced = ['-u', '-c', [
	'import fcntl, os, struct, sys, termios, time',
	'def taken(f):',
	'    end = time.time() + 30',
	'    while struct.unpack("i", fcntl.ioctl(f, termios.FIONREAD, b"0000"))[0] and time.time() < end:',
	'        time.sleep(0.01)',
	'def say(line, f):',
	'    print(line, file=f, flush=True)',
	'    taken(f)',
	'go = os.environ.get("PACED_GO")',
	'for i in range(8):',
	'    say(f"out {i}", sys.stdout)',
	'    if i % 3 == 2: say(f"err {i}", sys.stderr)',
	'    end = time.time() + 30',
	'    while go and i == 0 and not os.path.exists(go) and time.time() < end:',
	'        time.sleep(0.05)',
	'    if go and i == 0 and not os.path.exists(go): say("nogo", sys.stdout)',
	'    time.sleep(0.25)',
	'sys.exit(5)',
].join('\n')];
const pacedStdout = [...Array(8).keys()].map((i) => `out ${i}\n`).join('');
const pacedStderr = 'err 2\nerr 5\n';

test('detached + logs: chunks live and in order on both streams, then the exit', async () => {
	const go = '/tmp/paced-go';
	const cmd = await sbx.runCommand({ cmd: 'python3', args: paced, env: { PACED_GO: go }, detached: true });
	assert.match(cmd.id, /^cmd_/);
	// at once: the answer says nothing of an exit (the program waits for us), however slow this machine
	assert.ok(cmd.info.exit_code == null && cmd.info.status === 'running', `detached answered ${JSON.stringify(cmd.info)}`);
	// Live: the program goes on past "out 0" only once we saw it (by order, not by a time gap:
	// a reader that opened its socket late got the first second as one burst)
	let released = null;
	const events = await collect(cmd.logs(), (ev) => {
		if (!released && ev.type === 'stdout') released = sbx.runCommand({ cmd: 'touch', args: [go] });
	});
	assert.equal((await released).exit_code, 0);
	const last = events.at(-1);
	assert.equal(last.type, 'exit');
	assert.equal(last.exit_code, 5);
	assert.equal(streamText(events, 'stdout'), pacedStdout, 'no "nogo": the first line came while the program waited');
	assert.equal(streamText(events, 'stderr'), pacedStderr);
	assert.ok(events.filter((e) => e.type === 'stdout').length >= 4, 'several separate chunks');
	// Offsets count chunk bytes of both streams, without gaps.
	let offset = 0;
	for (const e of events.filter((x) => x.data)) { assert.equal(e.offset, offset); offset += e.data.length; }
	// Cross-stream order: err 2 comes after out 2 and before out 3.
	const order = events.filter((e) => e.data).map((e) => text(e.data)).join('');
	assert.ok(order.indexOf('out 2') < order.indexOf('err 2') && order.indexOf('err 2') < order.indexOf('out 3'), order);
});

test('since: a late reader resumes at any byte offset, nothing lost or doubled', async () => {
	const cmd = await sbx.runCommand({ cmd: 'python3', args: paced, detached: true });
	const whole = allBytes(await collect(cmd.logs()));
	for (const since of [1, 7, whole.length - 3, whole.length]) {
		const events = await collect(cmd.logs({ since }));
		assert.deepEqual(allBytes(events), whole.subarray(since), `since=${since}`);
		assert.equal(events.at(-1).exit_code, 5);
	}
});

test('a socket dropped mid-run is reopened with since: output whole, once', async () => {
	const cmd = await sbx.runCommand({ cmd: 'python3', args: paced, detached: true });
	const stream = cmd.logs();
	let dropped = 0;
	const events = await collect(stream, (ev, seen) => {
		// Drop the socket after the 2nd and 5th chunks, while the program still runs.
		const chunks = seen.filter((e) => e.data).length;
		if (ev.data && (chunks === 2 || chunks === 5)) { dropped++; stream.reconnect(); }
	});
	assert.equal(dropped, 2);
	assert.ok(stream.reconnects >= 2);
	assert.equal(streamText(events, 'stdout'), pacedStdout);
	assert.equal(streamText(events, 'stderr'), pacedStderr);
	assert.equal(events.at(-1).exit_code, 5);
});

test('stdin over the stream reaches the command, stdin_eof ends it', async () => {
	const cmd = await sbx.runCommand({ cmd: 'cat', detached: true });
	const stream = cmd.logs({ input: true });
	stream.write('hello ');
	stream.write(new Uint8Array([0xc3, 0xa9, 0x0a])); // "é\n" as raw bytes
	stream.end();
	const events = await collect(stream);
	assert.equal(streamText(events, 'stdout'), 'hello é\n');
	assert.equal(events.at(-1).exit_code, 0);
});

test('kill: through the API (SIGTERM) and through the stream (SIGINT)', async () => {
	const a = await sbx.runCommand({ cmd: 'sleep', args: ['60'], detached: true });
	const logs = a.logs();
	await sleep(300);
	await a.kill('SIGTERM');
	const ev = (await collect(logs)).at(-1);
	assert.equal(ev.type, 'exit');
	assert.equal(ev.signal, 'SIGTERM');
	const b = await sbx.runCommand({ cmd: 'sleep', args: ['60'], detached: true });
	const s = b.logs({ input: true });
	s.kill('SIGINT');
	const t0 = Date.now();
	const end = (await collect(s)).at(-1);
	assert.equal(end.signal, 'SIGINT');
	assert.ok(Date.now() - t0 < 30000, 'the kill ended the 60 s sleep'); // generous: a busy machine
	assert.equal((await b.wait()).signal, 'SIGINT');
});

test('a stream the gateway refuses for good (unknown command) fails at once, no retrying', async () => {
	const s = sbx.logs('cmd_aaaaaaaaaaaaaaaaaaaaaaaa');
	// the same error a REST call for it gives, with the close code
	await assert.rejects(collect(s), (e) => e instanceof NotFoundError && e.code === 'not_found' && e.status === 404 && e.closeCode === 4404);
	assert.equal(s.reconnects, 0, 'the stream was reopened'); // counted, not timed
});

test('pty: `echo $((6*7))` prints 42; resize reaches the terminal; exit message', async () => {
	const term = sbx.pty({ cmd: 'bash', cols: 80, rows: 24 });
	await term.opened;
	term.write('echo $((6*7))\r');
	await waitForScreen(term, /^42$/m);
	term.write('stty size\r');
	await waitForScreen(term, /^24 80$/m);
	term.resize(100, 30);
	await sleep(200);
	term.write('stty size\r');
	await waitForScreen(term, /^30 100$/m);
	const exited = new Promise((r) => term.on('exit', r));
	term.write('exit 7\r');
	const e = await exited;
	assert.equal(e.exit_code, 7);
	await term.closed;
});

test('pty flow control: pause stops the output of `yes`, resume restarts it, Ctrl-C stops it', async () => {
	const term = sbx.pty({ cmd: 'bash', cols: 80, rows: 24 });
	await term.opened;
	let bytes = 0;
	term.on('data', (b) => { bytes += b.length; });
	term.write('yes\r');
	// Polls rather than fixed sleeps: a login shell on a busy machine can take a while.
	const until = async (cond, ms, what) => {
		const t0 = Date.now();
		while (!cond()) {
			if (Date.now() - t0 > ms) throw new Error(`${what} (${bytes} bytes so far)`);
			await sleep(50);
		}
	};
	await until(() => bytes > 100000, 15000, 'yes produced no flood');
	term.pause();
	await sleep(1500); // what was already in flight drains
	const atPause = bytes;
	await sleep(1000);
	assert.ok(bytes - atPause < 64 * 1024, `${bytes - atPause} bytes arrived while paused`);
	term.resume();
	await until(() => bytes - atPause > 100000, 10000, 'no flood after resume');
	term.pause();
	term.write('\x03'); // keystrokes still go in while output is paused
	await sleep(300);
	term.resume();
	term.write('echo flow-$((40+2))\r');
	await waitForScreen(term, /flow-42/, 15000);
	await term.close();
});

test('WebSocket URLs carry a stream token of the sandbox, never the API key; without tokens the key works', async () => {
	assert.ok(socketUrls.length >= 10, `${socketUrls.length} sockets opened`);
	for (const u of socketUrls) {
		const token = new URL(u).searchParams.get('access_token');
		assert.notEqual(token, apiKey, u);
		assert.ok(!u.includes(apiKey), u);
		assert.match(token, /^st\./);
	}
	const plain = await new SandboxClient({ baseUrl, apiKey, WebSocket: RecordingWebSocket, streamTokens: false }).get(sbx.id);
	const before = socketUrls.length;
	const cmd = await plain.runCommand({ cmd: 'echo', args: ['keyed'], detached: true });
	const events = await collect(cmd.logs());
	assert.equal(streamText(events, 'stdout'), 'keyed\n');
	assert.equal(new URL(socketUrls[before]).searchParams.get('access_token'), apiKey);
	// A token is for its own sandbox only.
	const other = await client.create({ timeout_ms: 60000 });
	try {
		const stolen = await sbx.streamToken();
		const ws = new WebSocket(client.socketUrl(other.path('/pty'), {}, stolen));
		const code = await new Promise((r) => { ws.on('unexpected-response', (_, res) => r(res.statusCode)); ws.on('open', () => r('open')); ws.on('error', () => {}); });
		assert.ok(code === 401 || code === 404, `another sandbox's token gave ${code}`);
		ws.terminate();
	} finally {
		await other.stop();
	}
});

test('token-scope: each socket gets the narrowest token that works (read, read+write, terminal)', async () => {
	const scopeOf = (u) => Number(new URL(u).searchParams.get('access_token').split('.')[3]);
	const at = socketUrls.length;
	const cmd = await sbx.runCommand({ cmd: 'cat', detached: true });
	const watch = cmd.logs();
	assert.throws(() => watch.write('x'), /input: true/);
	assert.throws(() => watch.kill('SIGKILL'), /input: true/);
	const drive = cmd.logs({ input: true });
	drive.write('scoped\n');
	drive.end();
	const [seen] = await Promise.all([collect(watch), collect(drive)]);
	assert.equal(streamText(seen, 'stdout'), 'scoped\n');
	const term = sbx.pty({ cmd: 'bash', cols: 80, rows: 24 });
	await term.opened;
	await term.close();
	const urls = socketUrls.slice(at);
	const stream = urls.filter((u) => u.includes('/stream')).map(scopeOf);
	const pty = urls.filter((u) => u.includes('/pty')).map(scopeOf);
	// bits: 1 read, 2 write, 4 terminal (docs/api.md)
	assert.deepEqual([...new Set(stream)].sort(), [1, 3], urls.join('\n'));
	assert.deepEqual(pty, [4], urls.join('\n'));
	// and the gateway holds the read token to it: no terminal with it
	const ws = new WebSocket(client.socketUrl(sbx.path('/pty'), {}, await sbx.streamToken()));
	const code = await new Promise((r) => { ws.on('unexpected-response', (_, res) => r(res.statusCode)); ws.on('open', () => r('open')); ws.on('error', () => {}); });
	ws.terminate();
	assert.equal(code, 403);
});

test('extendTimeout moves expires_at later', async () => {
	const before = (await sbx.refresh()).info.expires_at;
	await sbx.extendTimeout(120000);
	assert.ok(sbx.info.expires_at > before, `${sbx.info.expires_at} <= ${before}`);
	assert.equal((await client.get(sbx.id)).info.expires_at, sbx.info.expires_at);
});

test('stop: status stopped (requested); repeating it is fine; commands then fail', async () => {
	await sbx.stop();
	assert.equal(sbx.status, 'stopped');
	assert.equal(sbx.info.stop_reason, 'requested');
	await sbx.stop();
	await assert.rejects(sbx.runCommand({ cmd: 'true' }), (e) => e instanceof ConflictError && e.status === 409 && e.code === 'conflict');
});

const ok = await run();
if (sbx && sbx.status === 'running') await sbx.stop().catch(() => {});
process.exit(ok ? 0 : 1); // sockets a failed case left open must not keep Node alive
