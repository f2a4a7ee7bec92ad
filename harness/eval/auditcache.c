/* auditcache.c - see auditcache.h. */
#include "auditcache.h"

#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"

char *audit_cache_path(const char *cache_root, const char *sha256)
{
	return xstrfmt("%s/audit/%s.json", cache_root, sha256);
}

json_t *audit_cache_read(const char *cache_root, const char *sha256)
{
	char *path = audit_cache_path(cache_root, sha256);
	json_t *j = json_load_file(path, 0, NULL);
	free(path);
	if (j && (json_integer_value(json_object_get(j, "format")) != AUDIT_FORMAT ||
		  strcmp(json_string_value(json_object_get(j, "sha256")) ?: "", sha256))) {
		json_decref(j);
		return NULL;
	}
	return j;
}

void audit_attach(const char *cache_root, struct verdict *v)
{
	json_t *audit = audit_cache_read(cache_root, v->problem_sha256);
	json_decref(v->audit);
	v->audit = audit ? json_pack("{s:O, s:O, s:O}", "findings", json_object_get(audit, "findings"), "device",
				     json_object_get(audit, "device"), "torch", json_object_get(audit, "torch"))
			 : NULL;
	json_decref(audit);
}
