/*
 * ff-check - can this machine run flimflam? Prints the environment, each
 * requirement OK or missing (with the command that installs it on this
 * distribution), what perf can do here, and whether the router and its
 * Proton library keep frame pointers. Requirements are what flimflam needs;
 * optional ones (a hardware PMU) only some commands need (c2c, mem,
 * --call-graph lbr). Ends with OK and exit 0 when every requirement is met,
 * listing the optional ones missing with what they would enable; otherwise
 * lists every problem and exits 1. `flimflam check` runs this.
 */
#include "ff.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define OPTIONS \
	"  --json     JSON lines: start, environment, a requirement per item, end\n" \
	"  --version  print the version and exit\n"
static const char file_usage[] =
	"usage: ff-check [-h] [--json]\n"
	"\n"
	OPTIONS;
/* As flimflam check, whose --hosts form (flimflam's own) is part of the command. */
static const char check_usage[] =
	"usage: flimflam check [-h] [--json]\n"
	"usage: flimflam check --hosts ROLE=[USER@]HOST[/ADDRESS],... [-w WORKLOAD] [-r RELAY]\n"
	"                      [--hops N]\n"
	"\n"
	"Check this machine, or with --hosts each of those hosts over ssh (the programs\n"
	"of its role in a run of -w, -r and --hops; flimflam check --hosts x -h says more)\n"
	"\n"
	OPTIONS;

enum pm { PM_NONE, PM_APT, PM_DNF };

struct req {
	const char *name;
	int ok;
	const char *enables;	/* optional: what it enables, which the rest works without */
	char detail[1024];
	char fix[1024];
};

static struct req reqs[24];
static int nreqs;
static json_t *env;
static enum pm pm;
static int ubuntu;
static char missing_pkgs[512];

/* A requirement not met; an optional one missing is none. */
static int
problem(const struct req *r)
{
	return !r->ok && !r->enables;
}

static struct req *
req_add(const char *name, int ok)
{
	struct req *r = &reqs[nreqs++];

	r->name = name;
	r->ok = ok;
	return r;
}

static int
word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = list; p && (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

/* apt-get or dnf, from os-release's ID and ID_LIKE, else what is on PATH. */
static enum pm
package_manager(void)
{
	const char *id = ff_json_str(env, "os_id"), *like = ff_json_str(env, "os_id_like");
	char ids[256];
	char *p;

	snprintf(ids, sizeof(ids), "%s %s", id ? id : "", like ? like : "");
	ubuntu = id && !strcmp(id, "ubuntu");
	if (word_in(ids, "debian") || word_in(ids, "ubuntu"))
		return PM_APT;
	if (word_in(ids, "fedora") || word_in(ids, "rhel") || word_in(ids, "centos"))
		return PM_DNF;
	if ((p = ff_which("apt-get"))) {
		free(p);
		return PM_APT;
	}
	if ((p = ff_which("dnf"))) {
		free(p);
		return PM_DNF;
	}
	return PM_NONE;
}

/* The exact command that installs `deb` (Debian, Ubuntu) or `rpm` (Fedora). */
static void
install_fix(struct req *r, const char *deb, const char *rpm)
{
	const char *sudo = geteuid() == 0 ? "" : "sudo ";
	const char *pkg = pm == PM_DNF ? rpm : deb;
	char ubuntu_perf[300];
	struct utsname u;

	if (ubuntu && !strcmp(deb, "linux-perf") && uname(&u) == 0) {
		snprintf(ubuntu_perf, sizeof(ubuntu_perf), "linux-tools-common linux-tools-%s",
			 u.release);
		pkg = ubuntu_perf;
	}
	if (pm == PM_NONE) {
		snprintf(r->fix, sizeof(r->fix),
			 "install the package that provides it (Debian: %s; Fedora: %s)", deb, rpm);
		return;
	}
	snprintf(r->fix, sizeof(r->fix), "%s%s install -y %s", sudo,
		 pm == PM_APT ? "apt-get" : "dnf", pkg);
	if (!word_in(missing_pkgs, pkg) && strlen(missing_pkgs) + strlen(pkg) + 2 < sizeof(missing_pkgs))
		snprintf(missing_pkgs + strlen(missing_pkgs),
			 sizeof(missing_pkgs) - strlen(missing_pkgs), "%s%s",
			 missing_pkgs[0] ? " " : "", pkg);
}

static const char *
version_of(const char *prog)
{
	return ff_json_str(json_object_get(env, prog), "version");
}

static const char *
path_of(const char *prog)
{
	return ff_json_str(json_object_get(env, prog), "path");
}

static void
check_program(const char *name, const char *deb, const char *rpm)
{
	struct req *r = req_add(name, path_of(name) != NULL);

	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "%s", path_of(name));
	else {
		snprintf(r->detail, sizeof(r->detail), "not on PATH");
		install_fix(r, deb, rpm);
	}
}

