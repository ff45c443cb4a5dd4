/* One-line logging to stderr: "<time> <prog> <level> <func>: message". */
#ifndef SBX_LOG_H
#define SBX_LOG_H

enum sbx_log_level { SBX_LOG_ERR, SBX_LOG_WARN, SBX_LOG_INFO, SBX_LOG_DEBUG };

/* Program name shown on every line and the most verbose level printed. */
void sbx_log_init(const char *prog, enum sbx_log_level max);
void sbx_log_at(enum sbx_log_level lvl, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define sbx_err_log(...)  sbx_log_at(SBX_LOG_ERR, __func__, __VA_ARGS__)
#define sbx_warn(...)     sbx_log_at(SBX_LOG_WARN, __func__, __VA_ARGS__)
#define sbx_info(...)     sbx_log_at(SBX_LOG_INFO, __func__, __VA_ARGS__)
#define sbx_debug(...)    sbx_log_at(SBX_LOG_DEBUG, __func__, __VA_ARGS__)

#endif
