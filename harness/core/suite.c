/* suite.c - finds KernelBench-format problem files, checks that each is usable without running it,
 * hashes it, and resolves problem selectors. Bad files are reported with a reason and skipped. Also the
 * names KernelBench gives the candidates of a generations folder. */
#include "suite.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sha256.h"
#include "strbuf.h"

#define MAX_PROBLEM_BYTES (4u << 20)

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int has_levels(const char *dir)
{
	for (int l = 1; l <= 4; l++) {
		char *p = xstrfmt("%s/level%d", dir, l);
		int ok = is_dir(p);
		free(p);
		if (ok)
			return 1;
	}
	return 0;
}

/* The folder that holds level1/..: the root itself or its KernelBench/ subfolder (upstream layout). */
static int resolve_root(const char *home, const char *root, char **out, struct sb_error *err)
{
	char real[PATH_MAX];
	/* A test control, not an interface: the end-to-end tests put the bundled suite's small-shape twin
	 * (tests/fixtures/suite_small/) in its place, and this is the one place that reads it. */
	const char *small = getenv("STITCHBENCH_TEST_SUITE");
	char *base = root ? xstrdup(root) : small && *small ? xstrdup(small) : xstrfmt("%s/kernelbench/suite", home);
	if (!realpath(base, real)) {
		int e = errno;
		int rc = sb_error_set(err, SB_EINPUT, "%s: %s%s", base, strerror(e),
				      root ? " (check --kernelbench-root or problems.root)" : " (the bundled suite is missing: is STITCHBENCH_HOME right?)");
		free(base);
		return rc;
	}
	free(base);
	if (has_levels(real)) {
		*out = xstrdup(real);
		return 0;
	}
	char *kb = xstrfmt("%s/KernelBench", real);
	if (has_levels(kb)) {
		*out = kb;
		return 0;
	}
	free(kb);
	return sb_error_set(err, SB_EINPUT,
			    "%s holds no problem folders: expected level1/ .. level4/ in it or in its KernelBench/ subfolder",
			    real);
}

static void add_skip(struct suite *s, const char *path, const char *reason)
{
	s->skipped = xrealloc(s->skipped, (s->nskipped + 1) * sizeof(*s->skipped));
	s->skipped[s->nskipped].path = xstrdup(path);
	s->skipped[s->nskipped].reason = xstrdup(reason);
	s->nskipped++;
}

/* Parses "ID_Name.py"; returns 0 and fills id and name, or -1. */
static int parse_filename(const char *fn, int *id, char **name)
{
	size_t n = strlen(fn), digits = 0;
	while (isdigit((unsigned char)fn[digits]))
		digits++;
	if (!digits || digits > 6 || fn[digits] != '_' || n < digits + 5 || !ends_with(fn, ".py"))
		return -1;
	*id = atoi(fn);
	*name = xstrndup(fn + digits + 1, n - digits - 1 - 3);
	return 0;
}

/* A top-level definition: the line starts at column 0 with `prefix` followed by a name boundary. */
static int defines(const char *line, const char *prefix)
{
	size_t n = strlen(prefix);
	return !strncmp(line, prefix, n) && (line[n] == '(' || line[n] == ' ' || line[n] == ':');
}

static int count_of(const char *s, const char *needle)
{
	int n = 0;
	for (const char *t = s; (t = strstr(t, needle)); t += strlen(needle))
		n++;
	return n;
}

/* Why a file cannot be a problem, or NULL. Checks the source text only: the parent never runs
 * problem code (DESIGN §1); lines inside triple-quoted strings are ignored. */
static const char *check_source(const char *src)
{
	int has_model = 0, has_inputs = 0, has_init = 0, in_str = 0;
	const char *p = src;
	if (!*src)
		return "empty file";
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *line = xstrndup(p, len);
		if (!in_str) {
			has_model |= defines(line, "class Model");
			has_inputs |= defines(line, "def get_inputs");
			has_init |= defines(line, "def get_init_inputs");
		}
		/* an odd number of triple quotes on a line opens or closes a string */
		int q = count_of(line, "\"\"\"") + count_of(line, "'''");
		if (q % 2)
			in_str = !in_str;
		free(line);
		p += len + (eol ? 1 : 0);
	}
	if (!has_model)
		return "no top-level `class Model`";
	if (!has_inputs)
		return "no top-level `def get_inputs()`";
	if (!has_init)
		return "no top-level `def get_init_inputs()`";
	return NULL;
}

static int cmp_problem(const void *a, const void *b)
{
	const struct problem *x = a, *y = b;
	return x->level != y->level ? x->level - y->level : x->id - y->id;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void load_level(struct suite *s, int level)
{
	char *dir = xstrfmt("%s/level%d", s->root, level);
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t nnames = 0;
	if (!d) {
		free(dir);
		return;
	}
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] == '.' || de->d_name[0] == '_' || !ends_with(de->d_name, ".py"))
			continue;
		names = xrealloc(names, (nnames + 1) * sizeof(*names));
		names[nnames++] = xstrdup(de->d_name);
	}
	closedir(d);
	/* sorted, so that which of two duplicate ids wins does not depend on readdir order */
	qsort(names, nnames, sizeof(*names), cmp_str);
	for (size_t i = 0; i < nnames; i++) {
		char *path = xstrfmt("%s/%s", dir, names[i]);
		struct problem p = { .level = level };
		struct strbuf src = STRBUF_INIT;
		const char *why = NULL;
		char msg[512];
		int rc;
		if (parse_filename(names[i], &p.id, &p.name)) {
			why = "file name is not ID_Name.py (e.g. 19_ReLU.py)";
		} else if ((rc = strbuf_read_file(&src, path, MAX_PROBLEM_BYTES)) < 0) {
			snprintf(msg, sizeof(msg), "cannot read: %s", rc == -EFBIG ? "larger than 4 MiB" : strerror(-rc));
			why = msg;
		} else if ((why = check_source(src.buf)) == NULL) {
			const struct problem *dup = suite_find(s, level, p.id);
			if (dup) {
				snprintf(msg, sizeof(msg), "duplicate id L%d/%d (also %s); this one is skipped", level, p.id, dup->path);
				why = msg;
			}
		}
		if (why) {
			add_skip(s, path, why);
			free(p.name);
			free(path);
		} else {
			sha256_hex(src.buf, src.len, p.sha256);
			p.path = path;
			s->problems = xrealloc(s->problems, (s->nproblems + 1) * sizeof(*s->problems));
			s->problems[s->nproblems++] = p;
		}
		strbuf_release(&src);
		free(names[i]);
	}
	free(names);
	free(dir);
}

