// 16-bit samples (10-bit data), 1024 bins.
#include "bench/sweep/instances.cuh"
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define H(B, K, U, P) static sweep::Registrar CAT(reg_, __COUNTER__)(sweep::make_hist<uint16_t, 1024, sweep::L<B, K, U, P>>());
H(16, 2, 4, true) H(16, 2, 8, true) H(16, 2, 4, false)
H(16, 4, 4, true) H(16, 4, 8, true) H(16, 4, 4, false)
H(8, 2, 4, true) H(8, 4, 4, true)
