/* tfocl plugin: the SP_StreamExecutor table, every member set. */
#include "ocl.h"

static void stream_executor_populate(SP_StreamExecutor *se) {
  *se = (SP_StreamExecutor){.struct_size = SP_STREAMEXECUTOR_STRUCT_SIZE};
  se->ext = NULL;
  se->allocate = ocl_allocate;
  se->deallocate = ocl_deallocate;
  se->host_memory_allocate = ocl_host_memory_allocate;
  se->host_memory_deallocate = ocl_host_memory_deallocate;
  se->unified_memory_allocate = NULL; /* supports_unified_memory = 0 */
  se->unified_memory_deallocate = NULL;
  se->get_allocator_stats = ocl_get_allocator_stats;
  se->device_memory_usage = ocl_device_memory_usage;
  se->create_stream = ocl_create_stream;
  se->destroy_stream = ocl_destroy_stream;
  se->create_stream_dependency = ocl_create_stream_dependency;
  se->get_stream_status = ocl_get_stream_status;
  se->create_event = ocl_create_event;
  se->destroy_event = ocl_destroy_event;
  se->get_event_status = ocl_get_event_status;
  se->record_event = ocl_record_event;
  se->wait_for_event = ocl_wait_for_event;
  se->create_timer = ocl_create_timer;
  se->destroy_timer = ocl_destroy_timer;
  se->start_timer = ocl_start_timer;
  se->stop_timer = ocl_stop_timer;
  se->memcpy_dtoh = ocl_memcpy_dtoh;
  se->memcpy_htod = ocl_memcpy_htod;
  se->memcpy_dtod = ocl_memcpy_dtod;
  se->sync_memcpy_dtoh = ocl_sync_memcpy_dtoh;
  se->sync_memcpy_htod = ocl_sync_memcpy_htod;
  se->sync_memcpy_dtod = ocl_sync_memcpy_dtod;
  se->block_host_for_event = ocl_block_host_for_event;
  se->block_host_until_done = ocl_block_host_until_done;
  se->synchronize_all_activity = ocl_synchronize_all_activity;
  se->mem_zero = ocl_mem_zero;
  se->memset = ocl_memset;
  se->memset32 = ocl_memset32;
  se->host_callback = ocl_host_callback;
  /* 2.22 and later; an older core's struct_size ends before it. */
  se->create_stream_with_options = ocl_create_stream_with_options;
}

void ocl_create_stream_executor(const SP_Platform *platform,
                                SE_CreateStreamExecutorParams *params,
                                TF_Status *status) {
  SP_StreamExecutor se;

  (void)platform;
  ocl_set_ok(status);
  stream_executor_populate(&se);
  ocl_fill_struct(params->stream_executor, &se, SP_STREAMEXECUTOR_STRUCT_SIZE);
}

void ocl_destroy_stream_executor(const SP_Platform *platform,
                                 SP_StreamExecutor *stream_executor) {
  (void)platform;
  (void)stream_executor; /* nothing allocated */
}
