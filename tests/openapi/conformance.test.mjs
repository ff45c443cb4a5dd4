// Real answers of the gateway against docs/openapi.yaml: success and error
// cases of every /v1 route (and /healthz, /metrics), each answer's status
// both the one this call must get and one the document lists for the
// route, its body valid against that status's schema (conform.mjs).
// Env: GW_URL, GW_KEY, GW_KEY2 (another key), METRICS_KEY; a gateway with
// --max-sandboxes-per-key 2 and a real runner.
import { isDeepStrictEqual } from 'node:util';
import WebSocket from 'ws';
import { request } from '../lib/http.mjs';
import { result, skip, finish } from '../lib/results.mjs';
import { loadDoc, checker } from './conform.mjs';

const BASE = process.env.GW_URL, KEY = process.env.GW_KEY, OTHER = process.env.GW_KEY2;
const METRICS_KEY = process.env.METRICS_KEY;
const doc = loadDoc();
const check = checker(doc);
const seen = new Set();   // "GET /v1/... 200": what the calls covered

function judge(name, method, path, want, r) {
  const c = check({ method, path, status: r.status, ctype: r.headers['content-type'], text: r.text ?? '' });
  if (c.ok) seen.add(c.op);
  const wrong = [r.status === want ? null : `status ${r.status}, want ${want}: ${(r.text ?? '').slice(0, 200)}`,
    c.ok ? null : `${c.op}: ${c.why}`].filter(Boolean);
  result(`${name}: ${method} ${path.replace(/sbx_[a-z0-9_]+/g, '{sbx}').replace(/cmd_[a-z0-9]+/g, '{cmd}').slice(0, 90)} ${want}`,
    !wrong.length, wrong.join('; '));
  return r;
}

// One call: method path [body] → the answer, judged. key null: none.
async function call(name, method, path, want, { key = KEY, body, headers = {}, announce } = {}) {
  const auth = key === null ? {} : { Authorization: `Bearer ${key}` };
  const json = body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body);
  const r = await request(new URL(path, BASE), {
    method, body, announce,
    headers: { ...(json ? { 'Content-Type': 'application/json' } : {}), ...auth, ...headers },
  });
  return judge(name, method, path, want, r);
}

// A WebSocket upgrade: 101 (then closed by us), or the refusal's answer.
function upgrade(name, path, want, { key = KEY, token } = {}) {
  const q = token ? `${path.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(token)}` : '';
  const ws = new WebSocket(BASE.replace(/^http/, 'ws') + path + q,
    { headers: key ? { Authorization: `Bearer ${key}` } : {} });
  return new Promise((resolve) => {
    let over = false;   // one verdict per upgrade; its close comes after
    const done = (r) => {
      if (over) return;
      over = true;
      clearTimeout(t);
      judge(name, 'GET', path, want, r);
      resolve(r);
    };
    ws.on('upgrade', (res) => done({ status: res.statusCode, headers: res.headers, text: '' }));
    ws.on('open', () => ws.close());
    ws.on('unexpected-response', (req, res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => done({ status: res.statusCode, headers: res.headers, text }));
    });
    ws.on('error', (e) => done({ status: 0, headers: {}, text: String(e) }));
    const t = setTimeout(() => { ws.terminate(); done({ status: 0, headers: {}, text: 'no answer in 60 s' }); }, 60000);
  });
}

/* ---- the service routes ---- */
await call('healthz', 'GET', '/healthz', 200, { key: null });
await call('metrics without the metrics key', 'GET', '/metrics', 401);
await call('metrics', 'GET', '/metrics', 200, { key: METRICS_KEY });
{
  const r = await call('the document', 'GET', '/v1/openapi.json', 200, { key: null });
  result('the document: GET /v1/openapi.json is docs/openapi.yaml as JSON', isDeepStrictEqual(r.json, doc),
    'the served document differs from docs/openapi.yaml: rebuild the gateway');
}
await call('the document, an unknown query argument', 'GET', '/v1/openapi.json?x=1', 422, { key: null });
await call('capabilities', 'GET', '/v1/capabilities', 200);
await call('capabilities, wrong key', 'GET', '/v1/capabilities', 401, { key: 'not-a-key' });
await call('capabilities, no key', 'GET', '/v1/capabilities', 401, { key: null });
await call('capabilities, an unknown query argument', 'GET', '/v1/capabilities?x=1', 422);
await call('capabilities, a method it does not take', 'DELETE', '/v1/capabilities', 405);
await call('images', 'GET', '/v1/images', 200);
await call('import an image, no name', 'POST', '/v1/images', 422, { body: Buffer.from('not a tar') });
await call('import an image, not an archive', 'POST', '/v1/images?name=notatar', 422,
  { body: Buffer.alloc(1024, 1) });
