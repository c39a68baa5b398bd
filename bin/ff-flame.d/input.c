/*
 * ff-flame's readers: a perf.data through `perf script` (run with
 * libpipeline), perf script text, and folded stacks, each sample folded
 * into the tables as it streams past. Text lines are capped, and binary
 * data is refused at once.
 */
#include "ff-flame.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pipeline.h>

/* The fields ff-flame asks perf script for: just what folding needs. */
#define PERF_FIELDS "comm,pid,tid,ip,sym,dso"

/* perf script text */

static int
is_hex(const char *s, size_t n)
{
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return 0;
	return 1;
}

size_t
rtrim(const char *s, size_t n)
{
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' ||
		     s[n - 1] == '\t'))
		n--;
	return n;
}

/*
 * One frame: "ADDR SYM[+0xOFF] (DSO)", as perf prints a callchain entry or
 * the ip of a sample. The DSO is the last parenthesised group (matched from
 * the end, so "(/lib/x.so (deleted))" and C++ parameter lists both work).
 * Returns the frame id, or -1 for a line that is not a frame.
 */
static long
parse_frame(const char *s, size_t n)
{
	const char *sym, *mod = "", *p;
	size_t symlen, modlen = 0, alen;
	char buf[4096];
	uint32_t m;
	int depth = 0, kind, kernel = 0;

	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	n = rtrim(s, n);
	if (!n)
		return -1;
	if (s[n - 1] == ')') {
		for (p = s + n - 1; p >= s; p--) {
			if (*p == ')')
				depth++;
			else if (*p == '(' && --depth == 0)
				break;
		}
		if (p >= s) {
			mod = p + 1;
			modlen = s + n - 1 - mod;
			n = rtrim(s, p - s);
		}
	}
	for (alen = 0; alen < n && s[alen] != ' '; alen++)
		;
	sym = s;
	symlen = n;
	if (alen < n && is_hex(s, alen)) {
		/* x86-64 and arm64 kernels live at 0xffff8000_00000000 and up. */
		kernel = alen == 16 && !memcmp(s, "ffff", 4) && s[4] >= '8';
		sym = s + alen;
		symlen = n - alen;
		while (symlen && *sym == ' ')
			sym++, symlen--;
	} else if (alen == n && is_hex(s, n) && modlen) {
		symlen = 0;	/* an address alone: no symbol */
	}
	/* Drop perf's "+0x1a" offset. */
	for (p = sym + symlen; p > sym + 3; p--)
		if (p[-1] == '+' && p[0] == '0' && p[1] == 'x' &&
		    is_hex(p + 2, sym + symlen - p - 2)) {
			symlen = p - 1 - sym;
			break;
		}
	m = module_intern(mod, modlen);
	kind = module_kind[m];
	kernel |= kind == K_KERNEL;
	if (kernel)
		kind = K_KERNEL;
	if (!symlen || (symlen == 9 && !memcmp(sym, "[unknown]", 9))) {
		if (modlen && strcmp(modules[m], "[unknown]") && !kernel)
			snprintf(buf, sizeof(buf), "[%s]", basename_of(modules[m]));
		else
			snprintf(buf, sizeof(buf), "[unknown]");
	} else {
		if (symlen > sizeof(buf) - 8)
			symlen = sizeof(buf) - 8;
		memcpy(buf, sym, symlen);
		buf[symlen] = 0;
	}
	if (kernel)
		strcat(buf, "_[k]");
	return frame_intern(buf, strlen(buf), m, kind);
}

/*
 * The same callchain line (address, symbol, module) comes back in every
 * sample through that address: a direct-mapped cache of the lines seen
 * last spares parsing and interning them again. Its size is fixed.
 */
#define LINE_CACHE 16384
static struct {
	uint64_t hash;
	char *line;
	size_t len;
	long frame;
} line_cache[LINE_CACHE];

static long
frame_of_line(const char *s, size_t n)
{
	uint64_t h = hash_bytes(HASH_INIT, s, n);
	size_t i = h & (LINE_CACHE - 1);
	long f;

	if (line_cache[i].line && line_cache[i].hash == h &&
	    line_cache[i].len == n && !memcmp(line_cache[i].line, s, n))
		return line_cache[i].frame;
	f = parse_frame(s, n);
	free(line_cache[i].line);
	line_cache[i].line = xstrndup(s, n);
	line_cache[i].len = n;
	line_cache[i].hash = h;
	line_cache[i].frame = f;
	return f;
}


