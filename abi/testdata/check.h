/* check.h: the test programs' assertion: on failure, say where and what,
 * then end the job with exit status 1. */
#include <stdio.h>
#include <stdlib.h>

static int check_rank = -1;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", check_rank,     \
                    __FILE__, __LINE__, #cond);                                   \
            fprintf(stderr, __VA_ARGS__);                                         \
            fprintf(stderr, "\n");                                                \
            fflush(NULL);                                                         \
            MPI_Abort(MPI_COMM_WORLD, 1);                                         \
        }                                                                         \
    } while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s", #call)
