/* lockfile.c - flock-based locks with a note of their holder, and the per-GPU lock of processes that
 * time on a device. */
#include "lockfile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"
#include "strbuf.h"

void lockfile_host(char *out, size_t cap)
{
	char h[256] = "";
	if (gethostname(h, sizeof(h) - 1) != 0 || !*h)
		snprintf(h, sizeof(h), "localhost");
	size_t n = 0;
	for (const char *p = h; *p && n + 1 < cap; p++)
		out[n++] = isalnum((unsigned char)*p) || strchr("._-", *p) ? *p : '_';
	out[n] = '\0';
}

static void read_holder(int fd, char *out, size_t cap)
{
	if (!out || !cap)
		return;
	ssize_t n = pread(fd, out, cap - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	if (!*out)
		snprintf(out, cap, "a process that has not said who it is yet");
}

int lockfile_take(struct lockfile *l, const char *path, int wait, const char *what, char *held_by, size_t cap,
		  struct sb_error *err)
{
	l->fd = -1;
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		fs_mkdirs(dir, 0755);
	}
	free(dir);
	for (;;) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return sb_error_set(err, SB_EIO, "cannot open the lock file %s: %s", path, strerror(errno));
		if (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
			int e = errno;
			if (e == EWOULDBLOCK) {
				read_holder(fd, held_by, cap);
				close(fd);
				return 1;
			}
			close(fd);
			return sb_error_set(err, SB_EIO, "cannot lock %s: %s", path, strerror(e));
		}
		/* whoever held it may have removed the file meanwhile (the sweep does): then the lock is on a
		 * file nobody else will find, and the path is tried again */
		struct stat a, b;
		if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
			char host[128], stamp[32], text[512];
			time_t t = time(NULL);
			struct tm tm;
			lockfile_host(host, sizeof(host));
			strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
			int n = snprintf(text, sizeof(text), "pid %d on %s: %s, since %s\n", (int)getpid(), host, what, stamp);
			/* the note is for people; the lock holds without it */
			int noted = ftruncate(fd, 0) == 0 && pwrite(fd, text, (size_t)n, 0) == n;
			(void)noted;
			l->fd = fd;
			return 0;
		}
		close(fd);
	}
}

void lockfile_release(struct lockfile *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

int lockfile_device(struct lockfile *l, const char *cache_root, const char *device, char *warning, size_t cap,
		    struct sb_error *err)
{
	l->fd = -1;
	if (warning && cap)
		*warning = '\0';
	if (strncmp(device, "cuda", 4))
		return 0;
	int index = device[4] == ':' ? atoi(device + 5) : 0;
	/* the index-th entry of CUDA_VISIBLE_DEVICES: what the physical GPU is called on this machine */
	char id[128];
	snprintf(id, sizeof(id), "%d", index);
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	if (cvd && *cvd) {
		char *copy = xstrdup(cvd), *save = NULL, *t = strtok_r(copy, ",", &save);
		for (int k = 0; t && k < index; k++)
			t = strtok_r(NULL, ",", &save);
		if (t) {
			size_t n = 0;
			for (const char *p = t; *p && n + 1 < sizeof(id); p++)
				if (isalnum((unsigned char)*p) || *p == '-')
					id[n++] = *p;
			id[n] = '\0';
		}
		free(copy);
	}
	char host[128], held[512];
	lockfile_host(host, sizeof(host));
	char *path = xstrfmt("%s/locks/gpu-%s-%s.lock", cache_root, host, id);
	char *what = xstrfmt("timing on %s", device);
	int rc = lockfile_take(l, path, 0, what, held, sizeof(held), err);
	if (rc == 1 && warning)
		snprintf(warning, cap, "%s (GPU %s of %s) is timing for another process too (%s): the timings of both "
			 "will interfere; let one end first, or give each its own GPU", device, id, host, held);
	free(what);
	free(path);
	return rc;
}
