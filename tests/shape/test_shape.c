/* Shape logic of kernels/shape.c: broadcasting, reductions, transposes,
 * slices, tiles and pads; and the windowed geometry of
 * kernels/conv_geometry.c (convolution and pooling sizes and checks). */
#include <check.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_geometry.h"
#include "shape.h"
#include "status_format.h"

/* The plugin sets statuses through its resolved TensorFlow API; here the
 * host shim's TF_SetStatus stands in. */
void ocl_set_status(TF_Status *status, TF_Code code, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  TF_SetStatus(status, code, msg);
}

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define RANK(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

static TF_Status *status;

static void setup(void) { status = TF_NewStatus(); }
static void teardown(void) { TF_DeleteStatus(status); }

START_TEST(bcast_same_shape_collapses_to_one_dim)
{
  struct ocl_bcast b;
  ck_assert(ocl_bcast_init(&b, DIMS(2, 3, 4), 3, DIMS(2, 3, 4), 3, status));
  ck_assert_int_eq(b.out_rank, 3);
  ck_assert_int_eq(b.rank, 1);
  ck_assert_int_eq(b.dims[0], 24);
  ck_assert(b.same_shape);
  ck_assert_int_eq(b.out_elements, 24);
}
END_TEST

START_TEST(bcast_row_vector)
{
  struct ocl_bcast b;
  ck_assert(ocl_bcast_init(&b, DIMS(5, 3), 2, DIMS(3), 1, status));
  ck_assert_int_eq(b.out_rank, 2);
  ck_assert_int_eq(b.out_dims[0], 5);
  ck_assert_int_eq(b.out_dims[1], 3);
  ck_assert_int_eq(b.rank, 2);
  ck_assert_int_eq(b.x_strides[0], 3);
  ck_assert_int_eq(b.x_strides[1], 1);
  ck_assert_int_eq(b.y_strides[0], 0);
  ck_assert_int_eq(b.y_strides[1], 1);
  ck_assert(!b.same_shape);
}
END_TEST

START_TEST(bcast_both_sides_and_merge)
{
  /* [2,1,4,5] vs [3,1,1]: out [2,3,4,5]; dims 4,5 broadcast alike merge. */
  struct ocl_bcast b;
  ck_assert(ocl_bcast_init(&b, DIMS(2, 1, 4, 5), 4, DIMS(3, 1, 1), 3, status));
  ck_assert_int_eq(b.out_rank, 4);
  ck_assert_int_eq(b.out_elements, 120);
  ck_assert_int_eq(b.rank, 3);
  ck_assert_int_eq(b.dims[0], 2);
  ck_assert_int_eq(b.dims[1], 3);
  ck_assert_int_eq(b.dims[2], 20);
  ck_assert_int_eq(b.x_strides[0], 20);
  ck_assert_int_eq(b.x_strides[1], 0);
  ck_assert_int_eq(b.x_strides[2], 1);
  ck_assert_int_eq(b.y_strides[0], 0);
  ck_assert_int_eq(b.y_strides[1], 1);
  ck_assert_int_eq(b.y_strides[2], 0);
}
END_TEST

START_TEST(bcast_scalar_and_empty)
{
  struct ocl_bcast b;
  ck_assert(ocl_bcast_init(&b, DIMS(0), 0, DIMS(4, 0), 2, status));
  ck_assert_int_eq(b.out_elements, 0);
  ck_assert(b.x_scalar);
  ck_assert(ocl_bcast_init(&b, DIMS(0), 0, DIMS(0), 0, status));
  ck_assert_int_eq(b.out_rank, 0);
  ck_assert_int_eq(b.out_elements, 1);
  ck_assert(b.same_shape);
}
END_TEST

START_TEST(bcast_incompatible_message)
{
  struct ocl_bcast b;
  ck_assert(!ocl_bcast_init(&b, DIMS(2, 3), 2, DIMS(4), 1, status));
  ck_assert_int_eq(TF_GetCode(status), TF_INVALID_ARGUMENT);
  ck_assert_str_eq(TF_Message(status), "Incompatible shapes: [2,3] vs. [4]");
}
END_TEST

/* What common.clh's ocl_fastdiv computes, in 32-bit unsigned arithmetic
 * as a device does. */
static uint32_t fastdiv(uint32_t n, struct ocl_fastdiv f)
{
  uint32_t hi = (uint32_t)(((uint64_t)n * f.magic) >> 32);
  return (hi + n) >> f.shift;
}

START_TEST(fastdiv_is_exact_below_2_pow_31)
{
  /* Every divisor up to 4096 and each power of two and its neighbours,
   * against numerators at the multiples' edges and the top of the range. */
  uint32_t divisors[4096 + 3 * 31];
  int num = 0;
  for (uint32_t d = 1; d <= 4096; d++)
    divisors[num++] = d;
  for (int b = 1; b <= 31; b++) {
    uint32_t p = (uint32_t)1 << b;
    divisors[num++] = p - 1;
    divisors[num++] = p;
    if (b < 31)
      divisors[num++] = p + 1;
  }
  const uint32_t top = 0x7fffffffu;
  uint64_t seed = 1;
  for (int i = 0; i < num; i++) {
    uint32_t d = divisors[i];
    struct ocl_fastdiv f = ocl_fastdiv_of(d);
    uint32_t edges[] = {0,   1,       d - 1,   d,           d + 1,
                        top, top - 1, top - d, top / d * d, top / d * d - 1};
    for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++) {
      uint32_t n = edges[e];
      if (n > top)
        continue;
      ck_assert_msg(fastdiv(n, f) == n / d, "%u / %u: %u", n, d, fastdiv(n, f));
    }
    for (int k = 0; k < 200; k++) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      uint32_t n = (uint32_t)(seed >> 33);
      ck_assert_msg(fastdiv(n, f) == n / d, "%u / %u: %u", n, d, fastdiv(n, f));
    }
  }
}
END_TEST

