/*
 * soak.c - a long window watched: the progress line with the last
 * interval's figures (throughput, each relay's RSS and open files), and
 * the summary's lines of each relay's growth per hour (ff-capture fits it,
 * lib/ff_series.c: ff_growth).
 */
#include "ff-run.h"

#include <math.h>
#include <string.h>

/* The last interval's figures, as the progress line shows them. */
static char last[256];

void
progress_interval(const struct run *run, const json_t *ev)
{
	double dt = ff_json_num(ev, "dt_s", 0);
	const json_t *r;
	char a[64];
	size_t i;
	int n;

	if (dt <= 0)
		return;
	if (ff_workload_is_rr(run->spec.workload))
		n = snprintf(last, sizeof(last), " | %s", ff_fmt_prefixed(ff_json_num(ev, "operations", 0) / dt,
					1000, " ", "op/s", a, sizeof(a)));
	else
		n = snprintf(last, sizeof(last), " | %s", ff_fmt_prefixed(8 * ff_json_num(ev, "bytes", 0) / dt,
					1000, " ", "bit/s", a, sizeof(a)));
	json_array_foreach(json_object_get(ev, "relays"), i, r) {
		if (n < 0 || n >= (int)sizeof(last) || !json_is_number(json_object_get(r, "rss_bytes")))
			break;
		n += snprintf(last + n, sizeof(last) - n, " | %s %s, %.0f files", role_name(ff_json_str(r, "role")),
			      ff_fmt_prefixed(ff_json_num(r, "rss_bytes", 0), 1024, " ", "B", a, sizeof(a)),
			      ff_json_num(r, "fds", 0));
	}
}

const char *
progress_text(void)
{
	return last;
}

/*
 * Not on a terminal, a window of PROGRESS_MIN_S or more says its progress
 * every PROGRESS_S (or a 30th of the window, if longer): a long soak in a
 * log is not silence. Returns how long poll may wait before the next (-1: none).
 */
#define PROGRESS_MIN_S 20
#define PROGRESS_S 10

int
progress_note(const struct run *run, double win_end, double now)
{
	static double said_for;	/* the window the notes are of */
	static long said;
	double dur = run->spec.run.duration, every = fmax(PROGRESS_S, dur / 30), at = now - (win_end - dur);
	long k = (long)(at / every);

	if (run->spec.json || ff_verbosity < 0 || dur < PROGRESS_MIN_S || now >= win_end)
		return -1;
	if (said_for != win_end)
		said_for = win_end, said = 0;
	if (k > said) {
		said = k;
		ff_say("flimflam: measuring: %.0f of %.0f s%s\n", k * every, dur, last);
	}
	return (int)(((said + 1) * every - at) * 1000) + 1;
}

/* A fit of growth ({per_h, low_per_h, high_per_h, verdict}) in words, each figure by fmt. */
static void
growth_words(const char *what, const json_t *g, const char *(*fmt)(double, char *, size_t))
{
	char a[64], lo[64], hi[64];
	double v = ff_json_num(g, "per_h", NAN);

	if (isnan(v)) {
		ff_print("%s not fitted (fewer than 3 intervals)", what);
		return;
	}
	ff_print("%s %s%s/h (95%%: %s to %s), %s", what, v > 0 ? "+" : "", fmt(v, a, sizeof(a)),
		 fmt(ff_json_num(g, "low_per_h", 0), lo, sizeof(lo)),
		 fmt(ff_json_num(g, "high_per_h", 0), hi, sizeof(hi)), ff_json_str(g, "verdict"));
}

static const char *
fmt_bytes(double v, char *buf, size_t n)
{
	char a[64];

	snprintf(buf, n, "%s%s", v < 0 ? "-" : "", ff_fmt_prefixed(fabs(v), 1024, " ", "B", a, sizeof(a)));
	return buf;
}

static const char *
fmt_count(double v, char *buf, size_t n)
{
	snprintf(buf, n, "%.3g", v);
	return buf;
}

/* A relay's growth over the window (resources.relays[].growth), a line. */
void
growth_line(const char *role, const json_t *r)
{
	const json_t *g = json_object_get(r, "growth");

	if (!json_is_object(g))
		return;
	ff_print("  %s growth:   ", role);
	growth_words("RSS", json_object_get(g, "rss"), fmt_bytes);
	growth_words("; open files", json_object_get(g, "fds"), fmt_count);
	ff_print("\n");
}
