/* config_dump.c - writes a resolved struct config back as YAML, walking the same schema table as
 * the reader, so `doctor --config` shows exactly what a run will use and the output loads again; and
 * as the JSON of its identity, the keys that make two runs' numbers comparable. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_schema.h"

/* ---------- dumping ---------- */

int config_header_secret(const char *name)
{
	static const char *const words[] = { "authorization", "cookie", "key", "token", "secret", "password" };
	for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
		if (strcasestr(name, words[i]))
			return 1;
	return 0;
}

static void dump_string(struct strbuf *out, const char *s)
{
	if (!s) {
		strbuf_addstr(out, "null");
		return;
	}
	strbuf_addch(out, '"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			strbuf_addf(out, "\\%c", ch);
		else if (ch == '\n')
			strbuf_addstr(out, "\\n");
		else if (ch == '\t')
			strbuf_addstr(out, "\\t");
		else if (ch < 0x20)
			strbuf_addf(out, "\\x%02x", ch);
		else
			strbuf_addch(out, (char)ch);
	}
	strbuf_addch(out, '"');
}

static void dump_double(struct strbuf *out, double v)
{
	char buf[64];
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	strbuf_addstr(out, buf);
}

/* What a dump leaves out: NULL shows every key; else the configuration whose given keys (and public
 * ones) are shown, and the dotted prefix of the fields being dumped. */
struct dump_filter {
	const struct config *c;
	const char *prefix;
};

static void dump_fields(const struct field *fields, const void *base, struct strbuf *out, int indent, int first_dash,
			const struct dump_filter *only);

static void dump_value(const struct field *f, const void *base, struct strbuf *out, int indent,
		       const struct dump_filter *only)
{
	switch (f->type) {
	case FT_STR:
	case FT_CHOICE:
		dump_string(out, *AT(base, f->off, char *));
		strbuf_addch(out, '\n');
		break;
	case FT_INT:
		strbuf_addf(out, "%d\n", *AT(base, f->off, int));
		break;
	case FT_LONG:
		strbuf_addf(out, "%ld\n", *AT(base, f->off, long));
		break;
	case FT_DOUBLE:
		dump_double(out, *AT(base, f->off, double));
		strbuf_addch(out, '\n');
		break;
	case FT_BOOL:
		strbuf_addstr(out, *AT(base, f->off, int) ? "true\n" : "false\n");
		break;
	case FT_ENUM:
		strbuf_addf(out, "%s\n", f->choices[*AT(base, f->off, int)]);
		break;
	case FT_LEVELS: {
		const int *lv = AT(base, f->off, int);
		int any = 0;
		strbuf_addch(out, '[');
		for (int i = 0; i < 4; i++)
			if (lv[i])
				strbuf_addf(out, "%s%d", any++ ? ", " : "", i + 1);
		strbuf_addstr(out, "]\n");
		break;
	}
	case FT_STRLIST: {
		char **v = *AT(base, f->off, char **);
		size_t n = *AT(base, f->off2, size_t);
		strbuf_addch(out, '[');
		for (size_t i = 0; i < n; i++) {
			if (i)
				strbuf_addstr(out, ", ");
			dump_string(out, v[i]);
		}
		strbuf_addstr(out, "]\n");
		break;
	}
	case FT_HEADERS: {
		struct header_kv *h = *AT(base, f->off, struct header_kv *);
		size_t n = *AT(base, f->off2, size_t);
		if (!n) {
			strbuf_addstr(out, "{}\n");
			break;
		}
		strbuf_addch(out, '\n');
		for (size_t i = 0; i < n; i++) {
			strbuf_addchars(out, ' ', (size_t)indent + 2);
			dump_string(out, h[i].name);
			strbuf_addstr(out, ": ");
			dump_string(out, f->redact && config_header_secret(h[i].name) ? CONFIG_REDACTED : h[i].value);
			strbuf_addch(out, '\n');
		}
		break;
	}
	case FT_POLICY: {
		const enum policy_action *p = AT(base, f->off, enum policy_action);
		strbuf_addch(out, '\n');
		for (int i = 0; i < SB_HACK_IDS; i++) {
			strbuf_addchars(out, ' ', (size_t)indent + 2);
			strbuf_addf(out, "H%02d: %s\n", i + 1, p[i] == POLICY_REJECT ? "reject" : "flag");
		}
		break;
	}
	case FT_SECTION: {
		char *prefix = xstrfmt("%s.", f->key);
		struct dump_filter sub = { only ? only->c : NULL, prefix };
		strbuf_addch(out, '\n');
		dump_fields(f->sub, AT(base, f->off, char), out, indent + 2, 0, only ? &sub : NULL);
		free(prefix);
		break;
	}
	case FT_LIST: {
		const char *arr = *AT(base, f->off, char *);
		size_t n = *AT(base, f->off2, size_t);
		if (!n) {
			strbuf_addstr(out, "[]\n");
			break;
		}
		strbuf_addch(out, '\n');
		for (size_t i = 0; i < n; i++)
			dump_fields(f->sub, arr + i * f->elem_size, out, indent + 2, 1, NULL);
		break;
	}
	}
}

