#define _GNU_SOURCE
/* bench/ws_reader.c: the WebSocket client of bench/streams.sh. A small
 * RFC 6455 client (plain TCP, no TLS): HTTP upgrade with a random
 * Sec-WebSocket-Key, 101 and Sec-WebSocket-Accept checked, then server
 * frames parsed as they stream in (7/16/64-bit lengths, fragments, control
 * frames between fragments); our own frames are masked as the RFC demands.
 * It can also speak the agent protocol (docs/protocol.md) to a sandbox's
 * agent socket, so the same latency code measures the agent-only path.
 *
 * usage:
 *   ws_reader tput [-raw] [-send TEXT] URL
 *       one stream: count the binary payload bytes (minus the 1-byte stream
 *       tag, unless -raw: websocketd sends bare bytes) until the exit
 *       message or the close. Prints one JSON line with bytes, truncated,
 *       secs (from the end of the upgrade).
 *   ws_reader lat [-send TEXT] [-timeout S] [-dump FILE] -f FILE | URL...
 *       N streams at once (poll): once all are open, each gets -send as
 *       stdin; every stdout line is a CLOCK_REALTIME timestamp in ns
 *       written by the command; latency = receipt time - timestamp.
 *       Prints one JSON line with the count and p50/p99/max in us;
 *       -dump FILE also writes every sample as "timestamp_ns latency_ns
 *       ws|agent|runner" (the kind of URL that got it).
 *   ws_reader idle -f FILE | URL...
 *       open them all, print "open N", hold them (answering pings) until
 *       stdin closes, then print one JSON line (how many closed early).
 * URL: ws://HOST:PORT/PATH, or agent:SOCKET_PATH#COMMAND_ID (an agent
 * `attach`), or runner:RUNNER_SOCKET#SANDBOX_ID#COMMAND_ID (the same
 * through the runner's `connect`, the way the gateway reaches agents).
 * -send TEXT is sent as stdin with "\n" appended (a binary message: tag 0
 * then the bytes; an agent STDIN frame), once per command: on the first of
 * its connections. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum { K_WS, K_AGENT };                  /* what a connection speaks */
enum { F_NONE, F_DATA, F_TEXT, F_CTL };  /* what the current frame carries */
enum { M_TPUT, M_LAT, M_IDLE };

#define MSG_MAX 8192   /* text messages kept (exit, truncated, errors) */

struct conn {
	int fd, kind, done;
	const char *path;           /* "ws", "agent" or "runner", for -dump */
	int stdin_owner;            /* this connection sends the command's stdin */
	unsigned char *in;          /* received bytes not parsed yet */
	size_t in_len, in_cap;
	/* the frame being parsed */
	int fkind, fop, fin;
	uint64_t left;              /* its payload bytes still to come */
	/* the message being assembled (a WebSocket message may be fragmented) */
	int mkind;                  /* F_DATA or F_TEXT */
	int need_tag, tag;
	char msg[MSG_MAX + 1];
	size_t msg_len;
	unsigned char ctl[128];     /* a control frame's payload (<= 125) */
	size_t ctl_len;
	/* latency: the line being read and when its bytes arrived */
	uint64_t num;
	int64_t t_read_ns;
	int close_code;
};

static int mode, raw;
static uint64_t total_bytes, total_trunc;
static int64_t *lat_ns;                  /* latency samples */
static size_t nlat, lat_cap;
static char exit_msg[512] = "null";
static FILE *dump;                       /* -dump: every sample, for a closer look */

static int64_t now_ns(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "ws_reader: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	exit(2);
}

/* Returns 0, or -1 when the peer went away. */
static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p = (const char *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

static void b64(const unsigned char *p, size_t n, char *out)
{
	static const char a[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);

		*out++ = a[v >> 18];
		*out++ = a[(v >> 12) & 63];
		*out++ = i + 1 < n ? a[(v >> 6) & 63] : '=';
		*out++ = i + 2 < n ? a[v & 63] : '=';
	}
	*out = 0;
}

