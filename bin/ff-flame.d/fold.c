/*
 * ff-flame's tables: modules, frames and distinct stacks, each interned in
 * an open-addressing hash table; the kinds of frames; and, at the end, the
 * stacks sorted and swept into the tree the page draws.
 */
#include "ff-flame.h"

#include <string.h>

struct frame *frames;
uint32_t nframes;
static uint32_t capframes;
static struct slots frame_slots;

char **modules;
unsigned char *module_kind;
static uint64_t *module_hash;
uint32_t nmodules;
static uint32_t capmodules;
static struct slots module_slots;

struct stack *stacks;
uint32_t nstacks;
static uint32_t capstacks;
static struct slots stack_slots;
uint32_t *stack_ids;
static size_t nstack_ids, capstack_ids;

uint32_t root_frame;

uint32_t *cur;
size_t ncur;
static size_t capcur;

char *
xstrndup(const char *s, size_t n)
{
	char *p = ff_realloc(NULL, n + 1);

	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* The 64-bit finalizer of MurmurHash3. */
uint64_t
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
uint64_t
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
void
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

uint32_t
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

uint32_t
frame_new(char *name, uint32_t module, int kind, uint64_t hash)
{
	GROW(frames, nframes, capframes);
	frames[nframes] = (struct frame){ name, module, kind, -1, hash, NULL };
	return nframes++;
}

/*
 * The frame named `name`: a function is one frame whatever module and
 * kind it came with, so that a recording and folded text (which holds
 * names alone) meet in one graph, and a diff of the two matches every
 * frame; the module and kind are the first that say more than a name
 * does (a module). Process towers and the root are frames of their own
 * beside functions of the same name. A ';' in a name would break the
 * folded format and a control character the page: both are replaced.
 */
uint32_t
frame_intern(const char *name, size_t len, uint32_t module, int kind)
{
	int tower = kind == K_ROOT || kind == K_PROCESS;
	uint64_t h = mix(hash_bytes(HASH_INIT, name, len) ^ (uint64_t)tower);
	struct frame *f;
	size_t j, k;
	uint32_t i;
	char *copy;

	slots_grow(&frame_slots, nframes, frame_hash_of);
	for (j = h & frame_slots.mask; frame_slots.v[j];
	     j = (j + 1) & frame_slots.mask) {
		f = &frames[frame_slots.v[j] - 1];
		if (f->hash == h && (f->kind == K_ROOT || f->kind == K_PROCESS) == tower &&
		    !strncmp(f->name, name, len) && !f->name[len]) {
			if (!f->module && module) {
				f->module = module;
				f->kind = kind;
			}
			return frame_slots.v[j] - 1;
		}
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

void
cur_push(uint32_t id)
{
	GROW(cur, ncur, capcur);
	cur[ncur++] = id;
}

/* Count `count` samples of the stack ids[0..len) (root first) in `which`. */
void
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

/*
 * Each stack's first frame becomes alias[] of it (a process's tower, its
 * relay's): stacks that become the same merge, their counts added.
 */
void
stacks_alias(const uint32_t *alias)
{
	struct stack *old = stacks;
	uint32_t *old_ids = stack_ids, *ids, i, nold = nstacks;

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
}

const char *
basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Kinds of frames, from the module (perf) or the name (folded stacks) */

static int
starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

int
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

int
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

void
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

uint32_t *
sorted_stacks(void)
{
	uint32_t *order = ff_realloc(NULL, nstacks * sizeof(*order)), i;

	for (i = 0; i < nstacks; i++)
		order[i] = i;
	qsort(order, nstacks, sizeof(*order), stack_cmp);
	return order;
}

struct node *nodes;
size_t nnodes;
static size_t capnodes;

/*
 * Sorted stacks share their prefixes with their neighbours, so one sweep
 * builds the tree: keep the path of open nodes, close what the next stack
 * does not share, open what it adds, and count the stack on its path.
 */
void
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
void
prune_empty(void)
{
	size_t i, j = 0;

	for (i = 0; i < nnodes; i++)
		if (nodes[i].count[0] || i == 0)
			nodes[j++] = nodes[i];
	nnodes = j;
}
