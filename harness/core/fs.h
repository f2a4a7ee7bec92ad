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

/* Writes the file as PATH.tmp, then renames it over PATH: a reader sees the old file or the whole new one,
 * never half of it. Returns 0 or -errno. */
int fs_write_whole(const char *path, const void *data, size_t len);

#endif
