/*
 * ff-flame - fold perf call stacks and render them as a flame graph.
 *
 * Input is a perf.data (read through `perf script`, run with libpipeline),
 * the text `perf script` prints, or folded stacks ("frame;frame;frame
 * count", the format of the FlameGraph scripts, inferno and speedscope).
 * Samples are folded as they stream past into a hash table of distinct
 * stacks, so memory grows with distinct stacks, not with samples. Output
 * is folded stacks (--folded) or one self-contained HTML page built from
 * our template in share/flamegraph. With --diff, the page is sized by NEW
 * and coloured by how each frame's share of samples changed from BASE;
 * processes of the two match by relay role and program, or by comm.
 * With --parts, several recordings of one run (one per relay host) fold
 * into one page, each input's processes matched to its own relays.
 *
 * This file: the options, the output file, and the order of the work.
 */
#include "ff-flame.h"

#include <ctype.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>

const char usage[] =
	"usage: ff-flame [-o FILE] [-t TITLE] [--folded] [--script] [--meta JSON] [--events FILE]\n"
	"                [FILE]\n"
	"       ff-flame [-o FILE] [-t TITLE] [--folded] [--script] [--meta JSON] [--events FILE]\n"
	"                [--base-events FILE] --diff BASE NEW\n"
	"       ff-flame [-o FILE] [-t TITLE] [--folded] [--script] [--meta JSON] [--events FILE]\n"
	"                --parts [ROLES=]FILE...\n"
	"\n"
	"FILE is a perf.data (default ./perf.data), perf script output, or folded\n"
	"stacks; '-' reads text from standard input.\n"
	"  -o, --output FILE  write to FILE (atomically) instead of standard output\n"
	"  -t, --title TITLE  the page's title\n"
	"  --folded           print folded stacks instead of HTML (with --diff:\n"
	"                     'stack base_count new_count')\n"
	"  --script           the text input is perf script output\n"
	"  --meta JSON        a JSON object (or @FILE holding one) with title,\n"
	"                     workload, relay, protocol and relays:\n"
	"                     [{\"role\":\"r1\",\"pid\":1,\"pids\":[..],\"program\":\"nginx\"},..]\n"
	"  --events FILE      the run's events, as `flimflam record --json` prints\n"
	"                     them: the meta from its topology and capture events\n"
	"                     (--meta's members, when given too, win)\n"
	"  --diff BASE NEW    a differential graph of NEW against BASE\n"
	"  --base-events FILE BASE's run's events (--events is NEW's): each\n"
	"                     recording's processes go in its own run's relays\n"
	"  --changes          with --diff: instead of HTML, one JSON line (a\n"
	"                     'changes' event): each side's samples, too_few_samples,\n"
	"                     and the 5 functions whose share of the self samples\n"
	"                     grew (grew) and shrank (shrank) the most\n"
	"  --parts [ROLES=]FILE...\n"
	"                     several recordings of one run in one page (one per\n"
	"                     relay host): ROLES (r1 or r1,r2), relays of --meta or\n"
	"                     --events, are the only towers FILE's processes go in\n"
	"  -h, --help         show this help\n"
	"  --version          print the version and exit\n";

struct opts {
	const char *out, *title, *meta, *events, *base_events;
	int folded, diff, parts, changes;
	int nin;		/* input files named: 0 (./perf.data), 1, 2 with --diff, 1+ with --parts */
	char **in;		/* them: BASE NEW with --diff */
	char **roles;		/* --parts: each input's ROLES, or NULL */
};

/* Are the n bytes at s a list of roles, "r1" or "r1,r2"? */
static int
is_roles(const char *s, size_t n)
{
	size_t i, tok = 0;

	for (i = 0; i < n; i++)
		if (s[i] == ',' && tok)
			tok = 0;
		else if (isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '_')
			tok++;
		else
			return 0;
	return tok > 0;
}

/*
 * --parts [ROLES=]FILE...: ROLES is what comes before the first '=' when
 * it is a list of roles; otherwise the whole argument is FILE (./a=b for
 * a file named a=b).
 */