/* One client frame. The RFC requires client frames to be masked with a
 * fresh key each (so proxies cannot be fooled by chosen bytes). A failed
 * write is left to the next read to notice. */
static void ws_send(struct conn *c, int opcode, const void *p, size_t n)
{
	unsigned char h[14], mask[4], *f;
	size_t hl = 2;

	h[0] = (unsigned char)(0x80 | opcode);
	if (n < 126) {
		h[1] = (unsigned char)(0x80 | n);
	} else if (n < 65536) {
		h[1] = 0x80 | 126;
		h[2] = (unsigned char)(n >> 8);
		h[3] = (unsigned char)n;
		hl = 4;
	} else {
		h[1] = 0x80 | 127;
		for (int i = 0; i < 8; i++)
			h[2 + i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
		hl = 10;
	}
	if (getrandom(mask, 4, 0) != 4)
		die("getrandom", NULL);
	memcpy(h + hl, mask, 4);
	hl += 4;
	f = malloc(hl + n);
	if (!f)
		die("out of memory", NULL);
	memcpy(f, h, hl);
	for (size_t i = 0; i < n; i++)
		f[hl + i] = ((const unsigned char *)p)[i] ^ mask[i & 3];
	(void)write_all(c->fd, f, hl + n);
	free(f);
}

static void agent_send(struct conn *c, int type, const void *p, size_t n)
{
	unsigned char h[5] = { (unsigned char)(n >> 24), (unsigned char)(n >> 16),
			       (unsigned char)(n >> 8), (unsigned char)n, (unsigned char)type };

	if (write_all(c->fd, h, 5) < 0 || write_all(c->fd, p, n) < 0)
		die("write to the agent", strerror(errno));
}

/* stdin for the command: tag 0 + bytes, or an agent STDIN frame */
static void send_stdin(struct conn *c, const char *text)
{
	size_t n = strlen(text);
	unsigned char *m = malloc(n + 2);

	if (!m)
		die("out of memory", NULL);
	m[0] = 0;
	memcpy(m + 1, text, n);
	m[n + 1] = '\n';
	if (c->kind == K_WS)
		ws_send(c, 2, m, n + 2);
	else
		agent_send(c, 0, m + 1, n + 1);
	free(m);
}

/* ---- what arrives ---- */

static void record_latency(int64_t ns)
{
	if (nlat == lat_cap) {
		lat_cap = lat_cap ? 2 * lat_cap : 65536;
		lat_ns = realloc(lat_ns, lat_cap * sizeof(*lat_ns));
		if (!lat_ns)
			die("out of memory", NULL);
	}
	lat_ns[nlat++] = ns;
}

/* Output bytes of one stream (tag 1 stdout, 2 stderr). */
static void data(struct conn *c, const unsigned char *p, size_t n)
{
	total_bytes += n;
	if (mode != M_LAT || c->tag != 1)
		return;
	/* each line is a decimal timestamp; a line may span messages */
	for (size_t i = 0; i < n; i++) {
		if (p[i] >= '0' && p[i] <= '9') {
			c->num = c->num * 10 + (p[i] - '0');
		} else if (p[i] == '\n') {
			if (c->num) {
				record_latency(c->t_read_ns - (int64_t)c->num);
				if (dump)
					fprintf(dump, "%lld %lld %s\n", (long long)c->num,
						(long long)(c->t_read_ns - (int64_t)c->num),
						c->path);
			}
			c->num = 0;
		}
	}
}

/* A whole text message (WebSocket) or JSON frame (agent). */
static void text(struct conn *c)
{
	const char *b;

	c->msg[c->msg_len] = 0;
	if (strstr(c->msg, "\"type\":\"exit\"")) {
		snprintf(exit_msg, sizeof(exit_msg), "%.500s", c->msg);
		c->done = 1;
	} else if (strstr(c->msg, "\"type\":\"truncated\"") && (b = strstr(c->msg, "\"bytes\":"))) {
		total_trunc += strtoull(b + 8, NULL, 10);
	} else if (strstr(c->msg, "\"error\"")) {
		/* a WebSocket error message, or a failed agent request */
		fprintf(stderr, "ws_reader: %s\n", c->msg);
		if (c->kind == K_AGENT)
			c->done = 1;
	}
}

/* Payload bytes of the current frame, as they come. */
static void payload(struct conn *c, const unsigned char *p, size_t n)
{
	if (c->fkind == F_CTL) {
		size_t k = n < sizeof(c->ctl) - c->ctl_len ? n : sizeof(c->ctl) - c->ctl_len;

		memcpy(c->ctl + c->ctl_len, p, k);
		c->ctl_len += k;
	} else if (c->fkind == F_TEXT) {
		size_t k = n < MSG_MAX - c->msg_len ? n : MSG_MAX - c->msg_len;

		memcpy(c->msg + c->msg_len, p, k);
		c->msg_len += k;
	} else if (c->fkind == F_DATA) {
		if (c->need_tag && n) {   /* a stream message starts with its tag */
			c->tag = p[0];
			c->need_tag = 0;
			p++;
			n--;
		}
		data(c, p, n);
	}
}

/* The current frame is complete. */
static void frame_end(struct conn *c)
{
	if (c->kind == K_AGENT) {
		if (c->fkind == F_TEXT)
			text(c);
		return;
	}
	if (c->fkind == F_CTL) {
		if (c->fop == 8) {        /* close: answer it, we are done */
			c->close_code = c->ctl_len >= 2 ? c->ctl[0] << 8 | c->ctl[1] : 1005;
			ws_send(c, 8, c->ctl, c->ctl_len >= 2 ? 2 : 0);
			c->done = 1;
		} else if (c->fop == 9) { /* ping: pong with the same payload */
			ws_send(c, 10, c->ctl, c->ctl_len);
		}
		return;
	}
	if (c->fin && c->mkind == F_TEXT)
		text(c);
}

/* Parse a frame header at p (avail bytes); returns its length, 0 if
 * incomplete, -1 if the server broke the protocol. */
static long header(struct conn *c, const unsigned char *p, size_t avail)
{
	uint64_t len;
	size_t hl;
	int op;

	if (c->kind == K_AGENT) {
		if (avail < 5)
			return 0;
		c->left = (uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3];
		c->fin = 1;
		if (p[4] == 1 || p[4] == 2) {
			c->fkind = F_DATA;
			c->tag = p[4];
			c->need_tag = 0;
		} else if (p[4] == 3) {
			c->fkind = F_TEXT;
			c->msg_len = 0;
		} else {
			c->fkind = F_NONE;
		}
		return 5;
	}
	if (avail < 2)
		return 0;
	op = p[0] & 15;
	if (p[1] & 0x80)          /* servers must not mask */
		return -1;
	len = p[1] & 127;
	hl = 2;
	if (len == 126) {
		if (avail < 4)
			return 0;
		len = (uint64_t)p[2] << 8 | p[3];
		hl = 4;
	} else if (len == 127) {
		if (avail < 10)
			return 0;
		len = 0;
		for (int i = 0; i < 8; i++)
			len = len << 8 | p[2 + i];
		hl = 10;
	}
	c->left = len;
	c->fop = op;
	c->fin = p[0] >> 7;
	if (op >= 8) {
		c->fkind = F_CTL;
		c->ctl_len = 0;
		return len > 125 ? -1 : (long)hl;
	}
	if (op == 1 || op == 2) { /* a new message */
		c->mkind = op == 1 ? F_TEXT : F_DATA;
		c->msg_len = 0;
		c->need_tag = op == 2 && !raw;
		c->tag = raw ? 1 : 0;
	} else if (op != 0) {
		return -1;
	}
	c->fkind = c->mkind;
	return (long)hl;
}

/* Parse what is buffered; keeps an incomplete header for the next read. */
static void parse(struct conn *c)
{
	size_t off = 0;

	while (off < c->in_len && !c->done) {
		if (c->left) {
			size_t k = c->in_len - off < c->left ? c->in_len - off : (size_t)c->left;

			payload(c, c->in + off, k);
			off += k;
			c->left -= k;
			if (!c->left)
				frame_end(c);
			continue;
		}
		long h = header(c, c->in + off, c->in_len - off);

		if (h < 0)
			die("protocol error from the server", NULL);
		if (h == 0)
			break;
		off += (size_t)h;
		if (!c->left)
			frame_end(c);
	}
	memmove(c->in, c->in + off, c->in_len - off);
	c->in_len -= off;
}

/* Read what is there and parse it; the peer closing ends the connection. */
static void pump(struct conn *c)
{
	ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);

	if (n <= 0) {
		if (n < 0 && errno == EINTR)
			return;
		c->done = 1;
		return;
	}
	c->t_read_ns = now_ns(CLOCK_REALTIME);
	c->in_len += (size_t)n;
	parse(c);
}

