/* MCP sessions (Streamable HTTP, Mcp-Session-Id): issued at initialize,
 * required on every later request. They live in the gateway's memory only
 * (a restarted gateway answers 404 and the client initializes again). A
 * session belongs to the key that opened it; another key sees 404.
 *
 * Each key has its own row of at most --mcp-sessions-per-key sessions: a
 * key at its cap replaces its own least recently used session, and never
 * touches another key's (one shared table let a key that opened 1100
 * sessions evict everyone else's). The whole table is GW_MAX_KEYS rows. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include "gw_mcp.h"

struct session {
	char id[33];                /* "" when free */
	uint64_t used;              /* last use, on the counter below */
};

static struct session *table;   /* GW_MAX_KEYS rows of per_key */
static int per_key;
/* Use order as a counter, not a clock: sessions opened within one
 * millisecond still have an oldest. */
static uint64_t uses;

int gw_mcp_sessions_configure(int max_per_key)
{
	if (max_per_key < 1)
		return -1;
	free(table);
	table = calloc((size_t)GW_MAX_KEYS * (size_t)max_per_key, sizeof *table);
	per_key = table ? max_per_key : 0;
	return table ? 0 : -1;
}

static struct session *row(int key)
{
	if (!table || key < 0 || key >= GW_MAX_KEYS)
		return NULL;
	return table + (size_t)key * (size_t)per_key;
}

static struct session *find(const char *id, int key)
{
	struct session *s = row(key);
	if (!s || strlen(id) != 32)
		return NULL;
	for (int i = 0; i < per_key; i++)
		if (s[i].id[0] && !CRYPTO_memcmp(s[i].id, id, 32))
			return &s[i];
	return NULL;
}

int gw_mcp_session_new(int key, const char *proto, char id[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[16];
	struct session *s = row(key), *slot;
	(void)proto;

	if (!s || RAND_bytes(raw, sizeof raw) != 1)
		return -1;
	slot = &s[0];
	for (int i = 0; i < per_key; i++) {
		if (!s[i].id[0]) {
			slot = &s[i];
			break;
		}
		if (s[i].used < slot->used)
			slot = &s[i];
	}
	for (size_t i = 0; i < sizeof raw; i++) {
		slot->id[2 * i] = hex[raw[i] >> 4];
		slot->id[2 * i + 1] = hex[raw[i] & 15];
	}
	slot->id[32] = '\0';
	slot->used = ++uses;
	memcpy(id, slot->id, 33);
	return 0;
}

int gw_mcp_session_check(const char *id, int key)
{
	struct session *s = find(id, key);
	if (!s)
		return 0;
	s->used = ++uses;
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
