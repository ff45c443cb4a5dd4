/* A streaming reader of gzip-compressed tar archives (ustar, pax "path"
 * records, GNU long names): bytes in as they arrive, events out, nothing
 * but one header and one window of inflated bytes held. No I/O, so it is
 * unit-tested on its own (tests/unit/test_cv_tar.c). */
#ifndef COMPAT_VERCEL_TAR_H
#define COMPAT_VERCEL_TAR_H
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#define CV_TAR_NAME_MAX 4096
#define CV_TAR_META_MAX (64 * 1024)   /* a pax or long-name record */

enum cv_tar_ev {
	CV_TAR_MORE,        /* all input used: give more (or cv_tar_finish) */
	CV_TAR_ENTRY,       /* an entry's header: name, type, mode, size */
	CV_TAR_DATA,        /* a piece of the entry's data in data/ndata */
	CV_TAR_ENTRY_END,   /* the entry's data is complete */
	CV_TAR_END,         /* the archive ended well (gzip trailer checked) */
	CV_TAR_ERROR,       /* why in err; the archive is refused */
};

struct cv_tar {
	z_stream z;
	int z_ok, z_end;
	unsigned char win[64 * 1024];   /* inflated bytes */
	size_t win_pos, win_len;
	uint64_t inflated, max_inflated, declared;
	int state;
	unsigned char hdr[512];
	size_t hdr_n;
	uint64_t left, pad;
	int zeros;                      /* zero blocks seen in a row */
	char *meta;                     /* a pax / GNU L record being read */
	size_t meta_n, meta_len;
	int meta_kind;
	char next_name[CV_TAR_NAME_MAX];/* from a pax path or GNU L record */
	/* the current entry */
	char name[CV_TAR_NAME_MAX];
	char type;                      /* '0' file, '5' directory, else refused by the caller */
	unsigned mode;
	uint64_t size;
	const unsigned char *data;
	size_t ndata;
	char err[200];
};

/* 0, or -1 when zlib cannot start. max_inflated bounds the bytes the
 * archive may inflate to (the tar-bomb bound). */
int cv_tar_init(struct cv_tar *t, uint64_t max_inflated);
void cv_tar_free(struct cv_tar *t);
/* Feed compressed bytes: *used says how many were taken (the rest must be
 * given again after the event is handled). */
enum cv_tar_ev cv_tar_next(struct cv_tar *t, const unsigned char *in, size_t n, size_t *used);
/* The body ended: END when the archive and the gzip stream were complete,
 * else ERROR (truncated). */
enum cv_tar_ev cv_tar_finish(struct cv_tar *t);

/* 0 when name is a relative path with no "..", no empty name; writes it
 * normalised (no "./", no doubled or trailing '/') to out. */
int cv_tar_name_ok(const char *name, char *out, size_t n);
#endif
