/*
 * ff-flame's private header: what its files share.
 *
 * main.c    options, the output file, the order of the work
 * input.c   the readers: perf.data through perf script, perf script text,
 *           folded stacks; the line cap and binary detection
 * fold.c    the tables of modules, frames and distinct stacks, the kinds
 *           of frames, and the sorted stacks and tree they give
 * meta.c    relays and their towers: --meta, --events and --base-events,
 *           matching processes to relays by pid or comm (within each of
 *           --parts, and each side of --diff)
 * html.c    output: folded stacks, the page (template and its JSON data)
 */
#ifndef FF_FLAME_H
#define FF_FLAME_H

#include "ff.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

extern const char usage[];

enum kind {
	K_ROOT, K_PROCESS, K_KERNEL, K_EXE, K_PROTON, K_LIB, K_LIBC, K_UNKNOWN,
	K_USER
};
extern const char *const kind_names[];

/*
 * Frames are interned by (name, module, kind). Process frames of perf.data
 * input (one per pid) and relay towers are not in the hash: they are found
 * by pid, and at the end, once the process's own comm is known, each joins
 * the tower of its relay or of its comm. A tower's name never holds a pid,
 * so the towers of two recordings match (--diff); its pids are its detail.
 */
struct frame {
	char *name;
	uint32_t module;	/* index into modules; 0 is "" */
	unsigned char kind;
	int relay;		/* a relay tower: its index in relays; else -1 */
	uint64_t hash;
	char *detail;		/* a tower: its processes' pids, or NULL */
};

/*
 * A differential graph ranks frames by how their share of the samples
 * changed: with fewer samples than this on either side, the shares are
 * too coarse to rank, and the page and flimflam's summary say so.
 */
#define RANK_MIN_SAMPLES FF_FLAME_RANK_MIN_SAMPLES

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
	int part;		/* --parts: the input that holds it; -1 any */
	int which;		/* --diff: 0 NEW, 1 BASE (--base-events); -1 either */
};

/* The tree in preorder: frame, depth, samples in NEW and in BASE. */
struct node {
	uint32_t frame, depth;
	uint64_t count[2];
};

/* Per input, what was read. */
struct input {
	const char *name;
	int which;		/* 0 NEW (or the only input), 1 BASE */
	long line;
	long bad;
	uint64_t samples;
	int in_sample;
	uint32_t tower;
	int part;		/* its index among --parts (0 for one input) */
};

/* fold.c: the tables */
extern struct frame *frames;
extern uint32_t nframes;
extern char **modules;
extern unsigned char *module_kind;
extern uint32_t nmodules;
extern struct stack *stacks;
extern uint32_t nstacks;
extern uint32_t *stack_ids;
extern uint32_t root_frame;
extern struct node *nodes;
extern size_t nnodes;
/* The sample being read: leaf first for perf script, root first for folded. */
extern uint32_t *cur;
extern size_t ncur;

/* meta.c: the relays */
extern struct relay *relays;
extern size_t nrelays;

/* Append to arr[n] (capacity cap), growing it by doubling. */
#define GROW(arr, n, cap) do { \
		if ((n) >= (cap)) { \
			(cap) = (cap) ? (cap) * 2 : 64; \
			(arr) = ff_realloc((arr), (cap) * sizeof(*(arr))); \
		} \
	} while (0)

#define HASH_INIT 0xcbf29ce484222325ULL

/* fold.c */
char *xstrndup(const char *s, size_t n);
uint64_t mix(uint64_t h);
uint64_t hash_bytes(uint64_t h, const void *p, size_t n);
void slots_grow(struct slots *t, uint32_t n, uint64_t (*hash)(uint32_t));
uint32_t module_intern(const char *s, size_t len);
uint32_t frame_new(char *name, uint32_t module, int kind, uint64_t hash);
uint32_t frame_intern(const char *name, size_t len, uint32_t module, int kind);
void cur_push(uint32_t id);
void stack_add(const uint32_t *ids, size_t len, uint64_t count, int which);
void stacks_alias(const uint32_t *alias);
const char *basename_of(const char *path);
int kind_of_module(const char *mod);
int kind_of_name(const char *name, size_t len);
void rank_frames(void);
uint32_t *sorted_stacks(void);
void build_tree(const uint32_t *order);
void prune_empty(void);

/* meta.c */
json_t *meta_load(const char *arg);
json_t *meta_from_events(const char *path);
void relays_from_meta(const json_t *meta, int which);
void relays_parts(char *const roles[], char *const files[], int nparts);
uint32_t tower_for_pid(const struct input *in, long pid, long tid, const char *comm,
		       size_t commlen);
uint32_t tower_for_name(const struct input *in, const char *name, size_t len);
void merge_towers(void);
void name_towers(int diff);

/* input.c */
extern int force_script;
size_t rtrim(const char *s, size_t n);
ssize_t get_line(struct input *in, char **line, size_t *cap, FILE *fp);
void read_input(struct input *in, const char *path);

/* html.c */
void folded_out(struct ff_buf *b, const uint32_t *order, int diff);
const char *file_date(const char *path);
void html_out(struct ff_buf *b, json_t *meta, int diff, uint64_t total,
	      uint64_t base_total);
int too_few_to_rank(uint64_t total, uint64_t base_total);

/* changes.c: --changes, one line of JSON (malloc'd, with its newline) */
char *changes_json(void);

#endif
