// A tiled single-precision GEMM (C = A * B, n x n, row-major) with a known launch count, for
// checking that a profiler sees every kernel. One source for both vendors; it lives twice, byte
// for byte, as rocprof/hip-gemm/gemm.hip and ncu/cuda-gemm/gemm.cu (a test keeps them equal):
//
//   hipcc -O3 -o /tmp/hip_gemm examples/profiling/rocprof/hip-gemm/gemm.hip     (AMD)
//   nvcc -O3 -o /tmp/cuda_gemm examples/profiling/ncu/cuda-gemm/gemm.cu         (NVIDIA)
//   nvcc -O3 -x cu -o /tmp/hip_gemm examples/profiling/rocprof/hip-gemm/gemm.hip
//   /tmp/hip_gemm [n] [iters]
//
// n and iters come from the arguments, else from $AORTA_GEMM_N / $AORTA_GEMM_ITERS, else
// 512 and 20. GPU work: WARMUP + iters launches of the kernel `sgemm_tiled` (extern "C", so
// every profiler shows that exact name) and nothing else: the inputs are copied in and the
// result copied out, and neither copy is a kernel.
//
// Self-check: 64 sampled entries of C against a double-precision host dot product.
// Exit status: 0 PASS, 1 wrong result, 2 cannot run here (bad arguments, no GPU, runtime error).

#if defined(__HIP__) || defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__) || \
    defined(__HIP_PLATFORM_NVIDIA__)
#include <hip/hip_runtime.h>
#elif defined(__CUDACC__)
// nvcc without HIP: the handful of runtime calls this file makes, under their CUDA names.
#include <cuda_runtime.h>
#define hipDeviceProp_t cudaDeviceProp
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipError_t cudaError_t
#define hipEventCreate cudaEventCreate
#define hipEventDestroy cudaEventDestroy
#define hipEventElapsedTime cudaEventElapsedTime
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEvent_t cudaEvent_t
#define hipFree cudaFree
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipGetErrorString cudaGetErrorString
#define hipGetLastError cudaGetLastError
#define hipMalloc cudaMalloc
#define hipMemcpy cudaMemcpy
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipSuccess cudaSuccess
#else
#error "compile with hipcc, or with nvcc -x cu"
#endif

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define TILE 16

static const int WARMUP = 3;
static const int SAMPLES = 64;
static const long MAX_N = 16384;
static const long MAX_ITERS = 100000;
// fp32 accumulation error relative to sum(|a_ik * b_kj|); the typical error for n = 16384 is
// about 1e-5 of it, so a correct kernel passes and a wrong index or a missed tile does not.
static const double TOLERANCE = 1e-4;

#define CHECK(call)                                                                   \
  do {                                                                                \
    hipError_t status_ = (call);                                                      \
    if (status_ != hipSuccess) {                                                      \
      std::fprintf(stderr, "gemm: cannot run here: %s failed: %s\n", #call,          \
                   hipGetErrorString(status_));                                       \
      return 2;                                                                       \
    }                                                                                 \
  } while (0)

