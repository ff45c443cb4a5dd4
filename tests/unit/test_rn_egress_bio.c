/* cmocka tests of the decrypted egress connection's socket BIO
 * (runner/rn_egress_bio.c), over a real socketpair: the peeked bytes are
 * read first, gathered records leave only at eg_bio_send (or when the
 * buffer is full) and in order, a record bigger than the buffer goes on
 * its own after what was gathered, writes outside a gather go at once,
 * and a send that fails is reported. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../runner/rn_egress_bio.h"

#define REC (16384 + 22)        /* a full TLS 1.3 record on the wire */

static int sp[2];

static int setup(void **st)
{
	int big = 1 << 20;

	(void)st;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
		return -1;
	setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sp[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	close(sp[0]);
	if (sp[1] >= 0)
		close(sp[1]);
	return 0;
}

/* what the peer can read now, without waiting */
static size_t readable(char *out, size_t cap)
{
	size_t got = 0;

	for (;;) {
		ssize_t r = recv(sp[1], out + got, cap - got, MSG_DONTWAIT);
		if (r <= 0)
			return got;
		got += (size_t)r;
	}
}

static void pattern(char *p, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)(seed + i * 7);
}

static void peeked_bytes_first(void **st)
{
	static const unsigned char pre[] = "HELLO";
	BIO *b = eg_bio_new(sp[0], pre, 5);
	char buf[16];

	(void)st;
	assert_non_null(b);
	assert_int_equal(send(sp[1], "world", 5, 0), 5);
	assert_int_equal(BIO_read(b, buf, 3), 3);
	assert_memory_equal(buf, "HEL", 3);
	assert_int_equal(BIO_read(b, buf, sizeof(buf)), 2);
	assert_memory_equal(buf, "LO", 2);
	assert_int_equal(BIO_read(b, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "world", 5);
	BIO_free(b);
}

static void gathered_until_sent(void **st)
{
	BIO *b = eg_bio_new(sp[0], NULL, 0);
	char *rec = malloc(REC), *got = malloc(8 * REC);

	(void)st;
	assert_non_null(b);
	eg_bio_gather(b);
	for (int i = 0; i < 3; i++) {
		pattern(rec, REC, i);
		assert_int_equal(BIO_write(b, rec, REC), REC);
	}
	assert_int_equal(readable(got, 8 * REC), 0);    /* nothing left yet */
	assert_int_equal(eg_bio_send(b), 0);
	assert_int_equal(readable(got, 8 * REC), 3 * REC);
	for (int i = 0; i < 3; i++) {
		pattern(rec, REC, i);
		assert_memory_equal(got + i * REC, rec, REC);
	}
	/* outside a gather a write goes at once */
	assert_int_equal(BIO_write(b, "x", 1), 1);
	assert_int_equal(readable(got, 8 * REC), 1);
	BIO_free(b);
	free(rec);
	free(got);
}

static void full_buffer_goes_first(void **st)
{
	BIO *b = eg_bio_new(sp[0], NULL, 0);
	char *rec = malloc(REC), *got = malloc(8 * REC);
	int fit = EG_BIO_GATHER / REC;

	(void)st;
	assert_true(fit >= 4);          /* four full records make one send */
	eg_bio_gather(b);
	for (int i = 0; i <= fit; i++) {
		pattern(rec, REC, i);
		assert_int_equal(BIO_write(b, rec, REC), REC);
	}
	/* the record that did not fit waits; the ones before it left */
	assert_int_equal(readable(got, 8 * REC), (size_t)fit * REC);
	assert_int_equal(eg_bio_send(b), 0);
	assert_int_equal(readable(got + fit * REC, 8 * REC - (size_t)fit * REC), REC);
	for (int i = 0; i <= fit; i++) {
		pattern(rec, REC, i);
		assert_memory_equal(got + i * REC, rec, REC);
	}
	BIO_free(b);
	free(rec);
	free(got);
}

static void oversized_after_gathered(void **st)
{
	BIO *b = eg_bio_new(sp[0], NULL, 0);
	size_t big = EG_BIO_GATHER + 100;
	char *a = malloc(REC), *c = malloc(big), *got = malloc(REC + big);

	(void)st;
	pattern(a, REC, 1);
	pattern(c, big, 2);
	eg_bio_gather(b);
	assert_int_equal(BIO_write(b, a, REC), REC);
	assert_int_equal(BIO_write(b, c, (int)big), (int)big);
	assert_int_equal(readable(got, REC + big), REC + big);
	assert_memory_equal(got, a, REC);
	assert_memory_equal(got + REC, c, big);
	assert_int_equal(eg_bio_send(b), 0);
	BIO_free(b);
	free(a);
	free(c);
	free(got);
}

static void failed_send_reported(void **st)
{
	BIO *b = eg_bio_new(sp[0], NULL, 0);

	(void)st;
	close(sp[1]);
	sp[1] = -1;
	eg_bio_gather(b);
	assert_int_equal(BIO_write(b, "abc", 3), 3);   /* gathered: not sent yet */
	assert_int_equal(eg_bio_send(b), -1);
	/* and a later gather that succeeds is not marked by the old failure */
	eg_bio_gather(b);
	assert_int_equal(eg_bio_send(b), 0);
	BIO_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(peeked_bytes_first, setup, teardown),
		cmocka_unit_test_setup_teardown(gathered_until_sent, setup, teardown),
		cmocka_unit_test_setup_teardown(full_buffer_goes_first, setup, teardown),
		cmocka_unit_test_setup_teardown(oversized_after_gathered, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_send_reported, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
