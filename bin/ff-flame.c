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
 * and coloured by how each frame's share of samples changed from BASE.
 */
#include "ff.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pipeline.h>

static const char usage[] =
	"usage: ff-flame [-o FILE] [-t TITLE] [--folded] [--script] [--meta JSON] [FILE]\n"
	"       ff-flame [-o FILE] [-t TITLE] [--folded] [--script] [--meta JSON] --diff BASE NEW\n"
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
	"  --diff BASE NEW    a differential graph of NEW against BASE\n"
	"  -h, --help         show this help\n"
	"  --version          print the version and exit\n";

/* The fields ff-flame asks perf script for: just what folding needs. */
#define PERF_FIELDS "comm,pid,tid,ip,sym,dso"

enum kind {
	K_ROOT, K_PROCESS, K_KERNEL, K_EXE, K_PROTON, K_LIB, K_LIBC, K_UNKNOWN,
	K_USER
};
static const char *const kind_names[] = {
	"root", "process", "kernel", "exe", "proton", "lib", "libc", "unknown",
	"user", NULL
};

/*
 * Frames are interned by (name, module, kind). Process frames of perf.data
 * input (one per pid) and relay towers are not in the hash: they are found
 * by pid, and named at the end, once the process's own comm is known.
 */
struct frame {
	char *name;
	uint32_t module;	/* index into modules; 0 is "" */
	unsigned char kind;
	int relay;		/* a relay tower: its index in relays; else -1 */
	uint64_t hash;
};

struct stack {
	uint64_t hash;
	uint64_t count[2];	/* [0] the input (NEW), [1] BASE of --diff */
	size_t off;		/* into stack_ids */
	uint32_t len;
};

/* An open-addressing table of uint32 indices + 1 (0 is an empty slot). */
struct slots {
	uint32_t *v;
	size_t mask;
};

struct relay {
	char *role, *program, *label;
	long pid;
	long *pids;
	size_t npids;
	uint32_t frame;
};

struct proc {
	long pid;
	uint32_t frame;
	char comm[64];
	int main_seen;		/* comm comes from the thread whose tid is the pid */
};

static struct frame *frames;
static uint32_t nframes, capframes;
static struct slots frame_slots;

static char **modules;
static unsigned char *module_kind;
static uint64_t *module_hash;
static uint32_t nmodules, capmodules;
static struct slots module_slots;

static struct stack *stacks;
static uint32_t nstacks, capstacks;
static struct slots stack_slots;
static uint32_t *stack_ids;
static size_t nstack_ids, capstack_ids;

static struct relay *relays;
static size_t nrelays;

static struct proc *procs;
static uint32_t nprocs, capprocs;
static struct slots proc_slots;

static uint32_t root_frame;

/* The sample being read: leaf first for perf script, root first for folded. */
static uint32_t *cur;
static size_t ncur, capcur;

static char *
xstrndup(const char *s, size_t n)
{
	char *p = ff_realloc(NULL, n + 1);

	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

#define GROW(arr, n, cap) do { \
		if ((n) >= (cap)) { \
			(cap) = (cap) ? (cap) * 2 : 64; \
			(arr) = ff_realloc((arr), (cap) * sizeof(*(arr))); \
		} \
	} while (0)

#define HASH_INIT 0xcbf29ce484222325ULL

/* The 64-bit finalizer of MurmurHash3. */
static uint64_t
mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* A hash of bytes, eight at a time. */
static uint64_t
hash_bytes(uint64_t h, const void *p, size_t n)
{
	const char *s = p;
	uint64_t w;

	h ^= n;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, n);
	return mix((h ^ w) * 0x9e3779b97f4a7c15ULL);
}

/*
 * Rebuild a table for `n` entries whose hashes `hash(i)` gives, when it
 * is half full.
 */
static void
slots_grow(struct slots *t, uint32_t n, uint64_t (*hash)(uint32_t))
{
	size_t size, i, j;

	if (t->v && n < (t->mask + 1) / 2)
		return;
	size = t->v ? (t->mask + 1) * 2 : 1024;
	free(t->v);
	t->v = calloc(size, sizeof(*t->v));
	if (!t->v)
		ff_die("out of memory");
	t->mask = size - 1;
	for (i = 0; i < n; i++) {
		for (j = hash(i) & t->mask; t->v[j]; j = (j + 1) & t->mask)
			;
		t->v[j] = i + 1;
	}
}

