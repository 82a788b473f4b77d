/* Concurrency: TFOCL_THREADS (8) threads, each with its own device handle
 * and so its own 4 streams (compute, host-to-device, device-to-host,
 * device-to-device), each running TFOCL_CONC_OPS (10,000) mixed ops: kernels
 * (MatMul, AddV2, Relu through the op runner on the compute stream),
 * host-to-device, device-to-host and device-to-device copies on their own
 * streams ordered by events, and host callbacks. Each thread's sequence is
 * deterministic; the final values, the bytes every callback saw and the
 * callback count must be bit-identical to the same sequences run serially.
 * Run also under ThreadSanitizer (meson test --setup tsan). Then the GEMM
 * paths chained in one stream (gemm_paths_share_a_stream). */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rel.h"

#define N 16 /* 4x4 matrices */
#define MAX_THREADS 64

struct worker {
  int id;
  long ops;
  /* Results. */
  float final_a[N];
  uint64_t digest;        /* FNV-1a over every device-to-host copy */
  atomic_long callbacks;  /* host callbacks that ran */
  char error[512];
};

struct callback_arg {
  struct worker *w;
  const float *host; /* filled by the copy before the callback runs */
};

static void note_failure(struct worker *w, const char *what, TF_Status *st)
{
  if (w->error[0] == '\0')
    snprintf(w->error, sizeof(w->error), "thread %d: %s: %s", w->id, what,
             TF_Message(st));
}

static void on_copied(void *arg, TF_Status *st)
{
  struct callback_arg *a = arg;
  uint64_t h = a->w->digest ? a->w->digest : 1469598103934665603ull;
  const unsigned char *p = (const unsigned char *)a->host;
  for (size_t i = 0; i < N * sizeof(float); i++)
    h = (h ^ p[i]) * 1099511628211ull;
  a->w->digest = h;
  atomic_fetch_add(&a->w->callbacks, 1);
  TF_SetStatus(st, TF_OK, "");
}

static SP_DeviceMemoryBase mem_of(TF_Tensor *t)
{
  return (SP_DeviceMemoryBase){.struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE,
                               .opaque = TF_TensorData(t),
                               .size = TF_TensorByteSize(t)};
}

/* `waiter` waits for what is queued on `signaller` so far. */
static bool order(const SP_StreamExecutor *se, const SP_Device *sp,
                  SP_Stream signaller, SP_Stream waiter, TF_Status *st)
{
  SP_Event ev = NULL;
  se->create_event(sp, &ev, st);
  if (TF_GetCode(st) != TF_OK)
    return false;
  se->record_event(sp, signaller, ev, st);
  if (TF_GetCode(st) == TF_OK)
    se->wait_for_event(sp, waiter, ev, st);
  se->destroy_event(sp, ev);
  return TF_GetCode(st) == TF_OK;
}

