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

void
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

static int
start_server(struct ff_child *c, int port, char *log)
{
	struct ff_argv a = FF_ARGV_INIT;

	/* The server program's own command line, from the workload's driver. */
	wdrv->server_args(port, &a);
	spawn_or_die(c, "server", a.v, log, -1);
	ff_argv_free(&a);
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
