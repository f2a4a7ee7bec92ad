/* test_static.c - the static hack checks: the Python tokenizer's edge cases, each rule firing on a
 * minimal hack and staying quiet on its honest twin, the evasions LLMs use, and exact positions. */
#include "testutil.h"

#include <errno.h>

#include "checks/pytok.h"
#include "checks/rules.h"
#include "checks/static.h"
#include "eval/candidate.h"
#include "eval/static_verdict.h"

/* Five lines that give every snippet a custom kernel, so H04 stays out of the way. */
#define PRE                                                                                     \
	"import torch\n"                                                                        \
	"import torch.nn as nn\n"                                                               \
	"import torch.nn.functional as F\n"                                                     \
	"from torch.utils.cpp_extension import load_inline\n"                                   \
	"ext = load_inline(name='k', cpp_sources='', cuda_sources='__global__ void k() {}', functions=[])\n"

static struct findings check(const char *src)
{
	struct findings r;
	struct sb_error err = { 0 };
	if (static_check_source("snippet.py", src, strlen(src), &r, &err))
		fail_msg("static_check_source: %s", err.msg);
	return r;
}

/* The distinct ids found in src, sorted and space-separated ("" when clean), for readable assertions. */
static char *ids(const char *src)
{
	struct findings r = check(src);
	struct strbuf sb = STRBUF_INIT;
	for (int h = 1; h <= 22; h++) {
		char id[8];
		snprintf(id, sizeof(id), "H%02d", h);
		if (findings_has(&r, id))
			strbuf_addf(&sb, "%s%s", sb.len ? " " : "", id);
	}
	findings_release(&r);
	return strbuf_detach(&sb, NULL);
}

#define assert_ids(src, want)                      \
	do {                                       \
		char *got_ = ids(src);             \
		assert_string_equal(got_, want);   \
		free(got_);                        \
	} while (0)

static struct pytok_list lex(const char *src)
{
	struct pytok_list t;
	struct sb_error err = { 0 };
	if (pytok_tokenize(src, strlen(src), &t, &err))
		fail_msg("pytok_tokenize: %s", err.msg);
	return t;
}

static size_t count_kind(const struct pytok_list *t, enum pytok_kind k)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += t->v[i].kind == k;
	return n;
}

/* ---------- tokenizer ---------- */

static void tok_nested_fstrings(void **state)
{
	(void)state;
	/* 3.12 allows the outer quote inside a field; older code nests with the other quote */
	struct pytok_list t = lex("x = f\"a{b + f'{c}'}d{f\"{e!r:>{w}}\"}\" # c \"q\"\n");
	assert_int_equal(t.v[2].kind, PT_STRING);
	assert_true(t.v[2].sflags & PTS_FORMAT);
	char name[16];
	int seen_c = 0, seen_e = 0, seen_w = 0;
	for (size_t i = 3; i < t.n; i++) {
		if (t.v[i].kind != PT_NAME)
			continue;
		assert_true(t.v[i].flags & PTF_FEXPR);
		pytok_text(&t, i, name, sizeof(name));
		seen_c |= !strcmp(name, "c");
		seen_e |= !strcmp(name, "e");
		seen_w |= !strcmp(name, "w");
		assert_string_not_equal(name, "q"); /* the comment is not code */
	}
	assert_true(seen_c && seen_e && seen_w);
	assert_int_equal(count_kind(&t, PT_NEWLINE), 1);
	pytok_release(&t);
}

static void tok_raw_triple_backslashes(void **state)
{
	(void)state;
	struct pytok_list t = lex("s = r\"\"\"C:\\path\\ \"quoted\" \\\"\"\" more\"\"\"\ny = 2\n");
	assert_int_equal(t.v[2].kind, PT_STRING);
	assert_true(t.v[2].sflags & PTS_RAW);
	assert_true(t.v[2].sflags & PTS_TRIPLE);
	char *v = pytok_string_value(&t, 2, NULL);
	assert_string_equal(v, "C:\\path\\ \"quoted\" \\\"\"\" more");
	free(v);
	assert_true(pytok_is_name(&t, 4, "y"));
	assert_int_equal(t.v[4].line, 2);
	pytok_release(&t);
}

static void tok_prefixes_and_bytes(void **state)
{
	(void)state;
	struct pytok_list t = lex("a = (b'\\x00', Rb\"x\", BR'y', u\"z\", F\"{q}\", rf'{r}\\d')\n");
	unsigned want[] = { PTS_BYTES, PTS_BYTES | PTS_RAW, PTS_BYTES | PTS_RAW, 0, PTS_FORMAT, PTS_FORMAT | PTS_RAW };
	size_t k = 0;
	for (size_t i = 0; i < t.n; i++)
		if (t.v[i].kind == PT_STRING && !(t.v[i].flags & PTF_FEXPR)) {
			assert_true(k < 6);
			assert_int_equal(t.v[i].sflags & ~PTS_TRIPLE, want[k++]);
		}
	assert_int_equal(k, 6);
	pytok_release(&t);
}

static void tok_continuations_comments_indents(void **state)
{
	(void)state;
	struct pytok_list t = lex("# it's \"fine\"\nif a + \\\n    b:\n    x = (1,\n  2)\n\n    # note\n    y = 3\nz = 4\n");
	assert_true(pytok_is_name(&t, 0, "if"));
	assert_int_equal(t.v[0].line, 2);
	assert_int_equal(count_kind(&t, PT_INDENT), 1);  /* the bracket and the backslash hide their lines */
	assert_int_equal(count_kind(&t, PT_DEDENT), 1);
	assert_int_equal(count_kind(&t, PT_NEWLINE), 4);
	pytok_release(&t);
}

static void tok_errors_name_the_line(void **state)
{
	(void)state;
	struct pytok_list t;
	struct sb_error err = { 0 };
	const char *bad = "x = 1\ny = 'open\n";
	assert_int_equal(pytok_tokenize(bad, strlen(bad), &t, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "line 2"));
	assert_non_null(strstr(err.msg, "unterminated"));
	const char *open = "x = foo(1,\n";
	assert_int_equal(pytok_tokenize(open, strlen(open), &t, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "never closed"));
	const char *triple = "s = \"\"\"never\nends\n";
	assert_int_equal(pytok_tokenize(triple, strlen(triple), &t, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "triple-quoted"));
	struct findings r;
	assert_int_equal(static_check_source("bad.py", bad, strlen(bad), &r, &err), SB_EINPUT);
	assert_non_null(strstr(err.msg, "bad.py"));
}

/* ---------- names in prose are not code ---------- */

static void comments_and_strings_are_not_code(void **state)
{
	(void)state;
	assert_ids(PRE "# torch.matmul would be slow; so would F.conv2d or x.half()\n"
		       "class ModelNew(nn.Module):\n"
		       "    \"\"\"Replaces torch.softmax; never calls torch.matmul or nn.Linear.\"\"\"\n"
		       "    def forward(self, x):\n"
		       "        msg = 'torch.relu(x) and open(\"/proc/self/maps\") are only words'\n"
		       "        note = f\"{x.shape} like torch.bmm, threading.Thread, torch.cuda.Stream()\"\n"
		       "        return ext.k(x)  # not torch.relu(x)\n",
		   "");
}

/* ---------- H01 and its evasions ---------- */

static void h01_direct_call_and_position(void **state)
{
	(void)state;
	struct findings r = check(PRE "class ModelNew(nn.Module):\n"
					   "    def forward(self, a, b):\n"
					   "        return ext.k(torch.matmul(a, b))\n");
	assert_int_equal(r.n, 1);
	assert_string_equal(r.v[0].id, "H01");
	assert_int_equal(r.v[0].line, 8);
	assert_int_equal(r.v[0].col, 22);
	assert_non_null(strstr(r.v[0].message, "torch.matmul (line 8)"));
	assert_non_null(strstr(r.v[0].message, "cuBLAS"));
	findings_release(&r);
}

