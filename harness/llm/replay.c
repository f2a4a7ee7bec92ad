/* replay.c - the replay provider. A run directory is read lazily, one file per call at the path
 * its key names, so replaying a long run costs no start-up time; a JSONL cassette is indexed once. */
#include "replay.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transcript.h"

struct replay {
	char *source;        /* the cassette as configured, for messages */
	char *root;          /* run-directory mode: the transcripts folder; NULL in file mode */
	json_t *index;       /* file mode: key text -> recorded call */
	pthread_mutex_t mu;  /* jansson objects are not safe to share between threads unguarded */
};

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *index_key(const char *agent, const char *problem, long long sample, long long call)
{
	return xstrfmt("%s\x1f%s\x1f%lld\x1f%lld", agent, problem, sample, call);
}

static char *record_key(json_t *rec)
{
	json_t *k = json_object_get(rec, "key");
	const char *agent = json_string_value(json_object_get(k, "agent"));
	const char *problem = json_string_value(json_object_get(k, "problem"));
	json_t *s = json_object_get(k, "sample"), *c = json_object_get(k, "call");
	if (!agent || !problem || !json_is_integer(s) || !json_is_integer(c))
		return NULL;
	return index_key(agent, problem, json_integer_value(s), json_integer_value(c));
}

static int load_cassette_file(struct replay *r, struct sb_error *err)
{
	struct strbuf text = STRBUF_INIT;
	int rc = strbuf_read_file(&text, r->source, 0);
	if (rc) {
		strbuf_release(&text);
		return sb_error_set(err, SB_EINPUT, "%s: cannot read the cassette: %s", r->source, strerror(-rc));
	}
	r->index = json_object();
	char *line = text.buf;
	for (int lineno = 1; line && *line; lineno++) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (strspn(line, " \t\r") < len) {
			json_error_t jerr;
			json_t *rec = json_loadb(line, len, 0, &jerr);
			char *key = rec ? record_key(rec) : NULL;
			if (!key) {
				rc = sb_error_set(err, SB_EINPUT, "%s:%d: not a recorded call (%s)", r->source, lineno,
						  rec ? "no key {agent, problem, sample, call}" : jerr.text);
				json_decref(rec);
				break;
			}
			/* a later line for the same key wins (a resumed run appended it) */
			json_object_set_new(r->index, key, rec);
			free(key);
		}
		line = nl ? nl + 1 : NULL;
	}
	strbuf_release(&text);
	return rc;
}

