#define _GNU_SOURCE
/* Test/bench helper: attach to a command on a sandbox-agent UNIX socket and
 * consume its stream at full speed, checking every byte against the
 * repeating 16-byte pattern "abcdefghijklmno\n" (pass "-" to skip checks),
 * accounting for truncated gaps. Prints one JSON line:
 * {"bytes":N,"bad":N,"truncated":N,"exit":"...","secs":S}.
 * usage: flood_reader SOCKET ID|- PATTERN|- [CMD]  (ID "-" = exec CMD) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static unsigned char buf[4 << 20];
static unsigned char big[(4 << 20) + 16];   /* the pattern, from any phase */

/* Buffered input: frames are parsed out of big reads (few syscalls, so
 * the reader is not what limits the measurement). */
static unsigned char in[8 << 20];
static size_t in_off, in_len;

static int readn(int fd, unsigned char *p, size_t n)
{
	while (n) {
		size_t k;

		if (in_off == in_len) {
			ssize_t r = read(fd, in, sizeof(in));

			if (r <= 0)
				return -1;
			in_off = 0;
			in_len = (size_t)r;
		}
		k = in_len - in_off < n ? in_len - in_off : n;
		memcpy(p, in + in_off, k);
		in_off += k;
		p += k;
		n -= k;
	}
	return 0;
}

static void send_json(int fd, const char *s)
{
	unsigned char h[5];
	size_t n = strlen(s);

	h[0] = (unsigned char)(n >> 24); h[1] = (unsigned char)(n >> 16);
	h[2] = (unsigned char)(n >> 8); h[3] = (unsigned char)n; h[4] = 3;
	if (write(fd, h, 5) != 5 || write(fd, s, n) != (ssize_t)n)
		exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *pat = "abcdefghijklmno\n";
	uint64_t off = 0, bad = 0, trunc = 0;
	char req[8192], exitmsg[256] = "null";
	struct timespec t0, t1;
	int fd, check;

	if (argc < 4)
		return 2;
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)pat[i % 16];
	check = strcmp(argv[3], "-") != 0;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	{
		int sz = 8 << 20;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return 2;
	if (strcmp(argv[2], "-"))
		snprintf(req, sizeof(req), "{\"op\":\"attach\",\"id\":\"%s\"}", argv[2]);
	else
		snprintf(req, sizeof(req), "{\"op\":\"exec\",\"cmd\":\"sh\",\"args\":[\"-c\",\"%s\"],\"attach\":true}",
			 argc > 4 ? argv[4] : "true");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	send_json(fd, req);
	{
		unsigned char h[5];
		uint32_t n;

		/* the reply to attach/exec */
		if (readn(fd, h, 5) < 0)
			return 3;
		n = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
		if (n > 4096 || readn(fd, buf, n) < 0 || !memmem(buf, n, "\"ok\":true", 9))
			return 3;
		printf("attached\n");
		fflush(stdout);
	}
	for (;;) {
		unsigned char h[5];
		uint32_t n;

		if (readn(fd, h, 5) < 0)
			break;
		n = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
		if (n > sizeof(buf) - 1 || readn(fd, buf, n) < 0)
			return 3;
		if (h[4] == 1 || h[4] == 2) {
			if (check && memcmp(buf, big + off % 16, n))
				bad++;
			off += n;
		} else if (h[4] == 3) {
			buf[n] = 0;
			if (strstr((char *)buf, "\"truncated\"")) {
				const char *b = strstr((char *)buf, "\"bytes\":");
				uint64_t k = b ? strtoull(b + 8, NULL, 10) : 0;

				trunc += k;
				off += k;
			} else if (strstr((char *)buf, "\"exit\"")) {
				snprintf(exitmsg, sizeof(exitmsg), "%.200s", (char *)buf);
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("{\"bytes\":%llu,\"bad\":%llu,\"truncated\":%llu,\"secs\":%.3f,\"exit\":%s}\n",
	       (unsigned long long)off, (unsigned long long)bad, (unsigned long long)trunc,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, exitmsg);
	return 0;
}
