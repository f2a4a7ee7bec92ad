/* transcript.c - building, writing and reading back call records.
 * A transcript is written before the caller sees the answer, so a crash loses at most the call in
 * flight and a replay can serve every answer an agent ever acted on. */
#include "transcript.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../core/sha256.h"
#include "secret.h"

static void add_name(struct strbuf *sb, const char *s)
{
	if (!*s || !strcmp(s, ".") || !strcmp(s, ".."))
		strbuf_addch(sb, '_');
	for (; *s; s++) {
		char c = *s;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			 c == '-' || c == '_';
		strbuf_addch(sb, ok ? c : '_');
	}
}

char *transcript_path(const char *transcripts_root, const char *agent, const char *problem, int sample,
		      int call)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s/", transcripts_root);
	add_name(&sb, agent);
	strbuf_addch(&sb, '/');
	add_name(&sb, problem);
	strbuf_addf(&sb, "/s%d/call-%04d.json", sample, call);
	return strbuf_detach(&sb, NULL);
}

void transcript_key_text(const char *agent, const char *problem, int sample, int call, struct strbuf *out)
{
	strbuf_addf(out, "agent=%s problem=%s sample=%d call=%d", agent, problem, sample, call);
}

void transcript_timestamp(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

json_t *transcript_messages(const struct llm_request *req)
{
	json_t *msgs = json_array();
	for (size_t i = 0; i < req->nmessages; i++)
		json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", req->messages[i].role, "content",
						      req->messages[i].content));
	return msgs;
}

json_t *transcript_canonical_request(const struct llm_request *req)
{
	return json_pack("{s:o, s:i}", "messages", transcript_messages(req), "max_tokens", req->max_tokens);
}

void llm_request_hash(const struct llm_request *req, char out[65])
{
	json_t *canon = transcript_canonical_request(req);
	char *s = json_dumps(canon, JSON_COMPACT | JSON_SORT_KEYS);
	sha256_hex(s ? s : "", s ? strlen(s) : 0, out);
	free(s);
	json_decref(canon);
}

/* The length of the valid UTF-8 sequence at s, by the rules jansson enforces; 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t avail)
{
	unsigned c = s[0], cp;
	size_t n;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2, cp = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, cp = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

void transcript_add_utf8(struct strbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	strbuf_grow(out, len);
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(p + i, len - i);
		if (n && p[i]) {
			strbuf_add(out, p + i, n);
			i += n;
		} else {
			strbuf_addstr(out, "\xEF\xBF\xBD");
			i++;
		}
	}
}

void transcript_add_snippet(struct strbuf *out, const char *body, size_t len, size_t max)
{
	if (!len) {
		strbuf_addstr(out, "(empty body)");
		return;
	}
	size_t start = out->len;
	transcript_add_utf8(out, body, len < max ? len : max);
	for (size_t i = start; i < out->len; i++)
		if ((unsigned char)out->buf[i] < 0x20)
			out->buf[i] = ' ';
	if (len > max)
		strbuf_addf(out, "... (%zu bytes)", len);
}

/* A JSON string of s (repaired to valid UTF-8 if need be: a transcript is never lost to one bad
 * byte from a server), or null. */
static json_t *str_or_null(const char *s, size_t len)
{
	if (!s)
		return json_null();
	json_t *j = json_stringn(s, len);
	if (!j) {
		struct strbuf fixed = STRBUF_INIT;
		transcript_add_utf8(&fixed, s, len);
		j = json_stringn(fixed.buf, fixed.len);
		strbuf_release(&fixed);
	}
	return j ? j : json_null();
}

