// The answers another suite recorded (tests/lib/http.mjs with HTTP_RECORD)
// against docs/openapi.yaml: each /v1 (and /healthz, /metrics) answer's
// status must be one the document lists for its route, and its body must
// fit that status's schema. One PASS per route and status seen, one FAIL
// per answer that does not fit.
// Usage: node tests/openapi/records.mjs FILE [NAME]
import { readFileSync, existsSync } from 'node:fs';
import { result, finish } from '../lib/results.mjs';
import { loadDoc, checker } from './conform.mjs';

const [file, name = 'openapi'] = process.argv.slice(2);
const check = checker(loadDoc());
const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
const ok = new Set();
let checked = 0;
for (const line of lines) {
  const r = JSON.parse(line);
  const c = check(r);
  if (c.skip) continue;
  checked++;
  if (c.ok) ok.add(c.op);
  else result(`${name}: ${c.op}`, false, c.why);
}
for (const op of [...ok].sort()) result(`${name}: ${op} fits docs/openapi.yaml`, true);
result(`${name}: answers were recorded and checked (${checked})`, checked > 0, `none in ${file}`);
finish();
