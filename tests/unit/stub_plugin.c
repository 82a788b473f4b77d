/* A PluggableDevice plugin for the host shim's tests: every table filled,
 * device memory is malloc'ed host memory (so kernels really run), and each
 * build with -DBREAK_<RULE> breaks exactly one rule the loader checks.
 *
 * TFOCL_STUB_LOG=<file>: one line per lifecycle call, appended, so a test
 * can check the order in which the host calls the plugin.
 * TFOCL_STUB_LOG_MEM=1: also allocate/deallocate lines. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/kernels.h"

#define STUB_EXPORT __attribute__((visibility("default")))

/* Variants built without SE_InitPlugin or TF_InitKernel leave some of the
 * callbacks below unreferenced; that is the point of those variants. */
#pragma GCC diagnostic ignored "-Wunused-function"

#ifndef STUB_NAME
#define STUB_NAME "STUB"
#endif

static const SP_Platform *init_platform; /* the host's temporary */

static void stub_log(const char *what)
{
  const char *path = getenv("TFOCL_STUB_LOG");
  FILE *f;
  if (path == NULL)
    return;
  f = fopen(path, "a");
  if (f == NULL)
    return;
  fprintf(f, "%s\n", what);
  fclose(f);
}

static void stub_log_mem(const char *what)
{
  if (getenv("TFOCL_STUB_LOG_MEM") != NULL)
    stub_log(what);
}

static void check_platform(const SP_Platform *p)
{
  /* Later calls must get the host's copy, never the init-time struct. */
  if (p == init_platform)
    stub_log("BAD_PLATFORM_POINTER");
}

/* ---- stream executor ---------------------------------------------------- */

/* 256-byte aligned, as TensorFlow's BFC allocator demands of a
 * sub-allocator; the MISALIGNED_* builds hand out an address 64 bytes past
 * such a start (and take it back). */
#define STUB_ALIGN 256u

static void *stub_alloc(uint64_t size, bool misaligned)
{
  char *p = aligned_alloc(STUB_ALIGN, (size + 2 * STUB_ALIGN - 1) /
                                          STUB_ALIGN * STUB_ALIGN);
  return p != NULL && misaligned ? p + 64 : p;
}

static void stub_free(void *p, bool misaligned)
{
  free(p != NULL && misaligned ? (char *)p - 64 : p);
}

#ifdef BREAK_MISALIGNED_ALLOCATE
#define MISALIGNED_DEVICE true
#else
#define MISALIGNED_DEVICE false
#endif
#ifdef BREAK_MISALIGNED_HOST_MEMORY
#define MISALIGNED_HOST true
#else
#define MISALIGNED_HOST false
#endif

static void se_allocate(const SP_Device *d, uint64_t size, int64_t space,
                        SP_DeviceMemoryBase *mem)
{
  (void)d;
  (void)space;
  stub_log_mem("allocate");
  mem->struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
  mem->opaque = stub_alloc(size, MISALIGNED_DEVICE);
  mem->size = size;
}

static void se_deallocate(const SP_Device *d, SP_DeviceMemoryBase *mem)
{
  (void)d;
  /* TensorFlow passes only opaque. */
  stub_log_mem(mem->size == 0 && mem->payload == 0 ? "deallocate"
                                                   : "BAD_DEALLOCATE");
  stub_free(mem->opaque, MISALIGNED_DEVICE);
}

static void *se_host_alloc(const SP_Device *d, uint64_t size)
{
  (void)d;
  stub_log_mem("host_memory_allocate");
  return stub_alloc(size, MISALIGNED_HOST);
}

static void se_host_free(const SP_Device *d, void *mem)
{
  (void)d;
  stub_log_mem("host_memory_deallocate");
  stub_free(mem, MISALIGNED_HOST);
}

static TF_Bool se_stats(const SP_Device *d, SP_AllocatorStats *s)
{
  (void)d;
  (void)s;
  return 0;
}

