// Fused equalizer, 8-bit planes.
#include "bench/sweep/instances.cuh"
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define F(B, K, U, P, A) static sweep::Registrar CAT(reg_, __COUNTER__)(sweep::make_fused<uint8_t, 256, sweep::L<B, K, U, P>, A>());
F(16, 1, 4, true, 4) F(16, 1, 4, true, 8) F(16, 2, 4, true, 4) F(16, 2, 4, true, 8) F(32, 2, 4, true, 8) F(8, 1, 2, true, 8)