static void *work(void *arg)
{
  struct worker *w = arg;
  TF_Status *st = TF_NewStatus();
  const SP_StreamExecutor *se = tfocl_plugin_stream_executor(rel_plugin);
  struct tfocl_device *dev = tfocl_device_open(rel_plugin, 0, st);
  if (dev == NULL) {
    note_failure(w, "device open", st);
    TF_DeleteStatus(st);
    return NULL;
  }
  const SP_Device *sp = tfocl_device_sp(dev);
  SP_Stream compute = tfocl_device_stream(dev, TFOCL_STREAM_COMPUTE);
  SP_Stream h2d = tfocl_device_stream(dev, TFOCL_STREAM_HOST_TO_DEVICE);
  SP_Stream d2h = tfocl_device_stream(dev, TFOCL_STREAM_DEVICE_TO_HOST);
  SP_Stream d2d = tfocl_device_stream(dev, TFOCL_STREAM_DEVICE_TO_DEVICE);
  const int64_t dims[] = {4, 4};

  float init[N], wv[N];
  for (int i = 0; i < N; i++) {
    init[i] = (float)((i * 7 + w->id * 3) % 11) * 0.25f - 1.0f;
    wv[i] = (float)((i * 5 + w->id) % 7) * 0.05f - 0.15f;
  }
  TF_Tensor *ha = rel_host_f32(dims, 2, init, N);
  TF_Tensor *hw = rel_host_f32(dims, 2, wv, N);
  TF_Tensor *a = tfocl_tensor_to_device(dev, ha, st);
  TF_Tensor *wt = a ? tfocl_tensor_to_device(dev, hw, st) : NULL;
  TF_Tensor *b = wt ? tfocl_tensor_alloc_device(dev, TF_FLOAT, dims, 2, st) : NULL;
  TF_Tensor *c = b ? tfocl_tensor_alloc_device(dev, TF_FLOAT, dims, 2, st) : NULL;
  TF_DeleteTensor(ha);
  TF_DeleteTensor(hw);
  TF_DataType f2[] = {TF_FLOAT, TF_FLOAT}, f1[] = {TF_FLOAT};
  struct tfocl_op *matmul = NULL, *add = NULL, *relu = NULL;
  if (c != NULL)
    matmul = tfocl_op_create(dev, "MatMul", NULL, 0, f2, 2, st);
  if (matmul != NULL)
    add = tfocl_op_create(dev, "AddV2", NULL, 0, f2, 2, st);
  if (add != NULL)
    relu = tfocl_op_create(dev, "Relu", NULL, 0, f1, 1, st);
  if (relu == NULL) {
    note_failure(w, "setup", st);
    goto out;
  }
  /* b starts as a copy of a. */
  SP_DeviceMemoryBase mb = mem_of(b), ma = mem_of(a), mc = mem_of(c);
  se->memcpy_dtod(sp, compute, &mb, &ma, N * sizeof(float), st);
  float host_in[N], host_out[N];
  struct callback_arg cb = {w, host_out};

  for (long i = 0; i < w->ops && TF_GetCode(st) == TF_OK; i++) {
    TF_Tensor *out = NULL;
    switch (i % 6) {
    case 0: /* a = MatMul(a, w) */
      tfocl_op_compute(matmul, (TF_Tensor *[]){a, wt}, 2, &out, 1, st);
      break;
    case 1: /* a = AddV2(a, b) */
      tfocl_op_compute(add, (TF_Tensor *[]){a, b}, 2, &out, 1, st);
      break;
    case 2: /* a = Relu(a) */
      tfocl_op_compute(relu, (TF_Tensor *[]){a}, 1, &out, 1, st);
      break;
    case 3: /* c = a on the d2d stream */
      if (order(se, sp, compute, d2d, st))
        se->memcpy_dtod(sp, d2d, &mc, &ma, N * sizeof(float), st);
      if (TF_GetCode(st) == TF_OK)
        order(se, sp, d2d, compute, st);
      break;
    case 4: /* b = fresh host values on the h2d stream */
      for (int k = 0; k < N; k++)
        host_in[k] = (float)((k + i + w->id) % 13) * 0.01f - 0.06f;
      if (order(se, sp, compute, h2d, st))
        se->memcpy_htod(sp, h2d, &mb, host_in, sizeof(host_in), st);
      /* host_in is reused next time: wait for the copy. */
      if (TF_GetCode(st) == TF_OK)
        se->block_host_until_done(sp, h2d, st);
      if (TF_GetCode(st) == TF_OK)
        order(se, sp, h2d, compute, st);
      break;
    default: /* host_out = c on the d2h stream, digested by a callback */
      if (order(se, sp, compute, d2h, st))
        se->memcpy_dtoh(sp, d2h, host_out, &mc, sizeof(host_out), st);
      if (TF_GetCode(st) == TF_OK &&
          !se->host_callback(sp, d2h, on_copied, &cb))
        TF_SetStatus(st, TF_INTERNAL, "host_callback refused");
      if (TF_GetCode(st) == TF_OK)
        se->block_host_until_done(sp, d2h, st);
      break;
    }
    if (out != NULL) {
      if (TF_GetCode(st) == TF_OK) {
        TF_DeleteTensor(a);
        a = out;
        ma = mem_of(a);
      } else {
        TF_DeleteTensor(out);
      }
    }
  }
  if (TF_GetCode(st) != TF_OK) {
    note_failure(w, "op", st);
    goto out;
  }
  TF_Tensor *h = tfocl_tensor_to_host(a, st);
  if (h == NULL) {
    note_failure(w, "read back", st);
    goto out;
  }
  memcpy(w->final_a, TF_TensorData(h), sizeof(w->final_a));
  TF_DeleteTensor(h);
out:
  tfocl_op_destroy(matmul);
  tfocl_op_destroy(add);
  tfocl_op_destroy(relu);
  TF_DeleteTensor(a);
  TF_DeleteTensor(wt);
  TF_DeleteTensor(b);
  TF_DeleteTensor(c);
  tfocl_device_close(dev);
  TF_DeleteStatus(st);
  return NULL;
}

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