await call('pull an image, no ref', 'POST', '/v1/images?name=x', 422, { body: { name: 'x' } });
await call('delete an image that is not there', 'DELETE', '/v1/images/no-such-image', 404);
await call('delete the default image', 'DELETE', '/v1/images/default', 409);
await call('delete an image, no key', 'DELETE', '/v1/images/default', 401, { key: null });
await call('runners', 'GET', '/v1/runners', 200);
await call('runners, the operator', 'GET', '/v1/runners', 200, { key: METRICS_KEY });
await call('unknown path', 'GET', '/v1/nope', 404);
await call('a path over 1023 bytes', 'GET', `/v1/sandboxes/${'a'.repeat(1100)}`, 414);

/* ---- sandboxes ---- */
await call('create, bad JSON', 'POST', '/v1/sandboxes', 400, { body: '{"ports":[' });
await call('create, not an object', 'POST', '/v1/sandboxes', 400, { body: '[1]' });
await call('create, a field of the wrong type', 'POST', '/v1/sandboxes', 422, { body: { vcpus: 'x' } });
await call('create, an unknown isolation', 'POST', '/v1/sandboxes', 422, { body: { isolation: 'nope' } });
await call('create, an unknown image', 'POST', '/v1/sandboxes', 422, { body: { image: 'nope' } });
await call('create, timeout_ms over the limit', 'POST', '/v1/sandboxes', 429, { body: { timeout_ms: 86400001 } });
await call('create, a body over 64 KiB', 'POST', '/v1/sandboxes', 413, { announce: 70000 });
await call('create, a chunked body', 'POST', '/v1/sandboxes', 411, { announce: 'chunked' });
await call('create, wrong key', 'POST', '/v1/sandboxes', 401, { key: 'not-a-key', body: {} });
const sbx = (await call('create', 'POST', '/v1/sandboxes', 201,
  { body: { ports: [3000], env: { SECRET: 'x' }, preview_auth: true, timeout_ms: 600000 } })).json;
const sid = sbx?.id;
if (!sid) { result('a sandbox to go on with', false); finish(); }
const second = (await call('create, a second one', 'POST', '/v1/sandboxes', 201, { body: {} })).json?.id;
await call('create, over the per-key quota', 'POST', '/v1/sandboxes', 429, { body: {} });
await call('list', 'GET', '/v1/sandboxes', 200);
await call('get', 'GET', `/v1/sandboxes/${sid}`, 200);
await call('get, unknown id', 'GET', '/v1/sandboxes/sbx_nope_aaaaaaaaaaaaaaaaaaaaaaaa', 404);
await call("get, another key's sandbox", 'GET', `/v1/sandboxes/${sid}`, 404, { key: OTHER });
await call('get, an unknown query argument', 'GET', `/v1/sandboxes/${sid}?x=1`, 422);
await call('extend', 'POST', `/v1/sandboxes/${sid}/extend`, 200, { body: { duration_ms: 1000 } });
await call('extend, duration_ms missing', 'POST', `/v1/sandboxes/${sid}/extend`, 422, { body: {} });
await call('extend, past the lifetime bound', 'POST', `/v1/sandboxes/${sid}/extend`, 422, { body: { duration_ms: 86400000 } });
await call('extend, bad JSON', 'POST', `/v1/sandboxes/${sid}/extend`, 400, { body: '{' });
await call('network, deny-all on a deny-all sandbox', 'PATCH', `/v1/sandboxes/${sid}/network`, 200, { body: { network: 'deny-all' } });
await call('network, an allow-list on a deny-all sandbox', 'PATCH', `/v1/sandboxes/${sid}/network`, 409, { body: { network: { allow: ['a.test'] } } });
await call('network, a bad name', 'PATCH', `/v1/sandboxes/${sid}/network`, 422, { body: { network: { allow: ['a b'] } } });
await call('network, a transform rule', 'PATCH', `/v1/sandboxes/${sid}/network`, 422,
  { body: { network: { allow: { 'a.test': [{ transform: [{ headers: { x: 'y' } }] }] } } } });
await call('network log', 'GET', `/v1/sandboxes/${sid}/network/log?since=0`, 200);
await call('network log, a bad since', 'GET', `/v1/sandboxes/${sid}/network/log?since=-1`, 422);
await call('token', 'POST', `/v1/sandboxes/${sid}/token`, 201, { body: {} });
const token = (await call('token, read and write', 'POST', `/v1/sandboxes/${sid}/token`, 201,
  { body: { scopes: ['read', 'write'] } })).json?.token;
