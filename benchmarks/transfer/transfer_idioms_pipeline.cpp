// The DataLoader pin thread's schedule (see run_staged_pipeline in transfer_idioms_cases.h): host
// logic only, so the CPU tests drive it with fake operations and the GPU runner with CUDA ones.
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "benchmarks/transfer/transfer_idioms_cases.h"

namespace offloadbench {

namespace {

// What the two threads share: how far the pin thread may go and how far it got.
struct PipelineState {
  std::mutex mutex;
  std::condition_variable changed;
  int requested = 0;  // the pin thread may fill batches [0, requested)
  int filled = 0;     // it has filled batches [0, filled)
  bool stop = false;  // the main thread failed: the pin thread ends
  std::exception_ptr pin_error;
};

void pin_thread(int batches, const StagedPipelineOps& ops, PipelineState& s) {
  for (int batch = 0; batch < batches; ++batch) {
    {
      std::unique_lock<std::mutex> lock(s.mutex);
      s.changed.wait(lock, [&] { return s.requested > batch || s.stop; });
      if (s.stop) return;
    }
    try {
      ops.fill(batch % 2, batch);
    } catch (...) {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.pin_error = std::current_exception();
      s.changed.notify_all();
      return;
    }
    std::lock_guard<std::mutex> lock(s.mutex);
    s.filled = batch + 1;
    s.changed.notify_all();
  }
}

}  // namespace

void run_staged_pipeline(int batches, const StagedPipelineOps& ops) {
  if (batches <= 0) return;
  PipelineState s;
  s.requested = 1;
  std::thread pinning([&] { pin_thread(batches, ops, s); });
  auto stop_and_join = [&] {
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.stop = true;
    }
    s.changed.notify_all();
    pinning.join();
  };
  try {
    for (int batch = 0; batch < batches; ++batch) {
      {
        std::unique_lock<std::mutex> lock(s.mutex);
        s.changed.wait(lock, [&] { return s.filled > batch || s.pin_error; });
        if (s.pin_error) std::rethrow_exception(s.pin_error);
        // The next batch may be filled now: its slot's previous batch (batch - 1) is already
        // enqueued.
        if (batch + 1 < batches) s.requested = batch + 2;
      }
      s.changed.notify_all();
      ops.enqueue(batch % 2, batch);
    }
    ops.drain();
  } catch (...) {
    stop_and_join();
    throw;
  }
  stop_and_join();
}

}  // namespace offloadbench
