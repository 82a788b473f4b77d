/* tfocl bench's output: the markdown table and the JSON ci/bench reads. */
#include <math.h>
#include <stdio.h>

#include "tfocl_bench_internal.h"

/* ---- Output --------------------------------------------------------------- */

static void fmt_value(char *buf, size_t size, double v)
{
  if (isnan(v))
    snprintf(buf, size, "n/a");
  else if (fabs(v) >= 1e5)
    snprintf(buf, size, "%.3g", v);
  else if (fabs(v) >= 100)
    snprintf(buf, size, "%.0f", v);
  else if (fabs(v) >= 10)
    snprintf(buf, size, "%.1f", v);
  else
    snprintf(buf, size, "%.3g", v);
}

static void json_number(double v)
{
  if (isnan(v) || isinf(v))
    printf("null");
  else
    printf("%.6g", v);
}

static void json_series(const struct series *s, bool available)
{
  double m[3];
  bench_summary(s, m);
  printf("{\"available\": %s, \"min\": ", available ? "true" : "false");
  json_number(m[0]);
  printf(", \"median\": ");
  json_number(m[1]);
  printf(", \"max\": ");
  json_number(m[2]);
  printf(", \"warmup_s\": ");
  json_number(s->warmup_s < 0 ? NAN : s->warmup_s);
  printf(", \"reps\": [");
  for (int i = 0; i < s->n; i++) {
    printf("%s", i ? ", " : "");
    json_number(s->v[i]);
  }
  printf("]}");
}

static const struct row *slowest(const struct bench *b)
{
  const struct row *worst = NULL;
  double worst_ratio = INFINITY;
  for (int i = 0; i < b->num_rows; i++) {
    double r = bench_row_ratio(&b->rows[i]);
    if (b->rows[i].kernel && !isnan(r) && r < worst_ratio) {
      worst_ratio = r;
      worst = &b->rows[i];
    }
  }
  return worst;
}

const char *bench_device_name(const struct bench *b)
{
  return b->sp != NULL && b->sp->hardware_name != NULL ? b->sp->hardware_name
                                                       : "?";
}

const char *bench_output_memory(const struct bench *b)
{
  return b->reuses_memory
             ? "allocated per call, freed memory reused (as TensorFlow's BFC)"
             : "allocated per call";
}

void bench_print_json(const struct bench *b)
{
  printf("{\"device\": ");
  tfocl_json_string(stdout, bench_device_name(b));
  printf(", \"plugin\": ");
  tfocl_json_string(stdout, b->plugin_path);
  printf(", \"host_threads\": %d, \"quick\": %s, \"blas\": ",
         bench_host_threads(), b->quick ? "true" : "false");
  tfocl_json_string(stdout, b->blas_ok ? b->blas_name : NULL);
  printf(",\n \"rows\": [");
  for (int i = 0; i < b->num_rows; i++) {
    const struct row *r = &b->rows[i];
    printf("%s\n  {\"case\": ", i ? "," : "");
    tfocl_json_string(stdout, r->name);
    printf(", \"unit\": ");
    tfocl_json_string(stdout, r->metric.unit);
    printf(", \"higher_is_better\": %s, \"kernel\": %s,\n   \"ours\": ",
           r->metric.is_time ? "false" : "true", r->kernel ? "true" : "false");
    json_series(&r->ours, r->ours_ok);
    printf(",\n   \"reference\": ");
    tfocl_json_string(stdout, r->ref_name);
    printf(", \"ref\": ");
    json_series(&r->ref, r->ref_ok);
    printf(",\n   \"ratio\": ");
    json_number(bench_row_ratio(r));
    printf(", \"note\": ");
    tfocl_json_string(stdout, r->note);
    printf("}");
  }
  const struct row *w = slowest(b);
  printf("\n ],\n \"slowest\": ");
  if (w != NULL) {
    printf("{\"case\": ");
    tfocl_json_string(stdout, w->name);
    printf(", \"reference\": ");
    tfocl_json_string(stdout, w->ref_name);
    printf(", \"ratio\": ");
    json_number(bench_row_ratio(w));
    printf("}");
  } else {
    printf("null");
  }
  printf(", \"failures\": %d}\n", b->failures);
}

void bench_print_markdown(const struct bench *b)
{
  printf("tfocl bench on %s (%s); host references use %d threads; BLAS: "
         "%s%s\n\n",
         bench_device_name(b), b->plugin_path, bench_host_threads(),
         b->blas_ok ? b->blas_name : "unavailable: ",
         b->blas_ok ? "" : b->blas_why);
  printf("ratio = our speed / the reference's speed (medians; > 1: ours is "
         "faster).\n\n");
  printf("| case | metric | ours min | ours median | ours max | reference | "
         "ref median | ratio | note |\n");
  printf("| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |\n");
  for (int i = 0; i < b->num_rows; i++) {
    const struct row *r = &b->rows[i];
    double o[3], f[3];
    char s[4][32], ratio[32];
    bench_summary(&r->ours, o);
    bench_summary(&r->ref, f);
    for (int k = 0; k < 3; k++)
      fmt_value(s[k], sizeof(s[k]), r->ours_ok ? o[k] : NAN);
    fmt_value(s[3], sizeof(s[3]), r->ref_ok ? f[1] : NAN);
    double q = bench_row_ratio(r);
    if (isnan(q))
      snprintf(ratio, sizeof(ratio), "n/a");
    else
      snprintf(ratio, sizeof(ratio), "%.2f", q);
    printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->name,
           r->metric.unit, s[0], s[1], s[2], r->ref_name, s[3], ratio, r->note);
  }
  const struct row *w = slowest(b);
  if (w != NULL)
    printf("\nSlowest kernel relative to its reference: %s (%.2f x %s).\n",
           w->name, bench_row_ratio(w), w->ref_name);
  if (b->failures)
    printf("\n%d case(s) FAILED (see stderr).\n", b->failures);
}
