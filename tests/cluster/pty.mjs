// A terminal session for the cluster suite.
// usage: node pty.mjs WS_URL INPUT [TIMEOUT_MS]
// Sends INPUT (terminal bytes) once the session is open and prints what the
// terminal wrote until the session ends (or TIMEOUT_MS), then one line
// "close <code>".
import WebSocket from 'ws';

const [url, input, tmo = '20000'] = process.argv.slice(2);
let out = '';
let done = false;
const ws = new WebSocket(url);
function finish(how) {
  if (done) return;
  done = true;
  process.stdout.write(out + '\n' + how + '\n');
  process.exit(0);
}
ws.on('open', () => ws.send(Buffer.from(input), { binary: true }));
ws.on('message', (d, bin) => { if (bin) out += d.toString(); });
ws.on('unexpected-response', (req, r) => finish(`http ${r.statusCode}`));
ws.on('close', (code) => finish(`close ${code}`));
ws.on('error', (e) => finish(`error ${e.message}`));
setTimeout(() => finish('timeout'), Number(tmo)).unref();
