/* testutil.h - what the cmocka unit tests share: cmocka's headers in the order it needs them,
 * and temporary files and folders that clean up after themselves. */
#ifndef SB_TESTUTIL_H
#define SB_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/strbuf.h"

/* A fresh folder under $TMPDIR; removed by tmpdir_remove(). */
static inline char *tmpdir_make(void)
{
	const char *base = getenv("TMPDIR");
	char *tmpl = xstrfmt("%s/sbtest.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		abort();
	}
	return tmpl;
}

static inline void tmpdir_remove(char *dir)
{
	char *cmd = xstrfmt("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	free(cmd);
	free(dir);
}

/* Writes `text` to dir/rel, creating the folders on the way. */
static inline void write_file(const char *dir, const char *rel, const char *text)
{
	char *path = xstrfmt("%s/%s", dir, rel);
	for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

#endif