static uint64_t frame_hash_of(uint32_t i) { return frames[i].hash; }
static uint64_t module_hash_of(uint32_t i) { return module_hash[i]; }
static uint64_t stack_hash_of(uint32_t i) { return stacks[i].hash; }
static uint64_t proc_hash_of(uint32_t i) { return mix((uint64_t)procs[i].pid); }

static int kind_of_module(const char *mod);

static uint32_t
module_intern(const char *s, size_t len)
{
	uint64_t h = hash_bytes(HASH_INIT, s, len);
	size_t j;
	uint32_t i;

	slots_grow(&module_slots, nmodules, module_hash_of);
	for (j = h & module_slots.mask; module_slots.v[j];
	     j = (j + 1) & module_slots.mask) {
		i = module_slots.v[j] - 1;
		if (module_hash[i] == h && !strncmp(modules[i], s, len) &&
		    !modules[i][len])
			return i;
	}
	GROW(modules, nmodules, capmodules);
	module_hash = ff_realloc(module_hash, capmodules * sizeof(*module_hash));
	module_kind = ff_realloc(module_kind, capmodules * sizeof(*module_kind));
	modules[nmodules] = xstrndup(s, len);
	module_hash[nmodules] = h;
	module_kind[nmodules] = kind_of_module(modules[nmodules]);
	module_slots.v[j] = nmodules + 1;
	return nmodules++;
}

static uint32_t
frame_new(char *name, uint32_t module, int kind, uint64_t hash)
{
	GROW(frames, nframes, capframes);
	frames[nframes] = (struct frame){ name, module, kind, -1, hash };
	return nframes++;
}

/*
 * The frame (name, module, kind). A ';' in a name would break the folded
 * format and a control character the page: both are replaced.
 */
static uint32_t
frame_intern(const char *name, size_t len, uint32_t module, int kind)
{
	uint64_t h = mix(hash_bytes(HASH_INIT, name, len) ^
			 ((uint64_t)module << 8) ^ (uint64_t)kind);
	struct frame *f;
	size_t j, k;
	uint32_t i;
	char *copy;

	slots_grow(&frame_slots, nframes, frame_hash_of);
	for (j = h & frame_slots.mask; frame_slots.v[j];
	     j = (j + 1) & frame_slots.mask) {
		f = &frames[frame_slots.v[j] - 1];
		if (f->hash == h && f->module == module && f->kind == kind &&
		    !strncmp(f->name, name, len) && !f->name[len])
			return frame_slots.v[j] - 1;
	}
	copy = xstrndup(name, len);
	for (k = 0; k < len; k++)
		if (copy[k] == ';')
			copy[k] = ':';
		else if ((unsigned char)copy[k] < 0x20 || copy[k] == 0x7f)
			copy[k] = '?';
	i = frame_new(copy, module, kind, h);
	frame_slots.v[j] = i + 1;
	return i;
}

static void
cur_push(uint32_t id)
{
	GROW(cur, ncur, capcur);
	cur[ncur++] = id;
}

/* Count `count` samples of the stack ids[0..len) (root first) in `which`. */
static void
stack_add(const uint32_t *ids, size_t len, uint64_t count, int which)
{
	uint64_t h = HASH_INIT;
	struct stack *s;
	size_t j, k;

	for (k = 0; k < len; k++)
		h = mix(h ^ ids[k]) + k;
	slots_grow(&stack_slots, nstacks, stack_hash_of);
	for (j = h & stack_slots.mask; stack_slots.v[j];
	     j = (j + 1) & stack_slots.mask) {
		s = &stacks[stack_slots.v[j] - 1];
		if (s->hash == h && s->len == len &&
		    !memcmp(stack_ids + s->off, ids, len * sizeof(*ids))) {
			s->count[which] += count;
			return;
		}
	}
	while (nstack_ids + len > capstack_ids) {
		capstack_ids = capstack_ids ? capstack_ids * 2 : 4096;
		stack_ids = ff_realloc(stack_ids, capstack_ids * sizeof(*stack_ids));
	}
	memcpy(stack_ids + nstack_ids, ids, len * sizeof(*ids));
	GROW(stacks, nstacks, capstacks);
	s = &stacks[nstacks];
	*s = (struct stack){ h, { 0, 0 }, nstack_ids, len };
	s->count[which] = count;
	nstack_ids += len;
	stack_slots.v[j] = ++nstacks;
}

