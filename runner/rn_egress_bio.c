/* The socket BIO of a decrypted egress connection's TLS sides
 * (rn_egress_mitm.c). Two things OpenSSL's socket BIO does not do:
 *  - the sandbox's side starts with the ClientHello the proxy already
 *    peeked (to read the SNI), so reads return those bytes first;
 *  - OpenSSL writes each TLS record (16 KiB at most) with a send of its
 *    own, and with TCP_NODELAY each send is a push through both network
 *    stacks. 64 KiB of a body relayed is four sends; gathered, it is one
 *    (a quarter of the sends; the throughput it bought here was inside
 *    the bench's noise: the runner's time is the crypto and the network
 *    stacks' per-byte work, docs/runner.md "Credential brokering").
 * Gathering is only switched on by the blocking request path around its
 * writes; the non-blocking relay after a 101 writes through as before. */
#include "rn_egress_bio.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sbx_fs.h"

struct eg_bio {
	int fd;
	const unsigned char *pre;
	size_t pre_len;
	int gather;             /* between eg_bio_gather and eg_bio_send */
	int failed;             /* a gathered send failed */
	char *out;              /* EG_BIO_GATHER bytes, made on first use */
	size_t out_len;
};

/* n bytes to the socket whole (blocking: the request path); a failure
 * is remembered for eg_bio_send */
static int send_whole(struct eg_bio *eb, const char *p, size_t n)
{
	if (sbx_write_all(eb->fd, p, n) < 0) {
		eb->failed = 1;
		return -1;
	}
	return 0;
}

static int flush_out(struct eg_bio *eb)
{
	int rc = send_whole(eb, eb->out, eb->out_len);

	eb->out_len = 0;
	return rc;
}

static int bio_read(BIO *b, char *out, int n)
{
	struct eg_bio *eb = BIO_get_data(b);
	ssize_t r;

	if (n <= 0)
		return 0;
	if (eb->pre_len) {
		size_t k = (size_t)n < eb->pre_len ? (size_t)n : eb->pre_len;
		memcpy(out, eb->pre, k);
		eb->pre += k;
		eb->pre_len -= k;
		return (int)k;
	}
	BIO_clear_retry_flags(b);
	do
		r = recv(eb->fd, out, (size_t)n, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == EAGAIN)
		BIO_set_retry_read(b);  /* non-blocking after an upgrade */
	return r < 0 ? -1 : (int)r;
}

/* A gathered write: into the buffer, sending it first when full; a
 * record bigger than the buffer goes out on its own. */
static int gather_write(struct eg_bio *eb, const char *p, int n)
{
	if (!eb->out && !(eb->out = malloc(EG_BIO_GATHER)))
		return send_whole(eb, p, (size_t)n) < 0 ? -1 : n;
	if (eb->out_len + (size_t)n > EG_BIO_GATHER && eb->out_len && flush_out(eb) < 0)
		return -1;
	if ((size_t)n > EG_BIO_GATHER)
		return send_whole(eb, p, (size_t)n) < 0 ? -1 : n;
	memcpy(eb->out + eb->out_len, p, (size_t)n);
	eb->out_len += (size_t)n;
	return n;
}

static int bio_write(BIO *b, const char *p, int n)
{
	struct eg_bio *eb = BIO_get_data(b);
	ssize_t w;

	BIO_clear_retry_flags(b);
	if (n <= 0)
		return 0;
	if (eb->gather)
		return gather_write(eb, p, n);
	do
		w = send(eb->fd, p, (size_t)n, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0 && errno == EAGAIN)
		BIO_set_retry_write(b);
	return w < 0 ? -1 : (int)w;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct eg_bio *eb = BIO_get_data(b);

	(void)num;
	(void)ptr;
	if (cmd != BIO_CTRL_FLUSH)
		return 0;
	return eb && eb->out_len && flush_out(eb) < 0 ? 0 : 1;
}

static int bio_destroy(BIO *b)
{
	struct eg_bio *eb = BIO_get_data(b);

	if (eb) {
		free(eb->out);
		free(eb);
		BIO_set_data(b, NULL);
	}
	return 1;
}

static BIO_METHOD *method;
static pthread_once_t method_once = PTHREAD_ONCE_INIT;

static void method_init(void)
{
	method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "egress-socket");
	if (method) {
		BIO_meth_set_read(method, bio_read);
		BIO_meth_set_write(method, bio_write);
		BIO_meth_set_ctrl(method, bio_ctrl);
		BIO_meth_set_destroy(method, bio_destroy);
	}
}

BIO *eg_bio_new(int fd, const unsigned char *pre, size_t pre_len)
{
	struct eg_bio *eb;
	BIO *b;

	pthread_once(&method_once, method_init);
	if (!method || !(eb = calloc(1, sizeof(*eb))))
		return NULL;
	b = BIO_new(method);
	if (!b) {
		free(eb);
		return NULL;
	}
	eb->fd = fd;
	eb->pre = pre;
	eb->pre_len = pre_len;
	BIO_set_data(b, eb);
	BIO_set_init(b, 1);
	return b;
}

void eg_bio_gather(BIO *b)
{
	struct eg_bio *eb = BIO_get_data(b);

	eb->gather = 1;
	eb->failed = 0;
}

int eg_bio_send(BIO *b)
{
	struct eg_bio *eb = BIO_get_data(b);

	eb->gather = 0;
	if (eb->out_len)
		flush_out(eb);
	return eb->failed ? -1 : 0;
}