/* The Proton the router at `skr` loads (ldd). */
static void
check_proton(const char *skr)
{
	const char *proton = ff_json_str(env, "proton_ldd");
	char *argv[] = { "ldd", (char *)skr, NULL }, *out;
	struct req *r;

	r = req_add("proton", 1);
	if (proton)
		snprintf(r->detail, sizeof(r->detail), "%s (ldd)", proton);
	else if ((out = ff_env_run(argv, NULL)) && strstr(out, "libqpid-proton") &&
		 strstr(out, "not found")) {
		r->ok = 0;
		snprintf(r->detail, sizeof(r->detail),
			 "ldd finds no libqpid-proton library for skrouterd");
		snprintf(r->fix, sizeof(r->fix),
			 "export LD_LIBRARY_PATH=PROTON_PREFIX/lib64 (the Proton the router was built with)");
		free(out);
	} else {
		snprintf(r->detail, sizeof(r->detail),
			 "linked in: ldd shows no libqpid-proton library");
		free(out);
	}
}

/* The router's management schema (`runs`: the router runs), and what it says the router has. */
static void
check_schema(const char *schema, int runs)
{
	json_t *feat = json_object_get(env, "skrouterd_features");
	struct req *r;

	r = req_add("skrouterd_schema", json_is_object(feat));
	if (!schema && !runs) {
		snprintf(r->detail, sizeof(r->detail), "unknown: skrouterd does not run");
		snprintf(r->fix, sizeof(r->fix), "make skrouterd run (above)");
	} else if (!schema) {
		snprintf(r->detail, sizeof(r->detail),
			 "'skrouterd --help' names no python directory (-I)");
		snprintf(r->fix, sizeof(r->fix),
			 "install the router with its python directory (make install)");
	} else if (!r->ok) {
		snprintf(r->detail, sizeof(r->detail), "cannot read %s", schema);
		snprintf(r->fix, sizeof(r->fix),
			 "install the router with its python directory (make install)");
	} else {
		json_t *dflt = json_object_get(feat, "encapsulation_default");

		snprintf(r->detail, sizeof(r->detail),
			 "%s: http adaptor %s, tcp encapsulation %s%s%s%s, workerThreads %s",
			 schema,
			 json_is_true(json_object_get(feat, "http")) ? "yes" : "no",
			 json_is_true(json_object_get(feat, "tcp_encapsulation")) ? "yes" : "no",
			 json_is_string(dflt) ? " (default " : "",
			 json_is_string(dflt) ? json_string_value(dflt) : "",
			 json_is_string(dflt) ? ")" : "",
			 json_is_true(json_object_get(feat, "worker_threads")) ? "yes" : "no");
	}
}

