/* finding.c - the finding list, and the policy that turns findings into rejects or flags. */
#include "finding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"

struct finding *findings_vadd(struct findings *l, const char *id, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_vaddf(&sb, fmt, ap);
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	struct finding *f = &l->v[l->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->id, sizeof(f->id), "%s", id);
	f->message = strbuf_detach(&sb, NULL);
	return f;
}

struct finding *findings_add(struct findings *l, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct finding *f = findings_vadd(l, id, fmt, ap);
	va_end(ap);
	return f;
}

struct finding *findings_append(struct findings *l, const struct finding *f)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	struct finding *x = &l->v[l->n++];
	*x = *f;
	x->message = xstrdup(f->message ? f->message : "");
	return x;
}

size_t findings_count(const struct findings *l, const char *id)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += !strcmp(l->v[i].id, id);
	return n;
}

int findings_has(const struct findings *l, const char *id)
{
	return findings_count(l, id) > 0;
}

void findings_take(struct findings *to, struct findings *from)
{
	if (!from->n)
		return;
	to->v = xrealloc(to->v, (to->n + from->n) * sizeof(*to->v));
	memcpy(&to->v[to->n], from->v, from->n * sizeof(*from->v));
	to->n += from->n;
	free(from->v);
	from->v = NULL;
	from->n = 0;
}

void findings_release(struct findings *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].message);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

const char *severity_name(enum severity s)
{
	return s == SEV_REJECT ? "reject" : "flag";
}

void policy_apply(const enum policy_action policy[SB_HACK_IDS], struct finding *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int k = config_hack_index(v[i].id);
		v[i].severity = !v[i].flag_only && k >= 0 && policy[k] == POLICY_REJECT ? SEV_REJECT : SEV_FLAG;
	}
}
