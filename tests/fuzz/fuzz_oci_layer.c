/* libFuzzer target: the layer walker (runner/rn_oci_layer.c over
 * rn_oci_tar.c) given any bytes as a layer, unpacked into a fresh
 * directory under a scratch parent: whatever it accepts or refuses,
 * nothing may appear in the parent beside that directory. Runs as root
 * (the walker sets owners), like the runner. */
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../runner/rn_oci_compose.h"
#include "../../runner/rn_oci_layer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int parent = -1;
static char scratch[] = "/tmp/fuzz_oci_layer.XXXXXX";

static void remove_scratch(void)
{
	rmdir(scratch);
}

static int entries(int dir)
{
	DIR *d = fdopendir(dup(dir));
	struct dirent *e;
	int n = 0;

	rewinddir(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oci_layer_stats st;
	struct sbx_err err;
	unsigned char d[32];
	int src, dir;

	if (parent < 0) {
		if (!mkdtemp(scratch))
			abort();
		atexit(remove_scratch);
		parent = open(scratch, O_RDONLY | O_DIRECTORY);
	}
	src = memfd_create("layer", MFD_CLOEXEC);
	if (src < 0 || write(src, data, size) != (ssize_t)size)
		abort();
	lseek(src, 0, SEEK_SET);
	if (mkdirat(parent, "l", 0755) < 0 || (dir = openat(parent, "l", O_RDONLY | O_DIRECTORY)) < 0)
		abort();
	(void)oci_layer_unpack(src, dir, 1 << 20, NULL, d, &st, &err);
	close(dir);
	close(src);
	if (entries(parent) != 1)
		__builtin_trap();   /* something landed beside the layer's dir */
	if (oci_remove_at(parent, "l") < 0)
		abort();
	return 0;
}
