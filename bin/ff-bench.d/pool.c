/*
 * ff-bench --pool: the runs of the plan over a pool of hosts, each a job of
 * GNU parallel over ssh, and the builds checked on every host first.
 */
#include "ff-bench.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A program of ours on a pool host: in $FLIMFLAM_REMOTE_DIR there, else where it is here (malloc'd). */
static char *
pool_program(const char *name)
{
	const char *rdir = getenv("FLIMFLAM_REMOTE_DIR");

	if (rdir && *rdir)
		return ff_asprintf("%s/%s", rdir, name);
	return !strcmp(name, "ff-run") ? ff_strdup(engine) : ff_helper_path(name);
}

/* ssh's argv for `line` on pool host `dest`, as parallel's --ssh runs it, into a. */
static void
pool_ssh(struct ff_argv *a, const char *dest, const char *line)
{
	const char *cfg = getenv("FLIMFLAM_SSH_CONFIG");

	ff_argv_add(a, "ssh");
	if (cfg && *cfg)
		ff_argv_addl(a, "-F", cfg, NULL);
	ff_argv_addl(a, "-o", "BatchMode=yes", "-T", dest, "--", line, NULL);
}

/*
 * The shell line that checks every build on a pool host as a run there
 * takes it: ff-topology --config-only --build (exists, is the relay's
 * program or a prefix holding it, answers as the relay, carries the
 * protocol of one of its cases), which starts nothing; the configuration
 * it writes goes into a directory of its own there, removed after.
 * Its exit status is the first failure's (2: a build it refused). NULL
 * when no build has a case to run.
 */
static char *
pool_check_line(const struct plan *pl)
{
	struct ff_buf b = FF_BUF_INIT;
	char *topo = pool_program("ff-topology");
	int i, w;

	ff_buf_addstr(&b, "d=$(mktemp -d \"${TMPDIR:-/tmp}/flimflam-build-check-XXXXXX\") || exit 1; s=0; ");
	for (i = 0; i < opt.nbuild; i++) {
		for (w = 0; w < pl->ncases && (pl->cases[w].build != i || pl->cases[w].skip[0]); w++)
			;
		if (w == pl->ncases)
			continue;	/* none of its cases runs */
		if (b.s[b.len - 2] != ';')
			ff_buf_addstr(&b, " && ");
		ff_buf_shell_word(&b, topo);
		ff_buf_addstr(&b, " -r ");
		ff_buf_shell_word(&b, opt.relays[0]);
		ff_buf_addstr(&b, " -p ");
		ff_buf_shell_word(&b, pl->cases[w].protocol);
		ff_buf_addstr(&b, " --cpu-limit 0 --server-port 1 --config-only --build ");
		ff_buf_shell_word(&b, opt.build_args[i]);
		ff_buf_printf(&b, " --run-dir \"$d/%d\" >/dev/null", i);
	}
	free(topo);
	if (b.s[b.len - 2] == ';') {
		ff_buf_free(&b);
		return NULL;
	}
	ff_buf_addstr(&b, " || s=$?; rm -rf -- \"$d\"; exit $s");
	return ff_buf_take(&b);
}

/* The last line of `text` that is not empty (static), or NULL. */
const char *
last_line(const char *text)
{
	static char line[1024];
	const char *p, *e, *found = NULL;
	size_t n, len = 0;

	for (p = text; p && *p; p = *e ? e + 1 : e) {
		e = p + strcspn(p, "\n");
		/* ssh's messages end in "\r\n". */
		for (n = (size_t)(e - p); n && (p[n - 1] == '\r' || p[n - 1] == ' '); n--)
			;
		if (n)
			found = p, len = n;
	}
	if (!found)
		return NULL;
	snprintf(line, sizeof(line), "%.*s", (int)len, found);
	return line;
}

/*
 * bench --pool --build: a run on a pool host takes the build's PATH
 * there, so before any case runs, every host of the pool is asked (over
 * ssh, all at once) whether each build is there and is the relay. A build
 * refused on a host is one line naming the host (exit 2, as --build
 * refused here is); a host that cannot be asked, one line too (exit 1).
 * The builds' paths are made absolute here first: a run there resolves
 * a relative one in its own directory, not ours.
 */
