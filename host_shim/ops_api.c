/* TensorFlow's op-definition C API (tensorflow/c/ops.h): a plugin registers
 * ops of its own, with a shape function, as it does inside TensorFlow
 * (TF_InitKernel is the usual place), and the shim runs that shape function
 * as TensorFlow's shape inference would, on the shapes of a run.
 *
 * Shapes here are what TensorFlow's InferenceContext holds: a rank (-1
 * unknown) and dims (-1 unknown). TensorFlow accepts a registration it will
 * abort on later; the shim says what is wrong in the status instead. */
#include <stdlib.h>
#include <string.h>

#include "shim_internal.h"

/* ---- Builder ------------------------------------------------------------- */

struct TF_OpDefinitionBuilder {
  char *name;
  struct shim_strbuf inputs, outputs, attrs;
  void (*shape_fn)(TF_ShapeInferenceContext *, TF_Status *);
};

TF_OpDefinitionBuilder *TF_NewOpDefinitionBuilder(const char *op_name)
{
  TF_OpDefinitionBuilder *b = calloc(1, sizeof(*b));
  if (b == NULL)
    return NULL;
  b->name = strdup(op_name != NULL ? op_name : "");
  if (b->name == NULL) {
    free(b);
    return NULL;
  }
  return b;
}

void TF_DeleteOpDefinitionBuilder(TF_OpDefinitionBuilder *b)
{
  if (b == NULL)
    return;
  shim_strbuf_finish(&b->inputs);
  shim_strbuf_finish(&b->outputs);
  shim_strbuf_finish(&b->attrs);
  free(b->name);
  free(b);
}

/* The shim's signatures are comma lists of REGISTER_OP's specs. */
static void append(struct shim_strbuf *list, const char *spec)
{
  shim_strbuf_printf(list, "%s%s", list->len ? ", " : "",
                     spec != NULL ? spec : "");
}

void TF_OpDefinitionBuilderAddAttr(TF_OpDefinitionBuilder *b,
                                   const char *attr_spec)
{
  if (b != NULL)
    append(&b->attrs, attr_spec);
}

void TF_OpDefinitionBuilderAddInput(TF_OpDefinitionBuilder *b,
                                    const char *input_spec)
{
  if (b != NULL)
    append(&b->inputs, input_spec);
}

void TF_OpDefinitionBuilderAddOutput(TF_OpDefinitionBuilder *b,
                                     const char *output_spec)
{
  if (b != NULL)
    append(&b->outputs, output_spec);
}

/* Properties the shim does not act on (no graph optimizations of its own
 * look at them); TensorFlow's C API ignores the bool argument too. */
void TF_OpDefinitionBuilderSetIsCommutative(TF_OpDefinitionBuilder *b,
                                            bool is_commutative)
{
  (void)b;
  (void)is_commutative;
}

void TF_OpDefinitionBuilderSetIsAggregate(TF_OpDefinitionBuilder *b,
                                          bool is_aggregate)
{
  (void)b;
  (void)is_aggregate;
}

void TF_OpDefinitionBuilderSetIsStateful(TF_OpDefinitionBuilder *b,
                                         bool is_stateful)
{
  (void)b;
  (void)is_stateful;
}

void TF_OpDefinitionBuilderSetAllowsUninitializedInput(
    TF_OpDefinitionBuilder *b, bool allows_uninitialized_input)
{
  (void)b;
  (void)allows_uninitialized_input;
}

void TF_OpDefinitionBuilderDeprecated(TF_OpDefinitionBuilder *b, int version,
                                      const char *explanation)
{
  (void)b;
  (void)version;
  (void)explanation;
}

void TF_OpDefinitionBuilderSetShapeInferenceFunction(
    TF_OpDefinitionBuilder *b,
    void (*shape_inference_func)(TF_ShapeInferenceContext *ctx,
                                 TF_Status *status))
{
  if (b != NULL)
    b->shape_fn = shape_inference_func;
}

void TF_RegisterOpDefinition(TF_OpDefinitionBuilder *b, TF_Status *status)
{
  if (b == NULL) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "TF_RegisterOpDefinition: NULL builder");
    return;
  }
  shim_op_def_register(b->name, shim_strbuf_str(&b->inputs),
                       shim_strbuf_str(&b->outputs),
                       shim_strbuf_str(&b->attrs), b->shape_fn, status);
  TF_DeleteOpDefinitionBuilder(b); /* whatever happened, as TensorFlow */
}

/* ---- Shapes ---------------------------------------------------------------- */

struct TF_ShapeHandle {
  int64_t rank; /* -1: unknown */
  int64_t *dims; /* -1: unknown dim */
};

struct TF_DimensionHandle {
  int64_t value; /* -1: unknown */
};

