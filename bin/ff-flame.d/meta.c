/*
 * ff-flame's relays: what --meta (or --events, and --base-events for the
 * BASE of --diff) says about them, and the tower each process's samples go
 * in: its relay's (matched by pid, else by comm), or its comm's. With
 * --parts, a process of one input is matched only to the relays that input
 * holds (pids are each host's own); with --diff and --base-events, only to
 * the relays of its own recording. A tower is named by role and program
 * ("R1 nginx") or by comm, never by pid, so the towers of two recordings
 * match; the pids are the tower's detail.
 */
#include "ff-flame.h"

#include <errno.h>
#include <string.h>

struct proc {
	int part;
	int which;		/* 0 NEW (or the only input), 1 BASE */
	long pid;
	uint32_t frame;
	char comm[64];
	int main_seen;		/* comm comes from the thread whose tid is the pid */
};

struct relay *relays;
size_t nrelays;

static struct proc *procs;
static uint32_t nprocs, capprocs;
static struct slots proc_slots;
/* --parts: which inputs name the relays they hold (ROLES=FILE) */
static unsigned char *part_scoped;
static char *const *part_files;
static int nparts;

static uint64_t
proc_key(int part, int which, long pid)
{
	return mix((uint64_t)pid ^ ((uint64_t)part << 40) ^ ((uint64_t)which << 60));
}

static uint64_t proc_hash_of(uint32_t i) { return proc_key(procs[i].part, procs[i].which, procs[i].pid); }

/* May a process of input `in` (NULL: any) be relay i's? */
static int
relay_in_part(size_t i, const struct input *in)
{
	int part = in ? in->part : -1;

	if (in && relays[i].which >= 0 && relays[i].which != in->which)
		return 0;
	return part < 0 || part >= nparts || !part_scoped[part] || relays[i].part == part;
}

static int
relay_has_pid(const struct relay *r, long pid)
{
	size_t i;

	if (r->pid == pid)
		return 1;
	for (i = 0; i < r->npids; i++)
		if (r->pids[i] == pid)
			return 1;
	return 0;
}

/*
 * The relay a process of input `in` belongs to, among the relays that
 * input may hold: by pid (its own or one in its pids list), else by comm
 * when exactly one relay tower runs a program of that name (perf keeps 15
 * characters of a comm). -1 for none.
 */
static int
relay_of(const struct input *in, long pid, const char *comm)
{
	size_t i;
	int found = -1;

	for (i = 0; i < nrelays; i++)
		if (pid >= 0 && relay_in_part(i, in) && relay_has_pid(&relays[i], pid))
			return i;
	if (!comm)
		return -1;
	for (i = 0; i < nrelays; i++) {
		if (!relay_in_part(i, in) || !relays[i].program ||
		    strncmp(basename_of(relays[i].program), comm, 15) ||
		    strlen(comm) > 15)
			continue;
		if (found >= 0 && relays[found].frame != relays[i].frame)
			return -1;	/* two relays run it: ambiguous */
		found = i;
	}
	return found;
}

/* The tower of a perf sample's process, in input `in`. */
uint32_t
tower_for_pid(const struct input *in, long pid, long tid, const char *comm, size_t commlen)
{
	int part = in->part;
	uint64_t h = proc_key(part, in->which, pid);
	struct proc *p;
	char name[64];
	size_t j;
	int r;

	if (commlen >= sizeof(name))
		commlen = sizeof(name) - 1;
	memcpy(name, comm, commlen);
	name[commlen] = 0;
	slots_grow(&proc_slots, nprocs, proc_hash_of);
	for (j = h & proc_slots.mask; proc_slots.v[j];
	     j = (j + 1) & proc_slots.mask) {
		p = &procs[proc_slots.v[j] - 1];
		if (p->pid != pid || p->part != part || p->which != in->which)
			continue;
		if (tid == pid && !p->main_seen) {
			snprintf(p->comm, sizeof(p->comm), "%s", name);
			p->main_seen = 1;
		}
		return p->frame;
	}
	GROW(procs, nprocs, capprocs);
	p = &procs[nprocs];
	memset(p, 0, sizeof(*p));
	p->part = part;
	p->which = in->which;
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s", name);
	p->main_seen = tid == pid;
	r = relay_of(in, pid, NULL);	/* by comm at the end: see merge_towers() */
	if (r >= 0)
		p->frame = relays[r].frame;
	else
		p->frame = frame_new(NULL, 0, K_PROCESS, 0);
	proc_slots.v[j] = ++nprocs;
	return p->frame;
}

/*
 * The tower of a folded stack's first frame in input `in`: a relay's own
 * label, a "comm (pid N)" (as ff-flame named towers before) whose pid or
 * comm belongs to a relay, else the name itself without its pid.
 */
