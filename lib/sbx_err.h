/* Errors as values: an errno-like code plus a message, wrapped with context
 * on the way up and logged once at the boundary. */
#ifndef SBX_ERR_H
#define SBX_ERR_H

#include <stddef.h>

struct sbx_err {
	int code;          /* errno value, or 0 when unset */
	char msg[512];
};

/* Set err (if non-NULL) to code and a formatted message. Returns -1 so
 * callers can write `return sbx_err_set(err, EINVAL, "...")`. */
int sbx_err_set(struct sbx_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Like sbx_err_set with code = errno and ": strerror(errno)" appended. */
int sbx_err_sys(struct sbx_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prefix the existing message with "context: ". Returns -1. */
int sbx_err_wrap(struct sbx_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