START_TEST(broadcast_to_strides)
{
  struct ocl_broadcast_to b;
  ck_assert(ocl_broadcast_to_init(&b, DIMS(3, 1), 2, DIMS(2, 3, 4), 3, status));
  ck_assert_int_eq(b.out_elements, 24);
  ck_assert_int_eq(b.rank, 3);
  ck_assert_int_eq(b.in_strides[0], 0);
  ck_assert_int_eq(b.in_strides[1], 1);
  ck_assert_int_eq(b.in_strides[2], 0);
  ck_assert(!ocl_broadcast_to_init(&b, DIMS(3), 1, DIMS(4), 1, status));
  ck_assert_int_eq(TF_GetCode(status), TF_INVALID_ARGUMENT);
}
END_TEST

/* An empty output with dims whose product overflows (TensorShape allows
 * [0, 2^63 - 1, 5]): nothing to broadcast, no overflow computing it
 * (UBSan's build catches one), wherever the zero is. */
START_TEST(broadcast_to_empty_with_huge_dims)
{
  struct ocl_broadcast_to b;
  ck_assert(
      ocl_broadcast_to_init(&b, DIMS(1), 1, DIMS(0, INT64_MAX, 5), 3, status));
  ck_assert_int_eq(b.out_elements, 0);
  ck_assert(
      ocl_broadcast_to_init(&b, DIMS(5), 1, DIMS(INT64_MAX, 0, 5), 3, status));
  ck_assert_int_eq(b.out_elements, 0);
  ck_assert_int_eq(ocl_shape_elements(DIMS(INT64_MAX, 5, 0), 3), 0);
  ck_assert_int_eq(ocl_shape_elements(DIMS(4, 5, 6), 3), 120);
}
END_TEST

START_TEST(reduction_rows_cols_and_negative_axes)
{
  struct ocl_reduction r;
  ck_assert(ocl_reduction_init(&r, DIMS(4, 5), 2, DIMS(1), 1, false, status));
  ck_assert(r.valid_3d);
  ck_assert_int_eq(r.outer, 4);
  ck_assert_int_eq(r.reduce, 5);
  ck_assert_int_eq(r.inner, 1);
  ck_assert_int_eq(r.out_rank, 1);
  ck_assert_int_eq(r.out_dims[0], 4);

  ck_assert(ocl_reduction_init(&r, DIMS(4, 5), 2, DIMS(-2), 1, true, status));
  ck_assert(r.valid_3d);
  ck_assert_int_eq(r.outer, 1);
  ck_assert_int_eq(r.reduce, 4);
  ck_assert_int_eq(r.inner, 5);
  ck_assert_int_eq(r.out_rank, 2);
  ck_assert_int_eq(r.out_dims[0], 1);
  ck_assert_int_eq(r.out_dims[1], 5);
}
END_TEST

START_TEST(reduction_general_and_all_axes)
{
  struct ocl_reduction r;
  ck_assert(ocl_reduction_init(&r, DIMS(2, 3, 4), 3, DIMS(0, 2), 2, false,
                               status));
  ck_assert(!r.valid_3d);
  ck_assert_int_eq(r.rank, 3);
  ck_assert_int_eq(r.out_elements, 3);

  /* Size-1 axes. */
  ck_assert(ocl_reduction_init(&r, DIMS(2, 1, 4), 3, DIMS(0, 1, 2), 3,
                               false, status));
  ck_assert(r.valid_3d);
  ck_assert_int_eq(r.reduce, 8);
  ck_assert_int_eq(r.out_rank, 0);
  ck_assert_int_eq(r.out_elements, 1);

  /* No axes: identity. */
  ck_assert(ocl_reduction_init(&r, DIMS(2, 3), 2, NULL, 0, false, status));
  ck_assert(r.valid_3d);
  ck_assert_int_eq(r.reduce, 1);
  ck_assert_int_eq(r.outer, 6);
}
END_TEST

START_TEST(reduction_bad_axis_message)
{
  struct ocl_reduction r;
  ck_assert(!ocl_reduction_init(&r, DIMS(4, 5), 2, DIMS(2), 1, false, status));
  ck_assert_int_eq(TF_GetCode(status), TF_INVALID_ARGUMENT);
  ck_assert_str_eq(TF_Message(status),
                   "Invalid reduction dimension (2 for input with 2 "
                   "dimension(s)");

  /* Repeats fail as TensorFlow's ReductionHelper does: the first repeat,
   * normalised, in the order given. */
  ck_assert(!ocl_reduction_init(&r, DIMS(2, 3, 4), 3, DIMS(1, 0, -3, 5), 4,
                                false, status));
  ck_assert_int_eq(TF_GetCode(status), TF_INVALID_ARGUMENT);
  ck_assert_str_eq(TF_Message(status),
                   "Invalid reduction arguments: Axes contains duplicate "
                   "dimension: 0");
  /* An out-of-range axis before the repeat is the error. */
  ck_assert(!ocl_reduction_init(&r, DIMS(2, 3), 2, DIMS(0, 2, 0), 3, false,
                                status));
  ck_assert_str_eq(TF_Message(status),
                   "Invalid reduction dimension (2 for input with 2 "
                   "dimension(s)");

  /* Rank 12 with alternating groups collapses into 12 dims. */
  ck_assert(ocl_reduction_init(
      &r, DIMS(2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3), 12,
      DIMS(1, 3, 5, 7, 9, 11), 6, true, status));
  ck_assert_int_eq(r.rank, 12);
  ck_assert(!r.valid_3d);
  ck_assert_int_eq(r.out_rank, 12);
  ck_assert_int_eq(r.out_elements, 64);
}
END_TEST

