/*
 * ff_load.c - what the builtin workload clients share: their window event
 * and their waits on the clock.
 */
#include "ff.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <time.h>

void
ff_emit_window(long warmup, long duration, double monotonic)
{
	json_t *ev = ff_event("window");

	json_object_set_new(ev, "warmup_s", json_integer(warmup));
	json_object_set_new(ev, "duration_s", json_integer(duration));
	json_object_set_new(ev, "time", json_string(ff_iso_time()));
	json_object_set_new(ev, "monotonic_s", json_real(ff_usec(monotonic)));
	ff_emit(ev);
}

int
ff_wait_until(double when, int fd)
{
	struct pollfd pfd[2] = {
		{ ff_signal_fd(), POLLIN, 0 },
		{ fd, POLLIN, 0 },
	};
	struct timespec ts;
	double left;

	for (;;) {
		if (ff_signalled())
			return -1;
		if (pfd[1].revents)
			return 1;
		left = when - ff_now();
		if (left <= 0)
			return 0;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		if (ppoll(pfd, 2, &ts, NULL) < 0 && errno != EINTR)
			ff_die("ppoll: %s", strerror(errno));
	}
}

double
ff_usec(double s)
{
	return round(s * 1e6) / 1e6;
}
