/* Host references of the op kernels, in float64.
 *
 * One table of `struct ref_op`, one entry per op, serves both `tfocl run`
 * (one op on random inputs, max error printed) and the `ops` test suite
 * (every registered (op, dtype) against its reference). A kernel family
 * adds `ref_<family>.c` with its entries; an op registered by the plugin but
 * missing here fails the ops suite, so coverage cannot silently lag.
 *
 * Values travel as float64 host arrays: exact for bool, int32 and int64 up
 * to 2^53 (what tests use), and a superset of every float type. */
#ifndef TFOCL_REFERENCE_H_
#define TFOCL_REFERENCE_H_

#include <stdbool.h>
#include <stdint.h>

#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tfocl/host.h"

#define REF_MAX_DIMS 16
#define REF_MAX_TENSORS 16
#define REF_MAX_ATTRS 12

struct ref_tensor {
  TF_DataType dtype;
  int rank;
  int64_t dims[REF_MAX_DIMS];
  int64_t elements;
  /* elements * ref_lanes(dtype) values, row-major (complex: real and
   * imaginary parts interleaved). */
  double *v;
};

/* One op invocation: attributes and inputs; the reference fills outputs.
 * All storage (attr arrays, names) lives in the case itself. */
struct ref_case {
  char label[128];
  char op[64];
  int num_attrs;
  struct tfocl_attr attrs[REF_MAX_ATTRS];
  int num_inputs;
  struct ref_tensor inputs[REF_MAX_TENSORS];
  /* A case that must fail with this code (bad shapes or attributes);
   * TF_OK for a case that must succeed. */
  TF_Code expect_code;
  /* Arena for attr lists and strings the case points into. */
  int64_t ints[64];
  int num_ints;
  TF_DataType types[16];
  int num_types;
};

struct ref_cases {
  struct ref_case *items;
  int count;
  int capacity;
};

/* Input value domains for random generation. */
enum ref_domain {
  REF_ANY,      /* uniform in [-3, 3] (ints: [-10, 10]) */
  REF_POSITIVE, /* (0.1, 4] */
  REF_UNIT,     /* (-0.95, 0.95): inverse trig, atanh */
  REF_NONZERO,  /* [-3, 3] without (-0.25, 0.25): divisors */
  REF_BOOL      /* 0 or 1 */
};

struct ref_op {
  const char *op;
  /* |got - want| <= atol + rtol * |want|, per element; NaN matches NaN and
   * equal infinities match. The tolerance is the op's documented accuracy
   * on float32; half widens it by ref_half_factor. atol = INFINITY: the
   * op leaves its output values unspecified (_ParallelConcatStart's
   * uninitialised buffer), only shapes are compared. */
  double rtol;
  double atol;
  enum ref_domain domain;
  /* Appends the op's cases for `dtype`: random inputs of several shapes
   * (odd sizes, not multiples of any work-group), edge values (empty,
   * scalar, broadcast, NaN/Inf, large), and failing cases. */
  void (*cases)(const struct ref_op *op, TF_DataType dtype,
                struct ref_cases *out);
  /* Computes the outputs of `c` (allocating them with ref_tensor_alloc);
   * returns the number of outputs, or -1 with a message in `error` for a
   * case the op rejects. */
  int (*compute)(const struct ref_case *c, struct ref_tensor *outputs,
                 char *error, int error_len);
};

/* An op's tolerance on float64 where it has one of its own (the
 * element-wise families' rows: a double kernel is held to a few ulp of
 * double, not to float's bound); other ops take struct ref_op's on float64
 * too. Each family with such tolerances ends its table with op == NULL
 * (ref_table.c). */
struct ref_double_tolerance {
  const char *op;
  double rtol;
  double atol;
};

const struct ref_double_tolerance *ref_double_tolerance_find(const char *op);

/* For ops whose outputs are not unique (Qr's q and r up to signs): a check
 * that judges the device's outputs `got` itself, given the case and the
 * reference's outputs `want` (same count, shapes compared already), with
 * the op's tolerance. Returns the number of mismatches (0: passed), the
 * largest error and a message for the first mismatch. Ops without one
 * have every output compared with the reference's element by element.
 * Each family with checks ends its table with op == NULL (ref_table.c). */
struct ref_check {
  const char *op;
  int64_t (*check)(const struct ref_case *c, const struct ref_tensor *got,
                   const struct ref_tensor *want, int num_outputs,
                   double rtol, double atol, double *max_error, char *msg,
                   int msg_len);
};

/* The op's check, or NULL. */
const struct ref_check *ref_check_find(const char *op);

/* Every op with a reference; NULL if none. */
const struct ref_op *ref_op_find(const char *op);
/* The reference of `op`'s kernels whose first type constraint is `dtype`:
 * complex64 and complex128 kernels of AddV2, Mul, Neg, ... are the complex
 * family's (ref_complex.c), the others those of ref_op_find. */
const struct ref_op *ref_op_find_typed(const char *op, TF_DataType dtype);
/* Whether TFOCL_OPS_FILTER (a comma list of op names; unset or empty: all)
 * selects `op`, for suites that run some ops only. */
bool ref_op_selected(const char *op);
/* Whether the ops suite runs on the Oclgrind simulator (tests/ops/oclgrind
 * names the device so), where cases keep to a few million work-item
 * steps. */
bool ref_on_oclgrind(void);
int ref_op_count(void);
const struct ref_op *ref_op_at(int index);

