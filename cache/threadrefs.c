/*
 * The ids a message's thread is made of (cache-private.h: term_refs), as
 * public-inbox's MID.pm `references` and Smsg.pm `parse_references` take
 * them: the <ids> of References then In-Reply-To, CR/LF/TAB dropped, each
 * once, cut at MAX_MID_SIZE, leaving out any that is an address of To,
 * From or Cc (or "y", "n": old git-send-email prompts answered into
 * In-Reply-To).  The message's own Message-IDs (its Q terms) need not be
 * left out here: index.cc unites them with the references anyway.
 */
#include <errno.h>
#include <gmime/gmime.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-private.h"
#include "cache/terms.h"

#define MAX_MID_SIZE 244        /* as terms.c: Xapian's term limit less 'Q' */
/* The nearest ancestors a message links its thread by: the last ones of
 * References and In-Reply-To.  public-inbox takes them all; a header of
 * 100,000 ids would cost as many index records and lookups, and a thread
 * is found by its nearest ancestors alone. */
#define REFS_MAX 100

/* PublicInbox::Address::emails of one header value, into seen */
static void add_emails(GHashTable *seen, InternetAddressList *l)
{
	int i, n = l ? internet_address_list_length(l) : 0;

	for (i = 0; i < n; i++) {
		InternetAddress *a = internet_address_list_get_address(l, i);

		if (INTERNET_ADDRESS_IS_MAILBOX(a)) {
			const char *e = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a));

			if (e && *e)
				g_hash_table_add(seen, g_strdup(e));
		} else if (INTERNET_ADDRESS_IS_GROUP(a)) {
			add_emails(seen, internet_address_group_get_members(INTERNET_ADDRESS_GROUP(a)));
		}
	}
}

void term_refs(struct term_doc *d, GMimeObject *o)
{
	static const char *const refh[] = { "References", "In-Reply-To" };
	static const char *const addrh[] = { "To", "From", "Cc" };
	GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GHashTable *addr = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GPtrArray *ids = g_ptr_array_new_with_free_func(g_free), *v;
	guint i, j;

	for (j = 0; j < 2; j++) {
		v = cache_hdr_raw(o, refh[j]);
		for (i = 0; i < v->len; i++)
			cache_extract_ids(v->pdata[i], ids, seen);
		g_ptr_array_unref(v);
	}
	g_hash_table_add(addr, g_strdup("y"));
	g_hash_table_add(addr, g_strdup("n"));
	for (j = 0; ids->len && j < 3; j++) {
		v = cache_hdr_raw(o, addrh[j]);
		for (i = 0; i < v->len; i++) {
			InternetAddressList *l = internet_address_list_parse(NULL, v->pdata[i]);

			add_emails(addr, l);
			if (l)
				g_object_unref(l);
		}
		g_ptr_array_unref(v);
	}
	g_hash_table_remove_all(seen);
	/* from the last, REFS_MAX distinct ones at most, then in order */
	for (i = ids->len, j = 0; i > 0 && j < REFS_MAX; i--) {
		char *id = ids->pdata[i - 1];

		if (strlen(id) > MAX_MID_SIZE)
			id[MAX_MID_SIZE] = '\0';
		if (g_hash_table_contains(addr, id) || g_hash_table_contains(seen, id)) {
			ids->pdata[i - 1] = NULL;       /* left out */
			g_free(id);
			continue;
		}
		g_hash_table_add(seen, g_strdup(id));
		j++;
	}
	if (j && !(d->refs = calloc(j, sizeof(*d->refs))))
		d->err = ENOMEM;
	for (; i < ids->len && !d->err; i++) {
		const char *id = ids->pdata[i];

		if (!id)
			continue;
		if (!(d->refs[d->nrefs] = strdup(id))) {
			d->err = ENOMEM;
			break;
		}
		d->nrefs++;
	}
	g_ptr_array_unref(ids);
	g_hash_table_unref(addr);
	g_hash_table_unref(seen);
}
