/* tfocl profiler: TF_InitProfiler and the recorder (see profiler.h).
 *
 * Recording appends (device, queue, event, kind, name) to one list under a
 * mutex, only while a profile is being taken. Collection waits for the
 * recorded commands, reads their CL_PROFILING_COMMAND_START/END, moves
 * them from the device's clock to host time (CLOCK_REALTIME, which
 * TensorFlow's own events use) by one calibration per device at collection
 * (a marker on the device's service queue between two host clock reads),
 * and writes an XSpace with protobuf-c (xplane.proto). Every command queue
 * of the plugin is created with CL_QUEUE_PROFILING_ENABLE, so a profile can
 * start at any time; drivers fill the timestamps whether anyone reads them
 * or not. */
#include "profiler.h"

#include <inttypes.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../ocl.h"
#include "tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h"
#include "xplane.pb-c.h"

_Atomic bool ocl_profiling;

#define NAME_MAX_LEN 64
/* Commands kept per profile; later ones are counted, not kept. */
#define MAX_RECORDS (1u << 20)

struct record {
  struct ocl_device *dev;
  cl_command_queue queue; /* not retained: only compared */
  cl_event event;         /* owned */
  enum ocl_activity kind;
  char name[NAME_MAX_LEN];
};

static struct {
  pthread_mutex_t lock;
  struct record *items;
  size_t count, capacity;
  uint64_t dropped;
} recorder = {.lock = PTHREAD_MUTEX_INITIALIZER};

void ocl_profiler_record(struct ocl_device *dev, cl_command_queue queue,
                         cl_event event, enum ocl_activity kind,
                         const char *name)
{
  bool kept = false;
  pthread_mutex_lock(&recorder.lock);
  if (recorder.count == recorder.capacity && recorder.count < MAX_RECORDS) {
    size_t capacity = recorder.capacity ? recorder.capacity * 2 : 4096;
    struct record *items =
        realloc(recorder.items, capacity * sizeof(*items));
    if (items) {
      recorder.items = items;
      recorder.capacity = capacity;
    }
  }
  if (recorder.count < recorder.capacity) {
    struct record *r = &recorder.items[recorder.count++];
    r->dev = dev;
    r->queue = queue;
    r->event = event;
    r->kind = kind;
    snprintf(r->name, sizeof(r->name), "%s", name ? name : "");
    kept = true;
  } else {
    recorder.dropped++;
  }
  pthread_mutex_unlock(&recorder.lock);
  if (!kept)
    clReleaseEvent(event);
}

/* Takes the recorded list (the caller frees it and releases the events). */
static struct record *take_records(size_t *count, uint64_t *dropped)
{
  pthread_mutex_lock(&recorder.lock);
  struct record *items = recorder.items;
  *count = recorder.count;
  *dropped = recorder.dropped;
  recorder.items = NULL;
  recorder.count = recorder.capacity = 0;
  recorder.dropped = 0;
  pthread_mutex_unlock(&recorder.lock);
  return items;
}

static void release_records(struct record *items, size_t count)
{
  for (size_t i = 0; i < count; i++)
    clReleaseEvent(items[i].event);
  free(items);
}

void ocl_profiler_teardown(void)
{
  size_t count;
  uint64_t dropped;
  atomic_store(&ocl_profiling, false);
  struct record *items = take_records(&count, &dropped);
  release_records(items, count);
}

/* ---- Clocks ------------------------------------------------------------- */

static int64_t realtime_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* host ns = device ns + offset: a marker's completion time read between
 * two host clock reads, taken as their midpoint (within the launch round
 * trip, ~10 us on PoCL). False if the device cannot say. */
static bool calibrate(struct ocl_device *dev, int64_t *offset)
{
  cl_event marker = NULL;
  cl_ulong end = 0;
  int64_t before = realtime_ns();
  if (clEnqueueMarkerWithWaitList(dev->service_queue, 0, NULL, &marker) !=
      CL_SUCCESS)
    return false;
  cl_int exec_status;
  bool ok = ocl_wait_event(dev, dev->service_queue, marker, &exec_status,
                           NULL) == CL_SUCCESS &&
            exec_status == CL_COMPLETE &&
            clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END,
                                    sizeof(end), &end, NULL) == CL_SUCCESS;
  int64_t after = realtime_ns();
  clReleaseEvent(marker);
  if (ok)
    *offset = before + (after - before) / 2 - (int64_t)end;
  return ok;
}

/* ---- The XSpace ---------------------------------------------------------- */

