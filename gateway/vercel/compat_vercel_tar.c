/* Streaming gzip + tar reader (compat_vercel_tar.h). The inflated bytes go
 * through a fixed window; every header's checksum is checked; a declared
 * size that would pass the inflate bound is refused at its header, so a
 * tar bomb is refused before its first byte of data is used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compat_vercel_tar.h"
#include "sbx_tarpath.h"

enum { S_HDR, S_DATA, S_PAD, S_META, S_META_PAD, S_END };
enum { META_PAX = 1, META_LONGNAME, META_SKIP };

int cv_tar_init(struct cv_tar *t, uint64_t max_inflated)
{
	memset(t, 0, sizeof *t);
	t->max_inflated = max_inflated;
	if (inflateInit2(&t->z, 16 + MAX_WBITS) != Z_OK)   /* gzip only */
		return -1;
	t->z_ok = 1;
	return 0;
}

void cv_tar_free(struct cv_tar *t)
{
	if (t->z_ok)
		inflateEnd(&t->z);
	t->z_ok = 0;
	free(t->meta);
	t->meta = NULL;
}

static enum cv_tar_ev fail(struct cv_tar *t, const char *why)
{
	snprintf(t->err, sizeof t->err, "%s", why);
	return CV_TAR_ERROR;
}

/* "len key=value\n" records: take path. */
static int pax_path(struct cv_tar *t)
{
	size_t i = 0;
	while (i < t->meta_len) {
		char *end;
		unsigned long len = strtoul(t->meta + i, &end, 10);
		if (end == t->meta + i || *end != ' ' || len < 5 || len > t->meta_len - i)
			return -1;
		const char *kv = end + 1, *stop = t->meta + i + len - 1;   /* at '\n' */
		if (*stop != '\n')
			return -1;
		if ((size_t)(stop - kv) > 5 && !memcmp(kv, "path=", 5)) {
			size_t n = (size_t)(stop - kv) - 5;
			if (n >= sizeof t->next_name || memchr(kv + 5, '\0', n))
				return -1;
			memcpy(t->next_name, kv + 5, n);
			t->next_name[n] = '\0';
		}
		i += len;
	}
	return 0;
}

static enum cv_tar_ev header(struct cv_tar *t)
{
	const unsigned char *h = t->hdr;
	uint64_t size, mode;
	size_t i;

	for (i = 0; i < 512 && !h[i]; i++)
		;
	if (i == 512) {
		if (++t->zeros == 2)
			t->state = S_END;
		return CV_TAR_MORE;
	}
	if (t->zeros)
		return fail(t, "bad tar archive: a header after an end block");
	if (!sbx_tar_checksum_ok(h))
		return fail(t, "bad tar archive: header checksum mismatch");
	if (sbx_tar_number(h + 124, 12, &size) || sbx_tar_number(h + 100, 8, &mode))
		return fail(t, "bad tar archive: bad size or mode field");
	char type = h[156] ? (char)h[156] : '0';
	if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
		if (size > CV_TAR_META_MAX)
			return fail(t, "bad tar archive: a pax or long-name record over 64 KiB");
		free(t->meta);
		t->meta = malloc(size + 1);
		if (!t->meta)
			return fail(t, "out of memory");
		t->meta_n = 0;
		t->meta_len = size;
		t->meta_kind = type == 'x' ? META_PAX : type == 'L' ? META_LONGNAME : META_SKIP;
		t->pad = (512 - size % 512) % 512;
		t->state = S_META;
		return CV_TAR_MORE;
	}
	if (t->next_name[0]) {
		memcpy(t->name, t->next_name, sizeof t->name);
		t->next_name[0] = '\0';
	} else {
		sbx_tar_header_name(h, t->name, sizeof t->name);
	}
	if (type == '7')
		type = '0';
	/* what the entries declared so far counts too: many entries each
	 * under the cap are refused at the header that passes it */
	uint64_t used = t->declared > t->inflated ? t->declared : t->inflated;
	if (size > t->max_inflated - used)
		return fail(t, "archive over the size cap");
	t->declared += 512 + size + (512 - size % 512) % 512;
	t->type = type;
	t->mode = (unsigned)(mode & 07777);
	t->size = size;
	t->left = size;
	t->pad = (512 - size % 512) % 512;
	t->state = S_DATA;
	return CV_TAR_ENTRY;
}

