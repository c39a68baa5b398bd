/*
 * flimflam offcpu: where the relays' threads wait. ff-capture offcpu
 * records every scheduler switch of the relays' threads with the stack
 * where each left the CPU (sched:sched_switch), perf's switch records
 * saying when each came back, and the wakeups the relays' threads made.
 * Here each absence becomes its stack weighted by its length in
 * microseconds, the waker on top where a relay's thread woke it ("--
 * woken by nginx (tid 12)" and the waker's stack, leaf first), folded into
 * offcpu.folded in the run directory; ff-flame draws offcpu.html in the
 * current directory, where a frame's width is blocked time, not samples.
 */
#include "ff-run.h"

#include <pipeline.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A thread away from the CPU: since when, and its stack (root first, ';'-joined). */
struct away {
	long tid;
	double t0;
	char *stack, *waker;
};

/* Folded stacks and their microseconds, merged at the end. */
struct folded {
	char *stack;
	double us;
};

/* A recording being folded: the threads away, the folds, the blocked microseconds in all. */
struct folding {
	struct away *aways;
	size_t naways;
	struct folded *folds;
	size_t nfolds, capfolds;
	double total;
};

static struct away *
away_of(struct folding *fo, long tid, int make)
{
	size_t i;

	for (i = 0; i < fo->naways; i++)
		if (fo->aways[i].tid == tid)
			return &fo->aways[i];
	if (!make)
		return NULL;
	fo->aways = ff_realloc(fo->aways, (fo->naways + 1) * sizeof(*fo->aways));
	fo->aways[fo->naways] = (struct away){ tid, -1, NULL, NULL };
	return &fo->aways[fo->naways++];
}

static void
fold_add(struct folding *fo, char *stack, double us)
{
	if (fo->nfolds == fo->capfolds) {
		fo->capfolds = fo->capfolds ? 2 * fo->capfolds : 1024;
		fo->folds = ff_realloc(fo->folds, fo->capfolds * sizeof(*fo->folds));
	}
	fo->folds[fo->nfolds++] = (struct folded){ stack, us };
}

static int
cmp_fold(const void *a, const void *b)
{
	return strcmp(((const struct folded *)a)->stack, ((const struct folded *)b)->stack);
}

/* A frame line of perf script, "\t addr sym+off (dso)": its name, into buf. */
static void
frame_name(const char *line, char *buf, size_t n)
{
	const char *p = line + strspn(line, " \t"), *sym, *paren;
	size_t len;

	p += strcspn(p, " ");		/* the address */
	sym = p + strspn(p, " ");
	paren = strrchr(sym, '(');
	len = paren && paren > sym ? (size_t)(paren - sym) : strlen(sym);
	while (len && sym[len - 1] == ' ')
		len--;
	if (len >= 9 && !strncmp(sym, "[unknown]", 9) && paren && strncmp(paren, "([unknown])", 11)) {
		/* Unknown in a module: the module's name says more. */
		const char *slash = strrchr(paren, '/');

		sym = slash ? slash + 1 : paren + 1;
		len = strcspn(sym, ")");
		snprintf(buf, n, "[%.*s]", (int)len, sym);
		return;
	}
	/* ';' separates frames in folded stacks. */
	snprintf(buf, n, "%.*s", (int)len, sym);
	for (char *q = buf; *q; q++)
		if (*q == ';' || *q == '\n')
			*q = ':';
}

/* "COMM  PID/TID  TIME: EVENT..." -> pid, tid, time; the rest after TIME's ':'. */
static const char *
header(const char *line, char *comm, size_t n, long *pid, long *tid, double *t)
{
	const char *p = line + strspn(line, " "), *slash, *colon;
	const char *q;

	/* The comm may hold spaces: PID/TID is the first token holding a '/' after it. */
	for (q = p; (slash = strchr(q, '/')); q = slash + 1) {
		const char *start = slash;

		while (start > p && start[-1] >= '0' && start[-1] <= '9')
			start--;
		if (start == slash || start == p || start[-1] != ' ')
			continue;
		snprintf(comm, n, "%.*s", (int)(start - p), p);
		while (*comm && comm[strlen(comm) - 1] == ' ')
			comm[strlen(comm) - 1] = 0;
		*pid = strtol(start, NULL, 10);
		*tid = strtol(slash + 1, (char **)&q, 10);
		*t = strtod(q, (char **)&colon);
		if (colon == q || *colon != ':')
			return NULL;
		return colon + 1;
	}
	return NULL;
}

