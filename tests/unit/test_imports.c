/* test_imports.c - a built extension's imports (harness/checks/imports.c): the rules over symbol names as
 * the compiler mangles them, and the ELF reader on shared objects that cc builds here, a hostile one
 * (section headers gone, a truncated file) included. */
#include "testutil.h"

#include <elf.h>
#include <fcntl.h>

#include "checks/imports.h"

/* A symbol as the compiler writes it, and the rule it must meet ("": none). */
struct symbol_case {
	const char *symbol, *rule, *id;
};

static void judge_cases(const struct symbol_case *c)
{
	for (; c->symbol; c++) {
		struct findings f = { 0 };
		imports_judge("ext.so", c->symbol, &f);
		const char *rule = f.n ? f.v[0].rule : "";
		if (strcmp(rule, c->rule) || (c->id && strcmp(f.v[0].id, c->id)))
			fail_msg("%s: rule '%s' (%s), expected '%s'", c->symbol, rule, f.n ? f.v[0].message : "no finding",
				 c->rule);
		findings_release(&f);
	}
}

/* ATen operators by their at::_ops structs, whatever the source's spelling; the ones that compute nothing
 * pass, also with an overload after the name, and a name is never taken for a shorter allowed one. */
static void aten_operators_by_their_mangled_names(void **state)
{
	(void)state;
	static const struct symbol_case cases[] = {
		{ "_ZN2at4_ops4relu4callERKNS_6TensorE", "import-aten", "H01" },
		{ "_ZN2at4_ops4tanh4callERKNS_6TensorE", "import-aten", NULL }, /* not "t" */
		{ "_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE", "import-aten", NULL },
		{ "_ZN2at4_ops4gelu10redispatchEN3c1014DispatchKeySetERKNS_6TensorE", "import-aten", NULL },
		{ "_ZN2at6native4gelu", "import-aten", NULL },
		{ "_ZN2at3cpu6matmul", "import-aten", NULL },
		{ "_ZN2at4_ops10empty_like4callERKNS_6TensorE", "", NULL },
		{ "_ZN2at4_ops19empty_memory_format4callEN3c108ArrayRef", "", NULL },
		{ "_ZN2at4_ops8to_dtype4callERKNS_6TensorE", "", NULL },
		{ "_ZN2at4_ops4view4callERKNS_6TensorE", "", NULL },
		{ "_ZN2at4_ops13is_contiguous4call", "", NULL },
		{ "_ZN2at4_ops12fill__Scalar4callERNS_6TensorERKN3c106ScalarE", "", NULL },
		{ "_ZN2at4_ops12exponential_4callERNS_6TensorEd", "", NULL }, /* an in-place draw, by its own name */
		{ "_ZN2at4_ops8sym_size4callERKNS_6TensorEl", "", NULL },
		/* helpers outside the operator namespaces */
		{ "_ZN2at4cuda20getCurrentCUDAStreamEa", "", NULL },
		{ "_ZNK2at10TensorBase21__dispatch_contiguousEN3c1012MemoryFormatE", "", NULL },
		{ NULL, NULL, NULL },
	};
	judge_cases(cases);
	struct findings f = { 0 };
	imports_judge("ext.so", cases[0].symbol, &f);
	assert_non_null(strstr(f.v[0].message, "operator relu"));
	findings_release(&f);
}

/* The dispatcher and the jit registry, the interpreter's frames, signals and another process's memory;
 * and the glue of pybind11 and what the CUDA runtime (linked into every nvcc-built extension) imports,
 * which must pass. */
