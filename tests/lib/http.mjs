// One HTTP request of a Node suite, the whole answer as values:
// { status, headers, json (the body parsed, or null), text }.
// body: a string or Buffer sent as is, or any other value sent as JSON.
// announce: send only the headers, with that Content-Length (or chunked for
// 'chunked'), and never the body: a refusal answered from the header
// alone (sending a body the gateway refuses could end in a reset that eats
// the answer). agent: an http.Agent (keep-alive), or none: then the
// request has a connection of its own (Node 20's global agent would keep
// it alive, and a suite busy for seconds between two requests, e.g.
// compiling schemas under load, could send the next on a connection the
// gateway is just closing as idle: a "socket hang up", not an answer).
// HTTP_RECORD=FILE: each answer is also appended to FILE as one JSON line
// {method, path, status, ctype, text}, for tests/openapi/records.mjs to
// check against docs/openapi.yaml.
import http from 'node:http';
import { appendFileSync } from 'node:fs';

const RECORD = process.env.HTTP_RECORD;
function record(url, method, res, text) {
  const u = new URL(url);
  appendFileSync(RECORD, `${JSON.stringify({ method, path: u.pathname + u.search, status: res.statusCode,
    ctype: res.headers['content-type'] ?? null, text })}\n`);
}

export function request(url, { method = 'GET', headers = {}, body, agent = false, announce } = {}) {
  const data = body === undefined ? '' :
    typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const length = announce === 'chunked' ? { 'Transfer-Encoding': 'chunked' } :
    { 'Content-Length': announce ?? Buffer.byteLength(data) };
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: { ...length, ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        if (RECORD) record(url, method, res, text);
        resolve({ status: res.statusCode, headers: res.headers, json, text });
        if (announce) req.destroy();
      });
    });
    req.on('error', (e) => { if (!req.destroyed) reject(e); });
    if (announce) req.flushHeaders();
    else req.end(data);
  });
}
