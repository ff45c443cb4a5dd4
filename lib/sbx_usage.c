#include "sbx_usage.h"

#include <string.h>

void sbx_usage_synopsis(FILE *out, const char *lead, const char *const groups[], size_t n,
			size_t width)
{
	size_t indent = strlen(lead), col = indent;

	fputs(lead, out);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(groups[i]);

		if (col > indent && col + 1 + len > width) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
		}
		if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fputs(groups[i], out);
		col += len;
	}
	fputc('\n', out);
}