uint32_t
tower_for_name(const struct input *in, const char *name, size_t len)
{
	const char *p;
	char comm[64];
	long pid = -1;
	size_t i, clen = len;
	int r;

	for (i = 0; i < nrelays; i++)
		if (relay_in_part(i, in) && strlen(relays[i].label) == len &&
		    !strncmp(relays[i].label, name, len))
			return relays[i].frame;
	if (len > 7 && name[len - 1] == ')') {
		for (p = name + len - 2; p > name && *p >= '0' && *p <= '9'; p--)
			;
		if (p - name >= 5 && p < name + len - 2 &&
		    !strncmp(p - 5, " (pid ", 6)) {
			pid = strtol(p + 1, NULL, 10);
			clen = p - 5 - name;
		}
	}
	if (nrelays && clen < sizeof(comm)) {
		memcpy(comm, name, clen);
		comm[clen] = 0;
		if ((r = relay_of(in, pid, comm)) >= 0)
			return relays[r].frame;
		/* "R1 nginx (pid 5)" of an older page: its relay's label. */
		for (i = 0; i < nrelays; i++)
			if (relay_in_part(i, in) && !strcmp(relays[i].label, comm))
				return relays[i].frame;
	}
	return frame_intern(name, clen, 0, K_PROCESS);
}

/*
 * A process no relay lists by pid joins the relay that runs a program of
 * its comm. This waits for the end, when the process's own comm is known
 * (its threads may have names of their own, and sample first); so does a
 * process of no relay, which joins the tower of its comm (with several
 * --parts, of its comm in its file: each host has its own processes).
 * The process's stacks are then moved to that tower, merging with the
 * stacks already there.
 */
void
merge_towers(void)
{
	uint32_t *alias = ff_realloc(NULL, (nframes + nprocs + 1) * sizeof(*alias)), i, k, to;
	char *name;
	int r, n;

	for (k = 0; k < nframes + nprocs + 1; k++)
		alias[k] = k;
	for (i = 0; i < nprocs; i++) {
		struct proc *p = &procs[i];
		const struct input in = { .part = p->part, .which = p->which };

		if (frames[p->frame].relay >= 0)
			continue;
		if ((r = relay_of(&in, -1, p->comm)) >= 0) {
			to = relays[r].frame;
		} else {
			if (nparts > 1)
				n = asprintf(&name, "%s (%s)", p->comm, basename_of(part_files[p->part]));
			else
				n = asprintf(&name, "%s", p->comm);
			if (n < 0)
				ff_die("out of memory");
			to = frame_intern(name, strlen(name), 0, K_PROCESS);
			free(name);
		}
		/* The frame p had (one of its own, unnamed) is named as its tower. */
		frames[p->frame].name = ff_strdup(frames[to].name);
		alias[p->frame] = to;
		p->frame = to;
	}
	stacks_alias(alias);
	free(alias);
}

static int
proc_cmp(const void *a, const void *b)
{
	const struct proc *x = &procs[*(const uint32_t *)a], *y = &procs[*(const uint32_t *)b];

	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	if (x->which != y->which)
		return y->which - x->which;	/* BASE first */
	if (x->part != y->part)
		return x->part - y->part;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* A tower's detail lists this many pids of a side at most. */
#define DETAIL_PIDS 8

/*
 * Each tower's detail, its processes' pids: "pids 100, 101", or with
 * --diff "base: pid 7; new: pid 9" (pids are not the same from one
 * recording to the next, so they are no part of the tower's name).
 */
void
name_towers(int diff)
{
	uint32_t *order = ff_realloc(NULL, (nprocs + 1) * sizeof(*order)), i, j, k, n;
	struct ff_buf d = FF_BUF_INIT;

	for (i = 0; i < nprocs; i++)
		order[i] = i;
	qsort(order, nprocs, sizeof(*order), proc_cmp);
	for (i = 0; i < nprocs; i = j) {
		const struct proc *p = &procs[order[i]];

		d.len = 0;
		for (j = i; j < nprocs && procs[order[j]].frame == p->frame; j = k) {
			int which = procs[order[j]].which;

			for (k = j; k < nprocs && procs[order[k]].frame == p->frame &&
			     procs[order[k]].which == which; k++)
				;
			n = k - j;
			if (diff)
				ff_buf_printf(&d, "%s%s: ", d.len ? "; " : "", which ? "base" : "new");
			ff_buf_printf(&d, "pid%s ", n == 1 ? "" : "s");
			for (n = j; n < k && n < j + DETAIL_PIDS; n++)
				ff_buf_printf(&d, "%s%ld", n > j ? ", " : "", procs[order[n]].pid);
			if (k - j > DETAIL_PIDS)
				ff_buf_printf(&d, " and %u more", k - j - DETAIL_PIDS);
		}
		free(frames[p->frame].detail);
		frames[p->frame].detail = ff_strdup(d.s);
	}
	ff_buf_free(&d);
	free(order);
}

/* Meta: --meta JSON */

json_t *
meta_load(const char *arg)
{
	json_error_t err;
	json_t *meta;

	if (arg[0] == '@') {
		meta = json_load_file(arg + 1, 0, &err);
		if (!meta)
			ff_die("--meta: cannot read '%s': %s", arg + 1, err.text);
	} else {
		meta = json_loads(arg, 0, &err);
		if (!meta)
			ff_usage_error(usage, "--meta: not JSON: %s", err.text);
	}
	if (!json_is_object(meta))
		ff_usage_error(usage, "--meta: expected a JSON object");
	return meta;
}

static long
json_pid(const json_t *v)
{
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v))
		return (long)json_real_value(v);
	return -1;
}