/* ---- Building cases ---------------------------------------------------- */

/* A new zeroed case for `op`, appended to `out`. */
struct ref_case *ref_case_add(struct ref_cases *out, const char *op,
                              const char *label_fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds an input of dtype/shape filled from `domain` with the case's
 * deterministic generator (seeded by label). */
struct ref_tensor *ref_case_input(struct ref_case *c, TF_DataType dtype,
                                  const int64_t *dims, int rank,
                                  enum ref_domain domain);
/* Adds an input with given values (count must equal the shape's elements). */
struct ref_tensor *ref_case_input_values(struct ref_case *c, TF_DataType dtype,
                                         const int64_t *dims, int rank,
                                         const double *values);
void ref_case_attr_int(struct ref_case *c, const char *name, int64_t v);
void ref_case_attr_float(struct ref_case *c, const char *name, float v);
void ref_case_attr_bool(struct ref_case *c, const char *name, bool v);
void ref_case_attr_type(struct ref_case *c, const char *name, TF_DataType v);
/* `v` must outlive the case (a string literal). */
void ref_case_attr_string(struct ref_case *c, const char *name, const char *v);
void ref_case_attr_ints(struct ref_case *c, const char *name,
                        const int64_t *v, int count);
/* A `shape` attribute of `rank` dims. */
void ref_case_attr_shape(struct ref_case *c, const char *name,
                         const int64_t *dims, int rank);
/* The attribute of that name, or NULL. */
const struct tfocl_attr *ref_case_attr(const struct ref_case *c,
                                       const char *name);
int64_t ref_case_attr_int_or(const struct ref_case *c, const char *name,
                             int64_t fallback);
double ref_case_attr_float_or(const struct ref_case *c, const char *name,
                              double fallback);
bool ref_case_attr_bool_or(const struct ref_case *c, const char *name,
                           bool fallback);
const char *ref_case_attr_string_or(const struct ref_case *c, const char *name,
                                    const char *fallback);
/* NumPy broadcast of x and y: the output shape (false if incompatible), and
 * for output element i the indices of x and y. */
bool ref_broadcast_shape(const struct ref_tensor *x, const struct ref_tensor *y,
                         int64_t *out_dims, int *out_rank);
void ref_broadcast_index(const struct ref_tensor *x, const struct ref_tensor *y,
                         const int64_t *out_dims, int out_rank, int64_t i,
                         int64_t *xi, int64_t *yi);

void ref_cases_finish(struct ref_cases *cases);

/* One element of an op of the unary and binary families, in float64 and
 * unrounded (ref_unary.c, ref_binary.c): other references compose them.
 * `op` is TensorFlow's name; gradients take their inputs in TensorFlow's
 * order. */
double ref_unary_value(const char *op, TF_DataType dtype, double a);
double ref_grad_value(const char *op, double a, double b);
double ref_binary_value(const char *op, TF_DataType dtype, double a,
                        double b);

/* Standard shape sets, shared by families. */
/* Unary: scalar, [1], [7], [3,5], [2,3,7], [1031] (odd), [0], [4,0]. */
void ref_cases_unary(const struct ref_op *op, TF_DataType dtype,
                     struct ref_cases *out);
/* Binary: same shapes, scalar on either side, row/column broadcast,
 * broadcast on both sides, rank mismatch, empty, and one incompatible pair
 * (INVALID_ARGUMENT). */
void ref_cases_binary(const struct ref_op *op, TF_DataType dtype,
                      struct ref_cases *out);

/* ---- Tensors ----------------------------------------------------------- */

bool ref_tensor_alloc(struct ref_tensor *t, TF_DataType dtype,
                      const int64_t *dims, int rank);
void ref_tensor_finish(struct ref_tensor *t);
/* Host TF_Tensor of t's dtype holding t's values (rounded to the dtype). */
TF_Tensor *ref_tensor_to_tf(const struct ref_tensor *t, TF_Status *status);
/* Reads a host TF_Tensor into t (float64). */
bool ref_tensor_from_tf(struct ref_tensor *t, const TF_Tensor *tensor);
/* Values per element: 2 for complex64/complex128 (real, imaginary), else 1. */
int ref_lanes(TF_DataType dtype);
/* Rounds v to what dtype can hold (float32/half rounding, integer wrap; a
 * complex dtype rounds each part). */
double ref_round_to(TF_DataType dtype, double v);
/* Widening of the tolerance for half precision. */
#define REF_HALF_FACTOR 400.0

/* Compares got against want; returns the number of mismatches and the max
 * absolute error. Shapes must be equal (else -1). */
int64_t ref_compare(const struct ref_tensor *got, const struct ref_tensor *want,
                    double rtol, double atol, double *max_error,
                    int64_t *first_bad);

/* ---- Running a case on a device ---------------------------------------- */

struct ref_result {
  bool passed;
  /* The run's status (TF_OK, or the op's error). */
  TF_Code code;
  char message[512];
  double max_error;
  int64_t mismatches;
  int num_outputs;
};

/* Runs `c` on `device` through the op runner, computes the reference, and
 * compares every output with the op's tolerance. A case with expect_code
 * passes when the run fails with that code. */
void ref_run_case(struct tfocl_device *device, const struct ref_op *op,
                  const struct ref_case *c, struct ref_result *result);

#endif /* TFOCL_REFERENCE_H_ */
