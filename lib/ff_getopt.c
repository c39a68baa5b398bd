/*
 * ff_getopt.c - getopt_long for every program, with one way of saying
 * what is wrong with an option; --version and --pipeline-stage.
 */
#include "ff_base.h"

#include <getopt.h>
#include <string.h>
#include <unistd.h>

/*
 * The long option `arg` ("--name" or "--name=value") names: an exact match,
 * or the one option it abbreviates. NULL when none; *ambiguous set when it
 * abbreviates several.
 */
static const struct option *
long_named(const struct option *longopts, const char *arg, int *ambiguous)
{
	const char *name = arg + 2;
	size_t len = strcspn(name, "=");
	const struct option *o, *found = NULL;

	*ambiguous = 0;
	for (o = longopts; o && o->name; o++) {
		if (strncmp(o->name, name, len))
			continue;
		if (strlen(o->name) == len)
			return o;
		if (found && found->val != o->val)
			*ambiguous = 1;
		found = o;
	}
	return *ambiguous ? NULL : found;
}

/* The option `val` by its long name ("--jobs"), else its letter ("-w"); static. */
static const char *
opt_name(const struct option *longopts, int val)
{
	static char buf[128];
	const struct option *o;

	for (o = longopts; o && o->name; o++)
		if (o->val == val) {
			snprintf(buf, sizeof(buf), "--%s", o->name);
			return buf;
		}
	if (val > ' ' && val < 127)
		snprintf(buf, sizeof(buf), "-%c", val);
	else
		snprintf(buf, sizeof(buf), "-\\x%02x", val & 0xff);
	return buf;
}

void
ff_bad_option(const char *usage, const struct option *longopts, int c, char *const argv[])
{
	const char *arg = argv[optind - 1];
	const struct option *o = NULL;
	int ambiguous = 0, len;

	if (strncmp(arg, "--", 2) == 0 && arg[2]) {
		o = long_named(longopts, arg, &ambiguous);
		len = (int)strcspn(arg, "=");
		if (ambiguous)
			ff_usage_error(usage, "option '%.*s' is ambiguous (it begins more than one option's name)",
				       len, arg);
		if (c == ':' && o)
			ff_usage_error(usage, "option '--%s' needs a value", o->name);
		if (o && o->val == optopt && o->has_arg == no_argument && arg[len] == '=')
			ff_usage_error(usage, "option '--%s' takes no value (given '%s')", o->name,
				       arg + len + 1);
		if (!o && !optopt)
			ff_usage_error(usage, "unknown option '%.*s'", len, arg);
	}
	/* A short option, alone or in a cluster (-hx): getopt names it in optopt. */
	if (c == ':')
		ff_usage_error(usage, "option '%s' needs a value", opt_name(NULL, optopt));
	ff_usage_error(usage, "unknown option '%s'", opt_name(NULL, optopt));
}

int
ff_getopt(int argc, char *const argv[], const char *optstring,
	  const struct option *longopts, const char *usage)
{
	static struct {
		int val;
		const char *arg;
	} seen[64];
	static int nseen, last_optind = -1;
	static char *const *last_argv;
	const struct option *o;
	const char *name, *sp;
	char prog[128];
	int c, i, valued;

	if (optind != last_optind || argv != last_argv)
		nseen = 0;	/* the caller (re)started a parse, or began another */
	last_argv = argv;
	opterr = 0;
	c = getopt_long(argc, argv, optstring, longopts, NULL);
	last_optind = optind;
	if (c == ':' || c == '?')
		ff_bad_option(usage, longopts, c, argv);
	if (c == FF_OPT_VERSION) {
		name = ff_prog();
		sp = strchr(name, ' ');
		snprintf(prog, sizeof(prog), "%.*s", sp ? (int)(sp - name) : (int)strlen(name), name);
		printf("%s %s\n", prog, FF_VERSION);
		exit(ff_finish());
	}
	if (c == FF_OPT_PIPELINE_STAGE) {
		ff_set_pipeline_stage();
		ff_set_fail_hook(ff_error_event);	/* a stage that fails says why in the stream */
		return ff_getopt(argc, argv, optstring, longopts, usage);
	}
	if (c == -1)
		return c;
	valued = c > 0 && c < 256 && (sp = strchr(optstring, c)) && sp[1] == ':';
	for (o = longopts; o && o->name; o++)
		if (o->val == c)
			valued = o->has_arg == required_argument;
	if (!valued || c == FF_OPT_BUILD)
		return c;
	for (i = 0; i < nseen && seen[i].val != c; i++)
		;
	if (i < nseen)
		ff_usage_error(usage, "option '%s' is given twice ('%s', then '%s'): give it once",
			       opt_name(longopts, c), seen[i].arg, optarg);
	if (nseen < (int)FF_ARRAY_SIZE(seen)) {
		seen[nseen].val = c;
		seen[nseen++].arg = optarg;
	}
	return c;
}
