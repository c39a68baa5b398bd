/*
 * ff_relaycmd.c - relay cmd's command line (--relay-cmd): the words of a
 * command a user gives for each relay, with the relay's addresses filled
 * into {placeholders}. The words are split here, as a shell would split
 * plain words and quotes, and never given to a shell: an address filled in
 * is part of one word, whatever it holds.
 */
#include "ff.h"
#include "ff_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The placeholders, in the order of ff_relay_cmd_fill's values. */
static const char *const names[] = {
	"listen", "listen_host", "listen_port", "upstream", "upstream_host", "upstream_port",
	"dir", "role", NULL
};

/* The next word of `*p` into `w` (emptied first): 1, 0 at the end, -1 with why. */
static int
next_word(const char **p, struct ff_buf *w, struct ff_buf *why)
{
	const char *s = *p + strspn(*p, " \t\n");
	char q = 0;

	w->len = 0;
	ff_buf_addstr(w, "");
	if (!*s)
		return 0;
	for (; *s && (q || !strchr(" \t\n", *s)); s++) {
		if (q && *s == q)
			q = 0;
		else if (!q && (*s == '\'' || *s == '"'))
			q = *s;
		else if (*s == '\\' && q != '\'' && s[1])
			ff_buf_add(w, ++s, 1);
		else
			ff_buf_add(w, s, 1);
	}
	if (q) {
		ff_why(why, "--relay-cmd: the %s quote is not closed", q == '"' ? "double" : "single");
		return -1;
	}
	*p = s;
	return 1;
}

/* Every {name} of `word` is a placeholder: 0, or -1 with why; `seen` gets a bit per name. */
static int
check_placeholders(const char *word, int *seen, struct ff_buf *why)
{
	const char *o, *c;
	int i;

	for (o = strchr(word, '{'); o; o = strchr(c, '{')) {
		if (!(c = strchr(o, '}'))) {
			ff_why(why, "--relay-cmd: '%s' has a '{' without its '}'", word);
			return -1;
		}
		for (i = 0; names[i]; i++)
			if (strlen(names[i]) == (size_t)(c - o - 1) && !strncmp(names[i], o + 1, c - o - 1))
				break;
		if (!names[i]) {
			ff_why(why, "--relay-cmd: unknown placeholder '%.*s' (these are filled in: {listen}, {listen_host}, {listen_port}, {upstream}, {upstream_host}, {upstream_port}, {dir}, {role})",
			       (int)(c - o + 1), o);
			return -1;
		}
		*seen |= 1 << i;
	}
	return 0;
}

int
ff_relay_cmd_split(const char *cmd, struct ff_argv *words, struct ff_buf *why)
{
	struct ff_buf w = FF_BUF_INIT;
	const char *p = cmd;
	int r, seen = 0;

	while ((r = next_word(&p, &w, why)) > 0) {
		if (check_placeholders(w.s, &seen, why) < 0) {
			r = -1;
			break;
		}
		ff_argv_add(words, w.s);
	}
	ff_buf_free(&w);
	if (r < 0)
		return -1;
	if (!words->n) {
		ff_why(why, "--relay-cmd: expected a command, not '%s'", cmd);
		return -1;
	}
	if (strchr(words->v[0], '{')) {
		ff_why(why, "--relay-cmd: the program '%s' is a placeholder: name the program first", words->v[0]);
		return -1;
	}
	/* Where it listens and where it sends the traffic: {listen} or {listen_port}, the same for upstream. */
	if (!(seen & (1 << 0 | 1 << 2)) || !(seen & (1 << 3 | 1 << 5))) {
		ff_why(why, "--relay-cmd: '%s' has no {%s}: a relay listens on the address flimflam gives it and sends the traffic to the next one's ({listen_port} and {upstream_port}, or {listen} and {upstream} as HOST:PORT)",
		       cmd, !(seen & (1 << 0 | 1 << 2)) ? "listen" : "upstream");
		return -1;
	}
	return 0;
}

char *
ff_relay_cmd_fill(const char *word, const char *const values[])
{
	struct ff_buf b = FF_BUF_INIT;
	const char *p = word, *o, *c;
	int i;

	ff_buf_addstr(&b, "");
	while ((o = strchr(p, '{')) && (c = strchr(o, '}'))) {
		ff_buf_add(&b, p, o - p);
		for (i = 0; names[i]; i++)
			if (strlen(names[i]) == (size_t)(c - o - 1) && !strncmp(names[i], o + 1, c - o - 1))
				break;
		ff_buf_addstr(&b, names[i] ? values[i] : "");
		p = c + 1;
	}
	ff_buf_addstr(&b, p);
	return ff_buf_take(&b);
}

int
ff_relay_cmd_program(const char *cmd, char **path, struct ff_buf *why)
{
	struct ff_argv words = FF_ARGV_INIT;

	*path = NULL;
	if (ff_relay_cmd_split(cmd, &words, why) < 0) {
		ff_argv_free(&words);
		return 2;
	}
	*path = ff_which(words.v[0]);
	if (*path && **path != '/') {
		/* ./proxy: absolute, for the relay runs in a directory of its own. */
		char full[PATH_MAX];

		ff_absolute(*path, full, sizeof(full));
		free(*path);
		*path = ff_strdup(full);
	}
	if (!*path)
		ff_why(why, "relay 'cmd': --relay-cmd runs '%s', which is not on PATH", words.v[0]);
	ff_argv_free(&words);
	return *path ? 0 : 1;
}