START_TEST(transpose_collapses_adjacent_dims)
{
  struct ocl_transpose t;
  /* [2,3,4,5] perm [2,3,0,1] is a 2-D transpose of [6,20]. */
  ck_assert(ocl_transpose_init(&t, DIMS(2, 3, 4, 5), 4, DIMS(2, 3, 0, 1), 4,
                               status));
  ck_assert_int_eq(t.out_dims[0], 4);
  ck_assert_int_eq(t.out_dims[3], 3);
  ck_assert_int_eq(t.rank, 2);
  ck_assert_int_eq(t.dims[0], 20);
  ck_assert_int_eq(t.dims[1], 6);
  ck_assert_int_eq(t.in_strides[0], 1);
  ck_assert_int_eq(t.in_strides[1], 20);
  ck_assert(!t.identity);

  ck_assert(ocl_transpose_init(&t, DIMS(2, 1, 3), 3, DIMS(1, 0, 2), 3, status));
  ck_assert(t.identity);
}
END_TEST

START_TEST(transpose_bad_perm_messages)
{
  struct ocl_transpose t;
  ck_assert(!ocl_transpose_init(&t, DIMS(2, 3), 2, DIMS(0, 1, 2), 3, status));
  ck_assert_int_eq(TF_GetCode(status), TF_INVALID_ARGUMENT);
  ck_assert_str_eq(TF_Message(status),
                   "transpose expects a vector of size 2. But input(1) is a "
                   "vector of size 3");
  ck_assert(!ocl_transpose_init(&t, DIMS(2, 3), 2, DIMS(0, 0), 2, status));
  ck_assert_str_eq(TF_Message(status), "1 is missing from {0,0}.");
  /* Ranges first, as TensorFlow checks them: the 3 before the missing 1. */
  ck_assert(!ocl_transpose_init(&t, DIMS(2, 3, 4), 3, DIMS(0, 0, 3), 3,
                                status));
  ck_assert_str_eq(TF_Message(status), "3 is out of range [0 .. 3)");
}
END_TEST

START_TEST(bcast3_select_shapes)
{
  /* condition [5,1], then [5,3], else scalar: out [5,3], else stride 0. */
  struct ocl_bcast3 b;
  const int64_t *dims[3] = {DIMS(5, 1), DIMS(5, 3), DIMS(0)};
  ck_assert(ocl_bcast3_init(&b, dims, (const int[]){2, 2, 0}, status));
  ck_assert_int_eq(b.out_rank, 2);
  ck_assert_int_eq(b.out_dims[0], 5);
  ck_assert_int_eq(b.out_dims[1], 3);
  ck_assert_int_eq(b.out_elements, 15);
  ck_assert_int_eq(b.rank, 2);
  ck_assert_int_eq(b.strides[0][0], 1);
  ck_assert_int_eq(b.strides[0][1], 0);
  ck_assert_int_eq(b.strides[1][0], 3);
  ck_assert_int_eq(b.strides[1][1], 1);
  ck_assert_int_eq(b.strides[2][0], 0);
  ck_assert_int_eq(b.strides[2][1], 0);
  ck_assert(!b.same_shape);

  /* Equal shapes collapse to one flat dim. */
  const int64_t *same[3] = {DIMS(2, 3, 4), DIMS(2, 3, 4), DIMS(2, 3, 4)};
  ck_assert(ocl_bcast3_init(&b, same, (const int[]){3, 3, 3}, status));
  ck_assert_int_eq(b.rank, 1);
  ck_assert_int_eq(b.dims[0], 24);
  ck_assert(b.same_shape);

  /* Each operand broadcast along a different dim. */
  const int64_t *mixed[3] = {DIMS(2, 1, 1), DIMS(1, 3, 1), DIMS(4)};
  ck_assert(ocl_bcast3_init(&b, mixed, (const int[]){3, 3, 1}, status));
  ck_assert_int_eq(b.out_elements, 24);
  ck_assert_int_eq(b.rank, 3);
  ck_assert_int_eq(b.strides[0][0], 1);
  ck_assert_int_eq(b.strides[1][1], 1);
  ck_assert_int_eq(b.strides[2][2], 1);
  ck_assert_int_eq(b.strides[0][2], 0);

  /* Empty output. */
  const int64_t *empty[3] = {DIMS(0, 1), DIMS(1, 3), DIMS(1)};
  ck_assert(ocl_bcast3_init(&b, empty, (const int[]){2, 2, 1}, status));
  ck_assert_int_eq(b.out_elements, 0);

  const int64_t *bad[3] = {DIMS(2), DIMS(3), DIMS(1)};
  ck_assert(!ocl_bcast3_init(&b, bad, (const int[]){1, 1, 1}, status));
  ck_assert_int_eq(TF_GetCode(status), TF_INVALID_ARGUMENT);
  ck_assert_str_eq(TF_Message(status),
                   "Incompatible shapes: [2] vs. [3] vs. [1]");
}
END_TEST

