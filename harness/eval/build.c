/* build.c - the trusted builder (DESIGN §6): a candidate's extensions are built once, in a sandboxed worker
 * of their own that can write nothing but its own folder, and published by the parent under a key the
 * parent computes from the exact bytes of the checked file (and the arch, torch and build settings). The
 * worker that evaluates the candidate gets a private copy of that build and cannot read the cache itself:
 * no candidate can place a binary where another source's build is read from, nor read another's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../core/log.h"
#include "../core/sha256.h"
#include "eval_int.h"
#include "static_verdict.h"

/* The worker's files decide how a build is laid out (the cache keys of its calls, the headers): part of
 * the key, so a changed worker never reads an old build. */
static void hash_file(struct sha256_ctx *h, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, path, 64u << 20) == 0)
		sha256_update(h, sb.buf, sb.len);
	strbuf_release(&sb);
}

char *eval_build_dir(const struct eval_env *e, const struct config *cfg, const struct candidate_source *src)
{
	struct sha256_ctx h;
	struct strbuf sb = STRBUF_INIT;
	uint8_t d[32];
	char hex[65];
	if (src->read_errno)
		return NULL;
	sha256_init(&h);
	sha256_update(&h, src->text.buf, src->text.len);
	strbuf_addf(&sb, "\nbuild=1\nsm=%s\ntorch=%s\npython=%s\nlean=%d\nlite=%d\nsplit=%d\n", e->sm, e->torch, e->python,
		    cfg->eval.lean_headers, cfg->eval.lite_headers, cfg->eval.split_nvcc);
	sha256_update(&h, sb.buf, sb.len);
	hash_file(&h, e->worker_script);
	const char *slash = strrchr(e->worker_script, '/');
	char *headers = xstrfmt("%.*s/headers.py", slash ? (int)(slash - e->worker_script) : 1, slash ? e->worker_script : ".");
	hash_file(&h, headers);
	free(headers);
	strbuf_release(&sb);
	sha256_final(&h, d);
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return xstrfmt("%s/ext/%s", e->cache_root, hex);
}

/* Publishes the builder's folder as the build of its key: renamed into place, so a build is there whole
 * or not at all; another evaluation's build of the same key, published first, is as good. */
static int publish(const char *from, const char *to, struct sb_error *err)
{
	char *parent = xstrdup(to);
	*strrchr(parent, '/') = '\0';
	fs_mkdirs(parent, 0700);
	free(parent);
	char *done = xstrfmt("%s/.published", from);
	int rc = fs_write_atomic(done, "1\n", 2);
	free(done);
	if (rc)
		return sb_error_set(err, SB_EIO, "cannot mark the build in %s: %s", from, strerror(-rc));
	if (rename(from, to) != 0 && errno != ENOTEMPTY && errno != EEXIST)
		return sb_error_set(err, SB_EIO, "cannot publish the build %s as %s: %s", from, to, strerror(errno));
	return 0;
}

int eval_build_published(const char *build_dir)
{
	char *done = xstrfmt("%s/.published", build_dir);
	int ok = access(done, F_OK) == 0;
	free(done);
	return ok;
}

/* Whether the file can build anything here: the builder's worker builds what torch's C++ extension loader
 * compiles, and a file that never names it has nothing to build (pure PyTorch, Triton, a reference). Such
 * a file costs no worker: one that reaches the loader some other way builds inside its evaluation,
 * under its timeout, as it would without a builder. */
static int names_extension_loader(const struct candidate_source *src)
{
	return src->read_errno || strstr(src->text.buf, "cpp_extension") || strstr(src->text.buf, "load_inline");
}

int eval_build(const struct eval_env *e, const struct config *cfg, const struct problem *p,
	       const struct candidate_source *src, int *ok, enum verdict_status *status, char **msg, char **detail,
	       json_t **builds, struct sb_error *err)
{
	struct verdict v;
	struct eval_ctx c = { .e = e, .cfg = cfg, .p = p, .v = &v };
	json_t *reply;
	int rc;
	verdict_init(&v);
	*ok = 0;
	*status = V_COMPILE_ERROR;
	*msg = *detail = NULL;
	if (builds)
		*builds = NULL;
	char *build = eval_build_dir(e, cfg, src);
	if (!build || eval_build_published(build) || !names_extension_loader(src)) {
		free(build);
		verdict_release(&v);
		*ok = 1; /* built already (or unreadable: the evaluation reports it) */
		return 0;
	}
	if ((rc = evalctx_dirs(&c, 0, err)) == 0) {
		evalctx_env(&c, 0);
		c.out_bytes = 0;
		char sha[65], *copy;
		sha256_hex(src->text.buf, src->text.len, sha); /* the builder builds the bytes that were checked */
		if (!(copy = evalctx_candidate_copy(&c, src->path, sha, err)))
			rc = -1;
		if (rc == 0 && (rc = evalctx_start_cand(&c, err)) == 0) {
			double t0 = proc_now();
			if (eval_cand_ask(&c.cand, eval_load_request(e, cfg, p, copy, c.ext_dir, 0, 1), &reply,
					  proc_now() + cfg->eval.timeout_s, &v, "building", cfg->eval.timeout_s) == 0) {
				if (builds)
					*builds = json_incref(json_object_get(reply, "builds"));
				json_decref(reply);
				*ok = 1;
				/* the builder is done with its folder once it has answered */
				worker_stop(&c.cand, 2);
				rc = publish(c.ext_dir, build, err);
				sb_trace("build: %s in %.3f s, published as %s", src->path, proc_now() - t0, build);
			} else if (v.status == V_COMPILE_ERROR || v.status == V_FORMAT_ERROR) {
				*status = v.status;
				*msg = xstrdup(v.message ? v.message : "build failed");
				*detail = v.detail ? xstrdup(v.detail) : NULL;
			} else {
				*ok = 1; /* not a build failure: the evaluation proper will report it */
			}
		}
		free(copy);
	}
	free(build);
	evalctx_release(&c);
	verdict_release(&v);
	return rc;
}

int eval_prebuild(const struct eval_env *e, const struct config *cfg, const struct problem *p, const char *candidate_path,
		  int *ok, enum verdict_status *status, char **msg, char **detail, struct sb_error *err)
{
	struct verdict v;
	verdict_init(&v);
	struct candidate_source src;
	candidate_source_load(&src, candidate_path);
	int rc = 0, rejected = eval_format_check(e, &src, &v) || static_judge(cfg, p->path, &src, &v) ||
				  eval_device_check(e, cfg, &src, &v);
	verdict_release(&v);
	if (rejected) {
		*ok = 1; /* rejected before any build: the evaluation proper reports it */
		*msg = *detail = NULL;
	} else {
		rc = eval_build(e, cfg, p, &src, ok, status, msg, detail, NULL, err);
	}
	candidate_source_release(&src);
	return rc;
}
