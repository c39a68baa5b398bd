/*
 * validate.c - everything about a run that can be known before anything
 * starts: the run's own checks (ff_runspec_check, given where its roles
 * go), and what this machine can capture (ff-capture --check).
 */
#include "ff-run.h"

#include <limits.h>
#include <string.h>
#include <sys/wait.h>

/* ff-capture --check before a run: it opens perf events and starts programs. */
#define CAPTURE_CHECK_SECONDS 30
/*
 * What --hosts can run: every workload (each server listens on its host's
 * address, each client connects to one), and relays that listen on one;
 * skrouterd's routers on one host share its address.
 */
static void
validate_hosts(const struct ff_runspec *rs, const char *use)
{
	if (!hosts_any())
		return;
	if (!strcmp(rs->cmd, "flamegraph") && rs->nbuild == 2 && !hosts_relays_together((int)rs->hops))
		ff_usage_error(use, "--hosts: a differential flamegraph compares one recording of each build, and relays on different hosts make one each: put them on one host for two builds");
	if (rs->tls && !ff_relay_has(rs->relay, FF_RELAY_TLS_REMOTE) && !hosts_relays_together((int)rs->hops))
		ff_usage_error(use, "--hosts: --tls over %s proves each link from the relay it comes to, so its relays go on one host (these take --tls across hosts: %s)",
			       rs->relay, ff_relays_with(FF_RELAY_TLS_REMOTE));
	if (!ff_relay_has(rs->relay, FF_RELAY_ONE_ADDRESS) || !hosts_relays_together((int)rs->hops))
		return;
	for (int k = 2; k <= rs->hops; k++) {
		char rk[16];
		const char *a = hosts_address("r1"), *b;

		snprintf(rk, sizeof(rk), "r%d", k);
		b = hosts_address(rk);
		if (a != b && (!a || !b || strcmp(a, b)))
			ff_usage_error(use, "--hosts: r1 ... r%ld name one host for %s, with one address",
				       rs->hops, rs->relay);
	}
}

/* --hosts for a run: every role named has its address. */
static int
run_hosts_parse(const char *spec, int nrelays, struct ff_buf *why)
{
	return hosts_parse(spec, nrelays, 1, why);
}

/* Is the role's program checked here, or on its host (by its stage)? */
static int
checked_here(const char *role)
{
	return !hosts_dest(role);
}

/* Where the roles of a run go, for ff_runspec_check. */
static const struct ff_runspec_place place = {
	run_hosts_parse, validate_hosts, checked_here, hosts_relays_remote,
};

/* Everything about the run that can be known before starting anything (lib/ff_runcheck.c). */
void
validate_run(struct run *run)
{
	ff_runspec_check(&run->spec, run->usage, &place);
}

/* Running the pipeline */

/* What is wrong with the request itself, before anything else is checked. */
void
capture_usage(const struct run *run, const struct cmd *c)
{
	struct ff_buf why = FF_BUF_INIT;
	char *p;
	int carries;

	if (strcmp(c->mode, "skstat") || !ff_relay_find(run->spec.relay)->processes)
		return;		/* relay none: validate_run says it */
	if (!ff_relay_has(run->spec.relay, FF_RELAY_STATS))
		ff_usage_error(run->usage, "'skstat' reads the routers' statistics, so it needs relay "
			       "'%s', not '%s'", ff_relays_with(FF_RELAY_STATS), run->spec.relay);
	carries = ff_carries(run->spec.workload, run->spec.relay, run->spec.protocol, NULL, NULL, &why);
	ff_buf_free(&why);
	if (!carries)
		return;		/* a usage error first */
	if (run->spec.nbuild)
		return;		/* ff-capture --check finds the build's skstat */
	p = ff_which(ff_relay_program(run->spec.relay));
	if (!p)
		ff_die("'skstat' reads the statistics of two %s routers, and %s is not "
		       "on PATH: put the router under test on PATH (skstat beside it, Proton's Python "
		       "binding on PYTHONPATH)", run->spec.relay, ff_relay_program(run->spec.relay));
	free(p);
}

/*
 * What this machine can capture (perf can attach, memory events for c2c and
 * mem, lbr, skstat and its Proton), before anything starts: ff-capture
 * --check --json knows, the same check it makes itself, and answers with
 * one `check` event; its notes and its reason are ours to say.
 */
void
capture_check(const struct run *run, const struct cmd *c)
{
	char *path = ff_program("ff-capture"), *out, *line, *next;
	char *argv[] = { path, "--check", "--json", (char *)c->mode, "--call-graph",
			 (char *)run->perf.call_graph, "--freq", (char *)freq_arg(run), NULL, NULL, NULL };
	struct ff_argv build = FF_ARGV_INIT;
	json_t *ev = NULL, *note;
	size_t i;
	int status;

	if (!strcmp(c->mode, FF_CAPTURE_NONE) || hosts_relays_remote((int)run->spec.hops))
		return;		/* relays elsewhere: ff-capture checks there, as their stage */
	if (!path)
		ff_die("cannot find ff-capture beside flimflam nor on PATH");
	if (!samples(c))
		argv[4] = NULL;
	if (run->spec.nbuild && !strcmp(c->mode, "skstat")) {
		ff_build_argv(&build, &run->spec.builds[0]);
		argv[samples(c) ? 8 : 4] = build.v[0];
		argv[samples(c) ? 9 : 5] = build.v[1];
	}
	/* It opens perf events and starts programs: longer than a version probe on a busy machine. */
	out = ff_run_within(argv, &status, CAPTURE_CHECK_SECONDS);
	if (!out)
		ff_die("cannot run '%s'", path);
	if (status == -1)
		ff_die("checking what this machine can capture took more than " FF_STR(CAPTURE_CHECK_SECONDS) " s");
	/* Its stdout and stderr together: the answer is the line that is a check event. */
	for (line = out; *line && !ev; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = 0;
		ev = json_loads(line, 0, NULL);
		if (!json_is_object(ev) || strcmp(ff_event_name(ev), "check"))
			ev = (json_decref(ev), NULL);
	}
	if (!ev)
		ff_fail(WIFEXITED(status) && WEXITSTATUS(status) == 2 ? 2 : 1,
			"'%s --check %s' gave no answer (%s): %s", path, c->mode,
			ff_status_how(status), out[0] ? out : "it said nothing");
	free(out);
	free(path);
	ff_argv_free(&build);
	json_array_foreach(json_object_get(ev, "notes"), i, note)
		ff_warn("note: %s", json_string_value(note));
	if (!json_is_true(json_object_get(ev, "ok")))
		ff_die("%s", ff_json_str(ev, "message"));
	json_decref(ev);
}