static TF_Bool se_memory_usage(const SP_Device *d, int64_t *free_b,
                               int64_t *total_b)
{
  (void)d;
#ifdef BREAK_MEMORY_USAGE_FALSE
  (void)free_b;
  (void)total_b;
  return 0;
#else
  *free_b = 512 << 20;
  *total_b = 1 << 30;
  return 1;
#endif
}

static void se_create_stream(const SP_Device *d, SP_Stream *s, TF_Status *st)
{
  (void)d;
  stub_log("create_stream");
#ifdef BREAK_CREATE_STREAM_FAILS
  static int n;
  if (++n == 2) {
    TF_SetStatus(st, TF_RESOURCE_EXHAUSTED, "stub: no more streams");
    return;
  }
#endif
  *s = malloc(1);
  TF_SetStatus(st, TF_OK, "");
}

static void se_destroy_stream(const SP_Device *d, SP_Stream s)
{
  (void)d;
  stub_log("destroy_stream");
  free(s);
}

static void se_dependency(const SP_Device *d, SP_Stream a, SP_Stream b,
                          TF_Status *st)
{
  (void)d;
  (void)a;
  (void)b;
  TF_SetStatus(st, TF_OK, "");
}

static void se_stream_status(const SP_Device *d, SP_Stream s, TF_Status *st)
{
  (void)d;
  (void)s;
  TF_SetStatus(st, TF_OK, "");
}

static void se_create_event(const SP_Device *d, SP_Event *e, TF_Status *st)
{
  (void)d;
  *e = malloc(1);
  TF_SetStatus(st, TF_OK, "");
}

static void se_destroy_event(const SP_Device *d, SP_Event e)
{
  (void)d;
  free(e);
}

static SE_EventStatus se_event_status(const SP_Device *d, SP_Event e)
{
  (void)d;
  (void)e;
  return SE_EVENT_COMPLETE;
}

static void se_record(const SP_Device *d, SP_Stream s, SP_Event e,
                      TF_Status *st)
{
  (void)d;
  (void)s;
  (void)e;
  TF_SetStatus(st, TF_OK, "");
}

static void se_wait(const SP_Device *const d, SP_Stream s, SP_Event e,
                    TF_Status *const st)
{
  (void)d;
  (void)s;
  (void)e;
  TF_SetStatus(st, TF_OK, "");
}

static void se_dtoh(const SP_Device *d, SP_Stream s, void *dst,
                    const SP_DeviceMemoryBase *src, uint64_t n, TF_Status *st)
{
  (void)d;
  (void)s;
  memcpy(dst, src->opaque, n);
  TF_SetStatus(st, TF_OK, "");
}

static void se_htod(const SP_Device *d, SP_Stream s, SP_DeviceMemoryBase *dst,
                    const void *src, uint64_t n, TF_Status *st)
{
  (void)d;
  (void)s;
  memcpy(dst->opaque, src, n);
  TF_SetStatus(st, TF_OK, "");
}

static void se_dtod(const SP_Device *d, SP_Stream s, SP_DeviceMemoryBase *dst,
                    const SP_DeviceMemoryBase *src, uint64_t n, TF_Status *st)
{
  (void)d;
  (void)s;
  memcpy(dst->opaque, src->opaque, n);
  TF_SetStatus(st, TF_OK, "");
}

static void se_sync_dtoh(const SP_Device *d, void *dst,
                         const SP_DeviceMemoryBase *src, uint64_t n,
                         TF_Status *st)
{
  se_dtoh(d, NULL, dst, src, n, st);
}

static void se_sync_htod(const SP_Device *d, SP_DeviceMemoryBase *dst,
                         const void *src, uint64_t n, TF_Status *st)
{
  se_htod(d, NULL, dst, src, n, st);
}

static void se_sync_dtod(const SP_Device *d, SP_DeviceMemoryBase *dst,
                         const SP_DeviceMemoryBase *src, uint64_t n,
                         TF_Status *st)
{
  se_dtod(d, NULL, dst, src, n, st);
}

