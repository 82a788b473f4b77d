/* The conv family, shared by its files only: conv.c (the ops, their
 * attributes, create and compute, the choice of strategy), conv3d.c (the
 * shape checks of the 3-D ops), conv_gemm.c (im2col + GEMM, the CPU
 * shape), conv_direct.c (direct kernels, the CPU shape's channels-last
 * forward and filter gradient), conv_igemm.c (implicit GEMM, the GPU
 * shape) and
 * conv_depthwise.c. One OpenCL program, conv.cl, serves them all. */
#ifndef TFOCL_KERNELS_CONV_INTERNAL_H_
#define TFOCL_KERNELS_CONV_INTERNAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "conv_geometry.h"
#include "runtime.h"

/* ---- Programs and kernels ------------------------------------------------ */

enum conv_storage { CS_FLOAT, CS_HALF, CS_DOUBLE, CS_BF16, NUM_CS };

/* A line per group of kernels, kept as written. */
/* clang-format off */
enum conv_kern {
  K_IM2COL, K_COL2IM, K_TO_FLOAT, K_NCHW_TO_NHWC, K_BIAS_ACT,
  K_DW_FWD_ROWS, K_DW_BPI_ROWS, K_DW_BPF_ROWS, K_SPLITK_SUM,
  K_DW_FWD_ELEM, K_DW_BPI_ELEM, K_DW_BPF_NHWC, K_DW_BPF_NCHW,
  K_FWD_64, K_FWD_32, K_FWD_16,
  K_BPI_64, K_BPI_32, K_BPI_16,
  K_BPF_64, K_BPF_32, K_BPF_16,
  K_DIRECT_FWD, K_DIRECT_BPI, K_DIRECT_BPF, K_IM2COL_PANELS,
  K_IM2COL_PANELS_T, K_FLIP_FILTER, K_FILTER_PANELS, K_DIRECT_FWD_8X2,
  K_DIRECT_BPF_8X1, K_DIRECT_BPF_8X2, K_DIRECT_FWD_LINE_8X2,
  K_DIRECT_BPF_GATHER_8X1, K_DIRECT_BPF_GATHER_8X2, K_FLIP_FILTER_TILES,
  NUM_KERNS
};
/* clang-format on */

/* conv.cl's kernel names, in enum conv_kern's order. */
extern const char *const conv_kern_names[NUM_KERNS];

/* _FusedConv2D's activations: conv.cl's ACT_*. */
enum conv_activation {
  ACT_NONE,
  ACT_RELU,
  ACT_RELU6,
  ACT_ELU,
  ACT_LEAKY_RELU,
  ACT_TANH,
  ACT_SIGMOID
};

/* The attributes, as read at construction: strides and dilations hold up
 * to 5 values (counts beyond are kept so that the checks reject them). */
struct conv_attrs {
  bool channels_first;
  enum ocl_padding padding;
  int64_t strides[5];
  int num_strides;
  int64_t dilations[5];
  int num_dilations;
  int64_t explicit_paddings[8];
  int num_explicit_paddings;
};

/* One op kernel: struct conv_op (conv.c) says which op. */
struct conv_kernel {
  const struct conv_op *op;
  TF_DataType dtype;
  enum conv_storage storage;
  struct conv_attrs attrs;
  struct ocl_conv_attrs attrs2d; /* 2-D ops: conv_geometry.c's form */
  enum conv_activation act;      /* _FusedConv2D */
  float alpha;                   /* LeakyRelu */
  struct ocl_kernel kernels[2][NUM_KERNS];
};

/* ---- Geometry ------------------------------------------------------------ */

/* One convolution, layout-independent; spatial dims in (d, h, w) order, a
 * 2-D one with d = 1 and no padding there. The image side is the input
 * (x, or dx for the input gradient), the out side the output (y, or dy). */
struct conv_geo {
  bool nchw; /* channels first */
  int64_t batch, groups, cg, og, mult, cin, cout;
  int64_t in[3], k[3], out[3], s[3], dl[3], pad[3];
};

#define GEO_FIELDS 35

/* conv.cl's geo_t in one index width. */
union geo_args {
  cl_int i[GEO_FIELDS];
  cl_long l[GEO_FIELDS];
};

static inline int64_t taps_of(const struct conv_geo *g)
{
  return g->k[0] * g->k[1] * g->k[2];
}

static inline int64_t in_pixels(const struct conv_geo *g)
{
  return g->in[0] * g->in[1] * g->in[2];
}

static inline int64_t out_pixels(const struct conv_geo *g)
{
  return g->out[0] * g->out[1] * g->out[2];
}

/* ---- One compute call ---------------------------------------------------- */

/* One compute call: the op, its kernel, the device, the index width and
 * the geometry argument every launch passes. */
struct run {
  struct ocl_op *op;
  struct conv_kernel *k;
  const struct ocl_device_info *info;
  TF_DataType dtype;
  bool wide;
  union geo_args geo;
  size_t geo_size;
};

static inline struct ocl_kernel *kern(struct run *r, enum conv_kern id)
{
  return &r->k->kernels[r->wide][id];
}

static inline struct ocl_arg idx_arg(const struct run *r, int64_t v)
{
  return r->wide ? OCL_LONG(v) : OCL_INT(v);
}

