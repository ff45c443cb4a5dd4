/* The synopsis line of a program's usage, built from its flag table: the
 * runner's and the agent's (each table makes the groups, this wraps them). */
#ifndef SBX_USAGE_H
#define SBX_USAGE_H

#include <stddef.h>
#include <stdio.h>

/* lead ("usage: prog "), then the n groups one space apart; a line is
 * broken, and the next indented under the first group, before a group
 * that would pass width columns (a group wider than that stands alone on
 * its line). Ends with a newline. */
void sbx_usage_synopsis(FILE *out, const char *lead, const char *const groups[], size_t n,
			size_t width);

#endif
