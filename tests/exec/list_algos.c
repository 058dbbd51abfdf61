/*
 * list_algos.c - prints "collective algorithm" for every registered
 * generator whose schedules have no switch steps (no live transport runs
 * those), so the exec test matrix follows the registry automatically.
 */
#include <stdio.h>

#include "cs_algo.h"

int main(void)
{
    for (int i = 0; i < cs_algo_count(); i++) {
        const cs_algo_t *a = cs_algo_at(i);
        if (cs_algo_switched(a, NULL))
            continue; /* switch steps: no live transport runs them */
        printf("%s %s\n", cs_coll_name(a->coll), a->name);
    }
    return 0;
}
