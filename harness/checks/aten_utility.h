/* aten_utility.h - the ATen operators that compute nothing the benchmark measures: allocation, views and
 * shape, copies and conversion, metadata, fills and random draws. One list for the checks that judge ATen
 * operators by name: a built extension's imports (imports.c, rule import-aten) and the CPU's record of
 * the operators that ran (runtime.c, whose names the worker's recorder counts as quiet). */
#ifndef SB_ATEN_UTILITY_H
#define SB_ATEN_UTILITY_H

/* Operator names without "aten::" and without an overload, NULL-terminated. An in-place variant is listed
 * by its own name ("uniform_"): the record compares names exactly. */
extern const char *const sb_aten_utility[];

#endif