/* Relays and towers */

static const char *
basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
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
 * The relay a process belongs to: by pid (its own or one in its pids
 * list), else by comm when exactly one relay runs a program of that name
 * (perf keeps 15 characters of a comm). -1 for none.
 */
static int
relay_of(long pid, const char *comm)
{
	size_t i;
	int found = -1;

	for (i = 0; i < nrelays; i++)
		if (pid >= 0 && relay_has_pid(&relays[i], pid))
			return i;
	if (!comm)
		return -1;
	for (i = 0; i < nrelays; i++) {
		if (!relays[i].program ||
		    strncmp(basename_of(relays[i].program), comm, 15) ||
		    strlen(comm) > 15)
			continue;
		if (found >= 0)
			return -1;	/* two relays run it: ambiguous */
		found = i;
	}
	return found;
}

/* The tower of a perf sample's process. */
static uint32_t
tower_for_pid(long pid, long tid, const char *comm, size_t commlen)
{
	uint64_t h = mix((uint64_t)pid);
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
		if (p->pid != pid)
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
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s", name);
	p->main_seen = tid == pid;
	r = relay_of(pid, NULL);	/* by comm at the end: see merge_towers() */
	if (r >= 0)
		p->frame = relays[r].frame;
	else
		p->frame = frame_new(NULL, 0, K_PROCESS, 0);
	proc_slots.v[j] = ++nprocs;
	return p->frame;
}

/*
 * The tower of a folded stack's first frame: a relay's own label, a
 * "comm (pid N)" whose pid or comm belongs to a relay, or the name itself.
 */
static uint32_t
tower_for_name(const char *name, size_t len)
{
	const char *p;
	char comm[64];
	long pid = -1;
	size_t i, clen = len;
	int r;

	for (i = 0; i < nrelays; i++)
		if (strlen(relays[i].label) == len &&
		    !strncmp(relays[i].label, name, len))
			return relays[i].frame;
	if (nrelays) {
		if (len > 7 && name[len - 1] == ')') {
			for (p = name + len - 2; p > name && *p >= '0' && *p <= '9'; p--)
				;
			if (p - name >= 5 && p < name + len - 2 &&
			    !strncmp(p - 5, " (pid ", 6)) {
				pid = strtol(p + 1, NULL, 10);
				clen = p - 5 - name;
			}
		}
		if (clen < sizeof(comm)) {
			memcpy(comm, name, clen);
			comm[clen] = 0;
			if ((r = relay_of(pid, comm)) >= 0)
				return relays[r].frame;
		}
	}
	return frame_intern(name, len, 0, K_PROCESS);
}

/*
 * A process no relay lists by pid joins the relay that runs a program of
 * its comm. This waits for the end, when the process's own comm is known
 * (its threads may have names of their own, and sample first): the
 * process's stacks are then moved to the relay's tower, merging with the
 * stacks already there.
 */
static void
merge_towers(void)
{
	struct stack *old = stacks;
	uint32_t *old_ids = stack_ids, *ids, i, nold = nstacks, k;
	uint32_t *alias = NULL;
	int r, any = 0;

	for (i = 0; i < nprocs; i++) {
		if (frames[procs[i].frame].relay >= 0 ||
		    (r = relay_of(-1, procs[i].comm)) < 0)
			continue;
		if (!any)
			alias = ff_realloc(NULL, nframes * sizeof(*alias));
		if (!any)
			for (k = 0; k < nframes; k++)
				alias[k] = k;
		alias[procs[i].frame] = relays[r].frame;
		any = 1;
	}
	if (!any)
		return;
	stacks = NULL;
	stack_ids = NULL;
	nstacks = capstacks = 0;
	nstack_ids = capstack_ids = 0;
	free(stack_slots.v);
	stack_slots.v = NULL;
	for (i = 0; i < nold; i++) {
		ids = old_ids + old[i].off;
		ids[0] = alias[ids[0]];
		stack_add(ids, old[i].len, old[i].count[0], 0);
		stack_add(ids, old[i].len, old[i].count[1], 1);
	}
	free(old);
	free(old_ids);
	free(alias);
}

