// OpenMP target-offload checks for aqueduct's HSA runtime, built by clang-19
// (-fopenmp --offload-arch=gfx90a, ROCm device libraries) and run through libomptarget 19.
// `omp_suite SECTION [N]` runs one section and prints "omp_suite SECTION: ok ..." when every
// value the GPU computed matches the host's; any other outcome exits non-zero with a reason.
// Sections: reduction, globals, atomics, math (each checks that its target region ran on the
// GPU: omp_is_initial_device() false there), and trap: a target region that executes a trap
// instruction on the GPU, which the HSA runtime reports to libomptarget's queue error
// callback (libomptarget then reports the error and aborts; it never returns normally).
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* section, const char* why) {
  fprintf(stderr, "omp_suite %s: %s\n", section, why);
  return 1;
}

// Sum, product-free integer sum, minimum and maximum over doubles and longs, all in one
// combined construct, and a reduction over a 2-D collapsed loop.
static int reduction(int n) {
  double* x = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) x[i] = (double)((i * 7919) % 1000) - 500.0;
  double sum = 0.0, lo = INFINITY, hi = -INFINITY;
  long count = 0;
  int on_host = 1;
#pragma omp target teams distribute parallel for map(to : x[0:n]) map(tofrom : on_host) \
    reduction(+ : sum, count) reduction(min : lo) reduction(max : hi)
  for (int i = 0; i < n; i++) {
    if (i == 0) on_host = omp_is_initial_device();
    sum += x[i];
    if (x[i] > 0) count++;
    lo = fmin(lo, x[i]);
    hi = fmax(hi, x[i]);
  }
  double want_sum = 0.0, want_lo = INFINITY, want_hi = -INFINITY;
  long want_count = 0;
  for (int i = 0; i < n; i++) {
    want_sum += x[i];
    want_count += x[i] > 0;
    want_lo = fmin(want_lo, x[i]);
    want_hi = fmax(want_hi, x[i]);
  }
  const int rows = 64, cols = 257;
  long grid = 0;
#pragma omp target teams distribute parallel for collapse(2) reduction(+ : grid)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) grid += (long)r * c;
  long want_grid = (long)(rows * (rows - 1) / 2) * (cols * (cols - 1) / 2);
  free(x);
  if (on_host) return fail("reduction", "the target region ran on the host");
  // Every x[i] is an integer, so the sum is exact in any order.
  if (sum != want_sum || count != want_count || lo != want_lo || hi != want_hi ||
      grid != want_grid) {
    fprintf(stderr, "sum %f/%f count %ld/%ld min %f/%f max %f/%f grid %ld/%ld\n", sum, want_sum,
            count, want_count, lo, want_lo, hi, want_hi, grid, want_grid);
    return fail("reduction", "wrong value");
  }
  printf("omp_suite reduction: ok %d sum %.0f\n", n, sum);
  return 0;
}

// Device globals: a declare-target array and scalar that keep their values between target
// regions, sent and fetched with `target update`, and an initialised constant table.
#define TABLE 1024
#pragma omp declare target
long table[TABLE];
long calls = 0;
const int primes[8] = {2, 3, 5, 7, 11, 13, 17, 19};
#pragma omp end declare target

static int globals(void) {
  for (int i = 0; i < TABLE; i++) table[i] = i;
#pragma omp target update to(table)
  for (int round = 0; round < 3; round++) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < TABLE; i++) table[i] = table[i] * 2 + primes[i % 8];
#pragma omp target
    calls += 1;
  }
  // The host copy is untouched until the update.
  if (table[5] != 5) return fail("globals", "the host copy changed before `target update from`");
#pragma omp target update from(table, calls)
  for (int i = 0; i < TABLE; i++) {
    long want = i;
    for (int round = 0; round < 3; round++) want = want * 2 + primes[i % 8];
    if (table[i] != want) {
      fprintf(stderr, "table[%d] = %ld, want %ld\n", i, table[i], want);
      return fail("globals", "wrong value");
    }
  }
  if (calls != 3) {
    fprintf(stderr, "calls = %ld\n", calls);
    return fail("globals", "the device scalar did not keep its value between regions");
  }
  printf("omp_suite globals: ok %d\n", TABLE);
  return 0;
}

