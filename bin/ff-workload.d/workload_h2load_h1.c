/*
 * ff-workload's driver for workload h2load-h1: h2load's client over
 * HTTP/1.1 (its row's --h1) against nginx as the server, with a private
 * prefix, configuration (relay-conf/nginx-server.conf) and docroot.
 */
#include "ff-workload.h"

#include <string.h>

/*
 * `root` of nginx reads $name as a variable: each '$' of the path becomes
 * ${flimflam_dollar}, which nginx-server.conf defines as '$'.
 */
static char *
nginx_script_literal(const char *s)
{
	size_t n = 0;
	const char *p;
	char *out, *q;

	for (p = s; *p; p++)
		n += *p == '$' ? sizeof("${flimflam_dollar}") - 1 : 1;
	q = out = ff_realloc(NULL, n + 1);
	for (p = s; *p; p++)
		q = *p == '$' ? stpcpy(q, "${flimflam_dollar}") : (*q = *p, q + 1);
	*q = 0;
	return out;
}

/* nginx as the HTTP/1.1 server of h2load-h1: a private prefix and config. */
static void
nginx_server_args(int port, struct ff_argv *a)
{
	char portstr[16], *conf_path, *conf, *tmpl, *log;
	const char *dir = ff_rundir(NULL);

	snprintf(portstr, sizeof(portstr), "%d", port);
	tmpl = ff_datapath("relay-conf/nginx-server.conf");
	if (!tmpl)
		ff_die("cannot find relay-conf/nginx-server.conf");
	{
		char *docroot = run_path("docroot"), *root = nginx_script_literal(docroot);
		const char *const vars[] = {
			"DIR", dir, "LISTEN_HOST", opt.listen, "PORT", portstr, "DOCROOT", root,
			"USER", ff_user_name(), NULL
		};

		write_docroot(docroot);
		conf = ff_template_fill(tmpl, FF_CONF_NGINX, vars);
		free(root);
		free(docroot);
	}
	if (!conf)
		exit(1);
	conf_path = run_path("server-nginx.conf");
	if (ff_write_file(conf_path, conf, 0600) < 0)
		exit(1);
	free(conf);
	free(tmpl);
	log = run_path("server-nginx-error.log");
	ff_argv_addl(a, wl->server, "-p", dir, "-c", conf_path, "-e", log, NULL);
	free(conf_path);
	free(log);
}

const struct workload_driver workload_h2load_h1 = {
	.name = "h2load-h1",
	.server_args = nginx_server_args,
	.start = start_h2load,
	.finish = finish_h2load,
};
