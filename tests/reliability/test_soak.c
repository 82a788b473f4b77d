/* Memory over time: TFOCL_SOAK_OPS (default 100,000) small ops in a loop
 * through the host shim (AddV2, Relu, MatMul, Sum, each created, run and
 * destroyed as a one-off op), after a warm-up. The process RSS may grow by
 * less than 16 MiB (allocator caches, PoCL's lazily made state) and the
 * device allocator's bytes in use must end where they started. Device OOM
 * returns RESOURCE_EXHAUSTED and the next op works. The figures are
 * printed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rel.h"

/* TFOCL_SOAK_RSS_BOUND_MIB (default 16; 0 = not checked, as under ASan,
 * whose quarantine keeps freed memory resident). */
#define RSS_BOUND_MIB 16

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct inputs {
  TF_Tensor *a, *b, *bias, *axis;
};

static TF_Tensor *to_device(TF_Tensor *host)
{
  TF_Status *st = TF_NewStatus();
  TF_Tensor *d = tfocl_tensor_to_device(rel_device, host, st);
  rel_assert_ok(st);
  TF_DeleteTensor(host);
  TF_DeleteStatus(st);
  return d;
}

static void make_inputs(struct inputs *in)
{
  static const float va[] = {0.5f, -1.25f, 2.0f, -0.75f, 1.5f};
  static const float vb[] = {-0.25f, 0.125f, 1.0f};
  static const int32_t axis[] = {1};
  const int64_t mat[] = {8, 8}, vec[] = {8};
  in->a = to_device(rel_host_f32(mat, 2, va, 5));
  in->b = to_device(rel_host_f32(mat, 2, vb, 3));
  in->bias = to_device(rel_host_f32(vec, 1, vb, 3));
  in->axis = rel_host_i32((int64_t[]){1}, 1, axis); /* host memory arg */
}

static void free_inputs(struct inputs *in)
{
  TF_DeleteTensor(in->a);
  TF_DeleteTensor(in->b);
  TF_DeleteTensor(in->bias);
  TF_DeleteTensor(in->axis);
}

/* Op i of the mix; every 1000th output is read back (a sync point). */
static void run_mix(const struct inputs *in, long count, TF_Status *st)
{
  for (long i = 0; i < count; i++) {
    TF_Tensor *out = NULL;
    switch (i % 4) {
    case 0:
      rel_run_op("AddV2", NULL, 0, (TF_Tensor *[]){in->a, in->bias}, 2, &out, st);
      break;
    case 1:
      rel_run_op("Relu", NULL, 0, (TF_Tensor *[]){in->a}, 1, &out, st);
      break;
    case 2:
      rel_run_op("MatMul", NULL, 0, (TF_Tensor *[]){in->a, in->b}, 2, &out, st);
      break;
    default:
      rel_run_op("Sum", NULL, 0, (TF_Tensor *[]){in->a, in->axis}, 2, &out, st);
      break;
    }
    ck_assert_msg(TF_GetCode(st) == TF_OK, "op %ld: %s", i, TF_Message(st));
    if (i % 1000 == 999) {
      TF_Tensor *h = tfocl_tensor_to_host(out, st);
      rel_assert_ok(st);
      TF_DeleteTensor(h);
    }
    TF_DeleteTensor(out);
  }
  tfocl_device_synchronize(rel_device, st);
  rel_assert_ok(st);
}

START_TEST(ops_loop_does_not_grow)
{
  long ops = rel_env_long("TFOCL_SOAK_OPS", 100000);
  long warmup = ops / 20 < 2000 ? ops / 20 : 2000;
  long rss_bound_mib = rel_env_long("TFOCL_SOAK_RSS_BOUND_MIB", RSS_BOUND_MIB);
  TF_Status *st = TF_NewStatus();
  SP_AllocatorStats s0, s1, s2;

  rel_allocator_stats(&s0);
  struct inputs in;
  make_inputs(&in);
  run_mix(&in, warmup, st);
  rel_allocator_stats(&s1);
  int64_t rss1 = rel_rss_bytes();
  double t0 = now();
  run_mix(&in, ops, st);
  double t1 = now();
  rel_allocator_stats(&s2);
  int64_t rss2 = rel_rss_bytes();
  free_inputs(&in);
  SP_AllocatorStats s3;
  rel_allocator_stats(&s3);

  printf("soak: %ld ops in %.1f s (%.1f us/op)\n", ops, t1 - t0,
         (t1 - t0) * 1e6 / (double)(ops > 0 ? ops : 1));
  printf("soak: RSS after warm-up %.2f MiB, after the loop %.2f MiB "
         "(growth %+.2f MiB, bound %ld MiB)\n",
         (double)rss1 / 1048576.0, (double)rss2 / 1048576.0,
         (double)(rss2 - rss1) / 1048576.0, rss_bound_mib);
  printf("soak: allocator bytes_in_use start %" PRId64 ", after warm-up %"
         PRId64 ", after the loop %" PRId64 ", inputs freed %" PRId64
         "; num_allocs %" PRId64 " -> %" PRId64 "; peak %" PRId64 "\n",
         s0.bytes_in_use, s1.bytes_in_use, s2.bytes_in_use, s3.bytes_in_use,
         s1.num_allocs, s2.num_allocs, s2.peak_bytes_in_use);
  fflush(stdout);

  ck_assert_int_eq(s2.bytes_in_use, s1.bytes_in_use);
  ck_assert_int_eq(s3.bytes_in_use, s0.bytes_in_use);
  if (rss_bound_mib > 0)
    ck_assert_msg(rss2 - rss1 < (int64_t)rss_bound_mib << 20,
                  "RSS grew by %" PRId64 " bytes", rss2 - rss1);
  TF_DeleteStatus(st);
}
END_TEST

