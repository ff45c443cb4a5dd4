/* sandbox-gvisor-watch: a gvisor sandbox's watcher (runner/driver_gvisor_watch.c)
 * as a program of its own, which only the runner starts. It is linked with
 * libc alone: the runner's binary brings libcrypto, whose relocated pages
 * (about 0.5 MiB) every watcher would hold for as long as its sandbox runs. */
#include <stdio.h>
#include <string.h>

#include "../driver_gvisor.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], GV_WATCH_CMD) == 0)
		return gv_watch_main(argc - 1, argv + 1);
	fprintf(stderr, GV_WATCH_EXE ": the runner's gvisor driver starts this, "
		"as `" GV_WATCH_EXE " " GV_WATCH_CMD " ...`\n");
	return 2;
}
