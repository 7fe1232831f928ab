/*
 * One big message at a time, in the whole daemon.  A message bigger than
 * NET_BIG_MESSAGE is held in full at least twice on its way to the store
 * (the splitter's buffer, then its decoded body or the store's page copy),
 * so each view taking one at once would cost 2 x max_message: the peak is
 * instead 2 x max_message in total, whatever the servers send and however
 * many views refresh.  Smaller messages are bounded per search.
 *
 * A waiter gives up with ECANCELED when either of its stop flags is set
 * (unmount, a removed view); it checks them every 50 ms (net_wait_slice,
 * here too, as hosts.c waits the same way).
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "net/net.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t freed = PTHREAD_COND_INITIALIZER;
static int held;

int net_big_enter(atomic_int *stop, atomic_int *cancel)
{
	int err = 0;

	pthread_mutex_lock(&lock);
	while (held && !(err = net_stopped(stop, cancel) ? ECANCELED : 0))
		net_wait_slice(&freed, &lock);
	if (!err)
		held = 1;
	pthread_mutex_unlock(&lock);
	return err;
}

void net_big_leave(void)
{
	pthread_mutex_lock(&lock);
	held = 0;
	pthread_cond_signal(&freed);
	pthread_mutex_unlock(&lock);
}

int net_stopped(atomic_int *stop, atomic_int *cancel)
{
	return (stop && atomic_load(stop)) || (cancel && atomic_load(cancel));
}

void net_wait_slice(pthread_cond_t *c, pthread_mutex_t *m)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 50 * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(c, m, &ts);
}
