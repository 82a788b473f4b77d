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
 *   - used ranges are found from any interior address through a two-level
 *     page table: one entry per 2 MiB chunk of the reservation, either the
 *     one range that covers the whole chunk or a leaf of 512 entries, one
 *     per 4 KiB page. A lookup is two loads and no lock (it runs for every
 *     tensor of every op); an insert or remove writes the entries of its
 *     pages, at most 2 x 511 leaf entries plus one per whole chunk.
 * Range records are recycled, never freed before the map: a lookup racing
 * a remove (a caller's bug) reads a stale record, never freed memory.
 * Each range's span is at least one byte longer than its allocation, so
 * the end address of an allocation (a 0-byte view at its end) still
 * resolves to it. */
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
  struct ocl_range *free_prev, *free_next; /* its size class, free ranges;
                                              the spare pool: free_next */
};

#define PAGE_SHIFT 12
#define CHUNK_SHIFT 21
#define LEAF_ENTRIES (1u << (CHUNK_SHIFT - PAGE_SHIFT))
/* A chunk entry with this bit is a range covering the chunk; else a leaf
 * (or 0). */
#define WHOLE_CHUNK ((uintptr_t)1)

_Static_assert(OCL_ADDRESS_ALIGN == 1u << PAGE_SHIFT,
               "the page table maps allocation-aligned pages");

/* A range record: a recycled one, or a new one. */
static struct ocl_range *range_new(struct ocl_address_map *map) {
  struct ocl_range *r = map->spare;
  if (r) {
    map->spare = r->free_next;
    memset(r, 0, sizeof *r);
    return r;
  }
  return calloc(1, sizeof *r);
}

static void range_recycle(struct ocl_address_map *map, struct ocl_range *r) {
  r->free_next = map->spare;
  map->spare = r;
}

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

/* Points the page table entries of r's pages at `value` (r or NULL).
 * False if a leaf could not be allocated (nothing changed then only if
 * value is r and it failed on the first leaf; callers undo with NULL). */
static bool set_pages(struct ocl_address_map *map, const struct ocl_range *r,
                      const struct ocl_range *value) {
  uint64_t first = (r->start - (uintptr_t)map->base) >> PAGE_SHIFT;
  uint64_t end = first + (r->span >> PAGE_SHIFT);

  for (uint64_t page = first; page < end;) {
    uint64_t chunk = page / LEAF_ENTRIES;
    uint64_t chunk_end = (chunk + 1) * LEAF_ENTRIES;
    uintptr_t entry = atomic_load_explicit(&map->chunks[chunk],
                                           memory_order_relaxed);
    bool whole = page % LEAF_ENTRIES == 0 && end >= chunk_end;
    /* A chunk without a leaf takes the range itself; one that had small
     * ranges before keeps its leaf (never freed before the map). */
    if (whole && (!entry || (entry & WHOLE_CHUNK))) {
      atomic_store_explicit(&map->chunks[chunk],
                            value ? (uintptr_t)value | WHOLE_CHUNK : 0,
                            memory_order_release);
      page = chunk_end;
      continue;
    }
    _Atomic(uintptr_t) *leaf = (_Atomic(uintptr_t) *)entry;
    if (!leaf) {
      if (!value) {
        page = chunk_end;
        continue;
      }
      leaf = calloc(LEAF_ENTRIES, sizeof *leaf);
      if (!leaf) return false;
      atomic_store_explicit(&map->chunks[chunk], (uintptr_t)leaf,
                            memory_order_release);
    }
    for (; page < end && page < chunk_end; page++)
      atomic_store_explicit(&leaf[page % LEAF_ENTRIES], (uintptr_t)value,
                            memory_order_release);
  }
  return true;
}

