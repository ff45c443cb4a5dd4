/* runsc's version from `runsc --version`: the driver needs 20240729 or
 * newer (the statx fix that `ls -l` needs, and the systrap platform). */
#include "driver_gvisor.h"

long gv_parse_version(const char *text)
{
	/* "runsc version release-20240729.0" upstream; Debian's build says
	 * "runsc version 0.0~20240729.0" */
	for (const char *p = text; p && *p; p++) {
		if (p[0] == '2' && p[1] == '0' && (p == text || p[-1] < '0' || p[-1] > '9')) {
			long v = 0;
			int k;

			for (k = 0; k < 8 && p[k] >= '0' && p[k] <= '9'; k++)
				v = v * 10 + (p[k] - '0');
			if (k == 8 && (p[8] < '0' || p[8] > '9'))
				return v;
		}
	}
	return -1;
}
