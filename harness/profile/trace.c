/* trace.c - the parser of stitchprof traces (docs/trace.md). Strict about the lines it knows (a bad
 * field is an error naming file:line), silent about first words it does not (later additions). */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"

#define MAX_TRACE_BYTES (1ull << 30)
#define MAX_RECORDS (20u * 1000 * 1000)
#define MAX_FIELDS 24

enum { CAP_NAMES, CAP_KERNELS, CAP_COPIES, CAP_SYNCS, CAP_EVENTS, CAP_TRIALS, CAP_EXT };

/* Grows an array of the trace to hold one more element. */
#define TRACE_PUSH(t, arr, n, slot) \
	(((t)->n == (t)->capacity[slot]) \
		 ? ((t)->capacity[slot] = (t)->capacity[slot] ? 2 * (t)->capacity[slot] : 64, \
		    (t)->arr = xrealloc((t)->arr, (t)->capacity[slot] * sizeof(*(t)->arr))) \
		 : (t)->arr, \
	 &(t)->arr[(t)->n++])

struct line {
	const char *file;
	size_t no;
	char *f[MAX_FIELDS];
	int n;
	char *rest;                  /* after the third field, for `name` */
	struct sb_error *err;
};

static int bad(struct line *l, const char *what)
{
	return sb_error_set(l->err, SB_EINPUT, "%s:%zu: %s (docs/trace.md); the trace is damaged or not a stitchprof trace",
			    l->file, l->no, what);
}

static int u64(struct line *l, int i, uint64_t *out)
{
	char *end;
	if (i >= l->n)
		return bad(l, "a field is missing");
	const char *s = l->f[i];
	if (*s < '0' || *s > '9')
		return bad(l, "a field is not an unsigned number");
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno)
		return bad(l, "a field is not an unsigned number");
	*out = v;
	return 0;
}

static int u32(struct line *l, int i, uint32_t *out)
{
	uint64_t v;
	if (u64(l, i, &v))
		return -1;
	if (v > UINT32_MAX)
		return bad(l, "a 32-bit field is out of range");
	*out = (uint32_t)v;
	return 0;
}

static int i32(struct line *l, int i, int32_t *out)
{
	char *end;
	if (i >= l->n)
		return bad(l, "a field is missing");
	errno = 0;
	long long v = strtoll(l->f[i], &end, 10);
	if (*end || errno || !*l->f[i] || v < INT32_MIN || v > INT32_MAX)
		return bad(l, "a field is not a 32-bit integer");
	*out = (int32_t)v;
	return 0;
}

/* A CUPTI id that may be "-1" (not applicable) or "-" (unknown). */
static int opt_id(struct line *l, int i, int64_t *out)
{
	if (i >= l->n)
		return bad(l, "a field is missing");
	if (!strcmp(l->f[i], "-1") || !strcmp(l->f[i], "-")) {
		*out = -1;
		return 0;
	}
	uint32_t v;
	if (u32(l, i, &v))
		return -1;
	*out = v;
	return 0;
}

static int want(struct line *l, int n)
{
	if (l->n != n) {
		char msg[96];
		snprintf(msg, sizeof(msg), "'%s' needs %d fields, found %d", l->f[0], n - 1, l->n - 1);
		return bad(l, msg);
	}
	return 0;
}

static int parse_kernel(struct trace *t, struct line *l)
{
	struct trace_kernel k = { 0 };
	if (want(l, 18) || u32(l, 1, &k.name) || u64(l, 2, &k.start) || u64(l, 3, &k.end) || u32(l, 4, &k.device) ||
	    u32(l, 5, &k.ctx) || u32(l, 6, &k.stream) || u32(l, 7, &k.corr))
		return -1;
	for (int d = 0; d < 3; d++)
		if (i32(l, 8 + d, &k.grid[d]) || i32(l, 11 + d, &k.block[d]))
			return -1;
	if (u32(l, 14, &k.regs) || i32(l, 15, &k.static_smem) || i32(l, 16, &k.dynamic_smem) || u32(l, 17, &k.local_mem))
		return -1;
	if (k.name > t->nnames)
		return bad(l, "the kernel uses a name id that no earlier name line defines");
	if (k.end < k.start)
		return bad(l, "the kernel ends before it starts");
	if (!k.start && !k.end)
		t->untimed++;
	*TRACE_PUSH(t, kernels, nkernels, CAP_KERNELS) = k;
	return 0;
}

