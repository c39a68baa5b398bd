/*
 * hosts_check.c - check --hosts: each host of --hosts asked over ssh for
 * what its role needs (hosts.c runs the commands there).
 */
#include "ff-run.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

/* One finding of check --hosts; a problem counts. */
static int
say_check(const char *role, const char *dest, int ok, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("%s on %s: %s%s\n", role, dest, ok ? "" : "PROBLEM: ", msg);
	return !ok;
}

/* The wall clock, to compare with a host's. */
static double
wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Its clock against ours, said: 1 when it is off (or cannot be read), else 0. */
static int
check_clock(const char *role, const char *dest)
{
	double t0, t1, there;
	int status, problems = 0;
	char *out;

	t0 = wall_now();
	out = hosts_remote_run(dest, "date +%s.%N", &status);
	t1 = wall_now();
	there = out ? strtod(out, NULL) : 0;
	if (!out || status != 0 || there <= 0)
		problems += say_check(role, dest, 0, "cannot read its clock");
	else if (fabs(there - (t0 + t1) / 2) > 0.5 + (t1 - t0) / 2)
		problems += say_check(role, dest, 0, "its clock is %+.3f s from this one's (synchronize the clocks: NTP or PTP)",
				      there - (t0 + t1) / 2);
	else
		say_check(role, dest, 1, "clock within %.3f s of this one's", fabs(there - (t0 + t1) / 2) + (t1 - t0) / 2);
	free(out);
	return problems;
}

/*
 * check --hosts: on each named host, through ssh, the same flimflam
 * version as here, the programs its role needs (the workload's server or
 * client, the relay), perf's permission to attach where a relay runs (what
 * ff-capture --check says), and its clock against ours. 0 when all is
 * well, 1 otherwise.
 */
int
hosts_check(const char *workload, const char *relay)
{
	const char *rprog = ff_relay_find(relay)->program;
	char *here = ff_program("flimflam"), *capture = ff_program("ff-capture");
	char *flimflam = NULL, *line, *out;
	int i, status, problems = 0;

	for (i = 0; i < hosts_count(); i++) {
		const char *role = hosts_role_at(i), *dest = hosts_dest(role);
		const char *need = NULL;

		if (!dest)
			continue;
		free(flimflam);
		flimflam = hosts_remote_program(here ? here : "flimflam", "flimflam");
		line = ff_asprintf("'%s' --version", flimflam);
		out = hosts_remote_run(dest, line, &status);
		free(line);
		if (!out || status != 0) {
			problems += say_check(role, dest, 0, "cannot run '%s' over ssh (%s): %s", flimflam,
					      status == -1 ? "no answer within 5 s" : ff_status_how(status),
					      out && *out ? hosts_first_line(out) : "it said nothing");
			free(out);
			continue;
		}
		if (strcmp(hosts_first_line(out), "flimflam " FF_VERSION))
			problems += say_check(role, dest, 0, "'%s' is %s, and this one is flimflam %s", flimflam,
					      out, FF_VERSION);
		else
			say_check(role, dest, 1, "%s", out);
		free(out);
		need = !strcmp(role, "client") ? ff_workload_client_program(workload) :
			!strcmp(role, "server") ? ff_workload_server_program(workload) : rprog;
		if (need) {
			line = ff_asprintf("command -v '%s'", need);
			out = hosts_remote_run(dest, line, &status);
			free(line);
			if (out && status == 0)
				say_check(role, dest, 1, "%s is %s", need, hosts_first_line(out));
			else
				problems += say_check(role, dest, 0, "%s is not on PATH there (the %s needs it)", need,
						      role[0] == 'r' ? "relay" : role);
			free(out);
		}
		if (role[0] == 'r' && rprog) {
			char *cap = hosts_remote_program(capture ? capture : "ff-capture", "ff-capture");
			json_t *ev;

			line = ff_asprintf("'%s' --check --json stat", cap);
			out = hosts_remote_run(dest, line, &status);
			ev = out ? json_loads(hosts_first_line(out), 0, NULL) : NULL;
			if (json_is_true(json_object_get(ev, "ok")))
				say_check(role, dest, 1, "perf can attach to the relay");
			else
				problems += say_check(role, dest, 0, "perf cannot attach to the relay there: %s",
						      ff_json_str_or(ev, "message", out && *out ? out :
								     "ff-capture --check gave no answer"));
			json_decref(ev);
			free(line);
			free(out);
			free(cap);
		}
		problems += check_clock(role, dest);
	}
	free(flimflam);
	free(here);
	free(capture);
	printf("%s\n", problems ? "Problems found: see the lines above" : "OK");
	return problems ? 1 : 0;
}
