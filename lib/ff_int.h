/*
 * ff_int.h - what the library's files share among themselves and no
 * program uses (t/fixtures' unit probes may). Sections follow the
 * implementing files, as in ff_base.h (the upper floor's own are at the
 * end of ff.h).
 */
#ifndef FF_INT_H
#define FF_INT_H

#include "ff_base.h"

/* ff_err.c */

/* `len` bytes of src made printable (see ff.h, ff_warn) into dst (room for 4 * len + 1); the length. */
size_t ff_printable_n(char *dst, const char *src, size_t len);

/* ff_json.c */

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 if it is not one. */
size_t ff_utf8_len(const unsigned char *s);

/* ff_proc.c */

/*
 * The last `lines` lines of a file, to stderr, indented; of a log that
 * ends with a tool's help text ("Usage: ..." after its error), the lines
 * before the help.
 */
void ff_log_tail(const char *path, int lines);

/* ff_dir.c */

/* `path` made absolute (a child runs in another directory), into buf; dies if too long. */
void ff_absolute(const char *path, char *buf, size_t n);

/* ff_probe.c */

/*
 * One program run for its output: set argv, run it with others through
 * ff_probes_run: all at once, each with stdout and stderr into its `out`
 * (at most FF_PROBE_MAX_BYTES), all within FF_PROBE_TIMEOUT_S; a program
 * still running then is stopped, and its status stays -1. A signal ends
 * the wait (the caller is being stopped).
 */
#define FF_PROBE_TIMEOUT_S 5.0
#define FF_PROBE_MAX_BYTES (1 << 20)
struct ff_probe {
	char *const *argv;
	const char *in;		/* its stdin from this file; NULL: /dev/null */
	char *out;		/* stdout and stderr, or NULL: did not start */
	int status;		/* wait status, -1: unknown */
	struct ff_child c;
	int fd;			/* the read end of its pipe, -1 once at EOF */
	size_t len, cap;
};
void ff_probes_run(struct ff_probe *p, size_t n);
/* The first non-empty line of `s`, trimmed (malloc'd), or NULL. */
char *ff_first_line(const char *s);
/* What a version probe printed: its first line, if the program succeeded. */
char *ff_probe_version(const struct ff_probe *p);
/* "did not finish within 5 s", "exited with status 1: LINE" (static). */
const char *ff_probe_failure(const struct ff_probe *p);

/* ff_elf.c */

/* The DT_RUNPATH (else DT_RPATH) of an ELF program, $ORIGIN expanded, or NULL (malloc'd). */
char *ff_elf_runpath(const char *path);

#endif
