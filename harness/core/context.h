/* context.h - the one piece of process-wide state: created in main.c and passed by pointer to
 * every command, so no module keeps mutable globals (DESIGN §10). */
#ifndef SB_CONTEXT_H
#define SB_CONTEXT_H

struct sb_ctx {
	const char *argv0;
	char *home;        /* the tree holding harness/worker/ and kernelbench/suite/ */
	int verbose;       /* -v: more detail on stderr */
	int quiet;         /* -q: only errors */
	int stdout_tty;    /* progress lines and colour only on a terminal */
};

/* Finds the home tree: $STITCHBENCH_HOME, else the folder above the binary's bin/.
 * Returns 0, or SB_EENV with a message when neither holds the bundled files. */
struct sb_error;
int ctx_find_home(struct sb_ctx *ctx, struct sb_error *err);

#endif
