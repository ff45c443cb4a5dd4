/* The front door (gw_front.h). Why a sniffer: lws 4.1.6 has no HTTP proxy
 * and cannot list unknown request headers (LIBWEBSOCKETS.md §1, §8), so
 * preview traffic must reach our own code as raw bytes, while the REST API
 * keeps lws's HTTP role, on the same port. Peeking (MSG_PEEK) leaves the
 * bytes in the kernel, so whichever side takes the socket reads the
 * request from its first byte. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "gw_front.h"
#include "gw_proxy.h"
#include "gw_sni.h"
#include "gw_http1.h"
#include "../core/gw_fdguard.h"
#include "gw_plimit.h"
#include "sbx_log.h"

#define REPEEK_US  (10 * LWS_US_PER_MS)
#define REPEEK_MAX_US (200 * LWS_US_PER_MS)
/* Out of descriptors: the listener stops for this long instead of
 * spinning on a backlog it cannot take (a level-triggered fd stays
 * readable), and connections already in the kernel's queue wait there. */
#define ACCEPT_PAUSE_US (100 * LWS_US_PER_MS)
/* Accepting stops this close to the limit too: a sniffed connection needs
 * one more descriptor to be handed over, an API request one or two for
 * its runner and agent sockets. */
#define ACCEPT_KEEP_FDS 16

static const char too_many_empty_lines[] =
	"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 47\r\n"
	"Cache-Control: no-store\r\nConnection: close\r\n\r\n"
	"more empty lines than allowed before a request\n";

static struct gw_front *front_of(struct lws *wsi)
{
	struct gw_front **pf = lws_protocol_vh_priv_get(lws_get_vhost(wsi),
							lws_get_protocol(wsi));
	return pf ? *pf : NULL;
}

int gw_front_bind_protocols(struct gw_front *f, const struct lws_protocols *prots)
{
	static const char *const names[] = { "gw-listen", "gw-sniff", "gw-proxy" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const struct lws_protocols *p = prots;
		while (p->name && strcmp(p->name, names[i]))
			p++;
		if (!p->name)
			return -1;
		struct gw_front **pf = lws_protocol_vh_priv_zalloc(f->vh->vhost, p, sizeof *pf);
		if (!pf)
			return -1;
		*pf = f;
	}
	return 0;
}

/* Give the socket to lws for good: as an HTTP connection of the API vhost
 * or a raw one of the proxy. The sniff wsi owns fd; lws will close it (and
 * might shutdown() it) when that wsi closes, so the socket moves to a new
 * fd number and the old number is pointed at /dev/null first: the number
 * lws has registered stays open until lws itself closes it, so it cannot
 * be reused while lws still has it in its table. Returns -1 (close the
 * sniff wsi: done, or failed), or 1 when no descriptor is free for the
 * move: the caller looks again shortly, the client keeps its connection. */
static int hand_over(struct gw_front *f, struct lws *wsi, int preview)
{
	int fd = lws_get_socket_fd(wsi);
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0) {
		if (gw_fd_exhausted_errno(errno)) {
			gw_fd_exhausted(GW_FDX_HANDOVER, errno);
			return 1;
		}
		sbx_warn("dup: %s", strerror(errno));
		return -1;
	}
	if (dup3(f->devnull, fd, O_CLOEXEC) < 0) {
		sbx_warn("dup3: %s", strerror(errno));
		close(nfd);   /* never adopted: ours to close */
		return -1;
	}
	lws_adopt_desc_t ad = { .vh = f->vh->vhost, .type = LWS_ADOPT_SOCKET };
	ad.fd.sockfd = nfd;
	if (f->tls)
		ad.type |= LWS_ADOPT_ALLOW_SSL;
	if (preview)
		ad.vh_prot_name = "gw-proxy";
	else
		ad.type |= LWS_ADOPT_HTTP;
	/* a socket: on failure lws has closed nfd (and unregistered it) */
	if (!lws_adopt_descriptor_vhost_via_info(&ad))
		sbx_warn("cannot adopt a %s connection", preview ? "preview" : "API");
	return -1;   /* close the sniff wsi (now on /dev/null) */
}

/* A preview while the descriptor reserve is reached: answered here, on
 * the descriptor it already has (handing it over would take one more),
 * and closed, so its descriptor comes back at once. The peeked request
 * is read first: closing with unread bytes would reset the connection
 * and could lose the answer. Over TLS there is no plain answer to give. */
