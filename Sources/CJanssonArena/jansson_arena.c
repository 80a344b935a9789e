/* jansson allocates every node, key and string of a parse on its own (a 150-byte request
   line is about forty allocations) and frees them again one by one in json_decref, a walk
   of the whole tree. The project's parses are short-lived: JSON.parse reads the tree into
   Swift values and lets it go at once, on the same thread. So inside an open arena an
   allocation is a bump of a pointer into a block the thread reuses (hot in the cache), a
   free is nothing, and the tree's release is the close's reset. See Docs/JSON.md. */
#include "jansson_arena.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

enum { ARENA_BYTES = 64 * 1024, ARENA_ALIGNMENT = 16 };

struct arena {
    char *base; /* ARENA_BYTES, made on the thread's first open; NULL before */
    size_t used;
    int open;
    int spilled; /* an allocation in this opening went to malloc */
    struct cx_jansson_arena_counts counts;
};

static _Thread_local struct arena arena;
static pthread_key_t arena_key;
static pthread_once_t arena_key_once = PTHREAD_ONCE_INIT;

static int within_arena(const void *pointer) {
    uintptr_t at = (uintptr_t)pointer, base = (uintptr_t)arena.base;
    return base != 0 && at >= base && at - base < ARENA_BYTES;
}

static void *arena_malloc(size_t size) {
    if (arena.open) {
        size_t rounded = (size + (ARENA_ALIGNMENT - 1)) & ~(size_t)(ARENA_ALIGNMENT - 1);
        if (rounded >= size && rounded <= ARENA_BYTES - arena.used) {
            void *pointer = arena.base + arena.used;
            arena.used += rounded;
            arena.counts.served++;
            return pointer;
        }
        arena.spilled = 1;
        arena.counts.spilled++;
    }
    void *pointer = malloc(size);
    if (pointer != NULL) arena.counts.outstanding++;
    return pointer;
}

/* A pointer in this thread's block was cut from it; no other thread frees one, because a
   tree loaded in an arena never leaves the thread (or the opening) it was loaded in. */
static void arena_free(void *pointer) {
    if (pointer == NULL || within_arena(pointer)) return;
    arena.counts.outstanding--;
    free(pointer);
}

/* At the thread's exit: the block goes, and no later free on this thread mistakes a fresh
   malloc in its old range for part of it. */
static void arena_discard(void *block) {
    arena.base = NULL;
    free(block);
}

static void arena_make_key(void) { (void)pthread_key_create(&arena_key, arena_discard); }

__attribute__((constructor)) static void arena_install(void) { json_set_alloc_funcs(arena_malloc, arena_free); }

int cx_jansson_arena_open(void) {
    json_malloc_t installed_malloc;
    json_free_t installed_free;
    json_get_alloc_funcs(&installed_malloc, &installed_free);
    if (arena.open || installed_malloc != arena_malloc || installed_free != arena_free) return 0;
    if (arena.base == NULL) {
        (void)pthread_once(&arena_key_once, arena_make_key);
        char *block = malloc(ARENA_BYTES);
        if (block == NULL) return 0;
        if (pthread_setspecific(arena_key, block) != 0) {
            free(block);
            return 0;
        }
        arena.base = block;
    }
    arena.used = 0;
    arena.spilled = 0;
    arena.open = 1;
    return 1;
}

void cx_jansson_release(json_t *root) {
    if (root != NULL && (!arena.open || arena.spilled)) json_decref(root);
}

/* The next open starts the block from its beginning. */
void cx_jansson_arena_close(int opened) {
    if (opened) arena.open = 0;
}

struct cx_jansson_arena_counts cx_jansson_arena_counts(void) { return arena.counts; }