/* Process window bytes until an event. */
static enum cv_tar_ev step(struct cv_tar *t)
{
	while (t->win_pos < t->win_len || (t->state == S_DATA && !t->left)) {
		size_t avail = t->win_len - t->win_pos, k;
		const unsigned char *p = t->win + t->win_pos;
		switch (t->state) {
		case S_HDR:
			k = 512 - t->hdr_n < avail ? 512 - t->hdr_n : avail;
			memcpy(t->hdr + t->hdr_n, p, k);
			t->hdr_n += k;
			t->win_pos += k;
			if (t->hdr_n == 512) {
				t->hdr_n = 0;
				enum cv_tar_ev e = header(t);
				if (e != CV_TAR_MORE)
					return e;
			}
			break;
		case S_DATA:
			if (!t->left) {
				t->state = t->pad ? S_PAD : S_HDR;
				return CV_TAR_ENTRY_END;
			}
			k = t->left < avail ? (size_t)t->left : avail;
			t->data = p;
			t->ndata = k;
			t->left -= k;
			t->win_pos += k;
			return CV_TAR_DATA;
		case S_PAD:
		case S_META_PAD:
			k = t->pad < avail ? (size_t)t->pad : avail;
			t->pad -= k;
			t->win_pos += k;
			if (!t->pad)
				t->state = S_HDR;
			break;
		case S_META:
			k = t->meta_len - t->meta_n < avail ? t->meta_len - t->meta_n : avail;
			memcpy(t->meta + t->meta_n, p, k);
			t->meta_n += k;
			t->win_pos += k;
			if (t->meta_n == t->meta_len) {
				t->meta[t->meta_len] = '\0';
				if (t->meta_kind == META_PAX && pax_path(t))
					return fail(t, "bad tar archive: bad pax record");
				if (t->meta_kind == META_LONGNAME) {
					size_t n = strnlen(t->meta, t->meta_len);
					if (n >= sizeof t->next_name)
						return fail(t, "bad tar archive: long name too long");
					memcpy(t->next_name, t->meta, n);
					t->next_name[n] = '\0';
				}
				t->state = t->pad ? S_META_PAD : S_HDR;
			}
			break;
		case S_END:
		default:
			t->win_pos = t->win_len;   /* the rest of the last record */
			break;
		}
	}
	return CV_TAR_MORE;
}

enum cv_tar_ev cv_tar_next(struct cv_tar *t, const unsigned char *in, size_t n, size_t *used)
{
	*used = 0;
	for (;;) {
		enum cv_tar_ev e = step(t);
		if (e != CV_TAR_MORE)
			return e;
		if (t->z_end) {
			if (*used < n)
				return fail(t, "bad gzip: data after the end of the stream");
			return CV_TAR_MORE;
		}
		if (*used == n)
			return CV_TAR_MORE;
		t->z.next_in = (unsigned char *)(uintptr_t)(in + *used);
		t->z.avail_in = (uInt)(n - *used > 1u << 30 ? 1u << 30 : n - *used);
		t->z.next_out = t->win;
		t->z.avail_out = sizeof t->win;
		uInt before = t->z.avail_in;
		int rc = inflate(&t->z, Z_NO_FLUSH);
		*used += before - t->z.avail_in;
		t->win_pos = 0;
		t->win_len = sizeof t->win - t->z.avail_out;
		t->inflated += t->win_len;
		if (t->inflated > t->max_inflated)
			return fail(t, "archive over the size cap");
		if (rc == Z_STREAM_END)
			t->z_end = 1;
		else if (rc != Z_OK && !(rc == Z_BUF_ERROR && !t->win_len))
			return fail(t, "bad gzip data");
	}
}

enum cv_tar_ev cv_tar_finish(struct cv_tar *t)
{
	if (!t->z_end)
		return fail(t, "bad gzip: the stream is cut short");
	if (t->state != S_END && !(t->state == S_HDR && !t->hdr_n && t->zeros))
		return fail(t, "bad tar archive: no end blocks");
	return CV_TAR_END;
}

int cv_tar_name_ok(const char *name, char *out, size_t n)
{
	return sbx_tar_path_clean(name, out, n);
}
