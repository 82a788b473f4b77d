/* Devices: what PluggableDeviceFactory::CreateDevices and PluggableDevice
 * do per device (create_device, device_memory_usage, streams), plus the
 * copies TensorFlow's PluggableDeviceUtil makes, waited for as its EventMgr
 * does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

static const char *const role_names[TFOCL_STREAM_ROLE_COUNT] = {
    "compute", "host_to_device", "device_to_host", "device_to_device"};

static bool plugin_add_device(struct tfocl_plugin *p, struct tfocl_device *d)
{
  struct tfocl_device **v;

  pthread_mutex_lock(&p->lock);
  v = realloc(p->devices, sizeof(*v) * (size_t)(p->num_devices + 1));
  if (v != NULL) {
    v[p->num_devices++] = d;
    p->devices = v;
  }
  pthread_mutex_unlock(&p->lock);
  return v != NULL;
}

struct tfocl_device *tfocl_device_open(struct tfocl_plugin *plugin,
                                       int ordinal, TF_Status *status)
{
  struct tfocl_device *d;
  const SP_StreamExecutor *se;
  SE_CreateDeviceParams params = {
      .struct_size = SE_CREATE_DEVICE_PARAMS_STRUCT_SIZE};
  const SP_StreamOptions no_priority = {
      .struct_size = SP_STREAM_OPTIONS_STRUCT_SIZE, .has_priority = 0};
  void (*with_options)(const SP_Device *, const SP_StreamOptions *,
                       SP_Stream *, TF_Status *);
  int64_t free_mem = 0, total_mem = 0;
  int count, created = 0;

  if (!tfocl_plugin_has_devices(plugin)) {
    shim_set_status(status, TF_FAILED_PRECONDITION,
                    "Plugin %s has no devices (it does not export "
                    "SE_InitPlugin)",
                    plugin != NULL ? plugin->path : "(null)");
    return NULL;
  }
  se = &plugin->se;
  count = tfocl_plugin_device_count(plugin, status);
  if (!shim_ok(status))
    return NULL;
  if (ordinal < 0 || ordinal >= count) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Invalid device ordinal %d: platform %s has %d "
                    "device(s)",
                    ordinal, plugin->platform_name, count);
    return NULL;
  }
  d = calloc(1, sizeof(*d));
  if (d == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    return NULL;
  }
  d->plugin = plugin;
  d->ordinal = ordinal;
  pthread_mutex_init(&d->lock, NULL);
  snprintf(d->name, sizeof(d->name),
           "/job:localhost/replica:0/task:0/device:%s:%d",
           plugin->device_type, ordinal);

  /* As GetUncachedExecutor: zeroed SP_Device with struct_size set. */
  d->sp = (SP_Device){.struct_size = SP_DEVICE_STRUCT_SIZE};
  params.ordinal = ordinal;
  params.device = &d->sp;
  plugin->platform_fns.create_device(&plugin->platform, &params, status);
  if (!shim_ok(status))
    goto fail_free;
  shim_validate_device(&d->sp, status);
  if (!shim_ok(status))
    goto fail_device;

  /* PluggableDeviceFactory::CreateDevices: no memory figure, no device. */
  if (!se->device_memory_usage(&d->sp, &free_mem, &total_mem)) {
    shim_set_status(status, TF_INTERNAL,
                    "Failed to query available memory for device %s:%d "
                    "(device_memory_usage returned false)",
                    plugin->device_type, ordinal);
    goto fail_device;
  }

  /* As TensorFlow 2.22's core: create_stream_with_options where the
   * plugin's table has it (no priority: the shim makes no logical devices),
   * else create_stream. */
  with_options = SHIM_HAS_FIELD(se, SP_StreamExecutor,
                                create_stream_with_options)
                     ? se->create_stream_with_options
                     : NULL;
  for (created = 0; created < TFOCL_STREAM_ROLE_COUNT; created++) {
    if (with_options != NULL)
      with_options(&d->sp, &no_priority, &d->streams[created], status);
    else
      se->create_stream(&d->sp, &d->streams[created], status);
    if (!shim_ok(status)) {
      shim_prefix_status(status, created == 0 ? "create_stream (compute): "
                                              : "create_stream: ");
      goto fail_streams;
    }
  }
  if (!plugin_add_device(plugin, d)) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
    goto fail_streams;
  }
  SHIM_TRACE("opened %s", d->name);
  shim_set_ok(status);
  return d;

