// Soak: hundreds of concurrent command streams over tens of sandboxes on
// loopback, every byte checked against the output the command is known to
// print, while faults are injected: stream clients killed abruptly (half of
// them resume with since=), commands killed with SIGKILL, sandboxes deleted
// under their streams and replaced.
// usage: node soak.mjs BASE_URL KEY SECONDS GATEWAY_PID RUNNER_PID
// env: SOAK_SANDBOXES (20), SOAK_JOBS (2 per sandbox), SOAK_SUBS (3..10 per command)
// Prints a report, PASS/FAIL lines and "N passed, N failed".
import WebSocket from 'ws';
import fs from 'node:fs';

const [BASE, KEY, SECS, GWPID, RUNPID] = process.argv.slice(2);
const WSBASE = BASE.replace(/^http/, 'ws');
const NSBX = Number(process.env.SOAK_SANDBOXES || 20);
const JOBS = Number(process.env.SOAK_JOBS || 2);
const [SUBMIN, SUBMAX] = (process.env.SOAK_SUBS || '3..10').split('..').map(Number);
// bounds: RSS growth over the whole run (allocator high-water marks
// included), and from the idle point after the first half of the load to
// the idle point after the second (what a leak would show)
const RSS_BOUND_GW_KB = 64 * 1024, RSS_BOUND_RUNNER_KB = 48 * 1024, RSS_LEAK_KB = 8 * 1024, FD_BOUND = 16;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rnd = (a, b) => a + Math.floor(Math.random() * (b - a + 1));
const pick = (a) => a[Math.floor(Math.random() * a.length)];

const st = {
  commands: 0, commands_killed: 0, streams: 0, streams_ok: 0, streams_resumed: 0,
  clients_killed: 0, sandboxes_recycled: 0, expected_ends: 0,
  bytes_streamed: 0, bytes_verified: 0, peak_open: 0, open: 0, errors: [],
};
function error(msg) { st.errors.push(msg); if (st.errors.length <= 20) console.log(`  error: ${msg}`); }

function procKb(pid, field = 'VmRSS') {
  try { return Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]); } catch { return 0; }
}
function fds(pid) { try { return fs.readdirSync(`/proc/${pid}/fd`).length; } catch { return 0; } }

async function api(method, path, body) {
  const res = await fetch(BASE + path, {
    method, headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30000),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, json, text };
}

// The commands, each with the exact bytes it prints.
const seq = (a, b) => { let s = ''; for (let i = a; i <= b; i++) s += `${i}\n`; return s; };
const KINDS = {
  seq: () => ({ script: 'seq 1 20000; sleep 0.3; seq 1 3000 >&2; sleep 0.3; seq 20001 30000',
    out: seq(1, 20000) + seq(20001, 30000), err: seq(1, 3000) }),
  ticker: () => { let out = ''; for (let i = 0; i < 60; i++) out += `tick ${i}\n`;
    return { script: 'i=0; while [ $i -lt 60 ]; do echo "tick $i"; i=$((i+1)); sleep 0.1; done', out, err: '', killable: true }; },
  bulk: () => { const n = rnd(100000, 400000); const p = '0123456789abcdef\n';
    return { script: `yes 0123456789abcdef | head -c ${n}`, out: p.repeat(Math.ceil(n / p.length)).slice(0, n), err: '' }; },
  mixed: () => { let out = '', err = '';
    for (let r = 1; r <= 6; r++) { out += seq(r * 100, r * 100 + 50); err += seq(r, r + 20); }
    return { script: 'for r in 1 2 3 4 5 6; do seq $((r*100)) $((r*100+50)); seq $r $((r+20)) >&2; sleep 0.2; done', out, err }; },
};

const sandboxes = [];     // {id, jobs: Set, dying}
const allSubs = new Set();

