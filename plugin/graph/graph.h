/* tfocl graph optimizer: GraphDef in, GraphDef out (plugin/graph/).
 *
 * The core knows neither OpenCL nor TensorFlow: it decodes a serialized
 * GraphDef (protobuf-c, graph.proto), runs the passes on the nodes placed
 * on an OPENCL device, and encodes the result. What it must know of the
 * world comes in a struct ocl_graph_config: which passes are on, which
 * kernels this plugin registered, which nodes the caller must keep. The
 * plugin's TF_InitGraph (init.c) fills it from TensorFlow; the C tests and
 * the fuzz target fill it themselves.
 *
 * Passes (each one only on OPENCL-placed nodes, idempotent, keeping every
 * name a consumer, a control dependency, a fetch or the preserve list
 * refers to):
 *   variables  AssignAdd/AssignSubVariableOp and ResourceApplyGradientDescent,
 *              ResourceApplyMomentum, ResourceApplyAdam as ReadVariableOp ->
 *              arithmetic -> AssignVariableOp (TensorFlow's DEVICE_DEFAULT
 *              kernels), for a TensorFlow that exports no
 *              kernels_experimental.h; on one that does, the AssignAdd and
 *              AssignSub whose add the element-wise fusion then takes;
 *   fusion     MatMul/Conv2D + BiasAdd (+ Relu, Relu6, Elu, LeakyRelu, Tanh,
 *              Sigmoid) as TensorFlow's _FusedMatMul/_FusedConv2D, where the
 *              plugin has a kernel for the fused op and dtype;
 *   elementwise  regions of element-wise ops whose inner results nothing
 *              outside reads (float/half arithmetic, activations, their
 *              gradients, int64 counters, Cast, scalar Consts) as one
 *              _TfoclFusedElementwise (fused_program.h), where the plugin
 *              has its kernel for the dtype; first a Pow by a scalar
 *              Const 3 becomes Mul(x, Square(x)), as Grappler rewrites it
 *              on CPU devices only;
 *   accumulate  Grappler's memory-optimizer rewrite of an AddN into
 *              reference-variable ops (TemporaryVariable, Assign,
 *              AssignAdd, DestroyTemporaryVariable), which no plugin can
 *              run, back into the AddN, where the plugin has its kernel;
 *   host_conditions  LogicalAnd/LogicalOr of int32 comparisons (while
 *              loops' conditions) labelled for the plugin's host-memory
 *              kernel, where config.host_kernel_label names one.
 *
 * Any problem leaves the graph as it came: the caller gets
 * OCL_GRAPH_UNCHANGED or OCL_GRAPH_REJECTED (with the reason) and passes
 * its input on. */
#ifndef TFOCL_PLUGIN_GRAPH_GRAPH_H_
#define TFOCL_PLUGIN_GRAPH_GRAPH_H_

#include <stdbool.h>
#include <stddef.h>

struct ocl_graph_config {
  bool variables; /* run the variable-update rewrite */
  /* Where the plugin updates variables in place (kernels_experimental.h):
   * rewrite only the AssignAdd/AssignSubVariableOps whose value an
   * element-wise op computes for them alone, so that the element-wise
   * fusion takes the add in (one launch instead of two). */
  bool variables_into_fusion;
  bool fusion;    /* run the contraction fusion */
  bool elementwise; /* run the element-wise fusion */
  /* The element-wise fusion reads no Tile's input in its place (it does
   * by default where the repeat is a broadcast, FUSED_TILED_OP_NAME). */
  bool keep_tiles;
  /* The "_kernel" label of the plugin's host-memory LogicalAnd and
   * LogicalOr kernels; NULL: it has none, the pass does not run. */
  const char *host_kernel_label;
  /* Whether the plugin registered an OPENCL kernel for `op` whose type
   * attribute is `dtype` (a TF_DataType value). NULL: none is. */
  bool (*has_kernel)(void *ctx, const char *op, int dtype);
  void *has_kernel_ctx;
  /* Node names the passes must keep (TensorFlow's fetch list and nodes to
   * preserve): "name", "name:port" or "^name", `lengths[i]` bytes each
   * (not NUL-terminated). */
  const char *const *keep;
  const size_t *keep_lengths;
  size_t num_keep;
};

struct ocl_graph_stats {
  int nodes;            /* in the input graph */
  int opencl_nodes;     /* of which placed on OPENCL */
  int variable_updates; /* update nodes rewritten */
  int fusions;          /* contractions fused */
  int elementwise;      /* _TfoclFusedElementwise nodes made */
  int elementwise_ops;  /* ops they took in */
  int host_conditions;  /* logical ops labelled for the host */
  int accumulations;    /* memory-optimizer AddN rewrites undone */
  int skipped;          /* matches left alone (see the trace) */
};

enum ocl_graph_outcome {
  OCL_GRAPH_UNCHANGED, /* nothing to do: pass the input on */
  OCL_GRAPH_CHANGED,   /* *out holds the new graph */
  OCL_GRAPH_REJECTED   /* not a graph we can work on: pass the input on */
};

/* Optimizes the `size` bytes of GraphDef at `graph`. On OCL_GRAPH_CHANGED,
 * *out (malloc'ed, the caller frees) holds *out_size bytes; otherwise *out
 * is NULL and, for OCL_GRAPH_REJECTED, `why` says why. `stats` and `why`
 * may be NULL. `trace`, if not NULL, receives one line per decision the
 * passes made (a node skipped and why). Thread-safe: no global state. */
enum ocl_graph_outcome ocl_graph_optimize(
    const void *graph, size_t size, const struct ocl_graph_config *config,
    void **out, size_t *out_size, struct ocl_graph_stats *stats, char *why,
    size_t why_size, void (*trace)(void *ctx, const char *line),
    void *trace_ctx);

/* Decodes and encodes again, changing nothing: the codec's round trip
 * (tests, fuzzing). False, with *out NULL, if the bytes do not decode. */
bool ocl_graph_round_trip(const void *graph, size_t size, void **out,
                          size_t *out_size);

#endif /* TFOCL_PLUGIN_GRAPH_GRAPH_H_ */
