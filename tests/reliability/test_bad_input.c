/* Bad input never crashes: every (op, dtype) the plugin registers for
 * OPENCL (or those of TFOCL_OPS_FILTER) takes the first passing case of its
 * reference and runs it with
 *   - every float input NaN, +-Inf, -0, huge and denormal values,
 *   - each input emptied (first dimension 0, or [0] for a scalar),
 *   - each input of a mismatched shape ([3,5,7], then a scalar),
 *   - each integer input (shapes, axes, indices) set to huge, negative
 *     and 2^40 values,
 * each of which must give OK or an error status (never a crash, never a
 * hang), leave the allocator's bytes in use where they were, and leave the
 * device working (the original case passes afterwards). Then the plugin's
 * own edges: addresses that resolve to no allocation, double free, use of
 * a destroyed stream. Run under ASan/UBSan and valgrind as well. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "rel.h"

#define MAX_PAIRS 4096

struct pair {
  char op[64];
  const char *label; /* the kernel's, "" for none: set as "_kernel" */
  TF_DataType dtype;
  int num_constraints;
  char constraint_attr[4][32];
  TF_DataType constraint_type[4];
};

static struct pair pairs[MAX_PAIRS];
static int num_pairs;
static long runs, failures_reported;

static void collect_pairs(void)
{
  int n = tfocl_kernel_count();
  for (int i = 0; i < n; i++) {
    struct tfocl_kernel_info info;
    if (!tfocl_kernel_get(i, &info) || strcmp(info.device_type, "OPENCL") != 0 ||
        !ref_op_selected(info.op_name) || ref_op_find(info.op_name) == NULL)
      continue;
    int expand = info.num_constraints > 0 ? info.constraints[0].num_types : 1;
    for (int t = 0; t < expand && num_pairs < MAX_PAIRS; t++) {
      struct pair *k = &pairs[num_pairs++];
      memset(k, 0, sizeof(*k));
      snprintf(k->op, sizeof(k->op), "%s", info.op_name);
      k->label = tfocl_kernel_label(i);
      const struct ref_op *op = ref_op_find(info.op_name);
      TF_DataType fixed = op->domain == REF_BOOL ? TF_BOOL : TF_FLOAT;
      k->dtype = info.num_constraints > 0 ? info.constraints[0].types[t] : fixed;
      for (int c = 0; c < info.num_constraints && c < 4; c++) {
        snprintf(k->constraint_attr[c], sizeof(k->constraint_attr[c]), "%s",
                 info.constraints[c].attr);
        k->constraint_type[c] = c == 0 ? k->dtype : info.constraints[c].types[0];
      }
      k->num_constraints = info.num_constraints < 4 ? info.num_constraints : 4;
    }
  }
}

static bool is_float(TF_DataType t)
{
  return t == TF_FLOAT || t == TF_HALF || t == TF_DOUBLE || t == TF_BFLOAT16;
}

static bool is_int(TF_DataType t)
{
  return t == TF_INT32 || t == TF_INT64;
}

/* Runs `c` with inputs[] as given; any status is fine, outputs are read
 * back (so a device-side failure surfaces) and freed. */
static TF_Code run_inputs(const struct ref_case *c, struct ref_tensor *inputs,
                          TF_Status *st)
{
  TF_Tensor *tf_inputs[REF_MAX_TENSORS] = {0}, *outputs[16] = {0};
  int num_outputs = 0;
  TF_Code code = TF_OK;
  for (int i = 0; i < c->num_inputs; i++) {
    tf_inputs[i] = ref_tensor_to_tf(&inputs[i], st);
    if (tf_inputs[i] == NULL) {
      code = TF_GetCode(st);
      goto out;
    }
  }
  tfocl_run_op(rel_device, c->op, c->attrs, c->num_attrs, tf_inputs,
               c->num_inputs, outputs, 16, &num_outputs, st);
  code = TF_GetCode(st);
  /* The shim's word for a shape TensorFlow would abort the process on (an
   * overflowing or negative dimension handed to TF_AllocateOutput): the
   * kernel must refuse it with an error of its own first. */
  ck_assert_msg(strstr(TF_Message(st), "TensorFlow aborts the process") == NULL,
                "%s: %s", c->op, TF_Message(st));
  for (int i = 0; i < num_outputs; i++) {
    if (code == TF_OK) {
      TF_Status *s2 = TF_NewStatus();
      TF_Tensor *h = tfocl_tensor_to_host(outputs[i], s2);
      TF_DeleteTensor(h);
      if (TF_GetCode(s2) != TF_OK)
        code = TF_GetCode(s2);
      TF_DeleteStatus(s2);
    }
    TF_DeleteTensor(outputs[i]);
  }
out:
  for (int i = 0; i < c->num_inputs; i++)
    TF_DeleteTensor(tf_inputs[i]);
  runs++;
  return code;
}

