/* sandbox_caps.h - what isolation this kernel grants the candidate sandbox (DESIGN §6).
 * Probed once; doctor reports every downgrade, and verdicts will record which layers applied. */
#ifndef SB_SANDBOX_CAPS_H
#define SB_SANDBOX_CAPS_H

struct sandbox_caps {
	int netns;            /* unshare(CLONE_NEWNET) works in a child */
	int netns_needs_userns; /* it worked only together with CLONE_NEWUSER (unprivileged) */
	char netns_why[160];  /* why not, when it does not */
	int landlock_abi;     /* 0 = unavailable */
	char landlock_why[160];
};

void sandbox_probe(struct sandbox_caps *caps);

#endif