static void
sample_end(struct input *in)
{
	size_t i, j;
	uint32_t t;

	if (!in->in_sample)
		return;
	in->in_sample = 0;
	/*
	 * perf script prints every sample's ip: a "sample" without a frame is
	 * a line that only looked like a header (a JSON line with a number).
	 */
	if (!ncur) {
		in->bad++;
		return;
	}
	/* perf prints the leaf first: reverse, then put the tower in front. */
	for (i = 0, j = ncur; i < j / 2; i++) {
		t = cur[i];
		cur[i] = cur[j - 1 - i];
		cur[j - 1 - i] = t;
	}
	cur_push(0);
	memmove(cur + 1, cur, (ncur - 1) * sizeof(*cur));
	cur[0] = in->tower;
	stack_add(cur, ncur, 1, in->which);
	in->samples++;
	ncur = 0;
}

/*
 * A sample's first line: "COMM PID/TID ..." (or "COMM TID ..." in perf
 * script's default layout). The comm may hold spaces, so the pid is the
 * first all-digit token after the first token. Returns the rest of the
 * line, or NULL for a line that is not a header.
 */
static const char *
header_fields(const char *s, size_t n, size_t *commlen, long *pid, long *tid)
{
	const char *p = s, *end = s + n, *tok, *slash;
	size_t l1;
	int first = 1;

	while (p < end && *p == ' ')
		p++;
	s = p;
	for (;; first = 0) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end)
			return NULL;
		tok = p;
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		if (first)
			continue;
		slash = memchr(tok, '/', p - tok);
		l1 = slash ? (size_t)(slash - tok) : (size_t)(p - tok);
		if (!l1 || strspn(tok, "0123456789") < l1)
			continue;
		if (slash && (p - slash < 2 || strspn(slash + 1, "0123456789") <
			      (size_t)(p - slash - 1)))
			continue;
		*pid = strtol(tok, NULL, 10);
		*tid = slash ? strtol(slash + 1, NULL, 10) : *pid;
		*commlen = rtrim(s, tok - s);
		return p;
	}
}

/*
 * Begin a sample at its header. A sample without callchain has its ip on
 * this line, as "ADDR SYM (DSO)" after the last "event: " field if any
 * (the address in hex: words that end in ')' are no frame).
 */
static int
parse_header(struct input *in, const char *s, size_t n)
{
	const char *rest, *start, *q, *comm;
	size_t commlen, rn;
	long pid, tid, f;

	while (n && *s == ' ')
		s++, n--;
	comm = s;
	rest = header_fields(s, n, &commlen, &pid, &tid);
	if (!rest)
		return -1;
	in->tower = tower_for_pid(in, pid, tid, comm, commlen);
	in->in_sample = 1;
	ncur = 0;
	rn = rtrim(rest, s + n - rest);
	if (rn && rest[rn - 1] == ')') {
		start = rest;
		for (q = rest; q + 1 < rest + rn; q++)
			if (q[0] == ':' && (q[1] == ' ' || q[1] == '\t'))
				start = q + 1;
		while (start < rest + rn && (*start == ' ' || *start == '\t'))
			start++;
		for (q = start; q < rest + rn && *q != ' '; q++)
			;
		if (is_hex(start, q - start) && (f = parse_frame(start, rest + rn - start)) >= 0)
			cur_push(f);
	}
	return 0;
}

static void
script_line(struct input *in, const char *s, size_t n)
{
	long f;

	in->line++;
	n = rtrim(s, n);
	if (!n) {
		sample_end(in);
		return;
	}
	if (s[0] == '\t') {
		if (!in->in_sample) {
			in->bad++;
			return;
		}
		if ((f = frame_of_line(s, n)) >= 0)
			cur_push(f);
		return;
	}
	if (s[0] == '#')
		return;
	sample_end(in);
	if (parse_header(in, s, n) < 0)
		in->bad++;
}

/*
 * A folded stack: "frame;frame;...;frame COUNT". Returns 0, or -1 for a
 * line that is not one.
 */
