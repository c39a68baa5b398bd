/*
 * ff-topology's driver for relay none: no relay, the client connects to
 * the server (its row of the matrix has no processes, so nothing here
 * runs; start_relays hands the server's address on).
 */
#include "ff-topology.h"

static void
configure_none(struct relay *r)
{
	(void)r;
	ff_die("relay 'none' runs no relay to configure");
}

static void
args_none(struct relay *r, struct ff_argv *a)
{
	(void)r;
	(void)a;
	ff_die("relay 'none' runs no relay to start");
}

const struct relay_driver relay_none = {
	.name = "none",
	.configure = configure_none,
	.args = args_none,
};
