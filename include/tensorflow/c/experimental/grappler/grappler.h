/* C-clean rendition of tensorflow/c/experimental/grappler/grappler.h, the
 * graph optimizer plugin API of TensorFlow 2.18-2.21 (GO 0.0.1).
 *
 * TensorFlow looks TF_InitGraph up in a PluggableDevice library after
 * SE_InitPlugin and TF_InitKernel, and registers the optimizer the plugin
 * describes for one device type (a second registration for the same type
 * aborts the process). Grappler then calls optimize_func on every graph
 * whose devices include that type, after placement and after its own
 * passes: input and output are serialized GraphDefs.
 *
 * Conventions (TensorFlow's): TP_ structs are filled by the plugin, TF_ ones
 * by the core. The core stamps struct_size on the structs it allocates; the
 * plugin sets struct_size on what it fills. `ext` is reserved. Every offset
 * below is checked at compile time.
 *
 * The helpers below the structs live in libtensorflow_cc.so.2 inside
 * TensorFlow (both 2.19 and 2.21 wheels export them) and in libtfocl_host.so
 * in the host shim. Of TensorFlow's helpers only those for the item's node
 * lists are declared: the plugin needs no more. */
#ifndef TENSORFLOW_C_EXPERIMENTAL_GRAPPLER_GRAPPLER_H_
#define TENSORFLOW_C_EXPERIMENTAL_GRAPPLER_GRAPPLER_H_

#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_buffer.h"
#include "tensorflow/c/tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GO_MAJOR 0
#define GO_MINOR 0
#define GO_PATCH 1

typedef enum TF_TriState {
  TF_TriState_Default = 0,
  TF_TriState_Off,
  TF_TriState_On,
} TF_TriState;

/* A graph with its fetch nodes and the nodes to preserve; the core owns it
 * and only the functions below read it. */
typedef struct TF_GrapplerItem TF_GrapplerItem;

/* Which of TensorFlow's own optimizers to turn off (or on) for graphs on
 * the plugin's device type. Default leaves the user's configuration. */
typedef struct TP_OptimizerConfigs {
  size_t struct_size;
  void *ext;
  TF_TriState disable_model_pruning;
  TF_TriState implementation_selector;
  TF_TriState function_optimization;
  TF_TriState common_subgraph_elimination;
  TF_TriState arithmetic_optimization;
  TF_TriState debug_stripper;
  TF_TriState constant_folding;
  TF_TriState shape_optimization;
  TF_TriState auto_mixed_precision;
  TF_TriState auto_mixed_precision_onednn_bfloat16;
  TF_TriState auto_mixed_precision_mkl;
  TF_TriState pin_to_host_optimization;
  TF_TriState layout_optimizer;
  TF_TriState remapping;
  TF_TriState loop_optimization;
  TF_TriState dependency_optimization;
  TF_TriState auto_parallel;
  TF_TriState memory_optimization;
  TF_TriState scoped_allocator_optimization;
} TP_OptimizerConfigs;
#define TP_OPTIMIZER_CONFIGS_STRUCT_SIZE \
  TF_OFFSET_OF_END(TP_OptimizerConfigs, scoped_allocator_optimization)

/* optimize_func is required; create_func and destroy_func are optional
 * (destroy_func is required with create_func). TensorFlow makes a new
 * optimizer (create_func) for every graph it optimizes and destroys it
 * after. optimize_func reads the serialized GraphDef in `graph`, writes
 * the optimized one into `optimized_graph` (data, length and a
 * data_deallocator the core calls when done) and sets the status; a
 * failing status makes TensorFlow keep the graph it had. */
typedef struct TP_Optimizer {
  size_t struct_size;
  void *ext;
  /* An empty parameter list in TensorFlow's header: C++ for (void). */
  void *(*create_func)(void);
  void (*optimize_func)(void *optimizer, const TF_Buffer *graph,
                        const TF_GrapplerItem *item,
                        TF_Buffer *optimized_graph, TF_Status *status);
  void (*destroy_func)(void *optimizer);
} TP_Optimizer;
#define TP_OPTIMIZER_STRUCT_SIZE TF_OFFSET_OF_END(TP_Optimizer, destroy_func)

/* Filled by the core with struct_size, the GO_* version and the two
 * output tables; the plugin sets device_type (required) and fills
 * optimizer_configs and optimizer. */
typedef struct TP_OptimizerRegistrationParams {
  size_t struct_size;
  void *ext;
  int32_t major_version;
  int32_t minor_version;
  int32_t patch_version;
  const char *device_type;
  TP_OptimizerConfigs *optimizer_configs;
  TP_Optimizer *optimizer;
} TP_OptimizerRegistrationParams;
#define TP_OPTIMIZER_REGISTRATION_PARAMS_STRUCT_SIZE \
  TF_OFFSET_OF_END(TP_OptimizerRegistrationParams, optimizer)

/* Exported by the plugin. A failing status fails TensorFlow's import. */
void TF_InitGraph(TP_OptimizerRegistrationParams *params, TF_Status *status);

/* The names of the nodes the optimizer must keep (feeds, fetches, keep
 * ops, init ops): first their number and the bytes their names take
 * together, then the names themselves. `values[i]` points into `storage`
 * and is `lengths[i]` bytes long, not NUL-terminated. INVALID_ARGUMENT if
 * storage_size is too small. */
