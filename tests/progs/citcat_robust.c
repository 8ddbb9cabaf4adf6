/* tests/progs/citcat_robust.c - a thread exits holding a robust mutex: the kernel's clean-up
 * of its robust list (at its exit, outside any syscall it makes) marks the mutex's futex word
 * FUTEX_OWNER_DIED, and main's next lock gets EOWNERDEAD, makes the mutex consistent and goes
 * on. A replay that missed the kernel's write sees the word still owned by the dead thread. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock;

static void *die_holding(void *arg)
{
	pthread_mutex_lock(&lock);
	return arg;	/* exits without unlocking */
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_t t;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&lock, &a);
	if (pthread_create(&t, NULL, die_holding, NULL))
		return 1;
	pthread_join(t, NULL);
	int rc = pthread_mutex_lock(&lock);
	printf("lock after the owner died: %s\n", rc == EOWNERDEAD ? "EOWNERDEAD" :
	       rc ? "another error" : "acquired");
	if (rc == EOWNERDEAD && pthread_mutex_consistent(&lock) == 0)
		puts("made consistent");
	pthread_mutex_unlock(&lock);
	rc = pthread_mutex_lock(&lock);
	printf("lock again: %s\n", rc ? "error" : "acquired");
	pthread_mutex_unlock(&lock);
	return 0;
}
