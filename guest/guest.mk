# guest/: sandbox-agent, the program inside every sandbox (docs/protocol.md).
AGENT_SRCS := $(wildcard guest/*.c)
AGENT_PURE := guest/agent_ring.c guest/agent_req.c

$(BINDIR)/sandbox-agent: $(call obj,$(AGENT_SRCS)) $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_CJSON) -lm

ALL_BINS += $(BINDIR)/sandbox-agent

# Unit tests and fuzz targets use the pure modules only.
$(OUT)/tests/test_agent_req: $(call obj,guest/agent_req.c)
$(OUT)/tests/test_agent_ring: $(call obj,guest/agent_ring.c)
FUZZ_EXTRA_fuzz_agent_request := guest/agent_req.c