static int shed(struct gw_front *f, struct lws *wsi, size_t peeked)
{
	char resp[1024];
	int fd = lws_get_socket_fd(wsi);
	gw_fd_exhausted(GW_FDX_RESERVE, EMFILE);
	f->vh->m.proxy_errors++;
	if (f->tls)
		return -1;
	int n = gw_plimit_response(resp, sizeof resp, "no_capacity", GW_PLIMIT_BUSY_MSG);
	if (recv(fd, f->peek, peeked, MSG_DONTWAIT) >= 0 && n > 0 &&
	    send(fd, resp, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) == n)
		shutdown(fd, SHUT_WR);
	return -1;
}

static void repeek(lws_sorted_usec_list_t *sul)
{
	struct gw_sniff *s = lws_container_of(sul, struct gw_sniff, sul);
	lws_rx_flow_control(s->wsi, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
}

/* A plain request with more empty lines before it than RFC 9112 2.2's
 * leniency covers: answered 400 (what arrived is read first, so that the
 * close does not reset the answer away) and closed. */
static int refuse_lead(struct gw_front *f, int fd)
{
	if (recv(fd, f->peek, sizeof f->peek, MSG_DONTWAIT) >= 0 &&
	    send(fd, too_many_empty_lines, sizeof too_many_empty_lines - 1,
		 MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof too_many_empty_lines - 1)
		shutdown(fd, SHUT_WR);
	return -1;
}

static int sniff(struct gw_sniff *s, struct lws *wsi)
{
	char host[256];
	struct gw_front *f = s->f;
	char *buf = f->peek;
	int fd = lws_get_socket_fd(wsi);
	ssize_t n = recv(fd, buf, sizeof f->peek, MSG_PEEK | MSG_DONTWAIT);
	long lead = 0;
	if (n == 0)
		return -1;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	int rc = 0, to_api = 0;
	if ((unsigned char)buf[0] == 0x16) {
		if (!f->tls)
			to_api = 1;   /* lws answers TLS on plain HTTP */
		else
			rc = gw_sni_parse((unsigned char *)buf, (size_t)n, host, sizeof host);
	} else {
		if (f->tls)
			return -1;                     /* plain bytes on the TLS port */
		if ((lead = gw_h1_lead(buf, (size_t)n)) < 0)
			return refuse_lead(f, fd);
		rc = gw_h1_sniff_host(buf, (size_t)n, host, sizeof host);
		if (rc == 0 && (size_t)n >= sizeof f->peek - 5)
			rc = -1;                       /* no Host in 16 KiB: the API says 431 */
	}
	if (to_api || rc != 0) {
		int preview = !to_api && rc > 0 &&
			gw_phost_claim(host, strlen(host), f->vh->preview_domain);
		if (preview && !gw_fd_preview_ok())
			return shed(f, wsi, (size_t)n);
		/* RFC 9112 2.2's empty lines before the request go here: lws's
		 * parser (the API's) closes a connection that starts with one,
		 * without an answer. They are in the kernel's buffer (peeked), so
		 * the read takes exactly them. */
		if (lead > 0 && recv(fd, buf, (size_t)lead, MSG_DONTWAIT) != (ssize_t)lead)
			return -1;
		if (hand_over(f, wsi, preview) < 0)
			return -1;
	}
	/* Slowloris: closed without an answer, as lws's own header timeout
	 * does for the API (a client cannot tell which side it would reach). */
	if ((int64_t)lws_now_usecs() - s->t0_us > (int64_t)f->head_timeout_s * LWS_US_PER_SEC)
		return -1;
	/* A client that closed after part of a head: the peek keeps seeing
	 * those bytes, never the end of the stream, so ask the socket; its
	 * head will never be whole, and its descriptor comes back now rather
	 * than at the header timeout. */
	struct pollfd pf = { .fd = fd, .events = POLLRDHUP };
	if (poll(&pf, 1, 0) == 1 && pf.revents & (POLLRDHUP | POLLHUP | POLLERR))
		return -1;
	/* Incomplete (or no descriptor free to hand it over): the unread
	 * bytes keep the fd readable, so stop polling it and look again
	 * shortly instead of spinning. */
	lws_rx_flow_control(wsi, 0);
	/* back off: a head split over packets is rare and completes within a
	 * few peeks; a trickling client (slowloris) costs little CPU */
	int64_t delay = (int64_t)REPEEK_US << (s->npeek < 5 ? s->npeek : 5);
	s->npeek++;
	lws_sul_schedule(lws_get_context(wsi), 0, &s->sul, repeek,
			 delay < REPEEK_MAX_US ? delay : REPEEK_MAX_US);
	return 0;
}

int gw_front_sniff_cb(struct lws *wsi, enum lws_callback_reasons reason,
		      void *user, void *in, size_t len)
{
	struct gw_sniff *s = user;
	(void)in;
	(void)len;
	switch (reason) {
	case LWS_CALLBACK_RAW_ADOPT_FILE:
		/* Never refuse here: lws 4.1.6 has already registered the fd when
		 * it calls this, and a refused raw-file adoption leaves the fd in
		 * its table while accept_some(), told "failed", closes it; the
		 * number's next user then trips lws's insert_wsi assertion. A wsi
		 * without its front is closed by lws instead. */
		if (!s || !(s->f = front_of(wsi))) {
			lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
			return 0;
		}
		s->wsi = wsi;
		s->t0_us = (int64_t)lws_now_usecs();
		/* a connection that sends nothing at all is closed by lws */
		lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, s->f->head_timeout_s + 1);
		return 0;
	case LWS_CALLBACK_RAW_RX_FILE:
		return s && s->f ? sniff(s, wsi) : -1;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (s)
			lws_sul_cancel(&s->sul);
		return 0;
	default:
		return 0;
	}
}

static void accept_again(lws_sorted_usec_list_t *sul)
{
	struct gw_front *f = lws_container_of(sul, struct gw_front, accept_sul);
	lws_rx_flow_control(f->lwsi, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
}

static void accept_some(struct gw_front *f)
{
	for (int i = 0; i < 64; i++) {   /* bounded: let other fds run too */
		int cfd = gw_fd_room() > ACCEPT_KEEP_FDS ?
			accept4(f->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC) :
			(errno = EMFILE, -1);
		if (cfd < 0) {
			int e = errno;
			if (e == EAGAIN || e == EINTR || e == ECONNABORTED)
				return;
			if (gw_fd_exhausted_errno(e))
				gw_fd_exhausted(GW_FDX_ACCEPT, e);
			else
				sbx_warn("accept: %s", strerror(e));
			/* pause, do not spin: the listener stays readable */
			lws_rx_flow_control(f->lwsi, 0);
			lws_sul_schedule(f->vh->ctx, 0, &f->accept_sul, accept_again,
					 ACCEPT_PAUSE_US);
			return;
		}
		/* what lws's own listener does for each connection: no Nagle
		 * delay on small writes (stream chunks, WS frames, responses) */
		int one = 1;
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		lws_adopt_desc_t ad = { .vh = f->vh->vhost, .type = LWS_ADOPT_RAW_FILE_DESC,
					.vh_prot_name = "gw-sniff" };
		ad.fd.filefd = cfd;
		/* A raw file that lws did not adopt is still ours to close: 4.1.6
		 * closes only sockets on failure, and with gw-sniff's adopt
		 * callback never refusing, it fails only before registering the
		 * fd (no free slot, out of memory). */
		if (!lws_adopt_descriptor_vhost_via_info(&ad)) {
			gw_fd_exhausted(GW_FDX_ADOPT, ENOMEM);
			close(cfd);
		}
	}
}

int gw_front_listen_cb(struct lws *wsi, enum lws_callback_reasons reason,
		       void *user, void *in, size_t len)
{
	(void)user;
	(void)in;
	(void)len;
	struct gw_front *f = front_of(wsi);
	if (reason == LWS_CALLBACK_RAW_RX_FILE && f)
		accept_some(f);
	return 0;
}

int gw_front_start(struct gw_front *f, const char *addr, int port, struct sbx_err *err)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	memset(&ss, 0, sizeof ss);
	int v6 = strchr(addr, ':') != NULL, one = 1;
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		sl = sizeof *a;
		if (inet_pton(AF_INET6, addr, &a->sin6_addr) != 1)
			return sbx_err_set(err, EINVAL, "bad listen address %s", addr);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		sl = sizeof *a;
		if (inet_pton(AF_INET, addr, &a->sin_addr) != 1)
			return sbx_err_set(err, EINVAL, "bad listen address %s", addr);
	}
	f->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	f->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (f->devnull < 0 || f->lfd < 0)
		return sbx_err_set(err, errno, "socket: %s", strerror(errno));
	setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (v6)   /* "::" means IPv6 only; an IPv4 address is its own listener */
		setsockopt(f->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(f->lfd, (struct sockaddr *)&ss, sl) < 0 || listen(f->lfd, 1024) < 0)
		return sbx_err_set(err, errno, "listen on %s:%d: %s", addr, port, strerror(errno));
	sl = sizeof ss;
	if (getsockname(f->lfd, (struct sockaddr *)&ss, &sl) == 0)
		f->vh->port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
				    ((struct sockaddr_in *)&ss)->sin_port);
	lws_adopt_desc_t ad = { .vh = f->vh->vhost, .type = LWS_ADOPT_RAW_FILE_DESC,
				.vh_prot_name = "gw-listen" };
	ad.fd.filefd = f->lfd;
	if (!(f->lwsi = lws_adopt_descriptor_vhost_via_info(&ad)))
		return sbx_err_set(err, EIO, "cannot adopt the listening socket");
	return 0;
}
