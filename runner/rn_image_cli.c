/* The image subcommand (rn_image_cli.h). Prints the import's JSON on
 * success; the error on stderr with exit 1 (exit 2 for a bad command). */
#include "rn_image_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rn_oci_pull.h"

#define DEFAULT_MAX_MB 4096

static void usage(FILE *f)
{
	fprintf(f, "usage: sandbox-runner image import FILE NAME|pull REF NAME [--image-dir DIR]\n"
		"         [--image-store-mb N] [--image-max-mb N] [--insecure]\n");
}

static int mib(const char *v, unsigned long long *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (!*v || *end || errno || n < 1 || n > (1ull << 40)) {
		fprintf(stderr, "sandbox-runner image: a size must be a positive number of MiB\n");
		return -1;
	}
	*out = n << 20;
	return 0;
}

int rn_image_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "image-dir", required_argument, NULL, 'd' },
		{ "image-store-mb", required_argument, NULL, 's' },
		{ "image-max-mb", required_argument, NULL, 'm' },
		{ "insecure", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long store = 0, max = (unsigned long long)DEFAULT_MAX_MB << 20;
	const char *dir = "/var/cache/sandbox/images";
	struct sbx_err err = { 0, "" };
	cJSON *out = NULL;
	int c, insecure = 0, rc;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 's': if (mib(optarg, &store) < 0) return 2; break;
		case 'm': if (mib(optarg, &max) < 0) return 2; break;
		case 'k': insecure = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != 3 || (strcmp(argv[optind], "import") && strcmp(argv[optind], "pull"))) {
		usage(stderr);
		return 2;
	}
	struct oci_import_opts o = { dir, store, max, NULL };
	if (!strcmp(argv[optind], "import")) {
		int fd = strcmp(argv[optind + 1], "-") ? open(argv[optind + 1], O_RDONLY | O_CLOEXEC) : 0;
		if (fd < 0) {
			fprintf(stderr, "sandbox-runner image: %s: %s\n", argv[optind + 1], strerror(errno));
			return 1;
		}
		rc = oci_import_archive(&o, fd, argv[optind + 2], &out, &err);
		if (fd)
			close(fd);
	} else {
		rc = oci_pull(&o, argv[optind + 1], argv[optind + 2], insecure, &out, &err);
	}
	if (rc < 0) {
		fprintf(stderr, "sandbox-runner image: %s\n", err.msg);
		return 1;
	}
	char *txt = cJSON_PrintUnformatted(out);
	printf("%s\n", txt ? txt : "{}");
	cJSON_free(txt);
	cJSON_Delete(out);
	return 0;
}