static int parse_copy(struct trace *t, struct line *l, int memset)
{
	struct trace_copy c = { .memset = memset };
	uint32_t value;
	if (want(l, 9))
		return -1;
	if (memset) {
		snprintf(c.kind, sizeof(c.kind), "set");
		if (u64(l, 1, &c.bytes) || u32(l, 2, &value))
			return -1;
	} else {
		if (strlen(l->f[1]) >= sizeof(c.kind))
			return bad(l, "unknown memcpy kind");
		snprintf(c.kind, sizeof(c.kind), "%s", l->f[1]);
		if (u64(l, 2, &c.bytes))
			return -1;
	}
	if (u64(l, 3, &c.start) || u64(l, 4, &c.end) || u32(l, 5, &c.device) || u32(l, 6, &c.ctx) ||
	    u32(l, 7, &c.stream) || u32(l, 8, &c.corr))
		return -1;
	if (c.end < c.start)
		return bad(l, "the copy ends before it starts");
	*TRACE_PUSH(t, copies, ncopies, CAP_COPIES) = c;
	return 0;
}

static int parse_sync(struct trace *t, struct line *l)
{
	struct trace_sync s = { 0 };
	if (want(l, 8))
		return -1;
	if (strlen(l->f[1]) >= sizeof(s.type))
		return bad(l, "unknown synchronisation type");
	snprintf(s.type, sizeof(s.type), "%s", l->f[1]);
	if (u64(l, 2, &s.start) || u64(l, 3, &s.end) || u32(l, 4, &s.ctx) || opt_id(l, 5, &s.stream) ||
	    opt_id(l, 6, &s.event) || u32(l, 7, &s.corr))
		return -1;
	*TRACE_PUSH(t, syncs, nsyncs, CAP_SYNCS) = s;
	return 0;
}

static int parse_event(struct trace *t, struct line *l)
{
	struct trace_event e = { 0 };
	if (want(l, 6) || u32(l, 1, &e.event) || u64(l, 2, &e.ts) || u32(l, 3, &e.ctx) || u32(l, 4, &e.stream) ||
	    u32(l, 5, &e.corr))
		return -1;
	*TRACE_PUSH(t, events, nevents, CAP_EVENTS) = e;
	return 0;
}

static int parse_trial(struct trace *t, struct line *l)
{
	struct trace_trial r = { 0 };
	if (want(l, 5) || u64(l, 1, &r.id) || opt_id(l, 2, &r.stream) || u64(l, 3, &r.begin) || u64(l, 4, &r.end))
		return -1;
	if (!r.id)
		return bad(l, "trial ids start at 1");
	if (trace_find_trial(t, r.id))
		return bad(l, "a trial id appears twice");
	*TRACE_PUSH(t, trials, ntrials, CAP_TRIALS) = r;
	return 0;
}

static int parse_name(struct trace *t, struct line *l)
{
	uint32_t id;
	if (l->n < 3 || u32(l, 1, &id))
		return bad(l, "a name line is 'name ID MANGLED DEMANGLED...'");
	if (id != t->nnames + 1)
		return bad(l, "name ids must count up from 1 without gaps");
	struct trace_name *n = TRACE_PUSH(t, names, nnames, CAP_NAMES);
	n->mangled = xstrdup(l->f[2]);
	n->demangled = xstrdup(l->rest && *l->rest ? l->rest : l->f[2]);
	return 0;
}

static int parse_meta(struct trace *t, struct line *l)
{
	if (l->n < 3)
		return 0;
	if (!strcmp(l->f[1], "cupti_api")) {
		uint32_t v;
		if (u32(l, 2, &v))
			return -1;
		t->cupti_api = v;
	} else if (!strcmp(l->f[1], "event_timestamps")) {
		t->event_timestamps = !strcmp(l->f[2], "on");
	} else if (!strcmp(l->f[1], "disabled")) {
		size_t used = strlen(t->disabled);
		snprintf(t->disabled + used, sizeof(t->disabled) - used, "%s%s", used ? " " : "", l->f[2]);
	}
	return 0;
}

static int parse_line(struct trace *t, struct line *l)
{
	const char *w = l->f[0];
	if (!strcmp(w, "kernel"))
		return parse_kernel(t, l);
	if (!strcmp(w, "memcpy") || !strcmp(w, "memset"))
		return parse_copy(t, l, w[3] == 's');
	if (!strcmp(w, "sync"))
		return parse_sync(t, l);
	if (!strcmp(w, "event"))
		return parse_event(t, l);
	if (!strcmp(w, "ext")) {
		struct trace_ext x;
		if (want(l, 3) || u64(l, 1, &x.trial) || u32(l, 2, &x.corr))
			return -1;
		*TRACE_PUSH(t, ext, next, CAP_EXT) = x;
		return 0;
	}
	if (!strcmp(w, "trial"))
		return parse_trial(t, l);
	if (!strcmp(w, "name"))
		return parse_name(t, l);
	if (!strcmp(w, "meta"))
		return parse_meta(t, l);
	if (!strcmp(w, "drop")) {
		uint64_t n;
		if (want(l, 2) || u64(l, 1, &n))
			return -1;
		t->dropped += n;
		return 0;
	}
	if (!strcmp(w, "end")) {
		uint64_t records, kernels, dropped;
		if (want(l, 4) || u64(l, 1, &records) || u64(l, 2, &kernels) || u64(l, 3, &dropped))
			return -1;
		if (kernels != t->nkernels)
			return bad(l, "the end line counts a different number of kernels than the trace holds");
		if (dropped > t->dropped)
			t->dropped = dropped;
		t->complete = 1;
		return 0;
	}
	return 0; /* a line kind from a later minor version */
}