// Atomics: a histogram many threads update with `omp atomic`, a counter taken with
// `atomic capture` (every ticket handed out once), and a floating-point atomic sum.
static int atomics(int n) {
  enum { BINS = 16 };
  long bins[BINS] = {0};
  int* tickets = malloc(sizeof(int) * n);
  int next = 0;
  double total = 0.0;
#pragma omp target teams distribute parallel for map(tofrom : bins, next, total) \
    map(from : tickets[0:n])
  for (int i = 0; i < n; i++) {
#pragma omp atomic update
    bins[(i * 31) % BINS] += 1;
    int mine;
#pragma omp atomic capture
    mine = next++;
    tickets[i] = mine;
#pragma omp atomic update
    total += 0.5;
  }
  long want_bins[BINS] = {0};
  for (int i = 0; i < n; i++) want_bins[(i * 31) % BINS] += 1;
  int result = 0;
  for (int b = 0; b < BINS; b++)
    if (bins[b] != want_bins[b]) {
      fprintf(stderr, "bin %d: %ld, want %ld\n", b, bins[b], want_bins[b]);
      result = 1;
    }
  char* seen = calloc(n, 1);
  for (int i = 0; i < n; i++) {
    if (tickets[i] < 0 || tickets[i] >= n || seen[tickets[i]]) {
      fprintf(stderr, "ticket %d of thread %d is out of range or handed out twice\n", tickets[i],
              i);
      result = 1;
      break;
    }
    seen[tickets[i]] = 1;
  }
  if (next != n || total != 0.5 * n) {
    fprintf(stderr, "next %d total %f, want %d %f\n", next, total, n, 0.5 * n);
    result = 1;
  }
  free(seen);
  free(tickets);
  if (result) return fail("atomics", "wrong value");
  printf("omp_suite atomics: ok %d\n", n);
  return 0;
}

// Math functions from the device libraries (ocml): the GPU's results within a few ulp of the
// host's libm. Not double sin/cos: ocml's argument reduction for them executes
// v_trig_preop_f64, which the simulated shader core does not implement yet (an illegal
// instruction there); float sinf reduces without it.
static int close_enough(double got, double want, double tolerance) {
  if (isnan(want)) return isnan(got);
  double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
  return fabs(got - want) <= tolerance * scale;
}

static int math(int n) {
  enum { FUNCTIONS = 7 };
  double* x = malloc(sizeof(double) * n);
  double* out = malloc(sizeof(double) * n * FUNCTIONS);
  float* outf = malloc(sizeof(float) * n * 3);
  for (int i = 0; i < n; i++) x[i] = 0.001 + 10.0 * i / n;
#pragma omp target teams distribute parallel for map(to : x[0:n]) \
    map(from : out[0:n * FUNCTIONS], outf[0:n * 3])
  for (int i = 0; i < n; i++) {
    double v = x[i];
    double* o = out + (long)i * FUNCTIONS;
    o[0] = exp(v);
    o[1] = log(v);
    o[2] = sqrt(v);
    o[3] = pow(v, 1.5);
    o[4] = atan2(v, 3.0);
    o[5] = tanh(v - 5.0);
    o[6] = fma(v, v, -2.0);
    float f = (float)v;
    outf[i * 3 + 0] = sinf(f);
    outf[i * 3 + 1] = expf(f * 0.5f);
    outf[i * 3 + 2] = sqrtf(f);
  }
  int bad = 0;
  for (int i = 0; i < n && bad < 5; i++) {
    double v = x[i];
    double want[FUNCTIONS] = {exp(v),        log(v),        sqrt(v),         pow(v, 1.5),
                              atan2(v, 3.0), tanh(v - 5.0), fma(v, v, -2.0)};
    for (int f = 0; f < FUNCTIONS; f++)
      if (!close_enough(out[(long)i * FUNCTIONS + f], want[f], 1e-13)) {
        fprintf(stderr, "x = %.17g function %d: %.17g, want %.17g\n", v, f,
                out[(long)i * FUNCTIONS + f], want[f]);
        bad++;
      }
    float fv = (float)v;
    float wantf[3] = {sinf(fv), expf(fv * 0.5f), sqrtf(fv)};
    for (int f = 0; f < 3; f++)
      if (!close_enough(outf[i * 3 + f], wantf[f], 1e-5)) {
        fprintf(stderr, "x = %.9g float function %d: %.9g, want %.9g\n", fv, f, outf[i * 3 + f],
                wantf[f]);
        bad++;
      }
  }
  free(x);
  free(out);
  free(outf);
  if (bad) return fail("math", "results differ from the host's libm");
  printf("omp_suite math: ok %d\n", n);
  return 0;
}

// A trap on the GPU (s_trap): the queue stops, and libomptarget hears of it only through the
// error callback it gave hsa_queue_create.
static int trap(void) {
  int reached = 0;
#pragma omp target map(tofrom : reached)
  {
    if (!omp_is_initial_device()) __builtin_trap();
    reached = 1;
  }
  fprintf(stderr, "omp_suite trap: the target region returned (reached = %d)\n", reached);
  return 1;
}

int main(int argc, char** argv) {
  const char* section = argc > 1 ? argv[1] : "";
  int n = argc > 2 ? atoi(argv[2]) : 10000;
  if (omp_get_num_devices() < 1) return fail(section, "no offload device");
  if (!strcmp(section, "reduction")) return reduction(n);
  if (!strcmp(section, "globals")) return globals();
  if (!strcmp(section, "atomics")) return atomics(n);
  if (!strcmp(section, "math")) return math(n);
  if (!strcmp(section, "trap")) return trap();
  fprintf(stderr, "usage: omp_suite reduction|globals|atomics|math|trap [N]\n");
  return 2;
}
