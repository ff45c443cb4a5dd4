// keepalive: quiet streams through a reverse proxy. nginx with
// proxy_read_timeout 5s stands in front of two gateways: A pings every 2 s
// (--keepalive-s 2), B never does (--keepalive-s 0, the control that shows
// the checks can fail). A command that prints nothing for 12 s must reach
// its client through nginx A, and is cut by nginx B. A client that never
// answers pings is closed by gateway A. All cases run at once.
// usage: node keepalive.mjs NGINX_A NGINX_B GW_A GW_B KEY
// Prints PASS/FAIL lines and "N passed, N failed".
import WebSocket from 'ws';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { resultWith, finish } from '../lib/results.mjs';
const result = resultWith('keepalive: ');

const [NGA, NGB, GWA, GWB, KEY] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const QUIET = ['-c', 'echo early; sleep 12; echo late'];

async function api(base, method, path, body) {
  const res = await fetch(base + path, {
    method, headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

const quietCommand = async (base, sid) =>
  (await api(base, 'POST', `/v1/sandboxes/${sid}/commands`, { cmd: 'sh', args: QUIET, detached: true })).id;

// A WebSocket stream through base: its stdout, exit message and close code.
function stream(base, sid, cid) {
  const url = `${base.replace(/^http/, 'ws')}/v1/sandboxes/${sid}/commands/${cid}/stream?access_token=${KEY}`;
  return new Promise((resolve) => {
    const s = { out: '', exit: null, code: null, pings: 0 };
    const ws = new WebSocket(url);
    ws.on('ping', () => s.pings++);   // ws answers with a pong itself
    ws.on('message', (d, bin) => {
      if (bin) s.out += d.subarray(1).toString();
      else if (JSON.parse(d.toString()).type === 'exit') s.exit = JSON.parse(d.toString());
    });
    ws.on('close', (code) => { s.code = code; resolve(s); });
    ws.on('error', (e) => { s.error = String(e); });
  });
}

// GET .../logs?follow=1 through base: the lines it got (with the time each
// arrived), and whether the body ended cleanly.
async function follow(base, sid, cid) {
  const res = await fetch(`${base}/v1/sandboxes/${sid}/commands/${cid}/logs?follow=1`,
    { headers: { Authorization: `Bearer ${KEY}` } });
  let text = '', clean = true;
  const at = [];
  try {
    for await (const chunk of res.body) {
      text += Buffer.from(chunk).toString();
      while (at.length < text.split('\n').length - 1) at.push(Date.now());
    }
  } catch { clean = false; }   // nginx cut the response
  const lines = text.split('\n').filter(Boolean).map((l, i) => {
    try { return Object.defineProperty(JSON.parse(l), 'at', { value: at[i] }); } catch { return { bad: l }; }
  });
  return { lines, clean, text };
}

// GET .../commands/{cid}?wait=1 straight to a gateway
async function waitFor(base, sid, cid) {
  try {
    const res = await fetch(`${base}/v1/sandboxes/${sid}/commands/${cid}?wait=1`,
      { headers: { Authorization: `Bearer ${KEY}` } });
    return { status: res.status, body: await res.text() };
  } catch (e) { return { status: 0, body: String(e) }; }
}

// The gateway side of a connection from local port lport to port gport.
const established = (gport, lport) =>
  execFileSync('ss', ['-tnH', 'state', 'established', `( sport = :${gport} and dport = :${lport} )`]).toString().trim() !== '';

// A raw client: completes the WebSocket handshake, then reads nothing and
// so answers no ping. Resolves with the seconds from its request until the
// gateway side of its connection was no longer established (null: still
// there at maxS), and the bytes it then finds waiting (the ping, the
// close). Counted from the request, which the gateway's timer cannot
// precede: the 101 reaches a busy client late, after the timer started.
function silentClient(base, sid, cid, maxS) {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname);
    let head = Buffer.alloc(0), t0;
    sock.on('error', reject);
    sock.on('connect', () => {
      t0 = Date.now();
      sock.write(
        `GET /v1/sandboxes/${sid}/commands/${cid}/stream?access_token=${KEY} HTTP/1.1\r\n` +
        `Host: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
    });
    const onData = async (d) => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      sock.off('data', onData);
      sock.pause();                       // from now on, read nothing
      if (!head.toString().startsWith('HTTP/1.1 101')) return reject(new Error(head.toString()));
      let rest = head.subarray(end + 4);
      const lport = sock.localPort;
      let gone = null;
      while (Date.now() - t0 < maxS * 1000) {
        if (!established(u.port, lport)) { gone = (Date.now() - t0) / 1000; break; }
        await sleep(250);
      }
      if (gone === null) { sock.destroy(); return resolve({ gone, rest }); }
      sock.on('data', (x) => { rest = Buffer.concat([rest, x]); });
      sock.on('end', () => { sock.destroy(); resolve({ gone, rest }); });
      sock.resume();
    };
    sock.on('data', onData);
  });
}

const metric = async (base, name) =>
  Number((await (await fetch(`${base}/metrics`, { headers: { authorization: "Bearer metrics-key" } })).text()).match(new RegExp(`^${name} (\\S+)$`, 'm'))?.[1]);

try {
  const sa = (await api(GWA, 'POST', '/v1/sandboxes', { timeout_ms: 120000 })).id;
  const sb = (await api(GWB, 'POST', '/v1/sandboxes', { timeout_ms: 120000 })).id;
  const [ca1, ca2, cb1, cb2, cb3, cb4, sleeper, sleeperB] = await Promise.all([
    quietCommand(GWA, sa), quietCommand(GWA, sa), quietCommand(GWB, sb), quietCommand(GWB, sb),
    quietCommand(GWB, sb), quietCommand(GWB, sb),
    api(GWA, 'POST', `/v1/sandboxes/${sa}/commands`, { cmd: 'sleep', args: ['60'], detached: true }).then((c) => c.id),
    api(GWB, 'POST', `/v1/sandboxes/${sb}/commands`, { cmd: 'sleep', args: ['60'], detached: true }).then((c) => c.id),
  ]);
  const [wa, la, wb, lb, ld, wt, silent, silentB] = await Promise.all([
    stream(NGA, sa, ca1), follow(NGA, sa, ca2), stream(NGB, sb, cb1), follow(NGB, sb, cb2),
    // straight to gateway B: it must not cut long GETs itself
    follow(GWB, sb, cb3), waitFor(GWB, sb, cb4),
    silentClient(GWA, sa, sleeper, 20),
    // the control: without pings nothing closes it (checked for as long
    // as gateway A's case may take at most)
    silentClient(GWB, sb, sleeperB, 8),
  ]);

  result('a WebSocket stream quiet for 12 s survives nginx (timeout 5 s) with 2 s pings: the late line and the exit',
    wa.out === 'early\nlate\n' && wa.exit?.exit_code === 0 && wa.code === 1000 && wa.pings >= 3,
    JSON.stringify(wa));
  const data = la.lines.map((l) => l.data ?? '').join('');
  const kas = la.lines.filter((l) => l.keepalive === true);
  result('an ndjson follow quiet for 12 s survives nginx with keepalive lines: all output and the exit line',
    la.clean && data === 'early\nlate\n' && la.lines.at(-1)?.exit_code === 0 && kas.length >= 3,
    la.text);
  // the early line comes 12 s before the late one; through nginx it must
  // not wait for it (X-Accel-Buffering: no). 4 s: a generous margin.
  const early = la.lines.find((l) => l.data === 'early\n'), late = la.lines.find((l) => l.data === 'late\n');
  result('an ndjson follow through nginx is live: the early line comes long before the late one',
    early && late && late.at - early.at >= 4000, `${late?.at - early?.at} ms apart`);
  result('keepalive lines are exactly {"keepalive":true} and only those are added',
    la.lines.every((l) => l.stream === 'stdout' || 'exit_code' in l ||
      JSON.stringify(l) === '{"keepalive":true}'), la.text);
  result('without pings the same WebSocket stream is cut by nginx (no late line, no exit)',
    !wb.out.includes('late') && wb.exit === null && wb.code !== 1000, JSON.stringify(wb));
  result('without keepalive lines the same ndjson follow is cut by nginx (no exit line)',
    !lb.lines.some((l) => 'exit_code' in l) && !lb.text.includes('late'), lb.text);
  result('a followed ndjson quiet for 12 s is not cut by the gateway itself (keepalive off)',
    ld.clean && ld.lines.map((l) => l.data ?? '').join('') === 'early\nlate\n' &&
      ld.lines.at(-1)?.exit_code === 0 && !ld.lines.some((l) => l.keepalive), ld.text);
  result('GET ?wait=1 of a command running 12 s is answered at its end',
    wt.status === 200 && JSON.parse(wt.body).exit_code === 0, `${wt.status} ${wt.body}`);
  // Gateway A pings at 2 s and hangs up at 4 s without a pong; 20 s is
  // a generous bound for a loaded machine, the lower one is its timer.
  result('a client that answers no ping is closed by the gateway after the pong timeout',
    silent.gone !== null && silent.gone >= 3.5 && silent.rest.includes(Buffer.from([0x89, 0x00])),
    `closed after ${silent.gone} s, got ${silent.rest.toString('hex')}`);
  result('control: without pings that client stays connected', silentB.gone === null, `closed after ${silentB.gone} s`);
  // the gateway counts a WebSocket gone when lws has closed it, which may
  // be after the client saw its close (lws waits for the peer's FIN):
  // asked until 0 (15 s at most)
  let open = NaN;
  for (const t0 = Date.now(); Date.now() - t0 < 15000; await sleep(100)) {
    open = await metric(GWA, 'sandbox_gateway_websockets_open');
    if (open === 0) break;
  }
  result('gateway A holds no WebSocket once they ended', open === 0, `${open} open`);
  await Promise.all([api(GWA, 'DELETE', `/v1/sandboxes/${sa}`), api(GWB, 'DELETE', `/v1/sandboxes/${sb}`)]);
} catch (e) {
  result('suite ran', false, String(e?.stack || e));
}
finish({ exit: false });
