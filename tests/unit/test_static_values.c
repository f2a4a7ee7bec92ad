/* test_static_values.c - H01's value lattice (harness/checks/pyvalue.c): each step that carries a torch
 * op as a value (containers, descriptors, lookup doors, unpacking, lambdas, calls) keeps it a torch op,
 * forward calling what it carried is H01 `torch-value`, and torch's allowed helpers carried the same way
 * stay allowed. */
#include "testutil.h"

#include "checks/pytok.h"
#include "checks/pyvalue.h"
#include "checks/pyview.h"
#include "checks/static.h"

/* Every snippet has a custom kernel, so H04 stays out of the way. */
#define PRE                                                                                     \
	"import functools\n"                                                                    \
	"import torch\n"                                                                        \
	"import torch.nn as nn\n"                                                               \
	"import torch.nn.functional as F\n"                                                     \
	"from torch.utils.cpp_extension import load_inline\n"                                   \
	"ext = load_inline(name='k', cpp_sources='', cuda_sources='__global__ void k() {}', functions=[])\n"

/* ---------- the lattice itself ---------- */

struct module {
	struct pytok_list t;
	struct pyview v;
	struct pvals *vals;
};

static void module_open(struct module *m, const char *src)
{
	struct sb_error err = { 0 };
	if (pytok_tokenize(src, strlen(src), &m->t, &err))
		fail_msg("pytok_tokenize: %s", err.msg);
	pyview_build(&m->t, &m->v);
	m->vals = pvals_new(&m->v);
}

static void module_close(struct module *m)
{
	pvals_free(m->vals);
	pyview_release(&m->v);
	pytok_release(&m->t);
}

/* The value of the right side of the last `probe = ...` in src. */
static struct pval probe(const char *src)
{
	struct module m;
	struct pval out;
	module_open(&m, src);
	size_t b = PV_NONE;
	for (size_t i = 0; i < m.v.nbinds; i++)
		if (!strcmp(m.v.binds[i].name, "probe"))
			b = i;
	if (b == PV_NONE)
		fail_msg("no probe in the snippet");
	pval_expr(m.vals, m.v.binds[b].rhs, m.v.binds[b].rhs_end, &out);
	module_close(&m);
	return out;
}

#define assert_tainted(src)                                                  \
	do {                                                                 \
		struct pval v_ = probe(src);                                 \
		if (!(v_.f & VAL_TAINT))                                     \
			fail_msg("not tainted (flags %#x): %s", v_.f, src);  \
	} while (0)
#define assert_clean(src)                                                                \
	do {                                                                             \
		struct pval v_ = probe(src);                                             \
		if (v_.f & VAL_TAINT)                                                    \
			fail_msg("tainted by %s (flags %#x): %s", v_.why, v_.f, src);    \
	} while (0)

static void lattice_names_and_ops(void **state)
{
	(void)state;
	struct pval v = probe(PRE "probe = F.linear\n");
	assert_true(v.f & VAL_OP);
	assert_string_equal(v.path, "torch.nn.functional.linear");
	assert_clean(PRE "probe = F.pad\n");
	assert_clean(PRE "probe = torch.empty_like\n");
	assert_clean(PRE "probe = torch.float32\n");
	/* a name carries what every binding of it holds */
	assert_tainted(PRE "a = torch.relu\nb = a\nprobe = b\n");
	assert_tainted(PRE "def f(x):\n    global g\n    g = torch.relu\nprobe = g\n");
}

static void lattice_containers(void **state)
{
	(void)state;
	assert_tainted(PRE "probe = [torch.relu]\n");
	assert_tainted(PRE "probe = {'f': torch.relu}['f']\n");
	assert_tainted(PRE "probe = dict(relu=torch.relu).get('relu')\n");
	assert_tainted(PRE "ops = {}\nops['relu'] = torch.relu\nprobe = ops['relu']\n");
	assert_tainted(PRE "ops = []\nops.append(torch.relu)\nprobe = ops.pop()\n");
	assert_tainted(PRE "probe = [f for f in (torch.relu, torch.tanh)][0]\n");
	/* the allowed helpers and the extension carried the same way stay allowed */
	assert_clean(PRE "probe = dict(out=torch.empty_like).get('out')\n");
	assert_clean(PRE "probe = {'relu': ext.relu}['relu']\n");
	assert_clean(PRE "probe = [1, 2, 3]\n");
}

