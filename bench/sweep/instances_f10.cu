// Fused equalizer, 16-bit planes (10-bit data).
#include "bench/sweep/instances.cuh"
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define F(B, K, U, P, A) static sweep::Registrar CAT(reg_, __COUNTER__)(sweep::make_fused<uint16_t, 1024, sweep::L<B, K, U, P>, A>());
F(16, 2, 4, true, 8) F(16, 4, 4, true, 8) F(16, 4, 8, true, 8) F(16, 4, 4, true, 4) F(8, 4, 4, true, 8)
