/* forkserver.c - stitchbench's side of the fork server (proc.h): start it, ask it for a worker,
 * stop it. The server is itself a worker process (a JSON-line channel on fd 3 and 4), so the worker
 * client does the talking; what is new is that the requests carry the child's descriptors. */
#include "proc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/fs.h"
#include "../../core/log.h"
#include "../../core/strbuf.h"

/* How long the first spawn may wait for the server's `import torch` (a cold node: 5-10 s), and a later
 * one for a fork (milliseconds). */
#define FIRST_SPAWN_S 180.0
#define SPAWN_S 30.0

struct forkserver {
	pthread_mutex_t mu;   /* one request at a time: `run` starts workers from several threads */
	struct worker w;
	int answered;         /* it has replied once (torch imported) */
	int failed;           /* it died or misbehaved: no more requests, workers are exec'd */
	struct strvec env;
};

char *forkserver_lib(const char *home)
{
	const char *env = getenv("STITCHBENCH_SPAWN_LIB");
	return env && *env ? xstrdup(env) : xstrfmt("%s/lib/libsbspawn.so", home);
}

struct forkserver *forkserver_start(const char *python, const char *template_script, const char *spawn_lib,
				    const char *dir, const char *const *env, char *why, size_t whylen)
{
	if (access(spawn_lib, R_OK) != 0) {
		snprintf(why, whylen, "%s: %s", spawn_lib, strerror(errno));
		return NULL;
	}
	struct forkserver *fs = xcalloc(1, sizeof(*fs));
	pthread_mutex_init(&fs->mu, NULL);
	for (size_t i = 0; env && env[i]; i++)
		strvec_push(&fs->env, env[i]);
	strvec_pushf(&fs->env, "STITCHBENCH_SPAWN_LIB=%s", spawn_lib);
	/* a kept process: it serves every thread of the invocation and exits when its channel closes */
	struct worker_spec spec = { python, template_script, dir, fs->env.v, NULL, 64 << 10, 1, NULL };
	struct sb_error err = { 0 };
	if (worker_start(&fs->w, &spec, &err)) {
		snprintf(why, whylen, "%s", err.msg);
		strvec_clear(&fs->env);
		free(fs);
		return NULL;
	}
	return fs;
}

int forkserver_alive(struct forkserver *fs)
{
	return fs && !fs->failed;
}

static void fail(struct forkserver *fs, const char *what)
{
	fs->failed = 1;
	worker_stop(&fs->w, 1);
	/* its last line says why (a Python exception, template.py's own check) */
	struct strbuf *e = &fs->w.log.err;
	while (e->len && e->buf[e->len - 1] == '\n')
		strbuf_setlen(e, e->len - 1);
	const char *last = e->len ? strrchr(e->buf, '\n') : NULL;
	sb_warn(NULL, "the fork server stopped (%s: %s); workers start Python and import torch themselves from now on",
		what, e->len ? (last ? last + 1 : e->buf) : "it printed nothing");
}

/* The sandbox as the server passes it to sbspawn_child. */
static json_t *sandbox_json(const struct sandbox_opts *sb)
{
	json_t *wd = json_array(), *hd = json_array();
	for (size_t i = 0; sb->write_dirs && sb->write_dirs[i]; i++)
		json_array_append_new(wd, json_string(sb->write_dirs[i]));
	for (size_t i = 0; sb->hidden && sb->hidden[i]; i++)
		json_array_append_new(hd, json_string(sb->hidden[i]));
	return json_pack("{s:s, s:o, s:o, s:i, s:I, s:I, s:i, s:i, s:b, s:b, s:b, s:b, s:i}", "workdir",
			 sb->workdir ? sb->workdir : "", "write_dirs", wd, "hidden", hd, "cpu_seconds", sb->cpu_seconds,
			 "file_bytes", (json_int_t)sb->file_bytes, "address_space", (json_int_t)sb->address_space, "open_files", sb->open_files, "processes", sb->processes, "no_network",
			 sb->no_network, "own_pids", sb->own_pids, "private_tmp", sb->private_tmp, "landlock", sb->landlock, "disabled", sb->disabled);
}

struct spawn_req {
	struct forkserver *fs;
	const struct sandbox_opts *sandbox;
};

static pid_t spawn(void *arg, const struct proc_opts *o, const int fds[5])
{
	struct spawn_req *sr = arg;
	struct forkserver *fs = sr->fs;
	json_t *env = json_array();
	for (size_t i = 0; o->env && o->env[i]; i++)
		json_array_append_new(env, json_string(o->env[i]));
	json_t *req = json_pack("{s:s, s:i, s:s, s:o, s:b, s:o}", "cmd", "spawn", "fds", 5, "cwd", o->cwd ? o->cwd : ".",
				"env", env, "outlives_parent", o->outlives_thread, "sandbox",
				sr->sandbox ? sandbox_json(sr->sandbox) : json_null());
	struct worker_fault f;
	json_t *reply = NULL;
	pid_t pid = -1;
	double deadline = proc_now() + (fs->answered ? SPAWN_S : FIRST_SPAWN_S);
	if (worker_send_fds(&fs->w, req, fds, 5, &f) || worker_receive(&fs->w, &reply, deadline, &f)) {
		fail(fs, f.what);
	} else if (!json_is_true(json_object_get(reply, "ok")) || json_integer_value(json_object_get(reply, "pid")) <= 0) {
		const char *m = json_string_value(json_object_get(reply, "message"));
		fail(fs, m ? m : "a reply without a pid");
	} else {
		fs->answered = 1;
		pid = (pid_t)json_integer_value(json_object_get(reply, "pid"));
	}
	json_decref(reply);
	json_decref(req);
	return pid;
}

int forkserver_spawn(struct forkserver *fs, const struct proc_opts *o, const struct sandbox_opts *sandbox,
		     struct proc_handle *h)
{
	if (!fs)
		return -1;
	pthread_mutex_lock(&fs->mu);
	int rc = -1;
	if (!fs->failed) {
		struct spawn_req sr = { fs, sandbox };
		double t0 = proc_now();
		rc = proc_start_via(o, h, spawn, &sr);
		sb_trace("fork server: worker %d forked in %.3f s", rc ? -1 : (int)h->pid, proc_now() - t0);
	}
	pthread_mutex_unlock(&fs->mu);
	return rc;
}

void forkserver_stop(struct forkserver *fs)
{
	if (!fs)
		return;
	if (!fs->failed)
		worker_stop(&fs->w, 2);
	proc_result_release(&fs->w.log);
	strvec_clear(&fs->env);
	pthread_mutex_destroy(&fs->mu);
	free(fs);
}