static void lattice_descriptors_and_partials(void **state)
{
	(void)state;
	assert_tainted(PRE "probe = staticmethod(F.linear)\n");
	assert_tainted(PRE "probe = classmethod(torch.relu)\n");
	assert_tainted(PRE "probe = functools.partial(torch.relu)\n");
	assert_tainted(PRE "class A:\n    act = staticmethod(F.linear)\nprobe = A.act\n");
	assert_tainted(PRE "class A:\n    act = staticmethod(F.linear)\n    def m(self):\n        probe = type(self).act\n");
	assert_clean(PRE "probe = staticmethod(torch.flatten)\n");
	assert_clean(PRE "probe = functools.partial(torch.reshape, shape=(2, 2))\n");
	assert_clean(PRE "class A:\n    k = staticmethod(ext.relu)\nprobe = A.k\n");
}

static void lattice_iterators_and_calls(void **state)
{
	(void)state;
	assert_tainted(PRE "fns = (F.linear,)\nprobe = next(iter(fns))\n");
	assert_tainted(PRE "def pick():\n    return F.gelu\nprobe = pick()\n");
	assert_tainted(PRE "probe = (lambda f: f)(torch.relu)\n");
	assert_tainted(PRE "probe = list(map(None, [torch.relu]))\n");
	assert_tainted(PRE "probe = torch.compile(lambda x: x)\n");
	assert_clean(PRE "probe = next(iter((torch.cat,)))\n");
	/* what a torch op returns is a tensor, not an op: the causal mask of __init__ */
	assert_clean(PRE "probe = torch.tril(torch.ones(4, 4)).view(1, 4, 4)\n");
}

static void lattice_unpacking(void **state)
{
	(void)state;
	assert_tainted(PRE "f, = (torch.relu,)\nprobe = f\n");
	assert_tainted(PRE "[f] = [torch.relu]\nprobe = f\n");
	assert_tainted(PRE "a, (b, *c) = 1, (2, torch.relu)\nprobe = c\n");
	assert_clean(PRE "[f] = [torch.empty_like]\nprobe = f\n");
}

static void lattice_lambdas_and_defaults(void **state)
{
	(void)state;
	assert_tainted(PRE "probe = (lambda f=F.linear: f)()\n");
	assert_tainted(PRE "pickers = [lambda f=F.linear: f]\nprobe = pickers[0]()\n");
	assert_tainted(PRE "def g(x, act=torch.relu):\n    probe = act\n");
	assert_clean(PRE "probe = (lambda f=torch.empty_like: f)()\n");
	assert_clean(PRE "def g(x, scale=2.0):\n    probe = scale\n");
}