/* An event's stack lines into "root;...;leaf" (or leaf first), malloc'd. */
static char *
join_stack(char **frames, int nf, int leaf_first)
{
	struct ff_buf b = FF_BUF_INIT;
	int i;

	for (i = 0; i < nf; i++)
		ff_buf_printf(&b, "%s%s", i ? ";" : "", frames[leaf_first ? i : nf - 1 - i]);
	return b.s ? b.s : ff_strdup("");
}

/* One event of perf script, its header and stack, taken into the folds. */
static void
take_event(struct folding *fo, const char *head, char **frames, int nf)
{
	char comm[64];
	long pid, tid;
	double t;
	const char *rest = head ? header(head, comm, sizeof(comm), &pid, &tid, &t) : NULL;
	struct away *a;

	if (!rest)
		return;
	rest += strspn(rest, " ");
	if (!strncmp(rest, "sched:sched_switch:", 19) && strstr(rest, "prev_pid=") &&
	    strtol(strstr(rest, "prev_pid=") + 9, NULL, 10) == tid) {
		a = away_of(fo, tid, 1);
		free(a->stack);
		free(a->waker);
		a->t0 = t;
		a->waker = NULL;
		{
			char *s = join_stack(frames, nf, 0);

			a->stack = ff_asprintf("%s (pid %ld)%s%s", comm, pid, *s ? ";" : "", s);
			free(s);
		}
	} else if (!strncmp(rest, "sched:sched_wakeup:", 19) && strstr(rest, " pid=")) {
		a = away_of(fo, strtol(strstr(rest, " pid=") + 5, NULL, 10), 0);
		if (a && a->t0 >= 0 && !a->waker) {
			char *s = join_stack(frames, nf, 1);

			a->waker = ff_asprintf("-- woken by %s (tid %ld)%s%s", comm, tid, *s ? ";" : "", s);
			free(s);
		}
	} else if (!strncmp(rest, "PERF_RECORD_SWITCH IN", 21) ||
		   !strncmp(rest, "PERF_RECORD_SWITCH_CPU_WIDE IN", 30)) {
		a = away_of(fo, tid, 0);
		if (a && a->t0 >= 0 && t >= a->t0) {
			double us = (t - a->t0) * 1e6;

			fold_add(fo, a->waker ? ff_asprintf("%s;%s", a->stack, a->waker) : ff_strdup(a->stack), us);
			fo->total += us;
			a->t0 = -1;
		}
	}
}

/*
 * perf script of the recording, folded; writes `out`. Returns the blocked
 * microseconds in all, or -1 when perf script fails.
 */
static double
fold_recording(const char *data, const char *out)
{
	pipeline *p = ff_perf_script("-i", data, "--show-switch-events",
				     "-F", "comm,pid,tid,time,event,trace,ip,sym,dso", (char *)NULL);
	char *head = NULL, *frames[256], name[512];
	const char *line;
	struct folding fo = { NULL, 0, NULL, 0, 0, 0 };
	int nf = 0, i;
	size_t j;
	FILE *f;

	while ((line = pipeline_readline(p))) {
		if (line[0] == '\t') {
			if (nf < (int)FF_ARRAY_SIZE(frames)) {
				frame_name(line, name, sizeof(name));
				if (name[0])
					frames[nf++] = ff_strdup(name);
			}
			continue;
		}
		take_event(&fo, head, frames, nf);
		for (i = 0; i < nf; i++)
			free(frames[i]);
		nf = 0;
		free(head);
		head = line[strspn(line, " \n")] ? ff_strdup(line) : NULL;
		if (head && strchr(head, '\n'))
			*strchr(head, '\n') = 0;
	}
	take_event(&fo, head, frames, nf);
	for (i = 0; i < nf; i++)
		free(frames[i]);
	free(head);
	if (pipeline_wait(p) != 0)
		return -1;
	qsort(fo.folds, fo.nfolds, sizeof(*fo.folds), cmp_fold);
	if (!(f = fopen(out, "w")))
		ff_die("cannot write '%s': %m", out);
	for (j = 0; j < fo.nfolds; j++) {
		double us = fo.folds[j].us;

		while (j + 1 < fo.nfolds && !strcmp(fo.folds[j].stack, fo.folds[j + 1].stack))
			us += fo.folds[++j].us;
		if (us >= 0.5)
			fprintf(f, "%s %.0f\n", fo.folds[j].stack, us);
	}
	if (fclose(f) != 0)
		ff_die("cannot write '%s': %m", out);
	return fo.total;
}

