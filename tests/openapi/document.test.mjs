// docs/openapi.yaml itself: a valid OpenAPI 3.1 document (an npm validator),
// whose references all resolve, and which describes the route table
// (gateway/gw_routes.c) exactly: every /v1 row (and /healthz, /metrics)
// has its path and method, every documented one has its row, with the
// row's query arguments, auth and body kind; every error code the C code
// answers with is in the vocabulary, under its status.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { result, finish } from '../lib/results.mjs';
import { routes, documented, shape } from './routes.mjs';
import { loadDoc, deref, checker } from './conform.mjs';

const doc = loadDoc();
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/* ---- the document is valid OpenAPI 3.1 ---- */
{
  const v = new Validator();
  const res = await v.validate(structuredClone(doc));
  result('document: valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)', res.valid && v.version === '3.1',
    JSON.stringify(res.errors ?? v.version).slice(0, 2000));
  // the validator can say no: a copy with a response without its description
  const broken = structuredClone(doc);
  delete broken.paths['/healthz'].get.responses['200'].description;
  const v2 = new Validator();
  result('document: the validator refuses a broken copy (a response without description)',
    !(await v2.validate(broken)).valid);
}

/* ---- every reference resolves ---- */
{
  const missing = [];
  const walk = (node, at) => {
    if (Array.isArray(node)) return node.forEach((x, i) => walk(x, `${at}/${i}`));
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && (typeof v !== 'string' || deref(doc, { $ref: v }) === undefined)) missing.push(`${at}: ${v}`);
      else walk(v, `${at}/${k}`);
    }
  };
  walk(doc, '#');
  result('document: every $ref resolves', !missing.length, missing.join(', '));
  let compiled = null;
  try { checker(doc).compileAll(); compiled = true; } catch (e) { compiled = e.message; }
  result('document: its schemas compile as JSON Schema 2020-12 (ajv, strict)', compiled === true, compiled);
}

/* ---- the route table and the document describe the same routes ---- */
const table = routes();
const src = readFileSync(new URL('../../gateway/gw_routes.c', import.meta.url), 'utf8');
{
  const body = src.slice(src.indexOf('const struct gw_route gw_routes[]'));
  const rows = body.slice(0, body.indexOf('\n};')).match(/^\s*\{ (NULL|"[A-Z]+"),/gm) ?? [];
  result(`routes: every row of gw_routes.c is read (${table.length} rows)`, rows.length === table.length && table.length > 20,
    `${rows.length} rows, ${table.length} read`);
}
const docOps = new Map();   // "GET /v1/sandboxes/{}" -> { path, method, op }
for (const [p, item] of Object.entries(doc.paths))
  for (const m of METHODS)
    if (item[m]) docOps.set(`${m.toUpperCase()} ${shape(p)}`, { path: p, method: m, op: item[m], item });
const rowOps = new Map();
for (const rt of table.filter(documented))
  rowOps.set(`${rt.method ?? 'GET'} ${shape(rt.pattern)}`, rt);

for (const [k, rt] of rowOps) {
  const d = docOps.get(k);
  const row = `routes: the row ${rt.method ?? '(any method)'} ${rt.pattern}`;
  if (!d) {
    result(`${row} is in docs/openapi.yaml`, false,
      `no ${k.split(' ')[0].toLowerCase()} of "${rt.pattern.replace(/\{sid\}/g, '{sandbox_id}').replace(/\{cid\}/g, '{command_id}')}"`);
    continue;
  }
  const wrong = [];
  const params = [...(d.item.parameters ?? []), ...(d.op.parameters ?? [])].map((p) => deref(doc, p));
  if (rt.args) {
    const q = params.filter((p) => p.in === 'query').map((p) => p.name).sort();
    if (JSON.stringify(q) !== JSON.stringify([...rt.args].sort()))
      wrong.push(`query arguments: document ${q.join(',') || '(none)'}, row ${rt.args.join(',') || '(none)'}`);
  }
  const sec = (d.op.security ?? doc.security).map((s) => Object.keys(s)).flat();
  const wantKey = rt.auth === 'key' || rt.auth === 'GW_AUTH_KEY_OR_OPERATOR';
  if (sec.includes('apiKey') !== wantKey || (wantKey && !('401' in d.op.responses)))
    wrong.push(`the row ${wantKey ? 'takes' : 'takes no'} API key, the document's security is ${JSON.stringify(sec)}`);
  const content = Object.keys(d.op.requestBody?.content ?? {});
  const wantBody = { json: ['application/json'], stream: ['application/octet-stream'], none: [], raw: ['?'] }[rt.body];
  if (JSON.stringify(content) !== JSON.stringify(wantBody))
    wrong.push(`body: the row's is ${rt.body}, the document's ${content.join(',') || '(none)'}`);
  if (rt.ws && !('101' in d.op.responses && '426' in d.op.responses &&
      params.some((p) => p.in === 'header' && p.name === 'Upgrade')))
    wrong.push('a WebSocket row without 101, 426 and the Upgrade header');
  result(`${row} is in docs/openapi.yaml with its query arguments, auth and body`, !wrong.length, wrong.join('; '));
}
for (const [k, d] of docOps)
  result(`routes: the document's ${k.split(' ')[0]} ${d.path} is a row of gw_routes.c`, rowOps.has(k),
    'no such row: the document describes a route the gateway does not have');

/* ---- every error the gateway answers is in the vocabulary, under its status ---- */
{
  const files = [];
  const walk = (dir) => {
    for (const f of readdirSync(dir)) {
      const p = `${dir}/${f}`;
      if (statSync(p).isDirectory()) { if (f !== 'vercel') walk(p); }   /* /v2, /v3: their own words */
      else if (p.endsWith('.c')) files.push(p);
    }
  };
  walk(new URL('../../gateway', import.meta.url).pathname);
  const pairs = new Map();
  for (const f of files) {
    const s = readFileSync(f, 'utf8');
    for (const m of s.matchAll(/\b([45]\d\d), "([a-z][a-z_]+)"/g)) pairs.set(`${m[1]} ${m[2]}`, f);
    // the upstream error map of gw_refusal.c: { "in", "out", status }
    for (const m of s.matchAll(/\{ "[a-z_]+", "([a-z_]+)", ([45]\d\d) \}/g)) pairs.set(`${m[2]} ${m[1]}`, f);
  }
  // the schema each status has anywhere in the document
  const byStatus = new Map([['405', doc.components.responses.MethodNotAllowed], ['414', doc.components.responses.UriTooLong]]);
  for (const { op } of docOps.values())
    for (const [st, r] of Object.entries(op.responses)) if (!byStatus.has(st)) byStatus.set(st, r);
  const check = checker(doc);
  const wrong = [];
  for (const [pair, f] of pairs) {
    const [st, code] = pair.split(' ');
    const r = deref(doc, byStatus.get(st));
    const schema = r?.content?.['application/json']?.schema;
    const probe = { error: { code, message: 'm' } };
    // validated through the checker's own compiler
    const ok = schema && check.schemaAccepts(schema, probe);
    if (!ok) wrong.push(`${st} ${code} (${f.replace(/.*\/gateway\//, 'gateway/')})`);
  }
  result(`errors: every status and code the gateway's C code answers is documented (${pairs.size} pairs)`,
    !wrong.length && pairs.size > 10, wrong.join(', '));
}
finish();
