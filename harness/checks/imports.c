/* imports.c - the imports of a built extension (imports.h): an ELF reader that trusts no offset in the
 * file, and the rules over the symbol names. */
#include "imports.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include "aten_utility.h"

/* [off, off + len) lies inside a file of size n */
static int inside(uint64_t off, uint64_t len, size_t n)
{
	return off <= n && len <= n - off;
}

static int read_imports(const unsigned char *m, size_t n, struct strvec *out)
{
	const Elf64_Ehdr *eh = (const void *)m;
	if (eh->e_type != ET_DYN)
		return 1; /* an object file or an executable: nothing the worker's loader maps */
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return -1;
	int dynamic = 0;
	if (eh->e_phentsize == sizeof(Elf64_Phdr) && inside(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), n))
		for (int i = 0; i < eh->e_phnum; i++)
			dynamic |= ((const Elf64_Phdr *)(m + eh->e_phoff))[i].p_type == PT_DYNAMIC;
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || !inside(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), n))
		return dynamic ? -1 : 0;
	const Elf64_Shdr *sh = (const void *)(m + eh->e_shoff);
	int found = 0;
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		if (sh[i].sh_link >= eh->e_shnum || sh[i].sh_entsize != sizeof(Elf64_Sym) ||
		    !inside(sh[i].sh_offset, sh[i].sh_size, n))
			return -1;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (str->sh_type != SHT_STRTAB || !inside(str->sh_offset, str->sh_size, n) || str->sh_size == 0 ||
		    m[str->sh_offset + str->sh_size - 1] != 0)
			return -1;
		const Elf64_Sym *sym = (const void *)(m + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++)
			if (sym[k].st_shndx == SHN_UNDEF && sym[k].st_name && sym[k].st_name < str->sh_size)
				strvec_push(out, (const char *)m + str->sh_offset + sym[k].st_name);
		found = 1;
	}
	/* a dynamic object whose sections show no dynamic symbol table still has one for the loader */
	return found || !dynamic ? 0 : -1;
}

int elf_imports(const char *path, struct strvec *out, struct sb_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		int e = fd < 0 ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		return sb_error_set(err, SB_EIO, "cannot read %s: %s", path, strerror(e));
	}
	size_t n = (size_t)st.st_size;
	if (n < sizeof(Elf64_Ehdr)) {
		close(fd);
		return 1;
	}
	unsigned char *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return sb_error_set(err, SB_EIO, "cannot map %s: %s", path, strerror(errno));
	int rc = memcmp(m, ELFMAG, SELFMAG) ? 1 : read_imports(m, n, out);
	munmap(m, n);
	return rc;
}

/* ---------- the rules ---------- */

/* Namespaces of ATen that hold operators (at::_ops' structs, the native kernels, per-backend entry
 * points): a symbol in one of them is a call into ATen's implementation of the operator. */
static const char *const aten_op_spaces[] = { "_ops", "native", "cpu", "compositeexplicitautograd",
					      "compositeimplicitautograd", "compositeexplicitautogradnonfunctional",
					      NULL };
/* The dispatcher and the jit operator registry: an operator found by its schema name at run time. */
static const char *const dispatch_names[] = { "findSchema", "findSchemaOrThrow", "findOp", "callBoxed", "redispatchBoxed",
					      "getOperatorForLiteral", "findOperatorFor", "getAllOperatorsFor",
					      "getAllOperators", "getOperatorsFor", NULL };
/* The interpreter's frames, their variables, raw attribute access, and running code: how an extension
 * reaches the worker's live objects. The functions pybind11's own glue imports (attribute lookup by
 * string, the builtins, a frame's back link for tracebacks, PyObject_GenericGetDict) are not here:
 * every extension has them. */
static const char *const python_prefixes[] = { "PyImport_", "PyRun_", "PyEval_EvalCode", "_PyEval_", "_PyFrame_",
					       NULL };