static void
check_skrouterd(void)
{
	const char *skr = path_of("skrouterd"), *schema = ff_json_str(env, "skrouterd_schema");
	struct req *r = req_add("skrouterd", skr && version_of("skrouterd"));
	char *out, *line;
	char *vargv[] = { (char *)skr, "--version", NULL };
	int runs = r->ok;

	if (!skr) {
		snprintf(r->detail, sizeof(r->detail), "not on PATH (skrouterd is not packaged: "
			 "flimflam uses the one you build)");
		snprintf(r->fix, sizeof(r->fix),
			 "build skupper-router and Proton, then: export PATH=ROUTER_PREFIX/sbin:$PATH "
			 "LD_LIBRARY_PATH=PROTON_PREFIX/lib64");
	} else if (!runs) {
		out = ff_env_run(vargv, NULL);
		line = out ? out + strspn(out, " \n") : NULL;
		snprintf(r->detail, sizeof(r->detail), "%s does not run: %.*s", skr,
			 line ? (int)strcspn(line, "\n") : 0, line ? line : "");
		snprintf(r->fix, sizeof(r->fix), "%s", out && strstr(out, "shared librar") ?
			 "export LD_LIBRARY_PATH=PROTON_PREFIX/lib64 (the Proton the router was built with)" :
			 "rebuild and reinstall the router");
		free(out);
	} else if (!ff_skrouterd_version_ok(version_of("skrouterd"))) {
		/* flimflam run refuses it: say so here too. */
		r->ok = 0;
		snprintf(r->detail, sizeof(r->detail), "'%s --version' printed '%.80s', not a version",
			 skr, version_of("skrouterd"));
		snprintf(r->fix, sizeof(r->fix), "put the router under test on PATH");
	} else
		snprintf(r->detail, sizeof(r->detail), "%s", skr);

	if (skr)
		check_proton(skr);
	if (skr || schema)
		check_schema(schema, runs);
	if (skr) {
		char *skstat = ff_which("skstat");

		r = req_add("skstat", skstat != NULL);
		if (skstat)
			snprintf(r->detail, sizeof(r->detail), "%s", skstat);
		else {
			snprintf(r->detail, sizeof(r->detail), "not on PATH (needed for 'flimflam skstat')");
			snprintf(r->fix, sizeof(r->fix),
				 "skstat is installed beside skrouterd: put ROUTER_PREFIX/bin on PATH "
				 "and Proton's python binding on PYTHONPATH");
		}
		free(skstat);
	}
}

static void check_tracepoints(void);

static void
check_perf(void)
{
	struct ff_buf why = FF_BUF_INIT;
	int bits = ff_perf_probe(&why);
	int paranoid = ff_perf_paranoid();
	struct req *r;
	const char *hwfix =
		"run on bare metal, or a VM with its PMU passed through (KVM: -cpu host)";

	r = req_add("perf_events", bits & FF_PERF_EVENTS);
	if (!r->ok) {
		snprintf(r->detail, sizeof(r->detail), "cannot open a perf event on a child process: %.900s",
			 why.s);
		snprintf(r->fix, sizeof(r->fix),
			 "as root: echo -1 > /proc/sys/kernel/perf_event_paranoid");
	} else if (!(bits & FF_PERF_KERNEL))
		snprintf(r->detail, sizeof(r->detail),
			 "task-clock opens on a child process, user space only "
			 "(perf_event_paranoid=%d; for kernel frames too, as root: "
			 "echo -1 > /proc/sys/kernel/perf_event_paranoid)", paranoid);
	else
		snprintf(r->detail, sizeof(r->detail),
			 "task-clock opens on a child process, kernel included "
			 "(perf_event_paranoid=%d%s)", paranoid,
			 geteuid() == 0 && paranoid > 1 ? "; root is exempt" : "");
	ff_buf_free(&why);

	r = req_add("perf_hardware", bits & FF_PERF_HARDWARE);
	r->enables = "cycles and instructions (and per byte) in stat, cycles in record, c2c, mem, --call-graph lbr";
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail),
			 "cycles open: stat reports cycles and instructions");
	else {
		snprintf(r->detail, sizeof(r->detail),
			 "no hardware counters (no PMU here): stat reports cycles and instructions as null, "
			 "so no cycles or instructions per byte; record samples cpu-clock; c2c and mem "
			 "cannot work");
		snprintf(r->fix, sizeof(r->fix), "%s", hwfix);
	}
	r = req_add("perf_memory", bits & FF_PERF_MEMORY);
	r->enables = "c2c and mem";
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "load sampling for c2c and mem");
	else {
		snprintf(r->detail, sizeof(r->detail), "c2c and mem cannot work: %s",
			 bits & FF_PERF_HARDWARE ?
			 "no mem-loads event, AMD IBS or Arm SPE" : "they need hardware counters");
		snprintf(r->fix, sizeof(r->fix), "%s%s", hwfix,
			 bits & FF_PERF_HARDWARE ? " with load sampling (Intel, AMD Zen, Arm SPE)" : "");
	}
	check_tracepoints();
}

/*
 * The tracepoints offcpu (the scheduler's) and lock (the kernel's lock
 * contention, Linux 5.19 and later) record, in tracefs.
 */
static void check_lock_bpf(void);
static void check_wakeups(void);

