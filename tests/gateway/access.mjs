// Query arguments and stream-token scopes of the real gateway, against a
// real runner and sandbox, with the `ws` client from npm.
// usage: node access.mjs BASE_URL KEY LONG_KEY
//   LONG_KEY: a key of the longest length a key may have (255 bytes)
// Prints PASS/FAIL lines and "N passed, N failed".
//
// query-args: every argument of every endpoint at its longest (accepted)
// and one byte longer (refused 422 naming it, before anything is done).
// token-scope: a stream token opens only what its scopes name.
import WebSocket from 'ws';
import { result, finish } from '../lib/results.mjs';

const [BASE, KEY, LONG_KEY] = process.argv.slice(2);
const WSBASE = BASE.replace(/^http/, 'ws');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function api(method, path, body, { key = KEY, raw } = {}) {
  const headers = { Authorization: `Bearer ${key}` };
  if (body !== undefined && raw === undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(BASE + path, {
      method, headers, body: raw !== undefined ? raw : body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20000),
    });
  } catch (e) {
    return { status: 0, json: null, text: String(e.cause || e) };   // no answer at all
  }
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, json, text };
}

// A WebSocket to path: resolves with its HTTP refusal status or its close
// code, the text messages and the binary bytes (tag byte kept).
function socket(path, { onOpen } = {}) {
  const ws = new WebSocket(WSBASE + path);
  const s = { ws, status: null, code: null, texts: [], bin: Buffer.alloc(0), body: '', opened: false };
  s.done = new Promise((resolve) => {
    ws.on('open', () => {
      s.opened = true;
      if (onOpen) onOpen(ws, s);
    });
    ws.on('message', (d, isBin) => {
      if (isBin) s.bin = Buffer.concat([s.bin, d]);
      else s.texts.push(JSON.parse(d.toString()));
    });
    ws.on('unexpected-response', (req, res) => {
      s.status = res.statusCode;
      res.on('data', (c) => { s.body += c; });
      res.on('end', () => resolve(s));
    });
    ws.on('close', (code) => { s.code = code; resolve(s); });
    ws.on('error', () => resolve(s));
    // a session that should have been refused and was not: end it
    const t = setTimeout(() => ws.terminate(), 15000);
    ws.on('close', () => clearTimeout(t));
  });
  return s;
}

async function run(sid, cmd, args = []) {
  const r = await api('POST', `/v1/sandboxes/${sid}/commands`, { cmd, args, detached: true });
  if (r.status !== 201) throw new Error(`exec ${cmd}: ${r.status} ${r.text}`);
  return r.json.id;
}

async function sh(sid, script) {
  const r = await api('POST', `/v1/sandboxes/${sid}/commands`, { cmd: 'sh', args: ['-c', script] });
  return r.json ? r.json.stdout : r.text;
}

const says = (r, arg) => r.status === 422 && r.json?.error?.code === 'invalid' && r.json.error.message.includes(arg);
const zeros = (n) => '0'.repeat(n);
// An absolute path of exactly n bytes, in components a file system takes.
function longPath(n) {
  let p = '/tmp';
  while (p.length < n) p += '/' + 'd'.repeat(Math.min(200, n - p.length - 1));
  return p;
}

