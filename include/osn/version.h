/*
 * The version of this OSN build: `git describe` of the tree it was built from (for example
 * "0.1.0-g785c1dc" or "0.1.0-g785c1dc-dirty"), or the release number outside a git clone.
 * Every result file records it, so that a file says what produced it.
 */
#ifndef OSN_VERSION_H
#define OSN_VERSION_H

const char *osn_version(void);

#endif
