#ifndef CX_JANSSON_ARENA_H
#define CX_JANSSON_ARENA_H

#include <jansson.h>
#include <stddef.h>

/* A parse's arena: while one is open on a thread, jansson's allocations on that thread are
   cut from a block the thread keeps and reuses (64 KiB), and its frees there cost nothing;
   closing the arena reclaims the block whole. Past the block, allocations come from malloc
   as they always do. Outside an open arena, jansson's allocations are malloc's and its frees
   free's, so a json_dumps result is still freed with free(), as jansson documents.

   The allocator is installed with json_set_alloc_funcs as the process starts, before any
   jansson call. A tree loaded in an open arena must not outlive it, and nothing jansson
   hands its caller to free() (json_dumps' text) may be made inside one. */

/* Opens the arena on this thread. Returns 1 when it opened, and 0 when it did not: one is
   already open on this thread, another allocator was installed after this one, or the block
   could not be made. Pass the result to cx_jansson_arena_close either way. */
int cx_jansson_arena_open(void);

/* Releases a tree (NULL: nothing). Inside an open arena that everything so far has fit in,
   this costs nothing (the close reclaims the tree); otherwise it is json_decref. */
void cx_jansson_release(json_t *root);

/* Closes what cx_jansson_arena_open opened (its result: 0 closes nothing). Every tree loaded
   since the open must have been released first. */
void cx_jansson_arena_close(int opened);

/* This thread's counts since it began, for tests: allocations the arena served; those made
   while it was open that did not fit and went to malloc; and the blocks jansson took from
   malloc on this thread less those it gave back on this thread (a leak makes it grow). */
struct cx_jansson_arena_counts {
    unsigned long served;
    unsigned long spilled;
    long outstanding;
};
struct cx_jansson_arena_counts cx_jansson_arena_counts(void);

#endif