START_TEST(bcastn_fused_shapes)
{
  /* Adam's update: three full operands and two scalars: flat, one dim. */
  struct ocl_bcastn b;
  const int64_t *adam[5] = {DIMS(64, 10), DIMS(0), DIMS(64, 10), DIMS(0),
                            DIMS(64, 10)};
  ck_assert(ocl_bcastn_init(&b, adam, (const int[]){2, 0, 2, 0, 2}, 5,
                            status));
  ck_assert_int_eq(b.out_rank, 2);
  ck_assert_int_eq(b.out_elements, 640);
  ck_assert_int_eq(b.rank, 1);
  ck_assert(b.flat);
  ck_assert(!b.same_shape);
  ck_assert(b.single[1] && b.single[3] && !b.single[0]);
  ck_assert_int_eq(b.strides[0][0], 1);
  ck_assert_int_eq(b.strides[1][0], 0);

  /* Four operands, each along other dims; the output takes the longest
   * rank, size-1 output dims drop out. */
  const int64_t *mixed[4] = {DIMS(2, 1, 1, 4), DIMS(3, 1), DIMS(1, 1, 3, 4),
                             DIMS(1)};
  ck_assert(ocl_bcastn_init(&b, mixed, (const int[]){4, 2, 4, 1}, 4, status));
  ck_assert_int_eq(b.out_rank, 4);
  ck_assert_int_eq(b.out_dims[0], 2);
  ck_assert_int_eq(b.out_dims[1], 1);
  ck_assert_int_eq(b.out_dims[2], 3);
  ck_assert_int_eq(b.out_dims[3], 4);
  ck_assert_int_eq(b.out_elements, 24);
  ck_assert_int_eq(b.rank, 3);
  ck_assert_int_eq(b.dims[0], 2);
  ck_assert_int_eq(b.dims[1], 3);
  ck_assert_int_eq(b.dims[2], 4);
  /* [2,1,1,4]: strides 4, 0, 1; [3,1]: 0, 1, 0; [1,1,3,4]: 0, 4, 1. */
  ck_assert_int_eq(b.strides[0][0], 4);
  ck_assert_int_eq(b.strides[0][1], 0);
  ck_assert_int_eq(b.strides[0][2], 1);
  ck_assert_int_eq(b.strides[1][0], 0);
  ck_assert_int_eq(b.strides[1][1], 1);
  ck_assert_int_eq(b.strides[1][2], 0);
  ck_assert_int_eq(b.strides[2][0], 0);
  ck_assert_int_eq(b.strides[2][1], 4);
  ck_assert_int_eq(b.strides[2][2], 1);
  ck_assert_int_eq(b.strides[3][2], 0);
  ck_assert(!b.flat);

  /* Equal shapes: one flat dim. */
  const int64_t *same[2] = {DIMS(3, 5), DIMS(3, 5)};
  ck_assert(ocl_bcastn_init(&b, same, (const int[]){2, 2}, 2, status));
  ck_assert(b.same_shape && b.flat);
  ck_assert_int_eq(b.rank, 1);
  ck_assert_int_eq(b.dims[0], 15);

  /* A 0 against 1s is empty; against 3 it is an error naming all. */
  const int64_t *empty[3] = {DIMS(0, 1), DIMS(1, 3), DIMS(1)};
  ck_assert(ocl_bcastn_init(&b, empty, (const int[]){2, 2, 1}, 3, status));
  ck_assert_int_eq(b.out_elements, 0);
  const int64_t *bad[4] = {DIMS(2), DIMS(1), DIMS(3), DIMS(0)};
  ck_assert(!ocl_bcastn_init(&b, bad, (const int[]){1, 1, 1, 0}, 4, status));
  ck_assert_int_eq(TF_GetCode(status), TF_INVALID_ARGUMENT);
  ck_assert_str_eq(TF_Message(status),
                   "Incompatible shapes: [2] vs. [1] vs. [3] vs. []");
  /* More operands than it takes: refused before any is read. */
  ck_assert(!ocl_bcastn_init(&b, bad, (const int[]){1, 1, 1, 0},
                             OCL_BCASTN_MAX + 1, status));
  ck_assert_int_eq(TF_GetCode(status), TF_INVALID_ARGUMENT);
}
END_TEST

START_TEST(strided_copy_collapses_rows)
{
  /* Concat block: [3 rows, 4 cols] into rows of 10 at column 6. */
  struct ocl_strided_copy c;
  ocl_strided_copy_init(&c, DIMS(3, 4), 2, DIMS(4, 1), DIMS(10, 1), 0, 6);
  ck_assert_int_eq(c.rank, 2);
  ck_assert_int_eq(c.elements, 12);
  ck_assert(!c.contiguous);
  /* One row only: contiguous. */
  ocl_strided_copy_init(&c, DIMS(1, 4), 2, DIMS(4, 1), DIMS(10, 1), 0, 6);
  ck_assert(c.contiguous);
  ck_assert_int_eq(c.out_offset, 6);
  /* Dense [2,3,4] on both sides merges into one dim. */
  ocl_strided_copy_init(&c, DIMS(2, 3, 4), 3, DIMS(12, 4, 1), DIMS(12, 4, 1),
                        0, 0);
  ck_assert_int_eq(c.rank, 1);
  ck_assert_int_eq(c.dims[0], 24);
  ck_assert(c.contiguous);
  /* Negative strides stay. */
  ocl_strided_copy_init(&c, DIMS(5), 1, DIMS(-1), DIMS(1), 4, 0);
  ck_assert_int_eq(c.in_strides[0], -1);
  ck_assert(!c.contiguous);
  /* A scalar. */
  ocl_strided_copy_init(&c, DIMS(0), 0, DIMS(0), DIMS(0), 3, 0);
  ck_assert_int_eq(c.elements, 1);
  ck_assert(c.contiguous);
}
END_TEST

static bool slice(struct ocl_strided_slice *s, const int64_t *dims, int rank,
                  const int64_t *b, const int64_t *e, const int64_t *st,
                  int n, int bm, int em, int elm, int nam, int sam)
{
  return ocl_strided_slice_init(s, dims, rank, b, e, st, n, bm, em, elm, nam,
                                sam, status);
}

