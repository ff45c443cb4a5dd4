LIBSBX_SRCS := $(wildcard lib/*.c)
LIBSBX := $(OUT)/libsbx.a

$(LIBSBX): $(call obj,$(LIBSBX_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