/* A copy of t with another shape, values cycled from t's (or `fill`). */
static void reshaped(struct ref_tensor *out, const struct ref_tensor *t,
                     const int64_t *dims, int rank)
{
  ck_assert(ref_tensor_alloc(out, t->dtype, dims, rank));
  for (int64_t i = 0; i < out->elements; i++)
    out->v[i] = t->elements > 0 ? t->v[i % t->elements] : 1.0;
}

static void copy_inputs(struct ref_tensor *dst, const struct ref_case *c)
{
  for (int i = 0; i < c->num_inputs; i++)
    reshaped(&dst[i], &c->inputs[i], c->inputs[i].dims, c->inputs[i].rank);
}

static void free_inputs(struct ref_tensor *t, int n)
{
  for (int i = 0; i < n; i++)
    ref_tensor_finish(&t[i]);
}

START_TEST(op_survives_bad_input)
{
  const struct pair *k = &pairs[_i];
  const struct ref_op *op = ref_op_find_typed(k->op, k->dtype);
  struct ref_cases cases = {0};
  op->cases(op, k->dtype, &cases);
  struct ref_case *c = NULL;
  for (int i = 0; i < cases.count && c == NULL; i++)
    if (cases.items[i].expect_code == TF_OK && cases.items[i].num_inputs > 0)
      c = &cases.items[i];
  if (c == NULL) {
    ref_cases_finish(&cases);
    return;
  }
  for (int a = 1; a < k->num_constraints; a++)
    if (ref_case_attr(c, k->constraint_attr[a]) == NULL)
      ref_case_attr_type(c, k->constraint_attr[a], k->constraint_type[a]);
  /* A labelled kernel (the host LogicalAnd) only serves nodes asking. */
  if (k->label[0] != '\0')
    ref_case_attr_string(c, "_kernel", k->label);

  TF_Status *st = TF_NewStatus();
  SP_AllocatorStats before, after;
  rel_allocator_stats(&before);
  struct ref_tensor in[REF_MAX_TENSORS];
  int n = c->num_inputs;

  /* NaN, infinities, signed zero, huge and denormal values. */
  static const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 3.0e38,
                                    -3.0e38, 1e-40, 65504.0, 1.0};
  copy_inputs(in, c);
  for (int i = 0; i < n; i++)
    if (is_float(in[i].dtype))
      for (int64_t e = 0; e < in[i].elements; e++)
        in[i].v[e] = specials[e % (sizeof(specials) / sizeof(specials[0]))];
  run_inputs(c, in, st);
  free_inputs(in, n);

  for (int which = 0; which < n; which++) {
    /* Empty. */
    copy_inputs(in, c);
    int64_t dims[8];
    int rank = in[which].rank > 0 ? in[which].rank : 1;
    for (int d = 0; d < rank; d++)
      dims[d] = in[which].rank > 0 ? in[which].dims[d] : 1;
    dims[0] = 0;
    struct ref_tensor t;
    reshaped(&t, &in[which], dims, rank);
    ref_tensor_finish(&in[which]);
    in[which] = t;
    run_inputs(c, in, st);
    free_inputs(in, n);

    /* Mismatched shapes. */
    static const int64_t odd[] = {3, 5, 7};
    for (int variant = 0; variant < 2; variant++) {
      copy_inputs(in, c);
      reshaped(&t, &in[which], odd, variant == 0 ? 3 : 0);
      ref_tensor_finish(&in[which]);
      in[which] = t;
      run_inputs(c, in, st);
      free_inputs(in, n);
    }

    /* Huge and negative integers (shapes, axes, indices, multiples). */
    if (is_int(c->inputs[which].dtype)) {
      /* INT32_MIN / INT64_MIN with -1: the division that traps. */
      static const double huge[] = {2147483647.0, -1.0, 1099511627776.0,
                                    -2147483648.0, 1048576.0,
                                    -9223372036854775808.0};
      for (size_t h = 0; h < sizeof(huge) / sizeof(huge[0]); h++) {
        copy_inputs(in, c);
        for (int64_t e = 0; e < in[which].elements; e++)
          in[which].v[e] = huge[(h + (size_t)e) % (sizeof(huge) / sizeof(huge[0]))];
        run_inputs(c, in, st);
        free_inputs(in, n);
      }
    }
  }

  tfocl_device_synchronize(rel_device, st);
  rel_allocator_stats(&after);
  ck_assert_msg(after.bytes_in_use == before.bytes_in_use,
                "%s [%s]: %lld bytes in use after the bad inputs, %lld before",
                k->op, tfocl_type_name(k->dtype),
                (long long)after.bytes_in_use, (long long)before.bytes_in_use);

  /* The device still works: the original case passes. */
  struct ref_result r;
  ref_run_case(rel_device, op, c, &r);
  ck_assert_msg(r.passed, "%s [%s] after bad input: %s", k->op,
                tfocl_type_name(k->dtype), r.message);
  ref_cases_finish(&cases);
  TF_DeleteStatus(st);
}
END_TEST

