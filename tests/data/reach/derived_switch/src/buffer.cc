#include <lib/buffer.hpp>

size_t rounded(size_t n) { return granularity(n); }
