/* `osn node` (src/cli/cmd_node.c). */
#ifndef OSN_CMD_NODE_H
#define OSN_CMD_NODE_H

#include <stdio.h>

/* argv[0] is "node". Returns the exit status. */
int osn_cmd_node(int argc, char **argv);

/* Writes the full `osn node --help` text to f. */
void osn_cmd_node_usage(FILE *f);

#endif