START_TEST(strided_slice_masks_and_shapes)
{
  struct ocl_strided_slice s;
  /* x[1:3, ::-2] of [4,5]: rows 1..2, cols 4,2,0. */
  ck_assert(slice(&s, DIMS(4, 5), 2, DIMS(1, 0), DIMS(3, 0), DIMS(1, -2), 2,
                  2, 2, 0, 0, 0));
  ck_assert_int_eq(s.final_rank, 2);
  ck_assert_int_eq(s.final_dims[0], 2);
  ck_assert_int_eq(s.final_dims[1], 3);
  ck_assert_int_eq(s.begin[1], 4);
  ck_assert_int_eq(s.strides[1], -2);
  ck_assert(!s.is_identity);
  /* x[-1] of [4,5]: shrink -> [5], begin 3. */
  ck_assert(slice(&s, DIMS(4, 5), 2, DIMS(-1), DIMS(0), DIMS(1), 1, 0, 0, 0,
                  0, 1));
  ck_assert_int_eq(s.final_rank, 1);
  ck_assert_int_eq(s.final_dims[0], 5);
  ck_assert_int_eq(s.begin[0], 3);
  /* x[..., newaxis, 2] of [2,3,4]: [2,3,1]. */
  ck_assert(slice(&s, DIMS(2, 3, 4), 3, DIMS(0, 0, 2), DIMS(0, 0, 3),
                  DIMS(1, 1, 1), 3, 0, 0, 1, 2, 4));
  ck_assert_int_eq(s.final_rank, 3);
  ck_assert_int_eq(s.final_dims[0], 2);
  ck_assert_int_eq(s.final_dims[1], 3);
  ck_assert_int_eq(s.final_dims[2], 1);
  ck_assert_int_eq(s.begin[2], 2);
  /* x[:] masked whole: identity. */
  ck_assert(slice(&s, DIMS(3, 2), 2, DIMS(0), DIMS(0), DIMS(1), 1, 1, 1, 0, 0,
                  0));
  ck_assert(s.is_identity);
  /* Out-of-range bounds clamp; an empty interval has size 0. */
  ck_assert(slice(&s, DIMS(4), 1, DIMS(-100), DIMS(100), DIMS(1), 1, 0, 0, 0,
                  0, 0));
  ck_assert_int_eq(s.final_dims[0], 4);
  ck_assert(slice(&s, DIMS(4), 1, DIMS(3), DIMS(1), DIMS(1), 1, 0, 0, 0, 0,
                  0));
  ck_assert_int_eq(s.final_dims[0], 0);
  ck_assert_int_eq(s.elements, 0);
}
END_TEST

START_TEST(strided_slice_error_messages)
{
  struct ocl_strided_slice s;
  ck_assert(!slice(&s, DIMS(4), 1, DIMS(0), DIMS(1), DIMS(0), 1, 0, 0, 0, 0,
                   0));
  ck_assert_int_eq(TF_GetCode(status), TF_INVALID_ARGUMENT);
  ck_assert_str_eq(TF_Message(status), "strides[0] must be non-zero");
  ck_assert(!slice(&s, DIMS(4), 1, DIMS(4), DIMS(5), DIMS(1), 1, 0, 0, 0, 0,
                   1));
  ck_assert_str_eq(TF_Message(status),
                   "slice index 4 of dimension 0 out of bounds.");
  ck_assert(!slice(&s, DIMS(4), 1, DIMS(0, 0), DIMS(1, 1), DIMS(1, 1), 2, 0,
                   0, 0, 0, 0));
  ck_assert_str_eq(TF_Message(status),
                   "Index out of range using input dim 1; input has only 1 "
                   "dims");
  ck_assert(!slice(&s, DIMS(4), 1, DIMS(0, 0), DIMS(1, 1), DIMS(1, 1), 2, 0,
                   0, 3, 0, 0));
  ck_assert_str_eq(TF_Message(status),
                   "Multiple ellipses in slice spec not allowed");
  ck_assert(!slice(&s, DIMS(4), 1, DIMS(1), DIMS(2), DIMS(-1), 1, 0, 0, 0, 0,
                   1));
  ck_assert_str_eq(TF_Message(status),
                   "only stride 1 allowed on non-range indexing.");
  /* A scalar takes new axes and an empty spec, never an index. */
  ck_assert(!slice(&s, DIMS(0), 0, DIMS(0), DIMS(1), DIMS(1), 1, 0, 0, 0, 0,
                   0));
  ck_assert_str_eq(TF_Message(status), "Attempting to slice scalar input.");
  ck_assert(slice(&s, DIMS(0), 0, DIMS(0), DIMS(1), DIMS(1), 1, 0, 0, 0, 1,
                  0));
  ck_assert_int_eq(s.final_rank, 1);
}
END_TEST

START_TEST(tile_and_pad_collapse)
{
  struct ocl_expand e;
  /* Tile [2,3,4] by [2,1,1]: the unrepeated dims join the repeated one. */
  ocl_tile_collapse(&e, DIMS(2, 3, 4), 3, DIMS(2, 1, 1));
  ck_assert_int_eq(e.rank, 1);
  ck_assert_int_eq(e.dims[0], 48);
  ck_assert_int_eq(e.in_dims[0], 24);
  /* [2,1,3] by [1,5,2]: a leading unrepeated dim starts a group; the size-1
   * dim repeated stays. */
  ocl_tile_collapse(&e, DIMS(2, 1, 3), 3, DIMS(1, 5, 2));
  ck_assert_int_eq(e.rank, 3);
  ck_assert_int_eq(e.dims[1], 5);
  ck_assert_int_eq(e.in_dims[1], 1);
  ck_assert_int_eq(e.in_strides[0], 3);
  ck_assert_int_eq(e.out_strides[0], 30);
  ck_assert_int_eq(e.elements, 60);
  ck_assert_int_eq(e.in_elements, 6);
  /* All ones of size 1: one group of one element. */
  ocl_tile_collapse(&e, DIMS(1, 1), 2, DIMS(1, 1));
  ck_assert_int_eq(e.rank, 1);
  ck_assert_int_eq(e.elements, 1);
  /* Pad [3,4,5] by (1,2), none, none: one group, before scaled by 20. */
  ocl_pad_collapse(&e, DIMS(3, 4, 5), 3, DIMS(1, 0, 0), DIMS(2, 0, 0));
  ck_assert_int_eq(e.rank, 1);
  ck_assert_int_eq(e.dims[0], 120);
  ck_assert_int_eq(e.in_dims[0], 60);
  ck_assert_int_eq(e.before[0], 20);
  /* Padding in the last dim keeps two groups. */
  ocl_pad_collapse(&e, DIMS(3, 4), 2, DIMS(0, 1), DIMS(0, 1));
  ck_assert_int_eq(e.rank, 2);
  ck_assert_int_eq(e.dims[1], 6);
  ck_assert_int_eq(e.before[1], 1);
  ck_assert_int_eq(e.in_strides[0], 4);
  ck_assert_int_eq(e.out_strides[0], 6);
}
END_TEST

