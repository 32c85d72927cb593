// HIP's side of `aqueduct bench --hip`: the launch paths of issue 23 through HIP's runtime, on
// whatever GPU HIP sees (on the simulator: under the LD_PRELOAD interposer). Built by the
// `aqueduct` tool with Debian's hipcc at run time; prints one line per figure:
//   figure ID UNIT SAMPLE SAMPLE ...
// and exits non-zero with a message on stderr if a HIP call fails.
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

__global__ void empty() {}

namespace {

constexpr int kHostBatch = 32;  // launches timed together (aqueduct's HOST_BATCH)
constexpr int kBackToBack = 64; // launches before one wait (aqueduct's dispatch_back_to_back)
constexpr int kChain = 10;      // kernels of the dependent chain

using Clock = std::chrono::steady_clock;

double nanos_since(Clock::time_point start) {
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

void check(hipError_t status, const char* what) {
    if (status != hipSuccess) {
        std::fprintf(stderr, "launch_cost: %s: %s\n", what, hipGetErrorString(status));
        std::exit(1);
    }
}

void launch(hipStream_t stream) {
    hipLaunchKernelGGL(empty, dim3(1), dim3(1), 0, stream);
    check(hipGetLastError(), "hipLaunchKernelGGL");
}

void sync() { check(hipDeviceSynchronize(), "hipDeviceSynchronize"); }

void print(const char* id, const char* unit, const std::vector<double>& samples) {
    std::printf("figure %s %s", id, unit);
    for (double s : samples) std::printf(" %.3f", s);
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    int iterations = argc > 1 ? std::atoi(argv[1]) : 30;
    if (iterations < 1) iterations = 1;
    hipStream_t stream = nullptr;  // the null stream, as a plain HIP program launches
    // Warm up: the first launch loads the code object.
    for (int i = 0; i < 4; ++i) launch(stream);
    sync();

    std::vector<double> host, round_trip, back_to_back, chain, graph_host, graph_chain;
    for (int it = 0; it < iterations; ++it) {
        auto start = Clock::now();
        for (int i = 0; i < kHostBatch; ++i) launch(stream);
        host.push_back(nanos_since(start) / kHostBatch);
        sync();
    }
    for (int it = 0; it < iterations; ++it) {
        auto start = Clock::now();
        launch(stream);
        sync();
        round_trip.push_back(nanos_since(start) / 1e3);
    }
    for (int it = 0; it < iterations; ++it) {
        auto start = Clock::now();
        for (int i = 0; i < kBackToBack; ++i) launch(stream);
        sync();
        back_to_back.push_back(kBackToBack / (nanos_since(start) / 1e9) / 1e3);
    }
    for (int it = 0; it < iterations; ++it) {
        auto start = Clock::now();
        for (int i = 0; i < kChain; ++i) launch(stream);
        sync();
        chain.push_back(nanos_since(start) / 1e3);
    }

    // The same chain captured from a stream into a graph.
    hipStream_t captured;
    check(hipStreamCreate(&captured), "hipStreamCreate");
    check(hipStreamBeginCapture(captured, hipStreamCaptureModeGlobal), "hipStreamBeginCapture");
    for (int i = 0; i < kChain; ++i) launch(captured);
    hipGraph_t graph;
    check(hipStreamEndCapture(captured, &graph), "hipStreamEndCapture");
    hipGraphExec_t exec;
    check(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0), "hipGraphInstantiate");
    check(hipGraphLaunch(exec, captured), "hipGraphLaunch");
    check(hipStreamSynchronize(captured), "hipStreamSynchronize");
    for (int it = 0; it < iterations; ++it) {
        auto start = Clock::now();
        check(hipGraphLaunch(exec, captured), "hipGraphLaunch");
        graph_host.push_back(nanos_since(start) / kChain);
        check(hipStreamSynchronize(captured), "hipStreamSynchronize");
    }
    for (int it = 0; it < iterations; ++it) {
        auto start = Clock::now();
        check(hipGraphLaunch(exec, captured), "hipGraphLaunch");
        check(hipStreamSynchronize(captured), "hipStreamSynchronize");
        graph_chain.push_back(nanos_since(start) / 1e3);
    }
    // Launch + wait again with blocking sync: HIP 5.2 spins by default (hip_context.cpp enables
    // active wait: ROCclr's WaitForSignal then waits HSA_WAIT_STATE_ACTIVE with no timeout, and
    // ROCr's InterruptSignal::WaitRelaxed never sleeps in that state). On hardware the spin
    // costs a core, not latency; on the simulator the spinning thread holds a core the
    // simulated GPU's threads need. hipDeviceScheduleBlockingSync makes HIP spin 100 µs, then
    // wait HSA_WAIT_STATE_BLOCKED (ROCr spins 200 µs more, then sleeps in WAIT_EVENTS).
    std::vector<double> round_trip_blocking;
    check(hipSetDeviceFlags(hipDeviceScheduleBlockingSync), "hipSetDeviceFlags");
    for (int it = 0; it < iterations; ++it) {
        auto start = Clock::now();
        launch(stream);
        sync();
        round_trip_blocking.push_back(nanos_since(start) / 1e3);
    }

    check(hipGraphExecDestroy(exec), "hipGraphExecDestroy");
    check(hipGraphDestroy(graph), "hipGraphDestroy");
    check(hipStreamDestroy(captured), "hipStreamDestroy");

    print("launch_host", "ns", host);
    print("launch_sync", "µs", round_trip);
    print("back_to_back", "k/s", back_to_back);
    print("chain_10", "µs", chain);
    print("graph_launch_host", "ns", graph_host);
    print("graph_chain_10", "µs", graph_chain);
    print("launch_sync_blocking", "µs", round_trip_blocking);
    return 0;
}
