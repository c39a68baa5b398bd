/*
 * ff_runcheck.c - a whole run checked before anything starts
 * (ff_runspec_check), and its options together (ff_runspec_check_opts).
 */
#include "ff.h"

#include <limits.h>
#include <string.h>

/* The sizes are a request/response workload's, --rate an open-loop one's: a usage error for the others. */
static void
check_workload_opts(const struct ff_runspec *rs, const char *usage)
{
	if ((rs->run.request_size > 1 || rs->run.response_size > 1) && !ff_workload_is_rr(rs->workload))
		ff_usage_error(usage, "--request-size and --response-size are for workloads %s, not '%s'",
			       ff_workloads_taking(0), rs->workload);
	if (rs->run.rate > 0 && !ff_workload_takes_rate(rs->workload))
		ff_usage_error(usage, "--rate is for workloads %s, not '%s'", ff_workloads_taking(1), rs->workload);
}

void
ff_runspec_check_opts(const struct ff_runspec *rs, const char *usage)
{
	struct ff_buf why = FF_BUF_INIT;

	check_workload_opts(rs, usage);
	if (ff_workload_limits(rs->workload, &rs->run, &why) < 0)
		ff_usage_error(usage, "%s", why.s);
	ff_check_interval(usage, rs->run.interval, rs->run.duration);
	ff_buf_free(&why);
}

/*
 * The builds: each resolves to the relay asked for (a usage error, one
 * line, when not), their labels differ, and their relay runs a program.
 */
static void
check_builds(struct ff_runspec *rs)
{
	struct ff_buf why = FF_BUF_INIT;

	for (int i = 0; i < rs->nbuild; i++) {
		if (!ff_relay_find(rs->relay)->program)
			ff_fail(2, "--build is for a relay that runs a program, and relay '%s' runs none",
				rs->relay);
		if (ff_build_read(rs->build[i], rs->relay, &rs->builds[i], &why) < 0)
			ff_fail(2, "%s", why.s);
		if (i && !strcmp(rs->builds[0].label, rs->builds[i].label))
			ff_fail(2, "--build: the label '%s' is given twice: each build needs its own",
				rs->builds[i].label);
	}
	ff_buf_free(&why);
}

/* The combination, the chain and the hosts, the options together. */
static void
check_chain(struct ff_runspec *rs, const char *usage, const struct ff_runspec_place *place)
{
	struct ff_buf why = FF_BUF_INIT;

	if (!ff_carries(rs->workload, rs->relay, rs->protocol, NULL, NULL, &why))
		ff_usage_error(usage, "%s; these work for %s: %s", why.s, rs->workload,
			       ff_combos_for(rs->workload, NULL));
	if (strcmp(rs->mode, FF_CAPTURE_NONE) && !ff_relay_find(rs->relay)->processes)
		ff_usage_error(usage, "'%s' captures in the relays, and relay '%s' has none",
			       rs->cmd, rs->relay);
	if (rs->hops < 0)
		rs->hops = ff_relay_hops(rs->relay);
	if (!ff_hops_fit(rs->relay, rs->hops, &why))
		ff_usage_error(usage, "%s", why.s);
	/* The roles r1 ... rN are the chain's: known once --hops is. */
	if (rs->hosts && place->parse(rs->hosts, (int)rs->hops, &why) < 0)
		ff_usage_error(usage, "%s", why.s);
	if (ff_workload_limits(rs->workload, &rs->run, &why) < 0)
		ff_usage_error(usage, "%s", why.s);
	ff_check_interval(usage, rs->run.interval, rs->run.duration);
	if (rs->tls && rs->hops < 2)
		ff_usage_error(usage, "--tls is for the links between relays, and %s",
			       rs->hops ? "--hops 1 has one relay and no link" :
			       "relay 'none' has none");
	check_workload_opts(rs, usage);
	ff_buf_free(&why);
}

/* The machine: open files for the jobs, CPUs for --cpu-limit; each build carries the run. */
static void
check_machine(struct ff_runspec *rs, const char *usage)
{
	cpu_set_t avail;
	struct ff_buf why = FF_BUF_INIT;
	int ncpus;

	/* The stages and what they start inherit our limit, raised to the hard one. */
	if (ff_jobs_fit(rs->relay, rs->protocol, rs->hops, &rs->run, &why) < 0)
		ff_die("%s", why.s);
	ff_raise_nofile(LONG_MAX);
	ncpus = ff_cpus_available(&avail);
	if (rs->run.cpu_limit > ncpus)
		ff_usage_error(usage, "--cpu-limit: %ld is more than the %d CPU%s this process may use",
			       rs->run.cpu_limit, ncpus, ncpus == 1 ? "" : "s");
	for (int i = 0; i < rs->nbuild; i++) {
		struct ff_build *b = &rs->builds[i];
		void *saved;
		int can;

		saved = ff_build_env_enter(b);
		can = ff_carries(rs->workload, rs->relay, rs->protocol, b->path, NULL, &why);
		ff_build_env_leave(b, saved);
		if (can < 0)
			ff_die("%s", why.s);
		if (!can)
			ff_fail(2, "--build %s: %s", b->label, why.s);
	}
	ff_buf_free(&why);
}

