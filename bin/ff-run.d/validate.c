/*
 * validate.c - everything about a run that can be known before anything
 * starts: the combination, --hops, --hosts, --tls, --build, the programs
 * each role needs, and what this machine can capture (ff-capture --check).
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
validate_hosts(const struct cmd *c)
{
	if (!hosts_any())
		return;
	if (!strcmp(c->name, "flamegraph") && opt.nbuild == 2 && !hosts_relays_together((int)opt.hops))
		ff_usage_error(run_usage, "--hosts: a differential flamegraph compares one recording of each build, and relays on different hosts make one each: put them on one host for two builds");
	if (opt.tls && !ff_relay_has(opt.relay, FF_RELAY_TLS_REMOTE) && !hosts_relays_together((int)opt.hops))
		ff_usage_error(run_usage, "--hosts: --tls over %s proves each link from the relay it comes to, so its relays go on one host (these take --tls across hosts: %s)",
			       opt.relay, ff_relays_with(FF_RELAY_TLS_REMOTE));
	if (!ff_relay_has(opt.relay, FF_RELAY_ONE_ADDRESS) || !hosts_relays_together((int)opt.hops))
		return;
	for (int k = 2; k <= opt.hops; k++) {
		char rk[16];
		const char *a = hosts_address("r1"), *b;

		snprintf(rk, sizeof(rk), "r%d", k);
		b = hosts_address(rk);
		if (a != b && (!a || !b || strcmp(a, b)))
			ff_usage_error(run_usage, "--hosts: r1 ... r%ld name one host for %s, with one address",
				       opt.hops, opt.relay);
	}
}

/*
 * What the relay's row says it cannot do: --tls without a proof of its
 * links; relay cmd without its --relay-cmd (whose words and program are
 * checked here, one line before anything starts), or across hosts.
 */
static void
validate_relay_caps(void)
{
	char why[512], *p;

	if (opt.tls && !ff_relay_has(opt.relay, FF_RELAY_TLS) && ff_relay_hops(opt.relay))
		ff_usage_error(run_usage, "--tls: relay '%s' cannot prove its links (these can: %s)", opt.relay,
			       ff_relays_with(FF_RELAY_TLS));
	if (opt.relay_cmd && !ff_relay_has(opt.relay, FF_RELAY_COMMAND))
		ff_usage_error(run_usage, "--relay-cmd is for relay %s, not '%s'",
			       ff_relays_with(FF_RELAY_COMMAND), opt.relay);
	if (!ff_relay_has(opt.relay, FF_RELAY_COMMAND))
		return;
	if (!opt.relay_cmd)
		ff_usage_error(run_usage, "relay '%s' runs the command of --relay-cmd, and none is given", opt.relay);
	if (hosts_relays_remote((int)opt.hops))
		ff_usage_error(run_usage, "--hosts: relay '%s' runs its command on this host: leave r1 ... rN out of --hosts", opt.relay);
	switch (ff_relay_cmd_program(opt.relay_cmd, &p, why, sizeof(why))) {
	case 2:
		ff_usage_error(run_usage, "%s", why);
	case 1:
		ff_die("%s", why);
	}
	free(p);
}

/* Is the role's program checked here, or on its host (by its stage)? */
static int
checked_here(const char *role)
{
	return !hosts_dest(role);
}

/*
 * The builds: each resolves to the relay asked for (a usage error, one
 * line, when not), their labels differ, and their relay runs a program.
 */
void
validate_builds(void)
{
	char why[1024];
	int i;

	for (i = 0; i < opt.nbuild; i++) {
		if (!ff_relay_find(opt.relay)->program)
			ff_fail(2, "--build is for a relay that runs a program, and relay '%s' runs none",
				opt.relay);
		if (ff_build_parse(opt.build[i], opt.relay, &opt.builds[i], why, sizeof(why)) < 0)
			ff_fail(2, "%s", why);
		if (i && !strcmp(opt.builds[0].label, opt.builds[i].label))
			ff_fail(2, "--build: the label '%s' is given twice: each build needs its own",
				opt.builds[i].label);
	}
}

