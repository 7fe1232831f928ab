/*
 * version: the one place leifs's version is written.  --version prints it
 * and every HTTP request carries it in its User-Agent.  (fs/leifs.1's .TH
 * line repeats it; T120 checks that the two agree.)
 */
#ifndef LEIFS_VERSION_H
#define LEIFS_VERSION_H

#define LEIFS_VERSION "0.1"
#define LEIFS_USER_AGENT "leifs/" LEIFS_VERSION

#endif
