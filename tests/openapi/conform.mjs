// Responses against docs/openapi.yaml: check({ method, path, status, ctype,
// text }) finds the document's path and operation for the request and says
// whether the status is one the operation lists and the body fits that
// status's schema (JSON Schema 2020-12, the dialect of OpenAPI 3.1).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import Ajv2020 from 'ajv/dist/2020.js';

export const DOC_PATH = new URL('../../docs/openapi.yaml', import.meta.url);
export const loadDoc = (path = DOC_PATH) => parse(readFileSync(path, 'utf8'));

const BASE = 'https://openapi.sandbox.test/components';

// "#/components/schemas/X" as a reference into one schema of all of them
function rebase(node) {
  if (Array.isArray(node)) return node.map(rebase);
  if (!node || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node))
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/') ?
      `${BASE}#/$defs/${v.slice('#/components/schemas/'.length)}` : rebase(v);
  return out;
}

// The object a "#/..." reference names in doc
export function deref(doc, obj) {
  let seen = 0;
  while (obj && typeof obj.$ref === 'string' && obj.$ref.startsWith('#/') && seen++ < 16)
    obj = obj.$ref.slice(2).split('/').reduce((o, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  return obj;
}

export function checker(doc) {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false, allowUnionTypes: true });
  ajv.addSchema({ $id: BASE, $defs: rebase(doc.components?.schemas ?? {}) });
  const compiled = new Map();
  const validate = (schema, value) => {
    const key = JSON.stringify(schema);
    if (!compiled.has(key)) compiled.set(key, ajv.compile(rebase(schema)));
    const v = compiled.get(key);
    return v(value) ? null : v.errors.map((e) => `${e.instancePath || '(body)'} ${e.message}${
      e.params?.additionalProperty ? `: "${e.params.additionalProperty}"` : ''}`).join('; ');
  };
  const escape = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // the document's paths as patterns; literal segments beat parameters
  const paths = Object.keys(doc.paths).map((p) => ({
    p, re: new RegExp(`^${p.split(/\{[^}]*\}/).map(escape).join('[A-Za-z0-9_-]{1,79}')}$`),
    lit: p.replace(/\{[^}]*\}/g, '').length,
  })).sort((a, b) => b.lit - a.lit);
  const inScope = (path) => path.startsWith('/v1/') || path === '/v1' || path === '/healthz' || path === '/metrics';

  // a response against one response object of the document
  function body(resp, r) {
    resp = deref(doc, resp);
    const content = resp.content;
    if (!content) return r.text ? `a body where the document has none` : null;
    const type = (r.ctype ?? '').split(';')[0].trim();
    const media = content[type];
    if (!media) return `content type ${type || '(none)'}, the document has ${Object.keys(content).join(', ')}`;
    if (!media.schema) return null;
    if (type === 'application/json') {
      let value;
      try { value = JSON.parse(r.text); } catch { return `not JSON: ${r.text.slice(0, 120)}`; }
      const e = validate(media.schema, value);
      return e && `${e} in ${r.text.slice(0, 300)}`;
    }
    if (type === 'application/x-ndjson') {
      for (const line of r.text.split('\n').filter(Boolean)) {
        let value;
        try { value = JSON.parse(line); } catch { return `a line that is not JSON: ${line.slice(0, 120)}`; }
        const e = validate(media.schema, value);
        if (e) return `${e} in line ${line.slice(0, 200)}`;
      }
    }
    return null;
  }

  // { ok, skip, op: "GET /v1/...", why }
  function check(r) {
    const path = r.path.split('?')[0];
    const method = r.method.toLowerCase();
    if (!inScope(path) || method === 'head' || method === 'options')
      return { ok: true, skip: true, op: `${r.method} ${path}` };
    const found = paths.find((x) => x.re.test(path));
    const bad = (op, why) => ({ ok: false, op, why });
    if (!found) {
      // a path of no route: 404, or 414 for one too long to route
      const resp = { 404: 'NotFound', 414: 'UriTooLong' }[r.status];
      const op = `${r.method} (no path of the document: ${path.slice(0, 80)})`;
      if (!resp) return bad(op, `status ${r.status}, not 404`);
      const e = body(doc.components.responses[resp], r);
      return e ? bad(op, e) : { ok: true, op: `${r.method} (unknown path) ${r.status}` };
    }
    const item = doc.paths[found.p];
    if (!item[method]) {
      const op = `${r.method} ${found.p}`;
      if (r.status !== 405) return bad(op, `status ${r.status} for a method the document does not list (405 expected)`);
      const e = body(doc.components.responses.MethodNotAllowed, r);
      return e ? bad(op, e) : { ok: true, op: `${op} 405` };
    }
    const op = `${r.method} ${found.p} ${r.status}`;
    const resp = item[method].responses?.[String(r.status)];
    if (!resp) return bad(op, `status ${r.status} is not in the document (it lists ${Object.keys(item[method].responses).join(', ')}): ${r.text?.slice(0, 200)}`);
    let e;
    try { e = body(resp, r); } catch (x) { e = `its schema does not compile: ${x.message}`; }
    return e ? bad(op, e) : { ok: true, op };
  }
  check.schemaAccepts = (schema, value) => validate(schema, value) === null;
  // compile every schema of the document now (ajv compiles lazily): a
  // schema ajv's strict mode refuses throws here, naming it
  check.compileAll = () => {
    for (const name of Object.keys(doc.components?.schemas ?? {}))
      ajv.getSchema(`${BASE}#/$defs/${name}`);
    const media = (c) => Object.values(c ?? {}).forEach((m) => m.schema && validate(m.schema, null));
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item)) {
        media(op?.requestBody?.content);
        for (const r of Object.values(op?.responses ?? {})) media(deref(doc, r).content);
      }
    for (const r of Object.values(doc.components?.responses ?? {})) media(r.content);
  };
  return check;
}