START_TEST(threads_match_serial)
{
  int threads = (int)rel_env_long("TFOCL_THREADS", 8);
  long ops = rel_env_long("TFOCL_CONC_OPS", 10000);
  if (threads > MAX_THREADS)
    threads = MAX_THREADS;
  static struct worker par[MAX_THREADS], ser[MAX_THREADS];
  pthread_t tid[MAX_THREADS];

  double t0 = now();
  for (int i = 0; i < threads; i++) {
    par[i] = (struct worker){.id = i, .ops = ops};
    ck_assert_int_eq(pthread_create(&tid[i], NULL, work, &par[i]), 0);
  }
  for (int i = 0; i < threads; i++)
    pthread_join(tid[i], NULL);
  double t1 = now();
  for (int i = 0; i < threads; i++) {
    ser[i] = (struct worker){.id = i, .ops = ops};
    work(&ser[i]);
  }
  double t2 = now();
  printf("concurrency: %d threads x 4 streams x %ld ops: parallel %.1f s, "
         "serial %.1f s\n", threads, ops, t1 - t0, t2 - t1);
  fflush(stdout);

  for (int i = 0; i < threads; i++) {
    ck_assert_msg(par[i].error[0] == '\0', "%s", par[i].error);
    ck_assert_msg(ser[i].error[0] == '\0', "%s", ser[i].error);
    ck_assert_int_eq(atomic_load(&par[i].callbacks), ops / 6 + (ops % 6 > 5));
    ck_assert_int_eq(atomic_load(&par[i].callbacks),
                     atomic_load(&ser[i].callbacks));
    ck_assert_msg(par[i].digest == ser[i].digest,
                  "thread %d: copies differ from the serial run", i);
    ck_assert_msg(memcmp(par[i].final_a, ser[i].final_a,
                         sizeof(par[i].final_a)) == 0,
                  "thread %d: result differs from the serial run", i);
  }
}
END_TEST

/* The GEMM paths in one stream: products forced onto our kernel, the host
 * BLAS (CPU devices with native kernels) and CLBlast (where it loads; each
 * falls back to our kernel elsewhere) chained back to back, each reading
 * the one before it and an element-wise op's output, with every input
 * deleted as soon as its consumer is enqueued, so the allocator hands its
 * memory to the next outputs while the queue is still working on it. One
 * read at the end; a path that ran before its producer, or wrote after its
 * consumer read, leaves the chain far from the float64 reference. */
#define CHAIN_M 96
#define CHAIN_K 64
#define CHAIN_STEPS 18

