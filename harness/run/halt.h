/* halt.h - ending what a stopping run has running below it: the evaluator's workers, its fork server and
 * builds. A Ctrl-C does not reach them (each runs in a session of its own) and an evaluation can last
 * minutes, so the run ends them itself (docs/agents.md "Runs", Ctrl-C). */
#ifndef SB_HALT_H
#define SB_HALT_H

/* Sends SIGKILL to every process below this one (children, their children, ...); returns how many were
 * sent it. Each is pinned with a pidfd and found still below this one before it is signalled, so a pid
 * that another process took over meanwhile is never hit. Processes started after the look-up are not:
 * call it again while evaluations may start new ones. spare, when not NULL, is a script: a child of this
 * process that runs it (one of its arguments) is left alone, though not its children. */
int halt_descendants(const char *spare);

#endif
