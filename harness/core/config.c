/* config.c - reading the experiment YAML (libyaml document API) into struct config,
 * applying --set overrides through the same schema, cross-checking, and dumping it back as YAML. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "config_schema.h"


/* ---------- defaults and release ---------- */

/* Which findings reject by default: everything that makes a number dishonest. Properties of the
 * problem (H15-H17), shape specialisation (H18) and precision (H14, which the tolerance already
 * judges) are flagged so the report can show them without discarding a possibly honest kernel. */
static const enum policy_action default_policy[SB_HACK_IDS] = {
	POLICY_REJECT, POLICY_REJECT, POLICY_REJECT, POLICY_REJECT, POLICY_REJECT, /* H01-H05 */
	POLICY_REJECT, POLICY_REJECT, POLICY_REJECT, POLICY_REJECT, POLICY_REJECT, /* H06-H10 */
	POLICY_REJECT, POLICY_REJECT, POLICY_REJECT, POLICY_FLAG, POLICY_FLAG,     /* H11-H15 */
	POLICY_FLAG, POLICY_FLAG, POLICY_FLAG, POLICY_REJECT, POLICY_REJECT,       /* H16-H20 */
	POLICY_REJECT, POLICY_REJECT,                                              /* H21-H22 */
};

enum policy_action config_default_policy(int i)
{
	return i >= 0 && i < SB_HACK_IDS ? default_policy[i] : POLICY_FLAG;
}

void config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->name = xstrdup("experiment");
	/* every level the suite has; the bundled suite has no level 4, upstream's needs HF weights */
	for (int i = 0; i < 4; i++)
		c->problems.levels[i] = 1;
	c->eval.device = xstrdup("auto");
	c->eval.trials = 5;
	c->eval.robust_trials = 2;
	c->eval.perf_trials = 100;
	c->eval.tolerance = TOL_KERNELBENCH;
	c->eval.timeout_s = 1800;
	c->eval.warmup_ms = 100;
	c->eval.warmup_calls = 3;
	c->eval.timing_block = 10;
	c->eval.timing_prime_ms = 5;
	c->eval.timing_lead_us = 0;
	c->eval.timing_cpu = -1;
	c->eval.timing_gc = 0;
	c->eval.process_factor = PF_AUTO;
	c->eval.process_spread_pct = -1;
	c->eval.hash_seed = 0;
	c->eval.rse_target = 0.005;
	c->eval.timing_cap_s = 120;
	c->eval.statistic = STAT_MEDIAN;
	c->eval.seed = 42;
	c->eval.compile = 1;
	c->eval.keep_reference_worker = 1;
	c->eval.prestart_candidate = 1;
	c->eval.fork_server = 1;
	c->eval.lean_headers = 1;
	c->eval.lite_headers = 1;
	c->eval.split_nvcc = 1;
	c->eval.profile = 1;
	c->eval.profile_trials = 10;
	c->eval.profile_metrics = PM_OFF;
	c->checks.static_checks = 1;
	c->checks.runtime_checks = 1;
	c->checks.reward_lambda = 0.5;
	memcpy(c->checks.policy, default_policy, sizeof(default_policy));
	c->output.dir = xstrdup("results");
	c->output.report = 1;
}

int config_plain_paths(struct config *c, struct sb_error *err)
{
	static const char *const plain[] = { "eval.exchange=files", "eval.fork_server=false",
					     "eval.prestart_candidate=false", "eval.keep_reference_worker=false",
					     "eval.lean_headers=false", "eval.lite_headers=false", "eval.split_nvcc=false",
					     "eval.build_jobs=1" };
	int rc = 0;
	for (size_t i = 0; i < sizeof(plain) / sizeof(*plain) && !rc; i++)
		rc = config_set(c, plain[i], err);
	return rc;
}

