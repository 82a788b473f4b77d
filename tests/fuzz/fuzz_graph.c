/* libFuzzer target: the graph optimizer's GraphDef decoder and passes
 * (plugin/graph/graph.h) on arbitrary bytes. Any input is a result or a
 * rejection, never a crash, a leak or an abort; a changed graph decodes
 * again; and the codec's round trip is a fixed point: what it wrote comes
 * back byte for byte. Every kernel counts as present, so every pass runs.
 * The program of every _TfoclFusedElementwise node, in the input (anything
 * at all) and in the output, goes through the kernel's decoder
 * (fused_program.h), which must refuse or accept without a fault. The
 * bytes themselves, as a text, go through the parser of the programs a
 * warm list names (kept in the user's cache directory, so anything a
 * file can hold): a text it accepts writes itself back unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fused_program.h"
#include "graph.h"
#include "graph.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool all_kernels(void *ctx, const char *op, int dtype)
{
  (void)ctx;
  (void)op;
  return dtype != 3; /* not int32: a "missing kernel" path too */
}

/* Attribute `key` if it holds a `kind` value (the oneof's case). */
static const Tfg__AttrValue *attr_of(const Tfg__NodeDef *n, const char *key,
                                     Tfg__AttrValue__ValueCase kind)
{
  size_t len = strlen(key);
  for (size_t i = 0; i < n->n_attr; i++)
    if (n->attr[i] != NULL && n->attr[i]->key.len == len &&
        memcmp(n->attr[i]->key.data, key, len) == 0)
      return n->attr[i]->value != NULL &&
                     n->attr[i]->value->value_case == kind
                 ? n->attr[i]->value
                 : NULL;
  return NULL;
}

/* Decodes the programs of a graph's fused nodes as the kernel would read
 * them (lists truncated to what the kernel's buffers hold). Returns how
 * many decoded. */
static int decode_programs(const uint8_t *data, size_t size)
{
  int decoded = 0;
  Tfg__GraphDef *g = tfg__graph_def__unpack(NULL, size, data);
  if (g == NULL)
    return 0;
  for (size_t i = 0; i < g->n_node; i++) {
    const Tfg__NodeDef *n = g->node[i];
    if (n == NULL || n->op.len != strlen(FUSED_OP_NAME) ||
        memcmp(n->op.data, FUSED_OP_NAME, n->op.len) != 0)
      continue;
    const Tfg__AttrValue *targs =
        attr_of(n, "Targs", TFG__ATTR_VALUE__VALUE_LIST);
    const Tfg__AttrValue *t = attr_of(n, "T", TFG__ATTR_VALUE__VALUE_TYPE);
    const Tfg__AttrValue *prog =
        attr_of(n, "program", TFG__ATTR_VALUE__VALUE_LIST);
    const Tfg__AttrValue *consts =
        attr_of(n, "constants", TFG__ATTR_VALUE__VALUE_LIST);
    int types[FUSED_MAX_INPUTS];
    size_t num_types = 0, len = 0, num_consts = 0;
    if (targs != NULL && targs->list != NULL) {
      num_types = targs->list->n_type;
      for (size_t k = 0; k < num_types && k < FUSED_MAX_INPUTS; k++)
        types[k] = targs->list->type[k];
    }
    if (prog != NULL && prog->list != NULL)
      len = prog->list->n_i;
    if (consts != NULL && consts->list != NULL)
      num_consts = consts->list->n_f;
    struct fused_program p;
    char why[128];
    decoded += fused_program_decode(
        len ? prog->list->i : NULL, len,
        num_consts ? consts->list->f : NULL, num_consts, types,
        num_types > FUSED_MAX_INPUTS ? FUSED_MAX_INPUTS + 1 : num_types,
        t != NULL ? t->type : 0, &p, why, sizeof(why));
  }
  tfg__graph_def__free_unpacked(g, NULL);
  return decoded;
}

/* The bytes up to the first NUL, as fused_program_parse reads a line. */
static void parse_as_text(const uint8_t *data, size_t size)
{
  char text[512], again[512];
  size_t len = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
  memcpy(text, data, len);
  text[len] = '\0';
  struct fused_program p;
  char why[128];
  if (!fused_program_parse(text, &p, why, sizeof(why)))
    return;
  size_t need = fused_program_text(&p, again, sizeof(again));
  if (need >= sizeof(again) || strcmp(again, text) != 0)
    abort(); /* accepted a text that is not the one its program writes */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const char *const keep[] = {"result", "ba_fetched:0", "^relu"};
  static const size_t keep_lengths[] = {6, 12, 5};
  struct ocl_graph_config config = {
      /* Both variable modes: every update, or those whose add fuses. */
      .variables = (size & 1) == 0,
      .variables_into_fusion = true,
      .fusion = true,
      .elementwise = true,
      .host_kernel_label = "TfoclHost",
      .has_kernel = all_kernels,
      .keep = keep,
      .keep_lengths = keep_lengths,
      .num_keep = 3,
  };
  void *out = NULL, *again = NULL, *twice = NULL;
  size_t out_size = 0, again_size = 0, twice_size = 0;
  char why[256];

  enum ocl_graph_outcome outcome = ocl_graph_optimize(
      data, size, &config, &out, &out_size, NULL, why, sizeof(why), NULL,
      NULL);
  decode_programs(data, size);
  parse_as_text(data, size);
  if (outcome == OCL_GRAPH_CHANGED) {
    if (!ocl_graph_round_trip(out, out_size, &again, &again_size))
      abort(); /* the optimizer wrote something that does not decode */
    free(again);
    decode_programs(out, out_size);
  } else if (out != NULL) {
    abort();
  }
  free(out);

  if (ocl_graph_round_trip(data, size, &again, &again_size)) {
    if (!ocl_graph_round_trip(again, again_size, &twice, &twice_size) ||
        twice_size != again_size ||
        (again_size > 0 && memcmp(again, twice, again_size) != 0))
      abort();
  }
  free(again);
  free(twice);
  return 0;
}
