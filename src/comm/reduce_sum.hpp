// c[i] = a[i] + b[i]: the reduction Gloo runs on every chunk it receives. Built for AVX2 and
// AVX-512 as well as the baseline, picked at load time, so that a machine with wide vectors
// uses them while the library still runs anywhere.
#pragma once

#include <cstddef>
#include <cstdint>

namespace aml::comm {

void sum_f32(void* c, const void* a, const void* b, std::size_t n);
void sum_f64(void* c, const void* a, const void* b, std::size_t n);
void sum_i32(void* c, const void* a, const void* b, std::size_t n);
void sum_i64(void* c, const void* a, const void* b, std::size_t n);

}  // namespace aml::comm
