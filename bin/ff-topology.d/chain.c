/*
 * ff-topology's chain: each relay's role, ports and links, its CPUs
 * (--cpu-limit, and other runs' relays on them), and starting the relays
 * from the server back to r1, with other ports when one is lost.
 */
#include "ff-topology.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

const char *front_host = "127.0.0.1";	/* where the client connects */
int cpus_shared;
json_t *cpus_others;	/* other runs' relays on our CPUs, or NULL */

/*
 * Other flimflam runs whose relays are pinned to any of `ours`: another
 * ff-topology's children with an affinity narrower than the machine. Each
 * is {"pid": that ff-topology, "cpus": its relays' CPUs}; NULL for none.
 * Runs share nothing else, so this is the one place they would meet
 * without a word: two benches at once disturb each other's figures.
 */
static json_t *
others_on(const cpu_set_t *ours)
{
	json_t *found = NULL;
	cpu_set_t all, theirs, set;
	pid_t kids[64];
	char path[64], comm[32];
	struct dirent *de;
	DIR *proc = opendir("/proc");
	FILE *f;
	int i, n;

	if (!proc)
		return NULL;
	ff_cpus_available(&all);
	while ((de = readdir(proc))) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if (!(f = fopen(path, "r")))
			continue;
		n = fgets(comm, sizeof(comm), f) && !strcmp(comm, "ff-topology\n");
		fclose(f);
		if (!n)
			continue;
		CPU_ZERO(&theirs);
		n = ff_proc_tree(pid, kids, (int)FF_ARRAY_SIZE(kids));
		for (i = 0; i < n; i++)
			if (kids[i] != pid && sched_getaffinity(kids[i], sizeof(set), &set) == 0 &&
			    !CPU_EQUAL(&set, &all))
				CPU_OR(&theirs, &theirs, &set);
		CPU_AND(&set, &theirs, ours);
		if (!CPU_COUNT(&set))
			continue;
		if (!found)
			found = json_array();
		json_array_append_new(found, json_pack("{s:i, s:s}", "pid", (int)pid,
						       "cpus", ff_cpus_str(&theirs)));
	}
	closedir(proc);
	return found;
}

static int
start_relay(struct relay *r)
{
	char *log = ff_asprintf("%s/%s.log", ff_rundir(NULL), r->role);
	struct ff_argv argv = FF_ARGV_INIT;

	/* Each attempt's log alone: it tells a lost port from a failure. */
	if (truncate(log, 0) < 0 && errno != ENOENT)
		ff_die("cannot truncate '%s': %s", log, strerror(errno));
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	char role[32];

	drv->args(r, &argv);
	o.log = log;
	o.cpus = r->pinned ? &r->cpus : NULL;
	o.dir = r->dir;
	o.env = build.label ? build.env : NULL;	/* the build's own, never ours */
	snprintf(role, sizeof(role), "%s (%s)", r->role, opt.relay);
	if (ff_spawn(&r->child, role, argv.v, &o) < 0)
		ff_die("cannot start %s", r->role);
	ff_argv_free(&argv);
	free(log);
	if (opt.tls && !r->in && r->tls_to && drv->tls_wait)
		drv->tls_wait(r);
	return ff_wait_listen(&r->child, r->ready_port, row->start_seconds);
}

/*
 * The chain's ports and links for one attempt: each relay's data port, RN
 * aimed at the server and each other relay at the next over their link;
 * then the relay's own (its driver's ports and link).
 */
static void
chain_ports(const char *server_host, int server_port)
{
	int i;

	for (i = nrelays - 1; i >= 0; i--) {
		relays[i].port = ff_free_port();
		relays[i].target_port = i == nrelays - 1 ? server_port : relays[i + 1].port;
		relays[i].listen_host = i ? "127.0.0.1" : opt.listen;
		relays[i].target_host = i == nrelays - 1 ? server_host : "127.0.0.1";
	}
	for (i = 0; i + 1 < nrelays; i++) {
		links[i].port = relays[i + 1].port;
		if (drv->link)
			drv->link(&links[i]);
	}
	/* --relay-role: the link from the relay before it, to ours; the one after it, where it said. */
	if (opt.relay_role && relays[0].in) {
		relays[0].in->port = relays[0].port;
		if (drv->link)
			drv->link(relays[0].in);
	}
	if (opt.relay_role && relays[0].out)
		relays[0].out->port = server_port;
	for (i = 0; i < nrelays; i++)
		if (drv->ports)
			drv->ports(&relays[i]);
}

