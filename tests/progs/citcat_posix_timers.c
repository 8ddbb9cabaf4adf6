/* citcat_posix_timers - POSIX timers and a timerfd whose calls write into the program's memory:
 * timer_create's new id (the fourth timer's is 3), timer_settime's and timerfd_settime's old
 * value, timer_gettime's current one. The ids are printed and the fourth timer's signal ends
 * the wait. citcat_errors.sh replays it: before these calls had their outputs recorded, the
 * replay's ids were all 0 and it diverged at the first timer_settime. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t fired;

static void on_alarm(int sig)
{
	(void)sig;
	fired++;
}

int main(void)
{
	signal(SIGALRM, on_alarm);
	struct sigevent se;
	memset(&se, 0, sizeof(se));
	se.sigev_notify = SIGEV_SIGNAL;
	se.sigev_signo = SIGALRM;
	timer_t t[4];
	for (int i = 0; i < 4; i++)
		if (timer_create(CLOCK_MONOTONIC, &se, &t[i]))
			return 1;
	struct itimerspec far = { { 0, 0 }, { 100, 0 } }, soon = { { 0, 0 }, { 0, 5000000 } }, old;
	timer_settime(t[1], 0, &far, NULL);
	timer_settime(t[1], 0, &far, &old);	/* old: ~100 s left */
	struct itimerspec cur;
	timer_gettime(t[1], &cur);
	timer_settime(t[3], 0, &soon, NULL);
	while (!fired)
		pause();
	int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec tfold;
	timerfd_settime(tfd, 0, &far, NULL);
	timerfd_settime(tfd, 0, &far, &tfold);
	printf("ids %ld %ld %ld %ld, old >= 99 s %d, current >= 99 s %d, timerfd old >= 99 s %d, fired %d\n",
	       (long)t[0], (long)t[1], (long)t[2], (long)t[3], old.it_value.tv_sec >= 99,
	       cur.it_value.tv_sec >= 99, tfold.it_value.tv_sec >= 99, (int)fired);
	for (int i = 0; i < 4; i++)
		timer_delete(t[i]);
	close(tfd);
	return 0;
}