static void h01_alias_getattr_import_as_self(void **state)
{
	(void)state;
	assert_ids(PRE "mm = torch.matmul\nclass ModelNew(nn.Module):\n    def forward(self, a, b):\n        return mm(a, b)\n",
		   "H01");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, a, b):\n        return getattr(torch, \"matmul\")(a, b)\n",
		   "H01");
	assert_ids(PRE "from torch.nn.functional import conv2d as c\nclass ModelNew(nn.Module):\n"
		       "    def forward(self, x, w):\n        return c(x, w)\n",
		   "H01");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
		       "        self.fc = nn.Linear(4, 4)\n    def forward(self, x):\n        return self.fc(x)\n",
		   "H01");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
		       "        self.mm = torch.matmul\n    def forward(self, a, b):\n        return self.mm(a, b)\n",
		   "H01");
	/* a name computed at run time: any torch function may be behind it */
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        return getattr(F, 'rel' + 'u')(x)\n",
		   "H01");
}

static void h01_honest_twins(void **state)
{
	(void)state;
	/* allocation, shape and dtype helpers, parameters of a module kept for its initialisation */
	assert_ids(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
		       "        self.fc = nn.Linear(4, 4)\n"
		       "    def forward(self, x):\n"
		       "        y = torch.empty_like(x)\n        z = torch.zeros(x.size(0), dtype=torch.float32, device=x.device)\n"
		       "        w = self.fc.weight.t().contiguous().view(-1).reshape(4, 4)\n"
		       "        return ext.k(x.contiguous(), y, z, w, self.fc.bias, x.shape[0])\n",
		   "");
	/* the extension's own functions share torch's names */
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, a, b):\n"
		       "        return ext.matmul(a, b).view(-1)\n",
		   "");
	/* a layer class named in a type test picks weights; it is not passed anywhere to run */
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n"
		       "        ws = [m.weight for m in self.net if isinstance(m, nn.Linear)]\n"
		       "        ok = issubclass(type(self.net[0]), (nn.Linear, nn.Tanh))\n"
		       "        return ext.mlp(x, ws)\n",
		   "");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, xs):\n"
		       "        return list(map(torch.relu, xs)) if isinstance(xs, list) else xs\n",
		   "H01");
}

static void h01_follows_calls_and_operators(void **state)
{
	(void)state;
	assert_ids(PRE "def helper(x):\n    return F.gelu(x)\nclass ModelNew(nn.Module):\n"
		       "    def forward(self, x):\n        return self._impl(x)\n    def _impl(self, x):\n        return helper(x)\n",
		   "H01");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, a, b):\n        return a @ b\n", "H01");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x.softmax(-1)\n", "H01");
	/* ATen from the extension's C++ is PyTorch too; cuBLAS and allocation are not */
	assert_ids(PRE "SRC = '''#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor a, torch::Tensor b) {\n"
		       "  return at::matmul(a, b); }'''\n",
		   "H01");
	assert_ids(PRE "SRC = '''#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor a) {\n"
		       "  auto y = torch::empty_like(a); cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1);\n"
		       "  return y.contiguous().view({-1}); }'''\n",
		   "");
	/* torch work outside forward's call tree (weight preparation in __init__) is not timed work */
	assert_ids(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
		       "        self.w = torch.relu(torch.randn(4))\n    def forward(self, x):\n        return ext.k(x, self.w)\n",
		   "");
}

/* ---------- H02 .. H22 ---------- */

static void h02_fallback_and_reraise(void **state)
{
	(void)state;
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        try:\n            return ext.k(x)\n"
		       "        except RuntimeError:\n            return torch.relu(x)\n",
		   "H02");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        try:\n            return ext.k(x)\n"
		       "        except RuntimeError as e:\n            print('kernel failed', e)\n            raise\n",
		   "");
	/* a branch that only notes the failure: forward carries on to PyTorch after the try statement (H01 too,
	 * as that code runs in forward either way) */
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        if not self.broken:\n"
		       "            try:\n                return ext.k(x)\n            except Exception as e:\n"
		       "                print(e)\n                self.broken = True\n        return F.relu(x)\n",
		   "H01 H02");
	/* its honest twins: the branch returns, or what follows the try is the candidate's own kernel */
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        try:\n            y = ext.k(x)\n"
		       "        except RuntimeError as e:\n            return ext.k(x.contiguous())\n        return ext.k(y)\n",
		   "");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        try:\n            ext.k(x)\n"
		       "        except AttributeError:\n            pass\n        return ext.k(x) * 2\n",
		   "");
}

static void h03_model(void **state)
{
	(void)state;
	assert_ids(PRE "class Model(nn.Module):\n    pass\nclass ModelNew(Model):\n    pass\n", "H03");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.k(x)\n", "");
}

static void h04_no_kernel(void **state)
{
	(void)state;
	assert_ids("import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n", "H04");
	/* a kernel only mentioned in a docstring does not count */
	assert_ids("\"\"\"__global__ void k() {}\"\"\"\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    pass\n", "H04");
}

static void h05_streams(void **state)
{
	(void)state;
	assert_ids(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
		       "        self.s = torch.cuda.Stream()\n    def forward(self, x):\n"
		       "        with torch.cuda.stream(self.s):\n            y = ext.k(x)\n        return y\n",
		   "H05");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
		       "        self.s = torch.cuda.Stream()\n    def forward(self, x):\n"
		       "        with torch.cuda.stream(self.s):\n            y = ext.k(x)\n"
		       "        torch.cuda.current_stream().wait_stream(self.s)\n        return y\n",
		   "");
	assert_ids(PRE "SRC = '''#include <torch/extension.h>\nvoid f() { auto s = at::cuda::getStreamFromPool(); }'''\n", "H05");
}

static void h06_threads(void **state)
{
	(void)state;
	assert_ids(PRE "from concurrent.futures import ThreadPoolExecutor\n", "H06");
	assert_ids(PRE "SRC = '''#include <torch/extension.h>\nvoid f() { std::thread t([] {}); t.detach(); }'''\n", "H06");
	/* a variable called thread is not a thread */
	assert_ids(PRE "SRC = '''#include <torch/extension.h>\n__global__ void g(int thread) { int x = thread; }'''\n", "");
}

static void h07_subclass(void **state)
{
	(void)state;
	assert_ids(PRE "class Lazy(torch.Tensor):\n    pass\n", "H07");
	assert_ids(PRE "class ModelNew(nn.Module):\n    pass\n", "");
}

static void h08_monkey_patch(void **state)
{
	(void)state;
	assert_ids(PRE "torch.allclose = lambda *a, **k: True\n", "H08");
	assert_ids(PRE "import time\ntime.perf_counter = lambda: 0.0\n", "H08");
	assert_ids(PRE "cuda = torch.cuda\nsetattr(cuda, 'synchronize', lambda: None)\n", "H08");
	/* binding a name of one's own, or a backend setting, patches nothing */
	assert_ids(PRE "allclose = torch.allclose\ntorch.backends.cudnn.benchmark = True\n", "");
}

static void h13_introspection(void **state)
{
	(void)state;
	assert_ids(PRE "import inspect\n", "H13");
	assert_ids(PRE "import sys\nframe = sys._getframe(1)\n", "H13");
	assert_ids(PRE "x = open('/proc/self/maps').read()\n", "H13 H22");
	assert_ids(PRE "import sys\nprint(sys.version)\n", "");
}