static void
parse_parts(struct opts *o)
{
	const char *eq;
	int k, stdin_seen = 0;

	if (!o->nin)
		ff_usage_error(usage, "--parts needs one FILE or more");
	o->roles = ff_realloc(NULL, o->nin * sizeof(*o->roles));
	for (k = 0; k < o->nin; k++) {
		o->roles[k] = NULL;
		eq = strchr(o->in[k], '=');
		if (eq && is_roles(o->in[k], eq - o->in[k])) {
			if (!eq[1])
				ff_usage_error(usage, "--parts: '%s' names no file", o->in[k]);
			o->roles[k] = xstrndup(o->in[k], eq - o->in[k]);
			o->in[k] = (char *)eq + 1;
		}
		if (!strcmp(o->in[k], "-") && stdin_seen++)
			ff_usage_error(usage, "--parts: only one input can be standard input");
	}
}

static void
parse_options(struct opts *o, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "folded", no_argument, NULL, 'F' },
		{ "script", no_argument, NULL, 'S' },
		{ "meta", required_argument, NULL, 'M' },
		{ "events", required_argument, NULL, 'E' },
		{ "base-events", required_argument, NULL, 'B' },
		{ "diff", no_argument, NULL, 'D' },
		{ "parts", no_argument, NULL, 'P' },
		{ "changes", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	/* Options may follow the files too: --diff A B --folded. */
	opterr = 0;
	while ((c = ff_getopt(argc, argv, ":ho:t:", longopts, usage)) != -1)
		switch (c) {
		case 'h': ff_usage(usage, 0);
		case 'o': o->out = optarg; break;
		case 't': o->title = optarg; break;
		case 'F': o->folded = 1; break;
		case 'S': force_script = 1; break;
		case 'M': o->meta = optarg; break;
		case 'E': o->events = optarg; break;
		case 'B': o->base_events = optarg; break;
		case 'D': o->diff = 1; break;
		case 'P': o->parts = 1; break;
		case 'C': o->changes = 1; break;
		}
	o->nin = argc - optind;
	o->in = argv + optind;
	if (o->diff && o->parts)
		ff_usage_error(usage, "--diff and --parts: give one of them");
	if (o->changes && (!o->diff || o->folded))
		ff_usage_error(usage, "--changes ranks the functions of --diff BASE NEW: give --diff, and not --folded");
	if (o->base_events && !o->diff)
		ff_usage_error(usage, "--base-events is the events of --diff's BASE: give --diff too");
	if (o->parts) {
		parse_parts(o);
		return;
	}
	if (o->diff && o->nin != 2)
		ff_usage_error(usage, "--diff needs two files, BASE and NEW");
	if (!o->diff && o->nin > 1)
		ff_usage_error(usage, "one input file at most (or --diff BASE NEW)");
	if (o->diff && !strcmp(o->in[0], "-") && !strcmp(o->in[1], "-"))
		ff_usage_error(usage, "--diff: only one input can be standard input");
}

/* The input the page is of: NEW with --diff, else the one input. */
static const char *
main_input(const struct opts *o)
{
	return o->diff ? o->in[1] : o->nin ? o->in[0] : "perf.data";
}

/*
 * Before the (long) read: a directory in the way fails now, and so does
 * -o perf.data perf.data, which would replace the recording with its page.
 */
static void
check_output(const struct opts *o)
{
	struct ff_out checked;
	struct stat so, si;
	const char *in;
	int k;

	if (!o->out)
		return;
	if (ff_out_check(&checked, o->out, 0, NULL) < 0)
		ff_die("%s", checked.err);
	for (k = 0; checked.exists && k < (o->nin ? o->nin : 1); k++) {
		in = o->nin ? o->in[k] : "perf.data";
		if (stat(checked.path, &so) == 0 && stat(in, &si) == 0 &&
		    so.st_dev == si.st_dev && so.st_ino == si.st_ino)
			ff_die("cannot write '%s': it is the input '%s'", o->out, in);
	}
}

/*
 * The meta of --events, then --meta's members over it; its relays, NEW's
 * when --base-events names BASE's (else either's), and BASE's.
 */
static json_t *
load_meta(const struct opts *o)
{
	json_t *meta = o->events ? meta_from_events(o->events) : json_object();
	json_t *given;

	if (o->meta) {
		given = meta_load(o->meta);
		json_object_update(meta, given);
		json_decref(given);
	}
	relays_from_meta(meta, o->base_events ? 0 : -1);
	if (o->base_events) {
		given = meta_from_events(o->base_events);
		relays_from_meta(given, 1);
		json_decref(given);
	}
	return meta;
}