static void release_fields(const struct field *fields, void *base)
{
	for (const struct field *f = fields; f->key; f++) {
		switch (f->type) {
		case FT_STR:
		case FT_CHOICE:
			free(*AT(base, f->off, char *));
			*AT(base, f->off, char *) = NULL;
			break;
		case FT_STRLIST: {
			char **v = *AT(base, f->off, char **);
			size_t n = *AT(base, f->off2, size_t);
			for (size_t i = 0; i < n; i++)
				free(v[i]);
			free(v);
			*AT(base, f->off, char **) = NULL;
			*AT(base, f->off2, size_t) = 0;
			break;
		}
		case FT_HEADERS: {
			struct header_kv *h = *AT(base, f->off, struct header_kv *);
			size_t n = *AT(base, f->off2, size_t);
			for (size_t i = 0; i < n; i++) {
				free(h[i].name);
				free(h[i].value);
			}
			free(h);
			*AT(base, f->off, struct header_kv *) = NULL;
			*AT(base, f->off2, size_t) = 0;
			break;
		}
		case FT_SECTION:
			release_fields(f->sub, AT(base, f->off, char));
			break;
		case FT_LIST: {
			char *arr = *AT(base, f->off, char *);
			size_t n = *AT(base, f->off2, size_t);
			for (size_t i = 0; i < n; i++)
				f->elem_release(arr + i * f->elem_size);
			free(arr);
			*AT(base, f->off, char *) = NULL;
			*AT(base, f->off2, size_t) = 0;
			break;
		}
		default:
			break;
		}
	}
}

void config_release(struct config *c)
{
	release_fields(config_schema, c);
	free(c->path);
	c->path = NULL;
	for (size_t i = 0; i < c->ngiven; i++)
		free(c->given[i]);
	free(c->given);
	c->given = NULL;
	c->ngiven = 0;
}

const char *preset_name(enum eval_preset p)
{
	return p == PRESET_KERNELBENCH ? "kernelbench" : p == PRESET_STITCHCUDA ? "stitchcuda" : "stitchbench";
}

int preset_unpaired_mean(enum eval_preset p)
{
	return p == PRESET_KERNELBENCH || p == PRESET_STITCHCUDA;
}

const char *tolerance_name(enum tolerance_preset t)
{
	return t == TOL_KERNELBENCH_V0 ? "kernelbench-v0" : "kernelbench";
}

const struct model_cfg *config_find_model(const struct config *c, const char *name)
{
	for (size_t i = 0; name && i < c->nmodels; i++)
		if (c->models[i].name && !strcmp(c->models[i].name, name))
			return &c->models[i];
	return NULL;
}

/* ---------- scalar conversion shared by YAML and --set ---------- */

static const char *type_noun(const struct field *f)
{
	switch (f->type) {
	case FT_INT: case FT_LONG: return "an integer";
	case FT_DOUBLE: return "a number";
	case FT_BOOL: return "true or false";
	case FT_STR: case FT_CHOICE: case FT_ENUM: return "a string";
	case FT_STRLIST: case FT_LEVELS: case FT_LIST: return "a list";
	default: return "a mapping";
	}
}