/*
 * What the relay's row says it cannot do: --tls without a proof of its
 * links; relay cmd without its --relay-cmd (whose words and program are
 * checked here, one line before anything starts), or across hosts.
 */
static void
check_relay_caps(const struct ff_runspec *rs, const char *usage, const struct ff_runspec_place *place)
{
	struct ff_buf why = FF_BUF_INIT;
	char *p;

	if (rs->tls && !ff_relay_has(rs->relay, FF_RELAY_TLS) && ff_relay_hops(rs->relay))
		ff_usage_error(usage, "--tls: relay '%s' cannot prove its links (these can: %s)", rs->relay,
			       ff_relays_with(FF_RELAY_TLS));
	if (rs->relay_cmd && !ff_relay_has(rs->relay, FF_RELAY_COMMAND))
		ff_usage_error(usage, "--relay-cmd is for relay %s, not '%s'",
			       ff_relays_with(FF_RELAY_COMMAND), rs->relay);
	if (rs->run.workers && !ff_relay_has(rs->relay, FF_RELAY_WORKERS))
		ff_usage_error(usage, "--workers is for relays %s, not '%s': flimflam does not set its worker count",
			       ff_relays_with(FF_RELAY_WORKERS), rs->relay);
	if (!ff_relay_has(rs->relay, FF_RELAY_COMMAND))
		return;
	if (!rs->relay_cmd)
		ff_usage_error(usage, "relay '%s' runs the command of --relay-cmd, and none is given", rs->relay);
	if (place->relays_remote((int)rs->hops))
		ff_usage_error(usage, "--hosts: relay '%s' runs its command on this host: leave r1 ... rN out of --hosts", rs->relay);
	switch (ff_relay_cmd_program(rs->relay_cmd, &p, &why)) {
	case 2:
		ff_usage_error(usage, "%s", why.s);
	case 1:
		ff_die("%s", why.s);
	}
	free(p);
	ff_buf_free(&why);
}

/* The relay's program found here, answering as a router, and carrying the run. */
static void
check_relay_program(const struct ff_runspec *rs, const char *usage, const char *p)
{
	const struct ff_relay *rl = ff_relay_find(rs->relay);
	struct ff_buf why = FF_BUF_INIT;
	int can;

	/* A router that does not answer, or not as a router, before anything starts. */
	if (rl->check && rl->check(p, &why) < 0)
		ff_die("%s", why.s);
	can = ff_carries(rs->workload, rs->relay, rs->protocol, p, NULL, &why);
	if (can < 0)
		ff_die("%s", why.s);
	if (!can)
		ff_usage_error(usage, "%s", why.s);
	ff_buf_free(&why);
}

/* The programs the roles run here: on PATH, the relay's usable. */
static void
check_programs(const struct ff_runspec *rs, const char *usage, const struct ff_runspec_place *place)
{
	const struct ff_relay *rl = ff_relay_find(rs->relay);
	const char *need[3], *role[3];
	int n = 0, relay_at = -1;

	if (rl->program && !rs->nbuild) {
		relay_at = n;
		role[n] = "r1";
		need[n++] = rl->program;
	}
	if (ff_workload_server_program(rs->workload)) {
		role[n] = "server";
		need[n++] = ff_workload_server_program(rs->workload);
	}
	if (ff_workload_client_program(rs->workload)) {
		role[n] = "client";
		need[n++] = ff_workload_client_program(rs->workload);
	}
	for (int i = 0; i < n; i++) {
		char *p;

		if (!place->here(role[i]))
			continue;	/* its stage checks it there */
		p = ff_which(need[i]);
		if (p) {
			if (i == relay_at)
				check_relay_program(rs, usage, p);
			free(p);
			continue;
		}
		if (i == relay_at)
			ff_die("relay '%s' needs %s, which is not on PATH (the other relays: %s)",
			       rs->relay, need[i], ff_other_relays(rs->relay));
		ff_die("workload '%s' needs %s, which is not on PATH; 'flimflam check' says how to install it",
		       rs->workload, need[i]);
	}
}

void
ff_runspec_check(struct ff_runspec *rs, const char *usage, const struct ff_runspec_place *place)
{
	check_builds(rs);
	check_chain(rs, usage, place);
	check_machine(rs, usage);
	place->check(rs, usage);
	check_relay_caps(rs, usage, place);
	if (rs->tls) {
		char *p = ff_which("openssl");

		if (!p)
			ff_die("--tls makes the run's certificates with openssl, which is not on PATH: install openssl");
		free(p);
	}
	check_programs(rs, usage, place);
}
