#include "comm/reduce_sum.hpp"

namespace aml::comm {
namespace {

template <class T>
[[gnu::always_inline]] inline void add(void* c_, const void* a_, const void* b_, std::size_t n) {
  // c may be a or b (in place), so no restrict: the compiler checks for overlap at run time
  // and takes the vector loop when there is none, or when it is exact.
  T* c = static_cast<T*>(c_);
  const T* a = static_cast<const T*>(a_);
  const T* b = static_cast<const T*>(b_);
  for (std::size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

}  // namespace

#define AML_SUM_CLONES [[gnu::target_clones("avx512f", "avx2", "default")]]

AML_SUM_CLONES void sum_f32(void* c, const void* a, const void* b, std::size_t n) {
  add<float>(c, a, b, n);
}
AML_SUM_CLONES void sum_f64(void* c, const void* a, const void* b, std::size_t n) {
  add<double>(c, a, b, n);
}
AML_SUM_CLONES void sum_i32(void* c, const void* a, const void* b, std::size_t n) {
  add<std::int32_t>(c, a, b, n);
}
AML_SUM_CLONES void sum_i64(void* c, const void* a, const void* b, std::size_t n) {
  add<std::int64_t>(c, a, b, n);
}

}  // namespace aml::comm
