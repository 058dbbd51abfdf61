/*
 * run_driver.c - `collstep run` without the rest of the command line tool:
 * the exec tests run cs_cli_run through this binary whenever the full
 * `collstep` target is not buildable in this tree.
 */
#include "cli.h"

int main(int argc, char **argv)
{
    return cs_cli_run(argc, argv);
}
