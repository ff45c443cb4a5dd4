// MCP suite, Origins: POST and DELETE /mcp accept an Origin only when it is
// one of the gateway's own (its URL: its listen address's names, port and
// scheme; --public-url; --mcp-allowed-origins), never because it equals the
// Host header, which a DNS-rebinding page controls as well. Raw HTTP with
// the headers a browser would send.
// Env: GW_URL, GW_PORT, GW_KEY, MCP_PUBLIC_URL, MCP_ALLOWED (the gateway's
// --public-url and --mcp-allowed-origins, http://...:3000 then https://...).
import { result, finish } from '../lib/results.mjs';
import { mcpRequest, initialize, openSession, ping, close } from './rpc.mjs';

const { GW_URL, GW_PORT, GW_KEY, MCP_PUBLIC_URL, MCP_ALLOWED } = process.env;
const port = Number(GW_PORT);
const [allowedHttp, allowedHttps] = MCP_ALLOWED.split(',');
const check = (name, got, want) => result(name, JSON.stringify(got) === JSON.stringify(want),
  `got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);

async function main() {
  const sid = await openSession(GW_URL, GW_KEY);   // no Origin: not a browser
  const status = async (origin, host) =>
    (await ping(GW_URL, GW_KEY, sid, { Origin: origin, ...(host ? { Host: host } : {}) })).status;

  // the DNS-rebinding pair: evil.example resolves to the gateway, so the
  // browser sends the attacker's name both as Host and in Origin
  let res = await ping(GW_URL, GW_KEY, sid, { Host: `evil.example:${port}`, Origin: `http://evil.example:${port}` });
  check('DNS rebinding (Host evil.example, Origin http://evil.example): 403 forbidden',
    [res.status, res.body?.error?.code], [403, 'forbidden']);
  check('the refusal names what is accepted', /own URL.*--public-url.*--mcp-allowed-origins/.test(res.body?.error?.message || ''), true);
  res = await initialize(GW_URL, GW_KEY, { Host: `evil.example:${port}`, Origin: `http://evil.example:${port}` });
  check('DNS rebinding on initialize: 403, no session made', [res.status, res.headers['mcp-session-id']], [403, undefined]);
  const other = await openSession(GW_URL, GW_KEY);   // the one the rebinding page tries to end
  res = await mcpRequest(GW_URL, 'DELETE', undefined, { Authorization: `Bearer ${GW_KEY}`, 'Mcp-Session-Id': other,
    Host: `evil.example:${port}`, Origin: `http://evil.example:${port}` });
  check('DNS rebinding on DELETE: 403', res.status, 403);
  check('... and the session is still there', (await ping(GW_URL, GW_KEY, other)).status, 200);
  check('an Origin equal to a Host we do not serve (another port): 403',
    await status(`http://127.0.0.1:${port + 1}`, `127.0.0.1:${port + 1}`), 403);

  // the scheme is what this listener serves: plain HTTP here
  check('https Origin on the plain-HTTP gateway: 403', await status(`https://127.0.0.1:${port}`), 403);
  check('https://localhost Origin with Host localhost on the plain gateway: 403',
    await status(`https://localhost:${port}`, `localhost:${port}`), 403);

  // the gateway's own URL
  check('own origin http://127.0.0.1:PORT: 200', await status(`http://127.0.0.1:${port}`), 200);
  check('own origin http://localhost:PORT (the URL `make run` prints): 200',
    await status(`http://localhost:${port}`, `localhost:${port}`), 200);
  check('own origin whatever the Host header says: 200', await status(`http://localhost:${port}`), 200);

  // configured origins
  check(`--mcp-allowed-origins ${allowedHttp}: 200`, await status(allowedHttp), 200);
  check(`--mcp-allowed-origins ${allowedHttps}: 200`, await status(allowedHttps), 200);
  check('an allowed origin on another port: 403', await status(allowedHttp.replace(/:\d+$/, ':3001')), 403);
  check('an allowed origin with the other scheme: 403', await status(allowedHttp.replace(/^http:/, 'https:')), 403);
  check(`--public-url ${MCP_PUBLIC_URL} (a TLS proxy in front): 200`,
    await status(MCP_PUBLIC_URL, new URL(MCP_PUBLIC_URL).host), 200);
  check('--public-url with the other scheme: 403', await status(MCP_PUBLIC_URL.replace(/^https:/, 'http:')), 403);

  // not origins at all
  check('Origin: null (a sandboxed frame, a file): 403', await status('null'), 403);
  check('an Origin with a path: 403', await status(`http://127.0.0.1:${port}/x`), 403);
  check('two origins in one header: 403', await status(`http://127.0.0.1:${port}, http://evil.example`), 403);
  // clients that are not browsers send none, as before
  check('no Origin: 200', (await ping(GW_URL, GW_KEY, sid)).status, 200);
}

main().catch((e) => result('origin suite', false, e.stack || String(e))).finally(() => { close(); finish(); });