// One subscriber: out/err collected by tag; resumes with since= when asked.
function subscribe(job, resume) {
  const s = { job, out: [], err: [], outLen: 0, errLen: 0, texts: [], code: null, killed: false, resumes: 0 };
  allSubs.add(s);
  st.streams++;
  s.done = new Promise((resolve) => {
    const connect = () => {
      const since = s.outLen + s.errLen;
      const ws = new WebSocket(`${WSBASE}/v1/sandboxes/${job.sbx.id}/commands/${job.cid}/stream?since=${since}&access_token=${KEY}`);
      s.ws = ws;
      let opened = false, ended = false;
      const end = (code, how) => {
        if (ended) return;
        ended = true;
        if (opened) st.open--;
        if (s.killed && resume && s.resumes < 3 && !job.sbx.dying) {
          s.killed = false; s.resumes++; st.streams_resumed++;
          setTimeout(connect, rnd(50, 500));
          return;
        }
        s.code = code; s.how = s.killed ? 'client-killed' : how;
        allSubs.delete(s);
        resolve(s);
      };
      ws.on('open', () => { opened = true; st.open++; st.peak_open = Math.max(st.peak_open, st.open); });
      ws.on('message', (d, bin) => {
        if (bin) {
          const body = d.subarray(1);
          st.bytes_streamed += body.length;
          if (d[0] === 1) { s.out.push(Buffer.from(body)); s.outLen += body.length; }
          else if (d[0] === 2) { s.err.push(Buffer.from(body)); s.errLen += body.length; }
          else error(`stream tag ${d[0]}`);
        } else {
          try { s.texts.push(JSON.parse(d.toString())); } catch { error(`bad text message ${d}`); }
        }
      });
      ws.on('unexpected-response', (req, res) => { end(`http ${res.statusCode}`, 'refused'); ws.terminate(); });
      ws.on('close', (code) => end(code, 'close'));
      ws.on('error', () => setTimeout(() => end('error', 'error'), 100));
    };
    connect();
  });
  return s;
}

function verify(s) {
  const { job } = s;
  const out = Buffer.concat(s.out).toString('latin1'), err = Buffer.concat(s.err).toString('latin1');
  const exit = s.texts.find((t) => t.type === 'exit');
  const trunc = s.texts.find((t) => t.type === 'truncated');
  const prefixOk = job.exp.out.startsWith(out) && job.exp.err.startsWith(err);
  if (trunc) error(`${job.kind} ${job.cid}: truncated ${trunc.bytes}`);
  if (!prefixOk) {
    error(`${job.kind} ${job.cid}: bytes differ from the known output (out ${out.length}/${job.exp.out.length}, err ${err.length}/${job.exp.err.length}, resumes ${s.resumes})`);
    return;
  }
  st.bytes_verified += out.length + err.length;
  if (s.how === 'client-killed') return;        // a prefix is all it can have
  if (job.sbx.dying) { st.expected_ends++; return; }
  if (job.killed) {
    if (exit?.signal === 'SIGKILL' && s.code === 1000) { st.streams_ok++; return; }
    // the kill came just after the command's own end
    if (exit?.exit_code === 0 && s.code === 1000 && out.length === job.exp.out.length) { st.streams_ok++; return; }
    error(`killed ${job.kind} ${job.cid}: ${JSON.stringify(s.texts).slice(0, 200)} close ${s.code}`);
    return;
  }
  if (out.length === job.exp.out.length && err.length === job.exp.err.length && exit?.exit_code === 0 && s.code === 1000) {
    st.streams_ok++;
  } else {
    error(`${job.kind} ${job.cid}: ended ${s.how} ${s.code} with out ${out.length}/${job.exp.out.length} err ${err.length}/${job.exp.err.length} texts ${JSON.stringify(s.texts).slice(0, 200)}`);
  }
}

async function runJob(sbx) {
  const kind = pick(Object.keys(KINDS));
  const exp = KINDS[kind]();
  const job = { sbx, kind, exp, killed: false };
  sbx.jobs.add(job);
  try {
    const r = await api('POST', `/v1/sandboxes/${sbx.id}/commands`, { cmd: 'sh', args: ['-c', exp.script], detached: true });
    if (r.status !== 201) {
      if (!sbx.dying) error(`exec on ${sbx.id}: ${r.status} ${r.text.slice(0, 200)}`);
      return;
    }
    job.cid = r.json.id;
    st.commands++;
    const n = rnd(SUBMIN, SUBMAX);
    const subs = [];
    for (let i = 0; i < n; i++) {
      if (i) await sleep(rnd(0, 300));      // some join late: the replay from 0
      subs.push(subscribe(job, Math.random() < 0.5));
    }
    for (const s of await Promise.all(subs.map((x) => x.done))) verify(s);
  } catch (e) {
    if (!sbx.dying) error(`job on ${sbx.id}: ${e.message}`);
  } finally {
    sbx.jobs.delete(job);
  }
}