TF_CAPI_EXPORT extern void TF_GetNodesToPreserveListSize(
    const TF_GrapplerItem *item, int *num_values, size_t *storage_size,
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_GetNodesToPreserveList(
    const TF_GrapplerItem *item, char **values, size_t *lengths,
    int num_values, void *storage, size_t storage_size, TF_Status *status);
/* The same for the fetch nodes (as the item names them: a fetch may carry
 * an output port, "name:1"). */
TF_CAPI_EXPORT extern void TF_GetFetchNodesListSize(
    const TF_GrapplerItem *item, int *num_values, size_t *storage_size,
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_GetFetchNodesList(
    const TF_GrapplerItem *item, char **values, size_t *lengths,
    int num_values, void *storage, size_t storage_size, TF_Status *status);

#if TFOCL_ABI_LP64
TFOCL_ABI_ASSERT(sizeof(TF_TriState) == 4, "TF_TriState");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, ext) == 8,
                 "TP_OptimizerConfigs.ext");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, disable_model_pruning) == 16,
                 "TP_OptimizerConfigs.disable_model_pruning");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, implementation_selector) == 20,
                 "TP_OptimizerConfigs.implementation_selector");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, function_optimization) == 24,
                 "TP_OptimizerConfigs.function_optimization");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, common_subgraph_elimination) ==
                     28,
                 "TP_OptimizerConfigs.common_subgraph_elimination");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, arithmetic_optimization) == 32,
                 "TP_OptimizerConfigs.arithmetic_optimization");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, debug_stripper) == 36,
                 "TP_OptimizerConfigs.debug_stripper");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, constant_folding) == 40,
                 "TP_OptimizerConfigs.constant_folding");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, shape_optimization) == 44,
                 "TP_OptimizerConfigs.shape_optimization");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, auto_mixed_precision) == 48,
                 "TP_OptimizerConfigs.auto_mixed_precision");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, auto_mixed_precision_onednn_bfloat16) == 52,
                 "TP_OptimizerConfigs.auto_mixed_precision_onednn_bfloat16");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, auto_mixed_precision_mkl) == 56,
                 "TP_OptimizerConfigs.auto_mixed_precision_mkl");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, pin_to_host_optimization) == 60,
                 "TP_OptimizerConfigs.pin_to_host_optimization");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, layout_optimizer) == 64,
                 "TP_OptimizerConfigs.layout_optimizer");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, remapping) == 68,
                 "TP_OptimizerConfigs.remapping");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, loop_optimization) == 72,
                 "TP_OptimizerConfigs.loop_optimization");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, dependency_optimization) == 76,
                 "TP_OptimizerConfigs.dependency_optimization");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, auto_parallel) == 80,
                 "TP_OptimizerConfigs.auto_parallel");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, memory_optimization) == 84,
                 "TP_OptimizerConfigs.memory_optimization");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerConfigs, scoped_allocator_optimization) == 88,
                 "TP_OptimizerConfigs.scoped_allocator_optimization");
TFOCL_ABI_ASSERT(TP_OPTIMIZER_CONFIGS_STRUCT_SIZE == 92,
                 "TP_OptimizerConfigs size");
TFOCL_ABI_ASSERT(sizeof(TP_OptimizerConfigs) == 96,
                 "TP_OptimizerConfigs sizeof");
TFOCL_ABI_ASSERT(offsetof(TP_Optimizer, ext) == 8, "TP_Optimizer.ext");
TFOCL_ABI_ASSERT(offsetof(TP_Optimizer, create_func) == 16,
                 "TP_Optimizer.create_func");
TFOCL_ABI_ASSERT(offsetof(TP_Optimizer, optimize_func) == 24,
                 "TP_Optimizer.optimize_func");
TFOCL_ABI_ASSERT(offsetof(TP_Optimizer, destroy_func) == 32,
                 "TP_Optimizer.destroy_func");
TFOCL_ABI_ASSERT(TP_OPTIMIZER_STRUCT_SIZE == 40, "TP_Optimizer size");
TFOCL_ABI_ASSERT(sizeof(TP_Optimizer) == 40, "TP_Optimizer sizeof");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerRegistrationParams, ext) == 8,
                 "TP_OptimizerRegistrationParams.ext");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerRegistrationParams, major_version) == 16,
                 "TP_OptimizerRegistrationParams.major_version");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerRegistrationParams, minor_version) == 20,
                 "TP_OptimizerRegistrationParams.minor_version");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerRegistrationParams, patch_version) == 24,
                 "TP_OptimizerRegistrationParams.patch_version");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerRegistrationParams, device_type) == 32,
                 "TP_OptimizerRegistrationParams.device_type");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerRegistrationParams, optimizer_configs) ==
                     40,
                 "TP_OptimizerRegistrationParams.optimizer_configs");
TFOCL_ABI_ASSERT(offsetof(TP_OptimizerRegistrationParams, optimizer) == 48,
                 "TP_OptimizerRegistrationParams.optimizer");
TFOCL_ABI_ASSERT(TP_OPTIMIZER_REGISTRATION_PARAMS_STRUCT_SIZE == 56,
                 "TP_OptimizerRegistrationParams size");
TFOCL_ABI_ASSERT(sizeof(TP_OptimizerRegistrationParams) == 56,
                 "TP_OptimizerRegistrationParams sizeof");
#endif

#ifdef __cplusplus
}
#endif

#endif /* TENSORFLOW_C_EXPERIMENTAL_GRAPPLER_GRAPPLER_H_ */