static void
check_tracepoints(void)
{
	const char *dir = access("/sys/kernel/tracing/events", R_OK) == 0 ? "/sys/kernel/tracing" :
			  access("/sys/kernel/debug/tracing/events", R_OK) == 0 ? "/sys/kernel/debug/tracing" : NULL;
	char path[96];
	struct req *r;

	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", dir ? dir : "");
	r = req_add("perf_tracepoints", dir && access(path, R_OK) == 0);
	r->enables = "offcpu";
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "sched:sched_switch and sched_wakeup in %s", dir);
	else {
		snprintf(r->detail, sizeof(r->detail), "offcpu cannot work: %s",
			 dir ? "no sched:sched_switch in tracefs" : "tracefs is not mounted or not readable");
		snprintf(r->fix, sizeof(r->fix), "as root: mount -t tracefs nodev /sys/kernel/tracing");
	}
	snprintf(path, sizeof(path), "%s/events/lock/contention_begin/id", dir ? dir : "");
	r = req_add("perf_lock", dir && access(path, R_OK) == 0);
	r->enables = "lock";
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "lock:contention_begin and contention_end in %s", dir);
	else {
		snprintf(r->detail, sizeof(r->detail), "lock cannot work: %s", dir ?
			 "this kernel has no lock:contention_begin tracepoint" :
			 "tracefs is not mounted or not readable");
		snprintf(r->fix, sizeof(r->fix), "%s", dir ? "Linux 5.19 or later" :
			 "as root: mount -t tracefs nodev /sys/kernel/tracing");
	}
	check_lock_bpf();
	check_wakeups();
}

/*
 * perf lock contention -b: BPF counts each contended lock in the kernel as
 * it happens (system-wide, nothing recorded), with the lock's name or
 * address (-l) and its owner (-o). lock works from the recorded
 * tracepoints without it; check says what is missing.
 */
static void
check_lock_bpf(void)
{
	struct ff_buf why = FF_BUF_INIT;
	struct req *r = req_add("perf_lock_bpf", ff_perf_lock_bpf(&why));

	r->enables = "contended locks counted by BPF in the kernel (perf lock contention -b): each "
		     "lock by name or address and its owner, system-wide, nothing recorded; lock "
		     "records the tracepoints without it";
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "perf lock contention -b is built in");
	else {
		snprintf(r->detail, sizeof(r->detail), "%.900s", why.s);
		snprintf(r->fix, sizeof(r->fix), "a perf built with BUILD_BPF_SKEL=1 (the kernel's "
			 "tools/perf: make BUILD_BPF_SKEL=1, with clang, libbpf and bpftool)");
	}
	ff_buf_free(&why);
}

/*
 * The relays' wakeups (every run's resources): schedstat's nr_wakeups where
 * the kernel keeps it, else sched:sched_wakeup counted on every CPU.
 */
static void
check_wakeups(void)
{
	char *sched = ff_read_file("/proc/self/sched", NULL);
	int schedstat = sched && strstr(sched, "nr_wakeups"), fd = -1, err = 0;
	struct req *r;

	free(sched);
	if ((fd = ff_perf_tracepoint("sched/sched_wakeup", 0, "pid == 1")) < 0)
		err = errno;
	else
		close(fd);
	r = req_add("wakeups", schedstat || fd >= 0);
	r->enables = "the relays' wakeups per MB and per 1k ops in every run";
	if (schedstat)
		snprintf(r->detail, sizeof(r->detail), "schedstat's nr_wakeups (kernel.sched_schedstats=1)%s",
			 fd >= 0 ? ", and sched:sched_waking for the wakeups they make" : "");
	else if (fd >= 0)
		snprintf(r->detail, sizeof(r->detail), "sched:sched_wakeup counted on every CPU "
			 "(schedstat is off: no nr_wakeups in /proc/PID/sched)");
	else {
		snprintf(r->detail, sizeof(r->detail), "schedstat is off and sched:sched_wakeup cannot "
			 "be counted on every CPU: %s (perf_event_paranoid=%d)",
			 err == ENOENT ? "tracefs is not mounted or not readable" : strerror(err),
			 ff_perf_paranoid());
		snprintf(r->fix, sizeof(r->fix), "as root: echo 0 > /proc/sys/kernel/perf_event_paranoid "
			 "(or -1), or sysctl -w kernel.sched_schedstats=1 where the kernel has CONFIG_SCHEDSTATS");
	}
}

/*
 * Frame pointers of `what` at `path` (NULL: `none` says why not checked):
 * a line for humans, and whether to warn.
 */
