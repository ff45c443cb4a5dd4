// MCP suite: the official @modelcontextprotocol/sdk client (pinned in
// package.json) against the real gateway's POST /mcp, then raw HTTP for what
// a well-behaved client never sends. Prints PASS:/FAIL: lines and
// "N passed, N failed" (tests/lib/results.mjs).
// Env: GW_URL, GW_KEY, GW_KEY2 (a second key), GW_PORT.
import http from 'node:http';
import { request } from '../lib/http.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { result, finish } from '../lib/results.mjs';

const { GW_URL, GW_KEY, GW_KEY2, GW_PORT } = process.env;
const MCP = new URL('/mcp', GW_URL);
const ok = (name) => result(name, true);
const bad = (name, why) => result(name, false, why);
const check = (name, got, want) =>
  JSON.stringify(got) === JSON.stringify(want) ? ok(name) : bad(name, `got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function connect(key) {
  const client = new Client({ name: 'mcp-suite', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(MCP, {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

// A raw POST /mcp: { status, headers, body (parsed when JSON) }
async function post(body, headers = {}) {
  const res = await request(MCP, {
    method: 'POST', body,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
  });
  return { ...res, body: res.json };
}

// Headers announcing a body over the cap, and no body: the gateway answers
// from Content-Length without reading (sending 2 MiB it refuses could end in
// a reset that eats the answer).
function oversized(headers) {
  return new Promise((resolve, reject) => {
    const req = http.request(MCP, { method: 'POST', headers: { 'Content-Type': 'application/json',
      'Content-Length': 2 * 1024 * 1024, ...headers } }, (res) => {
      resolve(res.statusCode);
      req.destroy();
    });
    req.on('error', (e) => { if (!req.destroyed) reject(e); });
    req.flushHeaders();
  });
}

function raw(method, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(MCP, { method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

// GET through the gateway's preview proxy: the route's host name, sent to the
// gateway's own address (no DNS for *.localhost needed).
function previewGet(url, path) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port: GW_PORT, path, headers: { Host: u.host } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', (e) => resolve({ status: 0, body: String(e) }));
    req.end();
  });
}

const EXPECTED_TOOLS = ['command_output', 'create_sandbox', 'delete_image', 'delete_sandbox', 'delete_snapshot', 'extend', 'fork_sandbox', 'list_files',
  'list_images', 'list_sandboxes', 'list_snapshots', 'pause_sandbox', 'preview_url', 'read_file', 'resume_sandbox',
  'run_command', 'set_network_policy', 'snapshot_sandbox', 'start_command', 'stop_sandbox', 'write_files'];

async function main() {
  const { client, transport } = await connect(GW_KEY);
  ok('connect: initialize over Streamable HTTP');
  check('session id issued', /^[0-9a-f]{32}$/.test(transport.sessionId || ''), true);
  check('protocol version negotiated', ['2025-11-25', '2025-06-18'].includes(transport.protocolVersion), true);

  const { tools } = await client.listTools();
  check('tools listed', tools.map((t) => t.name).sort(), EXPECTED_TOOLS);
  const schemasOk = tools.every((t) => t.inputSchema?.type === 'object' && t.outputSchema?.type === 'object' &&
    typeof t.description === 'string' && t.description.length > 0);
  check('every tool has an input and an output schema', schemasOk, true);
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  check('run_command requires sandbox_id and cmd', byName.run_command.inputSchema.required, ['sandbox_id', 'cmd']);
  check('run_command output has exit_code, stdout, stderr, truncated flags',
    ['exit_code', 'stdout', 'stderr', 'stdout_truncated', 'stderr_truncated'].every((k) => k in byName.run_command.outputSchema.properties), true);

  // The SDK validates structuredContent against each tool's outputSchema
  // (it listed them above): a result that does not match throws here.
  const call = (name, args) => client.callTool({ name, arguments: args });

  const created = await call('create_sandbox', { timeout_ms: 120000, ports: [8000], env: { SECRET_TOKEN: 'hunter2-do-not-echo' } });
  const sb = created.structuredContent;
  check('create_sandbox: running', sb?.status, 'running');
  const id = sb.id;
  check('create_sandbox: text content carries the same object', JSON.parse(created.content[0].text).id, id);
  check('env value never echoed', JSON.stringify(created).includes('hunter2'), false);
  check('env names only', sb.env_names, ['SECRET_TOKEN']);

  // a sandbox made through MCP belongs to the key: REST sees it with this key only
  const rest = async (key) => (await fetch(new URL(`/v1/sandboxes/${id}`, GW_URL), { headers: { Authorization: `Bearer ${key}` } })).status;
  check('owner: REST with the same key sees it', await rest(GW_KEY), 200);
  check('owner: REST with another key gets 404', await rest(GW_KEY2), 404);
  const other = await connect(GW_KEY2);
  const otherRun = await other.client.callTool({ name: 'run_command', arguments: { sandbox_id: id, cmd: 'true' } });
  check('owner: another key\'s MCP call is a tool error', [otherRun.isError, /not_found/.test(otherRun.content[0].text)], [true, true]);
  check('owner: another key lists none of it', (await other.client.callTool({ name: 'list_sandboxes', arguments: {} })).structuredContent.sandboxes.some((s) => s.id === id), false);
  await other.client.close();

  const prog = "import os, sys\nopen('result.txt', 'w').write('sum=%d\\n' % sum(range(10)))\nprint('to stdout')\nprint('to stderr', file=sys.stderr)\nprint('secret seen' if os.environ.get('SECRET_TOKEN') == 'hunter2-do-not-echo' else 'no secret')\nsys.exit(3)\n";
  const w = await call('write_files', { sandbox_id: id, files: [
    { path: 'prog.py', content: prog },
    { path: 'www/index.html', content: Buffer.from('<h1>from mcp</h1>\n').toString('base64'), encoding: 'base64' },
    { path: 'run.sh', content: '#!/bin/sh\necho script\n', mode: 0o755 },
  ] });
  check('write_files: three files', w.structuredContent?.files?.map((f) => f.path), ['prog.py', 'www/index.html', 'run.sh']);

  const run = await call('run_command', { sandbox_id: id, cmd: 'python3', args: ['prog.py'] });
  const r = run.structuredContent;
  check('run_command: exit code', r.exit_code, 3);
  check('run_command: stdout', r.stdout, 'to stdout\nsecret seen\n');
  check('run_command: stderr', r.stderr, 'to stderr\n');
  check('run_command: truncated flags', [r.stdout_truncated, r.stderr_truncated], [false, false]);
  check('run_command: a failing command is not a tool error', !!run.isError, false);
  const read = await call('read_file', { sandbox_id: id, path: 'result.txt' });
  check('read_file: the file the program wrote', read.structuredContent.content, 'sum=45\n');
  const read64 = await call('read_file', { sandbox_id: id, path: 'www/index.html', encoding: 'base64' });
  check('read_file: base64', Buffer.from(read64.structuredContent.content, 'base64').toString(), '<h1>from mcp</h1>\n');
  const mode = await call('run_command', { sandbox_id: id, cmd: './run.sh' });
  check('write_files: mode 0755 makes it executable', mode.structuredContent.stdout, 'script\n');
  const sudo = await call('run_command', { sandbox_id: id, cmd: 'id', args: ['-u'], sudo: true, cwd: '/tmp' });
  check('run_command: sudo and cwd', sudo.structuredContent.stdout, '0\n');
  const ls = await call('list_files', { sandbox_id: id, path: 'www' });
  check('list_files', ls.structuredContent.entries.map((e) => e.name), ['index.html']);
  const missing = await call('read_file', { sandbox_id: id, path: 'nope.txt' });
  check('read_file of a missing file is a tool error', [missing.isError, /not_found/.test(missing.content[0].text)], [true, true]);

  // capped reads always answer. /proc/self/pagemap says its size is 0 and
  // has no end: the read passes the 1 MiB cap midway, which once left the
  // call unanswered (sometimes, so ten times). A limit on each call turns a
  // silence into a failure here instead of a hang.
  const capped = [];
  for (let i = 0; i < 10; i++) {
    const res = await client.callTool({ name: 'read_file', arguments: { sandbox_id: id, path: '/proc/self/pagemap' } },
      undefined, { timeout: 30000 }).catch((e) => ({ threw: String(e) }));
    capped.push(res.threw || (res.isError && /^too_large: file over 1048576 bytes/.test(res.content[0].text) ? 'too_large' : JSON.stringify(res).slice(0, 200)));
    if (res.threw) break;   // one silence is enough: no 30 s more for each of the rest
  }
  check('read_file past the 1 MiB cap (/proc/self/pagemap, size 0): too_large every time of 10', capped, Array(10).fill('too_large'));
  const version = (await call('run_command', { sandbox_id: id, cmd: 'cat', args: ['/proc/version'] })).structuredContent.stdout;
  const procv = await call('read_file', { sandbox_id: id, path: '/proc/version' });
  check('read_file of a file whose size says 0 (/proc/version): its whole content', [procv.structuredContent?.content, procv.structuredContent?.size], [version, Buffer.byteLength(version)]);

  // progress: the command prints three lines 200 ms apart, then waits for a
  // file that the test writes only once the third line came as a progress
  // notification; without notifications as the output comes, it never ends
  const chunks = [], progress = [];
  let released = null;
  const prun = await client.callTool({ name: 'run_command', arguments: { sandbox_id: id, cmd: 'sh',
    args: ['-c', 'for i in 1 2 3; do echo line$i; sleep 0.2; done; while [ ! -f go2 ]; do sleep 0.1; done; echo done'] } },
  undefined, { timeout: 120000, onprogress: (p) => {
    chunks.push(p.message);
    progress.push(p.progress);
    if (!released && chunks.join('').includes('line3\n'))
      released = call('write_files', { sandbox_id: id, files: [{ path: 'go2', content: '' }] });
  } });
  await released;
  check('progress: output chunks in order as notifications', chunks.join(''), 'line1\nline2\nline3\ndone\n');
  check('progress: increasing, the byte count', [progress.every((v, i) => i === 0 || v > progress[i - 1]), progress[progress.length - 1]], [true, 23]);
  check('progress: the result after them', [prun.structuredContent?.stdout, prun.structuredContent?.exit_code], ['line1\nline2\nline3\ndone\n', 0]);

  // detached: the command prints a line, waits for a file we write, prints another
  const st = await call('start_command', { sandbox_id: id, cmd: 'sh', args: ['-c', 'echo first; echo err1 >&2; while [ ! -f go ]; do sleep 0.1; done; echo second'] });
  check('start_command: running', st.structuredContent.status, 'running');
  const cid = st.structuredContent.id;
  let out, tries = 0;
  do { // until both first lines were printed (bounded polling, no deadline)
    out = (await call('command_output', { sandbox_id: id, command_id: cid, since: 0 })).structuredContent;
    if (out.next_since < 11) await sleep(200);
  } while (out.next_since < 11 && ++tries < 300);
  check('command_output: first output', [out.stdout, out.stderr, out.next_since, out.exited], ['first\n', 'err1\n', 11, false]);
  await call('write_files', { sandbox_id: id, files: [{ path: 'go', content: '' }] });
  const since = out.next_since;
  tries = 0;
  do {
    out = (await call('command_output', { sandbox_id: id, command_id: cid, since })).structuredContent;
    if (!out.exited) await sleep(200);
  } while (!out.exited && ++tries < 300);
  check('command_output since: only the new output, then the exit', [out.stdout, out.stderr, out.next_since, out.exited, out.exit_code],
    ['second\n', '', 18, true, 0]);

  // preview: a python http.server on the declared port, through the proxy
  await call('start_command', { sandbox_id: id, cmd: 'python3', args: ['-m', 'http.server', '8000', '--bind', '0.0.0.0'], cwd: '/home/sandbox/www' });
  const pv = (await call('preview_url', { sandbox_id: id, port: 8000 })).structuredContent;
  check('preview_url: the route of port 8000', pv.url.startsWith(`http://8000-${id}.`), true);
  let page;
  tries = 0;
  do { // until the server listens
    page = await previewGet(pv.url, '/index.html');
    if (page.status !== 200) await sleep(250);
  } while (page.status !== 200 && ++tries < 240);
  check('preview_url fetched through the gateway', [page.status, page.body], [200, '<h1>from mcp</h1>\n']);
  const pvBad = await call('preview_url', { sandbox_id: id, port: 9999 });
  check('preview_url of an undeclared port is a tool error', pvBad.isError, true);

  const ext = await call('extend', { sandbox_id: id, duration_ms: 1000 });
  check('extend: expires later', ext.structuredContent.expires_at, sb.expires_at + 1000);
  // list_images is GET /v1/images: the same operation of the gateway's service layer
  const images = await call('list_images', {});
  const restImages = await (await fetch(new URL('/v1/images', GW_URL), { headers: { Authorization: `Bearer ${GW_KEY}` } })).json();
  check('list_images is what GET /v1/images lists', images.structuredContent, restImages);
  check('list_images has the default image', images.structuredContent.images.some((i) => i.name === 'default'), true);
  // delete_image is DELETE /v1/images/{name}: the default stays (conflict), an unknown name is not_found
  const delDefault = await call('delete_image', { name: 'default' });
  check('delete_image of the default: a conflict tool error, and it is still listed',
    [delDefault.isError, /^conflict: /.test(delDefault.content[0].text),
      (await call('list_images', {})).structuredContent.images.some((i) => i.name === 'default')], [true, true, true]);
  const delNone = await call('delete_image', { name: 'no-such-image' });
  check('delete_image of an unknown image: a not_found tool error', [delNone.isError, /^not_found: /.test(delNone.content[0].text)], [true, true]);
  const list = await call('list_sandboxes', {});
  check('list_sandboxes has it', list.structuredContent.sandboxes.some((s) => s.id === id), true);
  check('list_sandboxes never echoes env values', JSON.stringify(list).includes('hunter2'), false);

  // snapshots, fork, pause and resume: the same operations as their REST routes
  const snap = (await call('snapshot_sandbox', { sandbox_id: id, keep_last: 5 })).structuredContent;
  check('snapshot_sandbox: a snapshot of this sandbox', [snap?.id?.startsWith('snp_'), snap?.sandbox_id], [true, id]);
  const fromSnap = (await call('create_sandbox', { source: { snapshot: snap.id } })).structuredContent;
  const seen = (await call('run_command', { sandbox_id: fromSnap.id, cmd: 'cat', args: ['result.txt'] })).structuredContent;
  check('create_sandbox from the snapshot has its files', seen.stdout, 'sum=45\n');
  check('list_snapshots has it', (await call('list_snapshots', {})).structuredContent.snapshots.some((x) => x.id === snap.id), true);
  const fork = (await call('fork_sandbox', { sandbox_id: id, count: 1 })).structuredContent;
  check('fork_sandbox: one sandbox from a new snapshot, without the env', [fork.sandboxes.length, fork.sandboxes[0].env_names], [1, []]);
  check('pause_sandbox: paused', (await call('pause_sandbox', { sandbox_id: fromSnap.id })).structuredContent.status, 'paused');
  const onPaused = await call('run_command', { sandbox_id: fromSnap.id, cmd: 'true' });
  check('a command on a paused sandbox: tool error paused, 409 in _meta', [onPaused.isError, onPaused._meta?.status, onPaused._meta?.code], [true, 409, 'paused']);
  check('resume_sandbox: running', (await call('resume_sandbox', { sandbox_id: fromSnap.id })).structuredContent.status, 'running');
  // persistent: kept by stop_sandbox (REST's POST .../stop), run_command resumes it, delete_sandbox ends it
  const kept = (await call('create_sandbox', { persistent: true, source: { snapshot: snap.id } })).structuredContent;
  check('create_sandbox persistent from a snapshot', [kept.persistent, kept.source?.snapshot], [true, snap.id]);
  await call('run_command', { sandbox_id: kept.id, cmd: 'sh', args: ['-c', 'echo before-stop > mine.txt'] });
  const stopKeep = (await call('stop_sandbox', { sandbox_id: kept.id })).structuredContent;
  check('stop_sandbox keeps a persistent sandbox: stopped and resumable', [stopKeep.status, stopKeep.resumable], ['stopped', true]);
  check('run_command resumes it, its file is there',
    (await call('run_command', { sandbox_id: kept.id, cmd: 'cat', args: ['mine.txt'] })).structuredContent?.stdout, 'before-stop\n');
  await call('stop_sandbox', { sandbox_id: kept.id });
  const keptFork = await call('fork_sandbox', { sandbox_id: kept.id, count: 1 });
  check('fork_sandbox of a kept sandbox resumes it first, then forks it', [keptFork.isError ?? false, keptFork.structuredContent?.sandboxes?.length], [false, 1]);
  const keptForkId = keptFork.structuredContent?.sandboxes?.[0]?.id ?? 'none';
  check('... the fork has its file',
    (await call('run_command', { sandbox_id: keptForkId, cmd: 'cat', args: ['mine.txt'] })).structuredContent?.stdout, 'before-stop\n');
  await call('delete_sandbox', { sandbox_id: keptForkId });
  if (keptFork.structuredContent?.snapshot) await call('delete_snapshot', { snapshot_id: keptFork.structuredContent.snapshot.id });
  check('delete_sandbox ends it for good', (await call('delete_sandbox', { sandbox_id: kept.id })).structuredContent.resumable, false);
  const afterDelete = await call('run_command', { sandbox_id: kept.id, cmd: 'true' });
  check('after delete_sandbox nothing resumes it: tool error conflict', [afterDelete.isError, afterDelete._meta?.code], [true, 'conflict']);
  for (const s of [fromSnap.id, fork.sandboxes[0].id]) await call('stop_sandbox', { sandbox_id: s });
  for (const x of [snap.id, fork.snapshot.id]) check('delete_snapshot', (await call('delete_snapshot', { snapshot_id: x })).structuredContent.id, x);
  check('delete_snapshot of one gone: tool error not_found', (await call('delete_snapshot', { snapshot_id: snap.id }))._meta?.code, 'not_found');

  // protocol errors through the SDK
  try { await call('no_such_tool', {}); bad('unknown tool', 'no error'); } catch (e) { check('unknown tool: -32602', e.code, -32602); }
  try { await call('run_command', { sandbox_id: id }); bad('missing argument', 'no error'); } catch (e) { check('missing cmd: -32602', e.code, -32602); }
  try { await call('run_command', { sandbox_id: id, cmd: 'true', timeout_ms: 'soon' }); bad('wrong type', 'no error'); } catch (e) { check('wrong argument type: -32602', e.code, -32602); }
  try { await call('run_command', { sandbox_id: id, cmd: 'true', colour: 1 }); bad('unknown argument', 'no error'); } catch (e) { check('unknown argument: -32602', e.code, -32602); }
  const cmdErr = await call('run_command', { sandbox_id: id, cmd: 'no-such-binary-here' });
  check('a command that cannot start: tool error or exit 127',
    !!cmdErr.isError || cmdErr.structuredContent?.exit_code === 127, true);

  // raw JSON-RPC with the live session
  const sid = transport.sessionId;
  const H = { Authorization: `Bearer ${GW_KEY}`, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': transport.protocolVersion };
  let res = await post('{"jsonrpc":"2.0","id":1,"method":', H);
  check('malformed JSON: -32700', [res.status, res.body?.error?.code, res.body?.id], [400, -32700, null]);
  res = await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }], H);
  check('batch refused: -32600', [res.status, res.body?.error?.code], [400, -32600]);
  check('batch refusal says why', /batch/i.test(res.body?.error?.message || ''), true);
  res = await post({ jsonrpc: '1.0', id: 1, method: 'ping' }, H);
  check('not JSON-RPC 2.0: -32600', res.body?.error?.code, -32600);
  res = await post({ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, H);
  check('an object id: -32600', res.body?.error?.code, -32600);
  res = await post({ jsonrpc: '2.0', id: 7, method: 'resources/list' }, H);
  check('unknown method: -32601, id kept', [res.body?.error?.code, res.body?.id], [-32601, 7]);
  res = await post({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'run_command', arguments: [] } }, H);
  check('arguments not an object: -32602', res.body?.error?.code, -32602);
  res = await post({ jsonrpc: '2.0', id: 9, method: 'ping' }, H);
  check('ping', [res.status, res.body?.result], [200, {}]);
  res = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, H);
  check('a notification: 202, no body', [res.status, res.text], [202, '']);
  res = await post({ jsonrpc: '2.0', id: 10, method: 'ping' }, { ...H, Authorization: 'Bearer wrong-key' });
  check('wrong key: 401', res.status, 401);
  res = await post({ jsonrpc: '2.0', id: 10, method: 'ping' }, { 'Mcp-Session-Id': sid });
  check('no key: 401 with WWW-Authenticate', [res.status, res.headers['www-authenticate']], [401, 'Bearer']);
  res = await post({ jsonrpc: '2.0', id: 11, method: 'ping' }, { ...H, Authorization: `Bearer ${GW_KEY2}` });
  check('a session of another key: 404', res.status, 404);
  res = await post({ jsonrpc: '2.0', id: 12, method: 'ping' }, { ...H, 'Mcp-Session-Id': '0123456789abcdef0123456789abcdef' });
  check('unknown session: 404', res.status, 404);
  res = await post({ jsonrpc: '2.0', id: 13, method: 'tools/list' }, { Authorization: `Bearer ${GW_KEY}` });
  check('no session id: 400', res.status, 400);
  res = await post({ jsonrpc: '2.0', id: 16, method: 'ping' }, { ...H, Origin: 'http://evil.example' });
  check('a foreign Origin (DNS rebinding): 403', res.status, 403);
  res = await post({ jsonrpc: '2.0', id: 17, method: 'ping' }, { ...H, Origin: `http://127.0.0.1:${GW_PORT}` });
  check('the gateway\'s own Origin: 200', res.status, 200);
  res = await post({ jsonrpc: '2.0', id: 14, method: 'ping' }, { ...H, 'MCP-Protocol-Version': '1999-01-01' });
  check('unsupported protocol version: 400', res.status, 400);
  check('oversized body: 413', await oversized(H), 413);
  res = await raw('GET', { Authorization: `Bearer ${GW_KEY}`, Accept: 'text/event-stream', 'Mcp-Session-Id': sid });
  check('GET /mcp (no SSE stream): 405', [res.status, res.headers.allow], [405, 'POST, DELETE']);

  // a client that goes away in the middle of a call: its internal request
  // and upstream are freed with the connection (ASan checks at exit), and
  // the gateway goes on serving
  await new Promise((resolve) => {
    const data = JSON.stringify({ jsonrpc: '2.0', id: 20, method: 'tools/call',
      params: { name: 'run_command', arguments: { sandbox_id: id, cmd: 'sh', args: ['-c', 'echo started >started; sleep 3'] } } });
    const req = http.request(MCP, { method: 'POST', headers: { ...H, 'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream', 'Content-Length': Buffer.byteLength(data) } });
    req.on('error', () => resolve());
    req.end(data);
    (async () => { // once the command runs, hang up
      for (let i = 0; i < 300; i++) {
        const f = await call('list_files', { sandbox_id: id, path: '.' });
        if (f.structuredContent.entries.some((e) => e.name === 'started')) break;
        await sleep(100);
      }
      req.destroy();
      resolve();
    })();
  });
  res = await post({ jsonrpc: '2.0', id: 21, method: 'ping' }, H);
  check('a client gone mid-call: the gateway goes on', res.status, 200);

  const stop = await call('stop_sandbox', { sandbox_id: id });
  check('stop_sandbox', stop.structuredContent.status, 'stopped');
  const after = await call('run_command', { sandbox_id: id, cmd: 'true' });
  check('a stopped sandbox: tool error', after.isError, true);

  await transport.terminateSession();   // DELETE /mcp
  res = await post({ jsonrpc: '2.0', id: 15, method: 'ping' }, H);
  check('after DELETE the session is gone: 404', res.status, 404);
  await client.close();
}

main().catch((e) => bad('suite', e.stack || String(e))).finally(() => finish());
