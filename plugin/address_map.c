/* tfocl plugin: fake device addresses (contract 1).
 *
 * TensorFlow does arithmetic on SP_DeviceMemoryBase.opaque (BFC regions,
 * slices) and frees with opaque alone, so opaque cannot be a cl_mem. Each
 * device reserves a PROT_NONE range of host address space (a stray host
 * dereference faults at once) and carves it into ranges, each allocation
 * one range with its own cl_mem.
 *
 * Every operation is O(1) or O(log n) in the number of live ranges (an
 * op-by-op host with thousands of live tensors allocates and frees per op):
 *   - all ranges, free and used, form a list in address order, so a freed
 *     range merges with free neighbours in O(1);
 *   - free ranges sit in size classes, as in TLSF: one per power of two,
 *     each split into 8 sub-classes, with bitmaps of the non-empty ones.
 *     An allocation takes the first range of the smallest class whose
 *     every range is large enough (a freed range of the same size comes
 *     back first), and splits off the rest;
 *   - used ranges sit in a balanced tree (glibc's tsearch, a red-black
 *     tree) whose comparison calls an address "equal" to the range that
 *     contains it: any interior pointer resolves in O(log n).
 * Each range's span is at least one byte longer than its allocation, so
 * the end address of an allocation (a 0-byte view at its end) still
 * resolves to it. */
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ocl.h"

struct ocl_range {
  uintptr_t start;
  uint64_t span;  /* reserved bytes, a multiple of OCL_ADDRESS_ALIGN */
  uint64_t bytes; /* bytes the caller asked for (used ranges) */
  cl_mem mem;     /* owned by used ranges */
  bool used;
  struct ocl_range *prev, *next;           /* address order, all ranges */
  struct ocl_range *free_prev, *free_next; /* its size class, free ranges */
};

static uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* floor(log2(x)) for x > 0. */
static int log2_floor(uint64_t x) { return 63 - __builtin_clzll(x); }

/* The size class of a span (>= OCL_ADDRESS_ALIGN): its power of two and
 * the next OCL_MAP_SUB_BITS bits below the leading one. */
static int class_of(uint64_t span) {
  int fl = log2_floor(span);
  int sl = (int)(span >> (fl - OCL_MAP_SUB_BITS)) & (OCL_MAP_SUBCLASSES - 1);
  return fl * OCL_MAP_SUBCLASSES + sl;
}

static void free_list_push(struct ocl_address_map *map, struct ocl_range *r) {
  int c = class_of(r->span);
  r->free_prev = NULL;
  r->free_next = map->free_lists[c];
  if (r->free_next) r->free_next->free_prev = r;
  map->free_lists[c] = r;
  map->free_sub[c / OCL_MAP_SUBCLASSES] |= 1u << (c % OCL_MAP_SUBCLASSES);
  map->free_classes |= 1ull << (c / OCL_MAP_SUBCLASSES);
}

static void free_list_remove(struct ocl_address_map *map, struct ocl_range *r) {
  int c = class_of(r->span);
  if (r->free_prev)
    r->free_prev->free_next = r->free_next;
  else
    map->free_lists[c] = r->free_next;
  if (r->free_next) r->free_next->free_prev = r->free_prev;
  if (!map->free_lists[c]) {
    int fl = c / OCL_MAP_SUBCLASSES;
    map->free_sub[fl] &= ~(1u << (c % OCL_MAP_SUBCLASSES));
    if (!map->free_sub[fl]) map->free_classes &= ~(1ull << fl);
  }
  r->free_prev = r->free_next = NULL;
}

/* Ranges are disjoint, so a probe address is "equal" to the one range that
 * contains it, and two ranges compare by their starts. */
static int compare_ranges(const void *a, const void *b) {
  const struct ocl_range *key = a, *range = b;
  if (key->start < range->start) return -1;
  if (key->start - range->start >= range->span) return 1;
  return 0;
}

bool ocl_address_map_init(struct ocl_address_map *map, uint64_t size) {
  struct ocl_range *all;
  void *base;

  memset(map, 0, sizeof *map);
  size = round_up(size, OCL_ADDRESS_ALIGN);
  if (size == 0) return false;
  all = calloc(1, sizeof *all);
  if (!all) return false;
  base = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
              -1, 0);
  if (base == MAP_FAILED) {
    free(all);
    return false;
  }
  if (pthread_rwlock_init(&map->lock, NULL) != 0) {
    munmap(base, size);
    free(all);
    return false;
  }
  map->base = base;
  map->size = size;
  all->start = (uintptr_t)base;
  all->span = size;
  map->ranges = all;
  free_list_push(map, all);
  return true;
}

static void no_free(void *node) { (void)node; }

void ocl_address_map_finish(struct ocl_address_map *map) {
  if (!map || !map->base) return;
  /* The tree only points at ranges the list owns. */
  tdestroy(map->used, no_free);
  for (struct ocl_range *r = map->ranges, *next; r; r = next) {
    next = r->next;
    if (r->used) clReleaseMemObject(r->mem);
    free(r);
  }
  munmap(map->base, map->size);
  pthread_rwlock_destroy(&map->lock);
  memset(map, 0, sizeof *map);
}