static int
frame_pointers(const char *what, const char *path, const char *none, char *msg, size_t n)
{
	struct ff_fp_info fp;
	int r;

	if (!path) {
		snprintf(msg, n, "%s: not checked (%s)", what, none);
		return 0;
	}
	r = ff_env_frame_pointers(path, &fp);
	if (r < 0)
		snprintf(msg, n, "%s: cannot tell (%s: %s)", what, path, fp.example);
	else if (r == 1)
		snprintf(msg, n, "%s: built with -fno-omit-frame-pointer (every compile unit: "
			 "%d set%s of compiler flags)", what, fp.units_with,
			 fp.units_with == 1 ? "" : "s");
	else
		snprintf(msg, n, "%s: built without -fno-omit-frame-pointer in %d of %d set%s of "
			 "compiler flags, e.g. '%.200s'", what, fp.units_without,
			 fp.units_with + fp.units_without,
			 fp.units_with + fp.units_without == 1 ? "" : "s", fp.example);
	return r == 0;
}

/* The router and the Proton library it loads, each from its own debug information. */
static struct {
	const char *name;
	int warn;
	char msg[1024];
} fps[2] = { { "skrouterd", 0, "" }, { "proton", 0, "" } };

static void
check_frame_pointers(void)
{
	const char *skr = path_of("skrouterd");

	fps[0].warn = frame_pointers("skrouterd", skr, "not on PATH", fps[0].msg,
				     sizeof(fps[0].msg));
	fps[1].warn = frame_pointers("proton", skr ? ff_json_str(env, "proton_ldd") : NULL,
				     skr ? "ldd finds no libqpid-proton library" :
				     "skrouterd not on PATH", fps[1].msg, sizeof(fps[1].msg));
}

static const char fp_reminder[] =
	"  build the router and Proton with -fno-omit-frame-pointer (the router's\n"
	"  RelWithDebInfo build has it, Proton's does not), or call stacks break\n";

static void
collect(void)
{
	pm = package_manager();
	check_skrouterd();
	check_program("h2load", "nghttp2-client", "nghttp2");
	check_program("nghttpd", "nghttp2-server", "nghttp2");
	check_program("nghttpx", "nghttp2-proxy", "nghttp2");
	check_program("iperf3", "iperf3", "iperf3");
	check_program("nginx", "nginx", "nginx");
	check_program("haproxy", "haproxy", "haproxy");
	{
		const char *mod = ff_json_str(env, "nginx_stream_module");
		struct req *r = req_add("nginx_stream_module", mod != NULL);

		if (mod)
			snprintf(r->detail, sizeof(r->detail), "%s", mod);
		else {
			snprintf(r->detail, sizeof(r->detail),
				 "no ngx_stream_module.so, and nginx is not built with it "
				 "(needed for nginx tcp)");
			install_fix(r, "libnginx-mod-stream", "nginx-mod-stream");
		}
	}
	check_program("perf", "linux-perf", "perf");
	check_perf();
}

static void
emit_json(void)
{
	json_t *ev = ff_event("environment");
	int i, problems = 0;

	json_object_update(ev, env);
	ff_emit(ev);
	for (i = 0; i < nreqs; i++) {
		ev = ff_event("requirement");
		json_object_set_new(ev, "name", json_string(reqs[i].name));
		json_object_set_new(ev, "ok", json_boolean(reqs[i].ok));
		json_object_set_new(ev, "required", json_boolean(!reqs[i].enables));
		json_object_set_new(ev, "enables", reqs[i].enables ? json_string(reqs[i].enables) :
				    json_null());
		json_object_set_new(ev, "detail", ff_json_text(reqs[i].detail));
		json_object_set_new(ev, "fix", reqs[i].fix[0] ? ff_json_text(reqs[i].fix) : json_null());
		ff_emit(ev);
		problems += problem(&reqs[i]);
	}
	for (i = 0; i < (int)FF_ARRAY_SIZE(fps); i++) {
		if (!fps[i].warn)
			continue;
		ev = ff_event("warning");
		json_object_set_new(ev, "name", json_string("frame_pointers"));
		json_object_set_new(ev, "program", json_string(fps[i].name));
		json_object_set_new(ev, "message", ff_json_text(fps[i].msg));
		ff_emit(ev);
	}
	ff_emit_end(problems ? 1 : 0);
}

static void
print_prog(const char *label, const char *prog)
{
	const char *path = path_of(prog), *v = version_of(prog);

	if (!path)
		ff_print("  %-10s missing\n", label);
	else
		ff_print("  %-10s %s (%s)\n", label, v ? v : "version unknown", path);
}