int replay_open(const char *cassette, struct replay **out, struct sb_error *err)
{
	struct stat st;
	*out = NULL;
	if (!cassette || stat(cassette, &st) < 0)
		return sb_error_set(err, SB_EINPUT,
				    "replay cassette %s: %s: give a run directory or a JSONL cassette file",
				    cassette ? cassette : "(none)", cassette ? strerror(errno) : "not configured");
	struct replay *r = xcalloc(1, sizeof(*r));
	r->source = xstrdup(cassette);
	pthread_mutex_init(&r->mu, NULL);
	int rc = 0;
	if (S_ISDIR(st.st_mode)) {
		char *t = xstrfmt("%s/transcripts", cassette);
		r->root = is_dir(t) ? t : xstrdup(cassette);
		if (r->root != t)
			free(t);
	} else {
		rc = load_cassette_file(r, err);
	}
	if (rc) {
		replay_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

void replay_close(struct replay *r)
{
	if (!r)
		return;
	json_decref(r->index);
	pthread_mutex_destroy(&r->mu);
	free(r->source);
	free(r->root);
	free(r);
}

/* The recording for req (a new reference, safe to modify), or NULL with msg saying why. */
static json_t *find(struct replay *r, const struct llm_request *req, struct strbuf *msg)
{
	char *want = index_key(req->agent, req->problem, req->sample, req->call);
	json_t *rec = NULL;
	if (r->index) {
		pthread_mutex_lock(&r->mu);
		rec = json_deep_copy(json_object_get(r->index, want));
		pthread_mutex_unlock(&r->mu);
	} else {
		char *path = transcript_path(r->root, req->agent, req->problem, req->sample, req->call);
		json_error_t jerr;
		rec = json_load_file(path, 0, &jerr);
		if (!rec && access(path, F_OK) == 0)
			strbuf_addf(msg, "the recording %s is unreadable (%s); ", path, jerr.text);
		char *got = rec ? record_key(rec) : NULL;
		if (rec && (!got || strcmp(got, want))) { /* two keys that reduce to the same file name */
			json_decref(rec);
			rec = NULL;
		}
		free(got);
		free(path);
	}
	free(want);
	if (!rec) {
		strbuf_addstr(msg, "replay: no recorded call for ");
		transcript_key_text(req->agent, req->problem, req->sample, req->call, msg);
		strbuf_addf(msg, " in %s", r->source);
	}
	return rec;
}

enum llm_errkind replay_serve(struct replay *r, int strict, const struct llm_request *req, const char *hash,
			      struct llm_response *out, json_t **record, struct strbuf *msg)
{
	*record = NULL;
	json_t *rec = find(r, req, msg);
	if (!rec)
		return LLM_ERR_REPLAY_MISS;
	const char *recorded = json_string_value(json_object_get(rec, "request_hash"));
	int same = recorded && !strcmp(recorded, hash);
	if (strict && !same) {
		strbuf_addstr(msg, "strict replay: the request for ");
		transcript_key_text(req->agent, req->problem, req->sample, req->call, msg);
		strbuf_addf(msg, " differs from the one recorded in %s (recorded request hash %.12s, this one %.12s): "
			    "the agent's prompts changed; set strict: false to serve the recording anyway",
			    r->source, recorded ? recorded : "none", hash);
		json_decref(rec);
		return LLM_ERR_REPLAY_MISMATCH;
	}
	char recmsg[SB_ERR_MAX];
	int kind = transcript_to_response(rec, out, recmsg, sizeof(recmsg));
	if (kind < 0) {
		strbuf_addstr(msg, "replay: the recording of ");
		transcript_key_text(req->agent, req->problem, req->sample, req->call, msg);
		strbuf_addf(msg, " in %s lacks response or usage", r->source);
		json_decref(rec);
		return LLM_ERR_REPLAY_MISS;
	}
	if (kind != LLM_OK)
		strbuf_addf(msg, "%s (replayed from %s)", recmsg, r->source);
	out->replayed = 1;
	json_object_set_new(rec, "replayed_from", json_string(r->source));
	if (!same) /* this run's own hash, so that replaying this run strictly checks this run's requests */
		json_object_set_new(rec, "recorded_request_hash", recorded ? json_string(recorded) : json_null());
	json_object_set_new(rec, "request_hash", json_string(hash));
	*record = rec;
	return (enum llm_errkind)kind;
}

static void walk(const char *dir, struct strvec *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue; /* also skips the temp files of writes in progress */
		char *p = xstrfmt("%s/%s", dir, e->d_name);
		if (is_dir(p))
			walk(p, out);
		else if (starts_with(e->d_name, "call-") && ends_with(e->d_name, ".json"))
			strvec_push(out, p);
		free(p);
	}
	closedir(d);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void replay_list_transcripts(const char *dir, struct strvec *out)
{
	size_t first = out->nr;
	walk(dir, out);
	/* readdir order is the file system's; sorted, cassettes and counts are reproducible */
	qsort(out->v + first, out->nr - first, sizeof(*out->v), by_path);
}

long replay_count(const char *cassette, struct sb_error *err)
{
	struct replay *r;
	int rc = replay_open(cassette, &r, err);
	if (rc)
		return rc;
	long n;
	if (r->index) {
		n = (long)json_object_size(r->index);
	} else {
		struct strvec files = STRVEC_INIT;
		replay_list_transcripts(r->root, &files);
		n = (long)files.nr;
		strvec_clear(&files);
	}
	replay_close(r);
	return n;
}

int llm_cassette_write(const char *run_dir, const char *path, struct sb_error *err)
{
	struct strvec files = STRVEC_INIT;
	char *root = xstrfmt("%s/transcripts", run_dir);
	int rc = 0;
	replay_list_transcripts(root, &files);
	FILE *f = files.nr ? fopen(path, "w") : NULL;
	if (!files.nr)
		rc = sb_error_set(err, SB_EINPUT, "%s: no transcripts to write as a cassette", root);
	else if (!f)
		rc = sb_error_set(err, SB_EIO, "%s: cannot write the cassette: %s", path, strerror(errno));
	for (size_t i = 0; !rc && i < files.nr; i++) {
		json_error_t jerr;
		json_t *rec = json_load_file(files.v[i], 0, &jerr);
		if (!rec) {
			rc = sb_error_set(err, SB_EINPUT, "%s: %s", files.v[i], jerr.text);
			break;
		}
		if (json_dumpf(rec, f, JSON_COMPACT | JSON_REAL_PRECISION(10)) < 0 || fputc('\n', f) == EOF)
			rc = sb_error_set(err, SB_EIO, "%s: write failed: %s", path, strerror(errno));
		json_decref(rec);
	}
	if (f && fclose(f) == EOF && !rc)
		rc = sb_error_set(err, SB_EIO, "%s: write failed: %s", path, strerror(errno));
	strvec_clear(&files);
	free(root);
	return rc;
}
