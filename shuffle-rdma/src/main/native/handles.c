/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "handles.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define INDEX_BITS 24
#define GEN_BITS 24
#define PAGE_SLOTS 4096u
#define PAGES ((1u << INDEX_BITS) / PAGE_SLOTS)
#define GEN_MASK ((1u << GEN_BITS) - 1)

struct slot {
  /* (generation << 8) | kind while live; (generation << 8) while free. */
  _Atomic uint64_t stamp;
  _Atomic(void *) ptr;
  _Atomic int64_t aux;
  uint32_t next_free; /* index + 1 of the next free slot; under the mutex */
};

static _Atomic(struct slot *) pages[PAGES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t fresh;     /* slots [0, fresh) have been handed out at least once */
static uint32_t free_head; /* index + 1 of the first free slot, 0 if none */
static size_t live;

static struct slot *slot_at(uint32_t index) {
  struct slot *page = atomic_load_explicit(&pages[index / PAGE_SLOTS], memory_order_acquire);
  return page == NULL ? NULL : &page[index % PAGE_SLOTS];
}

/* Decodes a handle; returns the slot only if the handle is live and of this kind. */
static struct slot *live_slot(jlong handle, int kind, uint64_t *stamp_out) {
  if (handle <= 0) {
    return NULL;
  }
  uint64_t h = (uint64_t)handle;
  uint32_t index_plus_1 = (uint32_t)(h & ((1u << INDEX_BITS) - 1));
  uint32_t gen = (uint32_t)((h >> INDEX_BITS) & GEN_MASK);
  uint32_t hkind = (uint32_t)(h >> (INDEX_BITS + GEN_BITS));
  if (index_plus_1 == 0 || gen == 0 || hkind != (uint32_t)kind || kind <= 0 || kind > 255) {
    return NULL;
  }
  struct slot *s = slot_at(index_plus_1 - 1);
  if (s == NULL) {
    return NULL;
  }
  uint64_t expected = ((uint64_t)gen << 8) | (uint64_t)kind;
  if (atomic_load_explicit(&s->stamp, memory_order_acquire) != expected) {
    return NULL;
  }
  *stamp_out = expected;
  return s;
}

jlong handle_register(void *ptr, int kind) {
  if (ptr == NULL || kind <= 0 || kind > 255) {
    return 0;
  }
  pthread_mutex_lock(&lock);
  uint32_t index;
  if (free_head != 0) {
    index = free_head - 1;
    free_head = slot_at(index)->next_free;
  } else if (fresh < (1u << INDEX_BITS) - 1) {
    index = fresh;
    if (slot_at(index) == NULL) {
      struct slot *page = calloc(PAGE_SLOTS, sizeof(struct slot));
      if (page == NULL) {
        pthread_mutex_unlock(&lock);
        return 0;
      }
      atomic_store_explicit(&pages[index / PAGE_SLOTS], page, memory_order_release);
    }
    fresh++;
  } else {
    pthread_mutex_unlock(&lock);
    return 0;
  }
  struct slot *s = slot_at(index);
  uint32_t gen = (uint32_t)((atomic_load_explicit(&s->stamp, memory_order_relaxed) >> 8) + 1) &
                 GEN_MASK;
  if (gen == 0) {
    gen = 1;
  }
  atomic_store_explicit(&s->ptr, ptr, memory_order_relaxed);
  atomic_store_explicit(&s->aux, 0, memory_order_relaxed);
  s->next_free = 0;
  /* Publishing the stamp last makes the pointer visible with it (release/acquire). */
  atomic_store_explicit(&s->stamp, ((uint64_t)gen << 8) | (uint64_t)kind, memory_order_release);
  live++;
  pthread_mutex_unlock(&lock);
  return (jlong)(((uint64_t)kind << (INDEX_BITS + GEN_BITS)) | ((uint64_t)gen << INDEX_BITS) |
                 (uint64_t)(index + 1));
}

void *handle_get(jlong handle, int kind) {
  uint64_t stamp;
  struct slot *s = live_slot(handle, kind, &stamp);
  if (s == NULL) {
    return NULL;
  }
  void *ptr = atomic_load_explicit(&s->ptr, memory_order_acquire);
  /* Released (and maybe reused) between the two loads: the pointer is not this handle's. */
  if (atomic_load_explicit(&s->stamp, memory_order_acquire) != stamp) {
    return NULL;
  }
  return ptr;
}

void *handle_take(jlong handle, int kind) {
  pthread_mutex_lock(&lock);
  uint64_t stamp;
  struct slot *s = live_slot(handle, kind, &stamp);
  if (s == NULL) {
    pthread_mutex_unlock(&lock);
    return NULL;
  }
  void *ptr = atomic_load_explicit(&s->ptr, memory_order_relaxed);
  /* Kind 0: no lookup matches it, and the slot is on no free list until handle_finish. */
  atomic_store_explicit(&s->stamp, stamp & ~(uint64_t)0xff, memory_order_release);
  atomic_store_explicit(&s->ptr, NULL, memory_order_relaxed);
  pthread_mutex_unlock(&lock);
  return ptr;
}

void handle_finish(jlong handle) {
  uint32_t index = (uint32_t)((uint64_t)handle & ((1u << INDEX_BITS) - 1)) - 1;
  pthread_mutex_lock(&lock);
  struct slot *s = slot_at(index);
  s->next_free = free_head;
  free_head = index + 1;
  live--;
  pthread_mutex_unlock(&lock);
}

void handle_restore(jlong handle, int kind, void *ptr) {
  uint64_t h = (uint64_t)handle;
  uint32_t gen = (uint32_t)((h >> INDEX_BITS) & GEN_MASK);
  pthread_mutex_lock(&lock);
  struct slot *s = slot_at((uint32_t)(h & ((1u << INDEX_BITS) - 1)) - 1);
  atomic_store_explicit(&s->ptr, ptr, memory_order_relaxed);
  atomic_store_explicit(&s->stamp, ((uint64_t)gen << 8) | (uint64_t)kind, memory_order_release);
  pthread_mutex_unlock(&lock);
}

void *handle_release(jlong handle, int kind) {
  void *ptr = handle_take(handle, kind);
  if (ptr != NULL) {
    handle_finish(handle);
  }
  return ptr;
}

jlong handle_aux(jlong handle, int kind) {
  uint64_t stamp;
  struct slot *s = live_slot(handle, kind, &stamp);
  if (s == NULL) {
    return 0;
  }
  jlong aux = atomic_load_explicit(&s->aux, memory_order_acquire);
  return atomic_load_explicit(&s->stamp, memory_order_acquire) == stamp ? aux : 0;
}

int handle_set_aux(jlong handle, int kind, jlong aux) {
  uint64_t stamp;
  struct slot *s = live_slot(handle, kind, &stamp);
  if (s == NULL) {
    return 0;
  }
  atomic_store_explicit(&s->aux, aux, memory_order_release);
  return 1;
}

size_t handle_live_count(void) {
  pthread_mutex_lock(&lock);
  size_t n = live;
  pthread_mutex_unlock(&lock);
  return n;
}