static void se_block_event(const SP_Device *d, SP_Event e, TF_Status *st)
{
  (void)d;
  (void)e;
  TF_SetStatus(st, TF_OK, "");
}

static void se_block_stream(const SP_Device *d, SP_Stream s, TF_Status *st)
{
  (void)d;
  (void)s;
  TF_SetStatus(st, TF_OK, "");
}

static void se_sync_all(const SP_Device *d, TF_Status *st)
{
  (void)d;
  TF_SetStatus(st, TF_OK, "");
}

static void se_mem_zero(const SP_Device *d, SP_Stream s,
                        SP_DeviceMemoryBase *m, uint64_t n, TF_Status *st)
{
  (void)d;
  (void)s;
  memset(m->opaque, 0, n);
  TF_SetStatus(st, TF_OK, "");
}

static void se_memset(const SP_Device *d, SP_Stream s, SP_DeviceMemoryBase *m,
                      uint8_t pattern, uint64_t n, TF_Status *st)
{
  (void)d;
  (void)s;
  memset(m->opaque, pattern, n);
  TF_SetStatus(st, TF_OK, "");
}

static void se_memset32(const SP_Device *d, SP_Stream s,
                        SP_DeviceMemoryBase *m, uint32_t pattern, uint64_t n,
                        TF_Status *st)
{
  (void)d;
  (void)s;
  for (uint64_t i = 0; i < n / 4; i++)
    ((uint32_t *)m->opaque)[i] = pattern;
  TF_SetStatus(st, TF_OK, "");
}

static TF_Bool se_host_callback(const SP_Device *d, SP_Stream s,
                                SE_StatusCallbackFn fn, void *arg)
{
  TF_Status *st = TF_NewStatus();
  (void)d;
  (void)s;
  fn(arg, st);
  TF_DeleteStatus(st);
  return 1;
}

/* ---- platform ----------------------------------------------------------- */

static void get_device_count(const SP_Platform *p, int *count, TF_Status *st)
{
  check_platform(p);
  stub_log("get_device_count");
  *count = 1;
  TF_SetStatus(st, TF_OK, "");
}

static void create_device(const SP_Platform *p, SE_CreateDeviceParams *params,
                          TF_Status *st)
{
  check_platform(p);
  stub_log("create_device");
  params->device->ordinal = params->ordinal;
  params->device->hardware_name = "Stub Device";
  params->device->device_vendor = "tfocl tests";
  params->device->pci_bus_id = "0000:00:00.0";
#ifdef BREAK_DEVICE_STRUCT_SIZE
  params->device->struct_size = 0;
#endif
  TF_SetStatus(st, TF_OK, "");
}

static void destroy_device(const SP_Platform *p, SP_Device *d)
{
  (void)d;
  check_platform(p);
  stub_log("destroy_device");
}

static void create_device_fns(const SP_Platform *p,
                              SE_CreateDeviceFnsParams *params, TF_Status *st)
{
  stub_log("create_device_fns");
  (void)p;
  (void)params;
#ifdef BREAK_CREATE_DEVICE_FNS_FAILS
  (void)params;
  TF_SetStatus(st, TF_INTERNAL, "stub: create_device_fns failed");
  return;
#else
#ifdef BREAK_DEVICE_FNS_STRUCT_SIZE
  params->device_fns->struct_size = 0;
#endif
  TF_SetStatus(st, TF_OK, "");
#endif
}

static void destroy_device_fns(const SP_Platform *p, SP_DeviceFns *f)
{
  (void)f;
  check_platform(p);
  stub_log("destroy_device_fns");
}

