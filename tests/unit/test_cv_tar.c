/* Unit tests of the @vercel/sandbox fs/write archive reader
 * (gateway/vercel/compat_vercel_tar.c): ustar entries fed a byte at a time, pax
 * long names, names that escape, the tar-bomb bound at the header, bad
 * checksums, and cut or trailing gzip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../../gateway/vercel/compat_vercel_tar.h"
#include "../../lib/sbx_tarpath.h"

static unsigned char tarbuf[1 << 16];
static size_t tarlen;

static void header(const char *name, size_t size, char type)
{
	unsigned char *h = tarbuf + tarlen;
	unsigned sum = 0;
	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	snprintf((char *)h + 100, 8, "%07o", 0644);
	snprintf((char *)h + 124, 12, "%011zo", size);
	memset(h + 148, ' ', 8);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	tarlen += 512;
}

static void data(const void *p, size_t n)
{
	memcpy(tarbuf + tarlen, p, n);
	tarlen += (n + 511) / 512 * 512;
}

static void end(void)
{
	memset(tarbuf + tarlen, 0, 1024);
	tarlen += 1024;
}

static unsigned char gz[1 << 17];

static size_t gzip(const unsigned char *p, size_t n)
{
	z_stream z = { 0 };
	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)(uintptr_t)p;
	z.avail_in = (uInt)n;
	z.next_out = gz;
	z.avail_out = sizeof gz;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	size_t out = sizeof gz - z.avail_out;
	deflateEnd(&z);
	return out;
}

/* Feed n bytes step at a time; collects a trace of events. */
static enum cv_tar_ev run(struct cv_tar *t, const unsigned char *p, size_t n, size_t step,
			  char *trace, size_t tn)
{
	size_t off = 0;
	trace[0] = '\0';
	for (;;) {
		size_t k = n - off < step ? n - off : step, used;
		enum cv_tar_ev e = cv_tar_next(t, p + off, k, &used);
		off += used;
		char ev[4200] = "";
		if (e == CV_TAR_ENTRY)
			snprintf(ev, sizeof ev, "E(%s,%c,%llu)", t->name, t->type, (unsigned long long)t->size);
		else if (e == CV_TAR_DATA)
			snprintf(ev, sizeof ev, "%.*s", (int)t->ndata, (const char *)t->data);
		else if (e == CV_TAR_ENTRY_END)
			snprintf(ev, sizeof ev, "|");
		else if (e == CV_TAR_ERROR || e == CV_TAR_END)
			return e;
		else if (e == CV_TAR_MORE && off == n) {
			e = cv_tar_finish(t);
			return e;
		}
		strncat(trace, ev, tn - strlen(trace) - 1);
	}
}

static void test_entries_byte_by_byte(void **state)
{
	struct cv_tar t;
	char trace[1000];
	(void)state;
	tarlen = 0;
	header("dir/", 0, '5');
	header("dir/a.txt", 5, '0');
	data("hello", 5);
	header("b", 0, '0');
	end();
	size_t n = gzip(tarbuf, tarlen);
	for (size_t step = 1; step <= 4096; step *= 8) {
		assert_int_equal(cv_tar_init(&t, 1 << 20), 0);
		assert_int_equal(run(&t, gz, n, step, trace, sizeof trace), CV_TAR_END);
		assert_string_equal(trace, "E(dir/,5,0)|E(dir/a.txt,0,5)hello|E(b,0,0)|");
		cv_tar_free(&t);
	}
}

static void test_pax_long_name(void **state)
{
	struct cv_tar t;
	char trace[9000], name[300], rec[400];
	(void)state;
	memset(name, 'n', 250);
	name[250] = '\0';
	int len = (int)strlen(name) + 7;   /* " path=" + '\n' + digits */
	len += snprintf(NULL, 0, "%d", len + 3) ;
	snprintf(rec, sizeof rec, "%d path=%s\n", len, name);
	tarlen = 0;
	header("PaxHeader", strlen(rec), 'x');
	data(rec, strlen(rec));
	header("short", 1, '0');
	data("z", 1);
	end();
	assert_int_equal(cv_tar_init(&t, 1 << 20), 0);
	assert_int_equal(run(&t, gz, gzip(tarbuf, tarlen), 100, trace, sizeof trace), CV_TAR_END);
	char want[400];
	snprintf(want, sizeof want, "E(%s,0,1)z|", name);
	assert_string_equal(trace, want);
	cv_tar_free(&t);
}

