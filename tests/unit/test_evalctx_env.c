/* test_evalctx_env.c - the workers' environments (evalctx.c): each points its home and caches into its
 * own folder, and only the workers an evaluation starts for itself are told to start CUDA during their
 * import; a worker started ahead of its evaluation must not touch the GPU while another one is timed. */
#include "testutil.h"

#include "eval/eval_int.h"

static int has(const struct strvec *env, const char *entry)
{
	for (size_t i = 0; i < env->nr; i++)
		if (!strcmp(env->v[i], entry))
			return 1;
	return 0;
}

static int has_key(const struct strvec *env, const char *key)
{
	for (size_t i = 0; i < env->nr; i++)
		if (!strncmp(env->v[i], key, strlen(key)) && env->v[i][strlen(key)] == '=')
			return 1;
	return 0;
}

static void build(struct eval_ctx *c, const struct eval_env *e, int ahead)
{
	memset(c, 0, sizeof(*c));
	c->e = e;
	c->cand_dir = "/work/cand";
	c->ref_dir = "/work/ref";
	c->ext_dir = "/cache/ext";
	evalctx_env(c, ahead);
}

static void release(struct eval_ctx *c)
{
	strvec_clear(&c->cand_env);
	strvec_clear(&c->ref_env);
}

static void only_an_evaluations_own_workers_start_cuda_early(void **state)
{
	(void)state;
	struct eval_env e = { .cache_root = "/cache", .device = "cuda:1", .sm = "90", .hash_seed = 0 };
	struct eval_ctx c;
	build(&c, &e, 0);
	assert_true(has(&c.cand_env, "STITCHBENCH_WORKER_DEVICE=cuda:1"));
	assert_true(has(&c.ref_env, "STITCHBENCH_WORKER_DEVICE=cuda:1"));
	assert_true(has(&c.cand_env, "HOME=/work/cand"));
	assert_true(has(&c.cand_env, "TORCH_CUDA_ARCH_LIST=9.0"));
	assert_true(has(&c.cand_env, "PYTHONHASHSEED=0") && has(&c.ref_env, "PYTHONHASHSEED=0"));
	release(&c);

	build(&c, &e, 1); /* a spare: its candidate worker waits without a CUDA context */
	assert_false(has_key(&c.cand_env, "STITCHBENCH_WORKER_DEVICE"));
	assert_true(has(&c.ref_env, "STITCHBENCH_WORKER_DEVICE=cuda:1"));
	release(&c);

	struct eval_env cpu = { .cache_root = "/cache", .device = "cpu", .hash_seed = -1 };
	build(&c, &cpu, 0);
	assert_false(has_key(&c.cand_env, "STITCHBENCH_WORKER_DEVICE"));
	assert_false(has_key(&c.ref_env, "STITCHBENCH_WORKER_DEVICE"));
	assert_false(has_key(&c.cand_env, "TORCH_CUDA_ARCH_LIST") || has_key(&c.cand_env, "PYTHONHASHSEED"));
	release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(only_an_evaluations_own_workers_start_cuda_early),
	};
	return cmocka_run_group_tests_name("evalctx_env", tests, NULL, NULL);
}
