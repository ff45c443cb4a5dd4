/* sbx cp: files in and out, streamed in 64 KiB pieces both ways (the
 * gateway streams them to and from the agent too). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "ID:PATH" -> id and path; 0 when arg is a local path. */
static int split_remote(const char *arg, char *id, size_t idlen, const char **path)
{
	const char *colon = strchr(arg, ':');
	size_t n;

	if (!colon || strncmp(arg, "sbx_", 4))
		return 0;
	n = (size_t)(colon - arg);
	if (n >= idlen || memchr(arg, '/', n))
		return 0;
	memcpy(id, arg, n);
	id[n] = '\0';
	*path = colon + 1;
	return 1;
}

static int files_path(char *out, size_t n, const char *id, const char *path)
{
	char enc[3 * 4096 + 1];

	if (!*path || strlen(path) > 4095 || cli_urlencode(path, enc, sizeof(enc))) {
		cli_errf("'%s': give a path of 1 to 4095 bytes", path);
		return -1;
	}
	if ((size_t)snprintf(out, n, "/v1/sandboxes/%s/files?path=%s", id, enc) >= n)
		return -1;
	return 0;
}

static int upload(const struct cli_cfg *c, const char *local, const char *id, const char *path)
{
	static char url[16384];
	struct sbx_err err = { 0 };
	struct cli_body b = { .fd = -1 };
	struct cli_http *h;
	struct stat st;
	int status, rc;

	if (files_path(url, sizeof(url), id, path))
		return CLI_EXIT_USAGE;
	b.fd = strcmp(local, "-") ? open(local, O_RDONLY | O_CLOEXEC) : 0;
	if (b.fd < 0) {
		cli_errf("%s: %s", local, strerror(errno));
		return CLI_EXIT_LOCAL;
	}
	if (fstat(b.fd, &st) || !S_ISREG(st.st_mode)) {
		cli_errf("%s: not a regular file (its size must be known before sending)", local);
		if (b.fd > 0)
			close(b.fd);
		return CLI_EXIT_LOCAL;
	}
	b.len = (size_t)st.st_size;
	h = cli_http_request(&c->url, c->key, "PUT", url, &b, &status, &err);
	if (b.fd > 0)
		close(b.fd);
	if (!h && err.code == EIO) { /* our side: the file shrank or could not be read */
		cli_errf("%s: %s", local, err.msg);
		return CLI_EXIT_LOCAL;
	}
	if (!h)
		return cli_fail_request(c, &err);
	if (status < 200 || status > 299)
		return cli_fail_status(h, status);
	rc = cli_http_read(h, url, sizeof(url), &err) < 0 ? CLI_EXIT_CONN : 0;
	cli_http_close(h);
	return rc;
}

static int download(const struct cli_cfg *c, const char *id, const char *path, const char *local)
{
	static char buf[65536];
	struct sbx_err err = { 0 };
	struct cli_http *h;
	int status, fd, rc = 0;

	if (files_path(buf, sizeof(buf), id, path))
		return CLI_EXIT_USAGE;
	h = cli_http_request(&c->url, c->key, "GET", buf, NULL, &status, &err);
	if (!h)
		return cli_fail_request(c, &err);
	if (status != 200)
		return cli_fail_status(h, status);
	/* opened only now, so a missing remote file leaves the local one alone */
	fd = strcmp(local, "-") ? open(local, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 1;
	if (fd < 0) {
		cli_errf("%s: %s", local, strerror(errno));
		cli_http_close(h);
		return CLI_EXIT_LOCAL;
	}
	for (;;) {
		ssize_t r = cli_http_read(h, buf, sizeof(buf), &err);

		if (r < 0) {
			cli_errf("%s: %s", path, err.msg);
			rc = CLI_EXIT_CONN;
			break;
		}
		if (!r)
			break;
		if (cli_write_all(fd, buf, (size_t)r)) {
			cli_errf("%s: %s", local, strerror(errno));
			rc = CLI_EXIT_LOCAL;
			break;
		}
	}
	if (fd != 1 && close(fd) && !rc) {
		cli_errf("%s: %s", local, strerror(errno));
		rc = CLI_EXIT_LOCAL;
	}
	cli_http_close(h);
	return rc;
}

int cli_cmd_cp(const struct cli_cfg *c, int argc, char **argv)
{
	char id[128];
	const char *path;

	if (argc != 3) {
		cli_errf("usage: sbx cp LOCAL ID:PATH | sbx cp ID:PATH LOCAL");
		return CLI_EXIT_USAGE;
	}
	if (split_remote(argv[1], id, sizeof(id), &path)) {
		if (split_remote(argv[2], id, sizeof(id), &path)) {
			cli_errf("cp: one side must be local");
			return CLI_EXIT_USAGE;
		}
		split_remote(argv[1], id, sizeof(id), &path);
		return download(c, id, path, argv[2]);
	}
	if (!split_remote(argv[2], id, sizeof(id), &path)) {
		cli_errf("cp: one side must be ID:PATH");
		return CLI_EXIT_USAGE;
	}
	return upload(c, argv[1], id, path);
}