static int cmp_ext(const void *a, const void *b)
{
	const struct trace_ext *x = a, *y = b;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* Splits on single spaces; the text after the third field stays whole in `rest` (name lines). */
static void split(char *s, struct line *l)
{
	l->n = 0;
	l->rest = NULL;
	while (*s && l->n < MAX_FIELDS) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		if (l->n == 3 && !strcmp(l->f[0], "name")) {
			l->rest = s;
			return;
		}
		l->f[l->n++] = s;
		while (*s && *s != ' ')
			s++;
		if (*s)
			*s++ = '\0';
	}
}

int trace_parse_text(const char *name, const char *text, size_t len, struct trace *t, struct sb_error *err)
{
	memset(t, 0, sizeof(*t));
	t->path = xstrdup(name);
	char *buf = xstrndup(text, len);
	struct line l = { .file = name, .err = err };
	char *p = buf;
	int rc = 0;
	size_t records = 0;
	while (*p && rc == 0) {
		char *eol = strchr(p, '\n');
		if (eol)
			*eol = '\0';
		l.no++;
		if (strlen(p) > 65536) {
			rc = bad(&l, "the line is longer than 64 KiB");
			break;
		}
		split(p, &l);
		if (l.no == 1) {
			uint32_t v;
			if (l.n != 2 || strcmp(l.f[0], "stitchprof") || u32(&l, 1, &v)) {
				rc = bad(&l, "the first line is not 'stitchprof FORMAT'");
				break;
			}
			if (v != TRACE_FORMAT) {
				rc = sb_error_set(err, SB_EINPUT, "%s: trace format %u; this stitchbench reads format %d "
						  "(rebuild lib/libstitchprof.so from the same tree)", name, v, TRACE_FORMAT);
				break;
			}
			t->format = (int)v;
		} else if (l.n > 0 && (rc = parse_line(t, &l)) == 0 && ++records > MAX_RECORDS) {
			rc = bad(&l, "more than 20 million records");
		}
		p = eol ? eol + 1 : p + strlen(p);
	}
	if (rc == 0 && l.no == 0)
		rc = sb_error_set(err, SB_EINPUT, "%s: the trace is empty (the worker stopped before profiling began)", name);
	free(buf);
	if (rc) {
		trace_release(t);
		return rc;
	}
	qsort(t->ext, t->next, sizeof(*t->ext), cmp_ext);
	return 0;
}

int trace_parse_file(const char *path, struct trace *t, struct sb_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = strbuf_read_file(&sb, path, MAX_TRACE_BYTES);
	if (rc) {
		strbuf_release(&sb);
		memset(t, 0, sizeof(*t));
		return sb_error_set(err, SB_EIO, "cannot read the trace %s: %s", path, strerror(-rc));
	}
	rc = trace_parse_text(path, sb.buf, sb.len, t, err);
	strbuf_release(&sb);
	return rc;
}

void trace_release(struct trace *t)
{
	for (size_t i = 0; i < t->nnames; i++) {
		free(t->names[i].mangled);
		free(t->names[i].demangled);
	}
	free(t->names);
	free(t->kernels);
	free(t->copies);
	free(t->syncs);
	free(t->events);
	free(t->trials);
	free(t->ext);
	free(t->path);
	memset(t, 0, sizeof(*t));
}

uint64_t trace_trial_of(const struct trace *t, uint32_t corr)
{
	struct trace_ext key = { corr, 0 };
	const struct trace_ext *x = bsearch(&key, t->ext, t->next, sizeof(*t->ext), cmp_ext);
	return x ? x->trial : 0;
}

const struct trace_trial *trace_find_trial(const struct trace *t, uint64_t id)
{
	for (size_t i = 0; i < t->ntrials; i++)
		if (t->trials[i].id == id)
			return &t->trials[i];
	return NULL;
}

const char *trace_name_of(const struct trace *t, uint32_t id)
{
	return id && id <= t->nnames ? t->names[id - 1].demangled : "?";
}

const char *trace_mangled_of(const struct trace *t, uint32_t id)
{
	return id && id <= t->nnames ? t->names[id - 1].mangled : "?";
}