/* The recording of the run, folded and drawn; an `offcpu` event with --json. */
void
render_offcpu(struct run *run, json_t *events, const char *rundir)
{
	json_t *cap = ff_event_find(events, "capture"), *ev;
	char *data = ff_json_path_value(json_array_get(json_object_get(cap, "files"), 0));
	char folded[PATH_MAX + 32], evfile[PATH_MAX + 32], cwd[PATH_MAX], *path = ff_program("ff-flame");
	char title[] = "Off-CPU time of the relays (width: microseconds blocked, not samples)";

	if (!data)
		ff_die("the recording named no perf.data; the run's files are in '%s'", rundir);
	if (!path)
		ff_die("cannot find ff-flame beside flimflam nor on PATH");
	snprintf(folded, sizeof(folded), "%s/offcpu.folded", rundir);
	snprintf(evfile, sizeof(evfile), "%s/events.jsonl", rundir);
	snprintf(run->offcpu_html, sizeof(run->offcpu_html), "%s/offcpu.html",
		 getcwd(cwd, sizeof(cwd)) ? cwd : ".");
	if (!run->spec.json)
		ff_say("flimflam: folding the off-CPU time of '%s'\n", data);
	run->offcpu_us = fold_recording(data, folded);
	if (run->offcpu_us < 0)
		ff_die("perf script could not read '%s'; the run's files are in '%s'", data, rundir);
	{
		FILE *f = fopen(evfile, "w");
		size_t i;
		json_t *e;

		if (!f)
			ff_die("cannot write '%s': %m", evfile);
		json_array_foreach(events, i, e) {
			char *s = json_dumps(e, JSON_COMPACT);

			fprintf(f, "%s\n", s);
			free(s);
		}
		if (fclose(f) != 0)
			ff_die("cannot write '%s': %m", evfile);
	}
	{
		char *args[] = { path, "-o", run->offcpu_html, "-t", title, "--events", evfile, folded, NULL };
		struct ff_child flame;

		if (ff_spawn(&flame, "ff-flame", args, NULL) < 0 || !ff_child_wait(&flame, 300) ||
		    flame.status != 0)
			ff_die("cannot draw '%s' from '%s'", run->offcpu_html, folded);
	}
	free(path);
	ev = ff_event("offcpu");
	json_object_set_new(ev, "blocked_us", json_real(run->offcpu_us));
	json_object_set_new(ev, "perf_cpu_s", json_incref(json_object_get(cap, "perf_cpu_s")));
	json_object_set_new(ev, "files", json_pack("{s:o, s:o}", "folded", ff_json_path(folded),
						   "html", ff_json_path(run->offcpu_html)));
	if (run->spec.json)
		ff_emit(ev);
	else
		json_decref(ev);
	free(data);
}

/* The summary's lines: where the page is, the time it holds, what the recording cost. */
void
summarize_offcpu(const struct run *run, json_t *events)
{
	json_t *cap = ff_event_find(events, "capture"), *rsc = ff_event_find(events, "resources");
	double window = ff_json_num(rsc, "window_s", 0), perf_cpu = ff_json_num(cap, "perf_cpu_s", -1);

	ff_print("\nOff-CPU\n");
	ff_print("  Page:        %s\n", run->offcpu_html);
	ff_print("  Blocked:     %.3f s of the relays' threads over the %.3f s window\n",
		 run->offcpu_us / 1e6, window);
	if (perf_cpu >= 0 && window > 0)
		ff_print("  Cost:        perf took %.3f CPU s (%.1f%% of a CPU) recording every switch; the relays' figures above are with it (compare 'flimflam run')\n",
			 perf_cpu, 100 * perf_cpu / window);
}
