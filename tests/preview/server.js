// The guest side of tests/preview/run.sh: a plain node:http server run
// inside a sandbox. It logs every request head it receives (one line
// "REQ <method> <url> <json headers>") to $LOG, so the suite can check what
// reached the guest, and implements a WebSocket echo by hand.
'use strict';
const http = require('node:http');
const crypto = require('node:crypto');
const fs = require('node:fs');

const PORT = Number(process.env.PORT || 3000);
const LOG = process.env.LOG || '/tmp/node-requests.log';
const log = (line) => fs.appendFileSync(LOG, line + '\n');
let sseNext = null;   // sends the open /sse stream's next event

// The download pattern: byte i of every 64 KiB block is (i * 7) % 251.
const block = Buffer.alloc(65536);
for (let i = 0; i < block.length; i++) block[i] = (i * 7) % 251;

const page = `<!doctype html><meta charset=utf-8><title>preview ws</title>
<p id=out>waiting</p><script>
const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws');
ws.onopen = () => ws.send('ping from page');
ws.onmessage = (e) => { document.getElementById('out').textContent = 'echo: ' + e.data; };
ws.onerror = () => { document.getElementById('out').textContent = 'ws error'; };
</script>`;

const server = http.createServer((req, res) => {
  log(`REQ ${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/') {
    res.end('hello from node\n');
  } else if (url.pathname === '/headers') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(req.headers));
  } else if (url.pathname === '/echo') {
    res.setHeader('content-type', 'application/octet-stream');
    req.pipe(res);
  } else if (url.pathname === '/upload') {
    const h = crypto.createHash('sha256');
    let n = 0;
    req.on('data', (d) => { h.update(d); n += d.length; });
    req.on('end', () => res.end(`${n} ${h.digest('hex')}\n`));
  } else if (url.pathname === '/download') {
    const total = Number(url.searchParams.get('mb') || 50) * 1024 * 1024;
    res.setHeader('content-length', total);
    let sent = 0;
    const more = () => {
      while (sent < total) {
        const n = Math.min(block.length, total - sent);
        sent += n;
        if (!res.write(n === block.length ? block : block.subarray(0, n))) return res.once('drain', more);
      }
      res.end();
    };
    more();
  } else if (url.pathname === '/sse') {
    // four events, each sent only once the client asked for it (/sse-next)
    // having received the one before: a proxy that held the stream back
    // would never be asked
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let i = 0;
    sseNext = () => {
      res.write(`data: ${i} ${Date.now()}\n\n`);
      if (++i === 4) { sseNext = null; res.end(); }
    };
    sseNext();
  } else if (url.pathname === '/sse-next') {
    const next = sseNext;
    res.end(next ? 'sent\n' : 'no stream\n');
    if (next) next();
  } else if (url.pathname === '/hang') {
    // never answers
  } else if (url.pathname === '/cookies') {
    // cookies for every preview of the domain, and the gateway's own
    res.setHeader('set-cookie', ['a=1; Path=/; Domain=localhost; HttpOnly',
      'b=2; domain=.localhost', 'sbx_preview_token=' + 'f'.repeat(32) + '; Path=/']);
    res.end('cookies\n');
  } else if (url.pathname === '/badhead') {
    // a bare LF: a browser reads a second header line, a strict parser
    // one; the Set-Cookie would escape the rewrite
    req.socket.end('HTTP/1.1 200 OK\r\nX-A: 1\nSet-Cookie: t=1; Domain=localhost\r\n' +
                   'Content-Length: 2\r\n\r\nok');
  } else if (url.pathname === '/garbage') {
    req.socket.end('\x00\x01garbage, not HTTP at all\r\n\xff\xfe');
  } else if (url.pathname === '/page') {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(page);
  } else {
    res.statusCode = 404;
    res.end('no such route\n');
  }
});

// WebSocket echo (RFC 6455), enough for text and binary frames from clients.
server.on('upgrade', (req, socket) => {
  log(`REQ UPGRADE ${req.url} ${JSON.stringify(req.headers)}`);
  const key = req.headers['sec-websocket-key'];
  const accept = crypto.createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
               `Sec-WebSocket-Accept: ${accept}\r\n\r\n`);
  let buf = Buffer.alloc(0);
  socket.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      if (buf.length < 2) return;
      const op = buf[0] & 0x0f, masked = buf[1] & 0x80;
      let len = buf[1] & 0x7f, off = 2;
      if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); off = 4; }
      else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); off = 10; }
      const mask = masked ? buf.subarray(off, off + 4) : null;
      if (masked) off += 4;
      if (buf.length < off + len) return;
      const payload = Buffer.from(buf.subarray(off, off + len));
      if (mask) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
      buf = buf.subarray(off + len);
      if (op === 8) { socket.end(Buffer.from([0x88, 0])); return; }
      if (op === 9) { socket.write(Buffer.concat([Buffer.from([0x8a, payload.length]), payload])); continue; }
      const hdr = payload.length < 126 ? Buffer.from([0x80 | op, payload.length])
        : Buffer.from([0x80 | op, 126, payload.length >> 8, payload.length & 255]);
      socket.write(Buffer.concat([hdr, payload]));
    }
  });
  socket.on('error', () => {});
});

server.keepAliveTimeout = 30000;
server.listen(PORT, '127.0.0.1', () => log(`LISTENING ${PORT}`));
