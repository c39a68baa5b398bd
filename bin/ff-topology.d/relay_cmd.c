/*
 * ff-topology's driver for relay cmd: each relay is the user's own program
 * (--relay-cmd), Envoy, socat or a proxy of their own, run as the words of
 * its command with the relay's addresses filled in; no shell runs it. It
 * is ready when it listens on its port; ff-topology writes no
 * configuration for it, and cannot prove what it does with TLS.
 */
#include "ff-topology.h"

#include <stdio.h>

static struct ff_argv words = FF_ARGV_INIT;

/* --relay-cmd is there, its words and placeholders make sense, and its program is on PATH. */
static void
check_cmd(void)
{
	struct ff_buf why = FF_BUF_INIT;

	if (!opt.relay_cmd)
		ff_usage_error(usage, "relay 'cmd' runs the command of --relay-cmd, and none is given");
	switch (ff_relay_cmd_program(opt.relay_cmd, &program_path, &why)) {
	case 2:
		ff_usage_error(usage, "%s", why.s);
	case 1:
		ff_die("%s", why.s);
	}
	if (ff_relay_cmd_split(opt.relay_cmd, &words, &why) < 0)
		ff_usage_error(usage, "%s", why.s);
}

static void
configure_cmd(struct relay *r)
{
	r->conf = NULL;
	r->ready_port = r->port;
}

/* The command's words, the program found on PATH first, each placeholder filled. */
static void
args_cmd(struct relay *r, struct ff_argv *a)
{
	char port[16], target[16];
	char *listen = ff_asprintf("%s:%d", r->listen_host, r->port);
	char *upstream = ff_asprintf("%s:%d", r->target_host, r->target_port);
	const char *const values[] = {
		listen, r->listen_host, port_str(port, r->port),
		upstream, r->target_host, port_str(target, r->target_port), r->dir, r->role
	};
	size_t i;

	ff_argv_add(a, program_path);
	for (i = 1; i < words.n; i++) {
		char *w = ff_relay_cmd_fill(words.v[i], values);

		ff_argv_add(a, w);
		free(w);
	}
	free(listen);
	free(upstream);
}

const struct relay_driver relay_cmd = {
	.name = "cmd",
	.check = check_cmd,
	.configure = configure_cmd,
	.args = args_cmd,
};