await call('token, an unknown scope', 'POST', `/v1/sandboxes/${sid}/token`, 422, { body: { scopes: ['root'] } });
await call('token, unknown id', 'POST', '/v1/sandboxes/sbx_nope_aaaaaaaaaaaaaaaaaaaaaaaa/token', 404, { body: {} });

/* ---- files ---- */
const F = `/v1/sandboxes/${sid}/files`;
await call('write a file', 'PUT', `${F}?path=/tmp/oa/a.txt&mode=0600`, 200, { body: 'hello\n' });
await call('write, no path', 'PUT', F, 422, { body: 'x' });
await call('write, a mode that is not octal', 'PUT', `${F}?path=/tmp/x&mode=9`, 422, { body: 'x' });
await call('write, over 256 MiB', 'PUT', `${F}?path=/tmp/x`, 413, { announce: 300 << 20 });
await call('read a file', 'GET', `${F}?path=/tmp/oa/a.txt`, 200);
await call('read, no such file', 'GET', `${F}?path=/tmp/oa/none`, 404);
await call('mkdir', 'POST', `${F}/mkdir`, 200, { body: { path: '/tmp/oa/d/e', parents: true } });
await call('mkdir, no path', 'POST', `${F}/mkdir`, 422, { body: {} });
await call('list a directory', 'GET', `${F}/list?path=/tmp/oa`, 200);
await call('list, no such directory', 'GET', `${F}/list?path=/tmp/none`, 404);

/* ---- commands ---- */
const C = `/v1/sandboxes/${sid}/commands`;
const waited = (await call('run, waited', 'POST', C, 200,
  { body: { cmd: 'sh', args: ['-c', 'echo out; echo err >&2; exit 3'] } })).json;
await call('run, base64', 'POST', C, 200, { body: { cmd: 'printf', args: ['\\377'], encoding: 'base64' } });
await call('run, no such program (a result, exit 127)', 'POST', C, 200, { body: { cmd: 'no-such-program' } });
await call('run, without cmd', 'POST', C, 422, { body: {} });
await call('run, a NUL in an argument', 'POST', C, 422, { body: { cmd: 'echo', args: ['a\u0000b'] } });
await call('run, a body over 64 KiB', 'POST', C, 413, { announce: 70000 });
const cat = (await call('run, detached', 'POST', C, 201, { body: { cmd: 'cat', detached: true } })).json?.id;
const sleeper = (await call('run, detached (to kill)', 'POST', C, 201,
  { body: { cmd: 'sleep', args: ['600'], detached: true } })).json?.id;
await call('list commands', 'GET', C, 200);
const W = `${C}/${waited?.id}`;
await call('command status', 'GET', W, 200);
await call('command, wait', 'GET', `${W}?wait=1`, 200);
await call('command, wait=x', 'GET', `${W}?wait=x`, 422);
await call('command, unknown id', 'GET', `${C}/cmd_nope`, 404);
await call('logs', 'GET', `${W}/logs`, 200);
await call('logs, base64 from an offset', 'GET', `${W}/logs?encoding=base64&since=2`, 200);
await call('logs, follow (an ended command)', 'GET', `${W}/logs?follow=1`, 200);
await call('logs, an unknown encoding', 'GET', `${W}/logs?encoding=latin1`, 422);
await call('logs, unknown command', 'GET', `${C}/cmd_nope/logs`, 404);
await call('stdin', 'POST', `${C}/${cat}/stdin`, 200, { body: 'typed\n' });
await call('stdin, then eof', 'POST', `${C}/${cat}/stdin?eof=1`, 200, { body: 'more\n' });
await call('command, wait for cat', 'GET', `${C}/${cat}?wait=1`, 200);
await call('logs of cat', 'GET', `${C}/${cat}/logs`, 200);
await call('stdin of an ended command', 'POST', `${W}/stdin?eof=1`, 409, { body: 'x' });
await call('kill', 'POST', `${C}/${sleeper}/kill`, 200, { body: { signal: 'SIGKILL' } });
await call('command, wait for the killed one', 'GET', `${C}/${sleeper}?wait=1`, 200);
await call('kill, an ended command', 'POST', `${W}/kill`, 409, { body: {} });
await call('kill, an unknown signal', 'POST', `${C}/${cat}/kill`, 422, { body: { signal: 'SIGNOPE' } });

