// One command-stream client for the cluster suite.
// usage: node stream.mjs WS_URL OUT_PREFIX [LEAVE_AFTER_BYTES] [TIMEOUT_MS]
// Writes OUT_PREFIX.data (the stream's bytes, tags stripped, in order) and
// at the end OUT_PREFIX.json: {"bytes","texts","code","error","left"}.
// With LEAVE_AFTER_BYTES > 0 it closes the WebSocket as soon as it holds
// that many bytes or more (left: true): a client that goes away mid-output,
// to resume elsewhere with since=<bytes>. Otherwise it reads to the close.
import WebSocket from 'ws';
import fs from 'node:fs';

const [url, out, leaveArg = '0', tmo = '60000'] = process.argv.slice(2);
const leave = Number(leaveArg);
const data = fs.openSync(`${out}.data`, 'w');
const res = { bytes: 0, texts: [], code: null, error: null, left: false, timeout: false };
let done = false;
const ws = new WebSocket(url);
function finish() {
  if (done) return;
  done = true;
  fs.closeSync(data);
  fs.writeFileSync(`${out}.json`, JSON.stringify(res) + '\n');
  process.exit(0);
}
ws.on('message', (d, bin) => {
  if (done || res.left) return;
  if (bin) {
    fs.writeSync(data, d.subarray(1));
    res.bytes += d.length - 1;
    if (leave > 0 && res.bytes >= leave) {
      res.left = true;
      ws.terminate();
      finish();
    }
  } else {
    try { res.texts.push(JSON.parse(d.toString())); } catch { res.texts.push(d.toString()); }
  }
});
ws.on('unexpected-response', (req, r) => { res.error = `http ${r.statusCode}`; finish(); });
ws.on('close', (code) => { res.code = code; finish(); });
ws.on('error', (e) => { res.error = String(e.message || e); setTimeout(finish, 200); });
setTimeout(() => { res.timeout = true; finish(); }, Number(tmo)).unref();