struct TF_ShapeInferenceContext {
  const struct shim_node *node;
  int num_inputs;
  const TF_ShapeHandle *inputs;
  int num_outputs;
  TF_ShapeHandle *outputs;
};

TF_ShapeHandle *TF_NewShapeHandle(void)
{
  TF_ShapeHandle *h = calloc(1, sizeof(*h));
  if (h != NULL)
    h->rank = -1;
  return h;
}

void TF_DeleteShapeHandle(TF_ShapeHandle *h)
{
  if (h == NULL)
    return;
  free(h->dims);
  free(h);
}

TF_DimensionHandle *TF_NewDimensionHandle(void)
{
  TF_DimensionHandle *d = calloc(1, sizeof(*d));
  if (d != NULL)
    d->value = -1;
  return d;
}

void TF_DeleteDimensionHandle(TF_DimensionHandle *d) { free(d); }

/* *h = rank + dims (dims NULL: all unknown). False when out of memory. */
static bool shape_set(TF_ShapeHandle *h, int64_t rank, const int64_t *dims)
{
  int64_t *copy = NULL;
  if (rank > 0) {
    copy = malloc((size_t)rank * sizeof(*copy));
    if (copy == NULL)
      return false;
    for (int64_t i = 0; i < rank; i++)
      copy[i] = dims != NULL ? dims[i] : -1;
  }
  free(h->dims);
  h->dims = copy;
  h->rank = rank;
  return true;
}

static bool oom(TF_Status *status)
{
  shim_set_status(status, TF_RESOURCE_EXHAUSTED, "out of host memory");
  return false;
}

int64_t TF_ShapeInferenceContextNumInputs(TF_ShapeInferenceContext *ctx)
{
  return ctx->num_inputs;
}

void TF_ShapeInferenceContextGetInput(TF_ShapeInferenceContext *ctx, int i,
                                      TF_ShapeHandle *handle,
                                      TF_Status *status)
{
  if (i < 0 || i >= ctx->num_inputs) {
    shim_set_status(status, TF_INVALID_ARGUMENT, "input index out of range");
    return;
  }
  if (!shape_set(handle, ctx->inputs[i].rank, ctx->inputs[i].dims)) {
    oom(status);
    return;
  }
  shim_set_ok(status);
}

void TF_ShapeInferenceContextSetOutput(TF_ShapeInferenceContext *ctx, int i,
                                       TF_ShapeHandle *handle,
                                       TF_Status *status)
{
  if (i < 0 || i >= ctx->num_outputs) {
    shim_set_status(status, TF_INVALID_ARGUMENT, "output index out of range");
    return;
  }
  if (!shape_set(&ctx->outputs[i], handle->rank, handle->dims)) {
    oom(status);
    return;
  }
  shim_set_ok(status);
}

TF_ShapeHandle *TF_ShapeInferenceContextScalar(TF_ShapeInferenceContext *ctx)
{
  (void)ctx;
  TF_ShapeHandle *h = TF_NewShapeHandle();
  if (h != NULL)
    h->rank = 0;
  return h;
}

TF_ShapeHandle *TF_ShapeInferenceContextVectorFromSize(
    TF_ShapeInferenceContext *ctx, size_t size)
{
  (void)ctx;
  TF_ShapeHandle *h = TF_NewShapeHandle();
  int64_t dim = (int64_t)size;
  if (h != NULL && !shape_set(h, 1, &dim)) {
    TF_DeleteShapeHandle(h);
    return NULL;
  }
  return h;
}

void TF_ShapeInferenceContext_GetAttrType(TF_ShapeInferenceContext *ctx,
                                          const char *attr_name,
                                          TF_DataType *val, TF_Status *status)
{
  const struct shim_attr_value *v = shim_node_attr(ctx->node, attr_name);
  if (v == NULL || v->kind != TFOCL_ATTR_TYPE) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "No attr named '%s' of type 'type' in NodeDef",
                    attr_name);
    return;
  }
  *val = v->v.type;
  shim_set_ok(status);
}

int64_t TF_ShapeInferenceContextRank(TF_ShapeInferenceContext *ctx,
                                     TF_ShapeHandle *handle)
{
  (void)ctx;
  return handle->rank;
}

int TF_ShapeInferenceContextRankKnown(TF_ShapeInferenceContext *ctx,
                                      TF_ShapeHandle *handle)
{
  (void)ctx;
  return handle->rank >= 0;
}

/* The three WithRank* functions: an unknown rank becomes `rank` unknown
 * dims (WithRank) or stays unknown. */
enum rank_check { EXACTLY, AT_LEAST, AT_MOST };

