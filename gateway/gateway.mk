# sandbox-gateway: the public REST API (docs/api.md) on libwebsockets.
GW_SRCS := $(wildcard gateway/*.c gateway/*/*.c)

# docs/openapi.yaml as JSON inside the binary (GET /v1/openapi.json):
# converted here, by Debian's python3-yaml, since the gateway parses no YAML
GW_OPENAPI_C := $(OUT)/gen/gw_openapi_doc.c
$(GW_OPENAPI_C): docs/openapi.yaml mk/openapi_c.py
	@mkdir -p $(dir $@)
	/usr/bin/python3 mk/openapi_c.py docs/openapi.yaml $@
$(OUT)/obj/gen/gw_openapi_doc.o: $(GW_OPENAPI_C) $(OUT)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BINDIR)/sandbox-gateway: $(call obj,$(GW_SRCS)) $(OUT)/obj/gen/gw_openapi_doc.o $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_LWS) $(LIBS_UV) $(LIBS_CJSON) $(LIBS_ZLIB) -lresolv -pthread -lm

ALL_BINS += $(BINDIR)/sandbox-gateway

# the loop lws runs on (gateway/core/gw_loop.c); lws loads its libuv
# plugin itself, the gateway makes the loop
LIBS_UV := $(shell pkg-config --libs libuv 2>/dev/null || echo -luv)

# cmocka test of the pure preview-proxy parsers (HTTP/1.1 head, chunked
# framing, TLS SNI, preview host names).
GW_PURE := gateway/proxy/gw_http1.c gateway/proxy/gw_sni.c gateway/proxy/gw_phost.c
$(OUT)/tests/test_gw_http1: $(call obj,$(GW_PURE))

# libFuzzer target tests/fuzz/fuzz_http_head.c needs the same parsers.
FUZZ_EXTRA_fuzz_http_head := $(GW_PURE)
build/fuzz/fuzz_http_head: $(GW_PURE) gateway/proxy/gw_http1.h gateway/proxy/gw_sni.h gateway/proxy/gw_proxy.h

# cmocka test of the @vercel/sandbox fs/write archive reader (gzip + tar).
$(OUT)/tests/test_cv_tar: $(call obj,gateway/vercel/compat_vercel_tar.c)
$(OUT)/tests/test_cv_tar: LIBS_CMOCKA += $(LIBS_ZLIB)

# cmocka test of the runners table's pure parts (sid names, placement
# order, discovery merge).
$(OUT)/tests/test_gw_rtable: $(call obj,gateway/core/gw_rtable.c)

# cmocka test of the runner address parser and the memory-BIO TLS client
# (against an in-process OpenSSL server).
$(OUT)/tests/test_gw_tls: $(call obj,gateway/core/gw_runner_addr.c gateway/core/gw_tls.c)
UNIT_LIBS_test_gw_tls = $(LIBS_LWS)

# cmocka test of the Origins /mcp accepts.
$(OUT)/tests/test_gw_mcp_origin: $(call obj,gateway/mcp/gw_mcp_origin.c)

# cmocka test of the preview proxy's response checks (framing, cookies).
$(OUT)/tests/test_gw_presp: $(call obj,gateway/proxy/gw_presp.c gateway/proxy/gw_http1.c)
FUZZ_EXTRA_fuzz_http_resp := gateway/proxy/gw_presp.c gateway/proxy/gw_http1.c
build/fuzz/fuzz_http_resp: gateway/proxy/gw_presp.c gateway/proxy/gw_presp.h gateway/proxy/gw_http1.c