static void h14_precision(void **state)
{
	(void)state;
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.k(x.half())\n", "H14");
	assert_ids(PRE "torch.backends.cuda.matmul.allow_tf32 = True\n", "H14");
	assert_ids(PRE "SRC = '''#include <cuda_fp16.h>\n__global__ void g(__half *x) {}'''\n", "H14");
	/* fp32 FMA, turning TF32 off, and a variable named half are fine */
	assert_ids(PRE "torch.backends.cuda.matmul.allow_tf32 = False\n"
		       "SRC = '''#include <torch/extension.h>\n__global__ void g(float *x, int n) {\n"
		       "  int half = n / 2; x[0] = fmaf(x[1], x[2], x[half]); }'''\n",
		   "");
}

static void h20_l2_persistence(void **state)
{
	(void)state;
	assert_ids(PRE "SRC = '''#include <torch/extension.h>\nvoid f() { cudaStreamAttrValue a; "
		       "a.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting; }'''\n",
		   "H20");
}

static void h22_outside_world(void **state)
{
	(void)state;
	assert_ids(PRE "import subprocess\n", "H22");
	assert_ids(PRE "import os\nkey = os.environ['OPENAI_API_KEY']\n", "H22");
	assert_ids(PRE "SRC = '''#include <cstdlib>\nvoid f() { const char *h = getenv(\"HOME\"); }'''\n", "H22");
	/* build settings and writing build files are part of building the extension */
	assert_ids(PRE "import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0'\nos.makedirs('build', exist_ok=True)\n"
		       "with open('build/k.cu', 'w') as f:\n    f.write('x')\n",
		   "");
	/* but writing from forward is not */
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        open('log', 'w').write('x')\n"
		       "        return ext.k(x)\n",
		   "H22");
}

static void what_never_runs_or_builds_is_not_flagged(void **state)
{
	(void)state;
	/* the worker imports the candidate as a module, so a __main__ block never runs */
	assert_ids(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.k(x)\n"
		       "if __name__ == \"__main__\":\n    ref = Model()\n    print(torch.allclose(ref(1), open('x').read()))\n"
		       "    if True:\n        import subprocess\n",
		   "");
	/* an extension built by a helper, and the build using the core count */
	assert_ids(PRE "import multiprocessing\nimport os\nos.environ['MAX_JOBS'] = str(multiprocessing.cpu_count())\n"
		       "def get_ext():\n    return load_inline(name='k2', cpp_sources='', functions=[])\n"
		       "class ModelNew(nn.Module):\n    def forward(self, x):\n        e = get_ext()\n        return e.relu(x)\n",
		   "");
	assert_ids(PRE "import multiprocessing\np = multiprocessing.Process(target=print)\n", "H06");
}

static const char *severity_of(const struct verdict *v, const char *id)
{
	for (size_t i = 0; i < v->findings.n; i++)
		if (!strcmp(v->findings.v[i].id, id))
			return severity_name(v->findings.v[i].severity);
	return "none";
}

/* Step 1 of an evaluation: severities from checks.policy, H14 allowed by a half-precision problem. */
static void judge_applies_the_policy(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	write_file(dir, "cand.py", PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n"
				       "        return ext.k(x.half()) + torch.relu(x)\n");
	write_file(dir, "fp32.py", "import torch\ndef get_inputs():\n    return [torch.rand(4)]\n");
	write_file(dir, "fp16.py", "import torch\ndef get_inputs():\n    return [torch.rand(4, dtype=torch.float16)]\n");
	write_file(dir, "broken.py", "x = 'never closed\n");
	char *cand = xstrfmt("%s/cand.py", dir), *fp32 = xstrfmt("%s/fp32.py", dir), *fp16 = xstrfmt("%s/fp16.py", dir);
	char *broken = xstrfmt("%s/broken.py", dir);
	struct config cfg;
	struct verdict v;
	struct candidate_source src, bad;
	config_init(&cfg);
	candidate_source_load(&src, cand);
	candidate_source_load(&bad, broken);

	verdict_init(&v);
	assert_int_equal(static_judge(&cfg, fp32, &src, &v), 1);
	assert_int_equal(v.status, V_REJECTED);
	assert_true(starts_with(v.message, "H01: forward calls torch.relu (line 8)"));
	assert_string_equal(severity_of(&v, "H01"), "reject");
	assert_string_equal(severity_of(&v, "H14"), "flag");
	assert_non_null(strstr(v.detail, "8:24 H14 flag (half-cast)"));
	verdict_release(&v);

	verdict_init(&v);
	static_judge(&cfg, fp16, &src, &v);
	assert_string_equal(severity_of(&v, "H14"), "none");
	verdict_release(&v);

	cfg.checks.policy[0] = POLICY_FLAG;
	verdict_init(&v);
	assert_int_equal(static_judge(&cfg, fp32, &src, &v), 0);
	assert_int_equal(v.status, V_PASS);
	assert_null(v.message);
	assert_string_equal(severity_of(&v, "H01"), "flag");
	verdict_release(&v);

	verdict_init(&v);
	assert_int_equal(static_judge(&cfg, fp32, &bad, &v), 0);
	assert_int_equal(v.findings.n, 0);
	cfg.checks.static_checks = 0;
	cfg.checks.policy[0] = POLICY_REJECT;
	assert_int_equal(static_judge(&cfg, fp32, &src, &v), 0);
	assert_int_equal(v.findings.n, 0);
	verdict_release(&v);

	candidate_source_release(&src);
	candidate_source_release(&bad);
	config_release(&cfg);
	free(cand);
	free(fp32);
	free(fp16);
	free(broken);
	tmpdir_remove(dir);
}

/* The format check, the static rules and the profile's library rule judge the bytes read once: the file
 * gone, or replaced by an empty one, after the read changes none of their answers. */
static void a_candidate_is_judged_as_read_once(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	write_file(dir, "cand.py", PRE "S = r'''\n#include <cublas_v2.h>\nvoid g() { cublasSgemm(h); }\n'''\n"
				       "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n");
	char *cand = xstrfmt("%s/cand.py", dir);
	struct config cfg;
	struct verdict v;
	struct candidate_source src;
	config_init(&cfg);
	candidate_source_load(&src, cand);
	assert_int_equal(src.read_errno, 0);
	assert_true(src.tokenised);
	for (int replaced = 0; replaced < 2; replaced++) {
		if (replaced)
			write_file(dir, "cand.py", ""); /* empty: format_error, and nothing for the rules */
		else
			assert_int_equal(unlink(cand), 0);
		verdict_init(&v);
		assert_int_equal(eval_format_check(NULL, &src, &v), 0);
		assert_int_equal(static_judge(&cfg, NULL, &src, &v), 1);
		assert_true(starts_with(v.message, "H01: forward calls torch.relu"));
		assert_true(src.calls_library);
		verdict_release(&v);
	}
	candidate_source_release(&src);
	/* read now, the empty file is what it is */
	candidate_source_load(&src, cand);
	verdict_init(&v);
	assert_int_equal(eval_format_check(NULL, &src, &v), 1);
	assert_int_equal(v.status, V_FORMAT_ERROR);
	verdict_release(&v);
	candidate_source_release(&src);
	unlink(cand);
	candidate_source_load(&src, cand);
	assert_int_equal(src.read_errno, ENOENT);
	verdict_init(&v);
	assert_int_equal(eval_format_check(NULL, &src, &v), 1);
	assert_non_null(strstr(v.message, "cannot be read"));
	verdict_release(&v);
	candidate_source_release(&src);
	config_release(&cfg);
	free(cand);
	tmpdir_remove(dir);
}

/* scripts/gpu-check.sh evaluates these with the static checks on: they must stay clean. */
static void gpu_fixtures_are_clean(void **state)
{
	(void)state;
	static const char *const files[] = { "relu_cuda_ok.py", "relu_cuda_wrong.py", "illegal_access.py", NULL };
	const char *root = getenv("SB_SOURCE_ROOT");
	for (const char *const *f = files; *f; f++) {
		char *path = xstrfmt("%s/tests/fixtures/candidates/cuda/%s", root ? root : ".", *f);
		struct findings r;
		struct sb_error err = { 0 };
		assert_int_equal(static_check_file(path, &r, &err), 0);
		if (r.n)
			fail_msg("%s: %s %s", *f, r.v[0].id, r.v[0].message);
		findings_release(&r);
		free(path);
	}
}