static void list_choices(const struct field *f, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (const char *const *c = f->choices; *c && used < len; c++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", c == f->choices ? "" : ", ", *c);
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", NULL }, *const no[] = { "false", "no", "off", NULL };
	for (int i = 0; yes[i]; i++)
		if (!strcasecmp(s, yes[i]))
			return *out = 1, 0;
	for (int i = 0; no[i]; i++)
		if (!strcasecmp(s, no[i]))
			return *out = 0, 0;
	return -1;
}

static int range_msg(const struct field *f, char *msg, size_t len, const char *got)
{
	if (f->type == FT_DOUBLE)
		snprintf(msg, len, "%s is out of range: expected %s between %g and %g", got, type_noun(f), f->min, f->max);
	else
		snprintf(msg, len, "%s is out of range: expected %s between %.0f and %.0f", got, type_noun(f), f->min, f->max);
	return -1;
}

/* Stores one scalar into a scalar-typed field. `text` NULL means YAML null. Fills msg on error. */
static int set_scalar(const struct field *f, void *base, const char *text, char *msg, size_t len)
{
	char *end;
	switch (f->type) {
	case FT_STR:
		free(*AT(base, f->off, char *));
		*AT(base, f->off, char *) = text ? xstrdup(text) : NULL;
		return 0;
	case FT_CHOICE:
		if (text) {
			const char *const *c;
			for (c = f->choices; *c && strcmp(*c, text); c++)
				;
			if (!*c) {
				char ch[256];
				list_choices(f, ch, sizeof(ch));
				snprintf(msg, len, "'%s' is not one of: %s", text, ch);
				return -1;
			}
		}
		free(*AT(base, f->off, char *));
		*AT(base, f->off, char *) = text ? xstrdup(text) : NULL;
		return 0;
	case FT_ENUM: {
		for (int i = 0; text && f->choices[i]; i++)
			if (!strcmp(f->choices[i], text))
				return *AT(base, f->off, int) = i, 0;
		char ch[256];
		list_choices(f, ch, sizeof(ch));
		snprintf(msg, len, "'%s' is not one of: %s", text ? text : "null", ch);
		return -1;
	}
	case FT_BOOL: {
		int b;
		if (!text || parse_bool(text, &b)) {
			snprintf(msg, len, "expected true or false, got '%s'", text ? text : "null");
			return -1;
		}
		*AT(base, f->off, int) = b;
		return 0;
	}
	case FT_INT:
	case FT_LONG: {
		if (!text || !*text) {
			snprintf(msg, len, "expected %s, got null", type_noun(f));
			return -1;
		}
		errno = 0;
		long long v = strtoll(text, &end, 10);
		if (*end || errno) {
			snprintf(msg, len, "expected %s, got '%s'", type_noun(f), text);
			return -1;
		}
		if ((double)v < f->min || (double)v > f->max)
			return range_msg(f, msg, len, text);
		if (f->type == FT_INT)
			*AT(base, f->off, int) = (int)v;
		else
			*AT(base, f->off, long) = (long)v;
		return 0;
	}
	case FT_DOUBLE: {
		if (!text || !*text) {
			snprintf(msg, len, "expected a number, got null");
			return -1;
		}
		errno = 0;
		double v = strtod(text, &end);
		if (*end || errno || !isfinite(v)) {
			snprintf(msg, len, "expected a number, got '%s'", text);
			return -1;
		}
		if (v < f->min || v > f->max)
			return range_msg(f, msg, len, text);
		*AT(base, f->off, double) = v;
		return 0;
	}
	default:
		snprintf(msg, len, "expected %s", type_noun(f));
		return -1;
	}
}

static void strlist_push(const struct field *f, void *base, const char *s)
{
	char ***v = AT(base, f->off, char **);
	size_t *n = AT(base, f->off2, size_t);
	*v = xrealloc(*v, (*n + 2) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

static int set_level(const struct field *f, void *base, const char *s, char *msg, size_t len)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || end == s || v < 1 || v > 4) {
		snprintf(msg, len, "'%s' is not a level: expected 1, 2, 3 or 4", s);
		return -1;
	}
	AT(base, f->off, int)[v - 1] = 1;
	return 0;
}

int config_hack_index(const char *id)
{
	char *end;
	if ((id[0] != 'H' && id[0] != 'h') || !id[1])
		return -1;
	long v = strtol(id + 1, &end, 10);
	return (*end || v < 1 || v > SB_HACK_IDS) ? -1 : (int)v - 1;
}

void config_mark_given(struct config *c, const char *key)
{
	if (config_is_given(c, key))
		return;
	c->given = xrealloc(c->given, (c->ngiven + 1) * sizeof(*c->given));
	c->given[c->ngiven++] = xstrdup(key);
}

int config_is_given(const struct config *c, const char *key)
{
	for (size_t i = 0; i < c->ngiven; i++)
		if (!strcmp(c->given[i], key))
			return 1;
	return 0;
}

/* "checks.policy.H01" for the id as written ("h1" too) */
static void mark_policy_given(struct config *c, const char *id)
{
	char key[32];
	snprintf(key, sizeof(key), "checks.policy.H%02d", config_hack_index(id) + 1);
	config_mark_given(c, key);
}

static int set_policy(const struct field *f, void *base, const char *id, const char *action,
		      char *msg, size_t len)
{
	int i = config_hack_index(id);
	if (i < 0) {
		snprintf(msg, len, "'%s' is not a hack id: expected H01 to H%02d", id, SB_HACK_IDS);
		return -1;
	}
	if (!action || (strcmp(action, "reject") && strcmp(action, "flag"))) {
		snprintf(msg, len, "%s: expected reject or flag, got '%s'", id, action ? action : "null");
		return -1;
	}
	AT(base, f->off, enum policy_action)[i] = !strcmp(action, "reject") ? POLICY_REJECT : POLICY_FLAG;
	return 0;
}

/* Levenshtein distance, to suggest the key a typo meant. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];
	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb];
}

static void unknown_key_msg(const struct field *fields, const char *key, char *msg, size_t len)
{
	const struct field *best = NULL;
	size_t best_d = 3;
	size_t used = (size_t)snprintf(msg, len, "unknown key");
	for (const struct field *f = fields; f->key; f++) {
		size_t d = edit_distance(key, f->key);
		if (d < best_d) {
			best_d = d;
			best = f;
		}
	}
	if (best)
		used += (size_t)snprintf(msg + used, len - used, " (did you mean '%s'?)", best->key);
	used += (size_t)snprintf(msg + used, len - used, "; known keys here:");
	for (const struct field *f = fields; f->key && used < len; f++)
		used += (size_t)snprintf(msg + used, len - used, " %s", f->key);
}

static const struct field *find_field(const struct field *fields, const char *key)
{
	for (const struct field *f = fields; f->key; f++)
		if (!strcmp(f->key, key))
			return f;
	return NULL;
}

/* ---------- YAML loading ---------- */

struct loader {
	struct config *c;
	const char *name;
	yaml_document_t *doc;
	struct sb_error *err;
};

__attribute__((format(printf, 4, 5)))
static int fail_at(struct loader *L, const yaml_node_t *n, const char *path, const char *fmt, ...)
{
	char msg[SB_ERR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return sb_error_set(L->err, SB_EINPUT, "%s:%zu:%zu: %s: %s", L->name,
			    n ? n->start_mark.line + 1 : 0, n ? n->start_mark.column + 1 : 0,
			    path && *path ? path : "(top level)", msg);
}

static int is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	const char *s = (const char *)n->data.scalar.value;
	return !*s || !strcmp(s, "~") || !strcasecmp(s, "null");
}

static const char *node_kind(const yaml_node_t *n)
{
	return n->type == YAML_SEQUENCE_NODE ? "a list" : n->type == YAML_MAPPING_NODE ? "a mapping" : "a scalar";
}

static int load_fields(struct loader *L, const struct field *fields, void *base, yaml_node_t *map,
		       const char *path);

static int load_list(struct loader *L, const struct field *f, void *base, yaml_node_t *seq, const char *path)
{
	char **arr = AT(base, f->off, char *);
	size_t *n = AT(base, f->off2, size_t);
	/* A list in the file replaces the default list, it does not append to it. */
	for (size_t i = 0; i < *n; i++)
		f->elem_release(*arr + i * f->elem_size);
	free(*arr);
	*arr = NULL;
	*n = 0;
	for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(L->doc, *it);
		char sub[256];
		snprintf(sub, sizeof(sub), "%s[%zu]", path, *n);
		if (item->type != YAML_MAPPING_NODE)
			return fail_at(L, item, sub, "expected a mapping (key: value lines), got %s", node_kind(item));
		*arr = xrealloc(*arr, (*n + 1) * f->elem_size);
		char *elem = *arr + *n * f->elem_size;
		f->elem_init(elem);
		(*n)++;
		/* every list element type starts with struct src_pos (see config.h) */
		((struct src_pos *)elem)->line = (int)item->start_mark.line + 1;
		((struct src_pos *)elem)->col = (int)item->start_mark.column + 1;
		int rc = load_fields(L, f->sub, elem, item, sub);
		if (rc)
			return rc;
	}
	return 0;
}

