/* config_schema.h - the table that describes every configuration key: its type, range and place
 * in struct config. The YAML reader, the --set overrides and the dumper all walk this one table. */
#ifndef SB_CONFIG_SCHEMA_H
#define SB_CONFIG_SCHEMA_H

#include <stddef.h>

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
};

extern const struct field config_schema[];

#endif
