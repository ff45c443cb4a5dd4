// The gateway's route table read from its source (gateway/gw_routes.c),
// as tests/pipeline/pipeline.py reads it: the path macros expanded, one
// entry per row, so a row added there is seen here without an edit.
import { readFileSync } from 'node:fs';

const ROUTES_C = new URL('../../gateway/gw_routes.c', import.meta.url);

// [{ method (null: any), pattern, ws, auth, args (null: not checked), body, text }]
export function routes(src = readFileSync(ROUTES_C, 'utf8')) {
  // #define SBX "/v1/sandboxes/{sid}", #define CMD SBX "/commands/{cid}"
  const macros = {};
  for (const m of src.matchAll(/^#define ([A-Z0-9]+) ((?:[A-Z0-9]+\s*)?"[^"]*")\s*$/gm))
    macros[m[1]] = m[2];
  const expand = (text) => [...text.matchAll(/[A-Z0-9]+|"[^"]*"/g)]
    .map(([t]) => (t in macros ? expand(macros[t]) : t.replace(/^"|"$/g, ''))).join('');
  // static const char *const put_args[] = { "path", "mode", NULL };
  const argLists = {};
  for (const m of src.matchAll(/static const char \*const (\w+)\[\] = \{([^}]*)\};/g))
    argLists[m[1]] = [...m[2].matchAll(/"([^"]*)"/g)].map((a) => a[1]);
  let table = src.slice(src.indexOf('const struct gw_route gw_routes[]'));
  table = table.slice(0, table.indexOf('\n};'));
  const names = Object.keys(macros).join('|') || 'NONE';
  const piece = `(?:${names}|"[^"]*")`;
  // a row: { METHOD, PATH, rest } up to the next row (rows may span lines)
  const rowRe = new RegExp(`\\{\\s*(NULL|"[A-Z]+")\\s*,\\s*(${piece}(?:\\s*${piece})*)\\s*,([^{]*?)\\},?\\s*(?=\\{|/\\*|$)`, 'gs');
  const out = [];
  for (const m of table.matchAll(rowRe)) {
    const rest = m[3];
    const args = /\.args = (\w+)/.exec(rest);
    out.push({
      method: m[1] === 'NULL' ? null : m[1].replace(/"/g, ''),
      pattern: expand(m[2]),
      ws: /\.ws\s*=/.test(rest),
      auth: /\bKEY\b/.test(rest) ? 'key' : (/\.auth = (\w+)/.exec(rest)?.[1] ?? 'none'),
      args: args ? argLists[args[1]] : null,
      body: /\bJSON\b/.test(rest) ? 'json' : (/\.body = GW_BODY_(\w+)/.exec(rest)?.[1].toLowerCase() ?? 'none'),
      text: m[0].replace(/\s+/g, ' '),
    });
  }
  return out;
}

// The rows the OpenAPI document describes: /v1 and the operations routes.
export const documented = (rt) => rt.pattern.startsWith('/v1/') || ['/healthz', '/metrics'].includes(rt.pattern);

// A path pattern with its parameter names dropped: /v1/sandboxes/{} for
// the table's {sid} and the document's {sandbox_id} alike.
export const shape = (p) => p.replace(/\{[^}]*\}/g, '{}');