static const char *const python_names[] = { "PyEval_GetFrame", "PyThreadState_GetFrame", "PyFrame_GetLocals",
					    "PyFrame_GetGlobals", "PyFrame_GetBuiltins", "PyFrame_GetVar",
					    "PyFrame_GetVarString", "PyEval_GetLocals", "PyEval_GetGlobals",
					    "PyEval_GetFrameLocals", "PyEval_GetFrameGlobals", "PyFrame_FastToLocals",
					    "PyFrame_FastToLocalsWithError", "PyFrame_LocalsToFast",
					    "PyObject_GenericGetAttr", "PyObject_GenericSetAttr",
					    "PySys_GetObject", "PyModule_GetDict", "PyGC_Collect", "Py_CompileString",
					    "PyEval_SetProfile", "PyEval_SetTrace", NULL };
/* Signals, timers and new processes: work that runs outside the call that started it. Threads are not
 * here: a joined thread is honest, and the worker's thread count is judged at run time. Nor are the names
 * the CUDA runtime itself imports into every extension nvcc links (it is linked statically): `kill`,
 * `pthread_kill`, `syscall`, `dlopen`, `dlsym`, `mprotect` say nothing about the candidate there. */
static const char *const async_names[] = { "sigaction", "signal", "__sysv_signal", "bsd_signal", "sigset", "timer_create",
					   "timer_settime", "setitimer", "alarm", "ualarm", "signalfd", "timerfd_create",
					   "timerfd_settime", "fork", "vfork", "_Fork", "clone", "clone3", "posix_spawn",
					   "posix_spawnp", "execve", "execv", "execvp", "execvpe", "execl", "execlp", "system",
					   "popen", "tgkill", "sigqueue", "raise", NULL };
/* Another process's memory, the loader's own list of what is mapped, and its debugger hook. */
static const char *const tamper_names[] = { "ptrace", "process_vm_readv", "process_vm_writev", "dl_iterate_phdr",
					    "dlinfo", "_r_debug", "pkey_mprotect", NULL };

static int in_list(const char *s, size_t n, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strlen(list[i]) == n && !strncmp(s, list[i], n))
			return 1;
	return 0;
}

static int name_in(const char *s, const char *const *list)
{
	return in_list(s, strlen(s), list);
}

static int prefix_in(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (!strncmp(s, list[i], strlen(list[i])))
			return 1;
	return 0;
}

/* An operator name that computes nothing (docs/checks.md, H01 import-aten): one of sb_aten_utility, or one
 * of those followed by '_' and the overload. An operator's struct in at::_ops is named by the operator and
 * its overload ("empty_like", "to_dtype", "view_dtype"), so the cut falls at each '_' in turn; an in-place
 * name the list holds ends in '_' itself, and its overload follows one more ("fill__Scalar": "fill_"). */
static int aten_name_free(const char *s, size_t n)
{
	if (in_list(s, n, sb_aten_utility) || (n > 3 && !strncmp(s, "is_", 3)))
		return 1;
	for (size_t cut = n; cut-- > 1;)
		if (s[cut] == '_' && in_list(s, cut, sb_aten_utility))
			return 1;
	return 0;
}

/* One <length><identifier> of an Itanium-mangled nested name at *p: its text and length; p moves past. */
static int mangled_part(const char **p, const char **name, size_t *n)
{
	char *end;
	if (**p < '1' || **p > '9')
		return 0;
	unsigned long len = strtoul(*p, &end, 10);
	if (strnlen(end, len) < len)
		return 0;
	*name = end, *n = len;
	*p = end + len;
	return 1;
}

/* The operator an ATen symbol names: at::<space>::<op>... with <space> in aten_op_spaces. */
static int aten_operator(const char *sym, const char **op, size_t *n)
{
	const char *p = sym, *part;
	size_t len;
	if (strncmp(p, "_ZN", 3) && strncmp(p, "_ZNK", 4))
		return 0;
	p += p[3] == 'K' ? 4 : 3;
	if (!mangled_part(&p, &part, &len) || len != 2 || strncmp(part, "at", 2) || !mangled_part(&p, &part, &len) ||
	    !in_list(part, len, aten_op_spaces))
		return 0;
	return mangled_part(&p, op, n);
}

