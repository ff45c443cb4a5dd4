// One command-stream client for the fault suite.
// usage: node stream.mjs WS_URL OUT_PREFIX [TIMEOUT_MS]
// Writes OUT_PREFIX.data (the stream bytes, tags stripped, in order) as they
// arrive, OUT_PREFIX.open once the WebSocket is open, and at the end
// OUT_PREFIX.json: {"bytes","texts","code","reason","error","ms_after_last"}.
// Exits when the connection ends (close, error) or after TIMEOUT_MS (then
// "timeout":true: the hang the suite checks against).
import WebSocket from 'ws';
import fs from 'node:fs';

const [url, out, tmo = '60000'] = process.argv.slice(2);
const data = fs.openSync(`${out}.data`, 'w');
const res = { bytes: 0, texts: [], code: null, reason: '', error: null, timeout: false };
let last = Date.now();
let done = false;
const ws = new WebSocket(url);
function finish() {
  if (done) return;
  done = true;
  res.ms_after_last = Date.now() - last;
  fs.closeSync(data);
  fs.writeFileSync(`${out}.json`, JSON.stringify(res) + '\n');
  process.exit(0);
}
ws.on('open', () => fs.writeFileSync(`${out}.open`, ''));
ws.on('message', (d, bin) => {
  last = Date.now();
  if (bin) { fs.writeSync(data, d.subarray(1)); res.bytes += d.length - 1; }
  else { try { res.texts.push(JSON.parse(d.toString())); } catch { res.texts.push(d.toString()); } }
});
ws.on('unexpected-response', (req, r) => { res.error = `http ${r.statusCode}`; finish(); });
ws.on('close', (code, reason) => { res.code = code; res.reason = reason.toString(); finish(); });
ws.on('error', (e) => { res.error = String(e.message || e); setTimeout(finish, 200); });
setTimeout(() => { res.timeout = true; finish(); }, Number(tmo)).unref();
