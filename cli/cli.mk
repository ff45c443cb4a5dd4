# sbx: the command-line client (docs/cli.md). REST calls over a small
# blocking HTTP/1.1 client (cli_http.c), streams and terminals over
# libwebsockets' WebSocket client (cli_ws.c).
CLI_SRCS := $(wildcard cli/*.c)

$(BINDIR)/sbx: $(call obj,$(CLI_SRCS)) $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_LWS) $(LIBS_CJSON) -lm -pthread

ALL_BINS += $(BINDIR)/sbx

# cmocka test of the HTTP client and helpers (it needs OpenSSL)
$(OUT)/tests/test_cli_http: $(call obj,cli/cli_http.c cli/cli_util.c cli/cli_errors.c)
UNIT_LIBS_test_cli_http = $(LIBS_LWS)
