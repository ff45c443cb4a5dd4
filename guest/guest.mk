# guest/: sandbox-agent, the program inside every sandbox (docs/protocol.md).
AGENT_SRCS := $(wildcard guest/*.c)
AGENT_PURE := guest/agent_ring.c guest/agent_req.c

$(BINDIR)/sandbox-agent: $(call obj,$(AGENT_SRCS)) $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_CJSON) -lm

ALL_BINS += $(BINDIR)/sandbox-agent

# Unit tests and fuzz targets use the pure modules only. Own recipe so the
# module objects come before libsbx.a on the link line.
$(OUT)/tests/test_agent_%: $(OUT)/obj/tests/unit/test_agent_%.o $(OUT)/obj/guest/agent_%.o $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_CMOCKA) $(LIBS_CJSON) -lm
FUZZ_EXTRA_fuzz_agent_request := guest/agent_req.c
