/* sandbox_caps.c - probes network namespaces and Landlock in throw-away children, so the parent's
 * own namespaces and privileges are never changed by asking. */
#include "proc.h"

#include <errno.h>
#include <linux/landlock.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Returns 0 when a child could unshare with `flags`, else the child's errno. */
static int try_unshare(int flags)
{
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(unshare(flags) == 0 ? 0 : (errno & 0x7f));
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : EINVAL;
}

void sandbox_probe(struct sandbox_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	int e = try_unshare(CLONE_NEWNET);
	if (e == 0) {
		caps->netns = 1;
	} else if (try_unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) {
		caps->netns = 1;
		caps->netns_needs_userns = 1;
	} else {
		snprintf(caps->netns_why, sizeof(caps->netns_why), "unshare(CLONE_NEWNET) failed: %s%s", strerror(e),
			 e == EPERM ? " (not root and unprivileged user namespaces are off)" : "");
	}
#ifdef SYS_landlock_create_ruleset
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi > 0) {
		caps->landlock_abi = (int)abi;
	} else {
		int le = errno;
		snprintf(caps->landlock_why, sizeof(caps->landlock_why), "%s",
			 le == ENOSYS ? "the kernel has no Landlock support"
			 : le == EOPNOTSUPP ? "Landlock is built in but disabled (boot with lsm=...,landlock)"
			 : strerror(le));
	}
#else
	snprintf(caps->landlock_why, sizeof(caps->landlock_why), "built without Landlock headers");
#endif
}