/*
 * The relays of a meta, for input `which` (0 NEW, 1 BASE, -1 either):
 * relays of one role and program, one of each side, share one tower.
 */
void
relays_from_meta(const json_t *meta, int which)
{
	const json_t *arr = json_object_get(meta, "relays"), *r, *v;
	const char *role, *prog;
	struct relay *rl;
	char roleup[32], label[320];
	size_t i, k;
	int n;

	if (!json_is_array(arr))
		return;
	relays = ff_realloc(relays, (nrelays + json_array_size(arr) + 1) * sizeof(*relays));
	json_array_foreach(arr, i, r) {
		if (!json_is_object(r))
			continue;
		rl = &relays[nrelays];
		memset(rl, 0, sizeof(*rl));
		rl->part = -1;
		rl->which = which;
		role = ff_json_str(r, "role");
		prog = ff_json_str(r, "program");
		rl->role = ff_strdup(role ? role : "relay");
		rl->program = ff_strdup(prog);
		rl->pid = json_pid(json_object_get(r, "pid"));
		v = json_object_get(r, "pids");
		if (json_is_array(v)) {
			rl->pids = ff_realloc(NULL, (json_array_size(v) + 1) *
					    sizeof(*rl->pids));
			for (k = 0; k < json_array_size(v); k++)
				rl->pids[rl->npids++] = json_pid(json_array_get(v, k));
		}
		snprintf(roleup, sizeof(roleup), "%s", rl->role);
		for (k = 0; roleup[k]; k++)
			if (roleup[k] >= 'a' && roleup[k] <= 'z')
				roleup[k] -= 'a' - 'A';
		/* "R1 nginx": role and program, never the pid. */
		n = snprintf(label, sizeof(label), "%s", roleup);
		if (prog)
			snprintf(label + n, sizeof(label) - n, " %.200s", basename_of(prog));
		rl->label = ff_strdup(label);
		for (k = 0; k < nrelays && strcmp(relays[k].label, label); k++)
			;
		if (k < nrelays) {
			rl->frame = relays[k].frame;
		} else {
			rl->frame = frame_new(ff_strdup(rl->label), 0, K_PROCESS, 0);
			frames[rl->frame].relay = nrelays;
		}
		nrelays++;
	}
}

/*
 * --parts: roles[k], when not NULL, is "r1" or "r1,r2": the relays input k
 * (files[k]) holds, and the only ones its processes may be matched to.
 * Each role is a relay of the meta, held by one input.
 */
void
relays_parts(char *const roles[], char *const files[], int n)
{
	const char *p;
	size_t i, len;
	int k;

	nparts = n;
	part_files = files;
	part_scoped = ff_realloc(NULL, n ? n : 1);
	for (k = 0; k < n; k++) {
		part_scoped[k] = roles[k] != NULL;
		for (p = roles[k]; p && *p; p += len + (p[len] == ',')) {
			len = strcspn(p, ",");
			for (i = 0; i < nrelays; i++)
				if (strlen(relays[i].role) == len && !strncmp(relays[i].role, p, len))
					break;
			if (i == nrelays)
				ff_usage_error(usage, nrelays ?
					       "--parts: '%.*s' is not a relay of the meta (--meta or --events)" :
					       "--parts: '%.*s': ROLES=FILE names relays of --meta or --events, and they name none",
					       (int)len, p);
			if (relays[i].part >= 0 && relays[i].part != k)
				ff_usage_error(usage, "--parts: relay '%s' is in two inputs", relays[i].role);
			relays[i].part = k;
		}
	}
}

/* Events: --events FILE */