static const char *activity_name(enum ocl_activity kind)
{
  switch (kind) {
  case OCL_ACTIVITY_COPY_H2D: return "MemcpyH2D";
  case OCL_ACTIVITY_COPY_D2H: return "MemcpyD2H";
  case OCL_ACTIVITY_COPY_D2D: return "MemcpyD2D";
  case OCL_ACTIVITY_FILL: return "Memset";
  default: return "kernel";
  }
}

/* One device's plane under construction. */
struct plane_builder {
  struct ocl_device *dev;
  int64_t offset;
  cl_command_queue *queues; /* line i's queue */
  Tfocl__Xplane__XLine **lines;
  size_t num_lines;
  const char **names; /* metadata id i + 1 */
  size_t num_names;
};

static int64_t metadata_id(struct plane_builder *p, const char *name)
{
  for (size_t i = 0; i < p->num_names; i++)
    if (strcmp(p->names[i], name) == 0)
      return (int64_t)i + 1;
  p->names[p->num_names++] = name;
  return (int64_t)p->num_names;
}

static void free_space(Tfocl__Xplane__XSpace *space)
{
  for (size_t i = 0; i < space->n_planes; i++) {
    Tfocl__Xplane__XPlane *plane = space->planes[i];
    for (size_t l = 0; l < plane->n_lines; l++) {
      Tfocl__Xplane__XLine *line = plane->lines[l];
      for (size_t e = 0; e < line->n_events; e++)
        free(line->events[e]);
      free(line->events);
      free(line->name);
      free(line);
    }
    free(plane->lines);
    for (size_t m = 0; m < plane->n_event_metadata; m++) {
      free(plane->event_metadata[m]->value);
      free(plane->event_metadata[m]);
    }
    free(plane->event_metadata);
    free(plane->name);
    free(plane);
  }
  free(space->planes);
  for (size_t i = 0; i < space->n_warnings; i++)
    free(space->warnings[i]);
  free(space->warnings);
}

static char *dup_printf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static char *dup_printf(const char *fmt, ...)
{
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return strdup(buf);
}