void
pool_check_builds(const struct plan *pl)
{
	struct ff_child kids[64];
	const char *hosts[64], *why, *prog = "ff-topology: ";
	char dir[PATH_MAX], *spec = ff_strdup(opt.pool), *save = NULL, *h, *line, *log, *text[64];
	int n = 0, i, j, sig;

	for (i = 0; i < opt.nbuild; i++) {
		const struct ff_build *b = &opt.builds[i];
		struct stat st;

		/* The prefix given, or the binary: each absolute (ff_build_parse). */
		opt.build_args[i] = ff_asprintf("%s=%s", b->label,
						stat(strchr(opt.build_args[i], '=') + 1, &st) == 0 &&
						S_ISDIR(st.st_mode) ? b->prefix : b->path);
	}
	if (!(line = pool_check_line(pl)))
		return;
	snprintf(dir, sizeof(dir), "%s/flimflam-pool-XXXXXX", getenv("TMPDIR") && *getenv("TMPDIR") ?
		 getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		ff_die("cannot create a directory for the pool's check: %s", strerror(errno));
	for (h = strtok_r(spec, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
		struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
		struct ff_argv a = FF_ARGV_INIT;

		/* parallel's sshlogin: [NCPUS/]HOST, and ':' this machine (checked already). */
		if (strchr(h, '/') && strspn(h, "0123456789") == (size_t)(strchr(h, '/') - h))
			h = strchr(h, '/') + 1;
		for (j = 0; j < n && strcmp(hosts[j], h); j++)
			;
		if (!*h || !strcmp(h, ":") || j < n || n == (int)FF_ARRAY_SIZE(kids))
			continue;
		log = ff_asprintf("%s/%d", dir, n);
		o.log = log;
		pool_ssh(&a, h, line);
		memset(&kids[n], 0, sizeof(kids[n]));
		if (ff_spawn(&kids[n], "ssh", a.v, &o) < 0)
			ff_die("cannot run ssh");
		hosts[n++] = h;
		ff_argv_free(&a);
		free(log);
	}
	free(line);
	for (i = 0; i < n; i++) {
		while (!ff_child_check(&kids[i]) && !ff_signalled()) {
			struct pollfd pfd[2] = { { ff_signal_fd(), POLLIN, 0 }, { kids[i].pidfd, POLLIN, 0 } };

			poll(pfd, 2, 1000);
		}
		if (ff_signalled())
			ff_children_stop_all();
	}
	/* What each said, and the directory gone, before anything is judged. */
	for (i = 0; i < n; i++) {
		log = ff_asprintf("%s/%d", dir, i);
		text[i] = ff_read_file(log, NULL);
		unlink(log);
		free(log);
	}
	rmdir(dir);
	if ((sig = ff_signalled())) {
		ff_warn("stopped by %s while the pool's hosts were checked; no run started",
			ff_sig_name(sig));
		exit(128 + sig);
	}
	for (i = 0; i < n; i++) {
		why = last_line(text[i]);
		if (why && !strncmp(why, prog, strlen(prog)))
			why += strlen(prog);
		if (WIFEXITED(kids[i].status) && WEXITSTATUS(kids[i].status) == 2)
			ff_fail(2, "--pool: on %s, %s", hosts[i], why ? why : "a build is refused");
		if (kids[i].status != 0)
			ff_fail(1, "--pool: cannot check the builds on %s: ssh %s%s%s", hosts[i],
				ff_child_how(&kids[i]), why ? ": " : "", why ? why : "");
		free(text[i]);
	}
	free(spec);
}

/* The runs of the plan, the rounds in run_all's order (shuffled with --build or --seed), into jobs and their rounds; how many. */
static int
pool_jobs(const struct plan *pl, const struct bcase *jobs[], int rep[], int max)
{
	int order[FF_ARRAY_SIZE(pl->cases)], njobs = 0, r, k, w;
	uint64_t state = (uint64_t)opt.seed;

	for (r = 1; r <= opt.repeat; r++) {
		round_order(pl, order, &state);
		for (k = 0; k < pl->ncases; k++) {
			w = order[k];
			if (!pl->cases[w].skip[0] && njobs < max) {
				jobs[njobs] = &pl->cases[w];
				rep[njobs++] = r;
			}
		}
	}
	return njobs;
}

/*
 * The jobs of GNU parallel's job log in `dir`, each made into its record,
 * with its host, into `records` (kept as they come); their files removed.
 * Returns how many failed.
 */
static int
pool_replay(const char *dir, const struct bcase *const jobs[], const int rep[], int njobs,
	    json_t *records, int *done)
{
	char path[PATH_MAX + 64], *line = NULL;
	size_t cap = 0;
	int failed = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/joblog", dir);
	f = fopen(path, "r");
	/* Seq Host Starttime JobRuntime Send Receive Exitval Signal Command */
	while (f && getline(&line, &cap, f) > 0) {
		char host[256], out[PATH_MAX + 16], err[PATH_MAX + 16];
		double start, runtime;
		int seq, exitval, sig;
		json_t *rec;

		if (sscanf(line, "%d %255s %lf %lf %*s %*s %d %d", &seq, host, &start, &runtime,
			   &exitval, &sig) != 6 || seq < 1 || seq > njobs)
			continue;
		snprintf(out, sizeof(out), "%s/%d", dir, seq);
		snprintf(err, sizeof(err), "%s/%d.err", dir, seq);
		rec = replay_case(jobs[seq - 1], rep[seq - 1], host, out, err, sig ? 128 + sig : exitval,
				  runtime);
		failed += is_status(rec, "failed");
		++*done;
		if (output_lost) {
			json_decref(rec);	/* the file keeps no more */
		} else {
			json_array_append_new(records, rec);
			output_save(records);
		}
		unlink(out);
		unlink(err);
		snprintf(out, sizeof(out), "%s/%d.seq", dir, seq);
		unlink(out);
	}
	if (f)
		fclose(f);
	free(line);
	unlink(path);
	return failed;
}

/*
 * bench --pool: every run of the plan as one job of GNU parallel, one job
 * per host at a time (--sshlogin HOST,... -j1), each `flimflam run --json`
 * a whole topology on its host; each job's stdout and stderr in a file
 * (--results), its host and exit status in the job log. Then each is made
 * into its record, with its host, in the plan's order. Returns how many
 * failed; NULL-free: a signal stops parallel, which stops its jobs.
 */
int
run_pool(const struct plan *pl, const char *parallel, json_t *records, int *done)
{
	char dir[PATH_MAX], *remote;
	const char *cfg = getenv("FLIMFLAM_SSH_CONFIG");
	struct ff_spawn_opts o = FF_SPAWN_OPTS_INIT;
	struct ff_argv a = FF_ARGV_INIT, cmd = FF_ARGV_INIT;
	const struct bcase *jobs[4096];
	int rep[4096], njobs, w, failed;
	static struct ff_child par;

	snprintf(dir, sizeof(dir), "%s/flimflam-pool-XXXXXX", getenv("TMPDIR") && *getenv("TMPDIR") ?
		 getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		ff_die("cannot create a directory for the pool's output: %s", strerror(errno));
	njobs = pool_jobs(pl, jobs, rep, (int)FF_ARRAY_SIZE(jobs));
	remote = pool_program("ff-run");
	ff_argv_addl(&a, parallel, "--will-cite", "-j1", "--sshlogin", opt.pool, NULL);
	if (cfg && *cfg)
		ff_argv_addf(&a, "--ssh=ssh -F '%s' -o BatchMode=yes", cfg);
	else
		ff_argv_add(&a, "--ssh=ssh -o BatchMode=yes");
	ff_argv_addf(&a, "--results=%s/{#}", dir);
	ff_argv_addf(&a, "--joblog=%s/joblog", dir);
	/*
	 * Each job: ff-run with its case's arguments, one word a column,
	 * each quoted; the columns are apart by US (0x1f), which no argument
	 * holds (a build's path may hold spaces).
	 */
	ff_argv_addl(&a, "--colsep", "\x1f", remote, ":::", NULL);
	for (w = 0; w < njobs; w++) {
		struct ff_buf b = FF_BUF_INIT;

		case_args(&cmd, jobs[w]);
		for (size_t i = 0; i < cmd.n; i++)
			ff_buf_printf(&b, "%s%s", i ? "\x1f" : "", cmd.v[i]);
		ff_argv_add(&a, b.s);
		ff_buf_free(&b);
		ff_argv_free(&cmd);
	}
	o.log = "/dev/null";	/* every job's output is in its file */
	ff_say("%s: %d run%s over the pool %s (GNU parallel, one at a time per host)\n", ff_prog(),
	       njobs, njobs == 1 ? "" : "s", opt.pool);
	if (ff_spawn(&par, "parallel", a.v, &o) < 0)
		ff_die("cannot run GNU parallel");
	ff_argv_free(&a);
	while (!ff_child_check(&par)) {
		struct pollfd pfd[2] = { { ff_signal_fd(), POLLIN, 0 }, { par.pidfd, POLLIN, 0 } };

		if (ff_signalled()) {
			/* parallel passes it to its jobs, and their ssh ends the remote runs. */
			ff_child_stop(&par, 10);
			break;
		}
		poll(pfd, 2, -1);
	}
	failed = pool_replay(dir, jobs, rep, njobs, records, done);
	rmdir(dir);
	free(remote);
	return failed;
}
