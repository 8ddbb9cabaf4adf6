/* collect/fork_gen.c - the fork generation (fork_gen.h): one pthread_atfork child handler. */
#include "collect/fork_gen.h"

#include <pthread.h>

unsigned fork_gen;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_child_bump(void)
{
	fork_gen++;
}

static void fork_install(void)
{
	pthread_atfork(NULL, NULL, fork_child_bump);
}

void fork_gen_watch(void)
{
	pthread_once(&fork_once, fork_install);
}
