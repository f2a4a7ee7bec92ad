/* fs.c - mkdir -p and rm -rf in C. Removal walks depth-first with nftw(FTW_PHYS), so a symlink a
 * candidate planted in its work folder is removed itself, never followed. */
#include "fs.h"

#include <dirent.h>
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

static int copy_file(const char *src, const char *dst, mode_t mode)
{
	int in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), out = -1, rc = 0;
	if (in < 0)
		return -errno;
	if ((out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode & 0777)) < 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	char buf[1 << 16];
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 0;
			break;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				rc = -errno;
				break;
			}
			off += w;
		}
		if (rc)
			break;
	}
	close(in);
	if (close(out) != 0 && !rc)
		rc = -errno;
	return rc;
}

int fs_copy_tree(const char *src, const char *dst)
{
	struct stat st;
	if (lstat(src, &st) != 0)
		return -errno;
	if (S_ISREG(st.st_mode))
		return copy_file(src, dst, st.st_mode);
	if (!S_ISDIR(st.st_mode))
		return 0;
	int rc = fs_mkdirs(dst, 0700);
	DIR *d = rc ? NULL : opendir(src);
	if (!d)
		return rc ? rc : -errno;
	for (struct dirent *de; rc == 0 && (de = readdir(d));) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *s = xstrfmt("%s/%s", src, de->d_name), *t = xstrfmt("%s/%s", dst, de->d_name);
		rc = fs_copy_tree(s, t);
		free(s);
		free(t);
	}
	closedir(d);
	return rc;
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