static void with_rank(TF_ShapeHandle *handle, int64_t rank,
                      TF_ShapeHandle *result, enum rank_check check,
                      TF_Status *status)
{
  static const char *const words[] = {"", "at least ", "at most "};
  int64_t have = handle->rank;
  bool ok = have < 0 || (check == EXACTLY    ? have == rank
                         : check == AT_LEAST ? have >= rank
                                             : have <= rank);
  if (!ok) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Shape must be %srank %lld but is rank %lld",
                    words[check], (long long)rank, (long long)have);
    return;
  }
  bool copied = have < 0 && check == EXACTLY
                    ? shape_set(result, rank, NULL)
                    : shape_set(result, have, handle->dims);
  if (!copied) {
    oom(status);
    return;
  }
  shim_set_ok(status);
}

void TF_ShapeInferenceContextWithRank(TF_ShapeInferenceContext *ctx,
                                      TF_ShapeHandle *handle, int64_t rank,
                                      TF_ShapeHandle *result,
                                      TF_Status *status)
{
  (void)ctx;
  with_rank(handle, rank, result, EXACTLY, status);
}

void TF_ShapeInferenceContextWithRankAtLeast(TF_ShapeInferenceContext *ctx,
                                             TF_ShapeHandle *handle,
                                             int64_t rank,
                                             TF_ShapeHandle *result,
                                             TF_Status *status)
{
  (void)ctx;
  with_rank(handle, rank, result, AT_LEAST, status);
}

void TF_ShapeInferenceContextWithRankAtMost(TF_ShapeInferenceContext *ctx,
                                            TF_ShapeHandle *handle,
                                            int64_t rank,
                                            TF_ShapeHandle *result,
                                            TF_Status *status)
{
  (void)ctx;
  with_rank(handle, rank, result, AT_MOST, status);
}

void TF_ShapeInferenceContextDim(TF_ShapeInferenceContext *ctx,
                                 TF_ShapeHandle *shape_handle, int64_t i,
                                 TF_DimensionHandle *result)
{
  (void)ctx;
  int64_t rank = shape_handle->rank;
  if (rank < 0 || i < -rank || i >= rank) {
    result->value = -1;
    return;
  }
  result->value = shape_handle->dims[i < 0 ? i + rank : i];
}

void TF_ShapeInferenceContextSubshape(TF_ShapeInferenceContext *ctx,
                                      TF_ShapeHandle *shape_handle,
                                      int64_t start, int64_t end,
                                      TF_ShapeHandle *result,
                                      TF_Status *status)
{
  (void)ctx;
  int64_t rank = shape_handle->rank;
  if (rank < 0) {
    if (!shape_set(result, -1, NULL))
      oom(status);
    else
      shim_set_ok(status);
    return;
  }
  int64_t s = start, e = end;
  if (s > rank)
    s = rank;
  if (e > rank)
    e = rank;
  if (s < 0)
    s += rank;
  if (e < 0)
    e += rank;
  if (s < 0 || e < 0) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Subshape %s out of bounds: %lld, for shape of rank %lld",
                    s < 0 ? "start" : "end",
                    (long long)(s < 0 ? start : end), (long long)rank);
    return;
  }
  if (s > e) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "Subshape must have computed start <= end, but is %lld "
                    "and %lld (computed from start %lld and end %lld over "
                    "shape with rank %lld)",
                    (long long)s, (long long)e, (long long)start,
                    (long long)end, (long long)rank);
    return;
  }
  if (!shape_set(result, e - s, shape_handle->dims + s)) {
    oom(status);
    return;
  }
  shim_set_ok(status);
}

void TF_ShapeInferenceContextSetUnknownShape(TF_ShapeInferenceContext *ctx,
                                             TF_Status *status)
{
  for (int i = 0; i < ctx->num_outputs; i++) {
    if (!shape_set(&ctx->outputs[i], -1, NULL)) {
      oom(status);
      return;
    }
  }
  shim_set_ok(status);
}

int TF_DimensionHandleValueKnown(TF_DimensionHandle *dim_handle)
{
  return dim_handle->value >= 0;
}

int64_t TF_DimensionHandleValue(TF_DimensionHandle *dim_handle)
{
  return dim_handle->value;
}

void TF_ShapeInferenceContextConcatenateShapes(TF_ShapeInferenceContext *ctx,
                                               TF_ShapeHandle *first,
                                               TF_ShapeHandle *second,
                                               TF_ShapeHandle *result,
                                               TF_Status *status)
{
  (void)ctx;
  /* result may be first or second: build the dims before replacing. */
  if (first->rank < 0 || second->rank < 0) {
    if (!shape_set(result, -1, NULL)) {
      oom(status);
      return;
    }
    shim_set_ok(status);
    return;
  }
  int64_t rank = first->rank + second->rank;
  int64_t *dims = malloc((size_t)(rank > 0 ? rank : 1) * sizeof(*dims));
  if (dims == NULL) {
    oom(status);
    return;
  }
  for (int64_t i = 0; i < first->rank; i++)
    dims[i] = first->dims[i];
  for (int64_t i = 0; i < second->rank; i++)
    dims[first->rank + i] = second->dims[i];
  bool ok = shape_set(result, rank, dims);
  free(dims);
  if (!ok) {
    oom(status);
    return;
  }
  shim_set_ok(status);
}