static int load_value(struct loader *L, const struct field *f, void *base, yaml_node_t *v, const char *path)
{
	char msg[512];
	switch (f->type) {
	case FT_SECTION:
		if (is_null(v))
			return 0;
		if (v->type != YAML_MAPPING_NODE)
			return fail_at(L, v, path, "expected a mapping, got %s", node_kind(v));
		return load_fields(L, f->sub, AT(base, f->off, char), v, path);
	case FT_LIST:
		if (v->type != YAML_SEQUENCE_NODE)
			return fail_at(L, v, path, "expected a list of mappings, got %s", node_kind(v));
		return load_list(L, f, base, v, path);
	case FT_STRLIST:
	case FT_LEVELS: {
		if (v->type != YAML_SEQUENCE_NODE)
			return fail_at(L, v, path, "expected a list, got %s", node_kind(v));
		if (f->type == FT_LEVELS)
			memset(AT(base, f->off, int), 0, 4 * sizeof(int));
		else
			release_fields((const struct field[]){ *f, { .key = NULL } }, base);
		for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
			yaml_node_t *item = yaml_document_get_node(L->doc, *it);
			if (item->type != YAML_SCALAR_NODE || is_null(item))
				return fail_at(L, item, path, "list items must be plain values, got %s",
					       is_null(item) ? "null" : node_kind(item));
			const char *s = (const char *)item->data.scalar.value;
			if (f->type == FT_STRLIST)
				strlist_push(f, base, s);
			else if (set_level(f, base, s, msg, sizeof(msg)))
				return fail_at(L, item, path, "%s", msg);
		}
		return 0;
	}
	case FT_HEADERS:
	case FT_POLICY: {
		if (is_null(v))
			return 0;
		if (v->type != YAML_MAPPING_NODE)
			return fail_at(L, v, path, "expected a mapping, got %s", node_kind(v));
		for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(L->doc, p->key);
			yaml_node_t *val = yaml_document_get_node(L->doc, p->value);
			if (k->type != YAML_SCALAR_NODE || val->type != YAML_SCALAR_NODE)
				return fail_at(L, k, path, "expected name: value pairs");
			const char *ks = (const char *)k->data.scalar.value;
			const char *vs = is_null(val) ? NULL : (const char *)val->data.scalar.value;
			char sub[256];
			snprintf(sub, sizeof(sub), "%s.%s", path, ks);
			if (f->type == FT_POLICY) {
				if (set_policy(f, base, ks, vs, msg, sizeof(msg)))
					return fail_at(L, config_hack_index(ks) < 0 ? k : val, sub, "%s", msg);
				mark_policy_given(L->c, ks);
				continue;
			}
			if (!vs)
				return fail_at(L, val, sub, "a header needs a value");
			struct header_kv **h = AT(base, f->off, struct header_kv *);
			size_t *n = AT(base, f->off2, size_t);
			*h = xrealloc(*h, (*n + 1) * sizeof(**h));
			(*h)[*n].name = xstrdup(ks);
			(*h)[*n].value = xstrdup(vs);
			(*n)++;
		}
		return 0;
	}
	default:
		if (v->type != YAML_SCALAR_NODE)
			return fail_at(L, v, path, "expected %s, got %s", type_noun(f), node_kind(v));
		if (set_scalar(f, base, is_null(v) ? NULL : (const char *)v->data.scalar.value, msg, sizeof(msg)))
			return fail_at(L, v, path, "%s", msg);
		config_mark_given(L->c, path);
		if (f->choices == config_presets)
			config_apply_preset(L->c);
		return 0;
	}
}