/* The requirements (optional 0) or the optional ones, as a section. */
static void
print_reqs(const char *title, int optional)
{
	int i;

	printf("\n%s\n", title);
	for (i = 0; i < nreqs; i++)
		if (!reqs[i].enables == !optional)
			ff_print("  %-8s %-20s %s\n", reqs[i].ok ? "ok" : optional ? "missing" : "MISSING",
			       reqs[i].name, reqs[i].detail);
}

static void
print_human(void)
{
	const char *s;
	int i, problems = 0, absent = 0, paranoid;

	ff_print("Environment\n");
	ff_env_print_machine(env);
	print_prog("skrouterd", "skrouterd");
	if (path_of("skrouterd")) {
		ff_print("  %-10s %s\n", "proton", (s = ff_json_str(env, "proton_ldd")) ? s :
		       "no libqpid-proton in ldd");
		ff_print("  %-10s %s\n", "hash", ff_json_str(env, "skrouterd_hash_fnv1a64") ?
		       ff_json_str(env, "skrouterd_hash_fnv1a64") : "unreadable");
	}
	print_prog("h2load", "h2load");
	print_prog("nghttpd", "nghttpd");
	print_prog("nghttpx", "nghttpx");
	print_prog("iperf3", "iperf3");
	print_prog("nginx", "nginx");
	ff_print("  %-10s %s\n", "stream", (s = ff_json_str(env, "nginx_stream_module")) ? s :
	       "missing");
	print_prog("haproxy", "haproxy");
	print_prog("perf", "perf");
	print_prog("gcc", "gcc");
	paranoid = (int)ff_json_num(env, "perf_event_paranoid", INT_MIN);
	if (paranoid != INT_MIN)
		ff_print("  %-10s perf_event_paranoid=%d\n", "paranoid", paranoid);

	print_reqs("Requirements", 0);
	print_reqs("Optional (only some commands need these)", 1);
	for (i = 0; i < nreqs; i++) {
		problems += problem(&reqs[i]);
		absent += !reqs[i].ok && reqs[i].enables;
	}

	printf("\nFrame pointers\n%s", fp_reminder);
	for (i = 0; i < (int)FF_ARRAY_SIZE(fps); i++)
		ff_print("  %s%s\n", fps[i].warn ? "warning: " : "", fps[i].msg);

	if (absent) {
		printf("\nNot available here (everything else works without):\n");
		for (i = 0; i < nreqs; i++)
			if (!reqs[i].ok && reqs[i].enables)
				ff_print("  %-20s %s; %s\n", reqs[i].name, reqs[i].enables, reqs[i].fix);
	}
	if (!problems) {
		ff_print("\nOK\n");
		return;
	}
	ff_print("\n%d problem%s:\n", problems, problems == 1 ? "" : "s");
	for (i = 0; i < nreqs; i++)
		if (problem(&reqs[i]))
			ff_print("  %-20s %s\n", reqs[i].name,
			       reqs[i].fix[0] ? reqs[i].fix : reqs[i].detail);
	if (strchr(missing_pkgs, ' ') && pm != PM_NONE)
		ff_print("  all packages at once: %s%s install -y %s\n", geteuid() == 0 ? "" : "sudo ",
		       pm == PM_APT ? "apt-get" : "dnf", missing_pkgs);
}

int
main(int argc, char *argv[])
{
	int json = 0, i, c, problems = 0;
	const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		{ "json", no_argument, &json, 1 },
		{ NULL, 0, NULL, 0 }
	};
	const char *usage;

	ff_setprog(argv[0]);
	usage = strcmp(ff_prog(), "flimflam check") ? file_usage : check_usage;
	while ((c = ff_getopt(argc, argv, ":h", longopts, usage)) != -1)
		if (c == 'h')
			ff_usage(usage, 0);
	if (optind < argc)
		ff_usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (json)
		ff_emit_start();
	/* The probes take up to 5 s (a version that hangs): say what it is doing. */
	ff_live("%s: probing the programs, perf and the router...", ff_prog());
	env = ff_env_collect();
	collect();
	check_frame_pointers();
	ff_live_clear();
	for (i = 0; i < nreqs; i++)
		problems += problem(&reqs[i]);
	if (json)
		emit_json();
	else
		print_human();
	json_decref(env);
	if (ff_finish())
		return 1;
	return problems ? 1 : 0;
}
