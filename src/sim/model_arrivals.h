/*
 * The bridge from a model's arrivals to the event engine's arrival stream, for the simulators
 * (sim -> des, model). des reads arrivals as a struct osn_arrivals (include/osn/law.h) and never
 * sees struct osn_model; this is where the two meet.
 *
 * osn_des_arr_init keeps the name and signature the network simulator (src/sim/net_run.c)
 * calls while that code is being rewritten around src/elem/; new code calls
 * osn_des_arr_setup(a, &spec, ...) with spec = osn_model_arrivals(m). Despite its osn_des_
 * prefix it belongs to sim: des cannot define it without including model.
 */
#ifndef OSN_SIM_MODEL_ARRIVALS_H
#define OSN_SIM_MODEL_ARRIVALS_H

#include "osn/des.h"
#include "osn/model.h"

/* Sets up a's stream from the arrivals of m (borrowing m's trace); as osn_des_arr_setup(). */
static inline int osn_des_arr_init(struct osn_des_arr *a, const struct osn_model *m, char *msg,
                                   size_t msgsize)
{
    struct osn_arrivals spec = osn_model_arrivals(m);
    return osn_des_arr_setup(a, &spec, msg, msgsize);
}

#endif