extern "C" __global__ void sgemm_tiled(const float* a, const float* b, float* c, int n) {
  __shared__ float a_tile[TILE][TILE];
  __shared__ float b_tile[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int base = 0; base < n; base += TILE) {
    const int a_col = base + threadIdx.x;
    const int b_row = base + threadIdx.y;
    a_tile[threadIdx.y][threadIdx.x] = (row < n && a_col < n) ? a[(size_t)row * n + a_col] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = (b_row < n && col < n) ? b[(size_t)b_row * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += a_tile[threadIdx.y][k] * b_tile[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) c[(size_t)row * n + col] = acc;
}

// xorshift32: a reproducible input stream without a library.
static uint32_t next_random(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return x;
}

static float uniform_pm1(uint32_t* state) {  // in [-1, 1)
  return (float)((next_random(state) >> 8) * (2.0 / 16777216.0) - 1.0);
}

// The argument if given, else the variable if set, else the default; false when malformed.
static bool read_setting(const char* label, const char* arg, const char* variable, long fallback,
                         long max_value, long* out) {
  const char* text = arg ? arg : std::getenv(variable);
  if (!text || !*text) {
    *out = fallback;
    return true;
  }
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno || *end || value < 1 || value > max_value) {
    std::fprintf(stderr, "gemm: cannot run here: %s '%s' (from %s%s) is not an integer in 1..%ld\n",
                 label, text, arg ? "the command line" : "$", arg ? "" : variable, max_value);
    return false;
  }
  *out = value;
  return true;
}

static int check_samples(const std::vector<float>& a, const std::vector<float>& b,
                         const std::vector<float>& c, int n) {
  uint32_t state = 0x9e3779b9u;
  for (int s = 0; s < SAMPLES; ++s) {
    const int i = (int)(next_random(&state) % (uint32_t)n);
    const int j = (int)(next_random(&state) % (uint32_t)n);
    double want = 0.0, scale = 0.0;
    for (int k = 0; k < n; ++k) {
      const double term = (double)a[(size_t)i * n + k] * (double)b[(size_t)k * n + j];
      want += term;
      scale += std::fabs(term);
    }
    const double got = c[(size_t)i * n + j];
    const double error = std::fabs(got - want);
    if (!(error <= TOLERANCE * scale + 1e-30)) {  // written so that NaN fails too
      std::printf("gemm: FAIL at (%d, %d): got %.9g, want %.9g (error %.3g, allowed %.3g)\n",
                  i, j, got, want, error, TOLERANCE * scale);
      return 1;
    }
  }
  return 0;
}

static int run(int n, int iters) {
  int devices = 0;
  const hipError_t probe = hipGetDeviceCount(&devices);
  if (probe != hipSuccess || devices < 1) {
    std::fprintf(stderr, "gemm: cannot run here: no GPU (%s)\n",
                 probe != hipSuccess ? hipGetErrorString(probe) : "device count is 0");
    return 2;
  }
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  std::printf("gemm: device=%s\n", props.name);

  const size_t count = (size_t)n * n;
  std::vector<float> a(count), b(count), c(count, 0.0f);
  uint32_t state = 2463534242u;
  for (size_t i = 0; i < count; ++i) a[i] = uniform_pm1(&state);
  for (size_t i = 0; i < count; ++i) b[i] = uniform_pm1(&state);

  float *d_a = nullptr, *d_b = nullptr, *d_c = nullptr;
  CHECK(hipMalloc((void**)&d_a, count * sizeof(float)));
  CHECK(hipMalloc((void**)&d_b, count * sizeof(float)));
  CHECK(hipMalloc((void**)&d_c, count * sizeof(float)));
  CHECK(hipMemcpy(d_a, a.data(), count * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(d_b, b.data(), count * sizeof(float), hipMemcpyHostToDevice));

  const dim3 block(TILE, TILE);
  const dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
  for (int w = 0; w < WARMUP; ++w) sgemm_tiled<<<grid, block>>>(d_a, d_b, d_c, n);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());

  hipEvent_t start, stop;
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&stop));
  CHECK(hipEventRecord(start, 0));
  for (int it = 0; it < iters; ++it) sgemm_tiled<<<grid, block>>>(d_a, d_b, d_c, n);
  CHECK(hipGetLastError());
  CHECK(hipEventRecord(stop, 0));
  CHECK(hipEventSynchronize(stop));
  float elapsed_ms = 0.0f;
  CHECK(hipEventElapsedTime(&elapsed_ms, start, stop));
  CHECK(hipMemcpy(c.data(), d_c, count * sizeof(float), hipMemcpyDeviceToHost));
  CHECK(hipEventDestroy(start));
  CHECK(hipEventDestroy(stop));
  CHECK(hipFree(d_a));
  CHECK(hipFree(d_b));
  CHECK(hipFree(d_c));

  const double per_launch_ms = elapsed_ms / iters;
  std::printf("gemm: avg_ms=%.4f\n", per_launch_ms);
  std::printf("gemm: gflops=%.1f\n", 2.0 * n * (double)n * n / (per_launch_ms * 1e6));
  const int verdict = check_samples(a, b, c, n);
  if (verdict == 0) std::printf("gemm: PASS\n");
  return verdict;
}

int main(int argc, char** argv) {
  if (argc > 3) {
    std::fprintf(stderr, "gemm: cannot run here: usage: %s [n] [iters]\n", argv[0]);
    return 2;
  }
  long n = 0, iters = 0;
  if (!read_setting("n", argc > 1 ? argv[1] : nullptr, "AORTA_GEMM_N", 512, MAX_N, &n) ||
      !read_setting("iters", argc > 2 ? argv[2] : nullptr, "AORTA_GEMM_ITERS", 20, MAX_ITERS,
                    &iters)) {
    return 2;
  }
  std::printf("gemm: n=%ld iters=%ld warmup=%d launches=%ld\n", n, iters, WARMUP, iters + WARMUP);
  return run((int)n, (int)iters);
}
