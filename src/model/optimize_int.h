/*
 * What the two scans of osn_optimize() share: the plain scan (optimize.c), which solves every
 * pair, and the screened one (optimize_screen.c), which solves only the pairs its screen cannot
 * decide. Both judge and keep pairs with these functions, so they give the same answer.
 */
#ifndef OSN_OPTIMIZE_INT_H
#define OSN_OPTIMIZE_INT_H

#include "osn/optimize.h"

/* Fills a pair's violations (0 where a constraint holds); returns whether it is feasible. */
bool osn__opt_assess(const struct osn_opt_cfg *cfg, const struct osn_measures *ms, double *viol,
                     double *total);

void osn__opt_keep(struct osn_opt_point *pt, long L, long H, double total, const double *viol,
                   const struct osn_measures *ms);

/* Whether measures a beat the kept point b: b empty, or a strictly smaller objective o. */
bool osn__opt_better(enum osn_opt_objective o, const struct osn_measures *a,
                     const struct osn_opt_point *b);

/* The end of a scan that found an optimum: its slack on every constraint, then the next-better
 * pair (L, H) with measures ms (nms NULL: none) and the constraint that binds. */
void osn__opt_finish(const struct osn_opt_cfg *cfg, struct osn_opt_result *res, long L, long H,
                     const struct osn_measures *nms);

/*
 * The screened scan of the one-flow two-loop M|M|1 model (optimize_screen.c): the answer of the
 * plain scan, from closed forms for every pair and full solves for the few pairs they cannot
 * decide. Returns 0, an error of osn_solve(), or OSN__SCREEN_DECLINED (res cleared) when the
 * model is not that case or the screen gives up; the caller then runs the plain scan.
 */
#define OSN__SCREEN_DECLINED 1
int osn__optimize_screened(const struct osn_model *m, const struct osn_opt_cfg *cfg,
                           struct osn_opt_result *res, osn_opt_progress_fn progress,
                           void *progress_arg);

#endif