/*
 * Each relay's CPUs: slot i of --cpu-limit CPUs for r(i+1); with more
 * relays than there are CPUs for, the slots wrap and share (cpus_shared).
 * A relay alone (--relay-role) takes slot 0 of its host's.
 */
static void
place_relays(void)
{
	cpu_set_t avail, ours;
	int i;

	if (opt.cpu_limit <= 0)
		return;
	ff_cpus_available(&avail);
	CPU_ZERO(&ours);
	for (i = 0; i < nrelays; i++) {
		if (!ff_cpus_slot(&avail, (int)opt.cpu_limit, i, &relays[i].cpus))
			cpus_shared = 1;
		relays[i].pinned = 1;
		CPU_OR(&ours, &ours, &relays[i].cpus);
	}
	/* The topology event says so; flimflam's summary words it. */
	cpus_others = opt.config_only ? NULL : others_on(&ours);
}

/* The chain: each relay's role, and its links to the ones beside it. */
void
chain_relays(void)
{
	int i;

	for (i = 0; i < nrelays; i++) {
		snprintf(relays[i].role, sizeof(relays[i].role), "r%d", i + 1);
		if (opt.relay_role)
			snprintf(relays[i].role, sizeof(relays[i].role), "%s", opt.relay_role);
		relays[i].in = i ? &links[i - 1] : NULL;
		relays[i].out = i + 1 < nrelays ? &links[i] : NULL;
		if (i + 1 < nrelays)
			links[i] = (struct link){ &relays[i], &relays[i + 1], 0 };
	}
	if (!opt.relay_role)
		return;
	/* One relay: linked from the one before it (past r1), to the one after it (--target-event topology). */
	i = (unsigned char)atoi(opt.relay_role + 1);	/* r1 ... r8: parse_args */
	if (i > 1) {
		snprintf(prev_relay.role, sizeof(prev_relay.role), "r%d", i - 1);
		links[0] = (struct link){ &prev_relay, &relays[0], 0 };
		relays[0].in = &links[0];
	}
	if (!strcmp(opt.target_event, "topology")) {
		snprintf(next_relay.role, sizeof(next_relay.role), "r%d", i + 1);
		links[1] = (struct link){ &relays[0], &next_relay, 0 };
		relays[0].out = &links[1];
	}
}

/*
 * Start RN, then each relay before it down to R1 (or the one relay of
 * --relay-role); return R1's port (the client's target).
 */
int
start_relays(const char *server_host, int server_port)
{
	int i;

	if (!nrelays) {
		front_host = server_host;	/* relay none: the client goes to the server */
		return server_port;
	}
	front_host = opt.listen;
	place_relays();
	for (int attempt = 0;; attempt++) {
		struct relay *r, *failed = NULL;
		int lost;

		chain_ports(server_host, server_port);
		for (i = 0; opt.tls && i + 1 < nrelays; i++)
			tls_link(&relays[i], &relays[i + 1]);
		if (opt.tls && opt.relay_role && relays[0].in)
			tls_link(&prev_relay, &relays[0]);
		if (opt.tls && opt.relay_role && relays[0].out) {
			int proof = next_relay.proof_port;	/* its own, from its topology */

			tls_link(&relays[0], &next_relay);
			next_relay.proof_port = proof;
		}
		for (i = nrelays - 1; i >= 0; i--) {
			r = &relays[i];
			free(r->dir);
			free(r->conf);
			r->dir = ff_asprintf("%s/%s", ff_rundir(NULL), r->role);
			if (ff_mkdirs(r->dir, 0700) < 0)
				ff_die("cannot create '%s': %s", r->dir, strerror(errno));
			drv->configure(r);
		}
		if (opt.config_only)
			break;
		/* From the server back: each relay's next one is up when it starts. */
		for (i = nrelays - 1; i >= 0 && !failed; i--)
			if (start_relay(&relays[i]) != 0)
				failed = &relays[i];
		if (!failed && (!opt.tls || tls_prove_links(&failed) == 0))
			break;
		if (ff_signalled())
			ff_exit_signalled();
		ff_children_stop_all();
		lost = !failed->child.pid || ff_child_lost_port(&failed->child);
		if (failed->child.exited && !(lost && attempt < 4))
			ff_child_report(&failed->child);
		if (!lost || attempt == 4)
			ff_die("the %s relays did not start; their logs are in '%s'",
			       opt.relay, ff_rundir(NULL));
		ff_info("%s lost its port to another program; trying other ports", failed->role);
	}
	return relays[0].port;
}