/* Builds `space` from the records (false when out of memory). */
static bool build_space(Tfocl__Xplane__XSpace *space, struct record *items,
                        size_t count, uint64_t dropped)
{
  int num_devices = ocl_device_count();
  struct plane_builder *builders =
      calloc((size_t)(num_devices > 0 ? num_devices : 1), sizeof(*builders));
  size_t skipped = 0;
  bool ok = builders != NULL;

  for (size_t i = 0; ok && i < count; i++) {
    struct record *r = &items[i];
    struct plane_builder *p = &builders[r->dev->ordinal];
    cl_ulong start = 0, end = 0;
    cl_int exec_status;
    /* Not spinning (ocl_wait_event). Already submitted: the synchronisation
     * TensorFlow does before it stops a profile flushed every queue. */
    if (ocl_wait_event(r->dev, NULL, r->event, &exec_status, NULL) !=
            CL_SUCCESS ||
        exec_status != CL_COMPLETE ||
        clGetEventProfilingInfo(r->event, CL_PROFILING_COMMAND_START,
                                sizeof(start), &start, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(r->event, CL_PROFILING_COMMAND_END,
                                sizeof(end), &end, NULL) != CL_SUCCESS ||
        end < start) {
      skipped++;
      continue;
    }
    if (p->dev == NULL) {
      p->dev = r->dev;
      p->queues = calloc(64, sizeof(*p->queues));
      p->lines = calloc(64, sizeof(*p->lines));
      p->names = calloc(count, sizeof(*p->names));
      ok = p->queues && p->lines && p->names;
      if (!ok || !calibrate(r->dev, &p->offset))
        p->offset = 0;
      if (!ok)
        break;
    }
    size_t l = 0;
    while (l < p->num_lines && p->queues[l] != r->queue)
      l++;
    if (l == p->num_lines) {
      if (l == 64) { /* more queues than any TensorFlow device makes */
        skipped++;
        continue;
      }
      Tfocl__Xplane__XLine *line = calloc(1, sizeof(*line));
      ok = line != NULL;
      if (!ok)
        break;
      tfocl__xplane__xline__init(line);
      line->id = (int64_t)l;
      line->display_id = (int64_t)l;
      line->name = dup_printf("OpenCL queue %zu", l);
      line->events = calloc(count, sizeof(*line->events));
      line->timestamp_ns = INT64_MAX;
      ok = line->name && line->events;
      p->queues[l] = r->queue;
      p->lines[l] = line;
      p->num_lines++;
      if (!ok)
        break;
    }
    Tfocl__Xplane__XLine *line = p->lines[l];
    Tfocl__Xplane__XEvent *event = calloc(1, sizeof(*event));
    ok = event != NULL;
    if (!ok)
      break;
    tfocl__xplane__xevent__init(event);
    const char *name = r->kind == OCL_ACTIVITY_KERNEL && r->name[0]
                           ? r->name
                           : activity_name(r->kind);
    event->metadata_id = metadata_id(p, name);
    /* The start in host ns until the line's origin is known. */
    event->data_case = TFOCL__XPLANE__XEVENT__DATA_OFFSET_PS;
    event->offset_ps = (int64_t)start + p->offset;
    event->duration_ps = (int64_t)(end - start) * 1000;
    line->events[line->n_events++] = event;
    if (event->offset_ps < line->timestamp_ns)
      line->timestamp_ns = event->offset_ps;
  }

  size_t num_planes = 0;
  for (int d = 0; d < num_devices; d++)
    num_planes += builders && builders[d].dev != NULL;
  space->planes = calloc(num_planes ? num_planes : 1, sizeof(*space->planes));
  ok = ok && space->planes != NULL;
  for (int d = 0; ok && d < num_devices; d++) {
    struct plane_builder *p = &builders[d];
    if (p->dev == NULL)
      continue;
    Tfocl__Xplane__XPlane *plane = calloc(1, sizeof(*plane));
    ok = plane != NULL;
    if (!ok)
      break;
    tfocl__xplane__xplane__init(plane);
    space->planes[space->n_planes++] = plane;
    plane->id = d;
    /* A prefix TensorBoard's trace viewer shows as a device. */
    plane->name = dup_printf("/device:CUSTOM:%d", d);
    plane->lines = calloc(p->num_lines ? p->num_lines : 1,
                          sizeof(*plane->lines));
    plane->event_metadata =
        calloc(p->num_names ? p->num_names : 1,
               sizeof(*plane->event_metadata));
    ok = plane->name && plane->lines && plane->event_metadata;
    for (size_t l = 0; ok && l < p->num_lines; l++) {
      Tfocl__Xplane__XLine *line = p->lines[l];
      for (size_t e = 0; e < line->n_events; e++)
        line->events[e]->offset_ps =
            (line->events[e]->offset_ps - line->timestamp_ns) * 1000;
      plane->lines[plane->n_lines++] = line;
      p->lines[l] = NULL;
    }
    for (size_t m = 0; ok && m < p->num_names; m++) {
      Tfocl__Xplane__XPlane__EventMetadataEntry *entry =
          calloc(1, sizeof(*entry));
      Tfocl__Xplane__XEventMetadata *meta = calloc(1, sizeof(*meta));
      ok = entry && meta;
      if (!ok) {
        free(entry);
        free(meta);
        break;
      }
      tfocl__xplane__xplane__event_metadata_entry__init(entry);
      tfocl__xplane__xevent_metadata__init(meta);
      entry->key = meta->id = (int64_t)m + 1;
      /* The records' storage outlives the packing. */
      meta->name = (char *)p->names[m];
      entry->value = meta;
      plane->event_metadata[plane->n_event_metadata++] = entry;
    }
  }
  if (ok && (dropped || skipped)) {
    space->warnings = calloc(1, sizeof(*space->warnings));
    if (space->warnings) {
      space->warnings[0] =
          dup_printf("tfocl: %" PRIu64 " OpenCL commands not recorded "
                     "(over %u), %zu without timestamps",
                     dropped, MAX_RECORDS, skipped);
      space->n_warnings = space->warnings[0] != NULL;
    }
  }
  /* Lines a failure left in the builders. */
  for (int d = 0; builders && d < num_devices; d++) {
    for (size_t l = 0; l < builders[d].num_lines; l++) {
      Tfocl__Xplane__XLine *line = builders[d].lines[l];
      if (line == NULL)
        continue;
      for (size_t e = 0; e < line->n_events; e++)
        free(line->events[e]);
      free(line->events);
      free(line->name);
      free(line);
    }
    free(builders[d].queues);
    free(builders[d].lines);
    free(builders[d].names);
  }
  free(builders);
  return ok;
}

/* ---- TP_ProfilerFns ------------------------------------------------------ */

/* The profile collected at the last stop, serialized, until TensorFlow
 * has read it. */
static struct {
  pthread_mutex_t lock;
  uint8_t *bytes;
  size_t size;
} collected = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void profiler_start(const TP_Profiler *profiler, TF_Status *status)
{
  size_t count;
  uint64_t dropped;
  (void)profiler;
  /* What an earlier, uncollected profile left. */
  struct record *items = take_records(&count, &dropped);
  release_records(items, count);
  atomic_store(&ocl_profiling, true);
  ocl_set_ok(status);
}

static void profiler_stop(const TP_Profiler *profiler, TF_Status *status)
{
  (void)profiler;
  atomic_store(&ocl_profiling, false);
  ocl_set_ok(status);
}

static void profiler_collect(const TP_Profiler *profiler, uint8_t *buffer,
                             size_t *size_in_bytes, TF_Status *status)
{
  (void)profiler;
  ocl_set_ok(status);
  pthread_mutex_lock(&collected.lock);
  if (collected.bytes == NULL) {
    /* First call of this profile: build it from the records. */
    size_t count;
    uint64_t dropped;
    struct record *items = take_records(&count, &dropped);
    Tfocl__Xplane__XSpace space;
    tfocl__xplane__xspace__init(&space);
    bool ok = build_space(&space, items, count, dropped);
    if (ok) {
      collected.size = tfocl__xplane__xspace__get_packed_size(&space);
      collected.bytes = malloc(collected.size ? collected.size : 1);
      ok = collected.bytes != NULL;
      if (ok)
        tfocl__xplane__xspace__pack(&space, collected.bytes);
    }
    free_space(&space);
    release_records(items, count);
    if (!ok) {
      collected.size = 0;
      ocl_set_status(status, TF_RESOURCE_EXHAUSTED,
                     "out of host memory collecting the OPENCL profile");
      *size_in_bytes = 0;
      goto out;
    }
  }
  if (buffer == NULL) {
    *size_in_bytes = collected.size;
    goto out;
  }
  if (*size_in_bytes < collected.size) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "collect_data_xspace: a buffer of %zu bytes for %zu",
                   *size_in_bytes, collected.size);
    goto out;
  }
  memcpy(buffer, collected.bytes, collected.size);
  *size_in_bytes = collected.size;
  /* Read: a later call returns an empty profile. */
  free(collected.bytes);
  collected.bytes = NULL;
  collected.size = 0;
