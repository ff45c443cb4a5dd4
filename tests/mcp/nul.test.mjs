// MCP suite, whole strings: every string of a JSON-RPC message to POST /mcp
// that holds U+0000 ("\u0000") is refused naming where it is (invalid
// request in the envelope, invalid params in params and a tool's
// arguments), except write_files' contents, which are data: their NUL is a
// byte like any other and is written whole. Before, cJSON cut each at the
// NUL: the path "/tmp/nul-a\u0000.b" wrote /tmp/nul-a, the content
// "ab\u0000cd" two bytes, "ping\u0000x" was a ping. Raw HTTP, so the text
// is exactly what is sent (JSON.stringify writes a NUL as \u0000).
// Env: GW_URL, GW_KEY. Prints PASS:/FAIL: lines and "N passed, N failed".
import http from 'node:http';
import { resultWith, finish } from '../lib/results.mjs';

const { GW_URL, GW_KEY } = process.env;
const MCP = new URL('/mcp', GW_URL);
const result = resultWith('nul: ');
const check = (name, got, want) => result(name, JSON.stringify(got) === JSON.stringify(want),
  `got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
const NUL = (at) => `${at} must not contain NUL (\\u0000)`;

function request(method, url, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    const req = http.request(url, { method, headers: { Authorization: `Bearer ${GW_KEY}`,
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'Content-Length': Buffer.byteLength(data), ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        let json = null;
        try { json = JSON.parse(raw.toString()); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, body: json, raw });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

let H = {};
let seq = 100;
const rpc = (method, params, extra = {}) =>
  request('POST', MCP, { jsonrpc: '2.0', id: ++seq, method, params, ...extra }, H);
const call = async (name, args) => (await rpc('tools/call', { name, arguments: args })).body;

async function main() {
  const init = await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {},
    clientInfo: { name: 'nul', version: '1' } });
  H = { 'Mcp-Session-Id': init.headers['mcp-session-id'], 'MCP-Protocol-Version': '2025-06-18' };
  check('a session', [init.status, typeof H['Mcp-Session-Id']], [200, 'string']);
  const made = await call('create_sandbox', { timeout_ms: 120000 });
  const id = made?.result?.structuredContent?.id;
  check('a sandbox to work on', typeof id, 'string');
  if (!id) return;
  const before = (await call('list_sandboxes', {})).result.structuredContent.sandboxes.length;

  // data: the bytes whole, read back through MCP and through REST
  const w = await call('write_files', { sandbox_id: id, files: [{ path: '/tmp/nul-data', content: 'ab\u0000cd' }] });
  check('write_files: content "ab\\u0000cd" is written', w?.result?.isError, undefined);
  const rd = (await call('read_file', { sandbox_id: id, path: '/tmp/nul-data', encoding: 'base64' })).result;
  check('read_file: the five bytes back', [rd?.structuredContent?.size, rd?.structuredContent?.content],
    [5, Buffer.from('ab\u0000cd').toString('base64')]);
  const rest = await request('GET', new URL(`/v1/sandboxes/${id}/files?path=/tmp/nul-data`, GW_URL));
  check('REST GET of the file: the five bytes', [rest.status, rest.raw.toString('hex')], [200, '6162006364']);
  const nuls = await call('write_files', { sandbox_id: id, files: [{ path: '/tmp/nul-only', content: '\u0000\u0000' }] });
  const rd2 = (await call('read_file', { sandbox_id: id, path: '/tmp/nul-only', encoding: 'base64' })).result;
  check('write_files: content of two NULs is two bytes', [nuls?.result?.isError, rd2?.structuredContent?.size], [undefined, 2]);
  const b64 = (await call('write_files', { sandbox_id: id,
    files: [{ path: '/tmp/nul-b64', content: 'YWI=\u0000', encoding: 'base64' }] })).result;
  check('write_files: base64 holding a NUL is not base64 (tool error)',
    [b64?.isError, /not valid base64/.test(b64?.content?.[0]?.text)], [true, true]);

  // every other argument: -32602 naming it
  const args = [
    ['write_files path', 'write_files', { sandbox_id: id, files: [{ path: '/tmp/nul-a\u0000.b', content: 'x' }] }, 'arguments.files[0].path'],
    ['write_files encoding', 'write_files', { sandbox_id: id, files: [{ path: '/tmp/nul-e', content: 'x', encoding: 'text\u0000' }] }, 'arguments.files[0].encoding'],
    ['run_command cmd', 'run_command', { sandbox_id: id, cmd: 'sh\u0000x' }, 'arguments.cmd'],
    ['run_command "echo one\\u0000; echo two"', 'run_command', { sandbox_id: id, cmd: 'sh', args: ['-c', 'echo one\u0000; echo two'] }, 'arguments.args[1]'],
    ['run_command cwd', 'run_command', { sandbox_id: id, cmd: 'true', cwd: '/tmp\u0000' }, 'arguments.cwd'],
    ['run_command env value', 'run_command', { sandbox_id: id, cmd: 'true', env: { A: 'x\u0000' } }, 'arguments.env.A'],
    ['start_command args', 'start_command', { sandbox_id: id, cmd: 'sh', args: ['-c', 'echo one\u0000; echo two'] }, 'arguments.args[1]'],
    ['create_sandbox image', 'create_sandbox', { image: 'default\u0000x' }, 'arguments.image'],
    ['create_sandbox network', 'create_sandbox', { network: 'allow-all\u0000' }, 'arguments.network'],
    ['create_sandbox env value', 'create_sandbox', { env: { A: '\u0000' } }, 'arguments.env.A'],
    ['read_file path', 'read_file', { sandbox_id: id, path: '/tmp/nul-data\u0000x' }, 'arguments.path'],
    ['read_file encoding', 'read_file', { sandbox_id: id, path: '/tmp/nul-data', encoding: 'base64\u0000' }, 'arguments.encoding'],
    ['list_files path', 'list_files', { sandbox_id: id, path: '/tmp\u0000/x' }, 'arguments.path'],
    ['command_output command_id', 'command_output', { sandbox_id: id, command_id: 'cmd_x\u0000' }, 'arguments.command_id'],
    ['stop_sandbox sandbox_id', 'stop_sandbox', { sandbox_id: `${id}\u0000x` }, 'arguments.sandbox_id'],
    ['extend sandbox_id', 'extend', { sandbox_id: `${id}\u0000`, duration_ms: 1000 }, 'arguments.sandbox_id'],
    ['preview_url sandbox_id', 'preview_url', { sandbox_id: `${id}\u0000`, port: 3000 }, 'arguments.sandbox_id'],
  ];
  for (const [name, tool, a, at] of args) {
    const r = await call(tool, a);
    check(`${name}: -32602 naming ${at}`, [r?.error?.code, r?.error?.message],
      [-32602, `invalid arguments for ${tool}: ${NUL(at)}`]);
  }

  // the envelope: invalid request; params: invalid params
  let r = await rpc('ping\u0000x');
  check('method "ping\\u0000x": 400 -32600 naming method', [r.status, r.body?.error?.code, r.body?.error?.message],
    [400, -32600, `invalid JSON-RPC 2.0 message: ${NUL('method')}`]);
  r = await request('POST', MCP, { jsonrpc: '2.0\u0000', id: 1, method: 'ping' }, H);
  check('jsonrpc "2.0\\u0000": 400 -32600 naming jsonrpc', [r.status, r.body?.error?.code, r.body?.error?.message],
    [400, -32600, `invalid JSON-RPC 2.0 message: ${NUL('jsonrpc')}`]);
  r = await request('POST', MCP, { jsonrpc: '2.0', id: 'a\u0000', method: 'ping' }, H);
  check('an id holding NUL: 400 -32600 naming id, id null', [r.status, r.body?.error?.code, r.body?.error?.message, r.body?.id],
    [400, -32600, `invalid JSON-RPC 2.0 message: ${NUL('id')}`, null]);
  r = await rpc('tools/call', { name: 'run_command\u0000', arguments: { sandbox_id: id, cmd: 'true' } });
  check('params.name holding NUL: -32602 naming it', [r.body?.error?.code, r.body?.error?.message], [-32602, NUL('params.name')]);
  r = await rpc('tools/call', { name: 'run_command', arguments: { sandbox_id: id, cmd: 'true' }, _meta: { progressToken: 't\u0000' } });
  check('a progressToken holding NUL: -32602 naming it', [r.body?.error?.code, r.body?.error?.message],
    [-32602, NUL('params._meta.progressToken')]);
  r = await request('POST', MCP, { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-06-18\u0000x',
    capabilities: {}, clientInfo: { name: 'nul', version: '1' } } }, {});
  check('initialize with a protocolVersion holding NUL: -32602, no session',
    [r.body?.error?.code, r.body?.error?.message, r.headers['mcp-session-id']], [-32602, NUL('params.protocolVersion'), undefined]);
  r = await request('POST', MCP, '{"jsonrpc":"2.0","id":3,"method\\u0000":"ping"}', H);
  check('a key holding NUL: 400 -32700 saying so', [r.status, r.body?.error?.code, /a key holds NUL/.test(r.body?.error?.message)],
    [400, -32700, true]);
  r = await request('POST', MCP, '{"jsonrpc":"2.0","id":4,"method":"ping\\uZZZZ"}', H);
  check('"\\uZZZZ" (cJSON reads a NUL): 400 -32700 saying where', [r.status, r.body?.error?.code, r.body?.error?.message],
    [400, -32700, 'parse error: invalid JSON at byte 38: \\u needs four hex digits']);

  // nothing changed: no sandbox, no file or directory, no command
  check('nothing created: as many sandboxes as before',
    (await call('list_sandboxes', {})).result?.structuredContent?.sandboxes?.length, before);
  const ls = ((await call('list_files', { sandbox_id: id, path: '/tmp' })).result?.structuredContent?.entries || [])
    .map((e) => e.name).sort();
  check('nothing written but the data files: /tmp', ls.filter((n) => n.startsWith('nul-')), ['nul-data', 'nul-only']);
  const cmds = await request('GET', new URL(`/v1/sandboxes/${id}/commands`, GW_URL));
  check('nothing run: no command in the sandbox', [cmds.status, cmds.body?.commands?.length], [200, 0]);
  await call('stop_sandbox', { sandbox_id: id });
}

main().catch((e) => result('suite', false, e.stack || String(e))).finally(() => finish());