static SP_DeviceMemoryBase mem(void *p, uint64_t size)
{
  return (SP_DeviceMemoryBase){.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE,
                               .opaque = p, .size = size};
}

START_TEST(unresolved_addresses_are_errors)
{
  const SP_StreamExecutor *se = tfocl_plugin_stream_executor(rel_plugin);
  const SP_Device *sp = tfocl_device_sp(rel_device);
  SP_Stream s = tfocl_device_stream(rel_device, TFOCL_STREAM_COMPUTE);
  TF_Status *st = TF_NewStatus();
  char host[64] = {0};

  SP_DeviceMemoryBase real = mem(NULL, 0);
  se->allocate(sp, 64, 0, &real);
  ck_assert_ptr_nonnull(real.opaque);
  /* Past the end of a real allocation; a stray address; an interior
   * address with a size that runs past the end. */
  SP_DeviceMemoryBase bad[] = {
      mem((char *)real.opaque + 4096 * 64, 16),
      mem((void *)(uintptr_t)0x1000, 16),
      mem((char *)real.opaque + 32, 64),
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    se->sync_memcpy_dtoh(sp, host, &bad[i], bad[i].size, st);
    ck_assert_int_ne(TF_GetCode(st), TF_OK);
    se->memcpy_dtoh(sp, s, host, &bad[i], bad[i].size, st);
    ck_assert_int_ne(TF_GetCode(st), TF_OK);
    se->memcpy_dtod(sp, s, &bad[i], &real, bad[i].size, st);
    ck_assert_int_ne(TF_GetCode(st), TF_OK);
    se->memset32(sp, s, &bad[i], 7, bad[i].size, st);
    ck_assert_int_ne(TF_GetCode(st), TF_OK);
    /* Not the start of an allocation: ignored. */
    se->deallocate(sp, &bad[i]);
  }
  se->block_host_until_done(sp, s, st);
  rel_assert_ok(st);

  /* Double free: the second is ignored. */
  se->deallocate(sp, &real);
  se->deallocate(sp, &real);
  void *pinned = se->host_memory_allocate(sp, 256);
  ck_assert_ptr_nonnull(pinned);
  se->host_memory_deallocate(sp, pinned);
  se->host_memory_deallocate(sp, pinned);
  se->host_memory_deallocate(sp, host);

  SP_AllocatorStats stats;
  rel_allocator_stats(&stats);
  ck_assert_int_eq(stats.bytes_in_use, 0);
  TF_DeleteStatus(st);
}
END_TEST

static void noop_callback(void *arg, TF_Status *st)
{
  (void)arg;
  TF_SetStatus(st, TF_OK, "");
}