bool ocl_address_map_init(struct ocl_address_map *map, uint64_t size) {
  struct ocl_range *all;
  void *base;

  memset(map, 0, sizeof *map);
  size = round_up(size, 1ull << CHUNK_SHIFT);
  if (size == 0) return false;
  all = calloc(1, sizeof *all);
  map->num_chunks = size >> CHUNK_SHIFT;
  map->chunks = calloc(map->num_chunks, sizeof *map->chunks);
  if (!all || !map->chunks) goto fail;
  base = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
              -1, 0);
  if (base == MAP_FAILED) goto fail;
  if (pthread_rwlock_init(&map->lock, NULL) != 0) {
    munmap(base, size);
    goto fail;
  }
  map->base = base;
  map->size = size;
  all->start = (uintptr_t)base;
  all->span = size;
  map->ranges = all;
  free_list_push(map, all);
  return true;
fail:
  free(all);
  free(map->chunks);
  memset(map, 0, sizeof *map);
  return false;
}

void ocl_address_map_finish(struct ocl_address_map *map) {
  if (!map || !map->base) return;
  for (struct ocl_range *r = map->ranges, *next; r; r = next) {
    next = r->next;
    if (r->used) clReleaseMemObject(r->mem);
    free(r);
  }
  for (struct ocl_range *r = map->spare, *next; r; r = next) {
    next = r->free_next;
    free(r);
  }
  for (uint64_t c = 0; c < map->num_chunks; c++) {
    uintptr_t entry = atomic_load_explicit(&map->chunks[c], memory_order_relaxed);
    if (entry && !(entry & WHOLE_CHUNK)) free((void *)entry);
  }
  free(map->chunks);
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
  pthread_rwlock_wrlock(&map->lock);
  rest = range_new(map);
  if (!rest) goto out;
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
  /* The record is complete before the release stores publish it. */
  if (!set_pages(map, r, r)) {
    /* Out of memory for a leaf: give the range back. */
    set_pages(map, r, NULL);
    r->used = false;
    r->mem = NULL;
    free_list_push(map, r);
    goto out;
  }
  map->count++;
  start = r->start;
out:
  if (rest) range_recycle(map, rest);
  pthread_rwlock_unlock(&map->lock);
  return start;
}

/* Merges r's free right neighbour into r. */
static void absorb_next(struct ocl_address_map *map, struct ocl_range *r) {
  struct ocl_range *n = r->next;
  free_list_remove(map, n);
  r->span += n->span;
  r->next = n->next;
  if (n->next) n->next->prev = r;
  range_recycle(map, n);
}

/* The used range containing address, or NULL. Lock-free: see the top. */
static struct ocl_range *range_at(struct ocl_address_map *map,
                                  uintptr_t address) {
  uint64_t offset = address - (uintptr_t)map->base;
  if (address < (uintptr_t)map->base || offset >= map->size) return NULL;
  uintptr_t entry = atomic_load_explicit(&map->chunks[offset >> CHUNK_SHIFT],
                                         memory_order_acquire);
  if (entry & WHOLE_CHUNK) return (struct ocl_range *)(entry & ~WHOLE_CHUNK);
  if (!entry) return NULL;
  _Atomic(uintptr_t) *leaf = (_Atomic(uintptr_t) *)entry;
  return (struct ocl_range *)atomic_load_explicit(
      &leaf[(offset >> PAGE_SHIFT) % LEAF_ENTRIES], memory_order_acquire);
}

cl_mem ocl_address_map_remove(struct ocl_address_map *map, uintptr_t start,
                              uint64_t *bytes) {
  struct ocl_range *r;
  cl_mem mem = NULL;

  if (!map->base) return NULL;
  pthread_rwlock_wrlock(&map->lock);
  r = range_at(map, start);
  if (!r || r->start != start) goto out;
  set_pages(map, r, NULL);
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
  const struct ocl_range *r;

  if (!map->base) return false;
  r = range_at(map, address);
  /* Inside the span but past the allocation's end + 0: not memory. */
  if (!r || address - r->start > r->bytes) return false;
  if (mem) *mem = r->mem;
  if (offset) *offset = (size_t)(address - r->start);
  if (left) *left = r->bytes - (address - r->start);
  return true;
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