static int
folded_line(struct input *in, const char *s, size_t n)
{
	const char *sp, *p, *end, *semi;
	unsigned long long count;
	char *e;
	int first = 1;

	in->line++;
	n = rtrim(s, n);
	if (!n || s[0] == '#')
		return 0;
	for (sp = s + n; sp > s && sp[-1] != ' ' && sp[-1] != '\t'; sp--)
		;
	if (sp == s || sp == s + n || strspn(sp, "0123456789") != (size_t)(s + n - sp))
		return -1;
	errno = 0;
	count = strtoull(sp, &e, 10);
	if (errno)
		return -1;
	end = rtrim(s, sp - s) + s;
	if (end == s)
		return -1;
	ncur = 0;
	for (p = s; p < end; p = semi + 1) {
		semi = memchr(p, ';', end - p);
		if (!semi)
			semi = end;
		if (semi > p) {
			if (first)
				cur_push(tower_for_name(in, p, semi - p));
			else
				cur_push(frame_intern(p, semi - p, 0,
						      kind_of_name(p, semi - p)));
			first = 0;
		}
		if (semi == end)
			break;
	}
	if (ncur && count) {
		stack_add(cur, ncur, count, in->which);
		in->samples += count;
	}
	ncur = 0;
	return 0;
}

/* Reading inputs */

int force_script;

/*
 * pipeline_readline reads only the few bytes it needs next, so a line
 * costs several read(2)s; a large peek first fills its cache in one.
 */
static const char *
next_line(pipeline *p)
{
	size_t want = 1 << 16;

	if (pipeline_peek_size(p) < 4096)
		pipeline_peek(p, &want);
	return pipeline_readline(p);
}

/* In perf's child, before exec: its stderr into our memfd. */
static void
stderr_to(void *data)
{
	dup2(*(int *)data, STDERR_FILENO);
}

/*
 * What perf said on stderr, from the memfd: the last line on failure (its
 * reason, without its "rerun with -v" advice, which is about perf's own
 * options), or all of it, passed on as it was, when perf succeeded.
 */
static void
perf_said(int fd, int failed, struct ff_buf *reason)
{
	char buf[8192], *last, *advice;
	off_t off = 0;
	ssize_t len;

	reason->len = 0;
	if (!failed) {
		while ((len = pread(fd, buf, sizeof(buf), off)) > 0) {
			fwrite(buf, 1, len, stderr);
			off += len;
		}
		return;
	}
	off = lseek(fd, 0, SEEK_END);
	off = off > (off_t)sizeof(buf) - 1 ? off - (off_t)sizeof(buf) + 1 : 0;
	len = pread(fd, buf, sizeof(buf) - 1, off);
	if (len <= 0)
		return;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	buf[len] = 0;
	last = strrchr(buf, '\n');
	last = last ? last + 1 : buf;
	advice = strstr(last, " (rerun with -v to learn more)");
	if (advice)
		*advice = 0;
	ff_why(reason, "%s", last);
}

/*
 * perf script is given 30 s, and 5 s more per MiB of perf.data (dwarf
 * call graphs unwind at a few MiB/s): one that takes longer hangs, and is
 * stopped. The alarm ends it; our read then ends.
 */
static volatile sig_atomic_t perf_pid, perf_overran;

static void
on_alarm(int sig)
{
	(void)sig;
	/* SIGPIPE first, which libpipeline does not report; then SIGKILL. */
	if (perf_pid > 0)
		kill(perf_pid, perf_overran ? SIGKILL : SIGPIPE);
	if (!perf_overran++)
		alarm(2);
}

/* The 30 s base; FLIMFLAM_TEST_SCRIPT_BASE=S (1 to 30) for the test of a hang. */
static unsigned
perf_script_base(void)
{
	const char *v = getenv("FLIMFLAM_TEST_SCRIPT_BASE");
	char *end;
	long n;

	if (!v || !*v)
		return 30;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 1 || n > 30)
		ff_die("FLIMFLAM_TEST_SCRIPT_BASE: '%s' is not a whole number of seconds from 1 to 30", v);
	return (unsigned)n;
}

static unsigned
perf_script_allowance(const char *path)
{
	struct stat st;

	return perf_script_base() + (stat(path, &st) == 0 ? 5 * (unsigned)(st.st_size >> 20) : 0);
}

