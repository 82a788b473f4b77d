/* tfocl plugin: fake device addresses (contract 1).
 *
 * TensorFlow does arithmetic on SP_DeviceMemoryBase.opaque (BFC regions,
 * slices) and frees with opaque alone, so opaque cannot be a cl_mem. Each
 * device reserves a PROT_NONE range of host address space (a stray host
 * dereference faults at once); each allocation takes an aligned sub-range
 * and keeps its own cl_mem. Lookups are a binary search over a sorted array
 * of disjoint ranges; free ranges are reused first-fit. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ocl.h"

static uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

bool ocl_address_map_init(struct ocl_address_map *map, uint64_t size) {
  void *base;

  memset(map, 0, sizeof *map);
  size = round_up(size, OCL_ADDRESS_ALIGN);
  base = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
              -1, 0);
  if (base == MAP_FAILED) return false;
  if (pthread_rwlock_init(&map->lock, NULL) != 0) {
    munmap(base, size);
    return false;
  }
  map->base = base;
  map->size = size;
  return true;
}

void ocl_address_map_finish(struct ocl_address_map *map) {
  if (!map || !map->base) return;
  for (size_t i = 0; i < map->count; i++) clReleaseMemObject(map->items[i].mem);
  free(map->items);
  munmap(map->base, map->size);
  pthread_rwlock_destroy(&map->lock);
  memset(map, 0, sizeof *map);
}

/* Index of the first mapping whose start is > address. */
static size_t upper_bound(const struct ocl_address_map *map, uintptr_t address) {
  size_t lo = 0, hi = map->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (map->items[mid].start <= address)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

uintptr_t ocl_address_map_insert(struct ocl_address_map *map, uint64_t bytes,
                                 cl_mem mem) {
  uintptr_t base = (uintptr_t)map->base, start = 0;
  uint64_t span = round_up(bytes, OCL_ADDRESS_ALIGN);
  size_t at = 0;

  if (!map->base || bytes == 0 || span < bytes) return 0;
  pthread_rwlock_wrlock(&map->lock);
  /* First fit: the gap before items[i] for i = 0..count (count = tail). */
  for (size_t i = 0; i <= map->count; i++) {
    uintptr_t gap_start =
        i == 0 ? base : map->items[i - 1].start + map->items[i - 1].span;
    uintptr_t gap_end = i == map->count ? base + map->size : map->items[i].start;
    if (gap_end - gap_start >= span) {
      start = gap_start;
      at = i;
      break;
    }
  }
  if (!start) goto out;
  if (map->count == map->capacity) {
    size_t capacity = map->capacity ? map->capacity * 2 : 64;
    struct ocl_mapping *items = realloc(map->items, capacity * sizeof *items);
    if (!items) {
      start = 0;
      goto out;
    }
    map->items = items;
    map->capacity = capacity;
  }
  memmove(&map->items[at + 1], &map->items[at],
          (map->count - at) * sizeof map->items[0]);
  map->items[at] = (struct ocl_mapping){
      .start = start, .span = span, .bytes = bytes, .mem = mem};
  map->count++;
out:
  pthread_rwlock_unlock(&map->lock);
  return start;
}

cl_mem ocl_address_map_remove(struct ocl_address_map *map, uintptr_t start,
                              uint64_t *bytes) {
  cl_mem mem = NULL;
  size_t i;

  if (!map->base) return NULL;
  pthread_rwlock_wrlock(&map->lock);
  i = upper_bound(map, start);
  if (i > 0 && map->items[i - 1].start == start) {
    i--;
    mem = map->items[i].mem;
    if (bytes) *bytes = map->items[i].bytes;
    memmove(&map->items[i], &map->items[i + 1],
            (map->count - i - 1) * sizeof map->items[0]);
    map->count--;
  }
  pthread_rwlock_unlock(&map->lock);
  return mem;
}

bool ocl_address_map_lookup(struct ocl_address_map *map, uintptr_t address,
                            cl_mem *mem, size_t *offset, uint64_t *left) {
  bool found = false;
  size_t i;

  if (!map->base) return false;
  pthread_rwlock_rdlock(&map->lock);
  i = upper_bound(map, address);
  if (i > 0) {
    const struct ocl_mapping *m = &map->items[i - 1];
    /* The end address itself belongs too (0 bytes left), so a 0-byte view
     * at the end of a buffer resolves. */
    if (address - m->start <= m->bytes) {
      found = true;
      if (mem) *mem = m->mem;
      if (offset) *offset = (size_t)(address - m->start);
      if (left) *left = m->bytes - (address - m->start);
    }
  }
  pthread_rwlock_unlock(&map->lock);
  return found;
}

uint64_t ocl_address_map_largest_free(struct ocl_address_map *map) {
  uintptr_t base = (uintptr_t)map->base;
  uint64_t largest = 0;

  if (!map->base) return 0;
  pthread_rwlock_rdlock(&map->lock);
  for (size_t i = 0; i <= map->count; i++) {
    uintptr_t gap_start =
        i == 0 ? base : map->items[i - 1].start + map->items[i - 1].span;
    uintptr_t gap_end = i == map->count ? base + map->size : map->items[i].start;
    if (gap_end - gap_start > largest) largest = gap_end - gap_start;
  }
  pthread_rwlock_unlock(&map->lock);
  return largest;
}
