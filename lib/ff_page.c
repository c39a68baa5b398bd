/*
 * ff_page.c - self-contained HTML pages (ff-bench's report, ff-history's):
 * a template from share/ with its style, its data as JSON and its script
 * put in, written to a file or standard output, and the line that says
 * where it is.
 */
#include "ff.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

/*
 * JSON text inside <script>: a '<' only occurs within strings, where
 * "\u003c" means the same, so no value can end the element.
 */
void
ff_page_script_json(struct ff_buf *b, const char *json, size_t n)
{
	const char *p = json, *lt;

	while ((lt = memchr(p, '<', json + n - p))) {
		ff_buf_add(b, p, lt - p);
		ff_buf_addstr(b, "\\u003c");
		p = lt + 1;
	}
	ff_buf_add(b, p, json + n - p);
}

void
ff_page_fill(struct ff_buf *b, const char *const files[3], const char *const marks[3],
	     void (*data)(struct ff_buf *, void *), void *arg)
{
	char *html = ff_data_text(files[0]), *css = ff_data_text(files[1]),
		*js = ff_data_text(files[2]), *p = html, *q;
	size_t i;

	for (i = 0; i < 3; i++) {
		q = strstr(p, marks[i]);
		if (!q)
			ff_die("%s: no %s in the template", files[0], marks[i]);
		ff_buf_add(b, p, q - p);
		if (i == 0)
			ff_buf_addstr(b, css);
		else if (i == 1)
			data(b, arg);
		else
			ff_buf_addstr(b, js);
		p = q + strlen(marks[i]);
	}
	ff_buf_addstr(b, p);
	free(html);
	free(css);
	free(js);
}

static void
json_data(struct ff_buf *b, void *arg)
{
	char *text = json_dumps(arg, JSON_COMPACT | JSON_PRESERVE_ORDER);

	if (!text)
		ff_die("out of memory");
	ff_page_script_json(b, text, strlen(text));
	free(text);
}

void
ff_page_html(struct ff_buf *b, const char *const files[3], const char *const marks[3],
	     const json_t *data)
{
	ff_page_fill(b, files, marks, json_data, (void *)data);
}

int
ff_page_opt(const char *usage, int c, const char *arg, const char **out)
{
	switch (c) {
	case 'h':
		ff_usage(usage, 0);
	case 'o':
		if (!*arg)
			ff_usage_error(usage, "-o: expected a file name");
		*out = arg;
		return 1;
	}
	return 0;
}

void
ff_page_check(const char *out)
{
	struct ff_out o;

	if (strcmp(out, "-") && ff_out_check(&o, out, 0, NULL) < 0)
		ff_die("%s", o.err);
	if (!strcmp(out, "-"))
		ff_check_stdout();
}

int
ff_page_write(const char *out, const struct ff_buf *b)
{
	struct ff_out o;

	if (!strcmp(out, "-")) {
		if (fwrite(b->s, 1, b->len, stdout) != b->len || fflush(stdout) == EOF)
			ff_write_failed();
		return 0;
	}
	if (ff_out_open(&o, out, 0, NULL, 0644) < 0 || ff_out_write(&o, b->s, b->len) < 0 ||
	    ff_out_commit(&o) < 0) {
		ff_out_abort(&o);
		ff_warn("%s", o.err);
		return -1;
	}
	return 0;
}

void
ff_page_say(const char *path)
{
	char full[PATH_MAX], *url;

	if (path[0] == '/' || !getcwd(full, sizeof(full)) || strlen(full) + strlen(path) + 2 > sizeof(full))
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full + strlen(full), sizeof(full) - strlen(full), "/%s", path);
	url = ff_file_url(full);
	ff_print("Report: %s\n\nOpen it in a browser: %s\n", path, url);
	free(url);
}
