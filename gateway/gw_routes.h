/* The route table (gw_routes.c), given to the router at start-up. */
#ifndef GW_ROUTES_H
#define GW_ROUTES_H
#include <stddef.h>
#include "http/gw_route.h"

extern const struct gw_route gw_routes[];
extern const size_t gw_nroutes;
#endif