int suite_load(struct suite *s, const char *home, const char *root, struct sb_error *err)
{
	memset(s, 0, sizeof(*s));
	int rc = resolve_root(home, root, &s->root, err);
	if (rc)
		return rc;
	for (int level = 1; level <= 4; level++)
		load_level(s, level);
	qsort(s->problems, s->nproblems, sizeof(*s->problems), cmp_problem);
	return 0;
}

void suite_release(struct suite *s)
{
	for (size_t i = 0; i < s->nproblems; i++) {
		free(s->problems[i].name);
		free(s->problems[i].path);
	}
	for (size_t i = 0; i < s->nskipped; i++) {
		free(s->skipped[i].path);
		free(s->skipped[i].reason);
	}
	free(s->problems);
	free(s->skipped);
	free(s->root);
	memset(s, 0, sizeof(*s));
}

const struct problem *suite_find(const struct suite *s, int level, int id)
{
	for (size_t i = 0; i < s->nproblems; i++)
		if (s->problems[i].level == level && s->problems[i].id == id)
			return &s->problems[i];
	return NULL;
}

/* Reads a decimal number at *p, advancing it; -1 when there is none. */
static long read_num(const char **p)
{
	char *end;
	if (!isdigit((unsigned char)**p))
		return -1;
	long v = strtol(*p, &end, 10);
	*p = end;
	return v;
}

/* Selector grammar: [L]level [ "/" ( "*" | id | id "-" id ) ] */
static int parse_selector(const char *sel, int *level, long *lo, long *hi)
{
	const char *p = sel;
	if (*p == 'L' || *p == 'l')
		p++;
	long lv = read_num(&p);
	if (lv < 1 || lv > 4)
		return -1;
	*level = (int)lv;
	*lo = 0;
	*hi = LONG_MAX;
	if (!*p)
		return 0;
	if (*p++ != '/')
		return -1;
	if (!strcmp(p, "*"))
		return 0;
	if ((*lo = read_num(&p)) < 0)
		return -1;
	*hi = *lo;
	if (*p == '-') {
		p++;
		if ((*hi = read_num(&p)) < *lo)
			return -1;
	}
	return *p ? -1 : 0;
}

int problem_ref_parse(const char *ref, int *level, int *id, struct sb_error *err)
{
	long lo, hi;
	if (parse_selector(ref, level, &lo, &hi) || lo != hi || lo < 0 || lo > INT_MAX)
		return sb_error_set(err, SB_EINPUT, "'%s' is not a problem id: expected L<level>/<id>, e.g. L1/19", ref);
	*id = (int)lo;
	return 0;
}

int suite_select(const struct suite *s, const int levels[4], char *const *selectors, size_t nselectors,
		 const struct problem ***out, size_t *nout, struct sb_error *err)
{
	char *picked = xcalloc(s->nproblems, 1);
	for (size_t k = 0; k < nselectors; k++) {
		int level, hits = 0;
		long lo, hi;
		if (parse_selector(selectors[k], &level, &lo, &hi)) {
			free(picked);
			return sb_error_set(err, SB_EINPUT,
					    "'%s' is not a problem selector: use L1/19, L1/1-10, L3/* or L2", selectors[k]);
		}
		if (!levels[level - 1]) {
			free(picked);
			return sb_error_set(err, SB_EINPUT,
					    "selector '%s' names level %d, which the chosen levels leave out (check --level or problems.levels)",
					    selectors[k], level);
		}
		for (size_t i = 0; i < s->nproblems; i++) {
			const struct problem *p = &s->problems[i];
			if (p->level == level && p->id >= lo && p->id <= hi) {
				picked[i] = 1;
				hits++;
			}
		}
		if (!hits) {
			free(picked);
			return sb_error_set(err, SB_EINPUT, "selector '%s' matches no problem in %s", selectors[k], s->root);
		}
	}
	*out = xcalloc(s->nproblems ? s->nproblems : 1, sizeof(**out));
	*nout = 0;
	for (size_t i = 0; i < s->nproblems; i++) {
		const struct problem *p = &s->problems[i];
		if (!levels[p->level - 1] || (nselectors && !picked[i]))
			continue;
		(*out)[(*nout)++] = p;
	}
	free(picked);
	return 0;
}

char *suite_sample_name(int level, int id, int sample)
{
	return xstrfmt("level_%d_problem_%d_sample_%d_kernel.py", level, id, sample);
}

int suite_sample_name_parse(const char *name, int *level, int *id, int *sample)
{
	int used = 0;
	return sscanf(name, "level_%d_problem_%d_sample_%d_kernel.py%n", level, id, sample, &used) == 3 &&
	       (size_t)used == strlen(name);
}