/* library kernels in a profile are the candidate's own work only when its C++ calls the library */
static int calls_library_src(const char *src)
{
	char path[] = "/tmp/sb-test-static-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, src, strlen(src)), (ssize_t)strlen(src));
	close(fd);
	int r = static_file_calls_library(path);
	unlink(path);
	return r;
}

static void library_calls_in_the_cxx_sources(void **state)
{
	(void)state;
	const char *root = getenv("SB_SOURCE_ROOT");
	char *path = xstrfmt("%s/tests/adversarial/honest/gemm_cublas.py", root ? root : ".");
	assert_int_equal(static_file_calls_library(path), 1);
	free(path);
	assert_int_equal(calls_library_src(PRE "S = r'''\n#include <cudnn.h>\nvoid f() { cudnnConvolutionForward(h); }\n'''\n"), 1);
	/* a name in a Python comment, a C++ comment, a C++ string, or without a call is not a call */
	assert_int_equal(calls_library_src(PRE "# cublasSgemm(h) would be faster\nS = r'''\n#include <torch/extension.h>\n"
					   "// cublasSgemm(h)\nvoid f() { const char *s = \"cublasSgemm(\"; cublasHandle_t h; }\n'''\n"), 0);
	assert_int_equal(calls_library_src(PRE "def forward(x):\n    return torch.matmul(x, x)\n"), 0);
	assert_int_equal(static_file_calls_library("/nonexistent/x.py"), 0);
}

static void cxx_positions_map_to_the_python_file(void **state)
{
	(void)state;
	struct findings r = check(PRE "SRC = r'''\n#include <torch/extension.h>\n"
					   "// getenv in a comment is not a call\n"
					   "void f() { auto p = \"fopen\"; const char *h = getenv(\"X\"); }\n'''\n");
	assert_int_equal(r.n, 1);
	assert_string_equal(r.v[0].id, "H22");
	assert_int_equal(r.v[0].line, 9);
	assert_int_equal(r.v[0].col, 46);
	findings_release(&r);
}