json_t *transcript_record(const struct transcript_call *t)
{
	const struct llm_response *r = t->resp;
	json_t *key = json_pack("{s:s, s:s, s:i, s:i}", "agent", t->req->agent, "problem", t->req->problem, "sample",
				t->req->sample, "call", t->req->call);
	json_t *model = json_pack("{s:s?, s:s?, s:s?, s:s?}", "name", t->m->name, "provider", t->m->provider, "model",
				  t->m->model, "endpoint", t->url);
	json_t *response = json_pack("{s:I, s:o, s:o, s:o}", "status", (json_int_t)r->http_status, "raw",
				     t->raw && (t->raw->len || r->http_status) ? str_or_null(t->raw->buf, t->raw->len)
									       : json_null(), "text",
				     str_or_null(r->text, r->text_len), "finish_reason",
				     str_or_null(r->finish_reason, r->finish_reason ? strlen(r->finish_reason) : 0));
	json_t *usage = json_pack("{s:I, s:I, s:f}", "prompt_tokens", (json_int_t)r->prompt_tokens,
				  "completion_tokens", (json_int_t)r->completion_tokens, "cost_usd", r->cost_usd);
	json_t *timing = json_pack("{s:s, s:f, s:f, s:i, s:o}", "started_at", t->started_at, "latency_s",
				   r->latency_s, "wall_s", r->wall_s, "attempts", r->attempts, "attempt_log",
				   t->attempt_log ? json_incref(t->attempt_log) : json_array());
	json_t *error = r->kind == LLM_OK ? json_null()
					  : json_pack("{s:s, s:s}", "kind", llm_errkind_name(r->kind), "message",
						      t->error ? t->error : "");
	return json_pack("{s:s, s:o, s:o, s:s, s:O, s:o, s:o, s:o, s:o}", "format", TRANSCRIPT_FORMAT, "key", key,
			 "model", model, "request_hash", t->request_hash, "request",
			 t->request ? t->request : json_null(), "response", response, "usage", usage, "timing", timing,
			 "error", error ? error : json_null());
}

int transcript_write(const char *path, json_t *record, const struct secrets *sec, struct sb_error *err)
{
	struct strbuf text = STRBUF_INIT;
	char *s = json_dumps(record, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
	if (!s)
		return sb_error_set(err, SB_EINTERNAL, "%s: the transcript could not be serialised", path);
	strbuf_addstr(&text, s);
	strbuf_addch(&text, '\n');
	free(s);
	if (sec)
		secrets_scrub(sec, &text);

	int rc = fs_write_atomic(path, text.buf, text.len);
	strbuf_release(&text);
	if (rc)
		return sb_error_set(err, SB_EIO, "%s: cannot write the transcript: %s", path, strerror(-rc));
	return 0;
}

int transcript_to_response(json_t *record, struct llm_response *out, char *msg, size_t cap)
{
	json_t *resp = json_object_get(record, "response"), *usage = json_object_get(record, "usage");
	json_t *timing = json_object_get(record, "timing"), *error = json_object_get(record, "error");
	json_t *text = json_object_get(resp, "text");
	if (!json_is_object(resp) || !json_is_object(usage))
		return -1;
	int kind = LLM_OK;
	msg[0] = '\0';
	if (json_is_object(error)) {
		kind = llm_errkind_parse(json_string_value(json_object_get(error, "kind")));
		if (kind < 0)
			return -1;
		snprintf(msg, cap, "%s", json_is_string(json_object_get(error, "message"))
			 ? json_string_value(json_object_get(error, "message")) : "");
	}
	if (json_is_string(text)) {
		out->text = xstrndup(json_string_value(text), json_string_length(text));
		out->text_len = json_string_length(text);
	}
	const char *fr = json_string_value(json_object_get(resp, "finish_reason"));
	out->finish_reason = fr ? xstrdup(fr) : NULL;
	out->http_status = (long)json_integer_value(json_object_get(resp, "status"));
	out->prompt_tokens = (long)json_integer_value(json_object_get(usage, "prompt_tokens"));
	out->completion_tokens = (long)json_integer_value(json_object_get(usage, "completion_tokens"));
	out->cost_usd = json_number_value(json_object_get(usage, "cost_usd"));
	out->latency_s = json_number_value(json_object_get(timing, "latency_s"));
	out->kind = (enum llm_errkind)kind;
	return kind;
}
