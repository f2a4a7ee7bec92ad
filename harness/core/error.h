/* error.h - the error convention: functions return 0 or a negative code and fill a struct sb_error.
 * Only cli/ turns an error into a message and an exit code (DESIGN §10). */
#ifndef SB_ERROR_H
#define SB_ERROR_H

#define SB_ERR_MAX 1024

/* Negative return codes; the exit code a CLI command maps them to is in exit_code_for(). */
enum sb_errcode {
	SB_OK = 0,
	SB_EINPUT = -2,	/* bad usage, bad file, bad value: exit 2 */
	SB_EENV = -3,	/* missing tool, no GPU, no Python with torch: exit 3 */
	SB_EIO = -4,	/* a read or write failed: exit 3 */
	SB_EINTERNAL = -5,
	SB_EEXIST = -6,	/* already stored (a results-store key is written once): exit 2 */
};

/* Process exit codes of the CLI (DESIGN §10). */
enum sb_exit {
	SB_EXIT_OK = 0,
	SB_EXIT_FAILED = 1, /* evaluated, but the result is a failure (regression, failed check) */
	SB_EXIT_USAGE = 2,
	SB_EXIT_ENV = 3,
};

struct sb_error {
	int code;
	char msg[SB_ERR_MAX];
};

/* Sets code and message; returns code so callers can write `return sb_error_set(err, ...)`. */
__attribute__((format(printf, 3, 4)))
int sb_error_set(struct sb_error *err, int code, const char *fmt, ...);
/* Prefixes the current message with context ("loading config: ..."). */
__attribute__((format(printf, 2, 3)))
void sb_error_prefix(struct sb_error *err, const char *fmt, ...);
int sb_exit_code_for(int code);

#endif