static void at_most_a_few_findings_per_id(void **state)
{
	(void)state;
	struct strbuf src = STRBUF_INIT;
	strbuf_addstr(&src, PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n");
	for (int i = 0; i < 20; i++)
		strbuf_addstr(&src, "        x = torch.relu(x)\n");
	strbuf_addstr(&src, "        return x\n");
	struct findings r = check(src.buf);
	assert_true(r.n >= 1 && r.n <= 8);
	for (size_t i = 1; i < r.n; i++)
		assert_true(r.v[i - 1].line <= r.v[i].line);
	findings_release(&r);
	strbuf_release(&src);
}

/* ---------- the evasions of THREATS.md class 5 and the rules around them ---------- */

/* Whether src produces a finding of `id` by rule `rule`. */
static int has_rule(const char *src, const char *id, const char *rule)
{
	struct findings r = check(src);
	int found = 0;
	for (size_t i = 0; i < r.n; i++)
		found |= !strcmp(r.v[i].id, id) && !strcmp(r.v[i].rule, rule);
	findings_release(&r);
	return found;
}

/* Each of the snippets, put into the format `wrap` (one %s), produces `id` by rule `rule`. */
static void all_fire(const char *const *snippets, const char *wrap, const char *id, const char *rule)
{
	for (const char *const *h = snippets; *h; h++) {
		char *src = xstrfmt(wrap, *h);
		if (!has_rule(src, id, rule))
			fail_msg("no %s (%s) for: %s", id, rule, *h);
		free(src);
	}
}

/* A file whose only build takes its C++ from the expression `src`, defined by the lines `defs`. */
#define BUILT(defs, src)                                                                        \
	"import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n" \
	defs "ext = load_inline(name='k', cpp_sources=" src ", functions=['f'])\n"              \
	"class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.f(x)\n"

static void cxx_reached_by_load_inline(void **state)
{
	(void)state;
	/* a function's or a class's docstring handed to the build, directly or through inspect */
	assert_true(has_rule(BUILT("def k():\n    \"\"\"torch::Tensor f(torch::Tensor x) { return torch::relu(x); }\"\"\"\n",
				   "k.__doc__"), "H01", "cxx-aten-op"));
	assert_true(has_rule(BUILT("import inspect\nclass K:\n    \"\"\"torch::Tensor f(torch::Tensor x) { return at::sigmoid(x); }\"\"\"\n",
				   "inspect.getdoc(K)"), "H01", "cxx-aten-op"));
	/* through a name, a helper's parameter, and pieces put together */
	assert_true(has_rule(BUILT("def k():\n    \"\"\"torch::Tensor f(torch::Tensor x) { return x.erfc(); }\"\"\"\n"
				   "def build(fn):\n    return '#include <torch/extension.h>\\n' + fn.__doc__\nSRC = build(k)\n",
				   "[SRC]"), "H01", "cxx-aten-op"));
	assert_true(has_rule(BUILT("P = ['torch::Tensor f(torch::Tensor x) { return torch::re', 'lu(x); }']\n", "''.join(P)"),
			     "H01", "cxx-aten-op"));
	/* a class attribute is a source the file shows: the docstring beside it is not read as C++ */
	assert_ids(BUILT("class Src:\n    \"\"\"Unlike at::softmax(x, 1) { ; } this is ours.\"\"\"\n"
			 "    code = '__global__ void k() {}\\ntorch::Tensor f(torch::Tensor x) { return x; }'\n",
			 "Src.code"),
		   "");
	/* a template with the op filled in: .format, .replace, %, an f-string field */
	assert_true(has_rule(BUILT("T = 'torch::Tensor f(torch::Tensor x) {{ return at::{op}(x); }}'\n", "T.format(op='gelu')"),
			     "H01", "cxx-aten-op"));
	assert_true(has_rule(BUILT("T = 'torch::Tensor f(torch::Tensor x) { return at::OP(x); }'\n", "T.replace('OP', 'silu')"),
			     "H01", "cxx-aten-op"));
	assert_true(has_rule(BUILT("", "'torch::Tensor f(torch::Tensor x) { return x.%s(); }' % 'tanh'"), "H01", "cxx-aten-op"));
	assert_true(has_rule(BUILT("OP = 'relu'\n", "f'torch::Tensor f(torch::Tensor x) {{ return at::{OP}(x); }}'"), "H01",
			     "cxx-aten-op"));
	/* a source the file does not show: every literal that looks like C++ counts, docstrings too */
	assert_true(has_rule(BUILT("def k():\n    \"\"\"torch::Tensor f(torch::Tensor x) { return torch::softplus(x); }\"\"\"\n",
				   "registry_lookup('k')"), "H01", "cxx-aten-op"));
	/* decoded or reordered text is not what the checks read */
	assert_true(has_rule(BUILT("import base64\n", "base64.b64decode(b'I2luY2x1ZGU=').decode()"), "H13", "hidden-source"));
	assert_true(has_rule(BUILT("S = '} ;)x(uler::hcrot nruter {'\n", "S[::-1]"), "H13", "hidden-source"));
	/* the honest twin: sources the file shows, and docstrings that name ops (no C++ of the build) */
	assert_ids("\"\"\"Softmax without torch.softmax: at::softmax(x, 1) or x.softmax(1) { ; } would be the one-liner.\"\"\"\n"
		   "import torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
		   "SRC = '__global__ void k(float *x) {}\\ntorch::Tensor f(torch::Tensor x) { return torch::empty_like(x); }'\n"
		   "def build():\n    \"\"\"Unlike at::softmax(x, 1) { ; } this never calls ATen.\"\"\"\n"
		   "    return load_inline(name='k', cpp_sources=SRC.replace('f(', 'g('), functions=['g'])\n"
		   "ext = build()\nclass ModelNew(nn.Module):\n    \"\"\"No torch::softmax here { ; }\"\"\"\n"
		   "    def forward(self, x):\n        return ext.g(x)\n",
		   "");
}

#define CXX(body)                                                                                           \
	PRE "SRC = r'''#include <torch/extension.h>\n" body "'''\next2 = load_inline(name='k2', cpp_sources=SRC, functions=[])\n"

static void cxx_every_aten_namespace(void **state)
{
	(void)state;
	static const char *const hacks[] = {
		"torch::Tensor f(torch::Tensor x) { return at::cpu::relu(x); }",
		"torch::Tensor f(torch::Tensor x) { return at::cuda::addmm(x, x, x); }",
		"torch::Tensor f(torch::Tensor x) { return at::_ops::gelu::call(x, \"none\"); }",
		"torch::Tensor f(torch::Tensor x) { return at::native::erfc(x); }",
		"torch::Tensor f(torch::Tensor x) { return ::at::compositeexplicitautograd::sigmoid(x); }",
		"torch::Tensor f(torch::Tensor x) { return at::_softmax(x, 1, false); }",
		"torch::Tensor f(torch::Tensor x) { return at::linalg_matmul(x, x); }",
		"torch::Tensor f(torch::Tensor x) { return torch::linalg::matmul(x, x); }",
		"namespace nnf = torch::nn::functional;\ntorch::Tensor f(torch::Tensor x) { return nnf::softplus(x); }",
		"using namespace at;\ntorch::Tensor f(torch::Tensor x) { return log_softmax(x, 1); }",
		"using torch::relu;\ntorch::Tensor f(torch::Tensor x) { return relu(x); }",
		"torch::Tensor f(torch::Tensor x) { auto g = &at::gelu; return g(x, \"none\"); }",
		"torch::Tensor f(torch::Tensor x) { torch::nn::Linear lin(4, 4); return lin->forward(x); }",
		"torch::Tensor f(torch::Tensor x) { return x.addcmul(x, x).clamp_min_(0); }",
		"torch::Tensor f(torch::Tensor x) { return x->sum(); }",
		NULL,
	};
	all_fire(hacks, CXX("%s"), "H01", "cxx-aten-op");
	/* the dispatcher: by schema, by a string naming an aten op, .call() on a typed handle */
	assert_true(has_rule(CXX("torch::Tensor f(torch::Tensor x) { auto op = c10::Dispatcher::singleton()"
				 ".findSchemaOrThrow(\"aten::tanh\", \"\").typed<at::Tensor(const at::Tensor&)>(); return op.call(x); }"),
			     "H01", "cxx-dispatch"));
	/* helpers, guards, vector types, the candidate's own functions: not ATen doing the work */
	assert_ids(CXX("#include <ATen/cuda/CUDAContext.h>\n#include <ATen/cpu/vec/vec.h>\nusing namespace torch;\n"
		       "using Vec = at::vec::Vectorized<float>;\n"
		       "struct Acc { float s = 0; __device__ void add(float v) { s += v; } };\n"
		       "__device__ float relu(float v) { return v > 0 ? v : 0; }\n"
		       "__global__ void k(const float* x, float* y, int n) { int i = threadIdx.x; Acc a; a.add(x[i]);\n"
		       "  if (i < n) y[i] = relu(x[i]) + exp(x[i]) + tanh(x[i]) + max(x[i], 0.f); }\n"
		       "torch::Tensor f(torch::Tensor x) {\n"
		       "  const at::cuda::OptionalCUDAGuard guard(device_of(x));\n"
		       "  auto y = torch::empty_like(x); auto z = at::zeros({x.size(0)}, x.options().dtype(torch::kFloat32));\n"
		       "  int blocks = at::ceil_div((int)x.numel(), 256);\n"
		       "  k<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), 4);\n"
		       "  at::parallel_for(0, 8, 1, [&](int64_t b, int64_t e) { Vec v = Vec::loadu(y.data_ptr<float>() + b);\n"
		       "    v.exp().store(y.data_ptr<float>() + b); });\n"
		       "  float top = at::numeric_limits<float>::upper_bound(); using acc_t = at::acc_type<float, true>;\n"
		       "  return x.contiguous().clone().view({-1}); }"),
		   "");
}

static void cxx_calls_back_into_python(void **state)
{
	(void)state;
	static const char *const hacks[] = {
		"torch::Tensor f(torch::Tensor x) { return py::module_::import(\"torch\").attr(\"relu\")(x).cast<torch::Tensor>(); }",
		"torch::Tensor f(torch::Tensor x) { pybind11::module::import(\"math\"); return x; }",
		"torch::Tensor f(torch::Tensor x) { PyObject *m = PyImport_ImportModule(\"torch\"); return x; }",
		"torch::Tensor f(torch::Tensor x) { return py::eval(\"__import__('torch').tanh\")(x).cast<torch::Tensor>(); }",
		"torch::Tensor f(torch::Tensor x, py::object fn) { return fn.attr(\"__call__\")(x).cast<torch::Tensor>(); }",
		"torch::Tensor f(torch::Tensor x, const py::function &fn) { return fn(x).cast<torch::Tensor>(); }",
		NULL,
	};
	all_fire(hacks, CXX("%s"), "H01", "cxx-python");
	/* binding functions for Python to call is what an extension does */
	assert_ids(CXX("torch::Tensor f(torch::Tensor x) { return x; }\n"
		       "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"f\", &f, py::arg(\"x\")); }"),
		   "");
}

#define FWD(body) PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        " body "\n"

static void h01_reexports_and_private_spellings(void **state)
{
	(void)state;
	assert_ids(FWD("return torch.nn.modules.activation.F.relu(x)"), "H01");
	assert_ids(FWD("return torch.functional.F.gelu(x)"), "H01");
	assert_ids(PRE "import torch.nn.modules.linear as lin\n" FWD("return lin.F.linear(x, x)"), "H01");
	assert_ids(FWD("return torch.functional.einsum('ij->i', x)"), "H01");
	assert_ids(FWD("return torch._C._VariableFunctions.tanh(x)"), "H01");
	assert_ids(FWD("return torch._softmax(x, 1, False)"), "H01");
	assert_ids(FWD("return torch.relu.__call__(x)"), "H01");
	assert_ids(FWD("return torch.func.vmap(torch.square)(x)"), "H01");
	assert_ids(FWD("return torch._C.TensorBase.sigmoid(x)"), "H01 H07"); /* TensorBase is H07's as well */
	/* settings, devices and type information under torch compute nothing */
	assert_ids(FWD("torch.cuda.synchronize(); e = torch.finfo(x.dtype).eps; v = torch.version.cuda\n"
		       "        on = torch._C._get_cudnn_enabled()\n"
		       "        return ext.k(x, torch.Size([1]))"),
		   "");
}

static void h01_every_tensor_method_that_computes(void **state)
{
	(void)state;
	assert_ids(FWD("return ext.k(x).__matmul__(x)"), "H01");
	assert_ids(FWD("return x.__rmul__(x)"), "H01");
	assert_ids(FWD("return x.erfc()"), "H01");
	assert_ids(FWD("return x.baddbmm(x, x)"), "H01");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
		       "        self.b = nn.Parameter(torch.zeros(4))\n    def forward(self, x):\n        return ext.k(x).add(self.b)\n",
		   "H01");
	assert_ids(FWD("return torch.Tensor.erfc(x)"), "H01");
	assert_ids(FWD("return getattr(x, 'erfc')()"), "H01");
	assert_ids(FWD("return getattr(x, 'sig' + 'moid')()"), "H01");
	assert_ids(PRE "import operator\nerfc = operator.methodcaller('erfc')\n" FWD("return erfc(x)"), "H01");
	assert_ids(PRE "import operator\n" FWD("return operator.attrgetter('erfc')(x)()"), "H01");
	assert_ids(FWD("f = x.erfc\n        return f()"), "H01");
	assert_ids(PRE "import operator\n" FWD("return operator.matmul(x, x)"), "H01");
	assert_ids(PRE "import functools, operator\n" FWD("return functools.reduce(operator.add, [x, x])"), "H01");
	/* the operators spelled out by a scalar are glue, like `x * 2`; containers and loggers are no tensors */
	assert_ids(PRE "import logging\nlog = logging.getLogger('k')\n"
		       "class ModelNew(nn.Module):\n    def __init__(self, p):\n        super().__init__()\n        self.p = p\n"
		       "    def forward(self, x):\n        keep = 1.0 - self.p\n"
		       "        m = torch.empty_like(x).bernoulli_(keep)\n        m.div_(keep)\n"
		       "        y = torch.empty_like(x).fill_(0).mul(2.0).add(x.size(0))\n        y.copy_(x)\n"
		       "        seen = set()\n        seen.add(x.shape)\n        names = []\n        names.sort()\n"
		       "        log.log(10, 'k')\n        return ext.k(m, y, dict(a=1).values())\n",
		   "");
}

