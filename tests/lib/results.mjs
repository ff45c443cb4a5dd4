// PASS:/FAIL: lines and the closing line of a Node suite (tests/README.md),
// in the form the shell harness (tests/lib/harness.sh, h_count) adds up.
//   import { result, finish } from '../lib/results.mjs';
//   result('name', condition, 'detail shown on failure');
//   skip('name', 'why it is not checked here');
//   finish();   // "N passed, N failed, N skipped"; exit status 1 on a failure
let passed = 0, failed = 0, skipped = 0;

export function result(name, ok, detail = '') {
  if (ok) { passed++; console.log(`PASS: ${name}`); }
  else { failed++; console.log(`FAIL: ${name} ${detail}`); }
}

export function skip(name, why) {
  skipped++;
  console.log(`SKIP: ${name}: ${why}`);
}

// A result() whose names all start with prefix (a sub-suite's own name).
export function resultWith(prefix) {
  return (name, ok, detail = '') => result(`${prefix}${name}`, ok, detail);
}

export function finish({ exit = true } = {}) {
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  if (exit) process.exit(failed ? 1 : 0);
}