START_TEST(destroyed_stream_is_an_error)
{
  const SP_StreamExecutor *se = tfocl_plugin_stream_executor(rel_plugin);
  const SP_Device *sp = tfocl_device_sp(rel_device);
  TF_Status *st = TF_NewStatus();
  SP_Stream s = NULL, live = tfocl_device_stream(rel_device, TFOCL_STREAM_COMPUTE);
  char host[16] = {0};

  se->create_stream(sp, &s, st);
  rel_assert_ok(st);
  SP_DeviceMemoryBase m = mem(NULL, 0);
  se->allocate(sp, 16, 0, &m);
  ck_assert_ptr_nonnull(m.opaque);
  SP_Event ev = NULL;
  se->create_event(sp, &ev, st);
  rel_assert_ok(st);
  se->destroy_stream(sp, s);

  se->memcpy_htod(sp, s, &m, host, 16, st);
  rel_assert_code(st, TF_INVALID_ARGUMENT);
  rel_assert_has(st, "not a live stream");
  se->memcpy_dtoh(sp, s, host, &m, 16, st);
  rel_assert_code(st, TF_INVALID_ARGUMENT);
  se->memcpy_dtod(sp, s, &m, &m, 16, st);
  rel_assert_code(st, TF_INVALID_ARGUMENT);
  se->memset(sp, s, &m, 1, 16, st);
  rel_assert_code(st, TF_INVALID_ARGUMENT);
  se->record_event(sp, s, ev, st);
  rel_assert_code(st, TF_INVALID_ARGUMENT);
  se->wait_for_event(sp, s, ev, st);
  rel_assert_code(st, TF_INVALID_ARGUMENT);
  se->block_host_until_done(sp, s, st);
  rel_assert_code(st, TF_INVALID_ARGUMENT);
  se->get_stream_status(sp, s, st);
  rel_assert_code(st, TF_INVALID_ARGUMENT);
  se->create_stream_dependency(sp, live, s, st);
  rel_assert_code(st, TF_INVALID_ARGUMENT);
  ck_assert(!se->host_callback(sp, s, noop_callback, NULL));
  se->destroy_stream(sp, s); /* a second destroy: ignored */

  /* Everything still works on a live stream. */
  se->memcpy_htod(sp, live, &m, host, 16, st);
  rel_assert_ok(st);
  se->block_host_until_done(sp, live, st);
  rel_assert_ok(st);
  se->destroy_event(sp, ev);
  se->deallocate(sp, &m);
  TF_DeleteStatus(st);
}
END_TEST

/* Input values that make an output shape TensorFlow cannot hold: each op
 * must refuse them with InvalidArgumentError, as TensorFlow's own kernels
 * do, never hand the shape to TF_AllocateOutput (where TensorFlow aborts
 * the process: tf.tile(np.ones((1, 1, 1)), [100000000] * 3) did). */
struct shape_case {
  const char *op;
  int num_inputs;
  TF_DataType dtypes[4];
  int ranks[4];
  int64_t dims[4][3];
  int64_t values[4][4]; /* the first elements; the rest are 1 */
};

#define BIG 4611686018427387904LL /* 2^62 */

