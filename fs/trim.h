/* give_back_memory: what freed memory glibc keeps goes back to the system
 * (the idle daemon returns to its baseline, #15).
 *
 * Not under AddressSanitizer: its allocator replaces glibc's, so glibc's
 * arenas are never set up, and two threads trimming at once raced in
 * glibc's late setup of them (a SEGV in mtrim, seen in CI's sanitizer
 * run); there is nothing of glibc's to trim there anyway. */
#ifndef LEIFS_TRIM_H
#define LEIFS_TRIM_H

#include <malloc.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LEIFS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define LEIFS_ASAN 1
#endif

static inline void give_back_memory(void)
{
#ifndef LEIFS_ASAN
	malloc_trim(0);
#endif
}

#endif
