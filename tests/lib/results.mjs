// PASS:/FAIL: lines and the closing line of a Node suite (tests/README.md),
// in the form the shell harness (tests/lib/harness.sh, h_count) adds up.
//   import { result, finish } from '../lib/results.mjs';
//   result('name', condition, 'detail shown on failure');
//   finish();   // "N passed, N failed"; exit status 1 on a failure
let passed = 0, failed = 0;

export function result(name, ok, detail = '') {
  if (ok) { passed++; console.log(`PASS: ${name}`); }
  else { failed++; console.log(`FAIL: ${name} ${detail}`); }
}

// A result() whose names all start with prefix (a sub-suite's own name).
export function resultWith(prefix) {
  return (name, ok, detail = '') => result(`${prefix}${name}`, ok, detail);
}

export function finish({ exit = true } = {}) {
  console.log(`${passed} passed, ${failed} failed`);
  if (exit) process.exit(failed ? 1 : 0);
}