static void h01_forward_replaced(void **state)
{
	(void)state;
	const char *body = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.k(x)\n";
	char *src;
	/* rebinding forward or __call__ after the class; what it is rebound to is judged as forward */
	src = xstrfmt(PRE "def fast(self, x):\n    return torch.tanh(x)\n%sModelNew.forward = fast\n", body);
	assert_true(has_rule(src, "H01", "forward-rebound") && has_rule(src, "H01", "torch-op"));
	free(src);
	src = xstrfmt(PRE "%ssetattr(ModelNew, '__c' + 'all__', lambda self, x: torch.sigmoid(x))\n", body);
	assert_true(has_rule(src, "H01", "forward-rebound") && has_rule(src, "H01", "torch-op"));
	free(src);
	assert_true(has_rule(PRE "def helper(x):\n    return x\nclass ModelNew(nn.Module):\n    def __init__(self):\n"
				 "        super().__init__()\n        self.forward = helper\n",
			     "H01", "forward-rebound"));
	static const char *const rebinds[] = { "self.__dict__['forward'] = lambda x: torch.sigmoid(x)",
					       "type(self).forward = lambda self, x: x.expm1()",
					       "object.__setattr__(self, 'forward', lambda x: x.log1p())",
					       "self.__setattr__('__call__', print)", NULL };
	all_fire(rebinds, PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n        %s\n",
		 "H01", "forward-rebound");
	/* hooks: registered on the model, globally, through the dict, or by a name put together */
	src = xstrfmt(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
			  "        self.register_forward_hook(lambda m, a, out: torch.relu(a[0]))\n"
			  "    def forward(self, x):\n        return ext.k(x)\n");
	assert_true(has_rule(src, "H01", "forward-hook") && has_rule(src, "H01", "torch-op"));
	free(src);
	assert_true(has_rule(PRE "import torch.nn.modules.module as mm\ndef pre(mod, args):\n    return (args[0].exp(),)\n"
				 "mm.register_module_forward_pre_hook(pre)\n",
			     "H01", "tensor-method"));
	assert_true(has_rule(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
				 "        self._forward_hooks[7] = lambda m, a, o: torch.square(a[0])\n",
			     "H01", "torch-op"));
	assert_true(has_rule(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
				 "        getattr(self, 'register_forward_' + 'hook')(print)\n",
			     "H01", "forward-hook"));
	/* constructing ModelNew gives something else: __new__, a metaclass, the name bound anew */
	src = xstrfmt(PRE "class Other(nn.Module):\n    def forward(self, x):\n        return F.softplus(x)\n"
			  "class ModelNew(nn.Module):\n    def __new__(cls, *a):\n        return Other()\n");
	assert_true(has_rule(src, "H01", "model-new") && has_rule(src, "H01", "torch-op"));
	free(src);
	assert_true(has_rule(PRE "class Meta(type):\n    def __call__(cls, *a):\n        return nn.Tanh()\n"
				 "class ModelNew(nn.Module, metaclass=Meta):\n    pass\n",
			     "H01", "model-new"));
	src = xstrfmt(PRE "class Base(nn.Module):\n    def forward(self, x):\n        return x.erfinv()\nModelNew = Base\n");
	assert_true(has_rule(src, "H01", "model-rebound") && has_rule(src, "H01", "tensor-method"));
	free(src);
	assert_true(has_rule(PRE "class Other(nn.Module):\n    def forward(self, x):\n        return x.logit()\n"
				 "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
				 "        self.__class__ = Other\n",
			     "H13", "class-swap"));
	assert_true(has_rule(PRE "class ModelNew(nn.Module):\n    pass\nModelNew.__bases__ = (nn.Linear,)\n", "H13", "class-swap"));
	assert_ids(PRE "def deco(cls):\n    class W(cls):\n        def forward(self, x):\n            return torch.cosh(x)\n"
		       "    return W\n@deco\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.k(x)\n",
		   "H01");
	/* a class-body alias of its own method, or an instance choosing one of its methods, is judged as forward */
	assert_ids(PRE "class ModelNew(nn.Module):\n    def _run(self, x):\n        return ext.k(x)\n    forward = _run\n", "");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def __init__(self, fast=True):\n        super().__init__()\n"
		       "        self.forward = self._fast if fast else self._slow\n        self.forward = self._fast\n"
		       "    def _fast(self, x):\n        return ext.k(x)\n    def _slow(self, x):\n        return ext.k(x)\n",
		   "H01");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
		       "        self.forward = self._fast\n    def _fast(self, x):\n        return ext.k(x)\n",
		   "");
	assert_ids(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
		       "        self.forward = self._slow\n    def _slow(self, x):\n        return torch.tanh(x)\n",
		   "H01");
}

static void h03_reference_found_by_name(void **state)
{
	(void)state;
	assert_true(has_rule(PRE "refs = [c for c in nn.Module.__subclasses__() if c.__name__.startswith('Mod')]\n", "H03",
			     "finds-model"));
	assert_true(has_rule(PRE "ref = globals().get('Mo' + 'del')\n", "H03", "names-model"));
	assert_true(has_rule(PRE "NAME = ''.join(['M', 'o', 'd', 'e', 'l'])\n", "H03", "names-model"));
	assert_true(has_rule(PRE "import sb_problem\n", "H03", "names-model"));
	assert_ids(PRE "__all__ = ['ModelNew']\nclass ModelNew(nn.Module):\n    \"\"\"Model of a ReLU.\"\"\"\n"
		       "    def forward(self, x):\n        return ext.k(x)\n",
		   "");
}