/* A free range of at least `span` bytes, or NULL. */
static struct ocl_range *find_free(struct ocl_address_map *map, uint64_t span) {
  /* Rounded up to its class's upper bound, every range of that class and
   * above fits; an exact class boundary stays in its own class. */
  int fl0 = log2_floor(span);
  uint64_t rounded = span + (1ull << (fl0 - OCL_MAP_SUB_BITS)) - 1;
  if (rounded < span) return NULL;
  int c = class_of(rounded);
  int fl = c / OCL_MAP_SUBCLASSES, sl = c % OCL_MAP_SUBCLASSES;
  unsigned sub = map->free_sub[fl] & (~0u << sl);
  if (!sub) {
    uint64_t above = fl >= 63 ? 0 : map->free_classes & ~((2ull << fl) - 1);
    if (!above) goto last_chance;
    fl = __builtin_ctzll(above);
    sub = map->free_sub[fl];
  }
  return map->free_lists[fl * OCL_MAP_SUBCLASSES + __builtin_ctz(sub)];
last_chance:
  /* Nothing of a fitting class: a range of span's own class may still be
   * large enough (a short walk, only when memory is nearly full). */
  for (struct ocl_range *r = map->free_lists[class_of(span)]; r;
       r = r->free_next)
    if (r->span >= span) return r;
  return NULL;
}

uintptr_t ocl_address_map_insert(struct ocl_address_map *map, uint64_t bytes,
                                 cl_mem mem) {
  uint64_t span = round_up(bytes + 1, OCL_ADDRESS_ALIGN);
  struct ocl_range *r, *rest = NULL;
  uintptr_t start = 0;

  if (!map->base || bytes == 0 || span <= bytes) return 0;
  /* Allocated outside the lock; freed unused below. */
  rest = calloc(1, sizeof *rest);
  if (!rest) return 0;
  pthread_rwlock_wrlock(&map->lock);
  r = find_free(map, span);
  if (!r) goto out;
  free_list_remove(map, r);
  if (r->span > span) {
    /* The tail stays free, as its own range right after r. */
    rest->start = r->start + span;
    rest->span = r->span - span;
    rest->prev = r;
    rest->next = r->next;
    if (r->next) r->next->prev = rest;
    r->next = rest;
    r->span = span;
    free_list_push(map, rest);
    rest = NULL;
  }
  r->used = true;
  r->bytes = bytes;
  r->mem = mem;
  if (!tsearch(r, &map->used, compare_ranges)) {
    /* Out of memory for the tree node: give the range back. */
    r->used = false;
    r->mem = NULL;
    free_list_push(map, r);
    goto out;
  }
  map->count++;
  start = r->start;
out:
  pthread_rwlock_unlock(&map->lock);
  free(rest);
  return start;
}

/* Merges r's free right neighbour into r. */
static void absorb_next(struct ocl_address_map *map, struct ocl_range *r) {
  struct ocl_range *n = r->next;
  free_list_remove(map, n);
  r->span += n->span;
  r->next = n->next;
  if (n->next) n->next->prev = r;
  free(n);
}

cl_mem ocl_address_map_remove(struct ocl_address_map *map, uintptr_t start,
                              uint64_t *bytes) {
  struct ocl_range probe = {.start = start}, **found, *r;
  cl_mem mem = NULL;

  if (!map->base) return NULL;
  pthread_rwlock_wrlock(&map->lock);
  found = tfind(&probe, &map->used, compare_ranges);
  if (!found || (*found)->start != start) goto out;
  r = *found;
  tdelete(r, &map->used, compare_ranges);
  map->count--;
  mem = r->mem;
  if (bytes) *bytes = r->bytes;
  r->used = false;
  r->mem = NULL;
  r->bytes = 0;
  if (r->next && !r->next->used) absorb_next(map, r);
  if (r->prev && !r->prev->used) {
    struct ocl_range *p = r->prev;
    free_list_remove(map, p);
    free_list_push(map, r); /* absorb_next takes it off its list again */
    absorb_next(map, p);
    r = p;
  }
  free_list_push(map, r);
out:
  pthread_rwlock_unlock(&map->lock);
  return mem;
}

bool ocl_address_map_lookup(struct ocl_address_map *map, uintptr_t address,
                            cl_mem *mem, size_t *offset, uint64_t *left) {
  struct ocl_range probe = {.start = address}, **found;
  bool ok = false;

  if (!map->base) return false;
  pthread_rwlock_rdlock(&map->lock);
  found = tfind(&probe, &map->used, compare_ranges);
  if (found) {
    const struct ocl_range *r = *found;
    /* Inside the span but past the allocation's end + 0: not memory. */
    if (address - r->start <= r->bytes) {
      ok = true;
      if (mem) *mem = r->mem;
      if (offset) *offset = (size_t)(address - r->start);
      if (left) *left = r->bytes - (address - r->start);
    }
  }
  pthread_rwlock_unlock(&map->lock);
  return ok;
}

uint64_t ocl_address_map_largest_free(struct ocl_address_map *map) {
  uint64_t largest = 0;

  if (!map->base) return 0;
  pthread_rwlock_rdlock(&map->lock);
  if (map->free_classes) {
    int fl = log2_floor(map->free_classes);
    int c = fl * OCL_MAP_SUBCLASSES + log2_floor(map->free_sub[fl]);
    for (const struct ocl_range *r = map->free_lists[c]; r; r = r->free_next)
      if (r->span > largest) largest = r->span;
  }
  pthread_rwlock_unlock(&map->lock);
  return largest;
}