static void lattice_doors(void **state)
{
	(void)state;
	assert_tainted(PRE "def f(x):\n    probe = x.__getattribute__\n");
	assert_tainted(PRE "def f(x):\n    probe = object.__getattribute__(x, 'relu')\n");
	assert_tainted(PRE "def f(x):\n    probe = type(x).__getattribute__(x, 'relu')\n");
	assert_tainted(PRE "def f(x):\n    probe = x.__class__.__base__.__dict__.get('relu')\n");
	assert_tainted(PRE "def f(x):\n    probe = type(x).__mro__[1].__dict__['relu']\n");
	assert_tainted(PRE "def f(x):\n    probe = vars(type(x))['relu']\n");
	assert_tainted(PRE "def f(x, name):\n    probe = getattr(x, name)\n");
	assert_tainted(PRE "probe = torch.Tensor.__dict__.get('softmax')\n");
	assert_tainted(PRE "probe = F.__dict__.get('linear')\n");
	/* the class chain alone is a torch class; a method of it that computes is an op, one that does not
	 * stays allowed */
	assert_tainted(PRE "def f(x):\n    probe = x.__class__.relu\n");
	assert_clean(PRE "def f(x):\n    probe = x.__class__.view\n");
	assert_clean(PRE "def f(x):\n    probe = x.shape\n");
	/* on the file's own objects a door is their attributes */
	assert_tainted(PRE "class A:\n    def __init__(self):\n        self.__dict__['f'] = torch.relu\n"
			   "    def m(self):\n        probe = self.f\n");
	assert_tainted(PRE "class A:\n    def __init__(self):\n        object.__setattr__(self, 'f', torch.relu)\n"
			   "    def m(self):\n        probe = object.__getattribute__(self, 'f')\n");
	assert_clean(PRE "class A:\n    def __init__(self):\n        setattr(self, 'w', nn.Parameter(torch.ones(2)))\n"
			 "    def m(self, i):\n        probe = getattr(self, f'w{i}')\n");
}

static void lattice_modules(void **state)
{
	(void)state;
	struct pval v = probe(PRE "probe = nn.Linear(2, 2)\n");
	assert_true(v.f & VAL_MODULE);
	assert_false(v.f & VAL_TAINT);
	assert_false(probe(PRE "fc = nn.Linear(2, 2)\nprobe = fc.weight\n").f & (VAL_TAINT | VAL_MODULE));
	assert_tainted(PRE "fc = nn.Linear(2, 2)\nprobe = fc.forward\n");
	assert_true(probe(PRE "probe = nn.ModuleList([nn.Linear(2, 2)])[0]\n").f & VAL_MODULE);
}

/* ---------- the rule over whole candidates ---------- */

/* The rules of the H01 (or H02) findings in src, space-separated in file order ("" when none). */
static char *rules_of(const char *src, const char *id)
{
	struct findings r;
	struct sb_error err = { 0 };
	struct strbuf sb = STRBUF_INIT;
	if (static_check_source("snippet.py", src, strlen(src), &r, &err))
		fail_msg("static_check_source: %s", err.msg);
	for (size_t i = 0; i < r.n; i++)
		if (!strcmp(r.v[i].id, id))
			strbuf_addf(&sb, "%s%s", sb.len ? " " : "", r.v[i].rule);
	findings_release(&r);
	return strbuf_detach(&sb, NULL);
}

#define assert_rules(src, id, want)                         \
	do {                                                \
		char *got_ = rules_of(src, id);             \
		assert_string_equal(got_, want);            \
		free(got_);                                 \
	} while (0)

#define MODEL "class ModelNew(nn.Module):\n"

static void forward_calls_what_was_carried(void **state)
{
	(void)state;
	assert_rules(PRE "OPS = dict(relu=torch.relu)\n" MODEL "    def forward(self, x):\n"
		     "        return ext.k(OPS.get('relu')(x))\n", "H01", "torch-value");
	assert_rules(PRE MODEL "    act = staticmethod(F.linear)\n    def forward(self, x, w):\n"
		     "        return ext.k(ModelNew.act(x, w))\n", "H01", "torch-value");
	assert_rules(PRE MODEL "    def forward(self, x):\n        return ext.k(x.__getattribute__('softmax')(1))\n",
		     "H01", "torch-value");
	assert_rules(PRE "FNS = (F.linear,)\n" MODEL "    def forward(self, x, w):\n"
		     "        return ext.k(next(iter(FNS))(x, w))\n", "H01", "torch-value");
	/* handed to something that calls it */
	assert_rules(PRE "FNS = (torch.relu,)\n" MODEL "    def forward(self, x):\n"
		     "        return ext.k(list(map(lambda f: f(x), FNS))[0])\n", "H01", "torch-value");
	/* a lambda carried to forward runs as forward does */
	assert_rules(PRE "STAGES = (lambda y: torch.relu(y),)\n" MODEL "    def forward(self, x):\n"
		     "        return ext.k(next(iter(STAGES))(x))\n", "H01", "torch-op");
	/* the except branch's walk judges the same way */
	assert_rules(PRE "OPS = [torch.relu]\n" MODEL "    def forward(self, x):\n        try:\n"
		     "            return ext.k(x)\n        except RuntimeError:\n            return OPS.pop()(x)\n",
		     "H02", "torch-value");
	/* stored under a name put together at run time, which any attribute of self may be */
	assert_rules(PRE MODEL "    def __init__(self):\n        super().__init__()\n        self.act = ext.k\n"
		     "        setattr(self, 'a' + 'ct', torch.relu)\n    def forward(self, x):\n        return self.act(x)\n",
		     "H01", "torch-value");
	/* torch.relu named in forward is torch-op's finding, reported once */
	assert_rules(PRE MODEL "    def forward(self, x):\n        return ext.k(torch.relu(x))\n", "H01", "torch-op");
}

