// MCP suite, sessions per key: key A opens more sessions than its cap (by
// default more than the old shared table of 1024 held) and key B's earlier
// session still answers; A keeps exactly its newest CAP, its older ones are
// 404 (the spec's answer to an unknown session), and what a key replaces is
// its own least recently used session.
// Env: GW_URL, GW_KEY (key B), GW_KEY2 (key A), CAP (the gateway's
// --mcp-sessions-per-key, at least 3), OPEN (how many A opens, more than
// CAP).
import { result, finish } from '../lib/results.mjs';
import { mcpRequest, openSession, ping, close } from './rpc.mjs';

const { GW_URL, GW_KEY: B, GW_KEY2: A } = process.env;
const CAP = Number(process.env.CAP), OPEN = Number(process.env.OPEN);
const tag = `cap ${CAP}: `;
const check = (name, got, want) => result(tag + name, JSON.stringify(got) === JSON.stringify(want),
  `got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
const alive = async (key, sid) => (await ping(GW_URL, key, sid)).status;

async function main() {
  const b = await openSession(GW_URL, B);
  check('key B\'s session answers', await alive(B, b), 200);

  const a = [];
  for (let i = 0; i < OPEN; i++)
    a.push(await openSession(GW_URL, A));
  check(`key B's session survives key A opening ${OPEN}`, await alive(B, b), 200);

  // in opening order: the oldest OPEN - CAP are gone, the newest CAP live
  // (pinging the live ones in order keeps their order)
  const st = [];
  for (const sid of a)
    st.push(await alive(A, sid));
  const live = st.filter((s) => s === 200).length;
  check(`key A holds exactly ${CAP} sessions`, live, CAP);
  check(`key A's oldest ${OPEN - CAP} are gone: 404`, st.slice(0, OPEN - CAP).every((s) => s === 404), true);
  check(`key A's newest ${CAP} answer`, st.slice(OPEN - CAP).every((s) => s === 200), true);
  check('an evicted session is not a session of another key either', await alive(B, a[0]), 404);

  // least recently used, not first opened: use the oldest live one, then
  // open one more; the next oldest goes instead
  const first = OPEN - CAP;
  await alive(A, a[first]);
  const extra = await openSession(GW_URL, A);
  check('the least recently used one goes, not the oldest opened',
    [await alive(A, a[first + 1]), await alive(A, a[first]), await alive(A, extra)], [404, 200, 200]);
  // an ended session frees its place: the next one replaces nothing, so
  // the least recently used live one (the third oldest opened) stays
  const del = await mcpRequest(GW_URL, 'DELETE', undefined, { Authorization: `Bearer ${A}`, 'Mcp-Session-Id': extra });
  check('DELETE ends a session', [del.status, await alive(A, extra)], [200, 404]);
  const again = await openSession(GW_URL, A);
  check('a session opened after a DELETE takes the freed place',
    [await alive(A, again), await alive(A, a[first + 2])], [200, 200]);
  check('key B\'s session still answers', await alive(B, b), 200);
}

main().catch((e) => result(tag + 'sessions suite', false, e.stack || String(e))).finally(() => { close(); finish(); });
