// The real @vercel/sandbox SDK (tests/compat's, 3.5.0) running the
// firewall examples of its docs against the egress suite's fake internet:
// an allow-list at create, then updateNetworkPolicy with a transform that
// injects an Authorization header the sandbox never sees. Env: EG_PORT,
// EG_KEY, EG_DIR (run.sh). Prints PASS/FAIL lines and the closing count.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { result, finish } from '../lib/results.mjs';
import { vercelSandboxOptions } from '../../clients/js/src/client.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { Sandbox } = await import(path.join(ROOT, 'tests/compat/node_modules/@vercel/sandbox/dist/index.js'));
const opts = vercelSandboxOptions({ url: `http://127.0.0.1:${process.env.EG_PORT}`, apiKey: process.env.EG_KEY });
const secret = 'sk-sdk-' + Math.random().toString(16).slice(2) + Date.now().toString(16);
const inetLog = () => readFileSync(path.join(process.env.EG_DIR, 'inet.log'), 'utf8');

// a GET from inside, with the sandbox's own trust store (python3 of the image)
async function fetchInside(sandbox, url) {
	const cmd = await sandbox.runCommand('python3', ['-c',
		'import sys,urllib.request\n' +
		'try:\n r=urllib.request.urlopen(sys.argv[1],timeout=20); print(r.status, r.read().decode())\n' +
		'except Exception as e: print("error", type(e).__name__, e)', url]);
	return (await cmd.stdout()).trim();
}

let sandbox;
try {
	// docs: "Restricting outbound traffic" (an allow-list, wildcards included)
	sandbox = await Sandbox.create({ ...opts, timeout: 300_000,
		networkPolicy: { allow: ['allowed.test', '*.pkg.test'] } });
	let r = await fetchInside(sandbox, 'http://allowed.test/');
	result('SDK allow-list: an allowed name is reached', r === '200 server=198.51.100.1 host=allowed.test sni=-', r);
	r = await fetchInside(sandbox, 'http://api.pkg.test/');
	result('SDK allow-list: a wildcard name is reached', r.startsWith('200 server=198.51.100.1 host=api.pkg.test'), r);
	r = await fetchInside(sandbox, 'http://denied.test/');
	result('SDK allow-list: another name is not', r.startsWith('error'), r);

	// docs: "Injecting credentials" (a transform per domain)
	const pol = await sandbox.updateNetworkPolicy({ allow: {
		'allowed.test': [{ transform: [{ headers: { authorization: `Bearer ${secret}` } }] }],
		'*.pkg.test': [] } });
	result('SDK updateNetworkPolicy with a transform: the answer shows the header, redacted',
		JSON.stringify(pol).includes('"authorization":"<redacted>"') && !JSON.stringify(pol).includes(secret),
		JSON.stringify(pol));
	r = await fetchInside(sandbox, 'https://allowed.test/echo/sdk');
	const sha = createHash('sha256').update(`Bearer ${secret}`).digest('hex');
	let seen; try { seen = JSON.parse(r.slice(4)); } catch { seen = {}; }
	result('SDK transform: the server gets the header over TLS the sandbox trusts',
		r.startsWith('200 ') && seen.auth === sha, r);
	result('SDK transform: the fake server logged the secret, the sandbox output never held it',
		inetLog().includes(`Bearer ${secret}`) && !r.includes(secret), r);
	const env = await (await sandbox.runCommand('bash', ['-c', 'env; cat /proc/1/environ'])).stdout();
	result('SDK transform: not in the sandbox environment', !env.includes(secret), '');
} catch (e) {
	result('SDK firewall examples ran to the end', false, e && e.stack || String(e));
} finally {
	if (sandbox) await sandbox.stop().catch(() => {});
}
finish();
