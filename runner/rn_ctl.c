#include "rn_ctl.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cJSON.h>

#include "sbx_buf.h"
#include "sbx_frame.h"
#include "sbx_fs.h"
#include "sbx_net.h"

#define CTL_TIMEOUT_MS 10000

static void usage(FILE *f)
{
	fprintf(f, "usage: sandbox-runner ctl status|drain|undrain [--socket PATH]\n");
}

/* One reply frame into b; its payload via f. 0, or -1 with errno. */
static int read_reply(int fd, struct sbx_buf *b, struct sbx_frame *f)
{
	struct sbx_err err = { 0, "" };

	for (;;) {
		unsigned char *p;
		long n;
		ssize_t k;

		n = sbx_frame_decode(sbx_buf_head(b), b->len, 0, f, &err);
		if (n > 0)
			return 0;
		if (n < 0) {
			errno = EPROTO;
			return -1;
		}
		p = sbx_buf_reserve(b, 65536);
		if (!p)
			return -1;
		k = recv(fd, p, 65536, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = ECONNRESET;
			return -1;
		}
		sbx_buf_commit(b, (size_t)k);
	}
}

int rn_ctl_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *sock = "/run/sandbox/runner.sock", *cmd;
	char req[64];
	unsigned char hdr[SBX_FRAME_HDR];
	struct sbx_buf b;
	struct sbx_frame f;
	cJSON *rep;
	int c, fd, ok;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': sock = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind];
	if (!strcmp(cmd, "status"))
		snprintf(req, sizeof(req), "{\"op\":\"status\"}");
	else if (!strcmp(cmd, "drain") || !strcmp(cmd, "undrain"))
		snprintf(req, sizeof(req), "{\"op\":\"drain\",\"draining\":%s}",
			 !strcmp(cmd, "drain") ? "true" : "false");
	else {
		fprintf(stderr, "sandbox-runner ctl: unknown command \"%.32s\"\n", cmd);
		usage(stderr);
		return 2;
	}
	fd = sbx_unix_connect(sock, CTL_TIMEOUT_MS);
	if (fd < 0) {
		fprintf(stderr, "sandbox-runner ctl: %s: %s\n", sock, strerror(errno));
		return 1;
	}
	sbx_frame_header(hdr, SBX_FRAME_JSON, (uint32_t)strlen(req));
	sbx_buf_init(&b, SBX_FRAME_MAX + SBX_FRAME_HDR);
	if (sbx_write_all(fd, hdr, sizeof(hdr)) < 0 ||
	    sbx_write_all(fd, (const unsigned char *)req, strlen(req)) < 0 ||
	    read_reply(fd, &b, &f) < 0) {
		fprintf(stderr, "sandbox-runner ctl: %s: %s\n", sock, strerror(errno));
		close(fd);
		sbx_buf_free(&b);
		return 1;
	}
	close(fd);
	printf("%.*s\n", (int)f.len, (const char *)f.payload);
	rep = cJSON_ParseWithLength((const char *)f.payload, f.len);
	ok = rep && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rep, "ok"));
	cJSON_Delete(rep);
	sbx_buf_free(&b);
	return ok ? 0 : 1;
}