fail_streams:
  while (created-- > 0)
    se->destroy_stream(&d->sp, d->streams[created]);
fail_device:
  plugin->platform_fns.destroy_device(&plugin->platform, &d->sp);
fail_free:
  pthread_mutex_destroy(&d->lock);
  free(d);
  return NULL;
}

void tfocl_device_close(struct tfocl_device *d)
{
  const SP_StreamExecutor *se;
  TF_Status *st;

  if (d == NULL)
    return;
  se = &d->plugin->se;
  shim_plugin_forget_device(d->plugin, d);
  /* Outstanding work must finish before its streams go. */
  st = TF_NewStatus();
  if (st != NULL) {
    se->synchronize_all_activity(&d->sp, st);
    TF_DeleteStatus(st);
  }
  for (int i = 0; i < d->num_free_events; i++)
    se->destroy_event(&d->sp, d->free_events[i]);
  free(d->free_events);
  tfocl_device_keep_freed_memory(d, false);
  for (int i = 0; i < TFOCL_STREAM_ROLE_COUNT; i++)
    se->destroy_stream(&d->sp, d->streams[i]);
  d->plugin->platform_fns.destroy_device(&d->plugin->platform, &d->sp);
  pthread_mutex_destroy(&d->lock);
  SHIM_TRACE("closed %s", d->name);
  free(d);
}

struct tfocl_plugin *tfocl_device_plugin(const struct tfocl_device *d)
{
  return d != NULL ? d->plugin : NULL;
}

const SP_Device *tfocl_device_sp(const struct tfocl_device *d)
{
  return d != NULL ? &d->sp : NULL;
}

SP_Stream tfocl_device_stream(const struct tfocl_device *d,
                              enum tfocl_stream_role role)
{
  if (d == NULL || role < 0 || role >= TFOCL_STREAM_ROLE_COUNT)
    return NULL;
  return d->streams[role];
}

const char *tfocl_device_type(const struct tfocl_device *d)
{
  return d != NULL ? d->plugin->device_type : NULL;
}

void tfocl_device_synchronize(struct tfocl_device *d, TF_Status *status)
{
  const SP_StreamExecutor *se;

  if (d == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT, "device is NULL");
    return;
  }
  se = &d->plugin->se;
  shim_set_ok(status);
  se->synchronize_all_activity(&d->sp, status);
  if (!shim_ok(status))
    return;
  for (int i = 0; i < TFOCL_STREAM_ROLE_COUNT; i++) {
    se->get_stream_status(&d->sp, d->streams[i], status);
    if (!shim_ok(status)) {
      char prefix[64];
      snprintf(prefix, sizeof(prefix), "%s stream: ", role_names[i]);
      shim_prefix_status(status, prefix);
      return;
    }
  }
}

/* Refuses what TensorFlow's BFC allocator would abort on; NULL then. */
static bool suballocator_aligned(const char *call, const void *p,
                                 TF_Status *status)
{
  if (((uintptr_t)p & (SHIM_SUBALLOCATOR_ALIGN - 1)) == 0)
    return true;
  shim_set_status(status, TF_INTERNAL,
                  "%s returned %p, not aligned to %u bytes: TensorFlow's BFC "
                  "allocator aborts the process on such memory (\"SubAllocator "
                  "must return memory aligned to at least %u bytes\")",
                  call, p, SHIM_SUBALLOCATOR_ALIGN, SHIM_SUBALLOCATOR_ALIGN);
  return false;
}

/* A kept block of exactly `size` bytes, taken out of the list; NULL when
 * none. */
