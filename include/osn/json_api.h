/*
 * A command as one library call, for bindings (python/osn, ctypes) and programs that want the
 * command's answer without a process per point: a scenario in, the document that the command's
 * `--json` writes out, byte for byte.
 *
 * The scenario is a file (may be NULL: defaults only) and overrides "section.key=value" applied
 * after it, exactly as the command's --set flags; errors are the command's, one line naming the
 * file and line or the override, and the key. The C structures of include/osn/model.h are the
 * other way in (examples/c/solve.c); this one keeps a binding free of struct layouts.
 */
#ifndef OSN_JSON_API_H
#define OSN_JSON_API_H

#include <stddef.h>

/*
 * `osn solve [scenario] --set sets[0] ... --method method --json -`: on success returns 0 and
 * sets *json to a NUL-terminated document that the caller frees with osn_json_free(). `method`
 * is "auto", "general", "closed" or NULL (auto). On failure returns OSN_ECONFIG (a bad key or
 * method), OSN_EIO (an unreadable file), OSN_ETOOBIG, OSN_ENOTSUP (the method cannot solve the
 * model), OSN_ENOMEM or OSN_ENUMERIC, writes one line into err and leaves *json NULL.
 */
int osn_solve_json(const char *scenario, const char *const *sets, int nsets, const char *method,
                   char **json, char *err, size_t errsize);

/*
 * `osn optimize [scenario] --set sets[0] ... --json -`: the best thresholds under the scenario's
 * [optimize] constraints, as the document the command writes. Returns 0 with *json set, or an
 * error as osn_solve_json() does (OSN_ETOOBIG for a search that would take hours).
 */
int osn_optimize_json(const char *scenario, const char *const *sets, int nsets, char **json,
                      char *err, size_t errsize);

/* Frees a document returned by osn_solve_json() or osn_optimize_json(); NULL is accepted.
 * Returns NULL. */
char *osn_json_free(char *json);

#endif
