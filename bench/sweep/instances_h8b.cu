// 8-bit, 256 bins: 32- and 8-bit counters.
#include "bench/sweep/instances.cuh"
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define H(B, K, U, P) static sweep::Registrar CAT(reg_, __COUNTER__)(sweep::make_hist<uint8_t, 256, sweep::L<B, K, U, P>>());
H(32, 1, 2, true) H(32, 1, 4, true) H(32, 1, 8, true)
H(32, 2, 2, true) H(32, 2, 4, true) H(32, 2, 8, true)
H(32, 4, 2, true) H(32, 4, 4, true)
H(8, 1, 2, true) H(8, 1, 4, true) H(8, 2, 2, true) H(8, 2, 4, true)
