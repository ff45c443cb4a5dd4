# sandbox-gateway: the public REST API (docs/api.md) on libwebsockets.
GW_SRCS := $(wildcard gateway/*.c)

$(BINDIR)/sandbox-gateway: $(call obj,$(GW_SRCS)) $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_LWS) $(LIBS_CJSON) -lm

ALL_BINS += $(BINDIR)/sandbox-gateway
