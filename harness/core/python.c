/* python.c - runs harness/worker/probe.py under candidate interpreters and keeps the first that
 * imports torch. The probe's JSON is parsed here, so the decision stays in C. */
#include "python.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

/* Importing torch can take seconds on a cold disk; a hung interpreter must not hang doctor. */
#define PROBE_TIMEOUT_MS 60000

static char *json_strdup(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? xstrdup(s) : NULL;
}

static void parse_devices(json_t *arr, struct python_info *out)
{
	size_t i;
	json_t *d;
	out->devices = xcalloc(json_array_size(arr) + 1, sizeof(*out->devices));
	json_array_foreach(arr, i, d) {
		struct py_device *pd = &out->devices[out->ndevices++];
		pd->index = (int)json_integer_value(json_object_get(d, "index"));
		pd->name = json_strdup(d, "name");
		snprintf(pd->sm, sizeof(pd->sm), "%s", json_string_value(json_object_get(d, "sm")) ?: "");
		pd->memory_bytes = json_integer_value(json_object_get(d, "memory_bytes"));
		pd->multiprocessors = (int)json_integer_value(json_object_get(d, "multiprocessors"));
		pd->l2_bytes = json_integer_value(json_object_get(d, "l2_bytes"));
		snprintf(pd->uuid, sizeof(pd->uuid), "%s", json_string_value(json_object_get(d, "uuid")) ?: "");
	}
}

int python_probe(const char *python, const char *probe_script, struct python_info *out, struct sb_error *err)
{
	return python_probe_text(python, probe_script, out, NULL, err);
}

int python_probe_text(const char *python, const char *probe_script, struct python_info *out, char **text,
		      struct sb_error *err)
{
	const char *argv[] = { python, probe_script, NULL };
	struct proc_opts o = { .argv = argv, .timeout_ms = PROBE_TIMEOUT_MS, .out_cap = 1 << 20, .err_cap = 64 << 10 };
	struct proc_result r;
	int rc;

	memset(out, 0, sizeof(*out));
	proc_result_init(&r);
	rc = proc_run(&o, &r);
	if (rc) {
		proc_result_release(&r);
		return sb_error_set(err, SB_EENV, "%s: cannot start: %s", python, strerror(-rc));
	}
	if (r.spawn_failed || !proc_ok(&r)) {
		strbuf_trim(&r.err);
		const char *last = strrchr(r.err.buf, '\n');
		rc = sb_error_set(err, SB_EENV, "%s: %s", python,
				  r.timed_out ? "the probe timed out" : r.spawn_failed ? "not found or not executable"
				  : (last ? last + 1 : r.err.len ? r.err.buf : "the probe failed"));
		proc_result_release(&r);
		return rc;
	}
	rc = python_info_parse(python, r.out.buf, out, err);
	if (rc == 0 && text)
		*text = xstrdup(r.out.buf);
	proc_result_release(&r);
	return rc;
}

int python_info_parse(const char *python, const char *text, struct python_info *out, struct sb_error *err)
{
	json_error_t jerr;
	int rc;
	memset(out, 0, sizeof(*out));
	json_t *j = json_loads(text, 0, &jerr);
	if (!json_is_object(j)) {
		json_decref(j);
		return sb_error_set(err, SB_EENV, "%s: the probe printed no JSON (%s)", python, jerr.text);
	}
	out->path = xstrdup(python);
	out->version = json_strdup(j, "python");
	char *terr = json_strdup(j, "torch_error");
	if (terr) {
		rc = sb_error_set(err, SB_EENV, "%s (Python %s): cannot import torch: %s", python,
				  out->version ? out->version : "?", terr);
		free(terr);
		json_decref(j);
		python_info_release(out);
		return rc;
	}
	out->torch_version = json_strdup(j, "torch");
	out->torch_cuda = json_strdup(j, "torch_cuda");
	out->cuda_available = json_is_true(json_object_get(j, "cuda_available"));
	json_t *tc = json_object_get(j, "torch_compile");
	out->torch_compile = json_is_boolean(tc) ? json_is_true(tc) : -1;
	parse_devices(json_object_get(j, "devices"), out);
	json_decref(j);
	return 0;
}

int python_torch_compile(const struct python_info *p, char *why, size_t cap)
{
	const char *v = p->torch_version ? p->torch_version : "?";
	/* "1.13.0a0" -> 1, "2.1.0+cu121" -> 2; an unparsable version counts as old */
	int has = p->torch_compile >= 0 ? p->torch_compile : atoi(v) >= 2;
	if (!has)
		snprintf(why, cap, "torch %s has no torch.compile (needs torch 2.0 or later)", v);
	return has;
}

void python_info_release(struct python_info *p)
{
	free(p->path);
	free(p->version);
	free(p->torch_version);
	free(p->torch_cuda);
	for (size_t i = 0; i < p->ndevices; i++)
		free(p->devices[i].name);
	free(p->devices);
	memset(p, 0, sizeof(*p));
}

int python_discover(const char *configured, const char *probe_script, const char *cache_dir, struct python_info *out,
		    struct strbuf *tried, struct sb_error *err)
{
	const char *env = getenv("STITCHBENCH_PYTHON");
	struct sb_error e1 = { 0 };
	int rc, hit;

	if (configured || (env && *env)) {
		const char *which = configured ? configured : env;
		rc = python_probe_cached(cache_dir, which, probe_script, out, &hit, err);
		if (rc)
			sb_error_prefix(err, "the Python chosen by %s",
					configured ? "the config's python:" : "STITCHBENCH_PYTHON");
		else
			out->source = configured ? "config python:" : "STITCHBENCH_PYTHON";
		return rc;
	}
	char *on_path = proc_which("python3");
	const char *cands[2] = { on_path, "/usr/bin/python3" };
	const char *labels[2] = { "PATH", "/usr/bin/python3" };
	for (int i = 0; i < 2; i++) {
		if (!cands[i])
			continue;
		if (i == 1 && on_path && !strcmp(on_path, cands[1]))
			break;
		if (python_probe_cached(cache_dir, cands[i], probe_script, out, &hit, &e1) == 0) {
			out->source = labels[i];
			free(on_path);
			return 0;
		}
		if (tried)
			strbuf_addf(tried, "  %s\n", e1.msg);
	}
	free(on_path);
	return sb_error_set(err, SB_EENV,
			    "no Python that imports torch was found (tried python3 on PATH and /usr/bin/python3): "
			    "install python3-torch (scripts/setup.sh does), or set STITCHBENCH_PYTHON or python: in the config");
}