async function newSandbox() {
  const r = await api('POST', '/v1/sandboxes', { timeout_ms: 3600000, memory_mb: 256 });
  if (r.status !== 201) { error(`create: ${r.status} ${r.text.slice(0, 200)}`); return null; }
  const sbx = { id: r.json.id, jobs: new Set(), dying: false };
  sandboxes.push(sbx);
  return sbx;
}

async function worker(sbx, stopAt) {
  while (Date.now() < stopAt && !sbx.dying) await runJob(sbx);
}

async function faults(stopAt, workers) {
  while (Date.now() < stopAt) {
    await sleep(rnd(500, 1500));
    const f = Math.random();
    if (f < 0.5) {                                     // a client dies abruptly
      const live = [...allSubs].filter((s) => s.ws && s.ws.readyState === WebSocket.OPEN);
      if (!live.length) continue;
      const s = pick(live);
      s.killed = true; s.how = 'client-killed';
      s.ws.terminate();
      st.clients_killed++;
    } else if (f < 0.8) {                              // kill -9 of a command
      const jobs = sandboxes.filter((x) => !x.dying).flatMap((x) => [...x.jobs]).filter((j) => j.cid && j.exp.killable && !j.killed);
      if (!jobs.length) continue;
      const j = pick(jobs);
      j.killed = true;
      const r = await api('POST', `/v1/sandboxes/${j.sbx.id}/commands/${j.cid}/kill`, { signal: 'SIGKILL' });
      if (r.status !== 200 && r.status !== 409) error(`kill ${j.cid}: ${r.status} ${r.text.slice(0, 200)}`);
      else st.commands_killed++;
    } else {                                           // a sandbox deleted under its streams, a new one
      const live = sandboxes.filter((x) => !x.dying);
      if (live.length < 2) continue;
      const victim = pick(live);
      victim.dying = true;
      const r = await api('DELETE', `/v1/sandboxes/${victim.id}`);
      if (r.status !== 200) error(`delete ${victim.id}: ${r.status} ${r.text.slice(0, 200)}`);
      st.sandboxes_recycled++;
      const fresh = await newSandbox();
      if (fresh) workers.push(worker(fresh, stopAt));
    }
  }
}

const results = [];
function result(name, ok, detail = '') {
  results.push(ok);
  console.log(`${ok ? 'PASS' : 'FAIL'}: ${name}${ok ? '' : ' ' + detail}`);
}

