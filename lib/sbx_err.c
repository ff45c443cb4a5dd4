#include "sbx_err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sbx_err_set(struct sbx_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int sbx_err_sys(struct sbx_err *err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	size_t n;

	if (!err)
		return -1;
	err->code = saved;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(saved));
	errno = saved;
	return -1;
}

int sbx_err_wrap(struct sbx_err *err, const char *fmt, ...)
{
	char old[sizeof(err->msg)];
	va_list ap;
	int n;

	if (!err)
		return -1;
	memcpy(old, err->msg, sizeof(old));
	va_start(ap, fmt);
	n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, ": %.*s",
			 (int)(sizeof(err->msg) - (size_t)n), old);
	return -1;
}
