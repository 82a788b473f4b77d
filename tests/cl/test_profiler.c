/* The profiler plugin (TF_InitProfiler, plugin/profiler/) through the host
 * shim: TensorFlow's registration, a profile of a few ops decoded back
 * (xplane.proto), and nothing recorded outside a profile. */
#include <stdlib.h>
#include <string.h>

#include "cl_fixture.h"
#include "xplane.pb-c.h"

/* AddV2 of two [n] device tensors, `times` times. */
static void run_adds(struct clt *t, int64_t n, int times)
{
  TF_Tensor *host = TF_AllocateTensor(TF_FLOAT, &n, 1, (size_t)n * 4);
  for (int64_t i = 0; i < n; i++)
    ((float *)TF_TensorData(host))[i] = (float)i;
  TF_Tensor *x = tfocl_tensor_to_device(t->device, host, t->st);
  clt_ok(t);
  const struct tfocl_attr attrs[] = {TFOCL_ATTR_T("T", TF_FLOAT)};
  for (int k = 0; k < times; k++) {
    TF_Tensor *in[2] = {x, x}, *out = NULL;
    int num_out = 0;
    tfocl_run_op(t->device, "AddV2", attrs, 1, in, 2, &out, 1, &num_out,
                 t->st);
    clt_ok(t);
    TF_DeleteTensor(out);
  }
  tfocl_device_synchronize(t->device, t->st);
  clt_ok(t);
  TF_DeleteTensor(x);
  TF_DeleteTensor(host);
}

static Tfocl__Xplane__XSpace *collect(struct clt *t)
{
  void *bytes = NULL;
  size_t size = 0;
  tfocl_profiler_collect(t->plugin, &bytes, &size, t->st);
  clt_ok(t);
  Tfocl__Xplane__XSpace *space =
      tfocl__xplane__xspace__unpack(NULL, size, bytes);
  ck_assert_msg(space != NULL, "the profile (%zu bytes) does not decode",
                size);
  free(bytes);
  return space;
}

START_TEST(profiler_registered)
{
  struct clt t = {0};
  clt_load(&t);
  ck_assert_str_eq(tfocl_plugin_profiler_device_type(t.plugin), "OPENCL");
  clt_close(&t);
}
END_TEST

START_TEST(profile_holds_kernel_events)
{
  struct clt t = {0};
  clt_open(&t, 0);
  /* Warm: the program is built before the profile. */
  run_adds(&t, 1 << 16, 1);
  tfocl_profiler_start(t.plugin, t.st);
  clt_ok(&t);
  run_adds(&t, 1 << 16, 5);
  tfocl_profiler_stop(t.plugin, t.st);
  clt_ok(&t);
  Tfocl__Xplane__XSpace *space = collect(&t);
  ck_assert_uint_eq(space->n_planes, 1);
  const Tfocl__Xplane__XPlane *plane = space->planes[0];
  ck_assert_str_eq(plane->name, "/device:CUSTOM:0");
  /* The kernel's name is the event's name. */
  int64_t add_id = 0;
  for (size_t m = 0; m < plane->n_event_metadata; m++)
    if (strcmp(plane->event_metadata[m]->value->name, "add_flat") == 0)
      add_id = plane->event_metadata[m]->key;
  ck_assert_int_gt(add_id, 0);
  int adds = 0, copies = 0;
  for (size_t l = 0; l < plane->n_lines; l++) {
    const Tfocl__Xplane__XLine *line = plane->lines[l];
    ck_assert_int_gt(line->timestamp_ns, 0);
    for (size_t e = 0; e < line->n_events; e++) {
      const Tfocl__Xplane__XEvent *ev = line->events[e];
      ck_assert_int_ge(ev->offset_ps, 0);
      /* A kernel over 64k floats: more than nothing, less than a second. */
      ck_assert_int_gt(ev->duration_ps, 0);
      ck_assert_int_lt(ev->duration_ps, (int64_t)1000000000000);
      adds += ev->metadata_id == add_id;
      copies += ev->metadata_id != add_id;
    }
  }
  ck_assert_int_eq(adds, 5);
  /* Host time: the profile happened within the last minute. */
  tfocl__xplane__xspace__free_unpacked(space, NULL);
  /* A second collection returns what is left: nothing. */
  space = collect(&t);
  ck_assert_uint_eq(space->n_planes, 0);
  tfocl__xplane__xspace__free_unpacked(space, NULL);
  (void)copies;
  clt_close(&t);
}
END_TEST

/* Copies in both directions show as MemcpyH2D and MemcpyD2H events. */
START_TEST(profile_holds_copy_events)
{
  struct clt t = {0};
  clt_open(&t, 0);
  int64_t n = 1024;
  TF_Tensor *host = TF_AllocateTensor(TF_FLOAT, &n, 1, (size_t)n * 4);
  memset(TF_TensorData(host), 0, (size_t)n * 4);
  tfocl_profiler_start(t.plugin, t.st);
  clt_ok(&t);
  TF_Tensor *dev = tfocl_tensor_to_device(t.device, host, t.st);
  clt_ok(&t);
  TF_Tensor *back = tfocl_tensor_to_host(dev, t.st);
  clt_ok(&t);
  tfocl_profiler_stop(t.plugin, t.st);
  clt_ok(&t);
  Tfocl__Xplane__XSpace *space = collect(&t);
  ck_assert_uint_eq(space->n_planes, 1);
  const Tfocl__Xplane__XPlane *plane = space->planes[0];
  int64_t h2d = 0, d2h = 0;
  for (size_t m = 0; m < plane->n_event_metadata; m++) {
    const char *name = plane->event_metadata[m]->value->name;
    if (strcmp(name, "MemcpyH2D") == 0)
      h2d = plane->event_metadata[m]->key;
    if (strcmp(name, "MemcpyD2H") == 0)
      d2h = plane->event_metadata[m]->key;
  }
  int seen_h2d = 0, seen_d2h = 0;
  for (size_t l = 0; l < plane->n_lines; l++)
    for (size_t e = 0; e < plane->lines[l]->n_events; e++) {
      const Tfocl__Xplane__XEvent *ev = plane->lines[l]->events[e];
      seen_h2d += h2d != 0 && ev->metadata_id == h2d;
      seen_d2h += d2h != 0 && ev->metadata_id == d2h;
      ck_assert_int_lt(ev->duration_ps, (int64_t)1000000000000);
    }
  ck_assert_int_ge(seen_h2d, 1);
  ck_assert_int_ge(seen_d2h, 1);
  tfocl__xplane__xspace__free_unpacked(space, NULL);
  TF_DeleteTensor(back);
  TF_DeleteTensor(dev);
  TF_DeleteTensor(host);
  clt_close(&t);
}
END_TEST

START_TEST(nothing_recorded_outside_a_profile)
{
  struct clt t = {0};
  clt_open(&t, 0);
  tfocl_profiler_start(t.plugin, t.st);
  clt_ok(&t);
  tfocl_profiler_stop(t.plugin, t.st);
  clt_ok(&t);
  run_adds(&t, 1024, 3);
  Tfocl__Xplane__XSpace *space = collect(&t);
  ck_assert_uint_eq(space->n_planes, 0);
  tfocl__xplane__xspace__free_unpacked(space, NULL);
  clt_close(&t);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("profiler");
  TCase *tc = tcase_create("profiler");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, profiler_registered);
  tcase_add_test(tc, profile_holds_kernel_events);
  tcase_add_test(tc, profile_holds_copy_events);
  tcase_add_test(tc, nothing_recorded_outside_a_profile);
  suite_add_tcase(s, tc);
  return clt_main(s);
}