static void carried_helpers_stay_allowed(void **state)
{
	(void)state;
	static const char *const honest[] = {
		PRE "ALLOC = dict(out=torch.empty_like)\n" MODEL "    def forward(self, x):\n"
		    "        out = ALLOC.get('out')(x)\n        ext.k(x, out)\n        return out\n",
		PRE MODEL "    flat = staticmethod(torch.flatten)\n    def forward(self, x):\n"
		    "        return ext.k(type(self).flat(x))\n",
		PRE "KERNELS = {'k': ext.k}\n" MODEL "    def forward(self, x):\n"
		    "        return next(iter(KERNELS.values()))(x)\n",
		PRE MODEL "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n"
		    "        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])\n"
		    "        self.register_buffer('mask', torch.tril(torch.ones(4, 4)))\n"
		    "    def forward(self, x):\n        for layer in self.layers:\n"
		    "            x = ext.k(x, layer.weight, layer.bias, self.mask.view(1, 4, 4))\n"
		    "        return ext.k(x, self.fc.weight, len(self.layers))\n",
		PRE MODEL "    def __init__(self):\n        super().__init__()\n        for i in range(2):\n"
		    "            setattr(self, f'w{i}', nn.Parameter(torch.ones(4)))\n"
		    "    def forward(self, x):\n        return ext.k(x, *[getattr(self, f'w{i}') for i in range(2)])\n",
		PRE MODEL "    stages = (functools.partial(torch.reshape),)\n    def forward(self, x):\n"
		    "        out = ext.k(x)\n        out.copy_(x)\n        return next(iter(self.stages))(out, x.shape)\n",
		PRE MODEL "    def __init__(self):\n        super().__init__()\n        for i in range(2):\n"
		    "            setattr(self, f'layer{i}', nn.Linear(4, 4))\n        self.ops = {'k': ext.k}\n"
		    "    def forward(self, x):\n        for i in range(2):\n"
		    "            x = self.ops['k'](x, getattr(self, f'layer{i}').weight)\n        return x\n",
		NULL,
	};
	for (const char *const *s = honest; *s; s++) {
		char *got = rules_of(*s, "H01");
		if (got[0])
			fail_msg("honest snippet flagged (%s):\n%s", got, *s);
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lattice_names_and_ops),
		cmocka_unit_test(lattice_containers),
		cmocka_unit_test(lattice_descriptors_and_partials),
		cmocka_unit_test(lattice_iterators_and_calls),
		cmocka_unit_test(lattice_unpacking),
		cmocka_unit_test(lattice_lambdas_and_defaults),
		cmocka_unit_test(lattice_doors),
		cmocka_unit_test(lattice_modules),
		cmocka_unit_test(forward_calls_what_was_carried),
		cmocka_unit_test(carried_helpers_stay_allowed),
	};
	return cmocka_run_group_tests_name("static_values", tests, NULL, NULL);
}