#define GEO_ARG(r) OCL_BYTES(&(r)->geo, (r)->geo_size)
#define NARGS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The float type partial sums and GEMM copies are kept in. */
static inline TF_DataType acc_dtype(const struct run *r)
{
  return r->dtype == TF_DOUBLE ? TF_DOUBLE : TF_FLOAT;
}

static inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Sets r's geometry argument (conv.cl's geo_t) from g. */
void conv_run_set_geo(struct run *r, const struct conv_geo *g);
/* Zeros t (nothing to sum: an empty reduction). */
bool conv_fill_zero(struct run *r, TF_Tensor *t);
/* partial[s] (acc type) -> out: the sum over splits, rounded once. */
bool conv_splitk_sum(struct run *r, const TF_Tensor *partial,
                     const TF_Tensor *out, int64_t n, int64_t splits);
/* How many pieces a reduction of `length` splits into so that `groups`
 * independent work-groups become about `target`, each piece at least
 * `min_piece` long and the partial sums (`per_split` elements each) within
 * PARTIAL_MAX_ELEMENTS; *chunk is a piece's length (a multiple of
 * `align`). Every piece is non-empty. */
int64_t conv_split_reduction(int64_t length, int64_t groups, int64_t target,
                             int64_t min_piece, int64_t align,
                             int64_t per_split, int64_t *chunk);

/* ---- conv3d.c ------------------------------------------------------------ */

/* Conv3D's attribute checks (Conv3DOp's constructor). */
bool conv3d_check_attrs(const struct conv_attrs *a, TF_Status *status);
/* Conv3DOp::Compute's checks. */
bool conv3d_forward_init(struct conv_geo *g, const struct conv_attrs *a,
                         const int64_t *input, int input_rank,
                         const int64_t *filter, int filter_rank,
                         int64_t *out_dims, TF_Status *status);
/* ConvBackpropComputeDimensionsV2 for 3 spatial dims, with `label`. */
bool conv3d_backprop_init(struct conv_geo *g, const char *label,
                          const struct conv_attrs *a, const int64_t *input,
                          int input_rank, const int64_t *filter,
                          int filter_rank, const int64_t *out, int out_rank,
                          TF_Status *status);

/* ---- conv_gemm.c: im2col + GEMM (CPU shape, float and half) -------------- */

bool conv_gemm_forward(struct run *r, const struct conv_geo *g,
                       const TF_Tensor *in, const TF_Tensor *filter,
                       const TF_Tensor *out);
bool conv_gemm_backprop_input(struct run *r, const struct conv_geo *g,
                              const TF_Tensor *filter, const TF_Tensor *dout,
                              const TF_Tensor *dx);
bool conv_gemm_backprop_filter(struct run *r, const struct conv_geo *g,
                               const TF_Tensor *in, const TF_Tensor *dout,
                               const TF_Tensor *dw);
/* _FusedConv2D's epilogue after a GEMM: y = act(y + bias) in place. */
bool conv_bias_act(struct run *r, const struct conv_geo *g, const TF_Tensor *y,
                   const TF_Tensor *bias);

/* ---- conv_direct.c: direct kernels (CPU shape, channels-last) ----------- */

/* False under TFOCL_CONV=im2col, which keeps the CPU shape's
 * convolutions on the im2col + GEMM path the direct kernels replace (for
 * comparison, and for tests of both). */
bool conv_direct_enabled(void);
/* Each sets *done when it took the convolution; false (with the status
 * set) on failure; true with *done false and nothing enqueued where the
 * geometry is not theirs. bias: _FusedConv2D's, NULL otherwise. */
bool conv_direct_forward(struct run *r, const struct conv_geo *g,
                         const TF_Tensor *in, const TF_Tensor *filter,
                         const TF_Tensor *out, const TF_Tensor *bias,
                         bool *done);
bool conv_direct_backprop_filter(struct run *r, const struct conv_geo *g,
                                 const TF_Tensor *in, const TF_Tensor *dy,
                                 const TF_Tensor *dw, bool *done);

/* ---- conv_igemm.c: implicit GEMM (GPU shape; double, bfloat16, grouped) -- */

bool conv_igemm_forward(struct run *r, const struct conv_geo *g,
                        const TF_Tensor *x, const TF_Tensor *f,
                        const TF_Tensor *y, const TF_Tensor *bias);
bool conv_igemm_backprop_input(struct run *r, const struct conv_geo *g,
                               const TF_Tensor *f, const TF_Tensor *dy,
                               const TF_Tensor *dx);
bool conv_igemm_backprop_filter(struct run *r, const struct conv_geo *g,
                                const TF_Tensor *x, const TF_Tensor *dy,
                                const TF_Tensor *dw);

/* ---- conv_depthwise.c ---------------------------------------------------- */

bool conv_dw_forward(struct run *r, const struct conv_geo *g,
                     const TF_Tensor *x, const TF_Tensor *f,
                     const TF_Tensor *y);
bool conv_dw_backprop_input(struct run *r, const struct conv_geo *g,
                            const TF_Tensor *f, const TF_Tensor *dy,
                            TF_Tensor *dx);
bool conv_dw_backprop_filter(struct run *r, const struct conv_geo *g,
                             const TF_Tensor *x, const TF_Tensor *dy,
                             TF_Tensor *dw);

#endif /* TFOCL_KERNELS_CONV_INTERNAL_H_ */