/* ---- opening ---- */

/* spec: SOCKET#COMMAND_ID (an agent socket), or with via_runner
 * SOCKET#SANDBOX_ID#COMMAND_ID (a runner socket: its `connect` to the
 * agent first, the path the gateway takes; the runner's ok reply is one
 * more JSON frame, which text() ignores). */
static void open_agent(struct conn *c, const char *spec, int via_runner)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *hash = strchr(spec, '#'), *cid = strrchr(spec, '#');
	char req[256];

	if (!hash || (size_t)(hash - spec) >= sizeof(sa.sun_path) || (via_runner && cid == hash))
		die("bad agent URL", spec);
	memcpy(sa.sun_path, spec, (size_t)(hash - spec));
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("connect", sa.sun_path);
	if (via_runner) {
		snprintf(req, sizeof(req), "{\"op\":\"connect\",\"id\":\"%.*s\",\"port\":1024}",
			 (int)(cid - hash - 1), hash + 1);
		agent_send(c, 3, req, strlen(req));
	}
	snprintf(req, sizeof(req), "{\"op\":\"attach\",\"id\":\"%s\",\"offset\":0,\"stdin\":%s}",
		 cid + 1, c->stdin_owner ? "true" : "false");
	agent_send(c, 3, req, strlen(req));
	c->kind = K_AGENT;
	c->path = via_runner ? "runner" : "agent";
}

