/* samples.c - another system's answers as an agent: the file level_L_problem_ID_sample_S_kernel.py of a
 * KernelBench generations folder (agents[].samples_dir) is this sample's only attempt. A missing file
 * is a format_error attempt, so the system is charged for the problem it did not answer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/agents/session.h"
#include "../harness/core/suite.h"

static int samples_run(struct agent_session *s, struct sb_error *err)
{
	const struct agent_task *t = session_task(s);
	char *name = suite_sample_name(t->problem->level, t->problem->id, t->sample);
	char *path = xstrfmt("%s/%s", t->agent->samples_dir, name);
	struct strbuf code = STRBUF_INIT;
	const struct attempt *a;
	int rc = strbuf_read_file(&code, path, 0);
	if (rc == -ENOENT) {
		struct strbuf msg = STRBUF_INIT;
		strbuf_addf(&msg, "no file %s in %s: the system gave no answer for this problem and sample", name,
			    t->agent->samples_dir);
		rc = session_submit_failure(s, STAGE_SAMPLE, msg.buf, NULL, &a, err);
		strbuf_release(&msg);
	} else if (rc) {
		rc = sb_error_set(err, SB_EIO, "%s: %s", path, strerror(-rc));
	} else {
		rc = session_submit_code(s, STAGE_SAMPLE, code.buf, &a, err);
	}
	strbuf_release(&code);
	free(path);
	free(name);
	return rc ? rc : session_finish(s, "attempts", err);
}

const struct agent_kind agent_samples = { "samples", 0, samples_run, 0 };
