/* probecache.c - the probe's answer kept between invocations. Finding the workers' Python means running
 * harness/worker/probe.py, which imports torch and opens the CUDA driver: seconds on a GPU node, paid by
 * every `stitchbench eval` before its first evaluation. The answer only changes when the interpreter, its
 * torch, what it may import or see, the probe itself, the driver or the machine's boot changes, so the
 * cache key holds all of those, and the torch package the probe found is checked on every read (a
 * reinstall rewrites it). A failed probe is never kept: it is retried every time. */
#include "python.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "sha256.h"

#define PROBE_CACHE_FORMAT 1

static long long mtime_ns(const char *path, long long *size)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (size)
		*size = (long long)st.st_size;
	return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

/* The first line of a small file, or "" (no such file: no NVIDIA driver, another OS). */
static void first_line(const char *path, struct strbuf *out)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, path, 4096) >= 0) {
		char *nl = strchr(sb.buf, '\n');
		strbuf_add(out, sb.buf, nl ? (size_t)(nl - sb.buf) : sb.len);
	}
	strbuf_release(&sb);
}

static char *cache_file(const char *dir, const char *python, const char *probe_script)
{
	struct strbuf key = STRBUF_INIT, probe = STRBUF_INIT;
	char *real = realpath(python, NULL), hex[65], probe_hex[65];
	long long size = 0, mt = mtime_ns(real ? real : python, &size);
	strbuf_read_file(&probe, probe_script, 1 << 20);
	sha256_hex(probe.buf, probe.len, probe_hex);
	strbuf_addf(&key, "format=%d\npython=%s\nreal=%s\nmtime=%lld\nsize=%lld\nprobe=%s\nuid=%d\n", PROBE_CACHE_FORMAT,
		    python, real ? real : "", mt, size, probe_hex, (int)getuid());
	/* what decides what the interpreter imports and which GPUs it sees */
	const char *vars[] = { "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
			       "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", NULL };
	for (const char **v = vars; *v; v++)
		strbuf_addf(&key, "%s=%s%s\n", *v, getenv(*v) ? "set:" : "unset", getenv(*v) ?: "");
	strbuf_addstr(&key, "boot=");
	first_line("/proc/sys/kernel/random/boot_id", &key);
	strbuf_addstr(&key, "\ndriver=");
	first_line("/proc/driver/nvidia/version", &key);
	sha256_hex(key.buf, key.len, hex);
	char *path = xstrfmt("%s/%.32s.json", dir, hex);
	strbuf_release(&key);
	strbuf_release(&probe);
	free(real);
	return path;
}

/* The kept probe text, when the torch package it found is still the one it found. */
static char *lookup(const char *file)
{
	struct strbuf sb = STRBUF_INIT;
	char *text = NULL;
	if (strbuf_read_file(&sb, file, 1 << 20) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	json_t *j = json_loads(sb.buf, 0, NULL);
	const char *probe = json_string_value(json_object_get(j, "probe"));
	const char *torch_file = json_string_value(json_object_get(j, "torch_file"));
	json_t *want = json_object_get(j, "torch_mtime_ns");
	if (probe && torch_file && json_is_integer(want) && mtime_ns(torch_file, NULL) == json_integer_value(want))
		text = xstrdup(probe);
	json_decref(j);
	strbuf_release(&sb);
	return text;
}

static void store(const char *dir, const char *file, const char *probe_text)
{
	json_t *p = json_loads(probe_text, 0, NULL);
	const char *torch_file = json_string_value(json_object_get(p, "torch_file"));
	long long mt = torch_file ? mtime_ns(torch_file, NULL) : -1;
	if (mt >= 0 && fs_mkdirs(dir, 0700) == 0) {
		json_t *o = json_pack("{s:i, s:s, s:s, s:I}", "format", PROBE_CACHE_FORMAT, "probe", probe_text, "torch_file",
				      torch_file, "torch_mtime_ns", (json_int_t)mt);
		char *s = json_dumps(o, JSON_COMPACT);
		if (s)
			fs_write_atomic(file, s, strlen(s)); /* a cache: failing to write it costs the next probe only */
		free(s);
		json_decref(o);
	}
	json_decref(p);
}

int python_probe_cached(const char *dir, const char *python, const char *probe_script, struct python_info *out,
			int *hit, struct sb_error *err)
{
	const char *off = getenv("STITCHBENCH_PROBE_CACHE");
	*hit = 0;
	if (!dir || (off && !strcmp(off, "0")))
		return python_probe(python, probe_script, out, err);
	char *file = cache_file(dir, python, probe_script), *text = lookup(file);
	if (text && python_info_parse(python, text, out, err) == 0) {
		*hit = 1;
		free(text);
		free(file);
		return 0;
	}
	free(text);
	char *fresh = NULL;
	int rc = python_probe_text(python, probe_script, out, &fresh, err);
	if (rc == 0)
		store(dir, file, fresh);
	free(fresh);
	free(file);
	return rc;
}
