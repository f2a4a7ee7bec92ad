/* config_preset.c - eval.preset: one table of the keys a protocol fixes, and their value under each
 * preset. Setting eval.preset writes its column into every key of the table that the file or a --set did
 * not give, so explicit keys win whatever their order, and a later preset replaces an earlier one's
 * values whole. docs/config.md "Presets" shows the same table; tests/unit/test_config.c checks both. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "config_schema.h"

/* Columns in enum eval_preset's order: stitchbench, kernelbench, stitchcuda. KernelBench's evaluator
 * warms up with 3 calls, times 100 calls of each side back to back (the first discarded) and reports
 * their means; StitchCUDA's verifier runs that evaluator with 5 correctness and 10 timed trials. Neither
 * primes the GPU before a block, stops early or divides by a process factor. */
static const struct preset_row {
	const char *key;
	const char *value[3];
} preset_table[] = {
	{ "eval.trials", { "5", "5", "5" } },
	{ "eval.perf_trials", { "100", "100", "10" } },
	{ "eval.tolerance", { "kernelbench", "kernelbench", "kernelbench" } },
	{ "eval.seed", { "42", "42", "42" } },
	{ "eval.statistic", { "median", "mean", "mean" } },
	{ "eval.warmup_ms", { "100", "0", "0" } },
	{ "eval.warmup_calls", { "3", "3", "3" } },
	{ "eval.timing_block", { "10", "32", "10" } },
	{ "eval.timing_prime_ms", { "5", "0", "0" } },
	{ "eval.timing_lead_us", { "0", "0", "0" } },
	{ "eval.rse_target", { "0.005", "0", "0" } },
	{ "eval.process_factor", { "auto", "off", "off" } },
};

/* KernelBench's static checker rejects for its strict checks and warns for the rest; in the taxonomy
 * those are H02 and H03 (its code_bypass: a fallback, the reference doing the work), H04 (no kernel of
 * the backend), H06 (threads), H07 (lazy outputs) and H08 (timing patched). Everything stitchbench finds
 * beyond them is a flag under its protocol: the verdict still names it, and the status is KernelBench's. */
static const int kernelbench_rejects[] = { 2, 3, 4, 6, 7, 8 };

static enum policy_action preset_policy(enum eval_preset p, int id)
{
	if (p == PRESET_STITCHBENCH)
		return config_default_policy(id - 1);
	for (size_t i = 0; i < sizeof(kernelbench_rejects) / sizeof(*kernelbench_rejects); i++)
		if (kernelbench_rejects[i] == id)
			return POLICY_REJECT;
	return POLICY_FLAG;
}

void config_apply_preset(struct config *c)
{
	enum eval_preset p = c->eval.preset;
	for (size_t i = 0; i < sizeof(preset_table) / sizeof(*preset_table); i++) {
		const struct preset_row *r = &preset_table[i];
		if (config_is_given(c, r->key))
			continue;
		char assignment[96];
		struct sb_error err = { 0 };
		snprintf(assignment, sizeof(assignment), "%s=%s", r->key, r->value[p]);
		config_assign(c, assignment, 0, &err); /* the table's values are valid: test_config.c sets each */
	}
	for (int id = 1; id <= SB_HACK_IDS; id++) {
		char key[32];
		snprintf(key, sizeof(key), "checks.policy.H%02d", id);
		if (!config_is_given(c, key))
			c->checks.policy[id - 1] = preset_policy(p, id);
	}
}

size_t config_preset_rows(void)
{
	return sizeof(preset_table) / sizeof(*preset_table);
}

const char *config_preset_row(size_t i, int p, const char **value)
{
	if (i >= config_preset_rows())
		return NULL;
	*value = preset_table[i].value[p];
	return preset_table[i].key;
}
