/* fs.c - mkdir -p and rm -rf in C. Removal walks depth-first with nftw(FTW_PHYS), so a symlink a
 * candidate planted in its work folder is removed itself, never followed. */
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strbuf.h"

int fs_mkdirs(const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, mode) != 0 && errno != EEXIST) {
				int e = errno;
				free(p);
				return -e;
			}
			*s = '/';
		}
	int rc = mkdir(p, mode) == 0 || errno == EEXIST ? 0 : -errno;
	free(p);
	return rc;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		return rmdir(path) != 0 && errno != ENOENT ? -errno : 0;
	if (type == FTW_DNR) /* unreadable folder: make it readable, then it can be emptied next time */
		chmod(path, 0700);
	return unlink(path) != 0 && errno != ENOENT && errno != EISDIR ? -errno : 0;
}

int fs_remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	return nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS);
}

int fs_write_atomic(const char *path, const void *data, size_t len)
{
	char *copy = xstrdup(path);
	const char *dir = dirname(copy);
	char *tmp = xstrfmt("%s/.tmp-XXXXXX", dir);
	int rc = fs_mkdirs(dir, 0755), fd = -1;
	if (!rc && (fd = mkstemp(tmp)) < 0)
		rc = -errno;
	if (!rc)
		fchmod(fd, 0644); /* mkstemp's 0600 would hide a run's files from the team */
	for (const char *p = data; !rc && len;) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		else
			p += n, len -= (size_t)n;
	}
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc && fd >= 0)
		unlink(tmp);
	if (!rc) {
		/* the rename is durable only once the folder's entry is on disk too */
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
	free(tmp);
	free(copy);
	return rc;
}
