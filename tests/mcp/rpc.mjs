// Raw JSON-RPC over POST /mcp for the suites that test what the SDK client
// never sends (foreign Origins, many sessions): one keep-alive agent, every
// header the caller's (Host included).
import http from 'node:http';
import { request } from '../lib/http.mjs';

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

// { status, headers, body (parsed when JSON), text }
export async function mcpRequest(url, method, body, headers = {}) {
  const res = await request(new URL('/mcp', url), {
    method, agent, body: body === undefined ? '' : JSON.stringify(body),
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
  });
  return { ...res, body: res.json };
}

export const initialize = (url, key, headers = {}) => mcpRequest(url, 'POST', {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'mcp-suite', version: '1.0.0' } },
}, { Authorization: `Bearer ${key}`, ...headers });

// A new session of key: its Mcp-Session-Id, or throws
export async function openSession(url, key) {
  const res = await initialize(url, key);
  const sid = res.headers['mcp-session-id'];
  if (res.status !== 200 || !/^[0-9a-f]{32}$/.test(sid || ''))
    throw new Error(`initialize: ${res.status} ${res.text}`);
  return sid;
}

export const ping = (url, key, sid, headers = {}) => mcpRequest(url, 'POST',
  { jsonrpc: '2.0', id: 2, method: 'ping' },
  { Authorization: `Bearer ${key}`, 'Mcp-Session-Id': sid, ...headers });

export const close = () => agent.destroy();