static void *take_kept_block(struct tfocl_device *d, uint64_t size)
{
  void *opaque = NULL;

  pthread_mutex_lock(&d->lock);
  for (int i = 0; i < d->num_kept; i++) {
    if (d->kept[i].size == size) {
      opaque = d->kept[i].opaque;
      d->kept[i] = d->kept[--d->num_kept];
      break;
    }
  }
  pthread_mutex_unlock(&d->lock);
  return opaque;
}

/* Deallocates every kept block; true when there was one. */
static bool release_kept_blocks(struct tfocl_device *d)
{
  struct shim_kept_block kept[SHIM_KEPT_BLOCKS_MAX];
  int n;

  pthread_mutex_lock(&d->lock);
  n = d->num_kept;
  memcpy(kept, d->kept, sizeof(kept[0]) * (size_t)n);
  d->num_kept = 0;
  pthread_mutex_unlock(&d->lock);
  for (int i = 0; i < n; i++)
    shim_device_deallocate(d, kept[i].opaque);
  return n > 0;
}

bool tfocl_device_keep_freed_memory(struct tfocl_device *d, bool keep)
{
  if (d == NULL)
    return false;
  keep = keep && d->plugin->platform.use_bfc_allocator;
  pthread_mutex_lock(&d->lock);
  d->keep_freed = keep;
  pthread_mutex_unlock(&d->lock);
  if (!keep)
    release_kept_blocks(d);
  return keep;
}

void tfocl_device_poison_outputs(struct tfocl_device *d, bool poison)
{
  if (d != NULL)
    d->poison_outputs = poison;
}

void shim_device_release(struct tfocl_device *d, void *opaque, uint64_t size)
{
  bool kept = false;

  pthread_mutex_lock(&d->lock);
  if (d->keep_freed && d->num_kept < SHIM_KEPT_BLOCKS_MAX) {
    d->kept[d->num_kept++] = (struct shim_kept_block){opaque, size};
    kept = true;
  }
  pthread_mutex_unlock(&d->lock);
  if (!kept)
    shim_device_deallocate(d, opaque);
}