/* Each build carries the run (its own environment entered to ask it). */
static void
validate_build_carries(void)
{
	char why[512];
	int i;

	for (i = 0; i < opt.nbuild; i++) {
		struct ff_build *b = &opt.builds[i];
		void *saved;
		int can;

		saved = ff_build_env_enter(b);
		can = ff_carries(opt.workload, opt.relay, opt.protocol, b->path, NULL, why, sizeof(why));
		ff_build_env_leave(b, saved);
		if (can < 0)
			ff_die("%s", why);
		if (!can)
			ff_fail(2, "--build %s: %s", b->label, why);
	}
}

/*
 * The programs each role needs (need[i] for role[i]; relay_at the relay's,
 * or -1), on PATH here: a relay that does not answer as one, or cannot
 * carry the run, said before anything starts. Roles on other hosts: their
 * stage checks there.
 */
static void
validate_programs(const char *const need[], const char *const role[], int n, int relay_at)
{
	const struct ff_relay *rl = ff_relay_find(opt.relay);
	char why[512];
	int i;

	for (i = 0; i < n; i++) {
		char *p;

		if (!checked_here(role[i]))
			continue;	/* its stage checks it there */
		p = ff_which(need[i]);

		if (p) {
			int can;

			/* A router that does not answer, or not as a router, before anything starts. */
			if (i == relay_at && rl->check && rl->check(p, why, sizeof(why)) < 0)
				ff_die("%s", why);
			can = i == relay_at ?
				ff_carries(opt.workload, opt.relay, opt.protocol, p, NULL, why, sizeof(why)) : 1;
			free(p);
			if (can < 0)
				ff_die("%s", why);
			if (!can)
				ff_usage_error(run_usage, "%s", why);
			continue;
		}
		if (i == relay_at)
			ff_die("relay '%s' needs %s, which is not on PATH (the other relays: %s)",
			       opt.relay, need[i], ff_other_relays(opt.relay));
		ff_die("workload '%s' needs %s, which is not on PATH; 'flimflam check' says how to install it",
		       opt.workload, need[i]);
	}
}

/* Everything that can be known before starting anything. */
void
validate_run(const struct cmd *c)
{
	const struct ff_relay *rl = ff_relay_find(opt.relay);
	const char *need[3], *role[3];
	cpu_set_t avail;
	char why[512];
	int n = 0, ncpus, relay_at = -1;

	if (!ff_carries(opt.workload, opt.relay, opt.protocol, NULL, NULL, why, sizeof(why)))
		ff_usage_error(run_usage, "%s; these work for %s: %s", why, opt.workload,
			       ff_combos_for(opt.workload, NULL));
	if (strcmp(c->mode, "none") && !rl->processes)
		ff_usage_error(run_usage, "'%s' captures in the relays, and relay '%s' has none",
			       c->name, opt.relay);
	if (opt.hops < 0)
		opt.hops = ff_relay_hops(opt.relay);
	if (!ff_hops_fit(opt.relay, opt.hops, why, sizeof(why)))
		ff_usage_error(run_usage, "%s", why);
	/* The roles r1 ... rN are the chain's: known once --hops is. */
	if (opt.hosts && hosts_parse(opt.hosts, (int)opt.hops, 1, why, sizeof(why)) < 0)
		ff_usage_error(run_usage, "%s", why);
	if (ff_workload_limits(opt.workload, &opt.run, why, sizeof(why)) < 0)
		ff_usage_error(run_usage, "%s", why);
	ff_check_interval(run_usage, opt.run.interval, opt.run.duration);
	if (opt.tls && opt.hops < 2)
		ff_usage_error(run_usage, "--tls is for the links between relays, and %s",
			       opt.hops ? "--hops 1 has one relay and no link" :
			       "relay 'none' has none");
	if (ff_rr_opts_set(&opt.run) && !ff_workload_is_rr(opt.workload))
		ff_usage_error(run_usage, "--request-size, --response-size and --rate are for workloads builtin-rr and builtin-crr, not '%s'",
			       opt.workload);
	/* The stages and what they start inherit our limit, raised to the hard one. */
	if (ff_jobs_fit(opt.relay, opt.protocol, opt.run.jobs, why, sizeof(why)) < 0)
		ff_die("%s", why);
	ff_raise_nofile(LONG_MAX);
	ncpus = ff_cpus_available(&avail);
	if (opt.run.cpu_limit > ncpus)
		ff_usage_error(run_usage, "--cpu-limit: %ld is more than the %d CPU%s this process may use",
			       opt.run.cpu_limit, ncpus, ncpus == 1 ? "" : "s");
	if (rl->program && !opt.nbuild) {
		relay_at = n;
		role[n] = "r1";
		need[n++] = rl->program;
	}
	validate_build_carries();
	if (ff_workload_server_program(opt.workload)) {
		role[n] = "server";
		need[n++] = ff_workload_server_program(opt.workload);
	}
	if (ff_workload_client_program(opt.workload)) {
		role[n] = "client";
		need[n++] = ff_workload_client_program(opt.workload);
	}
	validate_hosts(c);
	validate_relay_caps();
	if (opt.tls) {
		char *p = ff_which("openssl");

		if (!p)
			ff_die("--tls makes the run's certificates with openssl, which is not on PATH: install openssl");
		free(p);
	}
	validate_programs(need, role, n, relay_at);
}