/* ---- WebSockets ---- */
const S = `${W}/stream`;
await upgrade('stream', S, 101);
await upgrade('stream, with a stream token', S, 101, { key: null, token });
await upgrade('stream, a bad access_token', S, 401, { key: null, token: 'not-a-key' });
await upgrade('stream, unknown sandbox', `/v1/sandboxes/sbx_nope_aaaaaaaaaaaaaaaaaaaaaaaa/commands/${waited?.id}/stream`, 404);
await call('stream, not an upgrade', 'GET', S, 426);
await upgrade('terminal', `/v1/sandboxes/${sid}/pty?cols=100&rows=30`, 101);
await upgrade('terminal, a token without the terminal scope', `/v1/sandboxes/${sid}/pty`, 403, { key: null, token });
await call('terminal, not an upgrade', 'GET', `/v1/sandboxes/${sid}/pty`, 426);

/* ---- snapshots, fork, pause and resume ---- */
const snap = (await call('snapshot', 'POST', `/v1/sandboxes/${sid}/snapshots`, 201, { body: { expires_in_ms: 600000 } })).json;
await call('snapshot, keep_last out of range', 'POST', `/v1/sandboxes/${sid}/snapshots`, 422, { body: { keep_last: 0 } });
await call('snapshots', 'GET', '/v1/snapshots', 200);
await call('snapshot get', 'GET', `/v1/snapshots/${snap?.id}`, 200);
await call("snapshot get, another key's", 'GET', `/v1/snapshots/${snap?.id}`, 404, { key: OTHER });
await call('fork, over the per-key quota', 'POST', `/v1/sandboxes/${sid}/fork`, 429, { body: { count: 1 } });
if (second) await call('stop the second, for the fork', 'DELETE', `/v1/sandboxes/${second}`, 200);
const forked = (await call('fork', 'POST', `/v1/sandboxes/${sid}/fork`, 201, { body: { count: 1 } })).json;
await call('pause', 'POST', `/v1/sandboxes/${sid}/pause`, 200);
await call('run, sandbox paused', 'POST', C, 409, { body: { cmd: 'true' } });
await call('resume', 'POST', `/v1/sandboxes/${sid}/resume`, 200);
for (const s of forked?.sandboxes ?? []) await call('stop the fork', 'DELETE', `/v1/sandboxes/${s.id}`, 200);
/* a persistent sandbox: kept by POST .../stop, resumed by a command (X-Sandbox-Resumed) */
const kept = (await call('create persistent', 'POST', '/v1/sandboxes', 201, { body: { persistent: true, snapshot_keep_last: 3 } })).json;
await call('stop, keeping a persistent one', 'POST', `/v1/sandboxes/${kept?.id}/stop`, 200);
await call('run, resuming a kept one', 'POST', `/v1/sandboxes/${kept?.id}/commands`, 200, { body: { cmd: 'true' } });
await call('stop, unknown id (keep)', 'POST', '/v1/sandboxes/sbx_nope_aaaaaaaaaaaaaaaaaaaaaaaa/stop', 404);
await call('stop a persistent one for good', 'DELETE', `/v1/sandboxes/${kept?.id}`, 200);
for (const x of [snap?.id, forked?.snapshot?.id]) await call('snapshot delete', 'DELETE', `/v1/snapshots/${x}`, 200);
await call('snapshot delete, gone', 'DELETE', `/v1/snapshots/${snap?.id}`, 404);

/* ---- a stopped sandbox ---- */
await call('stop', 'DELETE', `/v1/sandboxes/${sid}`, 200);
await call('stop again', 'DELETE', `/v1/sandboxes/${sid}`, 200);
await call('stop, unknown id', 'DELETE', '/v1/sandboxes/sbx_nope_aaaaaaaaaaaaaaaaaaaaaaaa', 404);
await call('get, stopped', 'GET', `/v1/sandboxes/${sid}`, 200);
await call('run, sandbox stopped', 'POST', C, 409, { body: { cmd: 'true' } });
await call('extend, sandbox stopped', 'POST', `/v1/sandboxes/${sid}/extend`, 409, { body: { duration_ms: 1000 } });
await call('list a directory, sandbox stopped', 'GET', `${F}/list?path=/tmp`, 409);
if (second) await call('stop the second', 'DELETE', `/v1/sandboxes/${second}`, 200);

/* ---- what the calls covered ---- */
for (const [p, item] of Object.entries(doc.paths))
  for (const [m, op] of Object.entries(item)) {
    if (!op?.responses) continue;
    const ok = Object.keys(op.responses).filter((s) => s < '300');
    const hit = ok.some((s) => seen.has(`${m.toUpperCase()} ${p} ${s}`));
    if (!hit) skip(`coverage: ${m.toUpperCase()} ${p}`, 'no call of this suite got a success answer from it');
  }
finish();
