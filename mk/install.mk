# `make install [PREFIX=/usr/local] [DESTDIR=]`: the release programs, the
# web demo and the systemd units of deploy/systemd/ (a gateway and a
# standalone runner), their paths filled in for PREFIX. DESTDIR is a staging
# root (packaging, tests/install/run.sh): nothing outside it is touched.
PREFIX     ?= /usr/local
DESTDIR    ?=
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SBX_DATADIR := $(PREFIX)/share/sandbox
INSTALL_PROGRAMS := sandbox-gateway sandbox-runner sandbox-gvisor-watch sandbox-agent sandbox-vsockd sbx
SYSTEMD_UNITS := $(wildcard deploy/systemd/*.service.in)

.PHONY: install
install: all web
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(SBX_DATADIR)/web $(DESTDIR)$(UNITDIR)
	install -m 0755 $(addprefix $(BINDIR)/,$(INSTALL_PROGRAMS)) $(DESTDIR)$(PREFIX)/bin/
	cp -R web-demo/dist/. $(DESTDIR)$(SBX_DATADIR)/web/
	for u in $(SYSTEMD_UNITS); do \
		sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@DATADIR@|$(SBX_DATADIR)|g' \
		    -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@IMAGEDIR@|$(SANDBOX_IMAGE_DIR)|g' \
		    "$$u" >$(DESTDIR)$(UNITDIR)/$$(basename "$$u" .in) && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$(basename "$$u" .in) || exit 1; \
	done