/* Running the pipeline */

/* What is wrong with the request itself, before anything else is checked. */
void
capture_usage(const struct cmd *c)
{
	char *p, why[512];

	if (strcmp(c->mode, "skstat") || !ff_relay_find(opt.relay)->processes)
		return;		/* relay none: validate_run says it */
	if (!ff_relay_has(opt.relay, FF_RELAY_STATS))
		ff_usage_error(run_usage, "'skstat' reads the routers' statistics, so it needs relay "
			       "'%s', not '%s'", ff_relays_with(FF_RELAY_STATS), opt.relay);
	if (!ff_carries(opt.workload, opt.relay, opt.protocol, NULL, NULL, why, sizeof(why)))
		return;		/* a usage error first */
	if (opt.nbuild)
		return;		/* ff-capture --check finds the build's skstat */
	p = ff_which(ff_relay_program(opt.relay));
	if (!p)
		ff_die("'skstat' reads the statistics of two %s routers, and %s is not "
		       "on PATH: put the router under test on PATH (skstat beside it, Proton's Python "
		       "binding on PYTHONPATH)", opt.relay, ff_relay_program(opt.relay));
	free(p);
}

/*
 * What this machine can capture (perf can attach, memory events for c2c and
 * mem, lbr, skstat and its Proton), before anything starts: ff-capture
 * --check --json knows, the same check it makes itself, and answers with
 * one `check` event; its notes and its reason are ours to say.
 */
void
capture_check(const struct cmd *c)
{
	char *path = program("ff-capture"), *out, *line, *next;
	char *argv[] = { path, "--check", "--json", (char *)c->mode, "--call-graph",
			 (char *)perf_opt.call_graph, "--freq", (char *)freq_arg(), NULL, NULL, NULL };
	json_t *ev = NULL, *note;
	size_t i;
	int status;

	if (!strcmp(c->mode, "none") || hosts_relays_remote((int)opt.hops))
		return;		/* relays elsewhere: ff-capture checks there, as their stage */
	if (!path)
		ff_die("cannot find ff-capture beside flimflam nor on PATH");
	if (!samples(c))
		argv[4] = NULL;
	if (opt.nbuild && !strcmp(c->mode, "skstat")) {
		argv[samples(c) ? 8 : 4] = "--build";
		argv[samples(c) ? 9 : 5] = (char *)opt.build[0];
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
	json_array_foreach(json_object_get(ev, "notes"), i, note)
		ff_warn("note: %s", json_string_value(note));
	if (!json_is_true(json_object_get(ev, "ok")))
		ff_die("%s", ff_json_str(ev, "message"));
	json_decref(ev);
}