START_TEST(gemm_paths_share_a_stream)
{
  static const char *const paths[] = {"own", "blas", "clblast"};
  TF_Status *st = TF_NewStatus();
  const int64_t xdims[] = {CHAIN_M, CHAIN_K}, wdims[] = {CHAIN_K, CHAIN_K};
  static float xv[CHAIN_M * CHAIN_K], wv[CHAIN_K * CHAIN_K];
  static double xr[CHAIN_M * CHAIN_K], yr[CHAIN_M * CHAIN_K];
  for (int i = 0; i < CHAIN_M * CHAIN_K; i++)
    xv[i] = (float)((i * 37) % 17) * 0.125f - 1.0f;
  /* Near an orthogonal map, so that 18 products neither vanish nor grow. */
  for (int r = 0; r < CHAIN_K; r++)
    for (int c = 0; c < CHAIN_K; c++)
      wv[r * CHAIN_K + c] =
          (r == (c * 5 + 3) % CHAIN_K ? 0.5f : 0.0f) +
          (float)((r * 11 + c * 7) % 9 - 4) * 0.01f;
  for (int i = 0; i < CHAIN_M * CHAIN_K; i++)
    xr[i] = xv[i];

  TF_DataType f2[] = {TF_FLOAT, TF_FLOAT};
  struct tfocl_op *matmul[3] = {NULL}, *add = NULL;
  for (int p = 0; p < 3; p++) {
    struct tfocl_attr attr = TFOCL_ATTR_S("_tfocl_gemm", paths[p]);
    matmul[p] = tfocl_op_create(rel_device, "MatMul", &attr, 1, f2, 2, st);
    rel_assert_ok(st);
  }
  add = tfocl_op_create(rel_device, "AddV2", NULL, 0, f2, 2, st);
  rel_assert_ok(st);
  TF_Tensor *hx = rel_host_f32(xdims, 2, xv, CHAIN_M * CHAIN_K);
  TF_Tensor *hw = rel_host_f32(wdims, 2, wv, CHAIN_K * CHAIN_K);
  TF_Tensor *x = tfocl_tensor_to_device(rel_device, hx, st);
  rel_assert_ok(st);
  TF_Tensor *w = tfocl_tensor_to_device(rel_device, hw, st);
  rel_assert_ok(st);
  TF_DeleteTensor(hx);
  TF_DeleteTensor(hw);

  for (int s = 0; s < CHAIN_STEPS; s++) {
    /* x = MatMul_path(x, w) + x, the path changing every step and the
     * order of paths changing every round. */
    int path = (s + s / 3) % 3;
    TF_Tensor *y = NULL, *sum = NULL;
    tfocl_op_compute(matmul[path], (TF_Tensor *[]){x, w}, 2, &y, 1, st);
    rel_assert_ok(st);
    tfocl_op_compute(add, (TF_Tensor *[]){y, x}, 2, &sum, 1, st);
    rel_assert_ok(st);
    TF_DeleteTensor(y);
    TF_DeleteTensor(x);
    x = sum;
    for (int r = 0; r < CHAIN_M; r++)
      for (int c = 0; c < CHAIN_K; c++) {
        double acc = 0.0;
        for (int t = 0; t < CHAIN_K; t++)
          acc += xr[r * CHAIN_K + t] * (double)wv[t * CHAIN_K + c];
        yr[r * CHAIN_K + c] = acc + xr[r * CHAIN_K + c];
      }
    memcpy(xr, yr, sizeof(xr));
  }
  TF_Tensor *h = tfocl_tensor_to_host(x, st);
  rel_assert_ok(st);
  const float *got = TF_TensorData(h);
  double err = 0.0, norm = 0.0;
  for (int i = 0; i < CHAIN_M * CHAIN_K; i++) {
    err = fmax(err, fabs(got[i] - xr[i]));
    norm = fmax(norm, fabs(xr[i]));
  }
  ck_assert_msg(norm > 1.0, "the chain vanished (max %g): no test", norm);
  ck_assert_msg(err <= 1e-4 * norm,
                "the mixed-path chain is %g from float64 (max value %g)", err,
                norm);
  TF_DeleteTensor(h);
  TF_DeleteTensor(x);
  TF_DeleteTensor(w);
  for (int p = 0; p < 3; p++)
    tfocl_op_destroy(matmul[p]);
  tfocl_op_destroy(add);
  TF_DeleteStatus(st);
}
END_TEST

int main(void)
{
  if (!rel_setup())
    return 77;
  Suite *s = suite_create("concurrency");
  TCase *tc = tcase_create("concurrency");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, threads_match_serial);
  tcase_add_test(tc, gemm_paths_share_a_stream);
  suite_add_tcase(s, tc);
  int rc = rel_run(s);
  rel_teardown();
  return rc;
}
