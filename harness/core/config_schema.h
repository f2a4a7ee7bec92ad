/* config_schema.h - the table that describes every configuration key: its type, range and place
 * in struct config. The YAML reader, the --set overrides and the dumper all walk this one table. */
#ifndef SB_CONFIG_SCHEMA_H
#define SB_CONFIG_SCHEMA_H

#include <stddef.h>

#include "error.h"

/* The member of type `type` at byte offset `off` of the struct at `base`. */
#define AT(base, off, type) ((type *)((char *)(base) + (off)))

enum field_type {
	FT_STR,       /* char*; null allowed */
	FT_CHOICE,    /* char* restricted to `choices` */
	FT_INT,       /* int within [min, max] */
	FT_LONG,      /* long within [min, max] */
	FT_DOUBLE,    /* double within [min, max] */
	FT_BOOL,      /* int 0/1 from true/false/yes/no/on/off */
	FT_ENUM,      /* int index into `choices` */
	FT_STRLIST,   /* char** at off, size_t count at off2 */
	FT_LEVELS,    /* int[4] flags from a list of levels 1..4 */
	FT_HEADERS,   /* struct header_kv* at off, size_t count at off2, from a mapping */
	FT_POLICY,    /* enum policy_action[SB_HACK_IDS] from a mapping H01..H22 -> reject|flag */
	FT_SECTION,   /* nested mapping whose fields are `sub`, at off */
	FT_LIST,      /* sequence of mappings: element array at off, count at off2 */
};

/* Who a key is for. Public keys change what is measured or decided: docs/config.md documents them and
 * they join a run's identity. Hidden keys change numbers too (so they join the identity) but are
 * measuring knobs that presets set; internal keys are fast paths that leave every verdict as it is
 * (tests/e2e/test_fastpaths.sh); report keys add to what a verdict shows after everything is decided
 * (the kernels' hardware metrics), so two runs that differ in one still compare. None of the three is
 * in docs/config.md. 0 is public, so a new key is documented and compared unless someone decides
 * otherwise. */
enum field_visibility {
	VIS_PUBLIC,
	VIS_HIDDEN,
	VIS_INTERNAL,
	VIS_REPORT,
};

struct field {
	const char *key;
	enum field_type type;
	size_t off, off2;
	double min, max;
	const char *const *choices;
	const struct field *sub;           /* FT_SECTION, FT_LIST: NULL-key-terminated */
	size_t elem_size;                  /* FT_LIST */
	void (*elem_init)(void *elem);     /* FT_LIST: defaults for one element */
	void (*elem_release)(void *elem);
	const char *doc;                   /* one line, shown by `doctor --config` comments and docs */
	int redact;                        /* FT_HEADERS: dump the values of secret-looking names redacted */
	enum field_visibility vis;
};

extern const struct field config_schema[];
extern const char *const config_presets[]; /* eval.preset's choices; setting that key applies the preset */

struct config;
/* config_set's work; `given` = 0 for a value a preset sets, which leaves the key free for the next preset. */
int config_assign(struct config *c, const char *assignment, int given, struct sb_error *err);
/* The keys the file or a --set named (struct config.given). */
void config_mark_given(struct config *c, const char *key);
int config_is_given(const struct config *c, const char *key);
/* Sets every key of c's preset (c->eval.preset) that was not given (config_preset.c). */
void config_apply_preset(struct config *c);
/* The preset table, row by row, for the tests and docs: row i's key, and in *value its value under p;
 * NULL past the last row. */
size_t config_preset_rows(void);
const char *config_preset_row(size_t i, int preset, const char **value);

#endif