START_TEST(device_oom_is_resource_exhausted)
{
  TF_Status *st = TF_NewStatus();
  SP_AllocatorStats before, after;
  rel_allocator_stats(&before);

  /* 2^40 floats (4 TiB): past any device's memory. */
  const int64_t huge[] = {(int64_t)1 << 20, (int64_t)1 << 20};
  TF_Tensor *t = tfocl_tensor_alloc_device(rel_device, TF_FLOAT, huge, 2, st);
  ck_assert_ptr_null(t);
  rel_assert_code(st, TF_RESOURCE_EXHAUSTED);
  rel_assert_has(st, "OOM");

  /* Elements fit in int64, bytes do not fit in size_t. */
  const int64_t wrap[] = {(int64_t)1 << 31, (int64_t)1 << 31};
  t = tfocl_tensor_alloc_device(rel_device, TF_DOUBLE, wrap, 2, st);
  ck_assert_ptr_null(t);
  rel_assert_code(st, TF_RESOURCE_EXHAUSTED);

  /* Dims whose product overflows int64: invalid, not an allocation. */
  const int64_t overflow[] = {(int64_t)1 << 40, (int64_t)1 << 40};
  t = tfocl_tensor_alloc_device(rel_device, TF_FLOAT, overflow, 2, st);
  ck_assert_ptr_null(t);
  rel_assert_code(st, TF_INVALID_ARGUMENT);
  ck_assert_ptr_null(TF_AllocateTensor(TF_FLOAT, overflow, 2, 16));
  /* A host length too small for its shape is refused (TF_NewTensor). */
  ck_assert_ptr_null(TF_AllocateTensor(TF_FLOAT, wrap, 2, 16));

  /* An op whose output is too large: Fill [2^20, 2^20]. */
  static const int32_t dims[] = {1 << 20, 1 << 20};
  TF_Tensor *shape = rel_host_i32((int64_t[]){2}, 1, dims);
  TF_Tensor *value = rel_host_f32(NULL, 0, (float[]){1.0f}, 1);
  rel_run_op("Fill", NULL, 0, (TF_Tensor *[]){shape, value}, 2, NULL, st);
  rel_assert_code(st, TF_RESOURCE_EXHAUSTED);
  TF_DeleteTensor(shape);
  TF_DeleteTensor(value);

  /* The next op works. */
  const int64_t d[] = {3};
  TF_Tensor *x = rel_host_f32(d, 1, (float[]){-1.0f, 2.0f, -3.0f}, 3);
  TF_Tensor *y = NULL;
  rel_run_op("Relu", NULL, 0, &x, 1, &y, st);
  rel_assert_ok(st);
  TF_Tensor *h = tfocl_tensor_to_host(y, st);
  rel_assert_ok(st);
  const float *v = TF_TensorData(h);
  ck_assert(v[0] == 0.0f && v[1] == 2.0f && v[2] == 0.0f);
  TF_DeleteTensor(h);
  TF_DeleteTensor(y);
  TF_DeleteTensor(x);
  rel_allocator_stats(&after);
  ck_assert_int_eq(after.bytes_in_use, before.bytes_in_use);
  TF_DeleteStatus(st);
}
END_TEST

int main(void)
{
  if (!rel_setup())
    return 77;
  Suite *s = suite_create("soak");
  TCase *tc = tcase_create("soak");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, device_oom_is_resource_exhausted);
  tcase_add_test(tc, ops_loop_does_not_grow);
  suite_add_tcase(s, tc);
  int rc = rel_run(s);
  rel_teardown();
  return rc;
}
