// 8-bit, 256 bins: 16-bit counters.
#include "bench/sweep/instances.cuh"
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define H(B, K, U, P) static sweep::Registrar CAT(reg_, __COUNTER__)(sweep::make_hist<uint8_t, 256, sweep::L<B, K, U, P>>());
#define HS(B, K) H(B, K, 2, true) H(B, K, 4, true) H(B, K, 4, false) H(B, K, 8, false)
HS(16, 1) HS(16, 2) HS(16, 4)