async function queryArgs(sid) {
  const f = `/v1/sandboxes/${sid}/files`;
  // the audit's case: a path over 16 bytes and mode=0600
  {
    const name = 'home-file-with-a-name-longer-than-sixteen-bytes.txt';
    const put = await api('PUT', `${f}?path=${name}&mode=0600`, undefined, { raw: 'secret' });
    const mode = await sh(sid, `stat -c %a ${name}`);
    result('query-args: PUT path over 16 bytes with mode=0600 writes the file 0600',
      put.status === 200 && mode.trim() === '600', `${put.status} ${put.text} mode ${mode}`);
    const mode8 = await api('PUT', `${f}?path=${name}2&mode=${zeros(5)}640`, undefined, { raw: 'x' });
    const mode9 = await api('PUT', `${f}?path=${name}3&mode=${zeros(6)}640`, undefined, { raw: 'x' });
    const left = await sh(sid, `stat -c %a ${name}2; ls ${name}3 2>&1 >/dev/null | wc -l`);
    result('query-args: mode at 8 bytes accepted (written 0640), 9 bytes 422 naming mode, no file',
      mode8.status === 200 && says(mode9, 'mode') && left.trim() === '640\n1', `${mode8.status} ${mode9.text} ${left}`);
    const bad = await Promise.all(['mode=0800', 'mode=-1', 'mode=%2B644', 'mode=', 'mode=010000'].map(
      (q) => api('PUT', `${f}?path=${name}4&${q}`, undefined, { raw: 'x' })));
    result('query-args: mode not octal, signed, empty or over 07777: 422',
      bad.every((r) => r.status === 422 && /mode/.test(r.text)), bad.map((r) => r.status).join(' '));
    const twice = await api('PUT', `${f}?path=${name}4&mode=0600&mode=0644`, undefined, { raw: 'x' });
    const typo = await api('PUT', `${f}?path=${name}4&mdoe=0600`, undefined, { raw: 'x' });
    const none = await sh(sid, `ls ${name}4 2>&1 >/dev/null | wc -l`);
    result('query-args: an argument given twice, or unknown, is 422 naming it and writes nothing',
      says(twice, 'mode') && says(typo, 'mdoe') && none.trim() === '1', `${twice.text} ${typo.text} ${none}`);
  }
  // path: 4095 bytes reach the agent (no such file: 404), 4096 are refused
  for (const [what, path] of [['GET files', f], ['files/list', `${f}/list`]]) {
    const ok = await api('GET', `${path}?path=${longPath(4095)}`);
    const over = await api('GET', `${path}?path=${longPath(4096)}`);
    result(`query-args: ${what} path at 4095 bytes reaches the sandbox (404), 4096 bytes 422 naming path`,
      ok.status === 404 && says(over, 'path'), `${ok.status} ${ok.text.slice(0, 100)} / ${over.status} ${over.text.slice(0, 100)}`);
  }
  const putOver = await api('PUT', `${f}?path=${longPath(4096)}`, undefined, { raw: 'x' });
  result('query-args: PUT path at 4096 bytes 422 naming path', says(putOver, 'path'), putOver.text);

  const cid = await run(sid, 'sh', ['-c', 'echo hello']);
  await api('GET', `/v1/sandboxes/${sid}/commands/${cid}?wait=1`);
  const c = `/v1/sandboxes/${sid}/commands/${cid}`;
  {
    const ok = await api('GET', `${c}?wait=false`);
    const over = await api('GET', `${c}?wait=false0`);
    const bad = await api('GET', `${c}?wait=yes`);
    result('query-args: wait at 5 bytes accepted, 6 bytes 422 naming wait, a non-boolean 422',
      ok.status === 200 && says(over, 'wait') && says(bad, 'wait'), `${ok.status} ${over.text} ${bad.text}`);
  }
  {
    const ok = await api('GET', `${c}/logs?since=${zeros(20)}&follow=false&encoding=base64`);
    const since = await api('GET', `${c}/logs?since=${zeros(21)}`);
    const follow = await api('GET', `${c}/logs?follow=false0`);
    const enc = await api('GET', `${c}/logs?encoding=base64x`);
    const line = ok.text.split('\n')[0];
    result('query-args: logs since 20 / follow 5 / encoding 6 bytes accepted, one more 422 naming each',
      ok.status === 200 && line.includes(Buffer.from('hello\n').toString('base64')) &&
      says(since, 'since') && says(follow, 'follow') && says(enc, 'encoding'),
      `${ok.status} ${line} ${since.text} ${follow.text} ${enc.text}`);
  }
  {
    const cat = await run(sid, 'cat');
    const s = `/v1/sandboxes/${sid}/commands/${cat}/stdin`;
    const ok = await api('POST', `${s}?eof=false`, undefined, { raw: 'abc' });
    const over = await api('POST', `${s}?eof=false0`, undefined, { raw: 'def' });
    const end = await api('POST', `${s}?eof=1`, undefined, { raw: 'ghi' });
    await api('GET', `/v1/sandboxes/${sid}/commands/${cat}?wait=1`);
    const out = await api('GET', `/v1/sandboxes/${sid}/commands/${cat}/logs`);
    const data = out.text.trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.stream).map((l) => l.data).join('');
    result('query-args: stdin eof at 5 bytes accepted (and answered without EOF), 6 bytes 422 naming eof and its body not sent',
      ok.status === 200 && says(over, 'eof') && end.status === 200 && data === 'abcghi', `${ok.status} ${over.text} ${data}`);
  }
  // WebSocket streams: since
  {
    const ok = await socket(`${c}/stream?since=${zeros(20)}&access_token=${KEY}`).done;
    const over = await socket(`${c}/stream?since=${zeros(21)}&access_token=${KEY}`).done;
    result('query-args: stream since at 20 bytes accepted, 21 bytes close 4422 naming since',
      ok.code === 1000 && ok.bin.subarray(1).toString() === 'hello\n' && over.code === 4422 &&
      over.texts.some((t) => t.error?.message.includes('since')), JSON.stringify([ok.code, over.code, over.texts]));
    const unknown = await socket(`${c}/stream?sinse=0&access_token=${KEY}`).done;
    result('query-args: an unknown stream argument is refused 422 before the upgrade',
      unknown.status === 422 && unknown.body.includes('unknown query argument'), `${unknown.status} ${unknown.body}`);
  }
  // access_token: a key of 255 bytes opens; 256 bytes are refused, not cut
  {
    const ok = await socket(`${c}/stream?access_token=${LONG_KEY}`).done;
    const over = await socket(`${c}/stream?access_token=${LONG_KEY}x`).done;
    // the long key's own sandbox is another one: 404 says the key was read whole and matched
    result('query-args: access_token at 255 bytes read whole (a key), 256 bytes 422 naming access_token',
      ok.status === 404 && over.status === 422 && over.body.includes('access_token'), `${ok.status} ${ok.code} ${over.status} ${over.body}`);
  }
  // terminals: cols, rows, cmd
  {
    const p = `/v1/sandboxes/${sid}/pty`;
    const cmd255 = '/'.repeat(248) + 'bin/cat';
    // open until the terminal has echoed the line (15 s at most: the
    // socket's own limit), not a fixed time a loaded machine can miss
    const ok = socket(`${p}?cols=${zeros(18)}77&rows=${zeros(18)}33&cmd=${cmd255}&access_token=${KEY}`, {
      onOpen: (ws, s) => {
        ws.send(Buffer.from('stty size </dev/tty >/dev/tty 2>&1 || true\n'));
        const t = setInterval(() => {
          if (s.bin.includes('stty size')) { clearInterval(t); ws.close(); }
        }, 20);
        ws.on('close', () => clearInterval(t));
      },
    });
    const okRes = await ok.done;
    const o1 = await socket(`${p}?cols=${zeros(21)}&access_token=${KEY}`).done;
    const o2 = await socket(`${p}?rows=${zeros(21)}&access_token=${KEY}`).done;
    const o3 = await socket(`${p}?cmd=${cmd255}x&access_token=${KEY}`).done;
    const names = [[o1, 'cols'], [o2, 'rows'], [o3, 'cmd']];
    result('query-args: pty cols/rows 20 bytes and cmd 255 bytes accepted, one more close 4422 naming each',
      okRes.opened && okRes.code !== 4422 && okRes.bin.toString().includes('stty size') &&
      names.every(([s, n]) => s.code === 4422 && s.texts.some((t) => t.error?.message.includes(n))),
      JSON.stringify([okRes.code, okRes.bin.toString().slice(0, 80), names.map(([s]) => [s.status, s.code, s.texts])]));
  }
}