static const struct shape_case shape_cases[] = {
    {"Tile", 2, {TF_FLOAT, TF_INT32}, {3, 1}, {{1, 1, 1}, {3}},
     {{1}, {100000000, 100000000, 100000000}}},
    {"Tile", 2, {TF_FLOAT, TF_INT64}, {1, 1}, {{2}, {1}}, {{1, 1}, {BIG}}},
    {"Tile", 2, {TF_FLOAT, TF_INT32}, {2, 1}, {{1, 1}, {2}}, {{1}, {-2, 3}}},
    {"Fill", 2, {TF_INT64, TF_FLOAT}, {1, 0}, {{2}, {0}}, {{BIG, 4}, {1}}},
    {"Fill", 2, {TF_INT32, TF_FLOAT}, {1, 0}, {{2}, {0}}, {{-3, 4}, {1}}},
    {"BroadcastTo", 2, {TF_FLOAT, TF_INT64}, {1, 1}, {{1}, {3}},
     {{1}, {BIG, BIG, 2}}},
    {"Pad", 2, {TF_FLOAT, TF_INT64}, {1, 2}, {{1}, {1, 2}}, {{1}, {BIG, BIG}}},
    {"OneHot", 4, {TF_INT64, TF_INT32, TF_FLOAT, TF_FLOAT}, {1, 0, 0, 0},
     {{4}, {0}, {0}, {0}}, {{0, 1, 2, 3}, {2147483647}, {1}, {0}}},
    {"OneHot", 4, {TF_INT64, TF_INT32, TF_FLOAT, TF_FLOAT}, {1, 0, 0, 0},
     {{4}, {0}, {0}, {0}}, {{0, 1, 2, 3}, {-1}, {1}, {0}}},
    {"ScatterNd", 3, {TF_INT64, TF_FLOAT, TF_INT64}, {2, 1, 1},
     {{1, 1}, {1}, {2}}, {{1}, {1}, {BIG, BIG}}},
    {"ScatterNd", 3, {TF_INT32, TF_FLOAT, TF_INT32}, {2, 1, 1},
     {{1, 1}, {1}, {2}}, {{1}, {1}, {-4, 3}}},
    {"Range", 3, {TF_INT64, TF_INT64, TF_INT64}, {0, 0, 0}, {{0}, {0}, {0}},
     {{-BIG}, {BIG}, {1}}},
    {"Range", 3, {TF_FLOAT, TF_FLOAT, TF_FLOAT}, {0, 0, 0}, {{0}, {0}, {0}},
     {{-BIG}, {BIG}, {1}}},
};

START_TEST(shape_valued_inputs_that_overflow)
{
  const struct shape_case *k = &shape_cases[_i];
  TF_Status *st = TF_NewStatus();
  TF_Tensor *in[4] = {0}, *out[4] = {0};
  int num_out = 0;
  for (int i = 0; i < k->num_inputs; i++) {
    TF_DataType t = k->dtypes[i];
    size_t elem = TF_DataTypeSize(t);
    int64_t len = 1;
    for (int d = 0; d < k->ranks[i]; d++)
      len *= k->dims[i][d];
    in[i] = TF_AllocateTensor(t, k->dims[i], k->ranks[i], elem * (size_t)len);
    ck_assert_ptr_nonnull(in[i]);
    for (int64_t e = 0; e < len; e++) {
      int64_t v = e < 4 && k->values[i][e] != 0 ? k->values[i][e] : 1;
      char *p = (char *)TF_TensorData(in[i]) + e * (int64_t)elem;
      if (t == TF_FLOAT)
        *(float *)p = (float)v;
      else if (t == TF_INT32)
        *(int32_t *)p = (int32_t)v;
      else
        *(int64_t *)p = v;
    }
  }
  tfocl_run_op(rel_device, k->op, NULL, 0, in, k->num_inputs, out, 4,
               &num_out, st);
  ck_assert_msg(TF_GetCode(st) == TF_INVALID_ARGUMENT ||
                    TF_GetCode(st) == TF_RESOURCE_EXHAUSTED,
                "%s (case %d): code %d: %s", k->op, _i, (int)TF_GetCode(st),
                TF_Message(st));
  ck_assert_msg(strstr(TF_Message(st), "TensorFlow aborts the process") == NULL,
                "%s (case %d): %s", k->op, _i, TF_Message(st));
  for (int i = 0; i < num_out; i++)
    TF_DeleteTensor(out[i]);
  for (int i = 0; i < k->num_inputs; i++)
    TF_DeleteTensor(in[i]);
  TF_DeleteStatus(st);
}
END_TEST

int main(void)
{
  if (!rel_setup())
    return 77;
  collect_pairs();
  Suite *s = suite_create("bad_input");
  TCase *tc = tcase_create("bad_input");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, unresolved_addresses_are_errors);
  tcase_add_test(tc, destroyed_stream_is_an_error);
  tcase_add_loop_test(tc, shape_valued_inputs_that_overflow, 0,
                      (int)(sizeof shape_cases / sizeof shape_cases[0]));
  tcase_add_loop_test(tc, op_survives_bad_input, 0, num_pairs);
  suite_add_tcase(s, tc);
  int rc = rel_run(s);
  printf("bad_input: %d (op, dtype) pairs, %ld runs\n", num_pairs, runs);
  (void)failures_reported;
  rel_teardown();
  return rc;
}