static void
read_perf_data(struct input *in, const char *path)
{
	pipeline *p;
	pipecmd *cmd;
	const char *line;
	char *perf = ff_which("perf"), *stdbuf = ff_which("stdbuf");
	struct ff_buf reason = FF_BUF_INIT;
	unsigned allowance = perf_script_allowance(path);
	int status, errfd, *statuses = NULL, nstatuses = 0;
	const char *how = NULL;

	if (!perf)
		ff_die("'%s' is a perf.data file, and perf is not installed to read it",
		       path);
	free(perf);
	/*
	 * perf writes its stdout through stdio, 4 KiB at a time into a pipe:
	 * a write and a wake-up of ours for every 4 KiB. coreutils' stdbuf
	 * gives it a 1 MiB buffer, which makes the pipe nearly free (measured
	 * in bench/flame.sh); without stdbuf, perf runs as it is.
	 */
	if (stdbuf)
		cmd = pipecmd_new_args(stdbuf, "-o", "1M", "perf", "script",
				       "-i", path, "-F", PERF_FIELDS, (char *)NULL);
	else
		cmd = pipecmd_new_args("perf", "script", "-i", path, "-F",
				       PERF_FIELDS, (char *)NULL);
	free(stdbuf);
	errfd = memfd_create("perf-stderr", MFD_CLOEXEC);
	if (errfd < 0)
		ff_die("memfd_create: %s", strerror(errno));
	pipecmd_pre_exec(cmd, stderr_to, NULL, &errfd);
	p = pipeline_new();
	pipeline_command(p, cmd);
	pipeline_want_out(p, -1);
	pipeline_start(p);
	/*
	 * A larger pipe lets perf write on while we fold, with fewer switches
	 * between the two (Linux allows 1 MiB to anyone by default).
	 */
	fcntl(fileno(pipeline_get_outfile(p)), F_SETPIPE_SZ, 1 << 20);
	perf_pid = pipeline_get_pid(p, 0);
	signal(SIGALRM, on_alarm);
	alarm(allowance);
	while ((line = next_line(p)))
		script_line(in, line, strlen(line));
	sample_end(in);
	status = pipeline_wait_all(p, &statuses, &nstatuses);
	alarm(0);
	if (status && nstatuses == 1)
		how = ff_status_how(statuses[0]);
	free(statuses);
	pipeline_free(p);
	if (perf_overran)
		ff_die("perf script did not finish reading '%s' within the %u s it was given (%u s + 5 s per MiB) and was stopped",
		       path, allowance, perf_script_base());
	perf_said(errfd, status != 0, &reason);
	close(errfd);
	if (status && reason.len)
		ff_die("perf script cannot read '%s': %s", path, reason.s);
	if (status)
		ff_die("perf script %s on '%s'", how ? how : "failed", path);
	ff_buf_free(&reason);
}

/* A folded stack after the first: one that is not is a warning. */
static void
folded_next(struct input *in, const char *s, size_t n)
{
	if (folded_line(in, s, n) < 0 && in->bad++ < 5)
		ff_warn("%s:%ld: not a folded stack, skipped", in->name, in->line);
}

/* Is this line "frames COUNT"? */
static int
looks_folded(const char *s, size_t n)
{
	size_t k;

	n = rtrim(s, n);
	k = n;
	while (k && s[k - 1] >= '0' && s[k - 1] <= '9')
		k--;
	return k < n && k > 1 && (s[k - 1] == ' ' || s[k - 1] == '\t') &&
		s[0] != ' ' && s[0] != '\t';
}

/*
 * Text input: perf script output or folded stacks. The first two lines
 * that are not blank decide: perf script puts callchain entries on lines
 * that start with a tab; without callchains, its lines are headers with
 * a pid and do not end in a count.
 */
/* A text line may be long (a deep folded stack), never this long. */
#define MAX_LINE (16 << 20)

/*
 * getline(3) with a cap: a line of MAX_LINE bytes without its end is an
 * error at once (/dev/zero), not memory exhausted. A NUL byte ends the line
 * early and is in it, where the callers look for binary data.
 */