static void the_other_ways_out_and_the_glue(void **state)
{
	(void)state;
	static const struct symbol_case cases[] = {
		{ "_ZNK3c1010Dispatcher10findSchemaERKNS_12OperatorNameE", "import-dispatch", "H01" },
		{ "_ZN5torch3jit21getOperatorForLiteralEPKc", "import-dispatch", NULL },
		{ "PyEval_GetFrame", "import-python", "H13" },
		{ "PyFrame_GetLocals", "import-python", NULL },
		{ "PyObject_GenericGetAttr", "import-python", NULL },
		{ "PyImport_ImportModule", "import-python", NULL },
		{ "sigaction", "import-async", "H06" },
		{ "timer_create", "import-async", NULL },
		{ "ptrace", "import-tamper", "H13" },
		{ "dl_iterate_phdr", "import-tamper", NULL },
		{ "PyObject_GetAttrString", "", NULL },
		{ "PyEval_GetBuiltins", "", NULL },
		{ "PyFrame_GetBack", "", NULL },
		{ "PyObject_CallObject", "", NULL },
		{ "_PyThreadState_UncheckedGet", "", NULL },
		{ "PyObject_GenericGetDict", "", NULL },
		{ "pthread_create", "", NULL },
		{ "memcpy", "", NULL },
		{ "GOMP_parallel", "", NULL },
		{ "syscall", "", NULL },
		{ "dlopen", "", NULL },
		{ "dlsym", "", NULL },
		{ "dlvsym", "", NULL },
		{ "dlmopen", "", NULL },
		{ "mprotect", "", NULL },
		{ "kill", "", NULL },
		{ "pthread_kill", "", NULL },
		{ "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs", "", NULL },
		{ "cudaLaunchKernel", "", NULL },
		{ "cublasSgemm_v2", "", NULL },
		{ NULL, NULL, NULL },
	};
	judge_cases(cases);
}

static char *build_so(const char *dir, const char *name, const char *src)
{
	write_file(dir, "x.c", src);
	char *so = xstrfmt("%s/%s", dir, name);
	char *cmd = xstrfmt("cc -shared -fPIC -o '%s' '%s/x.c' 2>&1", so, dir);
	if (system(cmd) != 0)
		fail_msg("cannot build %s", so);
	free(cmd);
	char *c = xstrfmt("%s/x.c", dir);
	unlink(c);
	free(c);
	return so;
}

static int has(const struct strvec *v, const char *s)
{
	for (size_t i = 0; i < v->nr; i++)
		if (!strcmp(v->v[i], s))
			return 1;
	return 0;
}

/* A real shared object: its imports read, and the check over a build folder finds the raw syscall and
 * the signal handler; its own functions are not imports. */
static void reads_what_cc_built(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char *so = build_so(dir, "ext.so",
			    "#include <signal.h>\n#include <sys/ptrace.h>\n"
			    "static void on(int s) { (void)s; }\n"
			    "long mine(void) { signal(SIGUSR1, on); return ptrace(PTRACE_TRACEME, 0, 0, 0); }\n");
	struct strvec syms = STRVEC_INIT;
	struct sb_error err = { 0 };
	assert_int_equal(elf_imports(so, &syms, &err), 0);
	assert_true(has(&syms, "ptrace"));
	assert_true(has(&syms, "signal"));
	assert_false(has(&syms, "mine"));
	strvec_clear(&syms);
	write_file(dir, "notes.txt", "not an object\n");
	char *notes = xstrfmt("%s/notes.txt", dir);
	assert_int_equal(elf_imports(notes, &syms, &err), 1);
	free(notes);
	struct findings f = { 0 };
	assert_int_equal(imports_check_dir(dir, &f, &err), 0);
	assert_true(findings_has(&f, "H13") && findings_has(&f, "H06"));
	findings_release(&f);
	free(so);
	tmpdir_remove(dir);
}

/* A shared object whose section headers are gone (the loader needs only the program headers) is refused,
 * and a truncated one is read without reading past its end. */
static void a_hidden_or_broken_table_is_refused(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char *so = build_so(dir, "ext.so", "int mine(void) { return 1; }\n");
	int fd = open(so, O_RDWR);
	assert_true(fd >= 0);
	Elf64_Ehdr eh;
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	eh.e_shoff = 0, eh.e_shnum = 0;
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	close(fd);
	struct strvec syms = STRVEC_INIT;
	struct sb_error err = { 0 };
	assert_int_equal(elf_imports(so, &syms, &err), -1);
	struct findings f = { 0 };
	assert_int_equal(imports_check_dir(dir, &f, &err), 0);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.v[0].rule, "import-unreadable");
	findings_release(&f);

	char *cut = build_so(dir, "cut.so", "int mine(void) { return 1; }\n");
	assert_int_equal(truncate(cut, 200), 0);
	int rc = elf_imports(cut, &syms, &err);
	assert_true(rc == -1 || rc == 0);
	strvec_clear(&syms);
	free(so);
	free(cut);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(aten_operators_by_their_mangled_names),
		cmocka_unit_test(the_other_ways_out_and_the_glue),
		cmocka_unit_test(reads_what_cc_built),
		cmocka_unit_test(a_hidden_or_broken_table_is_refused),
	};
	return cmocka_run_group_tests_name("imports", tests, NULL, NULL);
}