/* Name the per-pid towers, now that every process's comm is known. */
static void
name_towers(void)
{
	uint32_t i;

	for (i = 0; i < nprocs; i++) {
		struct frame *f = &frames[procs[i].frame];

		if (f->name)
			continue;
		if (asprintf(&f->name, "%s (pid %ld)", procs[i].comm,
			     procs[i].pid) < 0)
			ff_die("out of memory");
	}
}

/* Meta: --meta JSON */

static json_t *
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

static void
relays_from_meta(const json_t *meta)
{
	const json_t *arr = json_object_get(meta, "relays"), *r, *v;
	const char *role, *prog;
	struct relay *rl;
	char roleup[32], label[320];
	size_t i, k;
	int n;

	if (!json_is_array(arr))
		return;
	relays = ff_realloc(NULL, (json_array_size(arr) + 1) * sizeof(*relays));
	json_array_foreach(arr, i, r) {
		if (!json_is_object(r))
			continue;
		rl = &relays[nrelays];
		memset(rl, 0, sizeof(*rl));
		role = ff_json_str(r, "role");
		prog = ff_json_str(r, "program");
		rl->role = strdup(role ? role : "relay");
		rl->program = prog ? strdup(prog) : NULL;
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
		/* "R1 nginx (pid 123)", as much of it as the meta tells. */
		n = snprintf(label, sizeof(label), "%s", roleup);
		if (prog)
			n += snprintf(label + n, sizeof(label) - n, " %.200s",
				      basename_of(prog));
		if (rl->pid >= 0)
			snprintf(label + n, sizeof(label) - n, " (pid %ld)", rl->pid);
		rl->label = strdup(label);
		rl->frame = frame_new(strdup(rl->label), 0, K_PROCESS, 0);
		frames[rl->frame].relay = nrelays;
		nrelays++;
	}
}

/* Kinds of frames, from the module (perf) or the name (folded stacks) */

static int
starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int
kind_of_module(const char *mod)
{
	const char *b;
	size_t len = strlen(mod);

	if (!len || !strcmp(mod, "[unknown]"))
		return K_UNKNOWN;
	if (mod[0] == '[' && mod[len - 1] == ']') {
		if (!strcmp(mod, "[vdso]") || !strcmp(mod, "[vsyscall]") ||
		    !strcmp(mod, "[heap]") || !strcmp(mod, "[stack]") ||
		    !strcmp(mod, "[anon]") || !strcmp(mod, "[uprobes]") ||
		    !strcmp(mod, "[vectors]"))
			return K_LIB;
		return K_KERNEL;	/* [kernel.kallsyms], [nf_conntrack], ... */
	}
	b = basename_of(mod);
	if (starts(b, "libqpid-proton"))
		return K_PROTON;
	if (starts(b, "libc.so") || starts(b, "libc-") || starts(b, "ld-linux") ||
	    starts(b, "ld-2.") || starts(b, "ld64.so") ||
	    starts(b, "libpthread") || starts(b, "libm.so") ||
	    starts(b, "libm-") || starts(b, "libdl") || starts(b, "librt"))
		return K_LIBC;
	if (strstr(b, ".so"))
		return K_LIB;
	return K_EXE;
}

static int
kind_of_name(const char *name, size_t len)
{
	char mod[256];

	if (len >= 4 && !memcmp(name + len - 4, "_[k]", 4))
		return K_KERNEL;
	if (len == 9 && !memcmp(name, "[unknown]", 9))
		return K_UNKNOWN;
	if (len > 2 && name[0] == '[' && name[len - 1] == ']' &&
	    len - 2 < sizeof(mod)) {
		memcpy(mod, name + 1, len - 2);
		mod[len - 2] = 0;
		if (strstr(mod, ".so"))
			return kind_of_module(mod);
	}
	return K_USER;
}

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

static size_t
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

/* Per input, what was read. */
struct input {
	const char *name;
	int which;		/* 0 NEW (or the only input), 1 BASE */
	long line;
	long bad;
	uint64_t samples;
	int in_sample;
	uint32_t tower;
};

