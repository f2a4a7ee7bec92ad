/* test_adversarial.c - runs the static checks over the hack corpus (tests/adversarial/): every hack
 * file must produce the ids its "# expect:" line names, every honest file none; prints the table. */
#include "testutil.h"

#include <dirent.h>

#include "checks/static.h"

#define NIDS 22
/* The rows of DESIGN §7 that are found from source; each needs at least one hack in the corpus. */
static const int static_ids[] = { 1, 2, 3, 4, 5, 6, 7, 8, 13, 14, 20, 22 };
/* The honest candidates a check most easily mistakes for a hack, so the corpus must hold them: cuBLAS, a
 * synchronised second stream, an FMA-heavy fp32 kernel, torch ops named in comments and strings, a
 * try/except that only re-raises. */
static const char *const required_honest[] = { "gemm_cublas.py", "two_streams_synced.py", "gemm_fma_tiled.py",
						"softmax_mentions_torch.py", "reraise_only.py", NULL };

struct corpus_file {
	char *rel;                   /* "hacks/h01_alias.py" */
	int honest;
	int expect[NIDS + 1];        /* expect[h]: H<h> must be found */
	int found[NIDS + 1];
	int rc;
	char first[200];             /* a finding, shown when an honest file is not clean */
};

struct corpus {
	struct corpus_file *v;
	size_t n;
};

static void read_expect(struct corpus_file *f, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, path, 1 << 20) != 0)
		return;
	const char *line = strstr(sb.buf, "# expect:");
	for (const char *p = line ? line + 9 : ""; *p && *p != '\n'; p++)
		if (p[0] == 'H' && p[1] >= '0' && p[1] <= '9') {
			int h = atoi(p + 1);
			if (h >= 1 && h <= NIDS)
				f->expect[h] = 1;
		}
	strbuf_release(&sb);
}

/* The whole candidate: the CPU files hold a marker where the corpus's shared C++ source goes
 * (tests/adversarial/cpu_ops.cpp), as tests/adversarial/run_corpus.py writes them for evaluation. */
static char *candidate_text(const char *root, const char *path)
{
	static const char marker[] = "{{cpu_ops.cpp}}";
	struct strbuf sb = STRBUF_INIT, shared = STRBUF_INIT, out = STRBUF_INIT;
	if (strbuf_read_file(&sb, path, 1 << 20) != 0)
		fail_msg("cannot read %s", path);
	const char *at = strstr(sb.buf, marker);
	if (!at)
		return strbuf_detach(&sb, NULL);
	char *cpp = xstrfmt("%s/tests/adversarial/cpu_ops.cpp", root);
	if (strbuf_read_file(&shared, cpp, 1 << 20) != 0)
		fail_msg("cannot read %s", cpp);
	free(cpp);
	strbuf_add(&out, sb.buf, (size_t)(at - sb.buf));
	strbuf_addf(&out, "\n%s%s", shared.buf, at + strlen(marker));
	strbuf_release(&sb);
	strbuf_release(&shared);
	return strbuf_detach(&out, NULL);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct corpus_file *)a)->rel, ((const struct corpus_file *)b)->rel);
}

static void load_corpus(struct corpus *c, const char *root)
{
	static const char *const dirs[] = { "hacks", "honest" };
	for (int d = 0; d < 2; d++) {
		char *dir = xstrfmt("%s/tests/adversarial/%s", root, dirs[d]);
		DIR *dh = opendir(dir);
		struct dirent *e;
		while (dh && (e = readdir(dh))) {
			if (!ends_with(e->d_name, ".py"))
				continue;
			c->v = xrealloc(c->v, (c->n + 1) * sizeof(*c->v));
			struct corpus_file *f = &c->v[c->n++];
			memset(f, 0, sizeof(*f));
			f->rel = xstrfmt("%s/%s", dirs[d], e->d_name);
			f->honest = d == 1;
			char *path = xstrfmt("%s/%s", dir, e->d_name);
			read_expect(f, path);
			struct findings r;
			struct sb_error err = { 0 };
			char *text = candidate_text(root, path);
			f->rc = static_check_source(path, text, strlen(text), &r, &err);
			free(text);
			if (f->rc)
				snprintf(f->first, sizeof(f->first), "%s", err.msg);
			for (size_t i = 0; !f->rc && i < r.n; i++) {
				f->found[atoi(r.v[i].id + 1)] = 1;
				if (!f->first[0])
					snprintf(f->first, sizeof(f->first), "%d:%d %s %s", r.v[i].line, r.v[i].col, r.v[i].id,
						 r.v[i].message);
			}
			if (!f->rc)
				findings_release(&r);
			free(path);
		}
		if (dh)
			closedir(dh);
		free(dir);
	}
	qsort(c->v, c->n, sizeof(*c->v), by_name);
}

static void one_file(void **state)
{
	struct corpus_file *f = *state;
	assert_int_equal(f->rc, 0);
	if (f->honest) {
		for (int h = 1; h <= NIDS; h++)
			if (f->found[h])
				fail_msg("%s is honest but got H%02d: %s", f->rel, h, f->first);
		return;
	}
	int any = 0;
	for (int h = 1; h <= NIDS; h++) {
		any |= f->expect[h];
		if (f->expect[h] && !f->found[h])
			fail_msg("%s: H%02d expected, not found", f->rel, h);
	}
	if (!any)
		fail_msg("%s has no '# expect: Hnn' line", f->rel);
}

/* The numbers the lead needs: per static id, hack files caught / hack files expecting it. */
static void detection_table(void **state)
{
	struct corpus *c = *state;
	size_t honest = 0, false_pos = 0, missing = 0;
	printf("# %-5s %8s %8s\n", "id", "found", "expected");
	for (size_t k = 0; k < sizeof(static_ids) / sizeof(static_ids[0]); k++) {
		int h = static_ids[k];
		size_t want = 0, got = 0;
		for (size_t i = 0; i < c->n; i++)
			if (!c->v[i].honest && c->v[i].expect[h]) {
				want++;
				got += c->v[i].found[h];
			}
		printf("# H%02d   %8zu %8zu\n", h, got, want);
		if (want == 0) {
			printf("# H%02d has no hack in the corpus\n", h);
			missing++;
		}
	}
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].honest) {
			honest++;
			for (int h = 1; h <= NIDS; h++)
				if (c->v[i].found[h]) {
					false_pos++;
					break;
				}
		}
	printf("# honest files: %zu, with any finding (false positives): %zu\n", honest, false_pos);
	assert_int_equal(missing, 0);
	assert_true(honest >= 12);
	for (const char *const *name = required_honest; *name; name++) {
		int present = 0;
		for (size_t i = 0; i < c->n; i++)
			present |= c->v[i].honest && ends_with(c->v[i].rel, *name);
		if (!present)
			fail_msg("the honest corpus lacks %s", *name);
	}
}

int main(void)
{
	const char *root = getenv("SB_SOURCE_ROOT");
	struct corpus c = { 0 };
	load_corpus(&c, root ? root : ".");
	struct CMUnitTest *tests = xcalloc(c.n + 1, sizeof(*tests));
	for (size_t i = 0; i < c.n; i++)
		tests[i] = (struct CMUnitTest){ .name = c.v[i].rel, .test_func = one_file, .initial_state = &c.v[i] };
	tests[c.n] = (struct CMUnitTest){ .name = "detection table", .test_func = detection_table, .initial_state = &c };
	int rc = _cmocka_run_group_tests("adversarial", tests, c.n + 1, NULL, NULL);
	for (size_t i = 0; i < c.n; i++)
		free(c.v[i].rel);
	free(c.v);
	free(tests);
	return rc;
}
