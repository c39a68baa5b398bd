/*
 * builds.c - flamegraph --build A=PATH --build B=PATH: a run of each
 * build, one after the other under the same workload, each build's page,
 * the differential page, and ff-flame's ranking of the functions whose
 * share changed the most (its `changes`, relayed in our flamegraph_diff
 * event and summary).
 */
#include "ff-run.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

/* The files of the two builds: in the current directory, and each run's own. */
struct two {
	char cwd[PATH_MAX - 64], data[2][PATH_MAX], html[2][PATH_MAX], dhtml[PATH_MAX];
	char dir[2][PATH_MAX];
	json_t *events[2];
};

/* Run ff-flame with `args` to its end (a signal stops it and us); 0 or -1. */
static int
flame_run(char *const args[], const char *rundir)
{
	static struct ff_child flame;

	if (ff_spawn(&flame, "ff-flame", args, NULL) < 0)
		return -1;
	ff_set_cleanup(ff_children_stop_all);
	while (!ff_child_check(&flame)) {
		struct pollfd pfd[2] = { { ff_signal_fd(), POLLIN, 0 }, { flame.pidfd, POLLIN, 0 } };

		if (ff_signalled()) {
			ff_child_stop(&flame, 1.0);
			stopped_by(ff_signalled(), rundir);
		}
		poll(pfd, 2, -1);
	}
	ff_set_cleanup(NULL);
	if (flame.status != 0)
		ff_warn("ff-flame %s", ff_child_how(&flame));
	return flame.status == 0 ? 0 : -1;
}

/* ff-flame's `changes` (one line of JSON in `file`): the functions that grew or shrank the most. */
static json_t *
read_changes(const char *file)
{
	char *text = ff_read_file(file, NULL);
	json_t *ev = text ? json_loads(text, 0, NULL) : NULL;

	free(text);
	if (!json_is_object(ev) || !json_is_array(json_object_get(ev, "grew")) ||
	    !json_is_array(json_object_get(ev, "shrank")))
		ff_die("ff-flame --changes wrote no changes into '%s'; the pages are written", file);
	return ev;
}

/* The changes (grew or shrank) as printed: "    none" for none. */
static void
print_changes(const json_t *a)
{
	const json_t *x;
	size_t i;

	json_array_foreach(a, i, x)
		ff_print("    %+6.2f pt  %5.2f%% -> %5.2f%%  %s\n", ff_json_num(x, "change_points", 0),
			 100 * ff_json_num(x, "base_share", 0), 100 * ff_json_num(x, "new_share", 0),
			 ff_json_str(x, "function"));
	if (!json_array_size(a))
		ff_print("    none\n");
}

/*
 * perf-LABEL.data, flamegraph-LABEL.html and the differential page
 * flamegraph-A-vs-B.html: each can be written, before anything starts.
 */
static void
builds_files(const struct run *run, struct two *t)
{
	const char *la = run->spec.builds[0].label, *lb = run->spec.builds[1].label;
	struct ff_out dout;
	int b;

	if (!getcwd(t->cwd, sizeof(t->cwd)))
		ff_die("cannot find the current directory: %s", strerror(errno));
	snprintf(t->dhtml, sizeof(t->dhtml), "%s/flamegraph-%s-vs-%s.html", t->cwd, la, lb);
	for (b = 0; b < 2; b++) {
		snprintf(t->data[b], sizeof(t->data[b]), "%s/perf-%s.data", t->cwd, run->spec.builds[b].label);
		snprintf(t->html[b], sizeof(t->html[b]), "%s/flamegraph-%s.html", t->cwd,
			 run->spec.builds[b].label);
		if (ff_out_check(&dout, t->data[b], 0, "*.old") < 0 ||
		    ff_out_check(&dout, t->html[b], 0, "old.*") < 0)
			ff_die("%s", dout.err);
	}
	if (ff_out_check(&dout, t->dhtml, 0, "old.*") < 0)
		ff_die("%s", dout.err);
}

/* Build b's run, in a directory of its own; its recording kept as perf-LABEL.data; its page. */
static void
build_run(struct run *run, const struct cmd *c, struct two *t, const char *rundir, int b)
{
	json_t *cap;
	char *p;
	struct ff_out keep;

	run->spec.cur = b;
	snprintf(t->dir[b], sizeof(t->dir[b]), "%s/%s", rundir, run->spec.builds[b].label);
	if (ff_mkdirs(t->dir[b], 0700) < 0)
		ff_die("cannot create '%s': %s", t->dir[b], strerror(errno));
	if (!run->spec.json)
		ff_say("flimflam: build %s (%d of 2): recording\n", run->spec.builds[b].label, b + 1);
	t->events[b] = run_pipeline(run, c, t->dir[b]);
	cap = ff_event_find(t->events[b], "capture");
	p = ff_json_path_value(json_array_get(json_object_get(cap, "files"), 0));
	/* perf.data becomes perf-LABEL.data (an existing one kept as .old). */
	if (!p || ff_out_open(&keep, t->data[b], FF_OUT_DEFER, "*.old", 0600) < 0 ||
	    rename(p, keep.tmp) < 0 || ff_out_commit(&keep) < 0)
		ff_die("cannot keep the recording of build %s as '%s'%s%s", run->spec.builds[b].label,
		       t->data[b], p ? ": " : "", p ? strerror(errno) : "");
	free(p);
	json_array_set_new(json_object_get(cap, "files"), 0, ff_json_path(t->data[b]));
	snprintf(run->flame_html, sizeof(run->flame_html), "%s", t->html[b]);
	render_flamegraph(run, t->events[b], t->dir[b]);
}