START_TEST(pool_output_sizes_and_padding)
{
  int64_t out, before = 0, after = 0;
  /* SAME: ceil(in / stride), the odd padding element after. */
  ck_assert(ocl_windowed_output_size(7, 3, 1, 2, OCL_PADDING_SAME, &out, &before,
                                 &after, status));
  ck_assert_int_eq(out, 4);
  ck_assert_int_eq(before, 1);
  ck_assert_int_eq(after, 1);
  ck_assert(ocl_windowed_output_size(6, 2, 1, 1, OCL_PADDING_SAME, &out, &before,
                                 &after, status));
  ck_assert_int_eq(out, 6);
  ck_assert_int_eq(before, 0);
  ck_assert_int_eq(after, 1);
  ck_assert(ocl_windowed_output_size(7, 3, 1, 2, OCL_PADDING_VALID, &out, &before,
                                 &after, status));
  ck_assert_int_eq(out, 3);
  ck_assert_int_eq(before + after, 0);
  before = 1;
  after = 2;
  ck_assert(ocl_windowed_output_size(5, 3, 1, 2, OCL_PADDING_EXPLICIT, &out, &before,
                                 &after, status));
  ck_assert_int_eq(out, 3);
  ck_assert(!ocl_windowed_output_size(2, 5, 1, 1, OCL_PADDING_VALID, &out, &before,
                                  &after, status));
  ck_assert_int_eq(TF_GetCode(status), TF_INVALID_ARGUMENT);
  ck_assert_str_eq(TF_Message(status),
                   "Computed output size would be negative: -2 [input_size: "
                   "2, effective_filter_size: 5, stride: 1]");
  ck_assert(!ocl_windowed_output_size(4, 2, 1, 0, OCL_PADDING_SAME, &out, &before,
                                  &after, status));
  ck_assert_str_eq(TF_Message(status), "Stride must be > 0, but got 0");
}
END_TEST

START_TEST(pool2d_nhwc_nchw_shapes)
{
  struct ocl_pool2d p;
  ck_assert(ocl_pool2d_init(&p, DIMS(3, 7, 5, 8), 4, DIMS(1, 3, 3, 1),
                            DIMS(1, 2, 2, 1), OCL_PADDING_SAME, NULL, false,
                            status));
  ck_assert_int_eq(p.out_rows, 4);
  ck_assert_int_eq(p.out_cols, 3);
  ck_assert_int_eq(p.pad_top, 1);
  ck_assert_int_eq(p.pad_left, 1);
  ck_assert_int_eq(p.out_dims[3], 8);
  ck_assert_int_eq(p.out_elements, 3 * 4 * 3 * 8);
  ck_assert(ocl_pool2d_init(&p, DIMS(3, 8, 7, 5), 4, DIMS(1, 1, 2, 2),
                            DIMS(1, 1, 2, 2), OCL_PADDING_VALID, NULL, true,
                            status));
  ck_assert_int_eq(p.depth, 8);
  ck_assert_int_eq(p.out_dims[1], 8);
  ck_assert_int_eq(p.out_dims[2], 3);
  ck_assert_int_eq(p.out_dims[3], 2);
  ck_assert(ocl_pool2d_init(&p, DIMS(1, 5, 6, 2), 4, DIMS(1, 3, 3, 1),
                            DIMS(1, 1, 1, 1), OCL_PADDING_EXPLICIT,
                            DIMS(0, 0, 1, 2, 2, 0, 0, 0), false, status));
  ck_assert_int_eq(p.pad_top, 1);
  ck_assert_int_eq(p.pad_left, 2);
  ck_assert_int_eq(p.out_rows, 6);
  ck_assert_int_eq(p.out_cols, 6);
}
END_TEST

