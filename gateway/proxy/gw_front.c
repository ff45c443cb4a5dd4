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
/* No descriptor to be had at all, not even by closing an idle connection
 * or giving up the spare: the listener stops for this long instead of
 * spinning on a backlog it cannot take (a level-triggered fd stays
 * readable). */
#define ACCEPT_PAUSE_US (100 * LWS_US_PER_MS)
/* Descriptors that connections still being sniffed may not take: a
 * sniffed connection needs one more to be handed over, an API request one
 * or two for its runner and agent sockets. At this many left an accept
 * first closes the oldest connection that has not sent its head. */
#define ACCEPT_KEEP_FDS 16
/* With this few left and none to close, a new connection is answered 503
 * at once: the last ones serve the requests already in. */
#define ACCEPT_LAST_FDS 4
/* A sniffed connection gives way to newer ones only once this many accept
 * rounds have passed since its own: between two rounds the loop services
 * every readable descriptor, so a client that sent its request with its
 * connect has been looked at, and a burst of accepts cannot close the
 * connections it has just made. */
#define EVICT_MIN_ROUNDS 2

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

/* Answer a connection that will not be served, on the descriptor it
 * already has; its caller closes it. What arrived is read first: closing
 * with unread bytes resets the connection, and the reset could overtake
 * the answer. Over TLS there is no plain answer to give. */
static void answer(struct gw_front *f, int fd, const char *resp, size_t n)
{
	if (f->tls)
		return;
	/* once: a client that keeps sending is not waited for */
	if (recv(fd, f->peek, sizeof f->peek, MSG_DONTWAIT) < 0 && errno != EAGAIN)
		return;
	if (send(fd, resp, n, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)n)
		shutdown(fd, SHUT_WR);
}

/* 503 no_capacity, the answer of every connection refused for lack of
 * descriptors, API or preview alike. */
static void answer_busy(struct gw_front *f, int fd)
{
	char resp[1024];
	int n = gw_plimit_response(resp, sizeof resp, "no_capacity", GW_PLIMIT_BUSY_MSG);
	if (n > 0)
		answer(f, fd, resp, (size_t)n);
}

/* Close the oldest sniffed connection other than except, answered 503,
 * if it has had its chance to send a request (EVICT_MIN_ROUNDS): under a
 * flood of connections that send nothing, the idle ones give way and the
 * listener keeps accepting. Returns 1 when one was closed (its descriptor
 * is free on return), else 0. */
static int evict_oldest(struct gw_front *f, const struct gw_sniff *except)
{
	struct lws_dll2 *d = lws_dll2_get_head(&f->sniffs);
	struct gw_sniff *s = d ? lws_container_of(d, struct gw_sniff, list) : NULL;
	if (s && s == except) {
		d = d->next;
		s = d ? lws_container_of(d, struct gw_sniff, list) : NULL;
	}
	/* oldest first: if this one is too young, so is every other */
	if (!s || f->round - s->round < EVICT_MIN_ROUNDS)
		return 0;
	gw_fd_exhausted(GW_FDX_EVICT, EMFILE);
	answer_busy(f, lws_get_socket_fd(s->wsi));
	/* not the wsi being serviced: lws closes it (and its fd) now */
	lws_set_timeout(s->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_SYNC);
	return 1;
}

/* Give the socket to lws for good: as an HTTP connection of the API vhost
 * or a raw one of the proxy. The sniff wsi owns fd; lws will close it (and
 * might shutdown() it) when that wsi closes, so the socket moves to a new
 * fd number and the old number is pointed at /dev/null first: the number
 * lws has registered stays open until lws itself closes it, so it cannot
 * be reused while lws still has it in its table. With no descriptor free
 * for the move an idle connection gives way, or this one is answered 503.
 * Returns -1 always: the sniff wsi closes (done, or failed). */
