/* refpool.c - the kept reference workers: a small table under a lock, per device one problem's worker
 * and one spare. */
#include "ref.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/fs.h"
#include "../../core/proc.h"
#include "../../core/strbuf.h"

struct entry {
	char *key, *device;
	struct refpool_item it;
};

static struct {
	pthread_mutex_t mu;
	struct entry *e;
	size_t n, cap;
	int atexit_done;
} P = { .mu = PTHREAD_MUTEX_INITIALIZER };

char *refpool_key(const char *problem_sha256, const char *problem_path, const char *device, int seed,
		  int compile, const char *python)
{
	return xstrfmt("%s|%s|%s|%d|%d|%s", problem_sha256, problem_path, device, seed, compile, python);
}

static void item_stop(struct refpool_item *it)
{
	worker_stop(&it->w, 5);
	proc_result_release(&it->w.log);
	if (it->dir)
		fs_remove_tree(it->dir);
	free(it->dir);
	memset(it, 0, sizeof(*it));
}

/* Removes entry i from the table (the lock is held); its worker goes to *out. */
static void unlink_entry(size_t i, struct refpool_item *out)
{
	*out = P.e[i].it;
	free(P.e[i].key);
	free(P.e[i].device);
	P.e[i] = P.e[--P.n];
}

int refpool_take(const char *key, const char *device, struct refpool_item *out)
{
	struct refpool_item mine = { 0 }, stale = { 0 };
	int found = 0, nstale = 0;
	pthread_mutex_lock(&P.mu);
	for (size_t i = 0; i < P.n; i++)
		if (!strcmp(P.e[i].device, device) && !strcmp(P.e[i].key, key)) {
			unlink_entry(i, &mine);
			found = 1;
			break;
		}
	/* none of this problem: another problem's goes (its tensors leave the GPU before this one loads),
	 * and the spare, if there is one, serves this problem */
	if (!found) {
		for (size_t i = 0; i < P.n; i++)
			if (!strcmp(P.e[i].device, device) && *P.e[i].key) {
				unlink_entry(i, &stale);
				nstale = 1;
				break;
			}
		for (size_t i = 0; i < P.n; i++)
			if (!strcmp(P.e[i].device, device) && !*P.e[i].key) {
				unlink_entry(i, &mine);
				found = 1;
				break;
			}
	}
	pthread_mutex_unlock(&P.mu);
	if (nstale)
		item_stop(&stale); /* another problem's tensors leave the GPU before this one loads */
	if (!found)
		return -1;
	struct worker_fault f;
	json_t *req, *reply = NULL;
	if (mine.compile_pending) {
		/* the torch.compile the last evaluation asked for while its candidate ran: answered first */
		if (worker_receive(&mine.w, &reply, proc_now() + 900, &f) == 0) {
			mine.compiled = json_is_true(json_object_get(reply, "ok")) &&
					json_is_true(json_object_get(reply, "compile_available"));
			mine.compile_pending = 0;
		}
		json_decref(reply);
		reply = NULL;
		if (mine.compile_pending) {
			item_stop(&mine);
			return -1;
		}
	}
	/* alive and answering (a spare may still be importing torch), or it is not worth a thing */
	req = json_pack("{s:s, s:s}", "cmd", "hello", "device", device);
	int rc = worker_call(&mine.w, req, &reply, proc_now() + 30, &f);
	json_decref(req);
	int ok = rc == 0 && json_is_true(json_object_get(reply, "ok"));
	json_decref(reply);
	if (!ok) {
		item_stop(&mine);
		return -1;
	}
	*out = mine;
	return 0;
}

/* Replaces the entry of the same kind on the device: a problem's worker, or the spare (key ""). */
void refpool_put(const char *key, const char *device, struct refpool_item *it)
{
	struct refpool_item old = { 0 };
	int replaced = 0;
	if (!it->w.started || it->w.finished) {
		item_stop(it);
		return;
	}
	pthread_mutex_lock(&P.mu);
	for (size_t i = 0; i < P.n; i++)
		if (!strcmp(P.e[i].device, device) && !*P.e[i].key == !*key) {
			unlink_entry(i, &old);
			replaced = 1;
			break;
		}
	if (P.n == P.cap) {
		P.cap = P.cap ? 2 * P.cap : 4;
		P.e = xrealloc(P.e, P.cap * sizeof(*P.e));
	}
	P.e[P.n++] = (struct entry){ xstrdup(key), xstrdup(device), *it };
	if (!P.atexit_done) {
		atexit(refpool_drain);
		P.atexit_done = 1;
	}
	pthread_mutex_unlock(&P.mu);
	memset(it, 0, sizeof(*it));
	if (replaced)
		item_stop(&old);
}

void refpool_put_spare(const char *device, struct refpool_item *it)
{
	refpool_put("", device, it);
}

int refpool_has_spare(const char *device)
{
	int found = 0;
	pthread_mutex_lock(&P.mu);
	for (size_t i = 0; i < P.n && !found; i++)
		found = !strcmp(P.e[i].device, device) && !*P.e[i].key;
	pthread_mutex_unlock(&P.mu);
	return found;
}

void refpool_drain(void)
{
	for (;;) {
		struct refpool_item it;
		pthread_mutex_lock(&P.mu);
		if (!P.n) {
			pthread_mutex_unlock(&P.mu);
			return;
		}
		unlink_entry(P.n - 1, &it);
		pthread_mutex_unlock(&P.mu);
		item_stop(&it);
	}
}

size_t refpool_size(void)
{
	pthread_mutex_lock(&P.mu);
	size_t n = P.n;
	pthread_mutex_unlock(&P.mu);
	return n;
}
