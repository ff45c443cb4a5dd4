/* MCP sessions (Streamable HTTP, Mcp-Session-Id): issued at initialize,
 * required on every later request. They live in the gateway's memory only
 * (a restarted gateway answers 404 and the client initializes again) and
 * are bounded: when the table is full the least recently used one goes,
 * and its client, likewise, gets 404 and starts a new one. A session
 * belongs to the key that opened it; another key sees 404. */
#include <stdio.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include "gw_mcp.h"

struct session {
	char id[33];
	int key;
	int64_t used_ms;
};

static struct session table[GW_MCP_MAX_SESSIONS];

static struct session *find(const char *id, int key)
{
	if (strlen(id) != 32)
		return NULL;
	for (int i = 0; i < GW_MCP_MAX_SESSIONS; i++)
		if (table[i].id[0] && !CRYPTO_memcmp(table[i].id, id, 32))
			return table[i].key == key ? &table[i] : NULL;
	return NULL;
}

int gw_mcp_session_new(int key, const char *proto, char id[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[16];
	struct session *s = &table[0];
	(void)proto;

	if (RAND_bytes(raw, sizeof raw) != 1)
		return -1;
	for (int i = 0; i < GW_MCP_MAX_SESSIONS; i++) {
		if (!table[i].id[0]) {
			s = &table[i];
			break;
		}
		if (table[i].used_ms < s->used_ms)
			s = &table[i];
	}
	for (size_t i = 0; i < sizeof raw; i++) {
		s->id[2 * i] = hex[raw[i] >> 4];
		s->id[2 * i + 1] = hex[raw[i] & 15];
	}
	s->id[32] = '\0';
	s->key = key;
	s->used_ms = gw_now_ms();
	memcpy(id, s->id, 33);
	return 0;
}

int gw_mcp_session_check(const char *id, int key)
{
	struct session *s = find(id, key);
	if (!s)
		return 0;
	s->used_ms = gw_now_ms();
	return 1;
}

int gw_mcp_session_end(const char *id, int key)
{
	struct session *s = find(id, key);
	if (!s)
		return 0;
	memset(s, 0, sizeof *s);
	return 1;
}
