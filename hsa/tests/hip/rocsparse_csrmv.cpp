// Debian's rocSPARSE (AMD's own kernels) over HIP: y = alpha * A * x + beta * y for a sparse
// CSR matrix A (2000 x 1500, a few entries per row at pseudo-random columns) with
// rocsparse_dcsrmv, first without analysis and then with rocsparse_dcsrmv_analysis, each
// checked against the product computed on the host. Prints "rocsparse_csrmv: ok <nnz>
// <checksum>".
#include <math.h>
#include <rocsparse/rocsparse.h>
#include <stdlib.h>
#include <vector>

#include "check.h"

#define SPARSE(call)                                                                 \
  do {                                                                               \
    rocsparse_status s_ = (call);                                                    \
    if (s_ != rocsparse_status_success) {                                            \
      fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #call, (int)s_); \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

int main() {
  const int m = 2000, n = 1500;
  std::vector<int> ptr(m + 1), col;
  std::vector<double> val, x(n), y(m), want(m);
  unsigned state = 12345;
  auto next = [&state]() { return state = state * 1103515245u + 12345u; };
  for (int r = 0; r < m; r++) {
    ptr[r] = (int)col.size();
    int per_row = 1 + (int)(next() >> 16) % 9;
    int c = (int)(next() >> 16) % 50;
    for (int k = 0; k < per_row && c < n; k++) {
      col.push_back(c);
      val.push_back(((int)(next() >> 16) % 2001 - 1000) / 250.0);
      c += 1 + (int)(next() >> 16) % 200;
    }
  }
  ptr[m] = (int)col.size();
  int nnz = ptr[m];
  for (int i = 0; i < n; i++) x[i] = sin(0.01 * i) + 0.5;
  for (int i = 0; i < m; i++) y[i] = 0.25 * i;
  const double alpha = 1.5, beta = -0.5;
  for (int r = 0; r < m; r++) {
    double sum = 0;
    for (int k = ptr[r]; k < ptr[r + 1]; k++) sum += val[k] * x[col[k]];
    want[r] = alpha * sum + beta * y[r];
  }
  int *dptr, *dcol;
  double *dval, *dx, *dy;
  CHECK(hipMalloc((void**)&dptr, (m + 1) * sizeof(int)));
  CHECK(hipMalloc((void**)&dcol, nnz * sizeof(int)));
  CHECK(hipMalloc((void**)&dval, nnz * sizeof(double)));
  CHECK(hipMalloc((void**)&dx, n * sizeof(double)));
  CHECK(hipMalloc((void**)&dy, m * sizeof(double)));
  CHECK(hipMemcpy(dptr, ptr.data(), (m + 1) * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dcol, col.data(), nnz * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dval, val.data(), nnz * sizeof(double), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dx, x.data(), n * sizeof(double), hipMemcpyHostToDevice));
  rocsparse_handle handle;
  rocsparse_mat_descr descr;
  rocsparse_mat_info info;
  SPARSE(rocsparse_create_handle(&handle));
  SPARSE(rocsparse_create_mat_descr(&descr));
  SPARSE(rocsparse_create_mat_info(&info));
  double checksum = 0;
  for (int pass = 0; pass < 2; pass++) {
    CHECK(hipMemcpy(dy, y.data(), m * sizeof(double), hipMemcpyHostToDevice));
    if (pass == 1) {
      SPARSE(rocsparse_dcsrmv_analysis(handle, rocsparse_operation_none, m, n, nnz, descr, dval,
                                       dptr, dcol, info));
    }
    SPARSE(rocsparse_dcsrmv(handle, rocsparse_operation_none, m, n, nnz, &alpha, descr, dval,
                            dptr, dcol, pass == 1 ? info : nullptr, dx, &beta, dy));
    std::vector<double> got(m);
    CHECK(hipMemcpy(got.data(), dy, m * sizeof(double), hipMemcpyDeviceToHost));
    for (int r = 0; r < m; r++) {
      if (fabs(got[r] - want[r]) > 1e-9 * (1 + fabs(want[r]))) {
        fprintf(stderr, "pass %d row %d: %.17g, want %.17g\n", pass, r, got[r], want[r]);
        return 1;
      }
      checksum += got[r];
    }
  }
  SPARSE(rocsparse_destroy_mat_info(info));
  SPARSE(rocsparse_destroy_mat_descr(descr));
  SPARSE(rocsparse_destroy_handle(handle));
  CHECK(hipFree(dptr));
  CHECK(hipFree(dcol));
  CHECK(hipFree(dval));
  CHECK(hipFree(dx));
  CHECK(hipFree(dy));
  print_mapped_runtime();
  printf("rocsparse_csrmv: ok %d %.6f\n", nnz, checksum);
  return 0;
}