static void test_bomb_refused_at_header(void **state)
{
	struct cv_tar t;
	char trace[1000];
	(void)state;
	tarlen = 0;
	header("huge", 2u << 20, '0');
	data("x", 1);
	assert_int_equal(cv_tar_init(&t, 1 << 20), 0);
	assert_int_equal(run(&t, gz, gzip(tarbuf, tarlen), 4096, trace, sizeof trace), CV_TAR_ERROR);
	assert_string_equal(trace, "");   /* no entry, no data went out */
	assert_non_null(strstr(t.err, "size cap"));
	cv_tar_free(&t);
}

static void test_bad_checksum_and_gzip(void **state)
{
	struct cv_tar t;
	char trace[1000];
	size_t n;
	(void)state;
	tarlen = 0;
	header("a", 1, '0');
	data("x", 1);
	end();
	tarbuf[0] ^= 1;   /* the name changes, the checksum does not */
	assert_int_equal(cv_tar_init(&t, 1 << 20), 0);
	assert_int_equal(run(&t, gz, gzip(tarbuf, tarlen), 4096, trace, sizeof trace), CV_TAR_ERROR);
	assert_non_null(strstr(t.err, "checksum"));
	cv_tar_free(&t);
	tarbuf[0] ^= 1;
	n = gzip(tarbuf, tarlen);
	assert_int_equal(cv_tar_init(&t, 1 << 20), 0);   /* cut short */
	assert_int_equal(run(&t, gz, n - 4, 4096, trace, sizeof trace), CV_TAR_ERROR);
	assert_non_null(strstr(t.err, "cut short"));
	cv_tar_free(&t);
	gz[n] = 'J';   /* trailing junk */
	assert_int_equal(cv_tar_init(&t, 1 << 20), 0);
	assert_int_equal(run(&t, gz, n + 1, 4096, trace, sizeof trace), CV_TAR_ERROR);
	cv_tar_free(&t);
	assert_int_equal(cv_tar_init(&t, 1 << 20), 0);   /* not gzip at all */
	assert_int_equal(run(&t, (const unsigned char *)"plain text", 10, 4096, trace, sizeof trace), CV_TAR_ERROR);
	cv_tar_free(&t);
}

static void test_names(void **state)
{
	char out[64];
	(void)state;
	assert_int_equal(cv_tar_name_ok("a/./b//c/", out, sizeof out), 0);
	assert_string_equal(out, "a/b/c");
	assert_int_equal(cv_tar_name_ok("./x", out, sizeof out), 0);
	assert_string_equal(out, "x");
	assert_int_equal(cv_tar_name_ok("../x", out, sizeof out), -1);
	assert_int_equal(cv_tar_name_ok("a/../../x", out, sizeof out), -1);
	assert_int_equal(cv_tar_name_ok("a/..", out, sizeof out), -1);
	assert_int_equal(cv_tar_name_ok("/etc/passwd", out, sizeof out), -1);
	assert_int_equal(cv_tar_name_ok("", out, sizeof out), -1);
	assert_int_equal(cv_tar_name_ok("./", out, sizeof out), -1);
	assert_int_equal(cv_tar_name_ok("..a/b..", out, sizeof out), 0);
	assert_int_equal(cv_tar_name_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", out, sizeof out), -1);
}

/* The name both tar readers take from a header: ustar's prefix joined
 * with '/', an old header's prefix bytes ignored, a cut at the buffer. */
static void test_header_name_prefix(void **state)
{
	(void)state;
	unsigned char h[512];
	char out[300];
	memset(h, 0, sizeof h);
	memcpy(h, "file.txt", 8);
	memcpy(h + 345, "deep/dir", 8);
	memcpy(h + 257, "ustar", 6);
	sbx_tar_header_name(h, out, sizeof out);
	assert_string_equal(out, "deep/dir/file.txt");
	memset(h + 257, 0, 6);
	sbx_tar_header_name(h, out, sizeof out);
	assert_string_equal(out, "file.txt");
	memset(h, 'n', 100);
	memcpy(h + 257, "ustar", 6);
	memset(h + 345, 'p', 155);
	sbx_tar_header_name(h, out, sizeof out);
	assert_int_equal(strlen(out), 256);
	sbx_tar_header_name(h, out, 10);
	assert_string_equal(out, "ppppppppp");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries_byte_by_byte),
		cmocka_unit_test(test_pax_long_name),
		cmocka_unit_test(test_bomb_refused_at_header),
		cmocka_unit_test(test_bad_checksum_and_gzip),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_header_name_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