out:
  pthread_mutex_unlock(&collected.lock);
}

static void destroy_profiler(TP_Profiler *profiler) { (void)profiler; }

static void idle_start_stop(const TP_Profiler *profiler, TF_Status *status)
{
  (void)profiler;
  ocl_set_ok(status);
}

static void idle_collect(const TP_Profiler *profiler, uint8_t *buffer,
                         size_t *size_in_bytes, TF_Status *status)
{
  (void)profiler;
  (void)buffer;
  *size_in_bytes = 0;
  ocl_set_ok(status);
}

static void destroy_profiler_fns(TP_ProfilerFns *fns)
{
  (void)fns;
  pthread_mutex_lock(&collected.lock);
  free(collected.bytes);
  collected.bytes = NULL;
  collected.size = 0;
  pthread_mutex_unlock(&collected.lock);
}

OCL_EXPORT void TF_InitProfiler(TF_ProfilerRegistrationParams *params,
                                TF_Status *status)
{
  ocl_set_ok(status);
  if (params == NULL || params->profiler == NULL ||
      params->profiler_fns == NULL) {
    ocl_set_status(status, TF_INVALID_ARGUMENT,
                   "TF_InitProfiler: no registration parameters");
    return;
  }
  /* Written member by member: the core's structs may be older (smaller)
   * than ours, never read or written past their struct_size. */
  params->struct_size = TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE;
  params->major_version = TP_MAJOR;
  params->minor_version = TP_MINOR;
  params->patch_version = TP_PATCH;
  TP_Profiler profiler = {.struct_size = TP_PROFILER_STRUCT_SIZE,
                          .type = ocl_registered_device_type()};
  TP_ProfilerFns fns = {.struct_size = TP_PROFILER_FNS_STRUCT_SIZE,
                        .start = profiler_start,
                        .stop = profiler_stop,
                        .collect_data_xspace = profiler_collect};
  /* A second copy of tfocl (plugin.c) has no device: it records nothing,
   * and must not start or drain the first copy's recorder. */
  if (ocl_copy_refused()) {
    fns.start = idle_start_stop;
    fns.stop = idle_start_stop;
    fns.collect_data_xspace = idle_collect;
  }
  ocl_fill_struct(params->profiler, &profiler, TP_PROFILER_STRUCT_SIZE);
  ocl_fill_struct(params->profiler_fns, &fns, TP_PROFILER_FNS_STRUCT_SIZE);
  params->profiler->struct_size = TP_PROFILER_STRUCT_SIZE;
  params->profiler_fns->struct_size = TP_PROFILER_FNS_STRUCT_SIZE;
  params->destroy_profiler = destroy_profiler;
  params->destroy_profiler_fns = destroy_profiler_fns;
}
