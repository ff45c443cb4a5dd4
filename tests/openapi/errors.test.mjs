// One error vocabulary: the codes of docs/openapi.yaml (its Error schema),
// the rows of docs/errors.md, the Python client's code -> class table
// (clients/python/sbxgw/_errors.py), the JS client's (clients/js/src/errors.js)
// and sbx's (`sbx --json errors`) are the same sets, each code with the same
// class, and sbx exits with docs/errors.md's status for each class. A code
// added to one and not the others fails here, naming it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CLASS_OF_CODE } from '../../clients/js/src/errors.js';
import { result, finish } from '../lib/results.mjs';
import { loadDoc } from './conform.mjs';

const SBX = process.env.SBX_BIN || 'bin/sbx';
const PY = '/usr/bin/python3';

const apiCodes = loadDoc().components.schemas.Error.properties.error.properties.code.enum;
const md = readFileSync('docs/errors.md', 'utf8');
const rows = [...md.matchAll(/^\| `([a-z_]+)` \| ([0-9, ]+) \| `(\w+)` \| ([^|]+) \|$/gm)]
  .map(([, code, statuses, cls, from]) => ({ code, statuses: statuses.split(',').map(Number), cls, from: from.trim() }));
const mdExits = Object.fromEntries([...md.matchAll(/^\| `(\w+Error)` \| (\d+)\b/gm)].map(([, cls, n]) => [cls, Number(n)]));

// the Python table from its module file alone (no httpx needed to read it)
const pyTable = JSON.parse(execFileSync(PY, ['-c', `
import importlib.util, json
spec = importlib.util.spec_from_file_location("errors", "clients/python/sbxgw/_errors.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
print(json.dumps({c: k.__name__ for c, k in m.CODE_CLASSES.items()}))`], { encoding: 'utf8' }));
const jsTable = Object.fromEntries(Object.entries(CLASS_OF_CODE).map(([c, k]) => [c, k.prototype.name]));
const sbxRows = JSON.parse(execFileSync(SBX, ['--json', 'errors'], { encoding: 'utf8', env: { PATH: process.env.PATH } }));
const sbxTable = Object.fromEntries(sbxRows.map((r) => [r.code, r.class]));
const mdTable = Object.fromEntries(rows.map((r) => [r.code, r.cls]));

/** What differs between two sets (as "+x" only in a, "-y" only in b), '' when none. */
function setDiff(a, b) {
  const A = new Set(a), B = new Set(b);
  return [...[...A].filter((x) => !B.has(x)).map((x) => `+${x}`), ...[...B].filter((x) => !A.has(x)).map((x) => `-${x}`)].join(' ');
}

/** Codes whose class differs, and codes only in one table. */
function tableDiff(a, b) {
  const sets = setDiff(Object.keys(a), Object.keys(b));
  const classes = Object.keys(a).filter((c) => c in b && a[c] !== b[c]).map((c) => `${c}: ${a[c]} vs ${b[c]}`);
  return [sets, ...classes].filter(Boolean).join('; ');
}

result('errors: docs/errors.md has its rows (read with their `from`)', rows.length >= 20 && apiCodes.length >= 15,
  `${rows.length} rows, ${apiCodes.length} codes in openapi.yaml`);
const v1 = rows.filter((r) => r.from === '`/v1`').map((r) => r.code);
let d = setDiff(apiCodes, v1);
result('errors: docs/openapi.yaml\'s codes are the `/v1` rows of docs/errors.md', !d, `(+ openapi only, - errors.md only) ${d}`);
const others = rows.filter((r) => r.from !== '`/v1`');
result('errors: the other rows are the client\'s (status 0) or the /v2, /v3 routes\'',
  others.every((r) => (r.from === 'client' && r.statuses.join() === '0') || (r.from === '`/v2`, `/v3`' && !r.statuses.includes(0))),
  JSON.stringify(others));
d = tableDiff(mdTable, pyTable);
result('errors: the Python client\'s table is docs/errors.md\'s (codes and classes)', !d, `(+ errors.md only, - Python only) ${d}`);
d = tableDiff(mdTable, jsTable);
result('errors: the JS client\'s table is docs/errors.md\'s (codes and classes)', !d, `(+ errors.md only, - JS only) ${d}`);
d = tableDiff(mdTable, sbxTable);
result('errors: sbx\'s table is docs/errors.md\'s (codes and classes)', !d, `(+ errors.md only, - sbx only) ${d}`);
const badExit = sbxRows.filter((r) => r.exit !== (r.code === 'connection_failed' ? 122 : mdExits[r.class]));
result('errors: sbx exits with docs/errors.md\'s status for each class (122: no gateway at all)',
  Object.keys(mdExits).length === 8 && !badExit.length, JSON.stringify({ mdExits, badExit }));
finish();
