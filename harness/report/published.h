/* published.h - fast_p against a published baseline instead of the runs' own paired timing: KernelBench's
 * baseline_time_torch*.json ({"level1": {"19_ReLU.py": {"mean": ms, "hardware": ...}}}), as its
 * analysis script computes it: the baseline's mean over the candidate's mean per call, for the clean passes
 * the metrics already chose as each problem's representative. */
#ifndef SB_PUBLISHED_H
#define SB_PUBLISHED_H

#include <jansson.h>
#include <stddef.h>

#include "../core/error.h"
#include "../core/strbuf.h"
#include "metrics.h"

struct store_verdict_row;

/* What a verdict row holds that the comparison needs: the candidate's mean per call and the GPU. */
struct published_row {
	double candidate_ms;          /* NAN: not timed */
	char gpu[64];                 /* env.gpu, or "cpu" */
};

struct published {
	char *path;
	json_t *root;
	char hardware[96];            /* the entries' "hardware" (the first one found), or the file's folder */
	struct published_row *rows;   /* one per metric row, by index (published_keep) */
	size_t nrows;
};

int published_load(struct published *b, const char *path, struct sb_error *err);
/* metric_input.on_row: keeps what each verdict row holds for the comparison (arg: struct published). */
int published_keep(void *arg, size_t index, const struct store_verdict_row *v, struct sb_error *err);
void published_release(struct published *b);

/* Per agent, over the problems of its "all" cell: fast_p for the metrics' p values and the geometric mean,
 * the baseline's mean over the candidate's (rows: the rows the metrics were computed from). Markdown into
 * out, or an object into *json. */
void published_markdown(const struct published *b, const struct metrics *m, const struct metric_row *rows,
			struct strbuf *out);
json_t *published_json(const struct published *b, const struct metrics *m, const struct metric_row *rows);

#endif