static void h13_code_from_bytes_and_harness_modules(void **state)
{
	(void)state;
	assert_true(has_rule(PRE "import marshal, types\nf = types.FunctionType(marshal.loads(b''), {})\n", "H13", "dynamic-code"));
	assert_true(has_rule(PRE "def g(x):\n    return x\ng.__code__ = g.__code__.replace(co_code=b'')\n", "H13", "dynamic-code"));
	assert_true(has_rule(PRE "import pickle\nf = pickle.loads(b'')\n", "H13", "dynamic-code"));
	assert_true(has_rule(PRE "import copyreg\n", "H13", "dynamic-code"));
	assert_true(has_rule(CXX("#include <sys/mman.h>\nvoid f(void *p) { mprotect(p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC); }"),
			     "H13", "cxx-introspection"));
	assert_true(has_rule(PRE "import __main__ as entry\n", "H13", "harness-module"));
	assert_true(has_rule(PRE "from worker import Worker\n", "H13", "harness-module"));
	assert_true(has_rule(PRE "def plant():\n    from headers import lite_applies\n", "H13", "harness-module"));
	assert_true(has_rule(PRE "import profiler as p\n", "H13", "harness-module"));
	assert_true(has_rule(PRE "import logging\nname = logging.getLogger('k').findCaller(stacklevel=3)[2]\n", "H13", "frames"));
	assert_true(has_rule(PRE "imp = __builtins__['__imp' + 'ort__']\n", "H13", "introspection"));
	assert_true(has_rule(PRE "import sys\nsys.path.insert(0, '/tmp/written')\n", "H13", "introspection"));
	assert_true(has_rule(PRE "import builtins\nbuiltins.exec('x = 1')\n", "H13", "dynamic-code"));
	assert_true(has_rule(PRE "import timeit\n" FWD("return timeit.timeit('torch.relu(x)', globals=globals(), number=1)"), "H13",
			     "dynamic-code"));
	assert_true(has_rule(PRE "MARK = '.stitchbench-built'\n", "H13", "harness-module"));
	/* the clock or the generator's state read in forward: how a candidate tells timed calls apart */
	assert_true(has_rule(PRE "import time\n" FWD("t0 = time.perf_counter()\n        return ext.k(x)"), "H13", "watch-probe"));
	assert_true(has_rule(FWD("s = torch.cuda.initial_seed()\n        return ext.k(x)"), "H13", "watch-probe"));
	/* ... but not in __init__, and a source naming the project in a comment is no path */
	assert_ids(PRE "import time\nSRC = '// built by stitchbench\\n__global__ void g() {}'\n"
		       "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
		       "        t0 = time.perf_counter()\n"
		       "    def forward(self, x):\n        return ext.k(x)\n",
		   "");
	/* setting a generator's state, anywhere: an attempt to replay the harness's draws, flagged (the seeds
	 * are secret, and a candidate may seed its own initialisation), never a rejection */
	static const char *const seeds[] = { "torch.manual_seed(0)", "torch.cuda.manual_seed_all(7)",
					     "g = torch.Generator(device='cuda')\n        g.manual_seed(42)",
					     "torch.set_rng_state(state)", NULL };
	for (int i = 0; seeds[i]; i++) {
		char *src = xstrfmt(PRE "class ModelNew(nn.Module):\n    def __init__(self, state=None):\n"
				    "        super().__init__()\n        %s\n    def forward(self, x):\n"
				    "        return ext.k(x)\n", seeds[i]);
		struct findings r;
		struct sb_error err = { 0 };
		assert_int_equal(static_check_source("cand.py", src, strlen(src), &r, &err), 0);
		int found = 0;
		for (size_t k = 0; k < r.n; k++)
			if (!strcmp(r.v[k].rule, "seed-replay")) {
				found = 1;
				assert_string_equal(r.v[k].id, "H13");
				assert_true(r.v[k].flag_only);
			}
		if (!found)
			fail_msg("no seed-replay finding for: %s", seeds[i]);
		findings_release(&r);
		free(src);
	}
	/* a name or a comment about seeds is no call */
	assert_ids(PRE "# seeded by the harness: torch.manual_seed\nseed = 3\n", "");
	/* torch's own profiler module is torch, not the harness */
	assert_ids(PRE "import torch.profiler\nfrom torch import profiler\n", "");
}

static void h06_signals_timers_and_false_threads(void **state)
{
	(void)state;
	static const char *const py[] = { "signal.signal(signal.SIGALRM, print)", "signal.setitimer(signal.ITIMER_REAL, 0.001)",
					  "signal.alarm(1)", "signal.set_wakeup_fd(3)", "signal.pthread_kill(1, 14)", NULL };
	all_fire(py, PRE "import signal\n%s\n", "H06", "signal");
	static const char *const cxx[] = {
		"void f() { struct sigaction sa; sigaction(SIGALRM, &sa, nullptr); }",
		"void h(int) {}\nvoid f() { signal(SIGALRM, h); }",
		"void f() { struct itimerval t; setitimer(ITIMER_REAL, &t, nullptr); }",
		"void f() { timer_t t; timer_create(CLOCK_MONOTONIC, nullptr, &t); }",
		"void f() { alarm(1); }",
		"void cb(void *) {}\nvoid f(cudaStream_t s) { cudaLaunchHostFunc(s, cb, nullptr); }",
		"int run(void *) { return 0; }\nvoid f(char *stack) { clone(run, stack, CLONE_VM | CLONE_FS, nullptr); }",
		"void f() { at::launch([] {}); }",
		NULL,
	};
	all_fire(cxx, CXX("%s"), "H06", "cxx-thread");
	/* a tensor's clone(), a lock or an event with no thread started, signal numbers */
	assert_ids(CXX("torch::Tensor f(torch::Tensor x) { auto y = x.contiguous().clone(); return y; }"), "");
	assert_ids(CXX("namespace kern { void launch(int n) {} }\nvoid f() { kern::launch(3); }"), "");
	assert_ids(CXX("int cores() { return (int)std::thread::hardware_concurrency(); }"), "");
	assert_ids(PRE "import signal\nimport threading\nLOCK = threading.Lock()\nREADY = threading.Event()\n"
		       "NAME = signal.Signals(2).name\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
		       "        with LOCK:\n            return ext.k(x)\n",
		   "");
	assert_true(has_rule(PRE "import threading\nthreading.Thread(target=print).start()\n", "H06", "thread"));
	assert_true(has_rule(PRE "import weakref\nkeep = weakref.ref(ext, lambda r: print('late'))\n", "H06", "thread"));
	assert_true(has_rule(PRE "from signal import *\nsetitimer(ITIMER_REAL, 0.001)\n", "H06", "thread"));
}

static void h22_build_locations(void **state)
{
	(void)state;
	assert_true(has_rule(PRE "e = load_inline(name='k3', cpp_sources='', functions=[], build_directory='/tmp/b')\n", "H22",
			     "build-dir"));
	assert_true(has_rule(PRE "from torch.utils import cpp_extension\ne = cpp_extension.load(name='k3', sources=['k.cu'])\n",
			     "H22", "build-files"));
	assert_true(has_rule(PRE "import os\nos.environ['TORCH_EXTENSIONS_DIR'] = '/tmp/x'\n", "H22", "build-dir"));
	assert_true(has_rule(PRE "torch.ops.load_library('/tmp/libk.so')\n", "H22", "build-files"));
	assert_true(has_rule(PRE "import torch.utils.cpp_extension as ce\nm = ce._import_module_from_library('k', '/tmp/k', True)\n",
			     "H22", "build-files"));
	assert_true(has_rule(PRE "with open('/tmp/k.so', 'wb') as f:\n    f.write(b'ELF')\n", "H22", "file-write"));
	assert_true(has_rule(PRE "import os\nhere = os.path.dirname(ext.__file__)\n", "H22", "build-dir"));
	assert_true(has_rule(PRE "import os\nos.dup2(3, 4)\n", "H22", "outside-world"));
	assert_true(has_rule(PRE "import linecache\nsrc = ''.join(linecache.getlines(__file__))\n", "H22", "outside-world"));
	assert_true(has_rule(CXX("void f(int a, int b) { dup2(a, b); }"), "H22", "cxx-outside-world"));
	/* build settings stay fine */
	assert_ids(PRE "import os\nos.environ['MAX_JOBS'] = '4'\nos.environ.setdefault('TORCH_CUDA_ARCH_LIST', '9.0')\n", "");
	assert_ids(PRE "import os\nHERE = os.path.dirname(os.path.abspath(__file__))\n"
		       "with open(os.path.join(HERE, 'k.cu'), 'w') as f:\n    f.write('__global__ void g() {}')\n",
		   "");
}