/* Whether a mangled symbol's nested name holds the identifier word as one of its parts. */
static int mangled_has(const char *sym, const char *const *words)
{
	for (const char *p = sym; *p; p++) {
		const char *q = p, *part;
		size_t len;
		if (*p >= '1' && *p <= '9' && (p == sym || p[-1] < '0' || p[-1] > '9') && mangled_part(&q, &part, &len) &&
		    in_list(part, len, words))
			return 1;
	}
	return 0;
}

static void add(struct findings *out, const char *id, const char *rule, const char *fmt, const char *object,
		const char *what)
{
	struct finding *f = findings_add(out, id, fmt, object, what);
	snprintf(f->rule, sizeof(f->rule), "%s", rule);
}

void imports_judge(const char *object, const char *symbol, struct findings *out)
{
	const char *op;
	size_t n;
	char name[96];
	if (aten_operator(symbol, &op, &n)) {
		if (aten_name_free(op, n))
			return;
		snprintf(name, sizeof(name), "%.*s", (int)(n < 80 ? n : 80), op);
		add(out, "H01", "import-aten", "the built extension %s imports ATen's operator %s, so ATen does the work "
		    "(however the source spells it); compute the result in the extension's own C++/CUDA code", object, name);
	} else if (!strncmp(symbol, "_Z", 2) && mangled_has(symbol, dispatch_names)) {
		add(out, "H01", "import-dispatch", "the built extension %s imports %s, which finds ATen's operators by "
		    "name at run time; compute the result in the extension's own C++/CUDA code", object, symbol);
	} else if (name_in(symbol, python_names) || prefix_in(symbol, python_prefixes)) {
		add(out, "H13", "import-python", "the built extension %s imports %s, which reaches the interpreter's "
		    "frames, objects or code from C; the timing and the checks' data live there: compute the result and "
		    "return it", object, symbol);
	} else if (name_in(symbol, async_names)) {
		add(out, "H06", "import-async", "the built extension %s imports %s: a signal handler, timer or process "
		    "runs work outside the timed call; do all the work in forward", object, symbol);
	} else if (name_in(symbol, tamper_names)) {
		add(out, "H13", "import-tamper", "the built extension %s imports %s: another process's memory or the "
		    "loader's list of what is mapped reaches the harness's code; call what it needs directly", object,
		    symbol);
	}
}

static int walk(const char *dir, const char *root, int depth, struct findings *out, struct sb_error *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return sb_error_set(err, SB_EIO, "cannot read the build %s: %s", dir, strerror(errno));
	int rc = 0;
	for (struct dirent *de; rc == 0 && (de = readdir(d));) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *path = xstrfmt("%s/%s", dir, de->d_name);
		const char *rel = path + strlen(root) + 1;
		struct stat st;
		struct strvec syms = STRVEC_INIT;
		int r = lstat(path, &st) ? 1 : S_ISDIR(st.st_mode) && depth < 4 ? walk(path, root, depth + 1, out, err)
					     : S_ISREG(st.st_mode) ? elf_imports(path, &syms, err) : 1;
		if (r == -1)
			add(out, "H13", "import-unreadable", "the built extension %s %s: an object the loader can read and "
			    "the checks cannot is refused", rel, "hides its dynamic symbol table");
		else if (r < 0)
			rc = r;
		for (size_t i = 0; i < syms.nr; i++)
			imports_judge(rel, syms.v[i], out);
		strvec_clear(&syms);
		free(path);
	}
	closedir(d);
	return rc;
}

int imports_check_dir(const char *dir, struct findings *out, struct sb_error *err)
{
	return walk(dir, dir, 0, out, err);
}
