/* context.c - locating the installation's own files (workers, bundled suite, prompts)
 * relative to the binary, so `bin/stitchbench` works from any current directory. */
#include "context.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "strbuf.h"

static int looks_like_home(const char *dir)
{
	struct stat st;
	char *p = xstrfmt("%s/harness/worker", dir);
	int ok = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
	free(p);
	return ok;
}

int ctx_find_home(struct sb_ctx *ctx, struct sb_error *err)
{
	char exe[PATH_MAX];
	const char *env = getenv("STITCHBENCH_HOME");
	if (env && *env) {
		char real[PATH_MAX];
		if (!realpath(env, real) || !looks_like_home(real))
			return sb_error_set(err, SB_EENV,
					    "STITCHBENCH_HOME=%s does not hold harness/worker/: point it at the stitchbench tree or unset it",
					    env);
		ctx->home = xstrdup(real);
		return 0;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		/* <home>/bin/stitchbench -> <home> */
		for (int up = 0; up < 2; up++) {
			char *slash = strrchr(exe, '/');
			if (!slash)
				break;
			*slash = '\0';
		}
		if (looks_like_home(exe)) {
			ctx->home = xstrdup(exe);
			return 0;
		}
	}
	return sb_error_set(err, SB_EENV,
			    "cannot find the stitchbench tree (harness/worker/) above the binary: run bin/stitchbench from a built checkout or set STITCHBENCH_HOME");
}
