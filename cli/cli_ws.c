#include "cli_ws.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <libwebsockets.h>

#define IN_CHUNK 16384

/* The opaque data of the adopted signalfd (the WebSocket's is the session). */
struct signal_src {
	struct cli_ws *s;
};

static void want_write(struct cli_ws *s)
{
	if (s->wsi)
		lws_callback_on_writable(s->wsi);
}

void cli_ws_kill(struct cli_ws *s, const char *signame)
{
	snprintf(s->kill_pending, sizeof(s->kill_pending), "%s", signame);
	want_write(s);
}

void cli_ws_resize(struct cli_ws *s, int cols, int rows)
{
	s->cols = cols;
	s->rows = rows;
	s->resize_pending = 1;
	want_write(s);
}

void cli_ws_stdin_eof(struct cli_ws *s)
{
	s->eof_pending = 1;
	want_write(s);
}

void cli_ws_close(struct cli_ws *s)
{
	s->close_pending = 1;
	want_write(s);
}

static void on_text(struct cli_ws *s)
{
	cJSON *j = cJSON_ParseWithLength(s->text, s->text_len);
	cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");

	if (!cJSON_IsString(type)) {
		cJSON_Delete(j);
		return;
	}
	if (!strcmp(type->valuestring, "exit")) {
		cJSON *code = cJSON_GetObjectItemCaseSensitive(j, "exit_code");
		cJSON *sig = cJSON_GetObjectItemCaseSensitive(j, "signal");

		s->got_exit = 1;
		if (cJSON_IsString(sig))
			s->exit_status = cli_signal_status(sig->valuestring);
		else if (cJSON_IsNumber(code))
			s->exit_status = code->valueint & 255;
		else
			s->exit_status = 0;
	} else if (!strcmp(type->valuestring, "error")) {
		cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
		cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");

		snprintf(s->error, sizeof(s->error), "%s",
			 cJSON_IsString(m) ? m->valuestring : "error from the gateway");
	} else if (!strcmp(type->valuestring, "truncated")) {
		cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "bytes");

		cli_errf("warning: %.0f bytes of output were lost to the sandbox's retention bound",
			 cJSON_IsNumber(b) ? b->valuedouble : 0.0);
	}
	cJSON_Delete(j);
}

static void on_binary(struct cli_ws *s, struct lws *wsi, const unsigned char *p, size_t n)
{
	int fd = 1;

	if (s->mode == CLI_WS_STREAM) {
		if (lws_is_first_fragment(wsi)) {
			if (!n)
				return;
			s->in_tag = p[0];
			p++;
			n--;
		}
		fd = s->in_tag == 2 ? 2 : 1;
	}
	if (s->output_gone || !n)
		return;
	if (cli_write_all(fd, p, n) && errno == EPIPE) {
		/* the reader went away (`| head`): sbx ends (the caller sends
		 * the command SIGPIPE, over REST: a kill sent on a stream that
		 * closes right after it may be dropped with the session) */
		s->output_gone = 1;
		cli_ws_close(s);
	}
}

/* One message per WRITEABLE: stdin bytes first, then control messages. */
static int on_writeable(struct cli_ws *s, struct lws *wsi)
{
	unsigned char buf[LWS_PRE + 128];
	int n;

	if (s->close_pending) {
		lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
		return -1;
	}
	pthread_mutex_lock(&s->lock);
	if (s->out_len) {
		size_t len = s->out_len;

		n = lws_write(wsi, s->out + LWS_PRE, len, LWS_WRITE_BINARY);
		s->out_len = 0;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
		if (n < (int)len)
			return -1;
		lws_callback_on_writable(wsi); /* perhaps EOF or a control message */
		return 0;
	}
	if (s->in_eof && s->mode == CLI_WS_STREAM)
		s->eof_pending = 1;
	pthread_mutex_unlock(&s->lock);
	if (s->kill_pending[0]) {
		n = snprintf((char *)buf + LWS_PRE, 128, "{\"type\":\"kill\",\"signal\":\"%s\"}",
			     s->kill_pending);
		s->kill_pending[0] = '\0';
	} else if (s->resize_pending) {
		n = snprintf((char *)buf + LWS_PRE, 128,
			     "{\"type\":\"resize\",\"cols\":%d,\"rows\":%d}", s->cols, s->rows);
		s->resize_pending = 0;
	} else if (s->eof_pending && !s->eof_sent) {
		n = snprintf((char *)buf + LWS_PRE, 128, "{\"type\":\"stdin_eof\"}");
		s->eof_sent = 1;
	} else {
		return 0;
	}
	if (lws_write(wsi, buf + LWS_PRE, (size_t)n, LWS_WRITE_TEXT) < n)
		return -1;
	if (s->kill_pending[0] || s->resize_pending || (s->eof_pending && !s->eof_sent))
		lws_callback_on_writable(wsi);
	return 0;
}

