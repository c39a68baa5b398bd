/*
 * ff_series.c - the window as a time series: its steadiness, and
 * sparklines for the summaries.
 */
#include "ff.h"

#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <string.h>

/* What an interval moved per second: bytes, or operations when no bytes moved. */
static double
interval_rate(const json_t *iv, int ops)
{
	double dt = ff_json_num(iv, "dt_s", 0);

	return dt > 0 ? ff_json_num(iv, ops ? "operations" : "bytes", 0) / dt : 0;
}

json_t *
ff_steadiness(const json_t *intervals)
{
	json_t *o = json_object(), *iv;
	double *r, sum = 0, var = 0, mean, half[2] = { 0, 0 }, maxdt = 0, cv, trend;
	size_t i, n = 0, total = json_array_size(intervals), nh[2] = { 0, 0 };
	int ops = 1;
	char why[160];

	json_array_foreach(intervals, i, iv) {
		if (ff_json_num(iv, "bytes", 0) > 0)
			ops = 0;
		maxdt = fmax(maxdt, ff_json_num(iv, "dt_s", 0));
	}
	/* A last interval under half the others is too short to judge by. */
	r = ff_realloc(NULL, (total + 1) * sizeof(*r));
	json_array_foreach(intervals, i, iv)
		if (ff_json_num(iv, "dt_s", 0) >= maxdt / 2)
			sum += r[n++] = interval_rate(iv, ops);
	if (n < 2) {
		free(r);
		json_object_set_new(o, "cv_pct", json_null());
		json_object_set_new(o, "trend_pct", json_null());
		json_object_set_new(o, "steady", json_null());
		json_object_set_new(o, "reason", json_string("fewer than two intervals: nothing to compare"));
		return o;
	}
	mean = sum / n;
	for (i = 0; i < n; i++) {
		var += (r[i] - mean) * (r[i] - mean);
		/* the halves; an odd count's middle interval is in neither */
		if (2 * i + 1 != n) {
			half[2 * i >= n] += r[i];
			nh[2 * i >= n]++;
		}
	}
	free(r);
	cv = mean > 0 ? 100 * sqrt(var / n) / mean : 0;
	trend = mean > 0 ? 100 * (half[1] / nh[1] - half[0] / nh[0]) / mean : 0;
	why[0] = 0;
	if (mean <= 0)
		snprintf(why, sizeof(why), "nothing moved in the window");
	else if (cv > FF_STEADY_CV_PCT)
		snprintf(why, sizeof(why), "throughput varied by %.1f%% (coefficient of variation; above %d%%)",
			 cv, FF_STEADY_CV_PCT);
	else if (fabs(trend) > FF_STEADY_TREND_PCT)
		snprintf(why, sizeof(why), "throughput %s %.1f%% from the first half of the window to the second (above %d%%)",
			 trend > 0 ? "rose" : "fell", fabs(trend), FF_STEADY_TREND_PCT);
	json_object_set_new(o, "cv_pct", json_real(round(cv * 100) / 100));
	json_object_set_new(o, "trend_pct", json_real(round(trend * 100) / 100));
	json_object_set_new(o, "steady", json_boolean(!why[0]));
	json_object_set_new(o, "reason", why[0] ? json_string(why) : json_null());
	return o;
}

int
ff_utf8_locale(void)
{
	const char *cur = setlocale(LC_CTYPE, NULL);
	char *saved = ff_strdup(cur ? cur : "C");
	int utf8 = 0;

	if (setlocale(LC_CTYPE, ""))
		utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	setlocale(LC_CTYPE, saved);
	free(saved);
	return utf8;
}