ssize_t
get_line(struct input *in, char **line, size_t *cap, FILE *fp)
{
	size_t len = 0, n, room;

	for (;;) {
		if (*cap - len < 4096) {
			if (*cap >= MAX_LINE)
				ff_die("%s:%ld: a line of more than %d MiB: not perf script output or folded stacks",
				       in->name, in->line + 1, MAX_LINE >> 20);
			*cap = *cap ? *cap * 2 : 65536;
			*line = ff_realloc(*line, *cap);
		}
		room = *cap - len;
		if (!fgets(*line + len, room, fp))
			return len ? (ssize_t)len : -1;
		n = strlen(*line + len);
		len += n;
		if (len && (*line)[len - 1] == '\n')
			return len;
		if (n < room - 1 && (!feof(fp) || n == 0) && !ferror(fp))
			return len + 1;	/* fgets went on past a NUL byte */
	}
}

#define NOT_STACKS "not a perf.data file, perf script output or folded stacks"

/* Is this line a JSON object or array (results, events), not stacks? */
static int
is_json(const char *s, size_t n)
{
	json_t *v;
	int yes;

	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	if (!n || (*s != '{' && *s != '['))
		return 0;
	v = json_loadb(s, rtrim(s, n), 0, NULL);
	yes = v != NULL;
	json_decref(v);
	return yes;
}

/*
 * Text input. Empty text is an error, as is text of which nothing is
 * stacks: a page of no samples is for a recording that has none.
 */
static void
read_text(struct input *in, FILE *fp)
{
	char *line = NULL, *held[2] = { NULL, NULL };
	size_t cap = 0, heldlen[2] = { 0, 0 }, cl;
	ssize_t n;
	long pid, tid;
	int nheld = 0, script = force_script, i;

	while (nheld < 2 && (n = get_line(in, &line, &cap, fp)) >= 0) {
		if (memchr(line, 0, n))
			ff_die("'%s': " NOT_STACKS " (binary data)",
			       in->name);
		if (!rtrim(line, n) || line[0] == '#') {
			in->line++;
			continue;
		}
		held[nheld] = xstrndup(line, n);
		heldlen[nheld++] = n;
	}
	if (ferror(fp))
		ff_die("cannot read '%s': %s", in->name, strerror(errno));
	if (!nheld)
		ff_die("'%s' is empty: " NOT_STACKS, in->name);
	if (is_json(held[0], heldlen[0]))
		ff_die("'%s': JSON, " NOT_STACKS, in->name);
	if (!script && nheld) {
		if (held[0][0] == '\t' || (nheld == 2 && held[1][0] == '\t'))
			script = 1;
		else if (looks_folded(held[0], heldlen[0]))
			script = 0;
		else if (header_fields(held[0], rtrim(held[0], heldlen[0]), &cl,
				       &pid, &tid))
			script = 1;
		else
			ff_die("'%s': " NOT_STACKS, in->name);
	}
	for (i = 0; i < nheld; i++) {
		if (script)
			script_line(in, held[i], heldlen[i]);
		else if (i > 0)
			folded_next(in, held[i], heldlen[i]);
		else if (folded_line(in, held[i], heldlen[i]) < 0)
			ff_die("'%s': " NOT_STACKS, in->name);
		free(held[i]);
	}
	while ((n = get_line(in, &line, &cap, fp)) >= 0) {
		if (memchr(line, 0, n))
			ff_die("%s:%ld: binary data", in->name, in->line + 1);
		if (script)
			script_line(in, line, n);
		else
			folded_next(in, line, n);
	}
	if (ferror(fp))
		ff_die("cannot read '%s': %s", in->name, strerror(errno));
	if (script)
		sample_end(in);
	free(line);
	if (in->bad && in->samples == 0)
		ff_die("'%s': " NOT_STACKS, in->name);
}

void
read_input(struct input *in, const char *path)
{
	char magic[8];
	FILE *fp;
	size_t n;

	in->name = path;
	if (!strcmp(path, "-")) {
		in->name = "standard input";
		read_text(in, stdin);
		return;
	}
	fp = fopen(path, "r");
	if (!fp)
		ff_die("cannot open '%s': %s", path, strerror(errno));
	n = fread(magic, 1, sizeof(magic), fp);
	if (ferror(fp))
		ff_die("cannot read '%s': %s", path, strerror(errno));
	if (n == sizeof(magic) && !memcmp(magic, "PERFILE2", 8)) {
		fclose(fp);
		read_perf_data(in, path);
		return;
	}
	rewind(fp);
	read_text(in, fp);
	fclose(fp);
}
