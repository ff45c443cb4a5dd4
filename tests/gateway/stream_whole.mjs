// One large stream, whole and in order, through a gateway (plain or TLS,
// either event loop): the client stops reading for a while after the
// first message, so the gateway's socket fills and output waits in its
// queue and in lws's buffer, then reads to the end. The gateway writes a
// stream's output as it reads it from the agent and from WRITEABLE when
// the socket was full (gateway/stream/gw_ws.c): every byte must arrive
// once, in order, then the exit, then close 1000.
// usage: node stream_whole.mjs BASE_URL KEY NAME
// Prints PASS/FAIL lines and "N passed, N failed, N skipped".
import WebSocket from 'ws';
import crypto from 'node:crypto';
import { resultWith, finish } from '../lib/results.mjs';

const [BASE, KEY, NAME] = process.argv.slice(2);
const result = resultWith(`${NAME}: `);
const WSBASE = BASE.replace(/^http/, 'ws');
// `seq 1 COUNT`: about 10 MiB, within the agent's retention (16 MiB):
// whatever the stall, nothing may be cut
const COUNT = 1500000;
const HOLD_MS = 1500;    // the client reads nothing for this long

// TLS gateways here have a self-signed certificate
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';

async function api(method, path, body) {
  const res = await fetch(BASE + path, {
    method, headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, json, text };
}

function expected() {
  const h = crypto.createHash('sha256');
  let n = 0, part = [];
  for (let i = 1; i <= COUNT; i++) {
    part.push(i);
    if (part.length === 100000 || i === COUNT) {
      const s = part.join('\n') + '\n';
      h.update(s);
      n += s.length;
      part = [];
    }
  }
  return { sha: h.digest('hex'), bytes: n };
}

async function main() {
  const c = await api('POST', '/v1/sandboxes', { timeout_ms: 600000 });
  if (c.status !== 201) { result('create sandbox', false, c.text); return; }
  const sid = c.json.id;
  const r = await api('POST', `/v1/sandboxes/${sid}/commands`,
    { cmd: 'sh', args: ['-c', `read go; seq 1 ${COUNT}`], detached: true });
  if (r.status !== 201) { result('start the command', false, r.text); return; }
  const url = `${WSBASE}/v1/sandboxes/${sid}/commands/${r.json.id}/stream?access_token=${KEY}`;
  const ws = new WebSocket(url);
  const h = crypto.createHash('sha256');
  const s = { bytes: 0, tags: new Set(), texts: [], afterExit: 0, code: null, maxMsg: 0 };
  let held = false;
  await new Promise((resolve) => {
    ws.on('open', () => ws.send(Buffer.from('\0go\n')));
    ws.on('message', (d, bin) => {
      if (!bin) { s.texts.push(JSON.parse(d.toString())); return; }
      if (s.texts.some((t) => t.type === 'exit')) s.afterExit++;
      s.tags.add(d[0]);
      s.bytes += d.length - 1;
      s.maxMsg = Math.max(s.maxMsg, d.length - 1);
      h.update(d.subarray(1));
      if (!held) {
        held = true;
        ws._socket.pause();
        setTimeout(() => ws._socket.resume(), HOLD_MS);
      }
    });
    ws.on('close', (code) => { s.code = code; resolve(); });
    // a stream that stops short is cut here, not left to hang the suite
    setTimeout(() => ws.terminate(), 120000).unref();
    ws.on('error', () => resolve());
  });
  const want = expected();
  const exit = s.texts.find((t) => t.type === 'exit');
  result(`${s.bytes} bytes of seq 1 ${COUNT} arrive whole and in order after a ${HOLD_MS} ms stall`,
    s.bytes === want.bytes && h.digest('hex') === want.sha,
    `${s.bytes} bytes, want ${want.bytes}; texts ${JSON.stringify(s.texts).slice(0, 300)}`);
  result('all of it tagged stdout, messages of at most 64 KiB',
    s.tags.size === 1 && s.tags.has(1) && s.maxMsg <= 65536, `tags ${[...s.tags]} max ${s.maxMsg}`);
  result('the exit (code 0) after the last byte, nothing truncated, then close 1000',
    exit?.exit_code === 0 && s.afterExit === 0 && !s.texts.some((t) => t.type === 'truncated') &&
    s.code === 1000, JSON.stringify({ texts: s.texts, afterExit: s.afterExit, code: s.code }));
  await api('DELETE', `/v1/sandboxes/${sid}`);
}

main().catch((e) => { result('ran to the end', false, e.stack); }).finally(() => finish());