async function tokenScope(sid) {
  const tok = async (body) => api('POST', `/v1/sandboxes/${sid}/token`, body);
  const read = await tok({});
  const rw = await tok({ scopes: ['read', 'write'] });
  const term = await tok({ scopes: ['terminal'] });
  result('token-scope: a token is read-only unless it asks; the answer says its scopes',
    read.status === 201 && JSON.stringify(read.json.scopes) === '["read"]' &&
    JSON.stringify(rw.json?.scopes) === '["read","write"]' && JSON.stringify(term.json?.scopes) === '["terminal"]',
    `${read.text} ${rw.text} ${term.text}`);
  const badScope = await tok({ scopes: ['admin'] });
  const notArray = await tok({ scopes: 'read' });
  result('token-scope: an unknown scope or a non-array is 422', badScope.status === 422 && notArray.status === 422,
    `${badScope.status} ${notArray.status}`);
  const p = `/v1/sandboxes/${sid}/pty`;
  const ptyRead = await socket(`${p}?access_token=${read.json.token}`).done;
  const ptyRw = await socket(`${p}?access_token=${rw.json.token}`).done;
  result('token-scope: a read (or read+write) token is refused on /pty with 403 before the upgrade',
    ptyRead.status === 403 && ptyRw.status === 403 && /terminal scope/.test(ptyRead.body),
    `${ptyRead.status} ${ptyRead.code} ${ptyRw.status} ${ptyRead.body}`);
  // a terminal token opens /pty, and the terminal works
  {
    let screen = '';
    const s = socket(`${p}?access_token=${term.json.token}`, {
      onOpen: (ws) => {
        ws.on('message', (d, bin) => { if (bin) screen += d.toString(); });
        ws.send(Buffer.from('echo $((6*7))\n'));
      },
    });
    for (let i = 0; i < 750 && !/[\r\n]42\r\n/.test(screen) && s.code === null; i++) await sleep(20);
    s.ws.close();
    await s.done;
    result('token-scope: a terminal token opens /pty and types into it', /[\r\n]42\r\n/.test(screen),
      `${s.status} ${s.code} ${JSON.stringify(screen.slice(-200))}`);
    const stream = await socket(`/v1/sandboxes/${sid}/commands/${await run(sid, 'true')}/stream?access_token=${term.json.token}`).done;
    result('token-scope: a terminal-only token does not open a stream (403)', stream.status === 403, `${stream.status} ${stream.code}`);
  }
  // a read token watches a command, but cannot send it stdin or kill it
  {
    const cat = await run(sid, 'cat');
    const st = `/v1/sandboxes/${sid}/commands/${cat}/stream?access_token=`;
    const stdin = await socket(st + read.json.token, { onOpen: (ws) => ws.send(Buffer.from('\x00typed\n')) }).done;
    const kill = await socket(st + read.json.token, { onOpen: (ws) => ws.send(JSON.stringify({ type: 'kill', signal: 'SIGKILL' })) }).done;
    const eof = await socket(st + read.json.token, { onOpen: (ws) => ws.send(JSON.stringify({ type: 'stdin_eof' })) }).done;
    await sleep(300);
    const status = await api('GET', `/v1/sandboxes/${sid}/commands/${cat}`);
    const logs = await api('GET', `/v1/sandboxes/${sid}/commands/${cat}/logs`);
    const forbidden = (s) => s.code === 4403 && s.texts.some((t) => t.error?.code === 'forbidden' && /write scope/.test(t.error.message));
    result('token-scope: a read token sending stdin, kill or stdin_eof gets close 4403; the command is untouched',
      forbidden(stdin) && forbidden(kill) && forbidden(eof) && status.json?.status === 'running' && !logs.text.includes('typed'),
      JSON.stringify([stdin.code, kill.code, eof.code, stdin.texts, status.json?.status, logs.text.slice(0, 100)]));
    // read+write: stdin reaches it, and kill works
    const typed = await socket(st + rw.json.token, {
      onOpen: (ws, s) => {
        ws.send(Buffer.from('\x00typed\n'));
        const t = setInterval(() => {
          if (s.bin.includes('typed')) { clearInterval(t); ws.send(JSON.stringify({ type: 'kill', signal: 'SIGKILL' })); }
        }, 20);
        setTimeout(() => clearInterval(t), 8000);
      },
    }).done;
    const after = await api('GET', `/v1/sandboxes/${sid}/commands/${cat}?wait=1`);
    result('token-scope: a read+write token sends stdin and kills',
      typed.bin.includes('typed') && after.json?.signal === 'SIGKILL', `${typed.code} ${typed.bin} ${after.text}`);
  }
  // the scope is signed: a read token edited to claim every scope is refused
  {
    const forged = read.json.token.replace(/^(st\.\d+\.\d+\.)1\./, '$17.');
    const s = await socket(`${p}?access_token=${forged}`).done;
    result('token-scope: a token whose scope was edited is refused (401)', forged !== read.json.token && s.status === 401,
      `${forged} ${s.status}`);
  }
  // a token is for WebSockets only: REST refuses it whatever its scope
  const rest = await api('POST', `/v1/sandboxes/${sid}/commands`, { cmd: 'true' }, { key: rw.json.token });
  result('token-scope: a token is refused on REST (401)', rest.status === 401, `${rest.status}`);
}

async function main() {
  const c = await api('POST', '/v1/sandboxes', { timeout_ms: 600000 });
  if (c.status !== 201) { result('create sandbox', false, c.text); return; }
  const sid = c.json.id;
  try {
    await queryArgs(sid);
    await tokenScope(sid);
  } finally {
    await api('DELETE', `/v1/sandboxes/${sid}`);
  }
}

main().catch((e) => { result('access suite ran to the end', false, e.stack); })
  .finally(() => finish());
