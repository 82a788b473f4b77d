/* Shape logic of kernels/shape.c: broadcasting, reductions, transposes. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

  /* Repeated and size-1 axes. */
  ck_assert(ocl_reduction_init(&r, DIMS(2, 1, 4), 3, DIMS(0, 1, 2, 0), 4,
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
  ck_assert_str_eq(TF_Message(status), "0 is duplicated in perm");
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
  tcase_add_test(tc, reduction_rows_cols_and_negative_axes);
  tcase_add_test(tc, reduction_general_and_all_axes);
  tcase_add_test(tc, reduction_bad_axis_message);
  tcase_add_test(tc, transpose_collapses_adjacent_dims);
  tcase_add_test(tc, transpose_bad_perm_messages);
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
