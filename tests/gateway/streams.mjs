// WebSocket streams, terminals and ndjson logs of the real gateway, with
// the `ws` client from npm, against a real runner and sandbox.
// usage: node streams.mjs BASE_URL KEY OTHER_KEY GATEWAY_PID
// Prints PASS/FAIL lines and "N passed, N failed".
import WebSocket from 'ws';
import fs from 'node:fs';
import { result, finish } from '../lib/results.mjs';

const [BASE, KEY, KEY2, GWPID] = process.argv.slice(2);
const WSBASE = BASE.replace(/^http/, 'ws');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function api(method, path, body, key = KEY) {
  const res = await fetch(BASE + path, {
    method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, json, text };
}

async function run(sid, cmd, args = [], extra = {}) {
  const r = await api('POST', `/v1/sandboxes/${sid}/commands`, { cmd, args, detached: true, ...extra });
  if (r.status !== 201) throw new Error(`exec ${cmd}: ${r.status} ${r.text}`);
  return r.json.id;
}

// One stream subscription: collects binary chunks (with arrival times),
// text messages and the close code.
function subscribe(sid, cid, { since = 0, key = KEY, onOpen, onChunk, maxChunks } = {}) {
  const url = `${WSBASE}/v1/sandboxes/${sid}/commands/${cid}/stream?since=${since}&access_token=${key}`;
  const ws = new WebSocket(url);
  const s = { ws, chunks: [], texts: [], bytes: 0, code: null, status: null, t0: Date.now() };
  s.done = new Promise((resolve) => {
    ws.on('open', () => onOpen && onOpen(ws));
    ws.on('message', (d, bin) => {
      if (bin) {
        s.chunks.push({ tag: d[0], data: Buffer.from(d.subarray(1)), t: Date.now() });
        s.bytes += d.length - 1;
        if (onChunk) onChunk(s);
        if (maxChunks && s.chunks.length >= maxChunks) ws.terminate();
      } else {
        s.texts.push(JSON.parse(d.toString()));
      }
    });
    ws.on('unexpected-response', (req, res) => { s.status = res.statusCode; resolve(s); });
    ws.on('close', (code) => { s.code = code; resolve(s); });
    ws.on('error', () => resolve(s));
  });
  return s;
}
// Output in lockstep with its client: the command writes its next piece
// only once the client holds as many chunks as the piece's number (a file
// /tmp/NAME-N the client makes), so which bytes arrive as which message,
// and in which order, does not depend on how the machine schedules the
// agent and the client. After a minute without (the stream is broken) the
// client makes /tmp/NAME-all and the command runs to its end.
const stepWait = (name, n) => `while [ ! -e /tmp/${name}-${n} ] && [ ! -e /tmp/${name}-all ]; do sleep 0.05; done`;
function stepper(sid, name) {
  const touch = (what) => api('POST', `/v1/sandboxes/${sid}/commands`, { cmd: 'touch', args: [`/tmp/${name}-${what}`] })
    .catch(() => {});
  const fallback = setTimeout(() => touch('all'), 60000);
  return { onChunk: (s) => touch(s.chunks.length), done: () => clearTimeout(fallback) };
}
const joined = (s) => Buffer.concat(s.chunks.map((c) => c.data));
const exitOf = (s) => s.texts.find((t) => t.type === 'exit');

function gwRssKb() {
  try {
    const m = fs.readFileSync(`/proc/${GWPID}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}

async function full(sid, cid) {
  // the exact bytes, from the ndjson logs in base64
  const res = await fetch(`${BASE}/v1/sandboxes/${sid}/commands/${cid}/logs?encoding=base64`,
    { headers: { Authorization: `Bearer ${KEY}` } });
  const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
  return Buffer.concat(lines.filter((l) => l.stream).map((l) => Buffer.from(l.data, 'base64')));
}

async function main() {
  const c = await api('POST', '/v1/sandboxes', { timeout_ms: 600000 });
  if (c.status !== 201) { result('create sandbox', false, c.text); return; }
  const sid = c.json.id;

  // 1. chunk by chunk: each line arrives as its own message while the
  //    command runs (the next line is written only once it has come)
  {
    const cid = await run(sid, 'sh', ['-c', `for i in 1 2 3 4; do echo line $i; ${stepWait('l', '$i')}; done; echo line 5`]);
    const step = stepper(sid, 'l');
    const s = await subscribe(sid, cid, { onChunk: step.onChunk }).done;
    step.done();
    const lines = s.chunks.map((x) => x.data.toString());
    result('each line arrives as its own message while the command runs',
      lines.join('|') === [1, 2, 3, 4, 5].map((i) => `line ${i}\n`).join('|') &&
      exitOf(s)?.exit_code === 0 && s.code === 1000,
      JSON.stringify({ lines, code: s.code, texts: s.texts }));
  }

  // 2. stdout and stderr tags, in order (each written once the one before
  //    has come: two pipes read by the agent have no order of their own)
  {
    const cid = await run(sid, 'sh', ['-c', `echo out; ${stepWait('t', 1)}; echo err >&2; ${stepWait('t', 2)}; echo out2; exit 7`]);
    const step = stepper(sid, 't');
    const s = await subscribe(sid, cid, { onChunk: step.onChunk }).done;
    step.done();
    const tags = s.chunks.map((x) => x.tag).join('');
    result('stdout and stderr tagged 1 and 2, in order, exit code 7',
      tags === '121' && joined(s).toString() === 'out\nerr\nout2\n' && exitOf(s)?.exit_code === 7,
      JSON.stringify({ tags, texts: s.texts }));
  }

  // 3. reconnect with since: no gap, no duplicate
  {
    const cid = await run(sid, 'sh', ['-c', 'i=0; while [ $i -lt 300 ]; do echo "line $i $(date +%N)"; i=$((i+1)); [ $((i % 30)) = 0 ] && sleep 0.05; done']);
    let got = Buffer.alloc(0), rounds = 0, last;
    for (;;) {
      const s = await subscribe(sid, cid, { since: got.length, maxChunks: 3 }).done;
      got = Buffer.concat([got, joined(s)]);
      rounds++;
      last = s;
      if (exitOf(s) || rounds > 500) break;
    }
    const want = await full(sid, cid);
    result(`reconnect with since (${rounds} connections): no gap, no duplicate`,
      rounds > 2 && got.equals(want) && want.length > 3000, `${got.length} vs ${want.length}`);
    const late = await subscribe(sid, cid, { since: want.length - 10 }).done;
    result('since near the end gives exactly the last bytes, then exit',
      joined(late).equals(want.subarray(want.length - 10)) && exitOf(late) && late.code === 1000);
    void last;
  }

  // 3b. large chunks of both streams: the agent's 64 KiB frames are cut by
  //     the gateway's reads and go on in pieces, messages join what queued
  //     of one stream; each stream's bytes are whole and in their order,
  //     and a subscriber from an offset inside a chunk gets the rest exactly
  {
    const prog = 'import sys\n' +
      'o = bytes(i * 7 % 251 for i in range(510000))\n' +
      'e = bytes(i * 13 % 241 for i in range(390000))\n' +
      'for k in range(6):\n' +
      '    sys.stdout.buffer.write(o[k * 85000:(k + 1) * 85000]); sys.stdout.flush()\n' +
      '    sys.stderr.buffer.write(e[k * 65000:(k + 1) * 65000]); sys.stderr.flush()\n';
    const wantOut = Buffer.from(Array.from({ length: 510000 }, (_, i) => i * 7 % 251));
    const wantErr = Buffer.from(Array.from({ length: 390000 }, (_, i) => i * 13 % 241));
    const cid = await run(sid, 'python3', ['-c', prog]);
    const s = await subscribe(sid, cid).done;
    const of = (x, tag) => Buffer.concat(x.chunks.filter((c) => c.tag === tag).map((c) => c.data));
    const tags = new Set(s.chunks.map((c) => c.tag));
    result('large stdout and stderr chunks: each stream whole and in order, messages of at most 64 KiB',
      of(s, 1).equals(wantOut) && of(s, 2).equals(wantErr) && tags.size === 2 &&
      s.chunks.every((c) => c.data.length <= 65536) && exitOf(s)?.exit_code === 0 && s.code === 1000,
      JSON.stringify({ out: of(s, 1).length, err: of(s, 2).length, tags: [...tags], texts: s.texts, code: s.code }));
    const all = joined(s);
    const mid = await subscribe(sid, cid, { since: 300001 }).done;
    result('since inside a large chunk: exactly the bytes from there, then the exit',
      joined(mid).equals(all.subarray(300001)) && exitOf(mid) && mid.code === 1000,
      `${joined(mid).length} vs ${all.length - 300001}`);
  }

  // 4. two subscribers receive identical bytes; a late one gets all of it
  {
    const cid = await run(sid, 'sh', ['-c', 'head -c 3000000 /dev/urandom | base64; echo tail >&2']);
    const [a, b] = await Promise.all([subscribe(sid, cid).done, subscribe(sid, cid).done]);
    const late = await subscribe(sid, cid).done;
    const want = await full(sid, cid);
    result('two subscribers get identical bytes',
      joined(a).equals(joined(b)) && joined(a).equals(want) && want.length > 4000000);
    result('a subscriber after the end gets all of it, then the exit',
      joined(late).equals(want) && exitOf(late)?.exit_code === 0);
  }

  // 5. closing the WebSocket never stops a detached command; stdin, kill
  {
    const cid = await run(sid, 'sh', ['-c', 'cat; echo done'], {});
    const s1 = subscribe(sid, cid, { onOpen: (ws) => { ws.send(Buffer.from([0, ...Buffer.from('abc\n')])); setTimeout(() => ws.close(), 300); } });
    await s1.done;
    const st = await api('GET', `/v1/sandboxes/${sid}/commands/${cid}`);
    result('closing a stream leaves the command running', st.json?.status === 'running', st.text);
    const s2 = await subscribe(sid, cid, { onOpen: (ws) => { ws.send(Buffer.from([0, ...Buffer.from('def\n')])); ws.send(JSON.stringify({ type: 'stdin_eof' })); } }).done;
    result('stdin (tag 0) and stdin_eof reach the command; replay from 0',
      joined(s2).toString() === 'abc\ndef\ndone\n' && exitOf(s2)?.exit_code === 0, joined(s2).toString());
    const k = await run(sid, 'sleep', ['60']);
    const s3 = await subscribe(sid, k, { onOpen: (ws) => ws.send(JSON.stringify({ type: 'kill', signal: 'SIGINT' })) }).done;
    result('kill message signals the command', exitOf(s3)?.signal === 'SIGINT', JSON.stringify(s3.texts));
  }

  // 6. bad input
  {
    const k = await run(sid, 'sleep', ['30']);
    const bad = async (send) => subscribe(sid, k, { onOpen: send }).done;
    let s = await bad((ws) => ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false }));
    result('invalid UTF-8 in a text message: close 1007', s.code === 1007, `code ${s.code}`);
    s = await bad((ws) => ws.send('{"type":"kill","signal":"' + 'x'.repeat(10000) + '"}'));
    result('oversized text message: close 1009', s.code === 1009, `code ${s.code}`);
    s = await bad((ws) => ws.send(Buffer.from([5, 1, 2, 3])));
    result('binary message with a tag other than 0: error and close 4400',
      s.code === 4400 && s.texts[0]?.error?.code === 'bad_request', `code ${s.code}`);
    s = await bad((ws) => { ws.send('not json'); ws.send('{"type":"nope"}'); ws.send('{"type":"kill","signal":5}'); setTimeout(() => ws.close(1000), 400); });
    result('bad JSON, unknown type, wrong field type: error messages, the session goes on',
      s.texts.length === 3 && s.texts.every((t) => t.type === 'error') && s.code === 1000,
      JSON.stringify(s.texts) + ` ${s.code}`);
    s = await subscribe(sid, k, { key: 'wrong' }).done;
    result('wrong access_token: 401 before the upgrade', s.status === 401, `${s.status}`);
    s = await subscribe(sid, k, { key: KEY2 }).done;
    result("another key's sandbox: 404 before the upgrade", s.status === 404, `${s.status}`);
    s = await subscribe(sid, 'cmd_nope').done;
    result('unknown command: error not_found, close 4404',
      s.code === 4404 && s.texts[0]?.error?.code === 'not_found', `${s.code}`);
    s = await subscribe(sid, k, { since: 'abc' }).done;
    result('since not a number: close 4422', s.code === 4422, `${s.code}`);
    const plain = await api('GET', `/v1/sandboxes/${sid}/commands/${k}/stream`);
    result('stream without Upgrade: 426', plain.status === 426, `${plain.status}`);
    await api('POST', `/v1/sandboxes/${sid}/commands/${k}/kill`, { signal: 'SIGKILL' });
  }

  // 6b. stream tokens: what a browser puts in the URL instead of the key
  {
    const k = await run(sid, 'sh', ['-c', 'echo tok']);
    const t = await api('POST', `/v1/sandboxes/${sid}/token`);
    const s1 = await subscribe(sid, k, { key: t.json?.token }).done;
    const other = await api('POST', '/v1/sandboxes', {});
    const s2 = await subscribe(other.json.id, 'cmd_x', { key: t.json?.token }).done;
    const rest = await api('GET', `/v1/sandboxes/${sid}`, undefined, t.json?.token);
    const forged = await subscribe(sid, k, { key: t.json?.token.replace(/.$/, (c) => (c === '0' ? '1' : '0')) }).done;
    result('stream token: opens its sandbox\'s streams only, not REST, not when altered',
      t.status === 201 && /^st\./.test(t.json.token) && t.json.expires_at > Date.now() &&
      joined(s1).toString() === 'tok\n' && s2.status === 401 && rest.status === 401 && forged.status === 401,
      JSON.stringify({ t: t.status, s1: joined(s1).toString(), s2: s2.status, rest: rest.status, forged: forged.status }));
    await api('DELETE', `/v1/sandboxes/${other.json.id}`);
  }

  // 7. ndjson logs
  {
    // the second chunk is written only once the test has the first ("as
    // they come" by order; a minute's fallback keeps a failing run from hanging)
    const cid = await run(sid, 'sh', ['-c', 'printf "a\\000b\\n"; while [ ! -e /tmp/go-logs ]; do sleep 0.05; done; printf "\\377x" >&2']);
    const go = () => api('POST', `/v1/sandboxes/${sid}/commands`, { cmd: 'touch', args: ['/tmp/go-logs'] });
    let fellBack = false;
    const fallback = setTimeout(() => { fellBack = true; go(); }, 60000);
    const res = await fetch(`${BASE}/v1/sandboxes/${sid}/commands/${cid}/logs?follow=1`, { headers: { Authorization: `Bearer ${KEY}` } });
    const reader = res.body.getReader();
    let text = '', firstEarly = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!text && !fellBack) { firstEarly = true; clearTimeout(fallback); await go(); }
      text += Buffer.from(value).toString();
    }
    clearTimeout(fallback);
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    result('logs?follow=1: ndjson chunks as they come, then the exit',
      res.headers.get('content-type') === 'application/x-ndjson' && firstEarly &&
      lines.length === 3 && lines[0].data === 'a\u0000b\n' && lines[0].offset === 0 &&
      lines[1].stream === 'stderr' && lines[1].data === '\ufffdx' && lines[1].offset === 4 &&
      lines[2].exit_code === 0, text + ` first chunk before the second was written: ${firstEarly}`);
    const b64 = await full(sid, cid);
    result('logs encoding=base64 keeps exact bytes', b64.equals(Buffer.from('a\0b\n\xffx', 'latin1')));
    const k = await run(sid, 'sh', ['-c', 'echo first; sleep 30']);
    // asked until the line is there (the command writes it a moment after
    // it started); each answer must come at once: following would take the
    // 30 s of the sleep
    let nf, slowest = 0;
    for (const t0 = Date.now(); Date.now() - t0 < 20000; await sleep(100)) {
      const t1 = Date.now();
      nf = await api('GET', `/v1/sandboxes/${sid}/commands/${k}/logs`);
      slowest = Math.max(slowest, Date.now() - t1);
      if (nf.status !== 200 || nf.text !== '') break;
    }
    result('logs without follow: what exists now, at once',
      nf.status === 200 && nf.text === '{"stream":"stdout","data":"first\\n","offset":0}\n' && slowest < 15000,
      `${nf.text} (slowest answer ${slowest} ms)`);
    const bad = await api('GET', `/v1/sandboxes/${sid}/commands/${k}/logs?since=-1`);
    result('logs since=-1: 422', bad.status === 422, `${bad.status}`);
    await api('POST', `/v1/sandboxes/${sid}/commands/${k}/kill`, { signal: 'SIGKILL' });
  }

  // 8. terminal
  {
    const url = `${WSBASE}/v1/sandboxes/${sid}/pty?cols=80&rows=24&access_token=${KEY}`;
    const ws = new WebSocket(url);
    let screen = '';
    const texts = [];
    const closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
    ws.on('message', (d, bin) => { if (bin) screen += d.toString(); else texts.push(JSON.parse(d.toString())); });
    await new Promise((r) => ws.on('open', r));
    const key = (s) => ws.send(Buffer.from(s));
    const until = async (re, ms = 30000) => { const t = Date.now(); while (!re.test(screen) && Date.now() - t < ms) await sleep(20); return re.test(screen); };
    ws.send(JSON.stringify({ type: 'resize', cols: 100, rows: 40 }));
    key('echo $((6*7))\n');
    result('terminal: echo $((6*7)) gives 42', await until(/[\r\n]42\r\n/), JSON.stringify(screen.slice(-300)));
    // A resize is a side operation of its own: keystrokes sent right after it can reach the
    // shell first, so `stty size` is asked until it shows the new size (a bounded number of times).
    let resized = false;
    for (let i = 0; i < 20 && !resized; i++) {
      key('stty size\n');
      resized = await until(/40 100/, 1500);
    }
    result('terminal: resize reaches the PTY', resized, JSON.stringify(screen.slice(-200)));
    // keystrokes right behind a resize wait for it: one `stty size` must show the new size
    ws.send(JSON.stringify({ type: 'resize', cols: 90, rows: 30 }));
    key('stty size\n');
    result('terminal: a command typed right after a resize sees the new size', await until(/30 90/),
      JSON.stringify(screen.slice(-200)));
    // flow control: paused, `yes` stops being read; resumed, it goes on; ^C stops it
    key('yes\n');
    await until(/y\r\ny\r\n/);
    ws.send(JSON.stringify({ type: 'pause' }));
    // what was under way when the pause took effect drains first: waited
    // for until nothing came for 500 ms (a minute at most: output that
    // never stops is the failure)
    let quiet = false;
    for (const t0 = Date.now(); !quiet && Date.now() - t0 < 60000;) {
      const n = screen.length;
      await sleep(500);
      quiet = screen.length === n;
    }
    const a = screen.length;
    await sleep(1000);
    const b = screen.length;
    ws.send(JSON.stringify({ type: 'resume' }));
    // resumed, the output comes again (waited for: a loaded machine may take a while)
    const t2 = Date.now();
    while (screen.length === b && Date.now() - t2 < 30000) await sleep(20);
    const c2 = screen.length;
    key('\x03');
    // gVisor's line discipline does not echo ^C (no ECHOCTL); the prompt
    // coming back (readline may ring the bell behind it) is what counts
    const gvisor = process.env.SANDBOX_TEST_ISOLATION === 'gvisor';
    const stopped = await until(gvisor ? /\r\n[^\r\n]*\$ \x07?$/ : /\^C\r\n[^\r\n]*\$ $/);
    result('terminal: paused output stops, resume continues, ^C stops yes',
      quiet && b - a < 2 * 1024 * 1024 && c2 > b && stopped, JSON.stringify({ quiet, a, b, c2, stopped, tail: screen.slice(-80) }));
    key('exit 5\n');
    const code = await closed;
    result('terminal: exit message with the code, close 1000',
      texts.some((t) => t.type === 'exit' && t.exit_code === 5) && code === 1000, JSON.stringify(texts));
    // a closed tab ends its shell
    const ws2 = new WebSocket(`${WSBASE}/v1/sandboxes/${sid}/pty?cmd=cat&access_token=${KEY}`);
    await new Promise((r) => ws2.on('open', r));
    await sleep(300);
    ws2.terminate();
    // the gateway sees the close, the agent hangs up, cat exits: asked
    // until the list shows it (30 s at most)
    let list, sl = [];
    for (const t0 = Date.now(); sl.length < 1 && Date.now() - t0 < 30000; await sleep(100)) {
      list = await api('GET', `/v1/sandboxes/${sid}/commands`);
      sl = list.json.commands.filter((x) => x.pty && x.status === 'exited' && x.signal === 'SIGHUP');
    }
    result('terminal: closing the WebSocket hangs up its program', sl.length >= 1, list.text.slice(0, 400));
  }

  // 8b. several terminals at once, each its own shell
  {
    const open = (n) => new Promise((resolve) => {
      const ws = new WebSocket(`${WSBASE}/v1/sandboxes/${sid}/pty?access_token=${KEY}`);
      let screen = '';
      ws.on('message', (d, bin) => { if (bin) screen += d.toString(); });
      ws.on('open', () => ws.send(Buffer.from(`echo term-$((${n}*1000+$$%1000*0))-$$\n`)));
      // until its shell has answered (30 s at most on a loaded machine)
      const t0 = Date.now();
      const t = setInterval(() => {
        if (!/term-\d+000-\d+\r?\n/.test(screen) && Date.now() - t0 < 30000) return;
        clearInterval(t);
        ws.close();
        resolve(screen);
      }, 20);
    });
    const screens = await Promise.all([open(1), open(2), open(3)]);
    const pids = screens.map((sc) => (sc.match(/term-\d+000-(\d+)/) || [])[1]);
    result('three terminals at once, three shells', pids.every(Boolean) && new Set(pids).size === 3,
      JSON.stringify(pids));
  }

  // 8c. a client that disconnects mid-upload leaves no file behind
  {
    const net = await import('node:net');
    await new Promise((resolve) => {
      const c = net.connect(Number(new URL(BASE).port), '127.0.0.1', () => {
        c.write(`PUT /v1/sandboxes/${sid}/files?path=half.bin HTTP/1.1\r\nHost: x\r\n` +
          `Authorization: Bearer ${KEY}\r\nContent-Length: 10000000\r\n\r\n`);
        c.write(Buffer.alloc(2000000, 1), () => setTimeout(() => { c.destroy(); resolve(); }, 300));
      });
      c.on('error', resolve);
    });
    // the upload's end (the gateway sees the close, the agent removes its
    // temp file) comes a moment after: asked until nothing is left (30 s)
    let ls;
    for (const t0 = Date.now(); Date.now() - t0 < 30000; await sleep(100)) {
      ls = await api('GET', `/v1/sandboxes/${sid}/files/list?path=/home/sandbox`);
      if (ls.status === 200 && !ls.json.entries.some((e) => e.name.includes('half'))) break;
    }
    result('a client gone mid-upload: no file or temp file left',
      ls.status === 200 && !ls.json.entries.some((e) => e.name.includes('half')), ls.text.slice(0, 300));
  }

  // 9. a stalled client on a 1 GiB stream costs bounded gateway memory,
  //    while a fast client on another command streams at full speed
  {
    const rss0 = gwRssKb();
    const big = await run(sid, 'head', ['-c', String(1 << 30), '/dev/zero']);
    const slow = subscribe(sid, big, { onOpen: (ws) => ws._socket.pause() });
    await sleep(500);
    const fastCid = await run(sid, 'head', ['-c', String(256 << 20), '/dev/zero']);
    const t0 = Date.now();
    const fast = await subscribe(sid, fastCid).done;
    const secs = (Date.now() - t0) / 1000;
    const mibs = fast.bytes / 1048576 / secs;
    let peak = 0;
    for (let i = 0; i < 10; i++) { peak = Math.max(peak, gwRssKb()); await sleep(100); }
    const grow = peak - rss0;
    // head outruns any client: what the agent's retention dropped for the
    // fast one is announced (truncated), never silently lost
    const skipped = fast.texts.filter((t) => t.type === 'truncated').reduce((a, t) => a + t.bytes, 0);
    result(`stalled client: gateway RSS grew ${grow} KiB (bound 65536) while a fast client streamed at ${mibs.toFixed(0)} MiB/s`,
      fast.bytes + skipped === 256 << 20 && fast.bytes > 0 && exitOf(fast) && grow < 65536,
      JSON.stringify({ bytes: fast.bytes, skipped, grow }));
    slow.ws._socket.resume();
    slow.ws.terminate();
    await api('POST', `/v1/sandboxes/${sid}/commands/${big}/kill`, { signal: 'SIGKILL' });
  }

  // 10. 1000 concurrent subscribers (over 4 sandboxes, 250 each)
  {
    const boxes = [sid];
    for (let i = 0; i < 3; i++) {
      const b = await api('POST', '/v1/sandboxes', { timeout_ms: 600000 });
      if (b.status === 201) boxes.push(b.json.id);
    }
    const cmds = [];
    // the commands wait for /tmp/go1000, made once every subscriber is open (or
    // after a generous minute on a loaded machine): "at once" is counted, not timed
    for (const b of boxes) cmds.push([b, await run(b, 'sh', ['-c', 'while [ ! -e /tmp/go1000 ]; do sleep 0.05; done; for i in 1 2 3; do echo tick $i; sleep 0.2; done'])]);
    const subs = [];
    for (const [b, cid] of cmds) for (let i = 0; i < 250; i++) subs.push(subscribe(b, cid));
    let open = 0;
    for (const t0 = Date.now(); open < 1000 && Date.now() - t0 < 60000; await sleep(200)) {
      const metrics = await (await fetch(`${BASE}/metrics`, { headers: { Authorization: 'Bearer metrics-key' } })).text();
      open = Number((metrics.match(/sandbox_gateway_websockets_open (\d+)/) || [])[1]);
    }
    for (const b of boxes) await api('POST', `/v1/sandboxes/${b}/commands`, { cmd: 'touch', args: ['/tmp/go1000'] });
    const all = await Promise.all(subs.map((s) => s.done));
    const want = 'tick 1\ntick 2\ntick 3\n';
    const good = all.filter((s) => joined(s).toString() === want && exitOf(s)?.exit_code === 0 && s.code === 1000).length;
    result(`${subs.length} concurrent subscribers all get every byte and the exit (${open} open at once)`,
      subs.length === 1000 && good === 1000 && open >= 1000, `${good} good of ${subs.length}, ${open} open; ` +
      JSON.stringify(all.filter((x) => !(joined(x).toString() === want && exitOf(x)?.exit_code === 0 && x.code === 1000))
        .slice(0, 3).map((x) => ({ code: x.code, status: x.status, out: joined(x).toString(), texts: x.texts }))));
    for (const b of boxes.slice(1)) await api('DELETE', `/v1/sandboxes/${b}`);
  }

  // 11. idle_timeout_ms: stopped after that long with nothing running and
  //     nobody attached; a running command or an open stream keeps it
  {
    const a = await api('POST', '/v1/sandboxes', { idle_timeout_ms: 1500 });
    // b's idle time is long enough for its command to arrive on a loaded
    // machine (with 1.5 s, a create and an exec 1.5 s apart lost it)
    const b = await api('POST', '/v1/sandboxes', { idle_timeout_ms: 10000 });
    // a busy command far longer than the wait below; a is polled (the idle
    // probe runs once a second, and a loaded machine may take longer)
    const busy = await run(b.json.id, 'sleep', ['120']);
    const busySince = Date.now();
    const watch = subscribe(b.json.id, busy);
    let ga;
    for (const t0 = Date.now(); Date.now() - t0 < 60000; await sleep(250)) {
      ga = await api('GET', `/v1/sandboxes/${a.json.id}`);
      if (ga.json.status === 'stopped') break;
    }
    // past b's idle timeout and a probe or two since its command began:
    // idle, it would be stopped by now
    await sleep(Math.max(0, busySince + 12000 - Date.now()));
    const gb = await api('GET', `/v1/sandboxes/${b.json.id}`);
    await api('POST', `/v1/sandboxes/${b.json.id}/commands/${busy}/kill`, { signal: 'SIGKILL' });
    result('idle_timeout_ms: an idle sandbox is stopped (timeout), a busy one is not',
      a.json.idle_timeout_ms === 1500 && ga.json.status === 'stopped' && ga.json.stop_reason === 'timeout' &&
      gb.json.status === 'running', `${ga.text} ${gb.text}`);
    await watch.done;
    await api('DELETE', `/v1/sandboxes/${a.json.id}`);
    await api('DELETE', `/v1/sandboxes/${b.json.id}`);
  }

  await api('DELETE', `/v1/sandboxes/${sid}`);
}

main().catch((e) => { result('suite ran to the end', false, e.stack); })
  .finally(() => finish());