async function main() {
  const t0 = Date.now();
  const gw0 = procKb(GWPID), rn0 = procKb(RUNPID), fd0 = fds(GWPID), rfd0 = fds(RUNPID);
  for (let i = 0; i < NSBX; i++) await newSandbox();
  let gwPeak = 0, rnPeak = 0;
  const sampler = setInterval(() => {
    gwPeak = Math.max(gwPeak, procKb(GWPID)); rnPeak = Math.max(rnPeak, procKb(RUNPID));
  }, 1000);
  const ticker = setInterval(() => console.log(`  ${Math.round((Date.now() - t0) / 1000)}s: ${st.commands} commands, ${st.open} streams open (peak ${st.peak_open}), ${(st.bytes_verified / 1048576).toFixed(1)} MiB verified, ${st.errors.length} errors`), 15000);
  // two halves of load, each drained to idle (sandboxes alive, no stream
  // open): the idle RSS after the second half against the one after the
  // first is the leak check. The first half raises the allocators'
  // high-water marks (glibc keeps freed 256 KiB stream buffers in the heap
  // once its mmap threshold has moved up), which is not a leak.
  const idle = [];
  for (const end of [t0 + Number(SECS) * 500, t0 + Number(SECS) * 1000]) {
    const workers = [];
    for (const s of sandboxes.filter((x) => !x.dying)) for (let j = 0; j < JOBS; j++) workers.push(worker(s, end));
    await faults(end, workers);
    const drained = await Promise.race([
      (async () => { for (let i = 0; i < workers.length; i++) await workers[i]; return true; })(),
      sleep(60000).then(() => false)]);
    if (!drained) error(`jobs still running 60 s after the end of a half (${allSubs.size} streams)`);
    await sleep(1000);
    idle.push({ gw: procKb(GWPID), rn: procKb(RUNPID) });
  }
  clearInterval(ticker); clearInterval(sampler);
  for (const s of sandboxes) if (!s.dying) { s.dying = true; await api('DELETE', `/v1/sandboxes/${s.id}`); }
  await sleep(1500);
  // the gateway counts a WebSocket closed when it is done with it, which
  // may be after its client saw the close: waited for (30 s, a bound)
  let wsOpen = NaN;
  for (const end = Date.now() + 30000; ;) {
    const m = await (await fetch(`${BASE}/metrics`, { headers: { Authorization: 'Bearer soak-metrics' } })).text();
    wsOpen = Number((m.match(/sandbox_gateway_websockets_open (\d+)/) || [])[1]);
    if (wsOpen === 0 || Date.now() > end) break;
    await sleep(100);
  }
  const gw1 = procKb(GWPID), rn1 = procKb(RUNPID), fd1 = fds(GWPID), rfd1 = fds(RUNPID);
  const secs = (Date.now() - t0) / 1000;
  const leakGw = idle[1].gw - idle[0].gw, leakRn = idle[1].rn - idle[0].rn;

  console.log('--- soak report');
  console.log(`duration ${secs.toFixed(0)} s (load ${SECS} s in two halves), ${NSBX} sandboxes x ${JOBS} commands at a time, ${SUBMIN}-${SUBMAX} streams per command`);
  console.log(`commands run ${st.commands} (killed with SIGKILL ${st.commands_killed}); streams ${st.streams} (peak ${st.peak_open} open at once, ${st.streams_ok} complete and exact, ${st.streams_resumed} resumes with since=)`);
  console.log(`bytes streamed ${st.bytes_streamed} (${(st.bytes_streamed / 1048576).toFixed(1)} MiB), verified ${st.bytes_verified} (${(st.bytes_verified / 1048576).toFixed(1)} MiB)`);
  console.log(`faults: ${st.clients_killed} clients killed abruptly, ${st.commands_killed} commands killed, ${st.sandboxes_recycled} sandboxes deleted under their streams (${st.expected_ends} streams ended by that)`);
  console.log(`gateway RSS (KiB): start ${gw0}, idle after half 1 ${idle[0].gw}, idle after half 2 ${idle[1].gw}, end ${gw1}, peak ${gwPeak}; fds ${fd0} -> ${fd1}`);
  console.log(`runner RSS (KiB): start ${rn0}, idle after half 1 ${idle[0].rn}, idle after half 2 ${idle[1].rn}, end ${rn1}, peak ${rnPeak}; fds ${rfd0} -> ${rfd1}`);
  console.log(`errors ${st.errors.length}`);
  for (const e of st.errors.slice(0, 20)) console.log(`  ${e}`);

  result('no unexpected errors', st.errors.length === 0, `${st.errors.length} errors`);
  result('every byte received was verified', st.bytes_streamed > 0 && st.bytes_verified === st.bytes_streamed,
    `${st.bytes_verified} of ${st.bytes_streamed}`);
  result(`hundreds of concurrent streams (peak ${st.peak_open})`, st.peak_open >= 100);
  result('faults were injected (client kills, command kills, sandbox deletes)',
    st.clients_killed > 0 && st.commands_killed > 0 && st.sandboxes_recycled > 0);
  result('no WebSocket left open in the gateway (metrics)', wsOpen === 0, `${wsOpen}`);
  result(`gateway RSS: +${gw1 - gw0} KiB over the run (bound ${RSS_BOUND_GW_KB}), ${leakGw} KiB idle to idle over the second half (bound ${RSS_LEAK_KB})`,
    gw1 > 0 && gw1 - gw0 < RSS_BOUND_GW_KB && leakGw < RSS_LEAK_KB);
  result(`runner RSS: +${rn1 - rn0} KiB over the run (bound ${RSS_BOUND_RUNNER_KB}), ${leakRn} KiB idle to idle over the second half (bound ${RSS_LEAK_KB})`,
    rn1 > 0 && rn1 - rn0 < RSS_BOUND_RUNNER_KB && leakRn < RSS_LEAK_KB);
  result(`gateway fds ${fd0} -> ${fd1} (growth under ${FD_BOUND})`, fd1 - fd0 < FD_BOUND);
  result(`runner fds ${rfd0} -> ${rfd1} (growth under ${FD_BOUND})`, rfd1 - rfd0 < FD_BOUND);
}

main().catch((e) => result('soak ran to the end', false, e.stack))
  .finally(() => {
    const p = results.filter(Boolean).length;
    console.log(`${p} passed, ${results.length - p} failed`);
    process.exit(results.length - p ? 1 : 0);
  });
