// Syntax-check stub of macOS's <sys/event.h> (declarations only; never linked).
#pragma once
#include <cstdint>
#include <ctime>
struct kevent { uintptr_t ident; int16_t filter; uint16_t flags; uint32_t fflags; intptr_t data; void* udata; };
#define EV_SET(kevp, a, b, c, d, e, f) do { (kevp)->ident = (a); (kevp)->filter = (b); (kevp)->flags = (c); (kevp)->fflags = (d); (kevp)->data = (e); (kevp)->udata = (f); } while (0)
#define EVFILT_READ (-1)
#define EVFILT_PROC (-5)
#define EVFILT_SIGNAL (-6)
#define EV_ADD 0x1
#define EV_DELETE 0x2
#define EV_ONESHOT 0x10
#define NOTE_EXIT 0x80000000U
extern "C" int kqueue(void);
// (A function named like the struct, as on macOS; -Wshadow's note about it is the stub's.)
extern "C" int kevent(int, const struct kevent*, int, struct kevent*, int, const struct timespec*);
