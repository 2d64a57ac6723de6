/*
 * Private interface of the fluid module: the arrival and capacity profiles shared by the
 * configuration code (fluid.c) and the slot loop (run.c).
 */
#ifndef OSN_FLUID_INT_H
#define OSN_FLUID_INT_H

#include "osn/fluid.h"

/* A queue within this fraction of a slot of a whole number of slots counts as that number. */
#define OSN__FLUID_EPS 1e-9

/* Length of the overlap of [a0, a1) and [b0, b1), >= 0. */
double osn__fluid_overlap(double a0, double a1, double b0, double b1);

/* New INVITEs originated at the UAC in slot n: the integral of the rate profile over the slot. */
double osn__fluid_offered(const struct osn_fluid_cfg *cfg, long n);

/* MMPP profile: out[n] = the integral of the phase path's rate over slot n, n < N. */
void osn__fluid_mmpp_offered(const struct osn_fluid_cfg *cfg, double *out, long N);

/* True when server h's capacity varies in time (a slowdown that applies to it). */
bool osn__fluid_slows(const struct osn_fluid_cfg *cfg, int h);

/*
 * Cumulative capacity of server h over slots 0 .. t-1, messages: rate x t x slot, less what a
 * slowdown takes away. Exact (no running sums), so waits computed from it do not drift.
 */
double osn__fluid_capacity_cum(const struct osn_fluid_cfg *cfg, int h, long t);

#endif