/*
 * The differential page, sized by the new build, and ff-flame's changes
 * (returned): each recording's processes in its own run's relay towers
 * (its events), which match by role and program, not pid.
 */
static json_t *
diff_page(const struct run *run, const struct two *t, const char *rundir)
{
	const char *la = run->spec.builds[0].label, *lb = run->spec.builds[1].label;
	char evfile[PATH_MAX + 32], baseev[PATH_MAX + 32], changes[PATH_MAX + 32], title[256];
	char *path = ff_program("ff-flame");
	struct ff_out dout;
	json_t *ch;

	snprintf(evfile, sizeof(evfile), "%s/events.jsonl", t->dir[1]);
	snprintf(baseev, sizeof(baseev), "%s/events.jsonl", t->dir[0]);
	snprintf(changes, sizeof(changes), "%s/changes.json", rundir);
	if (ff_out_open(&dout, t->dhtml, FF_OUT_DEFER, "old.*", 0644) < 0)
		ff_die("%s", dout.err);
	if (!path)
		ff_die("cannot find ff-flame beside flimflam nor on PATH");
	{
		char *pargs[] = { path, "-o", dout.tmp, "-t", title, "--events", evfile, "--base-events",
				  baseev, "--diff", (char *)t->data[0], (char *)t->data[1], NULL };
		char *cargs[] = { path, "--changes", "-o", changes, "--events", evfile, "--base-events",
				  baseev, "--diff", (char *)t->data[0], (char *)t->data[1], NULL };

		snprintf(title, sizeof(title), "Differential flame graph: %s against %s", lb, la);
		if (!run->spec.json)
			ff_say("flimflam: rendering %s\n", t->dhtml);
		if (flame_run(pargs, rundir) < 0) {
			ff_out_abort(&dout);
			ff_die("cannot render the differential flamegraph; the recordings are kept");
		}
		if (ff_out_commit(&dout) < 0)
			ff_die("%s; the recordings are kept", dout.err);
		if (flame_run(cargs, rundir) < 0)
			ff_die("cannot rank the two recordings' functions; the pages are written");
	}
	free(path);
	ch = read_changes(changes);
	return ch;
}

/* The differential's summary, from ff-flame's changes. */
static void
diff_summary(const struct run *run, const struct two *t, const json_t *ch)
{
	const char *la = run->spec.builds[0].label, *lb = run->spec.builds[1].label;
	double base = ff_json_num(ch, "base_samples", 0), new = ff_json_num(ch, "new_samples", 0);
	char *url = ff_file_url(t->dhtml);

	ff_print("\nDifferential flamegraph (%s against %s)\n", lb, la);
	ff_print("  Page:        %s\n", t->dhtml);
	ff_print("  Samples:     %.0f in %s, %.0f in %s\n", base, la, new, lb);
	if (json_is_true(json_object_get(ch, "too_few_samples")))
		ff_print("  Too few samples to rank: fewer than %d in %s; the changes below are\n"
			 "  mostly chance (a longer --duration, or a higher --freq, gives more)\n",
			 FF_FLAME_RANK_MIN_SAMPLES, base < FF_FLAME_RANK_MIN_SAMPLES &&
			 new < FF_FLAME_RANK_MIN_SAMPLES ? "both builds" :
			 base < FF_FLAME_RANK_MIN_SAMPLES ? la : lb);
	ff_print("  Self samples whose share grew the most:\n");
	print_changes(json_object_get(ch, "grew"));
	ff_print("  Self samples whose share shrank the most:\n");
	print_changes(json_object_get(ch, "shrank"));
	ff_print("\nOpen it in a browser: %s\n", url);
	free(url);
}

void
flamegraph_builds(struct run *run, const struct cmd *c)
{
	const char *rundir = ff_rundir(NULL);
	struct two t;
	json_t *ch, *ev, *v;
	const char *key;
	int b;

	builds_files(run, &t);
	for (b = 0; b < 2; b++)
		build_run(run, c, &t, rundir, b);
	ch = diff_page(run, &t, rundir);
	if (!run->spec.json)
		for (b = 0; b < 2; b++) {
			ff_print("%s== Build %s ==\n\n", b ? "\n" : "", run->spec.builds[b].label);
			summarize(run, t.events[b], t.dir[b]);
			snprintf(run->flame_html, sizeof(run->flame_html), "%s", t.html[b]);
			summarize_capture(run, c, t.events[b]);
		}
	ev = ff_event("flamegraph_diff");
	json_object_set_new(ev, "base", json_string(run->spec.builds[0].label));
	json_object_set_new(ev, "new", json_string(run->spec.builds[1].label));
	json_object_set_new(ev, "files", json_pack("{s:o, s:o, s:o, s:o, s:o}",
		"base_html", ff_json_path(t.html[0]), "new_html", ff_json_path(t.html[1]),
		"diff_html", ff_json_path(t.dhtml), "base_data", ff_json_path(t.data[0]),
		"new_data", ff_json_path(t.data[1])));
	/* ff-flame's ranking, relayed: samples, too_few_samples, grew, shrank. */
	json_object_foreach(ch, key, v)
		if (strcmp(key, "event"))
			json_object_set(ev, key, v);
	if (run->spec.json)
		ff_emit(ev);
	else {
		diff_summary(run, &t, ch);
		json_decref(ev);
	}
	json_decref(ch);
	json_decref(t.events[0]);
	json_decref(t.events[1]);
}
