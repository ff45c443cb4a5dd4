// The Vite dev server's HMR WebSocket through the preview proxy
// (tests/images/vite.sh): fetch /@vite/client for its token, open the
// socket with Vite's subprotocol, see "connected"; load /src/main.js (the
// module graph now has it), have the shell rewrite it (the files API), see
// the update Vite sends for it. Prints one line: "connected <type>", or
// "error <why>". Args: gateway-port host edit-command...
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import WebSocket from 'ws';

const [port, host, ...edit] = process.argv.slice(2);
// (fetch drops a Host header: http.request keeps it)
const get = (path) => new Promise((resolve) => {
	http.get({ host: '127.0.0.1', port, path, headers: { host } }, (r) => {
		let body = '';
		r.setEncoding('utf8');
		r.on('data', (d) => { body += d; });
		r.on('end', () => resolve([r.statusCode, body]));
	}).on('error', (e) => resolve([0, e.message]));
});
const done = (line) => { console.log(line); process.exit(0); };
setTimeout(() => done('error no update within 60 s'), 60000);

const [st, client] = await get('/@vite/client');
const tok = /wsToken\s*=\s*"([^"]+)"/.exec(client);
if (st !== 200 || !tok) done(`error /@vite/client: ${st}, token ${tok ? 'found' : 'not found'}`);
const ws = new WebSocket(`ws://127.0.0.1:${port}/?token=${tok[1]}`, 'vite-hmr', { headers: { host } });
let connected = false;
ws.on('message', async (data) => {
	const m = JSON.parse(data.toString());
	if (m.type === 'connected' && !connected) {
		connected = true;
		const [s2] = await get('/src/main.js');
		if (s2 !== 200) done(`error /src/main.js: ${s2}`);
		execFileSync(edit[0], edit.slice(1));
	} else if (connected && (m.type === 'update' || m.type === 'full-reload')) {
		done(`connected ${m.type}`);
	}
});
ws.on('unexpected-response', (q, r) => done(`error upgrade answered ${r.statusCode}`));
ws.on('error', (e) => done(`error ${e.message}`));