/* stdin is read by a thread with blocking reads into one slot that the
 * loop sends from: a pipe's last bytes are never lost to a POLLHUP (lws
 * closes a raw file on POLLHUP while its input is paused), and the
 * terminal's file description is never made non-blocking for stdout. */
static struct cli_ws *current;   /* lws's cancel event carries no user data */

/* The reader may sit in read(0) after the session (nothing can interrupt
 * it portably), so its buffer outlives any session: one per process. */
static unsigned char stdin_buf[LWS_PRE + 1 + IN_CHUNK];

static void *stdin_reader(void *arg)
{
	struct cli_ws *s = arg;
	size_t off = LWS_PRE + (s->mode == CLI_WS_STREAM ? 1 : 0);

	for (;;) {
		ssize_t r;

		pthread_mutex_lock(&s->lock);
		while (s->out_len && !s->stop_reader)
			pthread_cond_wait(&s->cond, &s->lock);
		pthread_mutex_unlock(&s->lock);
		if (s->stop_reader)
			return NULL;
		do
			r = read(0, s->out + off, IN_CHUNK);
		while (r < 0 && errno == EINTR);
		pthread_mutex_lock(&s->lock);
		if (r > 0) {
			if (s->mode == CLI_WS_STREAM)
				s->out[LWS_PRE] = 0;
			s->out_len = (size_t)r + off - LWS_PRE;
		} else {
			s->in_eof = 1; /* end of input, or an unreadable one: EOF */
		}
		pthread_mutex_unlock(&s->lock);
		lws_cancel_service(s->ctx);
		if (r <= 0)
			return NULL;
	}
}

/* The signalfd is readable: hand each signal to the session. */
static int on_signalfd(struct lws *wsi, enum lws_callback_reasons reason)
{
	struct signal_src *src = lws_get_opaque_user_data(wsi);
	struct signalfd_siginfo si;

	if (!src || reason != LWS_CALLBACK_RAW_RX_FILE)
		return 0;
	while (read(lws_get_socket_fd(wsi), &si, sizeof(si)) == sizeof(si))
		if (src->s->on_signal)
			src->s->on_signal(src->s, (int)si.ssi_signo);
	return 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
		    void *in, size_t len)
{
	struct cli_ws *s = lws_get_opaque_user_data(wsi);

	(void)user;
	if (reason == LWS_CALLBACK_RAW_RX_FILE || reason == LWS_CALLBACK_RAW_CLOSE_FILE)
		return on_signalfd(wsi, reason);
	if (reason == LWS_CALLBACK_EVENT_WAIT_CANCELLED) { /* the stdin thread has news */
		if (current && current->wsi && current->opened)
			lws_callback_on_writable(current->wsi);
		return 0;
	}
	if (!s)
		return 0;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: {
		unsigned char **p = (unsigned char **)in, *end = *p + len;
		char auth[600];
		int n = snprintf(auth, sizeof(auth), "Bearer %s", s->cfg->key);

		if (n < 0 || (size_t)n >= sizeof(auth) ||
		    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION,
						 (unsigned char *)auth, n, p, end))
			return -1;
		return 0;
	}
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		snprintf(s->error, sizeof(s->error), "cannot open %s: %s", s->path,
			 in ? (const char *)in : "connection failed");
		s->wsi = NULL;
		s->done = 1;
		return 0;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		s->opened = 1;
		if (s->on_open)
			s->on_open(s);
		lws_callback_on_writable(wsi); /* stdin that came before the open */
		return 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (lws_frame_is_binary(wsi)) {
			on_binary(s, wsi, in, len);
			return 0;
		}
		if (lws_is_first_fragment(wsi))
			s->text_len = 0;
		if (s->text_len + len < sizeof(s->text)) {
			memcpy(s->text + s->text_len, in, len);
			s->text_len += len;
		}
		if (lws_is_final_fragment(wsi))
			on_text(s);
		return 0;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return on_writeable(s, wsi);
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
		if (len >= 2)
			s->close_code = ((unsigned char *)in)[0] << 8 | ((unsigned char *)in)[1];
		if (len > 2 && !s->error[0] && s->close_code != 1000)
			snprintf(s->error, sizeof(s->error), "%.*s", (int)(len - 2), (char *)in + 2);
		return 0;
	case LWS_CALLBACK_CLIENT_CLOSED:
		s->wsi = NULL;
		s->done = 1;
		return 0;
	default:
		return 0;
	}
}

