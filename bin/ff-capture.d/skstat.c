/*
 * ff-capture skstat: skstat -g and -m of each router at the window's end.
 */
#include "ff-capture.h"

#include <string.h>
#include <unistd.h>

/* skstat */

char *
skstat_program(char *const **env)
{
	static struct ff_build b;
	char why[1024];

	*env = NULL;
	if (!opt.build)
		return ff_which("skstat");
	if (!b.path && ff_build_parse(opt.build, "skrouterd", &b, why, sizeof(why)) < 0)
		ff_fail(2, "%s", why);
	if (!b.skstat)
		return NULL;
	*env = b.skstat_env;
	return ff_strdup(b.skstat);
}

/* Run skstat FLAG against a router; its output (and messages) go to `file`. */
static char *
run_skstat(const struct target *t, const char *flag, const char *file)
{
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	char bus[64], *path = skstat_program(&o.env);
	char *argv[] = { path, "-b", bus, (char *)flag, NULL };
	struct ff_child c;
	char *text;

	if (!path)
		ff_die_event("skstat is not %s", opt.build ? "beside the router build (PREFIX/bin)" :
			     "on PATH");
	snprintf(bus, sizeof(bus), "127.0.0.1:%d", t->mgmt_port);
	unlink(file);
	o.log = file;
	if (ff_spawn(&c, "skstat", argv, &o) < 0)
		ff_die_event("cannot start skstat");
	finish_child(&c, 30);
	free(path);
	/* Whole lines of something, or the file was cut short (a full disk). */
	text = ff_read_file(file, NULL);
	if (!text || !text[strspn(text, " \t\n")] || text[strlen(text) - 1] != '\n')
		ff_die_event("skstat %s of %s wrote %s to '%s' (a full disk?); no figures from it",
			     flag, t->role, !text ? "nothing readable" : !*text ? "nothing" :
			     "an incomplete last line", file);
	return text;
}

void
collect_skstat(void)
{
	json_t *files = json_array(), *ev;
	int i;

	for (i = 0; i < opt.n; i++) {
		struct target *t = &opt.t[i];
		char *g = ff_asprintf("%s/%s-skstat-g.txt", ff_rundir(opt.run_dir), t->role);
		char *m = ff_asprintf("%s/%s-skstat-m.txt", ff_rundir(opt.run_dir), t->role);
		char *gt = run_skstat(t, "-g", g), *mt = run_skstat(t, "-m", m);
		json_t *f = json_array();

		json_array_append_new(f, ff_json_path(g));
		json_array_append_new(f, ff_json_path(m));
		json_array_append_new(files, ff_json_path(g));
		json_array_append_new(files, ff_json_path(m));
		ev = ff_event("skstat");
		json_object_set_new(ev, "role", json_string(t->role));
		json_object_set_new(ev, "pid", json_integer(t->pid));
		json_object_set_new(ev, "management_port", json_integer(t->mgmt_port));
		json_object_set_new(ev, "files", f);
		json_object_set_new(ev, "general", ff_json_text(gt));
		json_object_set_new(ev, "memory", ff_json_text(mt));
		ff_emit(ev);
		free(g);
		free(m);
		free(gt);
		free(mt);
	}
	ff_emit(capture_event("skstat", files));
}

