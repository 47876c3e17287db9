// Counts the heap allocations of the process it is linked into: malloc, calloc, realloc (a new block)
// and the aligned allocators are wrapped around glibc's own. For benchmarks only (never in listd).
#pragma once
#include <stdint.h>

/// Allocations made since the process started (every thread).
uint64_t allocation_counter_allocations(void);