/* ---- Running a shape function ----------------------------------------------- */

bool shim_infer_shapes(const struct shim_node *node,
                       const struct tfocl_shape *input_shapes,
                       struct tfocl_shape_result *outputs, TF_Status *status)
{
  const struct shim_op_def *def = node->def;
  if (def->shape_fn == NULL) {
    shim_set_status(status, TF_NOT_FOUND, "Op %s has no shape function",
                    def->name);
    return false;
  }
  TF_ShapeHandle *in = calloc((size_t)node->num_inputs + 1, sizeof(*in));
  TF_ShapeHandle *out = calloc((size_t)node->num_outputs + 1, sizeof(*out));
  bool ok = in != NULL && out != NULL;
  for (int i = 0; ok && i < node->num_inputs; i++) {
    in[i].rank = -1;
    ok = input_shapes[i].num_dims < 0 ||
         shape_set(&in[i], input_shapes[i].num_dims, input_shapes[i].dims);
  }
  for (int i = 0; ok && i < node->num_outputs; i++)
    out[i].rank = -1;
  if (!ok) {
    oom(status);
    goto done;
  }
  TF_ShapeInferenceContext ctx = {
      .node = node,
      .num_inputs = node->num_inputs,
      .inputs = in,
      .num_outputs = node->num_outputs,
      .outputs = out,
  };
  TF_Status *fn_status = TF_NewStatus();
  if (fn_status == NULL) {
    ok = oom(status);
    goto done;
  }
  def->shape_fn(&ctx, fn_status);
  ok = shim_ok(fn_status);
  if (!ok)
    shim_copy_status(status, fn_status);
  TF_DeleteStatus(fn_status);
  for (int i = 0; ok && i < node->num_outputs; i++) {
    outputs[i].num_dims = (int)out[i].rank;
    outputs[i].dims = out[i].dims;
    out[i].dims = NULL; /* the caller's now */
  }
  if (ok)
    shim_set_ok(status);
done:
  for (int i = 0; in != NULL && i < node->num_inputs; i++)
    free(in[i].dims);
  for (int i = 0; out != NULL && i < node->num_outputs; i++)
    free(out[i].dims);
  free(in);
  free(out);
  return ok;
}

bool tfocl_infer_shape(const char *op_name, const struct tfocl_attr *attrs,
                       int num_attrs, const TF_DataType *input_types,
                       const struct tfocl_shape *input_shapes, int num_inputs,
                       int output, int64_t *dims, int max_dims, int *num_dims,
                       TF_Status *status)
{
  const struct shim_op_def *def =
      op_name != NULL ? shim_op_def_find(op_name) : NULL;
  struct shim_node node;
  if (def == NULL) {
    shim_set_status(status, TF_NOT_FOUND, "Op type not registered '%s'",
                    op_name != NULL ? op_name : "(null)");
    return false;
  }
  if (num_inputs < 0 || (num_inputs > 0 && (input_types == NULL ||
                                            input_shapes == NULL))) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "tfocl_infer_shape: invalid inputs");
    return false;
  }
  if (!shim_node_init(&node, def, attrs, num_attrs, input_types, num_inputs,
                      status))
    return false;
  struct tfocl_shape_result *out =
      calloc((size_t)node.num_outputs + 1, sizeof(*out));
  bool ok = out != NULL;
  if (!ok)
    oom(status);
  if (ok && (output < 0 || output >= node.num_outputs)) {
    shim_set_status(status, TF_INVALID_ARGUMENT,
                    "%s has %d outputs, not %d", def->name, node.num_outputs,
                    output + 1);
    ok = false;
  }
  ok = ok && shim_infer_shapes(&node, input_shapes, out, status);
  if (ok) {
    *num_dims = out[output].num_dims;
    if (out[output].num_dims > max_dims) {
      shim_set_status(status, TF_INVALID_ARGUMENT,
                      "output %d has rank %d, room for %d was given", output,
                      out[output].num_dims, max_dims);
      ok = false;
    } else {
      for (int d = 0; d < out[output].num_dims; d++)
        dims[d] = out[output].dims[d];
    }
  }
  for (int i = 0; out != NULL && i < node.num_outputs; i++)
    free(out[i].dims);
  free(out);
  shim_node_finish(&node);
  return ok;
}