static const struct lws_protocols protocols[] = {
	{ "sbx-ws", callback, 0, 65536, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static struct lws *adopt(struct cli_ws *s, int fd, struct signal_src *t)
{
	lws_sock_file_fd_type u;
	struct lws_vhost *vh = lws_get_vhost_by_name(s->ctx, "default");

	u.filefd = fd;
	return lws_adopt_descriptor_vhost_via_info(&(lws_adopt_desc_t){
		.vh = vh, .type = LWS_ADOPT_RAW_FILE_DESC, .fd = u,
		.vh_prot_name = "sbx-ws", .opaque = t });
}

int cli_ws_run(struct cli_ws *s)
{
	struct lws_context_creation_info info;
	struct lws_client_connect_info ci;
	struct signal_src tsig = { s };
	char path[4096];
	sigset_t set;
	int sfd = -1, i, rc = -1;

	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	info.pt_serv_buf_size = 64 * 1024;
	info.vhost_name = "default";
	lws_set_log_level(0, NULL);
	s->ctx = lws_create_context(&info);
	s->out = stdin_buf;
	if (!s->ctx) {
		snprintf(s->error, sizeof(s->error), "cannot start the WebSocket client");
		goto out;
	}
	if (s->signals) {
		sigemptyset(&set);
		for (i = 0; s->signals[i]; i++)
			sigaddset(&set, s->signals[i]);
		sigprocmask(SIG_BLOCK, &set, NULL);
		sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
		if (sfd < 0 || !adopt(s, sfd, &tsig)) {
			snprintf(s->error, sizeof(s->error), "signalfd: %s", strerror(errno));
			goto out;
		}
	}
	current = s;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (s->forward_stdin) {
		if (pthread_create(&s->reader, NULL, stdin_reader, s)) {
			snprintf(s->error, sizeof(s->error), "cannot start the stdin reader");
			goto out;
		}
		/* it may sit in read(0) for good: never joined, gone at exit */
		pthread_detach(s->reader);
	}
	snprintf(path, sizeof(path), "%s%s", s->cfg->url.prefix, s->path);
	memset(&ci, 0, sizeof(ci));
	ci.context = s->ctx;
	ci.address = s->cfg->url.host;
	ci.port = atoi(s->cfg->url.port);
	ci.path = path;
	ci.host = s->cfg->url.host;
	ci.origin = s->cfg->url.host;
	ci.ssl_connection = s->cfg->url.tls ? LCCSCF_USE_SSL : 0;
	ci.local_protocol_name = "sbx-ws";
	ci.opaque_user_data = s;
	ci.pwsi = &s->wsi;
	if (!lws_client_connect_via_info(&ci) && !s->error[0]) {
		snprintf(s->error, sizeof(s->error), "cannot connect to %s", s->cfg->url_text);
		goto out;
	}
	while (!s->done)
		if (lws_service(s->ctx, 0) < 0)
			break;
	rc = s->opened ? 0 : -1;
out:
	if (s->ctx)
		lws_context_destroy(s->ctx); /* closes the adopted signalfd */
	s->ctx = NULL;
	pthread_mutex_lock(&s->lock);
	s->stop_reader = 1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return rc;
}
