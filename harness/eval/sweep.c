/* sweep.c - the work folders and temporary entries a process leaves in the cache when it dies without
 * cleaning up (kill -9, a node lost), removed by the next evaluating process. A folder's owner is the
 * pid in its name (eval-PID-XXXXXX, ref-PID-XXXXXX, NAME.tmp-PID); whether that owner is gone is asked
 * of the owner locks, not of kill(pid, 0): a lock is dropped by the kernel when its holder dies, is not
 * fooled by a pid used again, and works where the cache is shared by the nodes of a cluster. */
#include "sweep.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fs.h"

/* The pid an entry's name carries: "PREFIX-PID-XXXXXX" (mkdtemp's six characters hold no '-') in the
 * folders of work/ and refw/, "NAME.tmp-PID" elsewhere; 0 when it carries none. */
static long entry_pid(const char *name, int tmp_style)
{
	const char *end, *start;
	if (tmp_style) {
		const char *t = strstr(name, ".tmp-");
		if (!t)
			return 0;
		start = t + 5;
		end = start + strlen(start);
	} else {
		end = strrchr(name, '-');
		if (!end || strlen(end + 1) != 6)
			return 0;
		start = end;
		while (start > name && start[-1] != '-')
			start--;
		if (start == name)
			return 0;
	}
	if (start == end || end - start > 9)
		return 0;
	long pid = 0;
	for (const char *p = start; p < end; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		pid = pid * 10 + (*p - '0');
	}
	return pid;
}

struct entry {
	char *path;
	long pid;
};

static void collect(const char *dir, int tmp_style, struct entry **v, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		long pid = e->d_name[0] == '.' ? 0 : entry_pid(e->d_name, tmp_style);
		if (pid <= 0 || pid == (long)getpid())
			continue;
		*v = xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[*n].path = xstrfmt("%s/%s", dir, e->d_name);
		(*v)[(*n)++].pid = pid;
	}
	if (d)
		closedir(d);
}

/* Whether every owner lock of pid is free (taken here, then into *held for removal) and there is one:
 * the owner is gone. One lock per host that ran such a pid. */
static int owner_gone(const char *locks, long pid, struct lockfile **held, size_t *nheld, struct strvec *paths)
{
	char prefix[48];
	int n = snprintf(prefix, sizeof(prefix), "owner-%ld-", pid), gone = 0, alive = 0;
	DIR *d = opendir(locks);
	struct dirent *e;
	while (d && !alive && (e = readdir(d))) {
		if (strncmp(e->d_name, prefix, (size_t)n))
			continue;
		char *path = xstrfmt("%s/%s", locks, e->d_name);
		struct lockfile l = LOCKFILE_INIT;
		struct sb_error ignored;
		if (lockfile_take(&l, path, 0, "sweeping what its owner left", NULL, 0, &ignored) == 0) {
			*held = xrealloc(*held, (*nheld + 1) * sizeof(**held));
			(*held)[(*nheld)++] = l;
			strvec_push(paths, path);
			gone = 1;
		} else {
			alive = 1;
		}
		free(path);
	}
	if (d)
		closedir(d);
	return gone && !alive;
}

/* The owner locks nobody holds any more: every entry of theirs is swept by now (an entry of a pid with
 * no lock would be left for good), so they only pile up. */
static void forget_owners(const char *locks)
{
	DIR *d = opendir(locks);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "owner-", 6))
			continue;
		char *path = xstrfmt("%s/%s", locks, e->d_name);
		struct lockfile l = LOCKFILE_INIT;
		struct sb_error ignored;
		if (lockfile_take(&l, path, 0, "forgetting an ended owner", NULL, 0, &ignored) == 0) {
			unlink(path);
			lockfile_release(&l);
		}
		free(path);
	}
	if (d)
		closedir(d);
}

int eval_claim_begin(struct eval_claim *c, const char *cache_root, struct sb_error *err)
{
	char host[128];
	lockfile_host(host, sizeof(host));
	char *locks = xstrfmt("%s/locks", cache_root);
	char *mine = xstrfmt("%s/owner-%d-%s.lock", locks, (int)getpid(), host);
	/* waits: a sweeper may hold this very file for a moment, found from a dead process of this pid */
	int rc = lockfile_take(&c->owner, mine, 1, "evaluating (the owner of its work folders)", NULL, 0, err);
	free(mine);
	if (rc) {
		free(locks);
		return rc;
	}
	/* the entries are listed before the owner locks are tried: an entry made after the listing is
	 * not looked at, and one made before it has an owner that took its lock before making it */
	static const char *const tmp_areas[] = { "ref", "refprof", "audit", "bandwidth", "reftime" };
	struct entry *v = NULL;
	size_t n = 0;
	char *dir = xstrfmt("%s/work", cache_root);
	collect(dir, 0, &v, &n);
	free(dir);
	dir = xstrfmt("%s/refw", cache_root);
	collect(dir, 0, &v, &n);
	free(dir);
	for (size_t i = 0; i < sizeof(tmp_areas) / sizeof(*tmp_areas); i++) {
		dir = xstrfmt("%s/%s", cache_root, tmp_areas[i]);
		collect(dir, 1, &v, &n);
		free(dir);
	}
	for (size_t i = 0; i < n; i++) {
		if (!v[i].path) /* removed with an earlier entry of its pid */
			continue;
		struct lockfile *held = NULL;
		size_t nheld = 0;
		struct strvec owners = STRVEC_INIT;
		if (owner_gone(locks, v[i].pid, &held, &nheld, &owners)) {
			for (size_t k = i; k < n; k++)
				if (v[k].path && v[k].pid == v[i].pid) {
					c->swept += fs_remove_tree(v[k].path) == 0;
					free(v[k].path);
					v[k].path = NULL;
				}
			for (size_t k = 0; k < owners.nr; k++) /* while still locked: see lockfile_take */
				unlink(owners.v[k]);
		}
		for (size_t k = 0; k < nheld; k++)
			lockfile_release(&held[k]);
		free(held);
		strvec_clear(&owners);
		if (v[i].path) { /* an owner still alive, or none known: kept */
			long pid = v[i].pid;
			for (size_t k = i; k < n; k++)
				if (v[k].path && v[k].pid == pid) {
					free(v[k].path);
					v[k].path = NULL;
				}
		}
	}
	free(v);
	forget_owners(locks);
	free(locks);
	return 0;
}

int eval_claim_device(struct eval_claim *c, const char *cache_root, const char *device, struct strbuf *warnings,
		      struct sb_error *err)
{
	char warning[1024];
	struct lockfile l = LOCKFILE_INIT;
	int rc = lockfile_device(&l, cache_root, device, warning, sizeof(warning), err);
	if (rc < 0)
		return rc;
	if (rc == 1 && warnings)
		strbuf_addf(warnings, "%s%s", warnings->len ? "\n" : "", warning);
	if (l.fd >= 0) {
		c->devices = xrealloc(c->devices, (c->ndevices + 1) * sizeof(*c->devices));
		c->devices[c->ndevices++] = l;
	}
	return 0;
}

void eval_claim_release(struct eval_claim *c)
{
	for (size_t i = 0; i < c->ndevices; i++)
		lockfile_release(&c->devices[i]);
	free(c->devices);
	c->devices = NULL;
	c->ndevices = 0;
	lockfile_release(&c->owner);
}
