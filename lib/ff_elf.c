/*
 * ff_elf.c - was a program built with frame pointers? Read from the
 * DW_AT_producer strings GCC leaves in its debug sections.
 */
#include "ff_base.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Does this GCC producer string ("GNU C17 12.2.0 -mtune=generic -O2 -g
 * -fno-omit-frame-pointer") mean the unit keeps frame pointers? The last of
 * -fomit/-fno-omit wins; without either, GCC omits them from -O1 up.
 */
static int
producer_keeps_fp(const char *s)
{
	const char *p, *no = NULL, *yes = NULL, *opt = NULL;

	for (p = s; (p = strstr(p, "-fno-omit-frame-pointer")); p++)
		no = p;
	for (p = s; (p = strstr(p, "-fomit-frame-pointer")); p++)
		yes = p;
	if (no || yes)
		return no > yes;
	for (p = s; (p = strstr(p, " -O")); p++)
		opt = p + 3;
	return !opt || *opt == '0';
}

static void
scan_producers(const char *data, size_t len, struct ff_fp_info *fp)
{
	const char *p = data, *end = data + len, *nul;

	while (p < end && (p = memmem(p, end - p, "GNU C", 5))) {
		nul = memchr(p, 0, end - p);
		if (!nul)
			break;
		/* "GNU C17 ...", "GNU C++17 ...", "GNU C11 ..." but not "GNU CC" */
		if (p[5] == '+' || (p[5] >= '0' && p[5] <= '9') || p[5] == ' ') {
			if (producer_keeps_fp(p))
				fp->units_with++;
			else {
				if (!fp->units_without)
					snprintf(fp->example, sizeof(fp->example), "%s", p);
				fp->units_without++;
			}
		}
		p = nul + 1;
	}
}

int
ff_env_frame_pointers(const char *path, struct ff_fp_info *fp)
{
	const unsigned char *m;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh, *strtab;
	struct stat st;
	size_t size;
	int fd, i, compressed = 0, debug_info = 0;

	memset(fp, 0, sizeof(*fp));
	snprintf(fp->example, sizeof(fp->example), "not a readable 64-bit ELF file");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	size = st.st_size;
	m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	eh = (const Elf64_Ehdr *)m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(Elf64_Shdr) ||
	    eh->e_shstrndx >= eh->e_shnum) {
		munmap((void *)m, size);
		return -1;
	}
	fp->example[0] = 0;
	sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	strtab = &sh[eh->e_shstrndx];
	for (i = 0; i < eh->e_shnum; i++) {
		const char *name;

		if (strtab->sh_offset + sh[i].sh_name >= size ||
		    sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
		    sh[i].sh_type == SHT_NOBITS)
			continue;
		name = (const char *)m + strtab->sh_offset + sh[i].sh_name;
		if (strcmp(name, ".debug_str") && strcmp(name, ".debug_info"))
			continue;
		debug_info |= !strcmp(name, ".debug_info");
		if (sh[i].sh_flags & SHF_COMPRESSED) {
			compressed = 1;
			continue;
		}
		scan_producers((const char *)m + sh[i].sh_offset, sh[i].sh_size, fp);
	}
	munmap((void *)m, size);
	if (!fp->units_with && !fp->units_without) {
		snprintf(fp->example, sizeof(fp->example), "%s", compressed ? "compressed debug info" :
			 !debug_info ? "no debug information: stripped, or built without -g" :
			 "no GCC producer strings in its debug information");
		return -1;
	}
	return fp->units_without ? 0 : 1;
}

char *
ff_elf_runpath(const char *path)
{
	const unsigned char *m;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	struct stat st;
	char *r = NULL, *origin, *slash;
	size_t size;
	int fd, i;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return NULL;
	}
	size = st.st_size;
	m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	eh = (const Elf64_Ehdr *)m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(Elf64_Shdr)) {
		munmap((void *)m, size);
		return NULL;
	}
	sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	for (i = 0; i < eh->e_shnum && !r; i++) {
		const Elf64_Shdr *str;
		const Elf64_Dyn *d;
		size_t k, nd;

		if (sh[i].sh_type != SHT_DYNAMIC || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset)
			continue;
		str = &sh[sh[i].sh_link];
		if (str->sh_offset > size || str->sh_size > size - str->sh_offset)
			continue;
		d = (const Elf64_Dyn *)(m + sh[i].sh_offset);
		nd = sh[i].sh_size / sizeof(*d);
		/* DT_RUNPATH wins over DT_RPATH, as for the loader. */
		for (k = 0; k < nd && d[k].d_tag != DT_NULL; k++)
			if ((d[k].d_tag == DT_RUNPATH || (d[k].d_tag == DT_RPATH && !r)) &&
			    d[k].d_un.d_val < str->sh_size) {
				const char *s = (const char *)m + str->sh_offset + d[k].d_un.d_val;

				free(r);
				r = strndup(s, str->sh_size - d[k].d_un.d_val);
				if (d[k].d_tag == DT_RUNPATH)
					break;
			}
	}
	munmap((void *)m, size);
	if (!r || !*r || !strstr(r, "$ORIGIN"))
		return r && *r ? r : (free(r), NULL);
	/* $ORIGIN: the directory of the program. */
	origin = ff_strdup(path);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = 0;
	{
		struct ff_buf b = FF_BUF_INIT;
		const char *p = r, *q;

		while ((q = strstr(p, "$ORIGIN"))) {
			ff_buf_add(&b, p, q - p);
			ff_buf_addstr(&b, slash ? origin : ".");
			p = q + 7;
		}
		ff_buf_addstr(&b, p);
		free(r);
		r = ff_buf_take(&b);
	}
	free(origin);
	return r;
}