static void open_ws(struct conn *c, const char *url)
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	char host[256], port[16], req[2048], key[32], want[64], acc[160];
	unsigned char nonce[16], sha[EVP_MAX_MD_SIZE];
	unsigned shalen;
	const char *path, *hp;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai;
	char *end;
	int one = 1;

	if (strncmp(url, "ws://", 5))
		die("not a ws:// URL", url);
	hp = url + 5;
	path = strchr(hp, '/');
	if (!path || sscanf(hp, "%255[^:/]:%15[0-9]", host, port) != 2)
		die("bad URL (ws://HOST:PORT/PATH)", url);
	if (getaddrinfo(host, port, &hints, &ai))
		die("cannot resolve", host);
	c->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, ai->ai_addr, ai->ai_addrlen) < 0)
		die("connect", url);
	freeaddrinfo(ai);
	/* our writes are tiny and latency matters (stdin "go") */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	if (getrandom(nonce, sizeof(nonce), 0) != sizeof(nonce))
		die("getrandom", NULL);
	b64(nonce, sizeof(nonce), key);
	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", path, host, port, key);
	if (write_all(c->fd, req, strlen(req)) < 0)
		die("write", strerror(errno));

	/* the response head; bytes after it are already frames */
	for (;;) {
		ssize_t n;

		if (c->in_len == c->in_cap)
			die("response head too long", url);
		n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
		if (n <= 0)
			die("no upgrade response", url);
		c->in_len += (size_t)n;
		c->in[c->in_len] = 0;   /* in_cap leaves room for this */
		if ((end = memmem(c->in, c->in_len, "\r\n\r\n", 4)))
			break;
	}
	if (strncmp((char *)c->in, "HTTP/1.1 101", 12)) {
		*end = 0;
		die("upgrade refused", (char *)c->in);
	}
	/* Sec-WebSocket-Accept = base64(SHA-1(key + GUID)): proves a
	 * WebSocket server answered this very request */
	snprintf(req, sizeof(req), "%s%s", key, guid);
	if (!EVP_Digest(req, strlen(req), sha, &shalen, EVP_sha1(), NULL))
		die("sha1", NULL);
	b64(sha, shalen, want);
	*end = 0;
	{
		const char *a = strcasestr((char *)c->in, "\r\nSec-WebSocket-Accept:");

		if (!a || sscanf(a + 23, " %159s", acc) != 1 || strcmp(acc, want))
			die("bad Sec-WebSocket-Accept", url);
	}
	end += 4;
	c->in_len -= (size_t)(end - (char *)c->in);
	memmove(c->in, end, c->in_len);
	c->kind = K_WS;
	c->path = "ws";
}

