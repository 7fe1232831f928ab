/*
 * Searches at once per server: lei asks a remote host at most 4 queries at
 * a time, and a daemon refreshing many views must be as polite.  A host is
 * the URL's host and port (scheme and path aside: two inboxes of one server
 * share its limit), as curl parses it.  Slots are counted in a short list
 * of the hosts in use; a waiter checks its stop flags every 50 ms.
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/net.h"

struct host {
	struct host *next;
	char *name;
	int busy;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t freed = PTHREAD_COND_INITIALIZER;
static struct host *hosts;

/* "host:port" of url, malloc'd; NULL if curl cannot parse it */
static char *host_of(const char *url)
{
	CURLU *u = curl_url();
	char *h = NULL, *p = NULL, *out = NULL;

	if (u && !curl_url_set(u, CURLUPART_URL, url, 0) &&
	    !curl_url_get(u, CURLUPART_HOST, &h, 0) &&
	    !curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT)) {
		size_t n = strlen(h) + strlen(p) + 2;

		if ((out = malloc(n)))
			snprintf(out, n, "%s:%s", h, p);
	}
	curl_free(h);
	curl_free(p);
	curl_url_cleanup(u);
	return out;
}

static struct host *find(const char *name)
{
	struct host *h;

	for (h = hosts; h; h = h->next)
		if (!strcmp(h->name, name))
			return h;
	return NULL;
}

int net_host_enter(const char *url, int max, atomic_int *stop, atomic_int *cancel,
		   char **ticket)
{
	char *name = host_of(url);
	struct host *h;
	int err = 0;

	*ticket = NULL;
	if (!name)
		return 0;       /* not a URL: net_search says so */
	pthread_mutex_lock(&lock);
	for (;;) {
		if (net_stopped(stop, cancel)) {
			err = ECANCELED;
			break;
		}
		h = find(name);
		if (!h || h->busy < max)
			break;
		net_wait_slice(&freed, &lock);
	}
	if (!err && !h) {
		if (!(h = calloc(1, sizeof(*h)))) {
			err = ENOMEM;
		} else {
			h->name = name;
			name = NULL;
			h->next = hosts;
			hosts = h;
		}
	}
	if (!err) {
		h->busy++;
		*ticket = strdup(h->name);
		if (!*ticket) {
			h->busy--;
			err = ENOMEM;
		}
	}
	pthread_mutex_unlock(&lock);
	free(name);
	return err;
}

void net_host_leave(char *ticket)
{
	struct host **p, *h;

	if (!ticket)
		return;
	pthread_mutex_lock(&lock);
	for (p = &hosts; (h = *p); p = &h->next) {
		if (strcmp(h->name, ticket))
			continue;
		if (--h->busy == 0) {   /* the list holds hosts in use only */
			*p = h->next;
			free(h->name);
			free(h);
		}
		break;
	}
	pthread_cond_broadcast(&freed);
	pthread_mutex_unlock(&lock);
	free(ticket);
}
