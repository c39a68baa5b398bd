/*
 * ff-flame's output: folded stacks, or the page: our template in
 * share/flamegraph with its CSS, script and the graph's JSON data inlined.
 */
#include "ff-flame.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

const char *const kind_names[] = {
	"root", "process", "kernel", "exe", "proton", "lib", "libc", "unknown",
	"user", NULL
};

static void
buf_u64(struct ff_buf *b, uint64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);

	ff_buf_add(b, tmp, n);
}

void
folded_out(struct ff_buf *b, const uint32_t *order, int diff)
{
	const struct stack *s;
	uint32_t i, k;

	for (i = 0; i < nstacks; i++) {
		s = &stacks[order[i]];
		for (k = 0; k < s->len; k++) {
			if (k)
				ff_buf_add(b, ";", 1);
			ff_buf_addstr(b, frames[stack_ids[s->off + k]].name);
		}
		ff_buf_add(b, " ", 1);
		if (diff) {
			buf_u64(b, s->count[1]);
			ff_buf_add(b, " ", 1);
		}
		buf_u64(b, s->count[0]);
		ff_buf_add(b, "\n", 1);
	}
}

const char *
file_date(const char *path)
{
	static char buf[32];
	struct stat st;
	struct tm tm;

	if (!path || !strcmp(path, "-") || stat(path, &st) < 0)
		return ff_iso_time();
	gmtime_r(&st.st_mtime, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

/* Are the samples of either side of a differential graph too few to rank? */
int
too_few_to_rank(uint64_t total, uint64_t base_total)
{
	return total < RANK_MIN_SAMPLES || base_total < RANK_MIN_SAMPLES;
}

static void
data_out(struct ff_buf *b, json_t *meta, int diff, uint64_t total,
	 uint64_t base_total)
{
	json_t *d = json_object(), *names = json_array(), *mods = json_array(),
		*fmod = json_array(), *fkind = json_array(), *kinds = json_array(),
		*detail = json_object();
	char *text;
	size_t i;
	uint32_t f;

	for (i = 0; kind_names[i]; i++)
		json_array_append_new(kinds, json_string(kind_names[i]));
	for (i = 0; i < nmodules; i++)
		json_array_append_new(mods, ff_json_text(modules[i]));
	for (f = 0; f < nframes; f++) {
		json_array_append_new(names, ff_json_text(frames[f].name));
		json_array_append_new(fmod, json_integer(frames[f].module));
		json_array_append_new(fkind, json_integer(frames[f].kind));
		if (frames[f].detail) {
			char key[16];

			snprintf(key, sizeof(key), "%u", f);
			json_object_set_new(detail, key, ff_json_text(frames[f].detail));
		}
	}
	json_object_set(d, "meta", meta);
	json_object_set_new(d, "diff", json_boolean(diff));
	json_object_set_new(d, "total", json_integer(total));
	json_object_set_new(d, "base_total",
			    diff ? json_integer(base_total) : json_null());
	json_object_set_new(d, "min_samples", json_integer(RANK_MIN_SAMPLES));
	json_object_set_new(d, "too_few_samples",
			    diff ? json_boolean(too_few_to_rank(total, base_total)) : json_null());
	json_object_set_new(d, "kinds", kinds);
	json_object_set_new(d, "modules", mods);
	json_object_set_new(d, "names", names);
	json_object_set_new(d, "fmod", fmod);
	json_object_set_new(d, "fkind", fkind);
	json_object_set_new(d, "detail", detail);
	text = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(d);
	if (!text)
		ff_die("out of memory");
	/*
	 * The node arrays are plain integers, written directly: as jansson
	 * values a million nodes would cost hundreds of megabytes.
	 */
	ff_page_script_json(b, text, strlen(text) - 1);
	free(text);
	ff_buf_addstr(b, ",\"nodes\":[");
	for (i = 0; i < nnodes; i++) {
		if (i)
			ff_buf_add(b, ",", 1);
		buf_u64(b, nodes[i].frame);
		ff_buf_add(b, ",", 1);
		buf_u64(b, nodes[i].depth);
		ff_buf_add(b, ",", 1);
		buf_u64(b, nodes[i].count[0]);
	}
	ff_buf_add(b, "]", 1);
	if (diff) {
		ff_buf_addstr(b, ",\"base\":[");
		for (i = 0; i < nnodes; i++) {
			if (i)
				ff_buf_add(b, ",", 1);
			buf_u64(b, nodes[i].count[1]);
		}
		ff_buf_add(b, "]", 1);
	}
	ff_buf_add(b, "}", 1);
}

struct page_data {
	json_t *meta;
	int diff;
	uint64_t total, base_total;
};

static void
page_data(struct ff_buf *b, void *arg)
{
	struct page_data *d = arg;

	data_out(b, d->meta, d->diff, d->total, d->base_total);
}

/* The template with @FLAME_CSS@, @FLAME_DATA@ and @FLAME_JS@ filled in. */
void
html_out(struct ff_buf *b, json_t *meta, int diff, uint64_t total,
	 uint64_t base_total)
{
	static const char *const files[] = {
		"share/flamegraph/flamegraph.html", "share/flamegraph/flamegraph.css",
		"share/flamegraph/flamegraph.js"
	};
	static const char *const marks[] = { "@FLAME_CSS@", "@FLAME_DATA@", "@FLAME_JS@" };
	struct page_data d = { meta, diff, total, base_total };

	ff_page_fill(b, files, marks, page_data, &d);
}