/* The command id of a URL (after "/commands/" or the last '#'), into id. */
static void cmd_of(const char *url, char *id, size_t n)
{
	const char *p = strstr(url, "/commands/"), *h = strrchr(url, '#');

	p = p ? p + 10 : h ? h + 1 : url;
	snprintf(id, n, "%.*s", (int)strcspn(p, "/?"), p);
}

/* stdin_owner: this connection sends the command's stdin (an agent takes
 * one stdin writer per command, so only one connection asks for it). */
static struct conn *conn_open(const char *url, size_t bufsize, int stdin_owner)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c || !(c->in = malloc(bufsize + 1)))
		die("out of memory", NULL);
	c->in_cap = bufsize;
	c->stdin_owner = stdin_owner;
	if (!strncmp(url, "agent:", 6))
		open_agent(c, url + 6, 0);
	else if (!strncmp(url, "runner:", 7))
		open_agent(c, url + 7, 1);
	else
		open_ws(c, url);
	return c;
}

static void conn_close(struct conn *c)
{
	close(c->fd);
	free(c->in);
	free(c);
}

/* ---- modes ---- */

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(double q)
{
	size_t i = (size_t)(q * (double)nlat);

	return nlat ? (double)lat_ns[i < nlat ? i : nlat - 1] / 1000.0 : -1;
}

static int run_tput(const char *url, const char *send)
{
	/* big reads: the client must not be what limits the measurement */
	struct conn *c = conn_open(url, 4 << 20, send != NULL);
	int64_t t0 = now_ns(CLOCK_MONOTONIC), t1;

	if (send)
		send_stdin(c, send);
	parse(c);
	while (!c->done)
		pump(c);
	t1 = now_ns(CLOCK_MONOTONIC);
	printf("{\"bytes\":%llu,\"truncated\":%llu,\"secs\":%.3f,\"close\":%d,\"exit\":%s}\n",
	       (unsigned long long)total_bytes, (unsigned long long)total_trunc,
	       (double)(t1 - t0) / 1e9, c->close_code, exit_msg);
	conn_close(c);
	return 0;
}

/* Poll all connections (and stdin, in idle mode) until every stream is
 * done, stdin closes (idle) or the deadline passes. Returns how many are
 * done. */
static size_t poll_loop(struct conn **cs, size_t n, int watch_stdin, int64_t deadline)
{
	struct pollfd *pf = calloc(n + 1, sizeof(*pf));
	size_t ndone = 0;

	if (!pf)
		die("out of memory", NULL);
	for (;;) {
		int64_t left = deadline - now_ns(CLOCK_MONOTONIC);

		ndone = 0;
		for (size_t i = 0; i < n; i++) {
			pf[i].fd = cs[i]->done ? -1 : cs[i]->fd;   /* -1: poll skips it */
			pf[i].events = POLLIN;
			ndone += cs[i]->done != 0;
		}
		pf[n].fd = watch_stdin ? 0 : -1;
		pf[n].events = POLLIN;
		if ((!watch_stdin && ndone == n) || left <= 0)
			break;
		if (poll(pf, n + 1, (int)(left / 1000000) + 1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll", strerror(errno));
		}
		for (size_t i = 0; i < n; i++) {
			if (pf[i].revents)
				pump(cs[i]);
		}
		if (watch_stdin && pf[n].revents) {
			char b[256];

			if (read(0, b, sizeof(b)) <= 0)
				break;
		}
	}
	free(pf);
	return ndone;
}

static char **read_urls(const char *file, size_t *n)
{
	FILE *f = fopen(file, "r");
	char line[4096], **v = NULL;
	size_t cap = 0;

	if (!f)
		die("cannot open", file);
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0])
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				die("out of memory", NULL);
		}
		v[(*n)++] = strdup(line);
	}
	fclose(f);
	return v;
}

