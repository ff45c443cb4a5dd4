// Stream tokens across gateways: a token one gateway made opens the stream
// through another gateway that shares its --preview-secret-file (a browser
// the load balancer moves keeps its stream), and not through a gateway
// with another secret.
// usage: node token_across.mjs URL_A URL_B URL_OTHER KEY
// Prints PASS/FAIL lines and "N passed, N failed".
import WebSocket from 'ws';
import { result, finish } from '../lib/results.mjs';

const [A, B, OTHER, KEY] = process.argv.slice(2);

async function api(base, method, path, body) {
  const res = await fetch(base + path, {
    method, headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(20000),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, json, text };
}

// the stream's refusal status, or its output bytes once it closed
function stream(base, sid, cid, token) {
  const url = `${base.replace(/^http/, 'ws')}/v1/sandboxes/${sid}/commands/${cid}/stream?access_token=${encodeURIComponent(token)}`;
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    const s = { status: 101, out: [] };
    const t = setTimeout(() => ws.terminate(), 20000);
    ws.on('unexpected-response', (req, res) => { s.status = res.statusCode; clearTimeout(t); resolve(s); });
    ws.on('message', (d, bin) => { if (bin && d[0] === 1) s.out.push(d.subarray(1)); });
    ws.on('error', () => {});
    ws.on('close', () => { clearTimeout(t); s.out = Buffer.concat(s.out).toString(); resolve(s); });
  });
}

async function main() {
  const c = await api(A, 'POST', '/v1/sandboxes', { timeout_ms: 60000 });
  if (c.status !== 201) { result('token-across: create', false, c.text); return; }
  const sid = c.json.id;
  const r = await api(A, 'POST', `/v1/sandboxes/${sid}/commands`, { cmd: 'sh', args: ['-c', 'echo across'], detached: true });
  const t = await api(A, 'POST', `/v1/sandboxes/${sid}/token`);
  const tok = t.json?.token || '';
  const viaB = await stream(B, sid, r.json?.id, tok);
  result('token-across: a token from gateway A opens the stream through gateway B (same preview secret file)',
    viaB.status === 101 && viaB.out === 'across\n', JSON.stringify(viaB));
  const viaOther = await stream(OTHER, sid, r.json?.id, tok);
  result('token-across: a gateway with another secret refuses it (401)', viaOther.status === 401, JSON.stringify(viaOther));
  await api(A, 'DELETE', `/v1/sandboxes/${sid}`);
}

main().catch((e) => result('token-across: no exception', false, String(e))).finally(finish);