static int hand_over(struct gw_front *f, struct gw_sniff *s, int preview)
{
	int fd = lws_get_socket_fd(s->wsi);
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0 && gw_fd_exhausted_errno(errno) && evict_oldest(f, s))
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0) {
		if (gw_fd_exhausted_errno(errno)) {
			gw_fd_exhausted(GW_FDX_HANDOVER, errno);
			answer_busy(f, fd);
		} else {
			sbx_warn("dup: %s", strerror(errno));
		}
		return -1;
	}
	/* lws stops watching the number first: epoll (gw_loop.c) watches the
	 * socket the number named when it was added, and would go on
	 * reporting it under that number once the number names /dev/null */
	lws_rx_flow_control(s->wsi, 0 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
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
 * and closed, so its descriptor comes back at once. */
static int shed(struct gw_front *f, struct lws *wsi)
{
	gw_fd_exhausted(GW_FDX_RESERVE, EMFILE);
	f->vh->m.proxy_errors++;
	answer_busy(f, lws_get_socket_fd(wsi));
	return -1;
}

static void repeek(lws_sorted_usec_list_t *sul)
{
	struct gw_sniff *s = lws_container_of(sul, struct gw_sniff, sul);
	lws_rx_flow_control(s->wsi, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
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
		if ((lead = gw_h1_lead(buf, (size_t)n)) < 0) {
			answer(f, fd, too_many_empty_lines, sizeof too_many_empty_lines - 1);
			return -1;
		}
		rc = gw_h1_sniff_host(buf, (size_t)n, host, sizeof host);
		if (rc == 0 && (size_t)n >= sizeof f->peek - 5)
			rc = -1;                       /* no Host in 16 KiB: the API says 431 */
	}
	if (to_api || rc != 0) {
		int preview = !to_api && rc > 0 &&
			gw_phost_claim(host, strlen(host), f->vh->preview_domain);
		if (preview && !gw_fd_preview_ok())
			return shed(f, wsi);
		/* RFC 9112 2.2's empty lines before the request go here: lws's
		 * parser (the API's) closes a connection that starts with one,
		 * without an answer. They are in the kernel's buffer (peeked), so
		 * the read takes exactly them. */
		if (lead > 0 && recv(fd, buf, (size_t)lead, MSG_DONTWAIT) != (ssize_t)lead)
			return -1;
		return hand_over(f, s, preview);
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
	/* Incomplete: the unread bytes keep the fd readable, so stop polling
	 * it and look again shortly instead of spinning. */
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
		s->round = s->f->round;
		lws_dll2_add_tail(&s->list, &s->f->sniffs);
		/* a connection that sends nothing at all is closed by lws */
		lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, s->f->head_timeout_s + 1);
		return 0;
	case LWS_CALLBACK_RAW_RX_FILE:
		return s && s->f ? sniff(s, wsi) : -1;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (s) {
			lws_sul_cancel(&s->sul);
			if (s->list.owner)
				lws_dll2_remove(&s->list);
		}
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

/* Out of descriptors with no idle connection to close: the spare is given
 * up for one accept, so the next connection in the kernel's queue is
 * answered 503 and closed instead of waiting there. Returns 1 when one
 * was answered, 0 when the queue is empty, -1 when not even this works. */
static int refuse_with_spare(struct gw_front *f)
{
	int rc = -1;
	if (f->spare < 0)   /* lost once (below): taken back when one is free */
		f->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (f->spare < 0)
		return -1;
	close(f->spare);
	int cfd = accept4(f->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd >= 0) {
		gw_fd_exhausted(GW_FDX_REFUSED, EMFILE);
		answer_busy(f, cfd);
		close(cfd);
		rc = 1;
	} else if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) {
		rc = 0;
	}
	/* the number just closed is free again (unless the DNS discovery
	 * thread took it meanwhile: then this fails, and the next call tries
	 * again) */
	f->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return rc;
}

static void pause_accept(struct gw_front *f)
{
	/* pause, do not spin: the listener stays readable */
	lws_rx_flow_control(f->lwsi, 0);
	lws_sul_schedule(f->vh->ctx, 0, &f->accept_sul, accept_again, ACCEPT_PAUSE_US);
}

static void accept_some(struct gw_front *f)
{
	f->round++;
	for (int i = 0; i < 64; i++) {   /* bounded: let other fds run too */
		if (gw_fd_room() <= ACCEPT_KEEP_FDS)
			evict_oldest(f, NULL);
		int cfd = accept4(f->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			int e = errno, rc;
			if (e == EAGAIN || e == EINTR || e == ECONNABORTED)
				return;
			if (!gw_fd_exhausted_errno(e)) {
				sbx_warn("accept: %s", strerror(e));
				pause_accept(f);
				return;
			}
			gw_fd_exhausted(GW_FDX_ACCEPT, e);
			if (evict_oldest(f, NULL))
				continue;
			if ((rc = refuse_with_spare(f)) > 0)
				continue;
			if (rc < 0)
				pause_accept(f);
			return;
		}
		if (gw_fd_room() <= ACCEPT_LAST_FDS) {
			/* nothing idle to close (that came first) and nearly
			 * nothing left: this one cannot be served */
			gw_fd_exhausted(GW_FDX_REFUSED, EMFILE);
			answer_busy(f, cfd);
			close(cfd);
			continue;
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
			answer_busy(f, cfd);
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
	f->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	f->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (f->devnull < 0 || f->spare < 0 || f->lfd < 0)
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