static void
sample_end(struct input *in)
{
	size_t i, j;
	uint32_t t;

	if (!in->in_sample)
		return;
	in->in_sample = 0;
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
 * this line, as "ADDR SYM (DSO)" after the last "event: " field if any.
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
	in->tower = tower_for_pid(pid, tid, comm, commlen);
	in->in_sample = 1;
	ncur = 0;
	rn = rtrim(rest, s + n - rest);
	if (rn && rest[rn - 1] == ')') {
		start = rest;
		for (q = rest; q + 1 < rest + rn; q++)
			if (q[0] == ':' && (q[1] == ' ' || q[1] == '\t'))
				start = q + 1;
		if ((f = parse_frame(start, rest + rn - start)) >= 0)
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
				cur_push(tower_for_name(p, semi - p));
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

static int force_script;

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
perf_said(int fd, int failed, char *reason, size_t n)
{
	char buf[8192], *last, *advice;
	off_t off = 0;
	ssize_t len;

	*reason = 0;
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
	len = strlen(last) < n ? (ssize_t)strlen(last) : (ssize_t)n - 1;
	memcpy(reason, last, len);
	reason[len] = 0;
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

static unsigned
perf_script_allowance(const char *path)
{
	struct stat st;

	return 30 + (stat(path, &st) == 0 ? 5 * (unsigned)(st.st_size >> 20) : 0);
}

static void
read_perf_data(struct input *in, const char *path)
{
	pipeline *p;
	pipecmd *cmd;
	const char *line;
	char *perf = ff_which("perf"), *stdbuf = ff_which("stdbuf"), reason[512];
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
		ff_die("perf script did not finish reading '%s' within the %u s it was given (30 s + 5 s per MiB) and was stopped",
		       path, allowance);
	perf_said(errfd, status != 0, reason, sizeof(reason));
	close(errfd);
	if (status && *reason)
		ff_die("perf script cannot read '%s': %s", path, reason);
	if (status)
		ff_die("perf script %s on '%s'", how ? how : "failed", path);
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
static ssize_t
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
			ff_die("'%s': not a perf.data file, perf script output or folded stacks (binary data)",
			       in->name);
		if (!rtrim(line, n) || line[0] == '#') {
			in->line++;
			continue;
		}
		held[nheld] = xstrndup(line, n);
		heldlen[nheld++] = n;
	}
	if (!script && nheld) {
		if (held[0][0] == '\t' || (nheld == 2 && held[1][0] == '\t'))
			script = 1;
		else if (looks_folded(held[0], heldlen[0]))
			script = 0;
		else if (header_fields(held[0], rtrim(held[0], heldlen[0]), &cl,
				       &pid, &tid))
			script = 1;
		else
			ff_die("'%s': not a perf.data file, perf script output or folded stacks",
			       in->name);
	}
	for (i = 0; i < nheld; i++) {
		if (script)
			script_line(in, held[i], heldlen[i]);
		else if (i > 0)
			folded_next(in, held[i], heldlen[i]);
		else if (folded_line(in, held[i], heldlen[i]) < 0)
			ff_die("'%s': not a perf.data file, perf script output or folded stacks",
			       in->name);
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
}

static void
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
	if (in->bad && in->samples == 0)
		ff_die("'%s': not a perf.data file, perf script output or folded stacks",
		       path);
}

/* Ordering and the tree */

static uint32_t *frame_rank;

static int
frame_cmp(const void *a, const void *b)
{
	const struct frame *x = &frames[*(const uint32_t *)a];
	const struct frame *y = &frames[*(const uint32_t *)b];
	int c;

	/* Relay towers first, in the order the meta lists them. */
	if ((x->relay >= 0) != (y->relay >= 0))
		return x->relay >= 0 ? -1 : 1;
	if (x->relay != y->relay)
		return x->relay - y->relay;
	if ((c = strcmp(x->name, y->name)))
		return c;
	if ((c = strcmp(modules[x->module], modules[y->module])))
		return c;
	return (int)x->kind - (int)y->kind;
}

static void
rank_frames(void)
{
	uint32_t *order = ff_realloc(NULL, nframes * sizeof(*order)), i;

	for (i = 0; i < nframes; i++)
		order[i] = i;
	qsort(order, nframes, sizeof(*order), frame_cmp);
	frame_rank = ff_realloc(NULL, nframes * sizeof(*frame_rank));
	for (i = 0; i < nframes; i++)
		frame_rank[order[i]] = i;
	free(order);
}

static int
stack_cmp(const void *a, const void *b)
{
	const struct stack *x = &stacks[*(const uint32_t *)a];
	const struct stack *y = &stacks[*(const uint32_t *)b];
	const uint32_t *p = stack_ids + x->off, *q = stack_ids + y->off;
	uint32_t i, n = x->len < y->len ? x->len : y->len;

	for (i = 0; i < n; i++)
		if (p[i] != q[i])
			return frame_rank[p[i]] < frame_rank[q[i]] ? -1 : 1;
	return (x->len > y->len) - (x->len < y->len);
}

static uint32_t *
sorted_stacks(void)
{
	uint32_t *order = ff_realloc(NULL, nstacks * sizeof(*order)), i;

	for (i = 0; i < nstacks; i++)
		order[i] = i;
	qsort(order, nstacks, sizeof(*order), stack_cmp);
	return order;
}

/* The tree in preorder: frame, depth, samples in NEW and in BASE. */
struct node {
	uint32_t frame, depth;
	uint64_t count[2];
};
static struct node *nodes;
static size_t nnodes, capnodes;

/*
 * Sorted stacks share their prefixes with their neighbours, so one sweep
 * builds the tree: keep the path of open nodes, close what the next stack
 * does not share, open what it adds, and count the stack on its path.
 */
static void
build_tree(const uint32_t *order)
{
	size_t *path = ff_realloc(NULL, sizeof(*path)), npath = 1, cappath = 1;
	uint32_t i, k, len;
	const uint32_t *ids;
	const struct stack *s;
	int w;

	GROW(nodes, nnodes, capnodes);
	nodes[nnodes++] = (struct node){ root_frame, 0, { 0, 0 } };
	path[0] = 0;
	for (i = 0; i < nstacks; i++) {
		s = &stacks[order[i]];
		ids = stack_ids + s->off;
		len = s->len;
		for (k = 0; k < len && k + 1 < npath &&
		     nodes[path[k + 1]].frame == ids[k]; k++)
			;
		npath = k + 1;
		for (; k < len; k++) {
			GROW(nodes, nnodes, capnodes);
			nodes[nnodes] = (struct node){ ids[k], k + 1, { 0, 0 } };
			GROW(path, npath, cappath);
			path[npath++] = nnodes++;
		}
		for (k = 0; k < npath; k++)
			for (w = 0; w < 2; w++)
				nodes[path[k]].count[w] += s->count[w];
	}
	free(path);
}

/*
 * Drop the nodes NEW has no samples in (only BASE had them): their
 * subtrees have none either, so the preorder stays whole.
 */
static void
prune_empty(void)
{
	size_t i, j = 0;

	for (i = 0; i < nnodes; i++)
		if (nodes[i].count[0] || i == 0)
			nodes[j++] = nodes[i];
	nnodes = j;
}

/* Output */

struct buf {
	char *s;
	size_t len, cap;
};

static void
buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = ff_realloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

static void
buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void
buf_u64(struct buf *b, uint64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);

	buf_add(b, tmp, n);
}

static void
folded_out(struct buf *b, const uint32_t *order, int diff)
{
	const struct stack *s;
	uint32_t i, k;

	for (i = 0; i < nstacks; i++) {
		s = &stacks[order[i]];
		for (k = 0; k < s->len; k++) {
			if (k)
				buf_add(b, ";", 1);
			buf_str(b, frames[stack_ids[s->off + k]].name);
		}
		buf_add(b, " ", 1);
		if (diff) {
			buf_u64(b, s->count[1]);
			buf_add(b, " ", 1);
		}
		buf_u64(b, s->count[0]);
		buf_add(b, "\n", 1);
	}
}

/*
 * JSON text inside <script>: a '<' only occurs within strings, where
 * "\u003c" means the same, and then no frame name can close the element.
 */
static void
buf_json_for_script(struct buf *b, const char *json, size_t n)
{
	const char *p = json, *lt;

	while ((lt = memchr(p, '<', json + n - p))) {
		buf_add(b, p, lt - p);
		buf_str(b, "\\u003c");
		p = lt + 1;
	}
	buf_add(b, p, json + n - p);
}

static const char *
file_date(const char *path)
{
	static char buf[32];
	struct stat st;
	struct tm tm;

	if (!path || !strcmp(path, "-") || stat(path, &st) < 0)
		return ff_iso_time();
	gmtime_r(&st.st_mtime, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

static void
data_out(struct buf *b, json_t *meta, int diff, uint64_t total,
	 uint64_t base_total)
{
	json_t *d = json_object(), *names = json_array(), *mods = json_array(),
		*fmod = json_array(), *fkind = json_array(), *kinds = json_array();
	char *text;
	size_t i;
	uint32_t f;

	for (i = 0; kind_names[i]; i++)
		json_array_append_new(kinds, json_string(kind_names[i]));
	for (i = 0; i < nmodules; i++)
		json_array_append_new(mods, ff_json_text(modules[i]));
	for (f = 0; f < nframes; f++) {
		json_array_append_new(names, ff_json_text(frames[f].name));
		json_array_append_new(fmod, json_integer(frames[f].module));
		json_array_append_new(fkind, json_integer(frames[f].kind));
	}
	json_object_set(d, "meta", meta);
	json_object_set_new(d, "diff", json_boolean(diff));
	json_object_set_new(d, "total", json_integer(total));
	json_object_set_new(d, "base_total",
			    diff ? json_integer(base_total) : json_null());
	json_object_set_new(d, "kinds", kinds);
	json_object_set_new(d, "modules", mods);
	json_object_set_new(d, "names", names);
	json_object_set_new(d, "fmod", fmod);
	json_object_set_new(d, "fkind", fkind);
	text = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(d);
	if (!text)
		ff_die("out of memory");
	/*
	 * The node arrays are plain integers, written directly: as jansson
	 * values a million nodes would cost hundreds of megabytes.
	 */
	buf_json_for_script(b, text, strlen(text) - 1);
	free(text);
	buf_str(b, ",\"nodes\":[");
	for (i = 0; i < nnodes; i++) {
		if (i)
			buf_add(b, ",", 1);
		buf_u64(b, nodes[i].frame);
		buf_add(b, ",", 1);
		buf_u64(b, nodes[i].depth);
		buf_add(b, ",", 1);
		buf_u64(b, nodes[i].count[0]);
	}
	buf_add(b, "]", 1);
	if (diff) {
		buf_str(b, ",\"base\":[");
		for (i = 0; i < nnodes; i++) {
			if (i)
				buf_add(b, ",", 1);
			buf_u64(b, nodes[i].count[1]);
		}
		buf_add(b, "]", 1);
	}
	buf_add(b, "}", 1);
}

static char *
asset(const char *name)
{
	char rel[256], *path, *text;

	snprintf(rel, sizeof(rel), "share/flamegraph/%s", name);
	path = ff_datapath(rel);
	if (!path)
		ff_die("cannot find '%s' beside the program or under the install prefix",
		       rel);
	text = ff_read_file(path, NULL);
	if (!text)
		ff_die("cannot read '%s': %s", path, strerror(errno));
	free(path);
	return text;
}

/* The template with @FLAME_CSS@, @FLAME_JS@ and @FLAME_DATA@ filled in. */
static void
html_out(struct buf *b, json_t *meta, int diff, uint64_t total,
	 uint64_t base_total)
{
	static const char *const marks[] = { "@FLAME_CSS@", "@FLAME_DATA@", "@FLAME_JS@" };
	char *html = asset("flamegraph.html"), *css = asset("flamegraph.css"),
		*js = asset("flamegraph.js"), *p = html, *q;
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(marks); i++) {
		q = strstr(p, marks[i]);
		if (!q)
			ff_die("share/flamegraph/flamegraph.html: no %s in the template",
			       marks[i]);
		buf_add(b, p, q - p);
		if (i == 0)
			buf_str(b, css);
		else if (i == 1)
			data_out(b, meta, diff, total, base_total);
		else
			buf_str(b, js);
		p = q + strlen(marks[i]);
	}
	buf_str(b, p);
	free(html);
	free(css);
	free(js);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FF_LONGOPT_VERSION,
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "folded", no_argument, NULL, 'F' },
		{ "script", no_argument, NULL, 'S' },
		{ "meta", required_argument, NULL, 'M' },
		{ "diff", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = NULL, *title = NULL, *meta_arg = NULL, *path;
	struct ff_out checked;
	struct input in[2];
	int c, folded = 0, diff = 0, nin, k;
	struct buf b = { NULL, 0, 0 };
	uint32_t *order;
	json_t *meta;

	ff_setprog(argv[0]);
	opterr = 0;
	while ((c = ff_getopt(argc, argv, "+:ho:t:", longopts, usage)) != -1)
		switch (c) {
		case 'h': ff_usage(usage, 0);
		case 'o': out = optarg; break;
		case 't': title = optarg; break;
		case 'F': folded = 1; break;
		case 'S': force_script = 1; break;
		case 'M': meta_arg = optarg; break;
		case 'D': diff = 1; break;
		}
	nin = argc - optind;
	if (diff && nin != 2)
		ff_usage_error(usage, "--diff needs two files, BASE and NEW");
	if (!diff && nin > 1)
		ff_usage_error(usage, "one input file at most (or --diff BASE NEW)");
	if (diff && !strcmp(argv[optind], "-") && !strcmp(argv[optind + 1], "-"))
		ff_usage_error(usage, "--diff: only one input can be standard input");
	/* Before the (long) read: a directory in the way fails now. */
	if (out && ff_out_check(&checked, out, 0, NULL) < 0)
		ff_die("%s", checked.err);
	/* -o perf.data perf.data would replace the recording with its page. */
	for (k = 0; out && checked.exists && k < (nin ? nin : 1); k++) {
		struct stat so, si;

		if (stat(checked.path, &so) == 0 && stat(nin ? argv[optind + k] : "perf.data", &si) == 0 &&
		    so.st_dev == si.st_dev && so.st_ino == si.st_ino)
			ff_die("cannot write '%s': it is the input '%s'", out,
			       nin ? argv[optind + k] : "perf.data");
	}

	meta = meta_arg ? meta_load(meta_arg) : json_object();
	root_frame = frame_intern("all", 3, 0, K_ROOT);
	module_intern("", 0);
	relays_from_meta(meta);

	memset(in, 0, sizeof(in));
	if (diff) {
		in[1].which = 1;
		read_input(&in[1], argv[optind]);
		in[0].which = 0;
		read_input(&in[0], argv[optind + 1]);
	} else {
		read_input(&in[0], nin ? argv[optind] : "perf.data");
	}
	for (k = 0; k <= diff; k++)
		if (in[k].bad)
			ff_info("%s: %ld line%s not understood", in[k].name, in[k].bad,
				in[k].bad == 1 ? "" : "s");
	if (!in[0].samples)
		ff_warn("no samples in '%s'", in[0].name);
	merge_towers();
	name_towers();
	rank_frames();
	order = sorted_stacks();

	if (folded) {
		folded_out(&b, order, diff);
	} else {
		path = diff ? argv[optind + 1] : nin ? argv[optind] : "perf.data";
		if (title)
			json_object_set_new(meta, "title", json_string(title));
		else if (!ff_json_str(meta, "title"))
			json_object_set_new(meta, "title", json_string(
				diff ? "Differential flame graph" : "Flame graph"));
		if (!ff_json_str(meta, "date"))
			json_object_set_new(meta, "date", json_string(
				ff_json_str(meta, "time") ? ff_json_str(meta, "time")
				: file_date(path)));
		json_object_set_new(meta, "source", ff_json_text(
			diff ? argv[optind + 1] : path));
		if (diff)
			json_object_set_new(meta, "base_source",
					    ff_json_text(argv[optind]));
		build_tree(order);
		if (diff)
			prune_empty();
		html_out(&b, meta, diff, in[0].samples, in[1].samples);
	}
	free(order);
	json_decref(meta);
	if (out) {
		if (ff_write_file(out, b.s ? b.s : "", 0644) < 0)
			return 1;
	} else if (b.len) {
		fwrite(b.s, 1, b.len, stdout);
	}
	free(b.s);
	return ff_finish();
}
