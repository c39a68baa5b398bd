/*
 * bench --record: each run is `ff-run record` instead of `ff-run run`, so
 * perf records the relays through the run's window as `flimflam record`
 * does. ff-run writes perf.data in its current directory, so each run
 * starts in a scratch directory of its own beside the results file; when
 * the run ends its perf.data moves into the run's directory, and the
 * row's `capture` names it there (flimflam explain reads it back). A run
 * that ends without its recording fails.
 */
#include "ff-bench.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

/* --record's limits, checked with the other options. */
void
record_opts_check(const char *usage)
{
	if (!opt.record)
		return;
	if (opt.pool)
		ff_usage_error(usage, "--record: the runs record here, not over --pool");
}

/* The scratch directory a recording run starts in (dir, PATH_MAX), or "" without --record. */
void
record_start(char *dir, size_t n)
{
	char *out, *where;

	dir[0] = 0;
	if (!opt.record)
		return;
	out = ff_strdup(opt.output ? opt.output : ".");
	where = dirname(out);
	snprintf(dir, n, "%s/.ff-bench-record-XXXXXX", where);
	free(out);
	if (!mkdtemp(dir))
		ff_die("cannot create a directory for a run's recording beside '%s': %s",
		       opt.output ? opt.output : ".", strerror(errno));
}

/* Copy `from` to `to` (a new file), for a run directory on another file system. */
static int
copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	char buf[65536];
	ssize_t k;

	if (in < 0)
		return -1;
	if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
		close(in);
		return -1;
	}
	while ((k = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, k) != k) {
			k = -1;
			break;
		}
	close(in);
	if (close(out) < 0 || k < 0) {
		unlink(to);
		return -1;
	}
	return 0;
}

/* Empty and remove the scratch directory (perf.data, perf.data.old, whatever ff-run left). */
void
record_discard(char *dir)
{
	static const char *const left[] = { "perf.data", "perf.data.old", "flamegraph.html" };
	char p[PATH_MAX + 32];
	size_t i;

	for (i = 0; dir[0] && i < FF_ARRAY_SIZE(left); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, left[i]);
		unlink(p);
	}
	if (dir[0] && rmdir(dir) < 0)
		ff_warn("cannot remove '%s': %s", dir, strerror(errno));
	dir[0] = 0;
}

/*
 * The run's recording moved from `scratch` (then removed) into run_dir,
 * and the record's capture into *capture: the capture event `cap`, its
 * files naming the moved perf.data. Returns NULL, or why an ok run has no
 * recording.
 */
const char *
record_finish(char *scratch, const char *run_dir, const json_t *cap, int ok, json_t **capture)
{
	static char why[PATH_MAX + 128];
	char from[PATH_MAX + 16], to[PATH_MAX + 16];
	const char *err = NULL;

	if (!scratch[0])
		return NULL;
	snprintf(from, sizeof(from), "%s/perf.data", scratch);
	snprintf(to, sizeof(to), "%s/perf.data", run_dir);
	if (!ok || !cap) {
		if (ok)
			err = "the run named no recording (no capture event)";
	} else if (!run_dir[0]) {
		err = "the run named no run directory to keep its recording in";
	} else if (access(from, R_OK) < 0) {
		snprintf(why, sizeof(why), "no recording: %s: %s", from, strerror(errno));
		err = why;
	} else if (rename(from, to) < 0 && (errno != EXDEV || copy_file(from, to) < 0)) {
		snprintf(why, sizeof(why), "cannot keep the recording as '%s': %s", to, strerror(errno));
		err = why;
	} else {
		json_t *c = json_deep_copy(cap);

		json_object_del(c, "event");
		json_object_set_new(c, "files", json_pack("[o]", ff_json_path(to)));
		*capture = c;
	}
	record_discard(scratch);
	return err;
}
