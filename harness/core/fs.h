/* fs.h - the file-system chores several stages share: making folder chains and removing trees
 * (work folders, temporary cache entries) without shelling out. */
#ifndef SB_FS_H
#define SB_FS_H

#include <stddef.h>
#include <sys/types.h>

/* mkdir -p; returns 0 or -errno. */
int fs_mkdirs(const char *path, mode_t mode);
/* rm -rf, never following symlinks out of the tree; returns 0 or -errno of the first failure. */
int fs_remove_tree(const char *path);

/* cp -r of regular files and folders (symlinks and anything else are left out), into dst, created;
 * returns 0 or -errno of the first failure. */
int fs_copy_tree(const char *src, const char *dst);

/* Writes path through a temporary file in its folder (created), fsync'ed, renamed over it and the
 * folder fsync'ed, so a reader or a crash never sees half a file; returns 0 or -errno. */
int fs_write_atomic(const char *path, const void *data, size_t len);

#endif