/*
 * Read the input (BASE, then NEW, with --diff; each of --parts in turn)
 * and say what was not understood. Returns the samples of the page (of
 * NEW with --diff).
 */
static uint64_t
read_inputs(const struct opts *o, struct input in[])
{
	uint64_t total = 0;
	int k, n = o->parts ? o->nin : 1 + o->diff;

	if (o->diff) {
		in[1].which = 1;
		read_input(&in[1], o->in[0]);
		in[0].which = 0;
		read_input(&in[0], o->in[1]);
	} else if (o->parts) {
		for (k = 0; k < n; k++) {
			in[k].part = k;
			read_input(&in[k], o->in[k]);
		}
	} else {
		read_input(&in[0], main_input(o));
	}
	for (k = 0; k < n; k++)
		if (in[k].bad)
			ff_info("%s: %ld line%s not understood", in[k].name, in[k].bad,
				in[k].bad == 1 ? "" : "s");
	for (k = 0; k < n; k++)
		if (!in[k].samples)
			ff_warn("no samples in '%s'", in[k].name);
	for (k = 0; k < (o->diff ? 1 : n); k++)
		total += in[k].samples;
	if (o->diff && !o->folded && !o->changes && too_few_to_rank(in[0].samples, in[1].samples))
		ff_warn("too few samples to rank the changes: BASE '%s' has %llu, NEW '%s' %llu (%d or more on each side are needed)",
			in[1].name, (unsigned long long)in[1].samples, in[0].name,
			(unsigned long long)in[0].samples, RANK_MIN_SAMPLES);
	return total;
}

/* The page's header: title, date, and the files it is of. */
static void
page_meta(json_t *meta, const struct opts *o)
{
	const char *path = main_input(o);

	if (o->title)
		json_object_set_new(meta, "title", json_string(o->title));
	else if (!ff_json_str(meta, "title"))
		json_object_set_new(meta, "title", json_string(
			o->diff ? "Differential flame graph" : "Flame graph"));
	if (!ff_json_str(meta, "date"))
		json_object_set_new(meta, "date", json_string(
			ff_json_str(meta, "time") ? ff_json_str(meta, "time")
			: file_date(path)));
	if (o->parts) {
		struct ff_buf all = FF_BUF_INIT;
		int k;

		for (k = 0; k < o->nin; k++)
			ff_buf_printf(&all, "%s%s", k ? ", " : "", o->in[k]);
		json_object_set_new(meta, "source", ff_json_text(all.s));
		ff_buf_free(&all);
	} else {
		json_object_set_new(meta, "source", ff_json_text(path));
	}
	if (o->diff)
		json_object_set_new(meta, "base_source", ff_json_text(o->in[0]));
}

int
main(int argc, char *argv[])
{
	struct opts o = { 0 };
	struct input *in;
	struct ff_buf b = FF_BUF_INIT;
	uint64_t total;
	uint32_t *order;
	json_t *meta;

	ff_setprog(argv[0]);
	parse_options(&o, argc, argv);
	check_output(&o);
	root_frame = frame_intern("all", 3, 0, K_ROOT);
	module_intern("", 0);
	meta = load_meta(&o);
	if (o.parts)
		relays_parts(o.roles, o.in, o.nin);

	in = calloc(o.nin > 2 ? o.nin : 2, sizeof(*in));
	if (!in)
		ff_die("out of memory");
	total = read_inputs(&o, in);
	merge_towers();
	name_towers(o.diff);
	rank_frames();
	order = sorted_stacks();
	if (o.changes) {
		b.s = changes_json();
		b.len = strlen(b.s);
	} else if (o.folded) {
		folded_out(&b, order, o.diff);
	} else {
		page_meta(meta, &o);
		build_tree(order);
		if (o.diff)
			prune_empty();
		html_out(&b, meta, o.diff, total, in[1].samples);
	}
	free(order);
	free(in);
	json_decref(meta);
	if (o.out) {
		if (ff_write_file(o.out, b.s ? b.s : "", 0644) < 0)
			return 1;
	} else if (b.len) {
		fwrite(b.s, 1, b.len, stdout);
	}
	free(b.s);
	return ff_finish();
}
