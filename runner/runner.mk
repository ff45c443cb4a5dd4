# sandbox-runner: the control daemon, its driver registry (rn_drivers.c) and
# the drivers (driver_<name>*.c; driver_jail_seccomp.c, the seccomp policy,
# is picked up by the wildcard like every other source).
RUNNER_SRCS := $(wildcard runner/*.c)

$(BINDIR)/sandbox-runner: $(call obj,$(RUNNER_SRCS)) $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_CJSON) $(LIBS_SECCOMP) $(LIBS_SSL) $(LIBS_ZLIB) -lm

ALL_BINS += $(BINDIR)/sandbox-runner

# cmocka test of the create-request parser (a pure module).
$(OUT)/tests/test_runner_spec: $(call obj,runner/rn_spec.c runner/rn_policy.c runner/rn_rules.c runner/rn_net.c)

# libFuzzer target tests/fuzz/fuzz_runner_req.c needs the parser.
FUZZ_EXTRA_fuzz_runner_req := runner/rn_spec.c runner/rn_policy.c runner/rn_rules.c runner/rn_net.c
build/fuzz/fuzz_runner_req: runner/rn_spec.c runner/rn_spec.h

# cmocka test of the cgroup module on the host's cgroups (skips unless root).
$(OUT)/tests/test_rn_cgroup: $(call obj,runner/rn_cgroup.c runner/rn_cgroup_freeze.c)

# cmocka test of the gvisor driver's pure parts: config.json, the version.
$(OUT)/tests/test_gvisor_spec: $(call obj,runner/driver_gvisor_spec.c runner/rn_egress_trust.c runner/driver_gvisor_version.c runner/rn_spec.c runner/rn_policy.c runner/rn_rules.c runner/rn_net.c)

# cmocka test of the memory admission rule (arithmetic only).
$(OUT)/tests/test_rn_admit: $(call obj,runner/rn_admit_rule.c)

# cmocka test of the gvisor watcher's move of the agent's socket.
$(OUT)/tests/test_gvisor_sock: $(call obj,runner/driver_gvisor_sock.c)

# cmocka test of the egress CA's trust bundle, env and install.
$(OUT)/tests/test_rn_trust: $(call obj,runner/rn_egress_trust.c)

# cmocka test of the decrypted egress connection's socket BIO.
$(OUT)/tests/test_rn_egress_bio: $(call obj,runner/rn_egress_bio.c)
UNIT_LIBS_test_rn_egress_bio := $(LIBS_SSL)

# cmocka test of the vm driver's KVM boot probe (with a mock QEMU).
$(OUT)/tests/test_vm_kvm: $(call obj,runner/driver_vm_kvm.c)

# cmocka test of the --listen-tls address parser.
$(OUT)/tests/test_rn_addr: $(call obj,runner/rn_addr.c)

# cmocka test of what the runner reads from an image's stamp and dpkg status.
$(OUT)/tests/test_rn_images: $(call obj,runner/rn_images.c runner/rn_spec.c runner/rn_policy.c runner/rn_rules.c runner/rn_net.c)
UNIT_LIBS_test_rn_images := $(LIBS_SSL)

# cmocka test of the agent runtime's preload list.
$(OUT)/tests/test_rn_runtime: $(call obj,runner/rn_runtime.c runner/rn_images.c runner/rn_spec.c runner/rn_policy.c runner/rn_rules.c runner/rn_net.c)
UNIT_LIBS_test_rn_runtime := $(LIBS_SSL)

# cmocka test of the egress proxy's name parsers and the network policy.
$(OUT)/tests/test_sbx_sni: $(call obj,runner/rn_policy.c runner/rn_rules.c runner/rn_net.c runner/rn_spec.c)

# libFuzzer target tests/fuzz/fuzz_egress_peek.c: the name parsers, the
# DNS messages and the policy parser.
FUZZ_EXTRA_fuzz_egress_peek := runner/rn_policy.c runner/rn_rules.c runner/rn_net.c runner/rn_spec.c runner/rn_dns_wire.c
build/fuzz/fuzz_egress_peek: runner/rn_policy.c runner/rn_rules.c runner/rn_dns_wire.c runner/rn_policy.h

# libFuzzer target tests/fuzz/fuzz_egress_http.c: the decrypting proxy's
# HTTP/1 heads (lib) and the per-name rules.
FUZZ_EXTRA_fuzz_egress_http := runner/rn_rules.c
build/fuzz/fuzz_egress_http: runner/rn_rules.c runner/rn_rules.h

# cmocka test of the image unpacker over hostile tars built in the test.
OCI_UNPACK_SRCS := runner/rn_oci_tar.c runner/rn_oci_layer.c runner/rn_oci_compose.c \
                   runner/rn_oci_manifest.c
$(OUT)/tests/test_oci_layer: $(call obj,$(OCI_UNPACK_SRCS))
UNIT_LIBS_test_oci_layer := $(LIBS_ZLIB) $(LIBS_SSL)

# libFuzzer targets: the manifest/config parser, and the layer walker.
FUZZ_EXTRA_fuzz_oci_manifest := runner/rn_oci_manifest.c
build/fuzz/fuzz_oci_manifest: runner/rn_oci_manifest.c runner/rn_oci_manifest.h
FUZZ_EXTRA_fuzz_oci_layer := $(OCI_UNPACK_SRCS) $(LIBS_ZLIB) $(LIBS_SSL)
build/fuzz/fuzz_oci_layer: $(OCI_UNPACK_SRCS) runner/rn_oci_layer.h runner/rn_oci_tar.h

# sandbox-gvisor-watch: a gvisor sandbox's watcher (driver_gvisor_watch.c),
# found beside sandbox-runner; libc alone, so each idle sandbox's watcher
# holds no libcrypto pages.
GVWATCH_SRCS := runner/gvwatch/gvwatch_main.c runner/driver_gvisor_watch.c \
                runner/driver_gvisor_sock.c runner/rn_child.c

$(BINDIR)/sandbox-gvisor-watch: $(call obj,$(GVWATCH_SRCS)) $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^

ALL_BINS += $(BINDIR)/sandbox-gvisor-watch
