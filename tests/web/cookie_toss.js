// Cookie tossing across previews, in a real browser (issue 24 item 5): sandbox A's server sets
// cookies for the whole preview domain, sandbox B's server echoes the Cookie header it gets.
// Both previews are private and opened as a user opens them, by the ?token= link, so the
// gateway's own sbx_preview_token cookie sits beside whatever A tried to plant.
//
// Why not under .localhost: Chromium treats "localhost" as a top-level domain and refuses a
// cookie with Domain=localhost (or .localhost) outright, and a preview host
// <port>-<id>.localhost has no other parent, so there the browser itself stops the attack.
// Under a registrable domain it does not: PREVIEW_TEST_URL is a second gateway on the same
// runner whose preview domain is preview.test, which the browser resolves to 127.0.0.1
// (--host-resolver-rules in web.test.js). Only the gateway's rewrite (gw_presp.c) stands
// between A's Set-Cookie and B then.
import assert from 'node:assert/strict';
import http from 'node:http';
import WebSocket from 'ws';
import { SandboxClient } from '../../clients/js/src/client.js';
import { test, Skip } from '../client/harness.js';

export const PREVIEW_TEST_DOMAIN = 'preview.test';

const TOSSED = [
	'toss=1; Domain=preview.test; Path=/',
	'toss_dot=1; Domain=.preview.test; Path=/',
	'toss_lh=1; Domain=localhost; Path=/',
	'sbx_preview_token=forged; Domain=preview.test; Path=/',
	'sbx_preview_token=forged-dot; Domain=.preview.test; Path=/',
	// host-only, for A itself: would replace A's own token cookie
	'sbx_preview_token=forged-host; Path=/',
	// what A may set: a cookie of its own host
	'own=a; Path=/',
];

// Answers every GET with the Cookie header it received; GET /toss also sets TOSSED.
const SERVER = `import http.server, json
TOSSED = json.loads(${JSON.stringify(JSON.stringify(TOSSED))})
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("cookie=" + (self.headers.get("Cookie") or "")).encode()
        self.send_response(200)
        if self.path == "/toss":
            for c in TOSSED:
                self.send_header("Set-Cookie", c)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", 3000), H).serve_forever()
`;

/** Status of a GET of `url` sent to the gateway's loopback address with the preview Host and
 *  the token as a header (removed by the proxy, so the guest sees no cookie from this). */
function statusWithToken(url, token) {
	const u = new URL(url);
	return new Promise((resolve, reject) => {
		const req = http.get({ host: '127.0.0.1', port: u.port, path: '/', headers: { Host: u.host, 'X-Preview-Token': token } }, (res) => {
			res.resume();
			res.on('end', () => resolve(res.statusCode));
		});
		req.on('error', reject);
		req.setTimeout(10000, () => req.destroy(new Error('preview probe timed out')));
	});
}

/** A private sandbox serving SERVER on port 3000, once its preview answers 200. */
async function startEchoSandbox(client, gwPort) {
	const sandbox = await client.create({ ports: [3000], preview_auth: true, timeout_ms: 300000 });
	assert.match(sandbox.info.preview_token || '', /^[0-9a-f]{32}$/, 'the owner sees the preview token');
	await sandbox.writeFiles([{ path: '/tmp/echo.py', content: SERVER }]);
	await sandbox.runCommand({ cmd: 'python3', args: ['/tmp/echo.py'], detached: true });
	const url = `http://3000-${sandbox.id}.${PREVIEW_TEST_DOMAIN}:${gwPort}/`;
	let status;
	for (let i = 0; i < 200 && status !== 200; i++) {
		status = await statusWithToken(url, sandbox.info.preview_token);
		if (status !== 200) await new Promise((r) => setTimeout(r, 100));
	}
	assert.equal(status, 200, `the echo server in ${sandbox.id} answers through the preview`);
	return { sandbox, url, token: sandbox.info.preview_token };
}

/** Registers the case on the shared browser `context`. */
export function cookieTossCase(context) {
	test('Previews: a sandbox cannot toss cookies to another preview or displace its token cookie', async () => {
		const { PREVIEW_TEST_URL, GW_KEY } = process.env;
		if (!PREVIEW_TEST_URL) throw new Skip('no second gateway with a registrable preview domain (run.sh)');
		const client = new SandboxClient({ baseUrl: PREVIEW_TEST_URL, apiKey: GW_KEY, WebSocket });
		const gwPort = new URL(PREVIEW_TEST_URL).port;
		const a = await startEchoSandbox(client, gwPort);
		const b = await startEchoSandbox(client, gwPort);
		const page = await context.newPage();
		const body = async () => page.textContent('body');
		try {
			// A, as a user opens it: the link with the token, then A's page that sets the cookies.
			let res = await page.goto(`${a.url}?token=${a.token}`);
			assert.equal(res.status(), 200, 'A opens by its link');
			res = await page.goto(`${a.url}toss`);
			assert.equal(res.status(), 200);
			// B, the same way, after A's cookies were offered to the browser.
			res = await page.goto(`${b.url}?token=${b.token}`);
			assert.equal(res.status(), 200, 'B still opens: its token cookie is not displaced');
			res = await page.goto(b.url);
			assert.equal(res.status(), 200, 'B loads again by its cookie alone');
			const seenByB = await body();
			assert.match(seenByB, new RegExp(`sbx_preview_token=${b.token}`), seenByB);
			assert.doesNotMatch(seenByB, /toss/, `B's server got A's cookies: ${seenByB}`);
			assert.doesNotMatch(seenByB, /forged/, `B's server got the forged token: ${seenByB}`);
			assert.doesNotMatch(seenByB, /own=a/, seenByB);
			// A keeps its own host-only cookie and its token cookie.
			res = await page.goto(a.url);
			assert.equal(res.status(), 200, 'A loads again by its cookie alone');
			const seenByA = await body();
			assert.match(seenByA, /(^|; |=)own=a(;|$)/, seenByA);
			assert.match(seenByA, new RegExp(`sbx_preview_token=${a.token}`), seenByA);
			assert.doesNotMatch(seenByA, /forged/, seenByA);
			// What the browser holds: nothing for the domain, nothing planted under the token's name.
			const jar = await context.cookies();
			const mine = jar.filter((c) => c.domain.endsWith(PREVIEW_TEST_DOMAIN));
			assert.deepEqual(mine.filter((c) => c.domain.startsWith('.')), [], JSON.stringify(mine));
			assert.deepEqual(mine.filter((c) => c.name === 'sbx_preview_token').map((c) => c.value).sort(), [a.token, b.token].sort());
		} finally {
			await page.close();
			await Promise.all([a.sandbox.stop(), b.sandbox.stop()]).catch(() => {});
		}
	}, { timeoutMs: 90000 });
}
