#include "sbx_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static const char *log_prog = "sandbox";
static enum sbx_log_level log_max = SBX_LOG_INFO;

void sbx_log_init(const char *prog, enum sbx_log_level max)
{
	log_prog = prog;
	log_max = max;
}

void sbx_log_at(enum sbx_log_level lvl, const char *func, const char *fmt, ...)
{
	static const char *names[] = { "error", "warn", "info", "debug" };
	char line[2048];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int n;

	if (lvl > log_max)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line), "%02d:%02d:%02d.%03ld %s %s %s: ",
		     tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
		     log_prog, names[lvl], func);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One fputs per line so concurrent writers do not interleave mid-line. */
	fprintf(stderr, "%s\n", line);
}
