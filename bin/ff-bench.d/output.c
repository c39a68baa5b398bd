/*
 * ff-bench: where the results go. The results file, checked before
 * anything runs, its name claimed, kept whole after every run, and locked
 * while it is written, so that two benches never lose each other's runs;
 * and the run directories the results name, held until the bench ends.
 */
#include "ff-bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int output_lost;

static char *page;		/* the report beside the results file, or NULL (a device or FIFO) */
static struct ff_out stream;	/* a device or FIFO output, open for the whole bench */
static size_t saved;		/* this bench's records in the results file */
static int appended;		/* --append to a file with lines: they are kept first */

const char *
output_page(void)
{
	return page;
}

/*
 * Open and lock the results file at `path` (made empty when missing): the
 * lock is on what is at the path while it is held, as every writer
 * replaces the file by rename. fd, or -1 with errno.
 */
static int
lock_results(const char *path)
{
	struct stat held, now;
	int fd, saved_errno;

	for (;;) {
		if ((fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
			return -1;
		while (flock(fd, LOCK_EX) < 0)
			if (errno != EINTR)
				goto fail;
		if (fstat(fd, &held) < 0)
			goto fail;
		if (stat(path, &now) == 0 && now.st_dev == held.st_dev && now.st_ino == held.st_ino)
			return fd;
		close(fd);	/* replaced while we waited: lock the new one */
	}
fail:
	saved_errno = errno;
	close(fd);
	errno = saved_errno;
	return -1;
}

/* The lines of `records` the file does not have yet, into text. */
static void
new_lines(json_t *records, struct ff_buf *text)
{
	char *line;
	size_t i;

	for (i = saved; i < json_array_size(records); i++) {
		line = json_dumps(json_array_get(records, i), JSON_COMPACT | JSON_REAL_PRECISION(10));
		if (!line)
			ff_die("out of memory");
		ff_buf_addstr(text, line);
		ff_buf_add(text, "\n", 1);
		free(line);
	}
}

/*
 * A regular file: locked, read, and written whole with the new lines added
 * (temp and rename), so it always holds whole lines of whole runs, and
 * another bench's lines added meanwhile (--append) are kept. Before this
 * bench's first line, what was there is kept only with --append.
 */
static int
save_file(json_t *records, struct ff_buf *err)
{
	struct ff_buf text = FF_BUF_INIT;
	struct ff_out o;
	char *cur = NULL;
	size_t len = 0;
	int fd, rc = -1;

	if ((fd = lock_results(stream.path)) < 0) {
		ff_why(err, "cannot lock '%s': %s", opt.output, strerror(errno));
		return -1;
	}
	ff_buf_add(&text, "", 0);
	if ((saved || opt.append) && !(cur = ff_read_file(stream.path, &len))) {
		ff_why(err, "cannot read '%s': %s", opt.output, strerror(errno));
		goto out;
	}
	if (len) {
		ff_buf_add(&text, cur, len);
		if (cur[len - 1] != '\n')
			ff_buf_add(&text, "\n", 1);
	}
	new_lines(records, &text);
	if (ff_out_open(&o, opt.output, 0, NULL, 0644) < 0 ||
	    ff_out_write(&o, text.s, text.len) < 0 || ff_out_commit(&o) < 0) {
		ff_out_abort(&o);
		ff_why(err, "%s", o.err);
		goto out;
	}
	rc = 0;
out:
	close(fd);
	free(cur);
	ff_buf_free(&text);
	return rc;
}

/* A device or a FIFO: the new lines written into it. */
static int
save_stream(json_t *records, struct ff_buf *err)
{
	struct ff_buf text = FF_BUF_INIT;
	int rc = 0;

	ff_buf_add(&text, "", 0);
	new_lines(records, &text);
	if ((stream.fd < 0 && ff_out_open(&stream, opt.output, 0, NULL, 0644) < 0) ||
	    ff_out_write(&stream, text.s, text.len) < 0) {
		ff_why(err, "%s", stream.err);
		rc = -1;
	}
	ff_buf_free(&text);
	return rc;
}

int
output_save(json_t *records)
{
	struct ff_buf err = FF_BUF_INIT;
	size_t done = json_array_size(records);

	if ((stream.direct ? save_stream : save_file)(records, &err) == 0) {
		saved = done;
		return 0;
	}
	/* What the file holds is exactly what the table shows. */
	while (json_array_size(records) > saved)
		json_array_remove(records, json_array_size(records) - 1);
	output_lost = 1;
	if (!saved)
		ff_warn("%s; the bench stops, and none of its runs %s '%s'%s", err.s,
			stream.direct ? "went whole into" : "is kept in", opt.output,
			appended ? " (its earlier lines are as they were)" : "");
	else if (saved == 1)
		ff_warn("%s; the bench stops: '%s' %s this bench's first run whole, of %zu finished%s",
			err.s, opt.output, stream.direct ? "got" : "keeps", done,
			appended ? ", after its earlier lines" : "");
	else
		ff_warn("%s; the bench stops: '%s' %s this bench's first %zu runs whole, of %zu "
			"finished%s", err.s, opt.output, stream.direct ? "got" : "keeps", saved, done,
			appended ? ", after its earlier lines" : "");
	ff_buf_free(&err);
	return -1;
}

/* Claim the results file and its page when the bench must make them new. */
static void
claim(const char *path, const char *given, const char *hint)
{
	if (ff_out_claim(path) == 0)
		return;
	ff_die("cannot write '%s': %s%s", given, errno == EEXIST ? "it exists" : strerror(errno),
	       errno == EEXIST ? hint : "");
}

/*
 * Before anything runs: the results file can be written (a device or FIFO
 * into, else temp and rename, with room beside it), an existing one only
 * with --force or --append, and --append's holds bench results. A new
 * one is claimed (with its page) at once: two benches never share it.
 */
void
output_prepare(void)
{
	static const char *const ext[] = { ".jsonl", ".html" };
	static char name[PATH_MAX];
	char dir[PATH_MAX], stem[PATH_MAX], *slash, *text;
	struct ff_buf why = FF_BUF_INIT;
	static const char results_hint[] = " (--force replaces it, --append adds the new runs to it)";
	static const char page_hint[] = " (the report of the results goes there; --force replaces it)";
	int fresh = !opt.force && !opt.append;	/* both names are made new here */
	struct ff_out o;
	size_t len;

	if (!opt.output) {
		/* flimflam-bench-YYYYmmdd-HHMMSS.jsonl, -2, -3... when taken (or its page is). */
		time_t t = time(NULL);
		struct tm tm;

		localtime_r(&t, &tm);
		strftime(stem, sizeof(stem), "flimflam-bench-%Y%m%d-%H%M%S", &tm);
		if (ff_out_claim_new(stem, ext, 2, name, sizeof(name) - 8) < 0)
			ff_die("cannot write '%s.jsonl': %s", stem, strerror(errno));
		strcat(name, ".jsonl");
		opt.output = name;
		fresh = 0;	/* claimed, with its page */
	}
	if (ff_out_check(&stream, opt.output, fresh ? FF_OUT_NEW : 0, NULL) < 0)
		ff_die("%s%s", stream.err, stream.exists ? results_hint : "");
	if (stream.direct)
		return;
	snprintf(dir, sizeof(dir), "%s", stream.path);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = 0;
	else
		strcpy(dir, ".");
	/* Tried, not access(2): root passes that even on /proc. */
	if (ff_dir_writable(dir, 1 << 20, &why) < 0)
		ff_die("cannot keep the results in '%s': %s", opt.output, why.s);
	/*
	 * The results file is claimed before its page is looked at: of two
	 * benches given one new name, the one that loses is told the name it
	 * gave, not that the winner's page exists.
	 */
	if (fresh)
		claim(stream.path, opt.output, results_hint);
	page = report_path_for(opt.output);
	if (ff_out_check(&o, page, fresh ? FF_OUT_NEW : 0, NULL) < 0)
		ff_die("%s%s", o.err, o.exists ? page_hint : "");
	if (fresh)
		claim(o.path, page, page_hint);
	if (!opt.append || !stream.exists)
		return;
	if (!(text = ff_read_file(stream.path, &len)))
		ff_die("cannot read '%s': %s", opt.output, strerror(errno));
	if (len && strspn(text, " \t\r\n") < len) {
		/* Dies naming the line that is not a result. */
		struct results old = { 0 };

		load_results(opt.output, 1, &old);
		results_free(&old);
		appended = 1;
	}
	free(text);
}

/*
 * Every run makes a run directory, and making one prunes the oldest
 * beyond $FLIMFLAM_KEEP_RUNS: room for this bench's own. Other programs
 * prune too: hold_run_dir keeps them from this bench's.
 */
void
keep_runs_room(int nrun)
{
	long keep = ff_env_long("FLIMFLAM_KEEP_RUNS", 20, 0, FF_KEEP_RUNS_MAX);
	char buf[32];

	if (keep > 0) {
		keep += nrun * opt.repeat;
		snprintf(buf, sizeof(buf), "%ld", keep < FF_KEEP_RUNS_MAX ? keep : FF_KEEP_RUNS_MAX);
		setenv("FLIMFLAM_KEEP_RUNS", buf, 1);
	}
}

void
hold_run_dir(const char *dir)
{
	static int warned;
	struct rlimit rl;

	/* While the run holds it; a pool host's is not here. */
	if (ff_rundir_hold(dir) >= 0 || errno == ENOENT || errno == ENOTDIR)
		return;
	if (errno == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0 && ff_rundir_hold(dir) >= 0)
			return;
	}
	if (!warned++)
		ff_warn("cannot hold run directory '%s' (%s): other programs' pruning may remove it "
			"before the bench ends", dir, strerror(errno));
}