void *shim_device_allocate(struct tfocl_device *d, uint64_t size,
                           TF_Status *status)
{
  SP_DeviceMemoryBase mem = {.struct_size =
                                 SP_DEVICE_MEMORY_BASE_STRUCT_SIZE};

  mem.opaque = take_kept_block(d, size);
  if (mem.opaque != NULL) {
    shim_set_ok(status);
    return mem.opaque;
  }
  /* memory_space 0, as DeviceMemAllocator; only opaque survives. */
  d->plugin->se.allocate(&d->sp, size, 0, &mem);
  if (mem.opaque == NULL && release_kept_blocks(d)) {
    mem =
        (SP_DeviceMemoryBase){.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE};
    d->plugin->se.allocate(&d->sp, size, 0, &mem);
  }
  if (mem.struct_size == 0)
    SHIM_TRACE("allocate left SP_DeviceMemoryBase.struct_size = 0");
  if (mem.opaque == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  if (!suballocator_aligned("allocate", mem.opaque, status)) {
    shim_device_deallocate(d, mem.opaque);
    return NULL;
  }
  shim_set_ok(status);
  return mem.opaque;
}

void shim_device_deallocate(struct tfocl_device *d, void *opaque)
{
  /* TensorFlow hands back only the address: size and payload are 0. */
  SP_DeviceMemoryBase mem = {.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE,
                             .opaque = opaque};
  d->plugin->se.deallocate(&d->sp, &mem);
}

void *shim_host_memory_allocate(struct tfocl_device *d, uint64_t size,
                                TF_Status *status)
{
  void *p = d->plugin->se.host_memory_allocate(&d->sp, size);

  if (p == NULL) {
    shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  if (!suballocator_aligned("host_memory_allocate", p, status)) {
    d->plugin->se.host_memory_deallocate(&d->sp, p);
    return NULL;
  }
  shim_set_ok(status);
  return p;
}

void shim_host_memory_deallocate(struct tfocl_device *d, void *mem)
{
  d->plugin->se.host_memory_deallocate(&d->sp, mem);
}

static SP_Event event_get(struct tfocl_device *d, TF_Status *status)
{
  SP_Event ev = NULL;

  pthread_mutex_lock(&d->lock);
  if (d->num_free_events > 0)
    ev = d->free_events[--d->num_free_events];
  pthread_mutex_unlock(&d->lock);
  if (ev != NULL) {
    shim_set_ok(status);
    return ev;
  }
  shim_set_ok(status);
  d->plugin->se.create_event(&d->sp, &ev, status);
  return shim_ok(status) ? ev : NULL;
}

static void event_put(struct tfocl_device *d, SP_Event ev)
{
  SP_Event *v;

  pthread_mutex_lock(&d->lock);
  if (d->num_free_events == d->cap_free_events) {
    int cap = d->cap_free_events ? d->cap_free_events * 2 : 4;
    v = realloc(d->free_events, sizeof(*v) * (size_t)cap);
    if (v == NULL) {
      pthread_mutex_unlock(&d->lock);
      d->plugin->se.destroy_event(&d->sp, ev);
      return;
    }
    d->free_events = v;
    d->cap_free_events = cap;
  }
  d->free_events[d->num_free_events++] = ev;
  pthread_mutex_unlock(&d->lock);
}

void shim_device_copy(struct tfocl_device *d, enum tfocl_stream_role role,
                      void *dst, const void *src, uint64_t size,
                      TF_Status *status)
{
  const SP_StreamExecutor *se = &d->plugin->se;
  SP_Stream stream = d->streams[role];
  SP_DeviceMemoryBase dev_dst = {.struct_size =
                                     SP_DEVICE_MEMORY_BASE_STRUCT_SIZE,
                                 .opaque = dst,
                                 .size = size};
  SP_DeviceMemoryBase dev_src = {.struct_size =
                                     SP_DEVICE_MEMORY_BASE_STRUCT_SIZE,
                                 .opaque = (void *)src,
                                 .size = size};
  SP_Event ev;

  /* The copy must see everything already queued on the compute stream. */
  shim_set_ok(status);
  se->create_stream_dependency(&d->sp, stream,
                               d->streams[TFOCL_STREAM_COMPUTE], status);
  if (!shim_ok(status))
    return;
  switch (role) {
  case TFOCL_STREAM_HOST_TO_DEVICE:
    se->memcpy_htod(&d->sp, stream, &dev_dst, src, size, status);
    break;
  case TFOCL_STREAM_DEVICE_TO_HOST:
    se->memcpy_dtoh(&d->sp, stream, dst, &dev_src, size, status);
    break;
  case TFOCL_STREAM_DEVICE_TO_DEVICE:
    if (se->memcpy_dtod == NULL) {
      shim_set_status(status, TF_UNIMPLEMENTED,
                      "'memcpy_dtod' field in SP_StreamExecutor is not set: "
                      "device to device copies are not supported");
      return;
    }
    se->memcpy_dtod(&d->sp, stream, &dev_dst, &dev_src, size, status);
    break;
  case TFOCL_STREAM_COMPUTE:
  case TFOCL_STREAM_ROLE_COUNT:
    shim_set_status(status, TF_INTERNAL, "copy on the wrong stream");
    return;
  }
  if (!shim_ok(status))
    return;
  ev = event_get(d, status);
  if (ev != NULL) {
    se->record_event(&d->sp, stream, ev, status);
    if (shim_ok(status))
      se->block_host_for_event(&d->sp, ev, status);
    event_put(d, ev);
  }
  if (!shim_ok(status)) {
    /* The copy is enqueued and may still read or write the caller's host
     * memory: whatever failed, do not return before the stream is done. */
    TF_Status *drain = TF_NewStatus();
    se->block_host_until_done(&d->sp, stream, drain);
    TF_DeleteStatus(drain);
  }
}
