/*
 * ff-workload serve: the workload's server on a free port, its docroot or
 * config written, held until the reader closes the pipe.
 */
#include "ff-workload.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* The size of the object the HTTP servers serve. */
#define HTTP_OBJECT_BYTES 1024

static void
write_docroot(const char *docroot)
{
	char body[HTTP_OBJECT_BYTES + 1], *path;
	int i;

	if (ff_mkdirs(docroot, 0700) < 0)
		ff_die("cannot create '%s': %s", docroot, strerror(errno));
	for (i = 0; i < HTTP_OBJECT_BYTES; i++)
		body[i] = "flimflam\n"[i % 9];
	body[HTTP_OBJECT_BYTES] = 0;
	path = ff_asprintf("%s/flimflam.txt", docroot);
	if (ff_write_file(path, body, 0600) < 0)
		exit(1);
	free(path);
}

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
nginx_server_argv(int port, char **argv, char *storage[4])
{
	char portstr[16], *conf_path, *conf, *tmpl;
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
	storage[0] = conf_path;
	storage[1] = run_path("server-nginx-error.log");
	argv[0] = "nginx";
	argv[1] = "-p";
	argv[2] = (char *)dir;
	argv[3] = "-c";
	argv[4] = conf_path;
	argv[5] = "-e";
	argv[6] = storage[1];
	argv[7] = NULL;
}

static int
start_server(struct ff_child *c, int port, char *log)
{
	char portstr[16], sizes[2][24], *argv[16], *storage[4] = { 0 }, *docroot = NULL;
	int i = 0;

	snprintf(portstr, sizeof(portstr), "%d", port);
	/* The server program's own command line. */
	if (wl->own) {
		argv[i++] = ff_helper_path(wl->server);
		argv[i++] = "--port";
		argv[i++] = portstr;
		if (strcmp(opt.listen, "127.0.0.1")) {
			argv[i++] = "--address";
			argv[i++] = (char *)opt.listen;
		}
		if (wl->request_response) {
			/* The server's framing: the sizes, the same as the client's. */
			snprintf(sizes[0], sizeof(sizes[0]), "%ld", opt.run.request_size);
			snprintf(sizes[1], sizeof(sizes[1]), "%ld", opt.run.response_size);
			argv[i++] = "--request-size";
			argv[i++] = sizes[0];
			argv[i++] = "--response-size";
			argv[i++] = sizes[1];
		}
	} else if (!strcmp(wl->server, "iperf3")) {
		argv[i++] = "iperf3";
		argv[i++] = "--server";
		argv[i++] = "--bind";
		argv[i++] = (char *)opt.listen;
		argv[i++] = "--port";
		argv[i++] = portstr;
	} else if (!strcmp(wl->server, "nghttpd")) {
		docroot = run_path("docroot");
		write_docroot(docroot);
		argv[i++] = "nghttpd";
		argv[i++] = "--no-tls";
		argv[i++] = "--address";
		argv[i++] = (char *)opt.listen;
		argv[i++] = "--htdocs";
		argv[i++] = docroot;
		argv[i++] = portstr;
	} else if (!strcmp(wl->server, "nginx")) {
		nginx_server_argv(port, argv, storage);
		i = 7;
	} else
		ff_die("workload '%s' has no code in ff-workload to start its server %s",
		       opt.workload, wl->server);
	argv[i] = NULL;
	spawn_or_die(c, "server", argv, log, -1);
	free(docroot);
	free(storage[0]);
	free(storage[1]);
	return ff_wait_listen(c, port, 15);
}

int
serve(void)
{
	static struct ff_child server;
	struct ff_child *kids[1] = { &server };
	char *log = run_path("server.log");
	int port = 0, tries, r;
	json_t *ev;

	for (tries = 0; tries < 5; tries++) {
		port = ff_free_port();
		if (truncate(log, 0) < 0 && errno != ENOENT)
			ff_die("cannot truncate '%s': %s", log, strerror(errno));
		r = start_server(&server, port, log);
		if (r == 0)
			break;
		if (ff_signalled())
			ff_exit_signalled();
		ff_child_stop(&server, 1.0);
		if (r == -1 && !ff_child_lost_port(&server))
			ff_child_report(&server);
		if (r != -1 || !ff_child_lost_port(&server))
			ff_die("the %s server did not start", opt.workload);
		ff_info("port %d was taken; trying another", port);
	}
	if (tries == 5)
		ff_die("the %s server found no free port", opt.workload);

	ev = ff_event("server");
	json_object_set_new(ev, "workload", json_string(opt.workload));
	json_object_set_new(ev, "host", json_string(opt.listen));
	json_object_set_new(ev, "port", json_integer(port));
	json_object_set_new(ev, "pid", json_integer(server.pid));
	json_object_set_new(ev, "run_dir", ff_json_path(ff_rundir(NULL)));
	json_object_set_new(ev, "log", ff_json_path(log));
	json_object_set_new(ev, "cpus", have_workload_cpus ?
			    json_string(ff_cpus_str(&workload_cpus)) : json_null());
	if (wl->url_path)
		json_object_set_new(ev, "path", json_string(wl->url_path));
	ff_emit(ev);
	ff_stage_end(&stage, 0);
	free(log);
	return ff_stage_hold(&stage, kids, 1);
}
