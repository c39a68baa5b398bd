/*
 * ff-bisect's builds: the user's build command, split into words here (no
 * shell), {prefix} replaced in each word, run in the checkout with the
 * commit checked out; each commit installed once into a prefix of its own
 * under the cache (CACHE/<hash of the command>/<commit>), its success or
 * failure remembered beside it, so no commit is built twice.
 */
#define _XOPEN_SOURCE 700
#include "ff-bisect.h"

#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A shell's words, without a shell: blanks separate; '...' is literal;
 * "..." keeps all but \", \\, \$ and \` (the backslash goes); a backslash
 * outside quotes takes the next character as it is. Nothing is expanded.
 * 0, or -1 with why (an open quote, no words).
 */
int
split_words(const char *s, struct ff_argv *a, struct ff_buf *why)
{
	struct ff_buf w = FF_BUF_INIT;
	int in_word = 0;

	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n') {
			if (in_word)
				ff_argv_add(a, ff_buf_take(&w));
			in_word = 0;
			continue;
		}
		in_word = 1;
		if (*s == '\'') {
			const char *e = strchr(s + 1, '\'');

			if (!e)
				goto open;
			ff_buf_add(&w, s + 1, e - s - 1);
			s = e;
		} else if (*s == '"') {
			for (s++; *s && *s != '"'; s++) {
				if (*s == '\\' && s[1] && strchr("\"\\$`", s[1]))
					s++;
				ff_buf_add(&w, s, 1);
			}
			if (!*s)
				goto open;
		} else if (*s == '\\' && s[1]) {
			ff_buf_add(&w, ++s, 1);
		} else {
			ff_buf_add(&w, s, 1);
		}
	}
	if (in_word)
		ff_argv_add(a, ff_buf_take(&w));
	ff_buf_free(&w);
	if (!a->n) {
		ff_why(why, "no command");
		return -1;
	}
	return 0;
open:
	ff_buf_free(&w);
	ff_why(why, "a quote is not closed");
	return -1;
}

/* The cache of this build command: DIR (--cache), else XDG's, then its hash. */
char *
cache_root(const char *given, const char *build_cmd)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	uint64_t h = 14695981039346656037ULL;
	char *base, *root, *abs = NULL;
	const char *c;

	for (c = build_cmd; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	if (given)
		base = ff_strdup(given);
	else if (x && x[0] == '/')
		base = ff_asprintf("%s/flimflam/bisect", x);
	else if (home && home[0] == '/')
		base = ff_asprintf("%s/.cache/flimflam/bisect", home);
	else
		ff_fail(2, "--cache: no XDG_CACHE_HOME or HOME to keep the builds under: give --cache DIR");
	root = ff_asprintf("%s/%016llx", base, (unsigned long long)h);
	if (ff_mkdirs(root, 0755) < 0)
		ff_fail(1, "--cache: cannot make '%s': %s", root, strerror(errno));
	if (root[0] != '/') {
		char *cwd = getcwd(NULL, 0);

		abs = ff_asprintf("%s/%s", cwd, root);
		free(cwd);
		free(root);
		root = abs;
	}
	free(base);
	return root;
}

char *
prefix_of(const struct state *s, const char *commit)
{
	return ff_asprintf("%s/%s", s->o.cache, commit);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void
rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *
read_small(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[1024];
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	return ff_strdup(buf);
}

static void
write_small(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0)
		ff_die("cannot write '%s': %s", path, strerror(errno));
}

/* The build command's words for this prefix: {prefix} replaced in each. */
static void
command_for(const char *cmd, const char *prefix, struct ff_argv *a)
{
	struct ff_argv w = FF_ARGV_INIT;
	struct ff_buf why = FF_BUF_INIT;
	size_t i;

	if (split_words(cmd, &w, &why) < 0)
		ff_fail(2, "--build-cmd: %s", why.s);
	for (i = 0; i < w.n; i++) {
		struct ff_buf b = FF_BUF_INIT;
		const char *p = w.v[i], *q;

		while ((q = strstr(p, "{prefix}"))) {
			ff_buf_add(&b, p, q - p);
			ff_buf_addstr(&b, prefix);
			p = q + strlen("{prefix}");
		}
		ff_buf_addstr(&b, p);
		ff_argv_add(a, ff_buf_take(&b));
	}
	ff_argv_free(&w);
}

char *
ensure_build(struct state *s, const char *commit, char **why)
{
	char *prefix = prefix_of(s, commit), *ok = ff_asprintf("%s.built", prefix),
	     *bad = ff_asprintf("%s.failed", prefix), *log = ff_asprintf("%s.log", prefix), *envp[3];
	struct ff_argv a = FF_ARGV_INIT;
	int status;

	*why = NULL;
	if (access(ok, F_OK) == 0)
		goto done;
	if ((*why = read_small(bad)))
		goto failed;
	checkout(s->repo, commit);
	rm_tree(prefix);
	unlink(log);
	if (ff_mkdirs(prefix, 0755) < 0)
		ff_die("cannot make '%s': %s", prefix, strerror(errno));
	command_for(s->o.build_cmd, prefix, &a);
	envp[0] = ff_asprintf("FLIMFLAM_PREFIX=%s", prefix);
	envp[1] = ff_asprintf("FLIMFLAM_COMMIT=%s", commit);
	envp[2] = NULL;
	ff_say("%s: building %.12s into %s (log %s)\n", ff_prog(), commit, prefix, log);
	status = run_child("build", a.v, s->repo, log, envp);
	ff_argv_free(&a);
	free(envp[0]);
	free(envp[1]);
	if (ff_signalled()) {
		rm_tree(prefix);	/* half a build is not a build */
		stop_if_signalled(s);
	}
	if (status != 0) {
		*why = ff_asprintf("the build command %s (log %s)", ff_status_how(status), log);
		write_small(bad, *why);
		goto failed;
	}
	write_small(ok, commit);
done:
	free(ok), free(bad), free(log);
	return prefix;
failed:
	rm_tree(prefix);
	free(ok), free(bad), free(log), free(prefix);
	return NULL;
}
