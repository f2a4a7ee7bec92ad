/* python.h - choosing the Python the workers run with: config `python:`, then $STITCHBENCH_PYTHON,
 * then the first of `python3` on PATH and /usr/bin/python3 that imports torch. */
#ifndef SB_PYTHON_H
#define SB_PYTHON_H

#include "error.h"
#include "strbuf.h"

struct py_device {
	int index;
	char *name;
	char sm[8];            /* "90" for an H100/H200 */
	long long memory_bytes;
	int multiprocessors;
	long long l2_bytes;
	char uuid[48];         /* torch's form of the GPU's UUID ("" when torch does not say) */
};

struct python_info {
	char *path;            /* the interpreter as it will be exec'd */
	const char *source;    /* "config python:", "STITCHBENCH_PYTHON", "PATH", "/usr/bin/python3" */
	char *version;         /* "3.11.2" */
	char *torch_version;   /* "1.13.0a0" */
	char *torch_cuda;      /* CUDA torch was built with, or NULL for a CPU build */
	int cuda_available;
	int torch_compile;     /* the probe found torch.compile: 1, 0, or -1 when it did not say */
	struct py_device *devices;
	size_t ndevices;
};

/* `configured` is the config's python: (may be NULL). `probe_script` is harness/worker/probe.py.
 * An explicitly chosen interpreter that fails is an error; no silent fallback. `tried` (may be
 * NULL) receives one line per candidate that was rejected, and why. `cache_dir` (may be NULL: always
 * probe) keeps successful probes between invocations (python_probe_cached). */
int python_discover(const char *configured, const char *probe_script, const char *cache_dir, struct python_info *out,
		    struct strbuf *tried, struct sb_error *err);
/* Runs the probe with one interpreter; 0 when it imports torch. */
int python_probe(const char *python, const char *probe_script, struct python_info *out, struct sb_error *err);
/* The same, also handing back the probe's JSON text (*text, to free) when it succeeded. */
int python_probe_text(const char *python, const char *probe_script, struct python_info *out, char **text,
		      struct sb_error *err);
/* python_probe through a cache in `dir` (probecache.c): the kept answer when nothing it depends on has
 * changed (*hit = 1), else a fresh probe, kept when it succeeded. dir NULL or $STITCHBENCH_PROBE_CACHE=0:
 * always probe. */
int python_probe_cached(const char *dir, const char *python, const char *probe_script, struct python_info *out,
			int *hit, struct sb_error *err);
/* Fills out from the probe's JSON text (what python_probe does after running it); python names the
 * interpreter in errors. SB_EENV when the text is not the probe's object or torch failed to import. */
int python_info_parse(const char *python, const char *text, struct python_info *out, struct sb_error *err);
void python_info_release(struct python_info *p);
/* Whether the torch-compile baseline can run under this torch: 1, or 0 with why (a sentence such as
 * "torch 1.13.1 has no torch.compile (needs torch 2.0 or later)"). Decided from the probe's torch_compile,
 * or from the version when the probe did not say (torch.compile appeared in torch 2.0). */
int python_torch_compile(const struct python_info *p, char *why, size_t cap);

#endif
