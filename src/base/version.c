/* The build's version string (include/osn/version.h); osn_version.h is generated at build time
 * by cmake/version.cmake, so that it follows the commits without a new configure. */
#include "osn/version.h"

#include "osn_version.h"

const char *osn_version(void)
{
    return OSN_VERSION_STRING;
}