/* Sections and non-empty lists and maps go on the following lines; everything else inline. */
static int is_block(const struct field *f, const void *base)
{
	switch (f->type) {
	case FT_SECTION: case FT_POLICY: return 1;
	case FT_LIST: case FT_HEADERS: return *AT(base, f->off2, size_t) > 0;
	default: return 0;
	}
}

/* A key that is not public is shown when the file or a --set gave it, so the dump still loads as the
 * same configuration; the values a preset gave it come back with the preset. */
static int shown(const struct field *f, const struct dump_filter *only)
{
	if (!only || f->vis == VIS_PUBLIC)
		return 1;
	char *key = xstrfmt("%s%s", only->prefix, f->key);
	int given = config_is_given(only->c, key);
	free(key);
	return given;
}

static void dump_fields(const struct field *fields, const void *base, struct strbuf *out, int indent, int first_dash,
			const struct dump_filter *only)
{
	for (const struct field *f = fields; f->key; f++) {
		if (!shown(f, only))
			continue;
		if (first_dash && f == fields) {
			strbuf_addchars(out, ' ', (size_t)indent);
			strbuf_addstr(out, "- ");
		} else {
			strbuf_addchars(out, ' ', (size_t)indent + (first_dash ? 2 : 0));
		}
		strbuf_addf(out, "%s:%s", f->key, is_block(f, base) ? "" : " ");
		dump_value(f, base, out, indent + (first_dash ? 2 : 0), only);
	}
}

void config_dump(const struct config *c, enum config_dump_keys keys, struct strbuf *out)
{
	struct dump_filter public_only = { c, "" };
	dump_fields(config_schema, c, out, 0, 0, keys == CONFIG_DUMP_ALL ? NULL : &public_only);
}

/* ---------- identity ---------- */

static json_t *identity_value(const struct field *f, const void *base)
{
	switch (f->type) {
	case FT_STR:
	case FT_CHOICE: {
		const char *v = *AT(base, f->off, char *);
		return v ? json_string(v) : json_null();
	}
	case FT_INT: return json_integer(*AT(base, f->off, int));
	case FT_LONG: return json_integer(*AT(base, f->off, long));
	case FT_DOUBLE: return json_real(*AT(base, f->off, double));
	case FT_BOOL: return json_boolean(*AT(base, f->off, int));
	case FT_ENUM: return json_string(f->choices[*AT(base, f->off, int)]);
	default: return NULL; /* no key of eval or checks has another type (tests/unit/test_config.c) */
	}
}

json_t *config_identity(const struct config *c)
{
	json_t *o = json_object();
	for (const struct field *sec = config_schema; sec->key; sec++) {
		if (strcmp(sec->key, "eval") && strcmp(sec->key, "checks"))
			continue;
		for (const struct field *f = sec->sub; f->key; f++) {
			json_t *v;
			/* the policy is compared hack id by hack id, as the runs table's own column */
			if (f->vis == VIS_INTERNAL || f->vis == VIS_REPORT || f->type == FT_POLICY ||
			    !(v = identity_value(f, AT(c, sec->off, char))))
				continue;
			char *key = xstrfmt("%s.%s", sec->key, f->key);
			json_object_set_new(o, key, v);
			free(key);
		}
	}
	return o;
}

json_t *config_identity_default(const char *preset)
{
	struct config c;
	struct sb_error err = { 0 };
	config_init(&c);
	if (preset && *preset) {
		char *set = xstrfmt("eval.preset=%s", preset);
		config_set(&c, set, &err); /* an unknown preset leaves stitchbench's defaults */
		free(set);
	}
	json_t *o = config_identity(&c);
	config_release(&c);
	return o;
}