static void create_stream_executor(const SP_Platform *p,
                                   SE_CreateStreamExecutorParams *params,
                                   TF_Status *st)
{
  SP_StreamExecutor *se = params->stream_executor;

  (void)p;
  stub_log("create_stream_executor");
#ifdef BREAK_CREATE_STREAM_EXECUTOR_FAILS
  TF_SetStatus(st, TF_UNAVAILABLE, "stub: create_stream_executor failed");
  return;
#endif
  *se = (SP_StreamExecutor){.struct_size = SP_STREAMEXECUTOR_STRUCT_SIZE};
  se->allocate = se_allocate;
  se->deallocate = se_deallocate;
  se->host_memory_allocate = se_host_alloc;
  se->host_memory_deallocate = se_host_free;
  se->unified_memory_allocate = NULL;
  se->unified_memory_deallocate = NULL;
  se->get_allocator_stats = se_stats;
  se->device_memory_usage = se_memory_usage;
  se->create_stream = se_create_stream;
  se->destroy_stream = se_destroy_stream;
  se->create_stream_dependency = se_dependency;
  se->get_stream_status = se_stream_status;
  se->create_event = se_create_event;
  se->destroy_event = se_destroy_event;
  se->get_event_status = se_event_status;
  se->record_event = se_record;
  se->wait_for_event = se_wait;
  se->memcpy_dtoh = se_dtoh;
  se->memcpy_htod = se_htod;
  se->memcpy_dtod = se_dtod;
  se->sync_memcpy_dtoh = se_sync_dtoh;
  se->sync_memcpy_htod = se_sync_htod;
  se->sync_memcpy_dtod = se_sync_dtod;
  se->block_host_for_event = se_block_event;
  se->block_host_until_done = se_block_stream;
  se->synchronize_all_activity = se_sync_all;
  se->mem_zero = se_mem_zero;
  se->memset = se_memset;
  se->memset32 = se_memset32;
  se->host_callback = se_host_callback;
#ifdef BREAK_SE_STRUCT_SIZE
  se->struct_size = 0;
#endif
#ifdef BREAK_NO_ALLOCATE
  se->allocate = NULL;
#endif
#ifdef BREAK_NO_MEMSET32
  se->memset32 = NULL;
#endif
#ifdef BREAK_NO_HOST_CALLBACK
  se->host_callback = NULL;
#endif
#ifdef BREAK_NO_BLOCK_HOST_FOR_EVENT
  se->block_host_for_event = NULL;
#endif
  TF_SetStatus(st, TF_OK, "");
}

static void destroy_stream_executor(const SP_Platform *p, SP_StreamExecutor *s)
{
  (void)s;
  check_platform(p);
  stub_log("destroy_stream_executor");
}

static void destroy_timer_fns(const SP_Platform *p, SP_TimerFns *t)
{
  (void)t;
  check_platform(p);
  stub_log("destroy_timer_fns");
}

static void destroy_platform(SP_Platform *p)
{
  (void)p;
  stub_log("destroy_platform");
}

static void destroy_platform_fns(SP_PlatformFns *f)
{
  (void)f;
  stub_log("destroy_platform_fns");
}