static int load_fields(struct loader *L, const struct field *fields, void *base, yaml_node_t *map,
		       const char *path)
{
	yaml_node_pair_t *start = map->data.mapping.pairs.start;
	for (yaml_node_pair_t *p = start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(L->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(L->doc, p->value);
		char sub[256], msg[768];
		if (k->type != YAML_SCALAR_NODE)
			return fail_at(L, k, path, "keys must be plain names, got %s", node_kind(k));
		const char *key = (const char *)k->data.scalar.value;
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
		for (yaml_node_pair_t *q = start; q < p; q++) {
			yaml_node_t *k2 = yaml_document_get_node(L->doc, q->key);
			if (k2->type == YAML_SCALAR_NODE && !strcmp((const char *)k2->data.scalar.value, key))
				return fail_at(L, k, sub, "duplicate key (first given at line %zu)",
					       k2->start_mark.line + 1);
		}
		const struct field *f = find_field(fields, key);
		if (!f) {
			unknown_key_msg(fields, key, msg, sizeof(msg));
			return fail_at(L, k, sub, "%s", msg);
		}
		int rc = load_value(L, f, base, v, sub);
		if (rc)
			return rc;
	}
	return 0;
}

int config_load_string(struct config *c, const char *name, const char *yaml, size_t len, struct sb_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct loader L = { c, name, &doc, err };
	int rc = 0;

	if (!yaml_parser_initialize(&parser))
		return sb_error_set(err, SB_EINTERNAL, "%s: cannot initialise the YAML parser", name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = sb_error_set(err, SB_EINPUT, "%s:%zu:%zu: YAML syntax error: %s%s%s", name,
				  parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				  parser.problem ? parser.problem : "unknown problem",
				  parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return rc;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root && !is_null(root)) {
		if (root->type != YAML_MAPPING_NODE)
			rc = fail_at(&L, root, "", "the file must be a mapping of sections (problems:, models:, ...), got %s",
				     node_kind(root));
		else
			rc = load_fields(&L, config_schema, c, root, "");
	}
	/* A second document in one file is almost always a mistake (a stray ---). */
	if (!rc) {
		yaml_document_t extra;
		if (yaml_parser_load(&parser, &extra)) {
			yaml_node_t *r2 = yaml_document_get_root_node(&extra);
			if (r2)
				rc = fail_at(&L, r2, "", "a second YAML document in one file; only one is read");
			yaml_document_delete(&extra);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

int config_load_file(struct config *c, const char *path, struct sb_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = strbuf_read_file(&sb, path, 16u << 20);
	if (rc < 0) {
		strbuf_release(&sb);
		return sb_error_set(err, SB_EINPUT, "%s: cannot read the config file: %s", path, strerror(-rc));
	}
	rc = config_load_string(c, path, sb.buf, sb.len, err);
	strbuf_release(&sb);
	if (!rc) {
		free(c->path);
		c->path = xstrdup(path);
	}
	return rc;
}

/* ---------- --set overrides ---------- */

int config_set(struct config *c, const char *assignment, struct sb_error *err)
{
	return config_assign(c, assignment, 1, err);
}

int config_assign(struct config *c, const char *assignment, int given, struct sb_error *err)
{
	const char *eq = strchr(assignment, '=');
	char msg[768];
	if (!eq || eq == assignment)
		return sb_error_set(err, SB_EINPUT, "--set %s: expected KEY=VALUE, e.g. eval.trials=10", assignment);
	char *path = xstrndup(assignment, (size_t)(eq - assignment)), *path_copy = xstrdup(path);
	const char *value = eq + 1;
	const struct field *fields = config_schema, *f = NULL;
	void *base = c;
	int rc = 0;
	char *save = NULL;

	for (char *seg = strtok_r(path, ".", &save); seg; seg = strtok_r(NULL, ".", &save)) {
		f = find_field(fields, seg);
		if (!f) {
			unknown_key_msg(fields, seg, msg, sizeof(msg));
			rc = sb_error_set(err, SB_EINPUT, "--set %s: '%s': %s", assignment, seg, msg);
			goto out;
		}
		if (f->type == FT_SECTION) {
			base = AT(base, f->off, char);
			fields = f->sub;
			f = NULL;
		} else if (f->type == FT_LIST) {
			/* models.NAME.key: pick the element by its name */
			char *name = strtok_r(NULL, ".", &save);
			char *arr = *AT(base, f->off, char *);
			size_t n = *AT(base, f->off2, size_t), i;
			for (i = 0; name && i < n; i++) {
				char *en = *AT(arr + i * f->elem_size, find_field(f->sub, "name")->off, char *);
				if (en && !strcmp(en, name))
					break;
			}
			if (!name || i == n) {
				rc = sb_error_set(err, SB_EINPUT, "--set %s: no %s entry named '%s'", assignment,
						  f->key, name ? name : "");
				goto out;
			}
			base = arr + i * f->elem_size;
			fields = f->sub;
			f = NULL;
		} else if (save && *save) {
			rc = sb_error_set(err, SB_EINPUT, "--set %s: '%s' is a value, it has no sub-keys", assignment, seg);
			goto out;
		}
	}
	if (!f) {
		rc = sb_error_set(err, SB_EINPUT, "--set %s: names a section; give one of its keys", assignment);
		goto out;
	}
	if (f->type == FT_STRLIST || f->type == FT_LEVELS || f->type == FT_POLICY || f->type == FT_HEADERS) {
		/* comma-separated: levels=1,2  select=L1/1-3,L2/all  policy=H01:flag,H14:reject */
		char *copy = xstrdup(value), *s2 = NULL;
		if (f->type == FT_LEVELS)
			memset(AT(base, f->off, int), 0, 4 * sizeof(int));
		else if (f->type == FT_STRLIST || f->type == FT_HEADERS)
			release_fields((const struct field[]){ *f, { .key = NULL } }, base);
		for (char *item = strtok_r(copy, ",", &s2); item && !rc; item = strtok_r(NULL, ",", &s2)) {
			if (f->type == FT_STRLIST) {
				strlist_push(f, base, item);
			} else if (f->type == FT_LEVELS) {
				if (set_level(f, base, item, msg, sizeof(msg)))
					rc = sb_error_set(err, SB_EINPUT, "--set %s: %s", assignment, msg);
			} else {
				char *colon = strchr(item, ':');
				if (!colon) {
					rc = sb_error_set(err, SB_EINPUT, "--set %s: expected NAME:VALUE items", assignment);
					break;
				}
				*colon = '\0';
				if (f->type == FT_POLICY) {
					if (set_policy(f, base, item, colon + 1, msg, sizeof(msg)))
						rc = sb_error_set(err, SB_EINPUT, "--set %s: %s", assignment, msg);
					else if (given)
						mark_policy_given(c, item);
				} else {
					struct header_kv **h = AT(base, f->off, struct header_kv *);
					size_t *n = AT(base, f->off2, size_t);
					*h = xrealloc(*h, (*n + 1) * sizeof(**h));
					(*h)[*n].name = xstrdup(item);
					(*h)[*n].value = xstrdup(colon + 1);
					(*n)++;
				}
			}
		}
		free(copy);
		goto out;
	}
	{
		int null = !strcmp(value, "null") || !strcmp(value, "~");
		if (set_scalar(f, base, null ? NULL : value, msg, sizeof(msg)))
			rc = sb_error_set(err, SB_EINPUT, "--set %s: %s", assignment, msg);
		else {
			if (given)
				config_mark_given(c, path_copy);
			if (f->choices == config_presets)
				config_apply_preset(c);
		}
	}
out:
	free(path_copy);
	free(path);
	return rc;
}