START_TEST(pool2d_error_messages)
{
  struct ocl_pool2d p;
  ck_assert(!ocl_pool2d_init(&p, DIMS(4, 4, 1), 3, DIMS(1, 2, 2, 1),
                             DIMS(1, 1, 1, 1), OCL_PADDING_VALID, NULL, false,
                             status));
  ck_assert_str_eq(TF_Message(status),
                   "tensor_in_shape must have 2 spatial dimensions. 3 0");
  ck_assert(!ocl_pool2d_init(&p, DIMS(1, 4, 4, 4), 4, DIMS(1, 2, 2, 2),
                             DIMS(1, 1, 1, 1), OCL_PADDING_VALID, NULL, false,
                             status));
  ck_assert_int_eq(TF_GetCode(status), TF_UNIMPLEMENTED);
  ck_assert(!ocl_pool2d_init(&p, DIMS(1, 4, 4, 1), 4, DIMS(1, 2, 2, 1),
                             DIMS(1, 1, 1, 1), OCL_PADDING_EXPLICIT,
                             DIMS(0, 0, 2, 0, 0, 0, 0, 0), false, status));
  ck_assert_str_eq(TF_Message(status),
                   "Top padding 2 needs to be smaller than the window size 2");
  ck_assert(!ocl_pool2d_check_attrs(DIMS(1, 2, 2), 3, DIMS(1, 1, 1, 1), 4,
                                    OCL_PADDING_VALID, NULL, 0, false, status));
  ck_assert_str_eq(TF_Message(status),
                   "Sliding window ksize field must specify 4 dimensions");
  ck_assert(!ocl_pool2d_check_attrs(DIMS(1, 2, 0, 1), 4, DIMS(1, 1, 1, 1), 4,
                                    OCL_PADDING_VALID, NULL, 0, false, status));
  ck_assert_str_eq(TF_Message(status),
                   "Sliding window ksize for dimension 2 was zero.");
  ck_assert(!ocl_pool2d_check_attrs(DIMS(1, 2, 2, 1), 4, DIMS(1, 1, 1), 3,
                                    OCL_PADDING_VALID, NULL, 0, false, status));
  ck_assert_str_eq(TF_Message(status),
                   "Sliding window stride field must specify 4 dimensions");
  ck_assert(!ocl_pool2d_check_attrs(DIMS(2, 2, 2, 1), 4, DIMS(1, 1, 1, 1), 4,
                                    OCL_PADDING_VALID, NULL, 0, false, status));
  ck_assert_int_eq(TF_GetCode(status), TF_UNIMPLEMENTED);
  ck_assert_str_eq(TF_Message(status),
                   "Pooling is not yet supported on the batch dimension.");
  ck_assert(!ocl_pool2d_check_attrs(DIMS(1, 2, 2, 1), 4, DIMS(1, 1, 1, 1), 4,
                                    OCL_PADDING_EXPLICIT, DIMS(0, 0, 1, 1), 4,
                                    false, status));
  ck_assert_str_eq(TF_Message(status),
                   "explicit_paddings attribute must contain 8 values, but "
                   "got: 4");
  ck_assert(!ocl_pool2d_check_attrs(DIMS(1, 1, 2, 2), 4, DIMS(1, 1, 1, 1), 4,
                                    OCL_PADDING_EXPLICIT,
                                    DIMS(0, 0, 1, 0, 0, 0, 0, 0), 8, true,
                                    status));
  ck_assert_str_eq(TF_Message(status),
                   "Nonzero explicit padding in the batch or depth dimensions "
                   "is not supported");
  ck_assert(ocl_pool2d_check_attrs(DIMS(1, 1, 2, 2), 4, DIMS(1, 1, 1, 1), 4,
                                   OCL_PADDING_EXPLICIT,
                                   DIMS(0, 0, 0, 0, 1, 1, 0, 1), 8, true,
                                   status));
}
END_TEST

START_TEST(conv_windowed_output_sizes)
{
  int64_t out, before = 0, after = 0;
  /* Dilation 2 makes a 3-tap window 5 wide. */
  ck_assert(ocl_windowed_output_size(9, 3, 2, 1, OCL_PADDING_VALID, &out,
                                     &before, &after, status));
  ck_assert_int_eq(out, 5);
  ck_assert(ocl_windowed_output_size(11, 5, 1, 2, OCL_PADDING_SAME, &out,
                                     &before, &after, status));
  ck_assert_int_eq(out, 6);
  ck_assert_int_eq(before, 2);
  ck_assert_int_eq(after, 2);
  before = 0, after = 3;
  ck_assert(ocl_windowed_output_size(4, 3, 1, 2, OCL_PADDING_EXPLICIT, &out,
                                     &before, &after, status));
  ck_assert_int_eq(out, 3);
  ck_assert(!ocl_windowed_output_size(2, 3, 2, 1, OCL_PADDING_VALID, &out,
                                      &before, &after, status));
  ck_assert_str_eq(TF_Message(status),
                   "Computed output size would be negative: -2 [input_size: "
                   "2, effective_filter_size: 5, stride: 1]");
  ck_assert(!ocl_windowed_output_size(4, 3, 0, 1, OCL_PADDING_VALID, &out,
                                      &before, &after, status));
  ck_assert_str_eq(TF_Message(status), "Dilation rate must be >= 1, but got 0");
}
END_TEST

static struct ocl_conv_attrs conv_attrs(bool nchw, enum ocl_padding padding)
{
  struct ocl_conv_attrs a = {.channels_first = nchw, .padding = padding,
                             .num_strides = 4, .num_dilations = 4};
  for (int i = 0; i < 4; i++)
    a.strides[i] = a.dilations[i] = 1;
  return a;
}

