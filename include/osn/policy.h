/*
 * The switching policy of a hysteretic overload state, one word for the exact model
 * (osn/model.h) and the controllers' detector (osn/ctl.h). It sits under both, like osn/law.h,
 * so that neither includes the other: model -> base, ctl -> base.
 */
#ifndef OSN_POLICY_H
#define OSN_POLICY_H

/* When the mode follows the queue: docs/models.md. Policy I is 0, so a zeroed cfg has it. */
enum osn_policy {
    OSN_POLICY_I,  /* mode changes at the threshold-crossing instants (default) */
    OSN_POLICY_II, /* mode re-evaluated only at service completions */
};

#endif
