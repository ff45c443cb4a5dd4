/* The socket under each TLS side of a decrypted egress connection
 * (rn_egress_bio.c): it reads the bytes the proxy peeked before the
 * socket's own, and can gather a burst of records into one send. */
#ifndef RN_EGRESS_BIO_H
#define RN_EGRESS_BIO_H

#include <stddef.h>

#include <openssl/bio.h>

/* A BIO on fd (not closed with it) whose reads return pre's pre_len bytes
 * first; pre must outlive the BIO. NULL when out of memory. */
BIO *eg_bio_new(int fd, const unsigned char *pre, size_t pre_len);

/* Between eg_bio_gather(b) and eg_bio_send(b), the records written go
 * out together, up to EG_BIO_GATHER bytes a send (four full records),
 * not a send each: for the blocking request path only, where every write
 * ends in a send. eg_bio_send sends what was gathered: 0, or -1 when the
 * socket failed. */
#define EG_BIO_GATHER (68 * 1024)
void eg_bio_gather(BIO *b);
int eg_bio_send(BIO *b);

#endif