static void h14_precision_modes_by_number(void **state)
{
	(void)state;
	static const char *const hacks[] = {
		"void f(cublasHandle_t h) { cublasSetMathMode(h, (cublasMath_t)3); }",
		"void f(cublasHandle_t h) { cublasSetMathMode(h, static_cast<cublasMath_t>(1)); }",
		"void f(cublasHandle_t h, int m) { cublasSetMathMode(h, cublasMath_t(m)); }",
		"void f(cublasHandle_t h, cublasMath_t m) { cublasSetMathMode(h, m); }",
		"void f(cublasLtMatmulDesc_t d) { cublasLtMatmulDescCreate(&d, (cublasComputeType_t)77, CUDA_R_32F); }",
		"void f(cublasLtMatmulDesc_t d, int t) { cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &t, 4); }",
		"void f() { at::globalContext().setAllowTF32CuBLAS(true); }",
		NULL,
	};
	all_fire(hacks, CXX("%s"), "H14", "cxx-math-mode");
	assert_true(has_rule(PRE "torch._C._set_cublas_allow_tf32(True)\n", "H14", "tf32"));
	assert_true(has_rule(PRE "setattr(torch.backends.cuda.matmul, 'allow_' + 'tf32', True)\n", "H14", "tf32"));
	assert_true(has_rule(CXX("void f(cudnnConvolutionDescriptor_t d) { cudnnSetConvolutionMathType(d, CUDNN_TENSOR_OP_MATH); }"),
			     "H14", "cxx-half"));
	assert_ids(PRE "torch._C._set_cublas_allow_tf32(False)\n"
		       "SRC = '''void f() { at::globalContext().setAllowTF32CuBLAS(false); }'''\n",
		   "");
	/* the fp32 modes by name or number, and putting back the mode that was there */
	assert_ids(CXX("void f(cublasHandle_t h) { cublasMath_t old; cublasGetMathMode(h, &old);\n"
		       "  cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH); cublasSetMathMode(h, (cublasMath_t)0);\n"
		       "  cublasSetMathMode(h, old); cublasLtMatmulDesc_t d; cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F); }"),
		   "");
}

static void computed_names_and_made_types(void **state)
{
	(void)state;
	/* H08: the timer reached through names put together, or through an object's class */
	assert_ids(PRE "setattr(getattr(torch, 'cu' + 'da').Event, 'elapsed' + '_time', lambda *a: 0.0)\n", "H08");
	assert_true(has_rule(PRE "import types\nsetattr(types.SimpleNamespace, 'elapsed' + '_time', lambda *a: 0.0)\n", "H08",
			     "computed-setattr"));
	assert_true(has_rule(PRE "ev = torch.cuda.Event(enable_timing=True)\nsetattr(type(ev), 'elapsed_time', lambda *a: 0.0)\n",
			     "H08", "monkey-patch"));
	assert_true(has_rule(PRE "ev = torch.cuda.Event(enable_timing=True)\ntype(ev).elapsed_time = lambda *a: 0.0\n", "H08",
			     "monkey-patch"));
	/* H05: a stream made from another stream's type */
	assert_true(has_rule(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
				 "        self.side = type(torch.cuda.current_stream())()\n",
			     "H05", "hidden-stream"));
	assert_true(has_rule(PRE "side = torch.cuda.current_stream().__class__()\n", "H05", "hidden-stream"));
	/* H07: a tensor subclass without a class statement, and the hook's name put together */
	assert_true(has_rule(PRE "Lazy = type('Lazy', (torch.Tensor,), {})\n", "H07", "tensor-subclass"));
	assert_true(has_rule(PRE "import types\nLazy = types.new_class('Lazy', (torch.Tensor,))\n", "H07", "tensor-subclass"));
	assert_true(has_rule(PRE "class Lazy(type(torch.empty(0))):\n    pass\n", "H07", "tensor-subclass"));
	assert_true(has_rule(PRE "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.k(x).as_subclass(object)\n",
			     "H07", "tensor-subclass"));
	assert_true(has_rule(PRE "ns = {'__torch_' + 'function__': classmethod(print)}\n", "H07", "torch-override"));
	/* one's own attributes by computed names, and a type() of one's own object */
	assert_ids(PRE "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
		       "        self.fc = nn.Linear(4, 4)\n        for i in range(2):\n"
		       "            setattr(self, f'w{i}', nn.Parameter(torch.zeros(4)))\n"
		       "            setattr(self.fc, 'b' + str(i), None)\n        kind = type(self).__name__\n"
		       "    def forward(self, x):\n        return ext.k(x)\n",
		   "");
}

/* rules_names.c looks names up with bsearch: its tables must be sorted and disjoint. */
static void name_tables_are_sorted(void **state)
{
	(void)state;
	const char *const *tables[] = { sb_tensor_compute, sb_tensor_free, sb_op_extra };
	for (size_t t = 0; t < 3; t++)
		for (size_t i = 1; tables[t][i]; i++)
			if (strcmp(tables[t][i - 1], tables[t][i]) >= 0)
				fail_msg("table %zu: %s before %s", t, tables[t][i - 1], tables[t][i]);
	for (size_t i = 0; sb_tensor_compute[i]; i++)
		assert_false(tensor_method_free(sb_tensor_compute[i]));
	assert_true(tensor_method_computes("erfc") && tensor_method_computes("__matmul__"));
	assert_false(tensor_method_computes("view") || tensor_method_computes("append"));
	assert_true(torch_op_spelling("_softmax") && torch_op_spelling("relu_out") && !torch_op_spelling("ceil_div"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tok_nested_fstrings),
		cmocka_unit_test(tok_raw_triple_backslashes),
		cmocka_unit_test(tok_prefixes_and_bytes),
		cmocka_unit_test(tok_continuations_comments_indents),
		cmocka_unit_test(tok_errors_name_the_line),
		cmocka_unit_test(comments_and_strings_are_not_code),
		cmocka_unit_test(h01_direct_call_and_position),
		cmocka_unit_test(h01_alias_getattr_import_as_self),
		cmocka_unit_test(h01_honest_twins),
		cmocka_unit_test(h01_follows_calls_and_operators),
		cmocka_unit_test(h02_fallback_and_reraise),
		cmocka_unit_test(h03_model),
		cmocka_unit_test(h04_no_kernel),
		cmocka_unit_test(h05_streams),
		cmocka_unit_test(h06_threads),
		cmocka_unit_test(h07_subclass),
		cmocka_unit_test(h08_monkey_patch),
		cmocka_unit_test(h13_introspection),
		cmocka_unit_test(h14_precision),
		cmocka_unit_test(h20_l2_persistence),
		cmocka_unit_test(h22_outside_world),
		cmocka_unit_test(what_never_runs_or_builds_is_not_flagged),
		cmocka_unit_test(judge_applies_the_policy),
		cmocka_unit_test(a_candidate_is_judged_as_read_once),
		cmocka_unit_test(gpu_fixtures_are_clean),
		cmocka_unit_test(cxx_positions_map_to_the_python_file),
		cmocka_unit_test(library_calls_in_the_cxx_sources),
		cmocka_unit_test(at_most_a_few_findings_per_id),
		cmocka_unit_test(cxx_reached_by_load_inline),
		cmocka_unit_test(cxx_every_aten_namespace),
		cmocka_unit_test(cxx_calls_back_into_python),
		cmocka_unit_test(h01_reexports_and_private_spellings),
		cmocka_unit_test(h01_every_tensor_method_that_computes),
		cmocka_unit_test(h01_forward_replaced),
		cmocka_unit_test(h03_reference_found_by_name),
		cmocka_unit_test(h13_code_from_bytes_and_harness_modules),
		cmocka_unit_test(h06_signals_timers_and_false_threads),
		cmocka_unit_test(h22_build_locations),
		cmocka_unit_test(h14_precision_modes_by_number),
		cmocka_unit_test(computed_names_and_made_types),
		cmocka_unit_test(name_tables_are_sorted),
	};
	return cmocka_run_group_tests_name("static", tests, NULL, NULL);
}
