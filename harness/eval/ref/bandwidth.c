/* bandwidth.c - H21's peak bandwidth: the cache file per GPU (named by the GPU's name and UUID, so a node
 * with eight GPUs keeps eight) and the measurement by the reference worker's `bandwidth` command. */
#include "ref.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../core/fs.h"
#include "../../core/sha256.h"

static int ask(struct worker *w, json_t *req, json_t **reply, double deadline, char *why, size_t n)
{
	struct worker_fault f;
	int rc = worker_call(w, req, reply, deadline, &f);
	json_decref(req);
	if (rc) {
		snprintf(why, n, "the reference worker failed: %s", f.what);
		return -1;
	}
	if (!json_is_true(json_object_get(*reply, "ok"))) {
		const char *m = json_string_value(json_object_get(*reply, "message"));
		snprintf(why, n, "the bandwidth measurement failed: %s", m ? m : "?");
		json_decref(*reply);
		*reply = NULL;
		return -1;
	}
	return 0;
}

int bandwidth_get(struct worker *ref, const char *device, const char *cache_root, double deadline,
		  double *bytes_per_s, int *cached, char *why, size_t why_len)
{
	json_t *hello = NULL, *m = NULL;
	*bytes_per_s = 0;
	*cached = 0;
	if (ask(ref, json_pack("{s:s, s:s}", "cmd", "hello", "device", device), &hello, deadline, why, why_len))
		return -1;
	const char *name = json_string_value(json_object_get(hello, "device_name"));
	const char *uuid = json_string_value(json_object_get(hello, "uuid"));
	char *id = xstrfmt("%s|%s", name ? name : "?", uuid ? uuid : "");
	char hex[65];
	sha256_hex(id, strlen(id), hex);
	char *dir = xstrfmt("%s/bandwidth", cache_root), *path = xstrfmt("%s/%.24s.json", dir, hex);
	json_t *j = json_load_file(path, 0, NULL);
	double bw = json_number_value(json_object_get(j, "bytes_per_s"));
	int rc = 0;
	if (j && bw > 0 && !strcmp(json_string_value(json_object_get(j, "gpu")) ?: "", id)) {
		*bytes_per_s = bw;
		*cached = 1;
	} else if ((rc = ask(ref, json_pack("{s:s, s:I, s:i}", "cmd", "bandwidth", "bytes", (json_int_t)BANDWIDTH_COPY_BYTES,
					  "reps", 20), &m, deadline, why, why_len)) == 0) {
		*bytes_per_s = json_number_value(json_object_get(m, "bytes_per_s"));
		char stamp[32];
		time_t now = time(NULL);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
		json_t *out = json_pack("{s:s, s:f, s:I, s:O, s:s}", "gpu", id, "bytes_per_s", *bytes_per_s, "copy_bytes",
					(json_int_t)BANDWIDTH_COPY_BYTES, "best_ms", json_object_get(m, "best_ms"),
					"measured", stamp);
		char *tmp = xstrfmt("%s.tmp-%d", path, (int)getpid());
		fs_mkdirs(dir, 0700);
		/* a failed write only costs a measurement next time */
		if (json_dump_file(out, tmp, JSON_INDENT(1)) == 0 && rename(tmp, path) != 0)
			unlink(tmp);
		free(tmp);
		json_decref(out);
		if (!(*bytes_per_s > 0)) {
			snprintf(why, why_len, "the bandwidth measurement returned no number");
			rc = -1;
		}
	}
	json_decref(m);
	json_decref(j);
	json_decref(hello);
	free(id);
	free(dir);
	free(path);
	return rc;
}
