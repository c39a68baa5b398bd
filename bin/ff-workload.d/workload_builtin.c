/*
 * ff-workload's driver for workload builtin, and the hooks of every
 * workload whose programs are flimflam's own (the row's own: builtin/,
 * found by ff_helper_path): the server takes --port (and --address, and
 * a request/response workload's sizes), the client the run options and
 * writes its events, `result` among them, on a pipe.
 */
#include "ff-workload.h"

#include <string.h>

void
own_server_args(int port, struct ff_argv *a)
{
	char *helper = ff_helper_path(wl->server);

	ff_argv_add(a, helper);
	free(helper);
	arg_num(a, "--port", port);
	if (strcmp(opt.listen, "127.0.0.1"))
		ff_argv_addl(a, "--address", opt.listen, NULL);
	if (wl->request_response) {
		/* The server's framing: the sizes, the same as the client's. */
		arg_num(a, "--request-size", opt.run.request_size);
		arg_num(a, "--response-size", opt.run.response_size);
	}
}

void
own_start(struct drive *d, int out_fd)
{
	struct ff_argv a = FF_ARGV_INIT;
	char *helper;

	/* The client program's own command line. */
	helper = ff_helper_path(wl->client);
	ff_argv_add(&a, helper);
	arg_num(&a, "--port", d->port);
	if (d->host && strcmp(d->host, "127.0.0.1"))
		ff_argv_addl(&a, "--host", d->host, NULL);
	ff_argv_run_opts(&a, &opt.run, 0);
	if (wl->client_option)
		ff_argv_add(&a, wl->client_option);
	if (wl->request_response)
		ff_argv_addl(&a, "--histogram-dir", ff_rundir(NULL), NULL);
	if (ff_pipeline_stage())
		ff_argv_add(&a, "--pipeline-stage");
	spawn_or_die(&d->client, "client", a.v, d->client_log, out_fd);
	ff_argv_free(&a);
	free(helper);
}

/* Its result came on the pipe, forwarded and checked as it came. */
int
own_finish(struct drive *d)
{
	return d->have_result ? 0 : -1;
}

const struct workload_driver workload_builtin = {
	.name = "builtin",
	.server_args = own_server_args,
	.start = own_start,
	.finish = own_finish,
};