#ifndef NO_SE_INIT
STUB_EXPORT void SE_InitPlugin(SE_PlatformRegistrationParams *params,
                               TF_Status *status)
{
  SP_Platform *p = params->platform;
  SP_PlatformFns *f = params->platform_fns;

  stub_log("SE_InitPlugin");
  init_platform = p;
#ifdef BREAK_INIT_STATUS
  TF_SetStatus(status, TF_INTERNAL, "stub: SE_InitPlugin refused");
  return;
#endif
  p->struct_size = SP_PLATFORM_STRUCT_SIZE;
  p->name = STUB_NAME;
  p->type = "STUB";
  p->supports_unified_memory = 0;
  p->use_bfc_allocator = 0;
  p->force_memory_growth = 0;

  f->struct_size = SP_PLATFORM_FNS_STRUCT_SIZE;
  f->get_device_count = get_device_count;
  f->create_device = create_device;
  f->destroy_device = destroy_device;
  f->create_device_fns = create_device_fns;
  f->destroy_device_fns = destroy_device_fns;
  f->create_stream_executor = create_stream_executor;
  f->destroy_stream_executor = destroy_stream_executor;
  f->create_timer_fns = NULL;
  f->destroy_timer_fns = destroy_timer_fns;
  params->destroy_platform = destroy_platform;
  params->destroy_platform_fns = destroy_platform_fns;

#ifdef BREAK_PARAMS_STRUCT_SIZE
  params->struct_size = 0;
#endif
#ifdef BREAK_NO_DESTROY_PLATFORM
  params->destroy_platform = NULL;
#endif
#ifdef BREAK_NO_DESTROY_PLATFORM_FNS
  params->destroy_platform_fns = NULL;
#endif
#ifdef BREAK_PLATFORM_STRUCT_SIZE
  p->struct_size = 0;
#endif
#ifdef BREAK_NO_NAME
  p->name = NULL;
#endif
#ifdef BREAK_NO_TYPE
  p->type = NULL;
#endif
#ifdef BREAK_BAD_NAME
  p->name = "STUB2";
#endif
#ifdef BREAK_BAD_TYPE
  p->type = "stub";
#endif
#ifdef BREAK_UNIFIED_NO_ALLOC
  p->supports_unified_memory = 1;
#endif
#ifdef BREAK_PLATFORM_FNS_STRUCT_SIZE
  f->struct_size = 0;
#endif
#ifdef BREAK_NO_CREATE_DEVICE
  f->create_device = NULL;
#endif
#ifdef BREAK_NO_DESTROY_DEVICE
  f->destroy_device = NULL;
#endif
#ifdef BREAK_NO_CREATE_STREAM_EXECUTOR
  f->create_stream_executor = NULL;
#endif
#ifdef BREAK_NO_DESTROY_STREAM_EXECUTOR
  f->destroy_stream_executor = NULL;
#endif
#ifdef BREAK_NO_CREATE_DEVICE_FNS
  f->create_device_fns = NULL;
#endif
#ifdef BREAK_NO_DESTROY_DEVICE_FNS
  f->destroy_device_fns = NULL;
#endif
#ifdef BREAK_NO_GET_DEVICE_COUNT
  f->get_device_count = NULL;
#endif
#ifdef BREAK_NO_DESTROY_TIMER_FNS
  f->destroy_timer_fns = NULL;
#endif
  TF_SetStatus(status, TF_OK, "");
}
#endif

/* ---- kernels ------------------------------------------------------------ */

static void stub_add_compute(void *kernel, TF_OpKernelContext *ctx)
{
  TF_Status *st = TF_NewStatus();
  TF_Tensor *x = NULL, *y = NULL, *z = NULL;
  int64_t dims[8];
  int nd;

  (void)kernel;
  TF_GetInput(ctx, 0, &x, st);
  if (TF_GetCode(st) == TF_OK)
    TF_GetInput(ctx, 1, &y, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  nd = TF_NumDims(x);
  for (int i = 0; i < nd && i < 8; i++)
    dims[i] = TF_Dim(x, i);
  if (TF_TensorElementCount(x) != TF_TensorElementCount(y)) {
    TF_SetStatus(st, TF_INVALID_ARGUMENT, "StubAdd: shapes differ");
    goto out;
  }
  z = TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, nd, 0, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  for (int64_t i = 0; i < TF_TensorElementCount(x); i++)
    ((float *)TF_TensorData(z))[i] =
        ((float *)TF_TensorData(x))[i] + ((float *)TF_TensorData(y))[i];
out:
  if (TF_GetCode(st) != TF_OK)
    TF_OpKernelContext_Failure(ctx, st);
  TF_DeleteTensor(x);
  TF_DeleteTensor(y);
  TF_DeleteTensor(z);
  TF_DeleteStatus(st);
}

struct scale_state {
  float scale;
};

static void *stub_scale_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *st = TF_NewStatus();
  struct scale_state *s = calloc(1, sizeof(*s));
  TF_OpKernelConstruction_GetAttrFloat(ctx, "scale", &s->scale, st);
  if (TF_GetCode(st) != TF_OK)
    TF_OpKernelConstruction_Failure(ctx, st);
  TF_DeleteStatus(st);
  return s;
}

