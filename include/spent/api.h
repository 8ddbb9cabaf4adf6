/* spent/api.h - SPENT_API marks the functions of spent's public API (the headers in include/spent): the
 * only symbols libspent.so exports. The library is built with -fvisibility=hidden, so every
 * other function stays internal to it (callable only inside the library and by programs that
 * link the static libspent.a, such as spent itself and the unit tests). */
#ifndef SPENT_API_H
#define SPENT_API_H

#if defined(__GNUC__) || defined(__clang__)
#define SPENT_API __attribute__((visibility("default")))
#else
#define SPENT_API
#endif

#endif