/* The events of a file of JSON lines, each an object. */
static json_t *
events_load(const char *path)
{
	struct input in = { .name = path };
	json_t *events = json_array(), *ev;
	json_error_t err;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *fp = fopen(path, "r");

	if (!fp)
		ff_die("--events: cannot read '%s': %s", path, strerror(errno));
	while ((n = get_line(&in, &line, &cap, fp)) >= 0) {
		in.line++;
		if (!rtrim(line, n))
			continue;
		ev = memchr(line, 0, n) ? NULL : json_loadb(line, n, 0, &err);
		if (!json_is_object(ev))
			ff_die("%s:%ld: not an event (one JSON object a line, as flimflam --json prints them)",
			       path, in.line);
		json_array_append_new(events, ev);
	}
	if (ferror(fp))
		ff_die("cannot read '%s': %s", path, strerror(errno));
	fclose(fp);
	free(line);
	return events;
}

/* The program a topology event's relay of this role runs, or NULL. */
static const char *
topology_program(const json_t *topo, const char *role)
{
	const json_t *tr;
	size_t i;

	json_array_foreach(json_object_get(topo, "relays"), i, tr)
		if (role && ff_json_str(tr, "role") && !strcmp(ff_json_str(tr, "role"), role))
			return ff_json_str(tr, "program");
	return NULL;
}

/* Do relays a and b (of two events) have one role? */
static int
same_role(const json_t *a, const json_t *b)
{
	const char *x = ff_json_str(a, "role"), *y = ff_json_str(b, "role");

	return x && y && !strcmp(x, y);
}

/*
 * The relays of the run's capture events (one per relay host with
 * --hosts), in the order of the topology's, or NULL without a capture.
 */
static json_t *
captured_relays(const json_t *events, const json_t *topo)
{
	const json_t *ev, *r, *tr, *order = json_object_get(topo, "relays");
	json_t *all = json_array(), *out;
	size_t i, j;
	int found = 0;

	json_array_foreach(events, i, ev)
		if (!strcmp(ff_event_name(ev), "capture")) {
			found = 1;
			json_array_extend(all, json_object_get(ev, "relays"));
		}
	if (!found) {
		json_decref(all);
		return NULL;
	}
	/* The topology's order first, then any relay it does not name. */
	out = json_array();
	json_array_foreach(order, j, tr)
		json_array_foreach(all, i, r)
			if (same_role(r, tr))
				json_array_append(out, (json_t *)r);
	json_array_foreach(all, i, r) {
		json_array_foreach(order, j, tr)
			if (same_role(r, tr))
				break;
		if (j == json_array_size(order))
			json_array_append(out, (json_t *)r);
	}
	json_decref(all);
	return out;
}

/*
 * The meta of a run, from its events as `flimflam record --json` prints
 * them: the relays' roles and pids from `capture` (every one: one per
 * relay host with --hosts; else `topology`), their programs from
 * `topology`, the workload from the first event naming one, and a title
 * of the three.
 */
json_t *
meta_from_events(const char *path)
{
	json_t *events = events_load(path), *meta = json_object(), *rl = json_array();
	json_t *topo = ff_event_find(events, "topology"), *cap = ff_event_find(events, "capture");
	json_t *captured = captured_relays(events, topo);
	const json_t *list = captured ? captured : json_object_get(topo, "relays"), *r, *ev;
	const char *workload = NULL, *relay = ff_json_str(topo, "relay"),
		*protocol = ff_json_str(topo, "protocol"), *role;
	size_t i;

	if (!topo && !cap)
		ff_die("--events: '%s' has no topology or capture event (the events of a run, as `flimflam record --json` prints them)",
		       path);
	json_array_foreach(events, i, ev)
		if (!workload)
			workload = ff_json_str(ev, "workload");
	json_array_foreach(list, i, r) {
		role = ff_json_str(r, "role");
		json_array_append_new(rl, json_pack("{s:s?, s:O?, s:O?, s:s?}",
			"role", role, "pid", json_object_get(r, "pid"),
			"pids", json_object_get(r, "pids"), "program", topology_program(topo, role)));
	}
	if (workload && relay && protocol) {
		char *title = ff_asprintf("flimflam: %s over %s (%s)", workload, relay, protocol);

		json_object_set_new(meta, "title", ff_json_text(title));
		free(title);
	}
	if (workload)
		json_object_set_new(meta, "workload", ff_json_text(workload));
	if (relay)
		json_object_set_new(meta, "relay", ff_json_text(relay));
	if (protocol)
		json_object_set_new(meta, "protocol", ff_json_text(protocol));
	json_object_set_new(meta, "relays", rl);
	json_decref(captured);
	json_decref(events);
	return meta;
}