static void stub_scale_delete(void *kernel) { free(kernel); }

/* y = x * scale; x on the device, y in host memory (HostMemory("y")). */
static void stub_scale_compute(void *kernel, TF_OpKernelContext *ctx)
{
  struct scale_state *s = kernel;
  TF_Status *st = TF_NewStatus();
  TF_Tensor *x = NULL, *y = NULL;
  int64_t dims[8];
  int nd;

  TF_GetInput(ctx, 0, &x, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  if (!TF_IsHostMemoryOutput(ctx, 0, st) || TF_IsHostMemoryInput(ctx, 0, st)) {
    TF_SetStatus(st, TF_INTERNAL, "StubScale: memory types are wrong");
    goto out;
  }
  nd = TF_NumDims(x);
  for (int i = 0; i < nd && i < 8; i++)
    dims[i] = TF_Dim(x, i);
  y = TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, nd, 0, st);
  if (TF_GetCode(st) != TF_OK)
    goto out;
  for (int64_t i = 0; i < TF_TensorElementCount(x); i++)
    ((float *)TF_TensorData(y))[i] = ((float *)TF_TensorData(x))[i] * s->scale;
out:
  if (TF_GetCode(st) != TF_OK)
    TF_OpKernelContext_Failure(ctx, st);
  TF_DeleteTensor(x);
  TF_DeleteTensor(y);
  TF_DeleteStatus(st);
}

static void stub_fail_compute(void *kernel, TF_OpKernelContext *ctx)
{
  TF_Status *st = TF_NewStatus();
  (void)kernel;
  TF_SetStatus(st, TF_INVALID_ARGUMENT, "StubFail: failing on purpose");
  TF_OpKernelContext_Failure(ctx, st);
  TF_DeleteStatus(st);
}

static void stub_nothing_compute(void *kernel, TF_OpKernelContext *ctx)
{
  (void)kernel;
  (void)ctx;
}

static void *stub_ctor_fail_create(TF_OpKernelConstruction *ctx)
{
  TF_Status *st = TF_NewStatus();
  TF_SetStatus(st, TF_UNIMPLEMENTED, "StubCtorFail: refusing to construct");
  TF_OpKernelConstruction_Failure(ctx, st);
  TF_DeleteStatus(st);
  return NULL;
}

static void reg(const char *name, TF_KernelBuilder *b, TF_Status *st)
{
  TF_RegisterKernelBuilder(name, b, st);
  if (TF_GetCode(st) != TF_OK) {
    stub_log("REGISTER_FAILED");
    stub_log(TF_Message(st));
  }
}

#ifndef NO_KERNEL_INIT
STUB_EXPORT void TF_InitKernel(void)
{
  TF_Status *st = TF_NewStatus();
  TF_KernelBuilder *b;

  stub_log("TF_InitKernel");
  b = TF_NewKernelBuilder("StubAdd", "STUB", NULL, stub_add_compute, NULL);
  TF_KernelBuilder_TypeConstraint(b, "T", TF_FLOAT, st);
  reg("StubAdd_STUB_float", b, st);

  b = TF_NewKernelBuilder("StubScale", "STUB", stub_scale_create,
                          stub_scale_compute, stub_scale_delete);
  TF_KernelBuilder_TypeConstraint(b, "T", TF_FLOAT, st);
  TF_KernelBuilder_HostMemory(b, "y");
  reg("StubScale_STUB_float", b, st);

  b = TF_NewKernelBuilder("StubFail", "STUB", NULL, stub_fail_compute, NULL);
  reg("StubFail_STUB", b, st);

  b = TF_NewKernelBuilder("StubNoOutput", "STUB", NULL, stub_nothing_compute,
                          NULL);
  reg("StubNoOutput_STUB", b, st);

  b = TF_NewKernelBuilder("StubCtorFail", "STUB", stub_ctor_fail_create,
                          stub_nothing_compute, NULL);
  reg("StubCtorFail_STUB", b, st);
  TF_DeleteStatus(st);
}
#endif
