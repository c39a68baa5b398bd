/*
 * ff-workload's drivers for workloads builtin-rr and builtin-crr: request
 * and response over flimflam's own programs (builtin/rr-server.c,
 * rr-client.c), started as builtin's are; their rows say the rest (the
 * sizes and --rate, the client's --crr, its histograms).
 */
#include "ff-workload.h"

const struct workload_driver workload_builtin_rr = {
	.name = "builtin-rr",
	.server_args = own_server_args,
	.start = own_start,
	.finish = own_finish,
};

const struct workload_driver workload_builtin_crr = {
	.name = "builtin-crr",
	.server_args = own_server_args,
	.start = own_start,
	.finish = own_finish,
};
