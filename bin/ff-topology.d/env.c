/*
 * ff-topology: the environment of the relay's build, collected beside the
 * relays as they start, and emitted after `topology`.
 */
#include "ff-topology.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>


/*
 * The environment travels with every result, with the Proton library the
 * running router actually loaded. A child collects it from the stage's
 * start, while the server and the relays start, and `environment` follows
 * `topology`: its probes (programs run for their versions, 30 to 80 ms of
 * CPU) are then over before a warmup of a second ends. With no warmup at
 * all, `ff-workload drive` waits for `environment` before it starts the
 * client: the probes ran inside such windows (--warmup 0: 1% of one CPU
 * over a 2 s window, bench/owncpu.sh). Waiting here instead cost every run
 * over relay none 20 to 70 ms of turnaround.
 */
static struct ff_child env_child;
static int env_fd = -1;

/*
 * In the collecting child: the build is the relay the environment names,
 * its directory (or a link to it, by the program's name, in the run
 * directory) first on PATH, with the build's own libraries.
 */
static void
env_of_build(void)
{
	const char *base = strrchr(build.path, '/') + 1, *path = getenv("PATH");
	char *dir, *link;

	if (!strcmp(base, row->program)) {
		dir = ff_strdup(build.path);
		*strrchr(dir, '/') = 0;
	} else {
		dir = ff_asprintf("%s/build-bin", ff_rundir(NULL));
		link = ff_asprintf("%s/%s", dir, row->program);
		if (ff_mkdirs(dir, 0700) < 0 || (symlink(build.path, link) < 0 && errno != EEXIST))
			ff_debug("cannot link '%s' as '%s': %s", build.path, link, strerror(errno));
		free(link);
	}
	setenv("PATH", path ? ff_asprintf("%s:%s", dir, path) : dir, 1);
	ff_build_env_enter(&build);
}

void
env_start(void)
{
	int fds[2], null;
	json_t *env;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return;		/* then collected in line */
	if (ff_fork(&env_child, "environment collector") < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (env_child.pid > 0) {
		close(fds[1]);
		env_fd = fds[0];
		return;
	}
	null = open("/dev/null", O_RDWR);
	dup2(null, 0);
	dup2(null, 1);	/* not the stream */
	if (build.label)
		env_of_build();
	env = ff_env_collect();
	_exit(json_dumpfd(env, fds[1], JSON_COMPACT) == 0 ? 0 : 1);
}

json_t *
env_finish(void)
{
	json_t *env = NULL;
	json_error_t err;

	if (env_fd >= 0) {
		env = json_loadfd(env_fd, 0, &err);
		close(env_fd);
		env_fd = -1;
		ff_child_wait(&env_child, -1);
	}
	if (ff_signalled())
		ff_exit_signalled();
	return json_is_object(env) ? env : ff_env_collect();
}

void
emit_environment(json_t *env)
{
	json_t *ev = ff_event("environment");
	char *proton = NULL;

	if (nrelays && ff_relay_has(opt.relay, FF_RELAY_PROTON))
		proton = ff_env_proton_maps(relays[0].child.pid);
	json_object_update(ev, env);
	json_decref(env);
	json_object_set_new(ev, "proton_library", ff_json_path(proton));
	free(proton);
	ff_emit(ev);
}
