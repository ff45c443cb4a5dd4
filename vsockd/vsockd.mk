# vsockd/: sandbox-vsockd, the vhost-user vsock device of one VM
# (vsockd/vs_dev.h), used by the runner's vm driver.
VSOCKD_SRCS := $(wildcard vsockd/*.c)
VSOCKD_PURE := vsockd/vu_mem.c vsockd/vu_ring.c vsockd/vs_pkt.c

$(BINDIR)/sandbox-vsockd: $(call obj,$(VSOCKD_SRCS)) $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^

ALL_BINS += $(BINDIR)/sandbox-vsockd

# cmocka tests and the fuzz target use the pure modules only.
$(OUT)/tests/test_vu_ring: $(call obj,$(VSOCKD_PURE))
FUZZ_EXTRA_fuzz_vsock_ring := $(VSOCKD_PURE)
build/fuzz/fuzz_vsock_ring: $(VSOCKD_PURE) $(wildcard vsockd/*.h)