START_TEST(conv2d_shapes_nhwc_nchw)
{
  struct ocl_conv2d c;
  struct ocl_conv_attrs a = conv_attrs(false, OCL_PADDING_SAME);
  a.strides[1] = a.strides[2] = 2;
  ck_assert(ocl_conv_check_attrs(&a, false, false, status));
  ck_assert(ocl_conv2d_forward_init(&c, &a, DIMS(3, 11, 9, 8), 4,
                                    DIMS(3, 3, 8, 16), 4, status));
  ck_assert_int_eq(c.out_rows, 6);
  ck_assert_int_eq(c.out_cols, 5);
  ck_assert_int_eq(c.pad_top, 1);
  ck_assert_int_eq(c.out_dims[3], 16);
  ck_assert_int_eq(c.groups, 1);
  /* NCHW reads H and W from dims 2 and 3, explicit padding too. */
  a = conv_attrs(true, OCL_PADDING_EXPLICIT);
  a.num_explicit_paddings = 8;
  memcpy(a.explicit_paddings, DIMS(0, 0, 0, 0, 1, 2, 3, 0), 8 * 8);
  ck_assert(ocl_conv_check_attrs(&a, true, false, status));
  ck_assert(ocl_conv2d_backprop_init(&c, "Conv2DSlowBackpropInput", &a,
                                     DIMS(2, 4, 5, 7), 4, DIMS(3, 3, 4, 6), 4,
                                     DIMS(2, 6, 6, 8), 4, status));
  ck_assert_int_eq(c.pad_top, 1);
  ck_assert_int_eq(c.pad_left, 3);
  ck_assert(!ocl_conv2d_backprop_init(&c, "Conv2DSlowBackpropInput", &a,
                                      DIMS(2, 4, 5, 7), 4, DIMS(3, 3, 4, 6),
                                      4, DIMS(2, 6, 5, 8), 4, status));
  ck_assert_str_eq(TF_Message(status),
                   "Conv2DSlowBackpropInput: Size of out_backprop doesn't "
                   "match computed: actual = 5, computed = 6 spatial_dim: 2 "
                   "input: 5 filter: 3 output: 5 stride: 1 dilation: 1");
  /* Depthwise: out depth is in depth times the multiplier. */
  a = conv_attrs(false, OCL_PADDING_VALID);
  ck_assert(ocl_depthwise_init(&c, NULL, &a, DIMS(1, 5, 5, 3), 4,
                               DIMS(3, 3, 3, 2), 4, NULL, 0, status));
  ck_assert_int_eq(c.out_dims[3], 6);
  ck_assert_int_eq(c.out_rows, 3);
}
END_TEST

START_TEST(conv_attr_error_messages)
{
  struct ocl_conv_attrs a = conv_attrs(false, OCL_PADDING_SAME);
  a.strides[3] = 2;
  ck_assert(!ocl_conv_check_attrs(&a, false, false, status));
  ck_assert_int_eq(TF_GetCode(status), TF_UNIMPLEMENTED);
  ck_assert_str_eq(TF_Message(status),
                   "Current implementation does not yet support strides in "
                   "the batch and depth dimensions.");
  ck_assert(!ocl_conv_check_attrs(&a, true, false, status));
  ck_assert_int_eq(TF_GetCode(status), TF_INVALID_ARGUMENT);
  a = conv_attrs(false, OCL_PADDING_VALID);
  a.num_explicit_paddings = 8;
  ck_assert(!ocl_conv_check_attrs(&a, false, false, status));
  ck_assert_str_eq(TF_Message(status),
                   "explicit_paddings attribute must be empty if the padding "
                   "attribute is not EXPLICIT");
  a = conv_attrs(false, OCL_PADDING_SAME);
  a.dilations[1] = 2;
  ck_assert(!ocl_conv_check_attrs(&a, false, true, status));
  ck_assert_str_eq(TF_Message(status),
                   "Current kernel implementation does not support "
                   "dilations, received [1, 2, 1, 1]");
  struct ocl_conv2d c;
  a = conv_attrs(false, OCL_PADDING_SAME);
  ck_assert(!ocl_conv2d_forward_init(&c, &a, DIMS(1, 5, 5, 3), 4,
                                     DIMS(3, 3, 2, 4), 4, status));
  ck_assert_str_eq(TF_Message(status),
                   "input depth must be evenly divisible by filter depth: 3 "
                   "vs 2");
  int64_t dims[4];
  const int32_t sizes[3] = {1, 2, 3};
  ck_assert(!ocl_conv_input_sizes(sizes, 3, 1, DIMS(3, 3, 2, 4), 4,
                                  DIMS(1, 5, 5, 4), 4, false, dims, status));
  ck_assert_str_eq(TF_Message(status),
                   "Conv2DBackpropInput requires input_sizes to contain 4 "
                   "values or 2 values, but got: 3");
  ck_assert(ocl_conv_input_sizes(sizes, 2, 1, DIMS(3, 3, 2, 4), 4,
                                 DIMS(6, 5, 5, 4), 4, true, dims, status));
  ck_assert_int_eq(dims[0], 6);
  ck_assert_int_eq(dims[1], 2);
  ck_assert_int_eq(dims[2], 1);
  ck_assert_int_eq(dims[3], 2);
}
END_TEST

static Suite *shape_suite(void)
{
  Suite *s = suite_create("shape");
  TCase *tc = tcase_create("shape");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, bcast_same_shape_collapses_to_one_dim);
  tcase_add_test(tc, bcast_row_vector);
  tcase_add_test(tc, bcast_both_sides_and_merge);
  tcase_add_test(tc, bcast_scalar_and_empty);
  tcase_add_test(tc, bcast_incompatible_message);
  tcase_add_test(tc, broadcast_to_strides);
  tcase_add_test(tc, broadcast_to_empty_with_huge_dims);
  tcase_add_test(tc, reduction_rows_cols_and_negative_axes);
  tcase_add_test(tc, reduction_general_and_all_axes);
  tcase_add_test(tc, reduction_bad_axis_message);
  tcase_add_test(tc, transpose_collapses_adjacent_dims);
  tcase_add_test(tc, transpose_bad_perm_messages);
  tcase_add_test(tc, bcast3_select_shapes);
  tcase_add_test(tc, bcastn_fused_shapes);
  tcase_add_test(tc, strided_copy_collapses_rows);
  tcase_add_test(tc, strided_slice_masks_and_shapes);
  tcase_add_test(tc, strided_slice_error_messages);
  tcase_add_test(tc, tile_and_pad_collapse);
  tcase_add_test(tc, pool_output_sizes_and_padding);
  tcase_add_test(tc, pool2d_nhwc_nchw_shapes);
  tcase_add_test(tc, pool2d_error_messages);
  tcase_add_test(tc, conv_windowed_output_sizes);
  tcase_add_test(tc, conv2d_shapes_nhwc_nchw);
  tcase_add_test(tc, conv_attr_error_messages);
  tcase_add_test(tc, fastdiv_is_exact_below_2_pow_31);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(shape_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