static int run_many(char **urls, size_t n, const char *send, double timeout)
{
	struct conn **cs = calloc(n, sizeof(*cs));
	size_t ndone;

	if (!cs)
		die("out of memory", NULL);
	for (size_t i = 0; i < n; i++) {
		/* stdin goes to each command once, on its first connection */
		char id[128], other[128];
		int first = 1;

		cmd_of(urls[i], id, sizeof(id));
		for (size_t j = 0; j < i && first && send; j++) {
			cmd_of(urls[j], other, sizeof(other));
			first = strcmp(id, other) != 0;
		}
		cs[i] = conn_open(urls[i], 64 << 10, send && first);
	}
	if (mode == M_IDLE) {
		printf("open %zu\n", n);
		fflush(stdout);
		ndone = poll_loop(cs, n, 1, INT64_MAX);
		printf("{\"open\":%zu,\"closed_early\":%zu}\n", n, ndone);
	} else {
		/* everything is attached before any command starts writing */
		for (size_t i = 0; i < n; i++) {
			if (cs[i]->stdin_owner)
				send_stdin(cs[i], send);
			parse(cs[i]);
		}
		ndone = poll_loop(cs, n, 0, now_ns(CLOCK_MONOTONIC) + (int64_t)(timeout * 1e9));
		qsort(lat_ns, nlat, sizeof(*lat_ns), cmp64);
		printf("{\"conns\":%zu,\"done\":%zu,\"samples\":%zu,\"bytes\":%llu,\"truncated\":%llu,"
		       "\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f}\n",
		       n, ndone, nlat, (unsigned long long)total_bytes,
		       (unsigned long long)total_trunc, pct(0.5), pct(0.99), pct(1.0));
	}
	for (size_t i = 0; i < n; i++)
		conn_close(cs[i]);
	free(cs);
	return 0;
}

int main(int argc, char **argv)
{
	const char *send = NULL, *file = NULL;
	double timeout = 60;
	struct rlimit rl;
	int i = 2;

	if (argc < 3)
		die("usage: ws_reader tput|lat|idle [-raw] [-send TEXT] [-timeout S] [-f FILE] URL...",
		    NULL);
	if (!strcmp(argv[1], "tput"))
		mode = M_TPUT;
	else if (!strcmp(argv[1], "lat"))
		mode = M_LAT;
	else if (!strcmp(argv[1], "idle"))
		mode = M_IDLE;
	else
		die("unknown mode", argv[1]);
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-raw"))
			raw = 1;
		else if (!strcmp(argv[i], "-send") && i + 1 < argc)
			send = argv[++i];
		else if (!strcmp(argv[i], "-timeout") && i + 1 < argc)
			timeout = atof(argv[++i]);
		else if (!strcmp(argv[i], "-f") && i + 1 < argc)
			file = argv[++i];
		else if (!strcmp(argv[i], "-dump") && i + 1 < argc) {
			if (!(dump = fopen(argv[++i], "w")))
				die("cannot write", argv[i]);
		}
		else
			die("bad option", argv[i]);
	}
	signal(SIGPIPE, SIG_IGN);   /* a peer that went away is seen by read() */
	/* a thousand streams need more than the usual 1024 descriptors */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (mode == M_TPUT) {
		if (i >= argc)
			die("tput needs a URL", NULL);
		return run_tput(argv[i], send);
	}
	if (file) {
		size_t n;
		char **v = read_urls(file, &n);

		return run_many(v, n, send, timeout);
	}
	if (i >= argc)
		die("no URLs", NULL);
	return run_many(argv + i, (size_t)(argc - i), send, timeout);
}
