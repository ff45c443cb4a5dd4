// A tiny sequential test runner for the Node suites: test(name, fn) and
// skip(name, why) register cases; run() executes them one after another
// (they share sandboxes and a 2-core machine), prints PASS/FAIL/SKIP lines
// and closes with "N passed, N failed, N skipped". Exit code 1 on any failure.

const cases = [];

// TEST_ONLY=regex runs only the matching cases (while working on one).
const only = process.env.TEST_ONLY ? new RegExp(process.env.TEST_ONLY) : null;

export function test(name, fn, { timeoutMs = 60000 } = {}) {
	if (!only || only.test(name)) cases.push({ name, fn, timeoutMs });
}

/** Thrown inside a test: it counts as skipped, with the reason. */
export class Skip extends Error {}

export async function run() {
	let passed = 0, failed = 0, skipped = 0;
	for (const c of cases) {
		const t0 = Date.now();
		let timer;
		try {
			await Promise.race([
				c.fn(),
				new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${c.timeoutMs} ms`)), c.timeoutMs); }),
			]);
			passed++;
			console.log(`PASS: ${c.name} (${Date.now() - t0} ms)`);
		} catch (e) {
			if (e instanceof Skip) {
				skipped++;
				console.log(`SKIP: ${c.name}: ${e.message}`);
			} else {
				failed++;
				console.log(`FAIL: ${c.name}: ${e && e.stack ? e.stack : e}`);
			}
		} finally {
			clearTimeout(timer);
		}
	}
	console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
	return failed === 0;
}
