/* imports.h - what a built extension asks the dynamic linker for (DESIGN §6): the undefined symbols of
 * every shared object the trusted builder published, judged by name. The source's spelling can hide an
 * ATen operator behind macros, token pasting or namespaces; the binary cannot: a call into ATen, the
 * dispatcher, the interpreter's frames or the kernel's signal calls is an import of that exact symbol.
 * What the rules allow and refuse is in docs/checks.md (rule names `import-*`). */
#ifndef SB_IMPORTS_H
#define SB_IMPORTS_H

#include "../core/error.h"
#include "../core/strbuf.h"
#include "finding.h"

/* The names of the undefined dynamic symbols of the ELF file at path, appended to out (without symbol
 * versions). Returns 1 when the file is not an ELF shared object (nothing appended), 0 on success, -1 when
 * it is one whose dynamic symbol table cannot be read (the dynamic linker reads the same table through
 * the program headers, so an object whose sections hide it is refused, not passed), or SB_EIO when the
 * file cannot be read (err says why). */
int elf_imports(const char *path, struct strvec *out, struct sb_error *err);

/* Judges one imported symbol name; adds a finding to out when a rule matches. `object` names the file in
 * the message. Exposed for the tests; imports_check_dir calls it for every import. */
void imports_judge(const char *object, const char *symbol, struct findings *out);

/* Every ELF shared object under dir (a published build, at most a few levels deep): imports_judge over
 * its imports, and an H13 finding for an object whose table cannot be read. Returns 0, or -1 when dir
 * cannot be read (err). */
int imports_check_dir(const char *dir, struct findings *out, struct sb_error *err);

#endif
