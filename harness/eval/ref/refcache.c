/* refcache.c - the cache of what a problem's reference is (ref.h). Entries are written into a
 * temporary folder and renamed into place, so a crash or a concurrent evaluation never leaves a half
 * entry behind. */
#include "ref.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/sha256.h"
#include "../../core/strbuf.h"

#define REFCACHE_FORMAT 6 /* 6: the problem's facts only (no outputs: every evaluation draws its own seeds) */

char *refcache_dir(const char *cache_root, const struct refcache_key *k)
{
	struct strbuf sb = STRBUF_INIT;
	char hex[65];
	strbuf_addf(&sb, "format=%d\nproblem=%s\ninit_seed=%d\ndevice=%s\ntorch=%s\ntf32=%d\n", REFCACHE_FORMAT,
		    k->problem_sha256, k->init_seed, k->device_name, k->torch_version, k->tf32);
	sha256_hex(sb.buf, sb.len, hex);
	strbuf_release(&sb);
	return xstrfmt("%s/ref/%.32s", cache_root, hex);
}

json_t *refcache_lookup(const char *dir)
{
	char *meta = xstrfmt("%s/meta.json", dir);
	json_t *j = json_load_file(meta, 0, NULL);
	free(meta);
	if (j && json_integer_value(json_object_get(j, "format")) != REFCACHE_FORMAT) {
		json_decref(j);
		return NULL;
	}
	return j;
}

int refcache_publish(const char *tmpdir, const char *dir, json_t *meta, struct sb_error *err)
{
	char *mpath = xstrfmt("%s/meta.json", tmpdir);
	json_object_set_new(meta, "format", json_integer(REFCACHE_FORMAT));
	int rc = json_dump_file(meta, mpath, JSON_INDENT(1));
	free(mpath);
	if (rc)
		return sb_error_set(err, SB_EIO, "cannot write the reference cache entry in %s", tmpdir);
	char *parent = xstrdup(dir);
	*strrchr(parent, '/') = '\0';
	mkdir(parent, 0700);
	free(parent);
	if (rename(tmpdir, dir) != 0 && errno != ENOTEMPTY && errno != EEXIST)
		return sb_error_set(err, SB_EIO, "cannot publish %s as %s: %s", tmpdir, dir, strerror(errno));
	return 0; /* another evaluation published the same entry first: theirs is as good as ours */
}
