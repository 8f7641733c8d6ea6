/* Every kernel a process runs on the GPU, with its own start and end on the GPU's clock, for
 * the decoder conformance step (tests/conformance/decoder_conformance.py --kernel-trace).
 *
 * A CUDA injection library: the CUDA driver loads the file named by CUDA_INJECTION64_PATH into
 * every process that initializes CUDA and calls InitializeInjection(), so transformers in Python
 * and iteragpu's worker are traced by the same code without changing either. CUPTI's activity
 * API records kernels asynchronously (no serialization, unlike Nsight Compute's replay), so a
 * whole 16-layer run is traced at its own speed. At exit the records are flushed to
 * $KERNEL_TRACE_DIR/kernels-<pid>.csv, one line per kernel: start_ns,end_ns,name (the mangled
 * name last: it is the only field that may hold anything but digits).
 *
 * Built on the GPU machine by scripts/gpu-check against the CUPTI it finds; KERNEL_RECORD is
 * the newest kernel activity record of those headers (the layout the library fills). */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef KERNEL_RECORD
#error "define KERNEL_RECORD as the newest CUpti_ActivityKernelN of the CUPTI headers"
#endif

enum { kBufferBytes = 8 * 1024 * 1024 };

static FILE* trace_file;
static unsigned long long dropped_records;

static void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = (uint8_t*)aligned_alloc(8, kBufferBytes);
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size,
                                      size_t valid_bytes) {
  (void)size;
  CUpti_Activity* record = NULL;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const KERNEL_RECORD* kernel = (const KERNEL_RECORD*)record;
    if (kernel->end < kernel->start) ++dropped_records; /* not finished when flushed: no duration */
    fprintf(trace_file, "%llu,%llu,%s\n", (unsigned long long)kernel->start, (unsigned long long)kernel->end,
            kernel->name ? kernel->name : "?");
  }
  size_t dropped = 0;  /* a NULL context is CUPTI's global queue */
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS) dropped_records += dropped;
  free(buffer);
}

static void flush_at_exit(void) {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  /* A trace that lost records must not pass for a whole one: the reader refuses this line. */
  if (dropped_records) fprintf(trace_file, "dropped,%llu,records\n", dropped_records);
  fclose(trace_file);
}

int InitializeInjection(void) {
  const char* folder = getenv("KERNEL_TRACE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/kernels-%d.csv", folder ? folder : ".", (int)getpid());
  trace_file = fopen(path, "w");
  if (!trace_file) return 0;
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    fprintf(trace_file, "failed,0,cupti\n");
    fclose(trace_file);
    return 0;
  }
  atexit(flush_at_exit);
  return 1;
}
