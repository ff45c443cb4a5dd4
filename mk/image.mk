# `make image`: the default sandbox image (Debian 13 root filesystem) in
# $(SANDBOX_IMAGE_DIR)/default/rootfs and the runtime images node22, node24,
# node26 beside it, built once and reused; see docs/image.md.
SANDBOX_IMAGE_DIR ?= /var/cache/sandbox/images
export SANDBOX_IMAGE_DIR

.PHONY: image image-rebuild
image:
	@mk/image.sh
	@mk/runtime-images.sh

# Rebuild even when a complete image exists (for example after changing the
# package list in mk/image.sh without bumping IMAGE_VERSION).
image-rebuild:
	@mk/image.sh --force
	@mk/runtime-images.sh --force