char *
ff_sparkline(const double *v, size_t n, size_t width, int utf8)
{
	static const char *const blocks[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	static const char ascii[] = "_.-:=+*#";
	struct ff_buf b = FF_BUF_INIT;
	size_t cols = n < width ? n : width, c, i;
	double *col = ff_realloc(NULL, (cols + 1) * sizeof(*col)), max = 0, min = 0;

	/* Each column the mean of its share of the values. */
	for (c = 0; c < cols; c++) {
		size_t from = c * n / cols, to = (c + 1) * n / cols;
		double s = 0;

		for (i = from; i < to; i++)
			s += v[i] > 0 ? v[i] : 0;
		col[c] = s / (to - from);
		max = c ? fmax(max, col[c]) : col[c];
		min = c ? fmin(min, col[c]) : col[c];
	}
	for (c = 0; c < cols; c++) {
		/* a flat series: a flat line, low when it is all zeros */
		int k = max > min ? (int)floor((col[c] - min) / (max - min) * 8) : max > 0 ? 3 : 0;

		k = k > 7 ? 7 : k;
		if (utf8)
			ff_buf_addstr(&b, blocks[k]);
		else
			ff_buf_add(&b, &ascii[k], 1);
	}
	free(col);
	return ff_buf_take(&b);
}

/* More points than this are averaged into this many (the fit's pairs grow as n²). */
#define GROWTH_POINTS 600

json_t *
ff_growth(const double *t, const double *y, size_t n, double band_per_h)
{
	double *bt, *by, *s, c, m1, m2, slope, lo, hi;
	size_t nb = n < GROWTH_POINTS ? n : GROWTH_POINTS, i, j, k, ns = 0, nv = 0;
	json_t *o = json_object();
	const char *verdict;

	/* The points, each the mean of its share when there are many; unknown values left out. */
	bt = ff_realloc(NULL, (nb + 1) * sizeof(*bt));
	by = ff_realloc(NULL, (nb + 1) * sizeof(*by));
	for (k = 0; k < nb; k++) {
		double st = 0, sy = 0;
		size_t m = 0;

		for (i = k * n / nb; i < (k + 1) * n / nb; i++)
			if (!isnan(y[i]))
				st += t[i], sy += y[i], m++;
		if (m)
			bt[nv] = st / m, by[nv++] = sy / m;
	}
	s = ff_realloc(NULL, (nv * (nv - (nv > 0)) / 2 + 1) * sizeof(*s));
	for (i = 0; i < nv; i++)
		for (j = i + 1; j < nv; j++)
			if (bt[j] != bt[i])
				s[ns++] = (by[j] - by[i]) / (bt[j] - bt[i]) * 3600;
	free(bt);
	free(by);
	json_object_set_new(o, "points", json_integer(nv));
	json_object_set_new(o, "band_per_h", json_real(band_per_h));
	if (nv < 3 || ns < 3) {
		free(s);
		json_object_set_new(o, "per_h", json_null());
		json_object_set_new(o, "low_per_h", json_null());
		json_object_set_new(o, "high_per_h", json_null());
		json_object_set_new(o, "verdict", json_string("undecided"));
		return o;
	}
	qsort(s, ns, sizeof(*s), ff_cmp_double);
	slope = ns % 2 ? s[ns / 2] : (s[ns / 2 - 1] + s[ns / 2]) / 2;
	/*
	 * Sen's interval: the slopes ranked M1 and M2 + 1 of the N, where
	 * M1,2 = (N -+ 1.96 sqrt(var S)) / 2 and var S = n(n-1)(2n+5)/18
	 * (Kendall's S with no ties; ties only narrow it, so it errs wide).
	 */
	c = 1.96 * sqrt(nv * (nv - 1.0) * (2.0 * nv + 5) / 18);
	m1 = floor((ns - c) / 2);
	m2 = ceil((ns + c) / 2) + 1;
	lo = s[m1 < 1 ? 0 : (size_t)m1 - 1];
	hi = s[m2 > ns ? ns - 1 : (size_t)m2 - 1];
	free(s);
	/* A slope too small to matter is flat, even when sure. */
	verdict = lo >= -band_per_h && hi <= band_per_h ? "flat" : lo > 0 ? "growing" : "undecided";
	json_object_set_new(o, "per_h", json_real(slope));
	json_object_set_new(o, "low_per_h", json_real(lo));
	json_object_set_new(o, "high_per_h", json_real(hi));
	json_object_set_new(o, "verdict", json_string(verdict));
	return o;
}
