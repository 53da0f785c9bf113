// spu_cuda.h: the CUDA device API for the SPU toolchain, for CUDA C compiled to
// PTX by clang without NVIDIA's toolkit (`spu-emu kernel.cu`, `spu-asm kernel.cu`).
// The tools include it before the kernel's own code; `#include "spu_cuda.h"` and
// `#include <cuda_runtime.h>` also work. What it offers and what it does not is
// described in docs/from-cuda.md.
//
// - CUDA's keywords and built-in variables (threadIdx, blockIdx, blockDim, gridDim,
//   warpSize), vector types (int2, float4, ...), barriers and fences;
// - atomics on global and shared memory, bit operations, warp shuffles and votes;
// - the fast intrinsics (__expf, __sinf, ...) over the SFU's approximations, and the
//   maths library (expf, logf, sinf, powf, ...) implemented here, because libdevice
//   is part of NVIDIA's toolkit: correctly rounded where PTX has an instruction
//   (sqrtf, fmaf, floorf, ...), within 1 ulp otherwise (computed in double
//   precision and rounded once, with C99 Annex F's special values);
// - the SPU's own extensions: Communication Buffer loads and stores, blocksync in
//   each direction and globally, and code for the Interface Units (spu_is_iu).
//
// `__constant__` memory is not supported by the assembler; using it stops
// compilation with a message. printf is declared as CUDA declares it.

#pragma once
#ifndef SPU_CUDA_H
#define SPU_CUDA_H

#if !defined(__CUDA__) || !defined(__CUDA_ARCH__) && !defined(__clang__)
#error "spu_cuda.h is for CUDA C compiled by clang (clang -x cuda --cuda-device-only)"
#endif

// ---------------------------------------------------------------- keywords

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__                                                              \
    _Pragma("GCC error \"__constant__ memory is not supported on the SPU: use a kernel parameter or a __device__ array\"")
#define __managed__ __attribute__((managed))
#define __noinline__ __attribute__((noinline))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __restrict__ __restrict

#define __SPU_FN static __device__ __forceinline__
// The maths library's functions are called, not inlined: inlined into an unrolled
// loop, their double-precision temporaries would need more registers than a
// thread has.
#define __SPU_LIB static __device__ __noinline__

#include "__clang_cuda_builtin_vars.h"

// ---------------------------------------------------------------- vector types

#define __SPU_VEC2(T, N, A)                                                       \
    struct __attribute__((aligned(A))) N##2 { T x, y; };                          \
    __SPU_FN N##2 make_##N##2(T x, T y) { N##2 v = {x, y}; return v; }
#define __SPU_VEC3(T, N)                                                          \
    struct N##3 { T x, y, z; };                                                   \
    __SPU_FN N##3 make_##N##3(T x, T y, T z) { N##3 v = {x, y, z}; return v; }
#define __SPU_VEC4(T, N, A)                                                       \
    struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };                    \
    __SPU_FN N##4 make_##N##4(T x, T y, T z, T w) { N##4 v = {x, y, z, w}; return v; }
__SPU_VEC2(int, int, 8)
__SPU_VEC3(int, int)
__SPU_VEC4(int, int, 16)
__SPU_VEC2(unsigned int, uint, 8)
__SPU_VEC4(unsigned int, uint, 16)
__SPU_VEC2(float, float, 8)
__SPU_VEC3(float, float)
__SPU_VEC4(float, float, 16)
__SPU_VEC2(double, double, 16)

struct uint3 {
    unsigned int x, y, z;
};
__SPU_FN uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) {
    uint3 v = {x, y, z};
    return v;
}
struct dim3 {
    unsigned int x, y, z;
    __device__ __host__ dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1)
        : x(x), y(y), z(z) {}
    __device__ __host__ dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
#define __SPU_BUILTIN_CONVERSIONS(T)                                              \
    __device__ inline T::operator dim3() const { return dim3(x, y, z); }          \
    __device__ inline T::operator uint3() const { return make_uint3(x, y, z); }
__SPU_BUILTIN_CONVERSIONS(__cuda_builtin_threadIdx_t)
__SPU_BUILTIN_CONVERSIONS(__cuda_builtin_blockIdx_t)
__SPU_BUILTIN_CONVERSIONS(__cuda_builtin_blockDim_t)
__SPU_BUILTIN_CONVERSIONS(__cuda_builtin_gridDim_t)

// ---------------------------------------------------------------- barriers, fences

// __syncthreads() is an asm statement that clobbers memory, not clang's built-in:
// clang 14 takes its built-in (llvm.nvvm.barrier0) for one that touches no
// memory, and at -O2 moves a load of a `__shared__` variable above it.
__SPU_FN void __spu_syncthreads() { asm volatile("bar.sync 0;" ::: "memory"); }
#define __syncthreads() __spu_syncthreads()
__SPU_FN void __syncwarp(unsigned int mask = 0xffffffffu) {
    asm volatile("bar.warp.sync %0;" ::"r"(mask) : "memory");
}
__SPU_FN void __threadfence_block() { asm volatile("membar.cta;" ::: "memory"); }
__SPU_FN void __threadfence() { asm volatile("membar.gl;" ::: "memory"); }
__SPU_FN void __threadfence_system() { asm volatile("membar.sys;" ::: "memory"); }

// ---------------------------------------------------------------- printf

// clang turns printf in device code into vprintf(format, argument buffer).
extern "C" __device__ int vprintf(const char *, const char *);
extern "C" __device__ int printf(const char *, ...);

// ---------------------------------------------------------------- reinterpreting

__SPU_FN int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
__SPU_FN unsigned int __float_as_uint(float x) { return __builtin_bit_cast(unsigned int, x); }
__SPU_FN float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
__SPU_FN float __uint_as_float(unsigned int x) { return __builtin_bit_cast(float, x); }
__SPU_FN long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
__SPU_FN double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }

// ---------------------------------------------------------------- atomics

// Generic pointers: clang gives each access its state space (`atom.global`,
// `atom.shared`) where it can tell which, as it can for a kernel's pointer
// parameters and its __shared__ arrays.
__SPU_FN int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
__SPU_FN unsigned int atomicAdd(unsigned int *p, unsigned int v) {
    return __nvvm_atom_add_gen_i((int *)p, (int)v);
}
__SPU_FN unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    return __nvvm_atom_add_gen_ll((long long *)p, (long long)v);
}
__SPU_FN float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
__SPU_FN int atomicSub(int *p, int v) { return __nvvm_atom_add_gen_i(p, -v); }
__SPU_FN unsigned int atomicSub(unsigned int *p, unsigned int v) {
    return __nvvm_atom_add_gen_i((int *)p, -(int)v);
}
__SPU_FN int atomicExch(int *p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }
__SPU_FN unsigned int atomicExch(unsigned int *p, unsigned int v) {
    return __nvvm_atom_xchg_gen_i((int *)p, (int)v);
}
__SPU_FN float atomicExch(float *p, float v) {
    return __int_as_float(__nvvm_atom_xchg_gen_i((int *)p, __float_as_int(v)));
}
__SPU_FN int atomicMin(int *p, int v) { return __nvvm_atom_min_gen_i(p, v); }
__SPU_FN unsigned int atomicMin(unsigned int *p, unsigned int v) {
    return __nvvm_atom_min_gen_ui(p, v);
}
__SPU_FN int atomicMax(int *p, int v) { return __nvvm_atom_max_gen_i(p, v); }
__SPU_FN unsigned int atomicMax(unsigned int *p, unsigned int v) {
    return __nvvm_atom_max_gen_ui(p, v);
}
__SPU_FN int atomicCAS(int *p, int cmp, int v) { return __nvvm_atom_cas_gen_i(p, cmp, v); }
__SPU_FN unsigned int atomicCAS(unsigned int *p, unsigned int cmp, unsigned int v) {
    return __nvvm_atom_cas_gen_i((int *)p, (int)cmp, (int)v);
}
__SPU_FN unsigned long long atomicCAS(unsigned long long *p, unsigned long long cmp,
                                      unsigned long long v) {
    return __nvvm_atom_cas_gen_ll((long long *)p, (long long)cmp, (long long)v);
}
__SPU_FN int atomicAnd(int *p, int v) { return __nvvm_atom_and_gen_i(p, v); }
__SPU_FN unsigned int atomicAnd(unsigned int *p, unsigned int v) {
    return __nvvm_atom_and_gen_i((int *)p, (int)v);
}
__SPU_FN int atomicOr(int *p, int v) { return __nvvm_atom_or_gen_i(p, v); }
__SPU_FN unsigned int atomicOr(unsigned int *p, unsigned int v) {
    return __nvvm_atom_or_gen_i((int *)p, (int)v);
}
__SPU_FN int atomicXor(int *p, int v) { return __nvvm_atom_xor_gen_i(p, v); }
__SPU_FN unsigned int atomicXor(unsigned int *p, unsigned int v) {
    return __nvvm_atom_xor_gen_i((int *)p, (int)v);
}
// clang writes atom.inc and atom.dec for a generic address, which the SPU does
// not have: a compare-and-swap loop gives CUDA's values (inc: 0 once the old
// value reaches v, else old + 1; dec: v when the old value is 0 or above v, else
// old - 1).
__SPU_FN unsigned int atomicInc(unsigned int *p, unsigned int v) {
    unsigned int old = *(volatile unsigned int *)p, seen;
    while ((seen = atomicCAS(p, old, old >= v ? 0u : old + 1u)) != old) {
        old = seen;
    }
    return old;
}
__SPU_FN unsigned int atomicDec(unsigned int *p, unsigned int v) {
    unsigned int old = *(volatile unsigned int *)p, seen;
    while ((seen = atomicCAS(p, old, (old == 0u || old > v) ? v : old - 1u)) != old) {
        old = seen;
    }
    return old;
}

// ---------------------------------------------------------------- bits

__SPU_FN int __popc(unsigned int x) { return __builtin_popcount(x); }
__SPU_FN int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
__SPU_FN int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
__SPU_FN int __clzll(long long x) {
    return x == 0 ? 64 : __builtin_clzll((unsigned long long)x);
}
__SPU_FN int __ffs(int x) { return x == 0 ? 0 : __builtin_ctz((unsigned int)x) + 1; }
__SPU_FN int __ffsll(long long x) {
    return x == 0 ? 0 : __builtin_ctzll((unsigned long long)x) + 1;
}
__SPU_FN unsigned int __brev(unsigned int x) { return __builtin_bitreverse32(x); }
__SPU_FN unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }
__SPU_FN int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
__SPU_FN unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}

// ---------------------------------------------------------------- warps

__SPU_FN unsigned int __activemask() {
    unsigned int m;
    asm volatile("activemask.b32 %0;" : "=r"(m));
    return m;
}
__SPU_FN unsigned int __lanemask_lt() {
    unsigned int m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}
// `c` packs the clamp and the segment mask of PTX's shfl, as CUDA's headers do.
#define __SPU_SHFL(NAME, MODE, CLAMP)                                                       \
    __SPU_FN int NAME(unsigned int mask, int v, int b, int width = 32) {                    \
        int r;                                                                              \
        asm volatile("shfl.sync." MODE ".b32 %0, %1, %2, %3, %4;"                           \
                     : "=r"(r)                                                              \
                     : "r"(v), "r"(b), "r"(((32 - width) << 8) | (CLAMP)), "r"(mask));      \
        return r;                                                                           \
    }                                                                                       \
    __SPU_FN unsigned int NAME(unsigned int mask, unsigned int v, int b, int width = 32) {  \
        return (unsigned int)NAME(mask, (int)v, b, width);                                  \
    }                                                                                       \
    __SPU_FN float NAME(unsigned int mask, float v, int b, int width = 32) {                \
        return __int_as_float(NAME(mask, __float_as_int(v), b, width));                     \
    }
__SPU_SHFL(__shfl_sync, "idx", 0x1f)
__SPU_SHFL(__shfl_up_sync, "up", 0)
__SPU_SHFL(__shfl_down_sync, "down", 0x1f)
__SPU_SHFL(__shfl_xor_sync, "bfly", 0x1f)

#define __SPU_VOTE(NAME, MODE)                                                    \
    __SPU_FN int NAME(unsigned int mask, int pred) {                              \
        int r;                                                                    \
        asm volatile("{\n\t.reg .pred %%spu_p<2>;\n\t"                            \
                     "setp.ne.u32 %%spu_p0, %1, 0;\n\t"                           \
                     "vote.sync." MODE ".pred %%spu_p1, %%spu_p0, %2;\n\t"        \
                     "selp.u32 %0, 1, 0, %%spu_p1;\n\t}"                          \
                     : "=r"(r)                                                    \
                     : "r"(pred), "r"(mask));                                     \
        return r;                                                                 \
    }
__SPU_VOTE(__all_sync, "all")
__SPU_VOTE(__any_sync, "any")
__SPU_VOTE(__uni_sync, "uni")
__SPU_FN unsigned int __ballot_sync(unsigned int mask, int pred) {
    unsigned int r;
    asm volatile("{\n\t.reg .pred %%spu_p0;\n\t"
                 "setp.ne.u32 %%spu_p0, %1, 0;\n\t"
                 "vote.sync.ballot.b32 %0, %%spu_p0, %2;\n\t}"
                 : "=r"(r)
                 : "r"(pred), "r"(mask));
    return r;
}

// ---------------------------------------------------------------- fast intrinsics

// The SFU's approximations (ex2.approx, lg2.approx, sin.approx, cos.approx), as
// CUDA's --use_fast_math versions.
__SPU_FN float __exp2f_approx(float x) { return __nvvm_ex2_approx_f(x); }
__SPU_FN float __expf(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
__SPU_FN float __exp10f(float x) { return __nvvm_ex2_approx_f(x * 3.3219280948873622f); }
__SPU_FN float __log2f(float x) { return __nvvm_lg2_approx_f(x); }
__SPU_FN float __logf(float x) { return __nvvm_lg2_approx_f(x) * 0.6931471805599453f; }
__SPU_FN float __log10f(float x) { return __nvvm_lg2_approx_f(x) * 0.3010299956639812f; }
__SPU_FN float __sinf(float x) { return __nvvm_sin_approx_f(x); }
__SPU_FN float __cosf(float x) { return __nvvm_cos_approx_f(x); }
__SPU_FN float __tanf(float x) { return __nvvm_sin_approx_f(x) / __nvvm_cos_approx_f(x); }
__SPU_FN void __sincosf(float x, float *s, float *c) {
    *s = __nvvm_sin_approx_f(x);
    *c = __nvvm_cos_approx_f(x);
}
__SPU_FN float __powf(float x, float y) {
    return __nvvm_ex2_approx_f(y * __nvvm_lg2_approx_f(x));
}
__SPU_FN float __fdividef(float x, float y) { return __nvvm_div_approx_f(x, y); }
__SPU_FN float __frsqrt_rn(float x) { return __nvvm_rsqrt_approx_f(x); }
__SPU_FN float __saturatef(float x) { return __nvvm_saturate_f(x); }
// The correctly rounded operations in each of CUDA's rounding directions: _rn (to
// nearest, ties to even), _rz (towards zero), _ru (up: PTX's .rp), _rd (down:
// PTX's .rm). Never fused into an fma with a neighbouring operation (clang, like
// nvcc, fuses `a * b + c` otherwise): for results that must match another program
// bit for bit. (Inline PTX: clang would turn its built-ins for these back into
// plain operations.)
#define __SPU_OP1(T, NAME, PTX, C)                                                \
    __SPU_FN T NAME(T a) {                                                        \
        T d;                                                                      \
        asm(PTX " %0, %1;" : "=" C(d) : C(a));                                    \
        return d;                                                                 \
    }
#define __SPU_OP2(T, NAME, PTX, C)                                                \
    __SPU_FN T NAME(T a, T b) {                                                   \
        T d;                                                                      \
        asm(PTX " %0, %1, %2;" : "=" C(d) : C(a), C(b));                          \
        return d;                                                                 \
    }
#define __SPU_OP3(T, NAME, PTX, C)                                                \
    __SPU_FN T NAME(T a, T b, T c) {                                              \
        T d;                                                                      \
        asm(PTX " %0, %1, %2, %3;" : "=" C(d) : C(a), C(b), C(c));                \
        return d;                                                                 \
    }
#define __SPU_ROUNDED(N, T, NAME, OP, TY, C)                                      \
    __SPU_OP##N(T, NAME##_rn, OP ".rn." TY, C)                                    \
    __SPU_OP##N(T, NAME##_rz, OP ".rz." TY, C)                                    \
    __SPU_OP##N(T, NAME##_ru, OP ".rp." TY, C)                                    \
    __SPU_OP##N(T, NAME##_rd, OP ".rm." TY, C)
__SPU_ROUNDED(2, float, __fadd, "add", "f32", "f")
__SPU_ROUNDED(2, float, __fsub, "sub", "f32", "f")
__SPU_ROUNDED(2, float, __fmul, "mul", "f32", "f")
__SPU_ROUNDED(2, float, __fdiv, "div", "f32", "f")
__SPU_ROUNDED(3, float, __fmaf, "fma", "f32", "f")
__SPU_ROUNDED(1, float, __frcp, "rcp", "f32", "f")
__SPU_ROUNDED(1, float, __fsqrt, "sqrt", "f32", "f")
__SPU_ROUNDED(2, double, __dadd, "add", "f64", "d")
__SPU_ROUNDED(2, double, __dsub, "sub", "f64", "d")
__SPU_ROUNDED(2, double, __dmul, "mul", "f64", "d")
__SPU_ROUNDED(2, double, __ddiv, "div", "f64", "d")
__SPU_ROUNDED(3, double, __fma, "fma", "f64", "d")
__SPU_ROUNDED(1, double, __drcp, "rcp", "f64", "d")
__SPU_ROUNDED(1, double, __dsqrt, "sqrt", "f64", "d")

// Conversions in each rounding direction: to an integer, PTX's .rni/.rzi/.rpi/.rmi
// (NaN gives the value PTX gives); to a float, .rn/.rz/.rp/.rm.
#define __SPU_CVT(TO, FROM, NAME, PTX, CTO, CFROM)                                \
    __SPU_FN TO NAME(FROM a) {                                                    \
        TO d;                                                                     \
        asm(PTX " %0, %1;" : "=" CTO(d) : CFROM(a));                              \
        return d;                                                                 \
    }
#define __SPU_TO_INT(TO, FROM, NAME, TYS, CTO, CFROM)                             \
    __SPU_CVT(TO, FROM, NAME##_rn, "cvt.rni." TYS, CTO, CFROM)                    \
    __SPU_CVT(TO, FROM, NAME##_rz, "cvt.rzi." TYS, CTO, CFROM)                    \
    __SPU_CVT(TO, FROM, NAME##_ru, "cvt.rpi." TYS, CTO, CFROM)                    \
    __SPU_CVT(TO, FROM, NAME##_rd, "cvt.rmi." TYS, CTO, CFROM)
#define __SPU_TO_FLOAT(TO, FROM, NAME, TYS, CTO, CFROM)                           \
    __SPU_CVT(TO, FROM, NAME##_rn, "cvt.rn." TYS, CTO, CFROM)                     \
    __SPU_CVT(TO, FROM, NAME##_rz, "cvt.rz." TYS, CTO, CFROM)                     \
    __SPU_CVT(TO, FROM, NAME##_ru, "cvt.rp." TYS, CTO, CFROM)                     \
    __SPU_CVT(TO, FROM, NAME##_rd, "cvt.rm." TYS, CTO, CFROM)
__SPU_TO_INT(int, float, __float2int, "s32.f32", "r", "f")
__SPU_TO_INT(unsigned int, float, __float2uint, "u32.f32", "r", "f")
__SPU_TO_INT(long long, float, __float2ll, "s64.f32", "l", "f")
__SPU_TO_INT(unsigned long long, float, __float2ull, "u64.f32", "l", "f")
__SPU_TO_INT(int, double, __double2int, "s32.f64", "r", "d")
__SPU_TO_INT(unsigned int, double, __double2uint, "u32.f64", "r", "d")
__SPU_TO_INT(long long, double, __double2ll, "s64.f64", "l", "d")
__SPU_TO_INT(unsigned long long, double, __double2ull, "u64.f64", "l", "d")
__SPU_TO_FLOAT(float, int, __int2float, "f32.s32", "f", "r")
__SPU_TO_FLOAT(float, unsigned int, __uint2float, "f32.u32", "f", "r")
__SPU_TO_FLOAT(float, long long, __ll2float, "f32.s64", "f", "l")
__SPU_TO_FLOAT(float, unsigned long long, __ull2float, "f32.u64", "f", "l")
__SPU_TO_FLOAT(double, long long, __ll2double, "f64.s64", "d", "l")
__SPU_TO_FLOAT(double, unsigned long long, __ull2double, "f64.u64", "d", "l")
__SPU_TO_FLOAT(float, double, __double2float, "f32.f64", "f", "d")
// Exact: every 32-bit integer is a double.
__SPU_CVT(double, int, __int2double_rn, "cvt.rn.f64.s32", "d", "r")
__SPU_CVT(double, unsigned int, __uint2double_rn, "cvt.rn.f64.u32", "d", "r")
#undef __SPU_TO_FLOAT
#undef __SPU_TO_INT
#undef __SPU_CVT
#undef __SPU_ROUNDED
#undef __SPU_OP3
#undef __SPU_OP2
#undef __SPU_OP1

// ---------------------------------------------------------------- maths library

// One instruction each, correctly rounded.
__SPU_FN float sqrtf(float x) { return __nvvm_sqrt_rn_f(x); }
__SPU_FN double sqrt(double x) { return __nvvm_sqrt_rn_d(x); }
__SPU_FN float rsqrtf(float x) { return __nvvm_rsqrt_approx_f(x); }
__SPU_FN float fabsf(float x) { return __nvvm_fabs_f(x); }
__SPU_FN double fabs(double x) { return __nvvm_fabs_d(x); }
__SPU_FN float fminf(float a, float b) { return __nvvm_fmin_f(a, b); }
__SPU_FN float fmaxf(float a, float b) { return __nvvm_fmax_f(a, b); }
__SPU_FN double fmin(double a, double b) { return __nvvm_fmin_d(a, b); }
__SPU_FN double fmax(double a, double b) { return __nvvm_fmax_d(a, b); }
__SPU_FN float floorf(float x) { return __nvvm_floor_f(x); }
__SPU_FN float ceilf(float x) { return __nvvm_ceil_f(x); }
__SPU_FN float truncf(float x) { return __nvvm_trunc_f(x); }
// Halfway cases to even (clang 14 turns __nvvm_round_* into C's round, away
// from zero): PTX's cvt.rni.
__SPU_FN float rintf(float x) {
    float d;
    asm("cvt.rni.f32.f32 %0, %1;" : "=f"(d) : "f"(x));
    return d;
}
__SPU_FN float nearbyintf(float x) { return rintf(x); }
__SPU_FN double floor(double x) { return __nvvm_floor_d(x); }
__SPU_FN double ceil(double x) { return __nvvm_ceil_d(x); }
__SPU_FN double trunc(double x) { return __nvvm_trunc_d(x); }
__SPU_FN double rint(double x) {
    double d;
    asm("cvt.rni.f64.f64 %0, %1;" : "=d"(d) : "d"(x));
    return d;
}
__SPU_FN double nearbyint(double x) { return rint(x); }
// Halfway cases away from zero, as C's roundf.
__SPU_FN float roundf(float x) {
    float t = truncf(x);
    return fabsf(x - t) >= 0.5f ? t + (x < 0.0f ? -1.0f : 1.0f) : t;
}
__SPU_FN float fmaf(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
__SPU_FN double fma(double a, double b, double c) { return __nvvm_fma_rn_d(a, b, c); }
__SPU_FN float copysignf(float a, float b) {
    return __int_as_float((__float_as_int(a) & 0x7fffffff) | (__float_as_int(b) & (int)0x80000000));
}
// NaN when either operand is NaN (C99 7.12.12.1), as CUDA's fdimf.
__SPU_FN float fdimf(float a, float b) { return a > b ? a - b : a != a || b != b ? a + b : 0.0f; }
__SPU_FN int isnan(float x) { return x != x; }
__SPU_FN int isinf(float x) { return fabsf(x) == __int_as_float(0x7f800000); }
__SPU_FN int isfinite(float x) { return fabsf(x) < __int_as_float(0x7f800000); }
__SPU_FN int signbit(float x) { return __float_as_int(x) < 0; }
__SPU_FN int min(int a, int b) { return a < b ? a : b; }
__SPU_FN int max(int a, int b) { return a > b ? a : b; }
__SPU_FN unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
__SPU_FN unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
__SPU_FN int abs(int x) { return x < 0 ? -x : x; }

// The rest are computed in double precision and rounded once to float: within
// 1 ulp of the exact value (the tests check every function against Rust's over
// many arguments). ln and e^x in double, accurate to a few parts in 10^15.
__SPU_LIB double __spu_exp(double t) {
    if (t != t) return t;
    if (t > 710.0) return __longlong_as_double(0x7ff0000000000000ll);
    if (t < -746.0) return 0.0;
    // t = k ln2 + r, |r| <= ln2 / 2; ln2 in two parts so k ln2 is exact.
    double k = rint(t * 1.4426950408889634);
    double r = fma(-k, 6.93147180369123816490e-01, t);
    r = fma(-k, 1.90821492927058770002e-10, r);
    // e^r by its Taylor series to r^13 / 13!: below 1e-16 relative for |r| < 0.35.
    double p = 1.0 / 6227020800.0;
    p = fma(p, r, 1.0 / 479001600.0);
    p = fma(p, r, 1.0 / 39916800.0);
    p = fma(p, r, 1.0 / 3628800.0);
    p = fma(p, r, 1.0 / 362880.0);
    p = fma(p, r, 1.0 / 40320.0);
    p = fma(p, r, 1.0 / 5040.0);
    p = fma(p, r, 1.0 / 720.0);
    p = fma(p, r, 1.0 / 120.0);
    p = fma(p, r, 1.0 / 24.0);
    p = fma(p, r, 1.0 / 6.0);
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    // 2^k in two factors, so that neither overflows nor underflows early.
    int ki = (int)k;
    int k1 = ki / 2, k2 = ki - ki / 2;
    return p * __longlong_as_double((long long)(1023 + k1) << 52) *
           __longlong_as_double((long long)(1023 + k2) << 52);
}
__SPU_LIB double __spu_log(double x) {
    if (x != x || x < 0.0) return __longlong_as_double(0x7ff8000000000000ll);
    if (x == 0.0) return __longlong_as_double((long long)0xfff0000000000000ull);
    if (x == __longlong_as_double(0x7ff0000000000000ll)) return x;
    long long bits = __double_as_longlong(x);
    int e = 0;
    if (bits < (1ll << 52)) {  // subnormal
        x *= 18014398509481984.0;  // 2^54
        bits = __double_as_longlong(x);
        e = -54;
    }
    e += (int)(bits >> 52) - 1023;
    double m = __longlong_as_double((bits & 0x000fffffffffffffll) | 0x3ff0000000000000ll);
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e += 1;
    }
    // ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716.
    double s = (m - 1.0) / (m + 1.0);
    double z = s * s;
    double p = 1.0 / 23.0;
    p = fma(p, z, 1.0 / 21.0);
    p = fma(p, z, 1.0 / 19.0);
    p = fma(p, z, 1.0 / 17.0);
    p = fma(p, z, 1.0 / 15.0);
    p = fma(p, z, 1.0 / 13.0);
    p = fma(p, z, 1.0 / 11.0);
    p = fma(p, z, 1.0 / 9.0);
    p = fma(p, z, 1.0 / 7.0);
    p = fma(p, z, 1.0 / 5.0);
    p = fma(p, z, 1.0 / 3.0);
    double lnm = 2.0 * s + 2.0 * s * z * p;
    return fma((double)e, 6.93147180559945286227e-01, lnm);
}
__SPU_LIB float expf(float x) { return (float)__spu_exp((double)x); }
__SPU_LIB float exp2f(float x) { return (float)__spu_exp((double)x * 0.69314718055994531); }
__SPU_LIB float exp10f(float x) { return (float)__spu_exp((double)x * 2.3025850929940457); }
__SPU_LIB float expm1f(float x) {
    if (x == 0.0f) return x;  // keeps the sign of zero (C99 F.9.3.3)
    // Near 0, e^x - 1 loses its digits to cancellation; the series keeps them.
    double d = (double)x;
    if (fabs(d) < 1e-3) return (float)(d + d * d * (0.5 + d * (1.0 / 6.0 + d / 24.0)));
    return (float)(__spu_exp(d) - 1.0);
}
__SPU_LIB float logf(float x) { return (float)__spu_log((double)x); }
__SPU_LIB float log2f(float x) { return (float)(__spu_log((double)x) * 1.4426950408889634); }
__SPU_LIB float log10f(float x) { return (float)(__spu_log((double)x) * 0.43429448190325182); }
__SPU_LIB float log1pf(float x) {
    double d = (double)x;
    if (fabs(d) < 1e-4) return (float)(d - d * d * (0.5 - d / 3.0));
    return (float)__spu_log(1.0 + d);
}
__SPU_LIB float powf(float x, float y) {
    if (y == 0.0f || x == 1.0f) return 1.0f;
    if (x != x || y != y) return x + y;
    if (x == -1.0f && isinf(y)) return 1.0f;  // C99 F.9.4.4
    double ax = fabs((double)x);
    // A negative base needs an integer exponent; an odd one keeps the sign.
    bool odd = false;
    if (x < 0.0f || (x == 0.0f && signbit(x))) {
        if (truncf(y) != y) {
            // -inf to a non-integer power is +inf or +0 (C99 F.9.4.4).
            if (x < 0.0f && !isinf(x)) return __int_as_float(0x7fc00000);
        } else {
            odd = fabsf(y) < 16777216.0f && ((long long)y & 1);
        }
    }
    float r = (float)__spu_exp((double)y * __spu_log(ax));
    return odd ? -r : r;
}
__SPU_LIB float cbrtf(float x) {
    if (x == 0.0f || x != x || isinf(x)) return x;
    double r = __spu_exp(__spu_log(fabs((double)x)) / 3.0);
    // One Newton step in double against the rounding of exp and log.
    r = r - (r * r * r - fabs((double)x)) / (3.0 * r * r);
    return x < 0.0f ? -(float)r : (float)r;
}
__SPU_LIB float hypotf(float a, float b) {
    // An infinite side wins over a NaN (C99 F.9.4.3).
    if (isinf(a) || isinf(b)) return __int_as_float(0x7f800000);
    return (float)sqrt((double)a * (double)a + (double)b * (double)b);
}
__SPU_LIB float sinhf(float x) {
    double d = (double)x;
    if (fabs(d) < 1e-3) return (float)(d + d * d * d / 6.0);
    double e = __spu_exp(d);
    return (float)((e - 1.0 / e) * 0.5);
}
__SPU_LIB float coshf(float x) {
    double e = __spu_exp((double)x);
    return (float)((e + 1.0 / e) * 0.5);
}
__SPU_LIB float tanhf(float x) {
    if (x == 0.0f) return x;  // keeps the sign of zero (C99 F.9.2.6)
    double d = (double)x;
    if (fabs(d) < 1e-3) return (float)(d - d * d * d / 3.0);
    if (fabs(d) > 20.0) return d > 0.0 ? 1.0f : -1.0f;
    double e = __spu_exp(2.0 * d);
    return (float)((e - 1.0) / (e + 1.0));
}

// sin and cos: x = n pi/2 + y, then musl's double-precision kernels on
// |y| <= pi/4. For |x| < 2^28, y in double with pi/2 in 25 + 53 bits (n has at
// most 28 bits, so n times the first part is exact); above, Payne and Hanek's
// reduction with 2/pi to 224 bits (__spu_reduce_large).
__SPU_FN double __spu_sin_kernel(double x) {
    const double S1 = -1.66666666416265235595e-01, S2 = 8.33332938588946318e-03,
                 S3 = -1.98393348360966317347e-04, S4 = 2.71831149398982191475e-06;
    double z = x * x, w = z * z, r = S3 + z * S4, s = z * x;
    return (x + s * (S1 + z * S2)) + s * w * r;
}
__SPU_FN double __spu_cos_kernel(double x) {
    const double C0 = -4.99999997251031003120e-01, C1 = 4.16666233237390631894e-02,
                 C2 = -1.38867637746099294692e-03, C3 = 2.43904487962774090654e-05;
    double z = x * x, w = z * z, r = C2 + z * C3;
    return ((1.0 + z * C0) + w * C1) + (w * z) * r;
}
// |x| >= 2^28 (finite): x = m 2^e with m an integer below 2^24, so x 2/pi =
// m T 2^(e - 224) with T = floor(2^224 2/pi). Returns the bits of m T around the
// binary point: two integer bits (n mod 4), then 62 fraction bits. The bits of
// 2/pi beyond T change m T by less than 2^24, far below them (e <= 104 puts
// them at bit 58 or above). Not inlined, so that its array stays out of the
// callers' frames.
__SPU_LIB unsigned long long __spu_x_2_over_pi(float x) {
    const unsigned int T[7] = {0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0,
                               0xdb629599, 0x3c439041, 0xfe5163ab};
    unsigned int ix = __float_as_uint(x);
    int e = (int)((ix >> 23) & 0xff) - 150;
    unsigned long long m = (ix & 0x7fffff) | 0x800000;
    unsigned int p[8];  // m T, most significant word first
    unsigned long long c = 0;
#pragma unroll
    for (int i = 6; i >= 0; i--) {
        c += m * T[i];
        p[i + 1] = (unsigned int)c;
        c >>= 32;
    }
    p[0] = (unsigned int)c;
    int lo = 224 - e - 62;  // the lowest bit wanted
    int a = lo >> 5, s = lo & 31;
    unsigned long long w = ((unsigned long long)p[6 - a] << 32) | p[7 - a];
    if (s) w = (w >> s) | ((unsigned long long)p[5 - a] << (64 - s));
    return w;
}
// x = n pi/2 + y with |y| <= pi/4 (about); returns n.
__SPU_FN int __spu_reduce(float x, double *y) {
    if (fabsf(x) >= 268435456.0f) {  // 2^28: Payne and Hanek
        unsigned long long w = __spu_x_2_over_pi(fabsf(x));
        // To the nearest multiple of pi/2: the fraction as a signed 62-bit number.
        long long f = (long long)(w << 2) >> 2;
        int n = (int)(w >> 62) + (f < 0);
        double r = (double)f * 3.4061215800865545e-19;  // (pi/2) / 2^62
        *y = x < 0.0f ? -r : r;
        return x < 0.0f ? -n : n;
    }
    double d = (double)x;
    double n = rint(d * 6.36619772367581382433e-01);
    *y = (d - n * 1.57079631090164184570e+00) - n * 1.58932547735281966916e-08;
    return (int)(long long)n;
}
__SPU_LIB float sinf(float x) {
    if (x == 0.0f) return x;  // keeps the sign of zero
    if (isinf(x)) return __int_as_float(0x7fc00000);
    double y;
    int n = __spu_reduce(x, &y);
    double r;
    switch (n & 3) {
    case 0: r = __spu_sin_kernel(y); break;
    case 1: r = __spu_cos_kernel(y); break;
    case 2: r = -__spu_sin_kernel(y); break;
    default: r = -__spu_cos_kernel(y); break;
    }
    return (float)r;
}
__SPU_LIB float cosf(float x) {
    if (isinf(x)) return __int_as_float(0x7fc00000);
    double y;
    int n = __spu_reduce(x, &y);
    double r;
    switch (n & 3) {
    case 0: r = __spu_cos_kernel(y); break;
    case 1: r = -__spu_sin_kernel(y); break;
    case 2: r = -__spu_cos_kernel(y); break;
    default: r = __spu_sin_kernel(y); break;
    }
    return (float)r;
}
// Inlined, so that `s` and `c` may point at the caller's local variables.
__SPU_FN void sincosf(float x, float *s, float *c) {
    *s = sinf(x);
    *c = cosf(x);
}
__SPU_LIB float tanf(float x) {
    if (x == 0.0f) return x;  // keeps the sign of zero
    if (isinf(x)) return __int_as_float(0x7fc00000);
    double y;
    int n = __spu_reduce(x, &y);
    double s = __spu_sin_kernel(y), c = __spu_cos_kernel(y);
    return (float)((n & 1) ? -c / s : s / c);
}
// atan on [0, 1] by argument halving and its series; the others from it.
__SPU_LIB double __spu_atan(double x) {
    if (x == 0.0) return x;  // keeps the sign of zero
    double a = fabs(x);
    bool inv = a > 1.0;
    if (inv) a = 1.0 / a;
    // atan(a) = 2 atan(a / (1 + sqrt(1 + a^2))), twice: |a| < 0.2.
    a = a / (1.0 + sqrt(1.0 + a * a));
    a = a / (1.0 + sqrt(1.0 + a * a));
    double z = a * a, p = -1.0 / 19.0;
    p = fma(p, z, 1.0 / 17.0);
    p = fma(p, z, -1.0 / 15.0);
    p = fma(p, z, 1.0 / 13.0);
    p = fma(p, z, -1.0 / 11.0);
    p = fma(p, z, 1.0 / 9.0);
    p = fma(p, z, -1.0 / 7.0);
    p = fma(p, z, 1.0 / 5.0);
    p = fma(p, z, -1.0 / 3.0);
    double r = 4.0 * (a + a * z * p);
    if (inv) r = 1.57079632679489661923 - r;
    return x < 0.0 ? -r : r;
}
__SPU_LIB float atanf(float x) { return (float)__spu_atan((double)x); }
__SPU_LIB float atan2f(float y, float x) {
    double dy = (double)y, dx = (double)x;
    const double pi = 3.14159265358979323846;
    if (x != x || y != y) return x + y;
    // Both infinite: the diagonals (C99 F.9.1.4).
    if (isinf(x) && isinf(y)) return copysignf(x > 0.0f ? (float)(pi / 4) : (float)(3 * pi / 4), y);
    if (x == 0.0f) return y == 0.0f ? (signbit(x) ? (signbit(y) ? -(float)pi : (float)pi) : y)
                                   : (y > 0.0f ? (float)(pi / 2) : -(float)(pi / 2));
    double r = __spu_atan(dy / dx);
    if (x < 0.0f) r += signbit(y) ? -pi : pi;
    return (float)r;
}
__SPU_LIB float asinf(float x) {
    double d = (double)x;
    if (fabs(d) > 1.0) return __int_as_float(0x7fc00000);
    if (fabs(d) == 1.0) return (float)(d * 1.57079632679489661923);
    return (float)__spu_atan(d / sqrt(1.0 - d * d));
}
__SPU_LIB float acosf(float x) {
    double d = (double)x;
    if (fabs(d) > 1.0) return __int_as_float(0x7fc00000);
    return (float)(1.57079632679489661923 - (fabs(d) == 1.0 ? d * 1.57079632679489661923
                                                           : __spu_atan(d / sqrt(1.0 - d * d))));
}

// ---------------------------------------------------------------- SPU extensions

// Communication Buffers (CBs): a unit reads the CBs it receives from its north and
// west neighbours and writes the ones it sends south and east (data flows west to
// east and north to south). `offset` is a byte address in the buffer.
__SPU_FN float spu_cb_load_north(unsigned int offset) {
    float v;
    asm volatile("ld.cb.north.f32 %0, [%1];" : "=f"(v) : "r"(offset) : "memory");
    return v;
}
__SPU_FN float spu_cb_load_west(unsigned int offset) {
    float v;
    asm volatile("ld.cb.west.f32 %0, [%1];" : "=f"(v) : "r"(offset) : "memory");
    return v;
}
__SPU_FN void spu_cb_store_south(unsigned int offset, float v) {
    asm volatile("st.cb.south.f32 [%0], %1;" ::"r"(offset), "f"(v) : "memory");
}
__SPU_FN void spu_cb_store_east(unsigned int offset, float v) {
    asm volatile("st.cb.east.f32 [%0], %1;" ::"r"(offset), "f"(v) : "memory");
}
__SPU_FN unsigned int spu_cb_load_north_u32(unsigned int offset) {
    unsigned int v;
    asm volatile("ld.cb.north.u32 %0, [%1];" : "=r"(v) : "r"(offset) : "memory");
    return v;
}
__SPU_FN unsigned int spu_cb_load_west_u32(unsigned int offset) {
    unsigned int v;
    asm volatile("ld.cb.west.u32 %0, [%1];" : "=r"(v) : "r"(offset) : "memory");
    return v;
}
__SPU_FN void spu_cb_store_south_u32(unsigned int offset, unsigned int v) {
    asm volatile("st.cb.south.u32 [%0], %1;" ::"r"(offset), "r"(v) : "memory");
}
__SPU_FN void spu_cb_store_east_u32(unsigned int offset, unsigned int v) {
    asm volatile("st.cb.east.u32 [%0], %1;" ::"r"(offset), "r"(v) : "memory");
}

// blocksync: the block (every thread must call it, as __syncthreads) meets the
// neighbour on one side, which switches the CB pair between them; without a side,
// every active block and IU meets (the global sync).
__SPU_FN void spu_blocksync_north() { asm volatile("bar.blocksync.north;" ::: "memory"); }
__SPU_FN void spu_blocksync_south() { asm volatile("bar.blocksync.south;" ::: "memory"); }
__SPU_FN void spu_blocksync_east() { asm volatile("bar.blocksync.east;" ::: "memory"); }
__SPU_FN void spu_blocksync_west() { asm volatile("bar.blocksync.west;" ::: "memory"); }
__SPU_FN void spu_blocksync() { asm volatile("bar.blocksync;" ::: "memory"); }

// Interface Units run the kernel too when it calls spu_is_iu(): `if (spu_is_iu())
// { ...IU code...; return; }` at the start of the kernel. IUs have no FPU, SFU or
// shared memory; their code moves words with integer arithmetic.
__SPU_FN bool spu_is_iu() {
    unsigned int r;
    asm volatile(".iu;\n\tmov.u32 %0, %%is_iu;" : "=r"(r));
    return r != 0;
}
// The side of the executing IU (0 north, 1 south, 2 east, 3 west) and its
// position along it (block column for north and south, row for east and west).
__SPU_FN unsigned int spu_iu_dir() {
    unsigned int r;
    asm("mov.u32 %0, %%iudir;" : "=r"(r));
    return r;
}
__SPU_FN unsigned int spu_iu_id() {
    unsigned int r;
    asm("mov.u32 %0, %%iuid;" : "=r"(r));
    return r;
}
enum { SPU_NORTH = 0, SPU_SOUTH = 1, SPU_EAST = 2, SPU_WEST = 3 };
// The SM running the block: its column and row in the grid, its linear index.
__SPU_FN unsigned int spu_sm_x() {
    unsigned int r;
    asm("mov.u32 %0, %%smid.x;" : "=r"(r));
    return r;
}
__SPU_FN unsigned int spu_sm_y() {
    unsigned int r;
    asm("mov.u32 %0, %%smid.y;" : "=r"(r));
    return r;
}
__SPU_FN unsigned int spu_clock() {
    unsigned int r;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(r));
    return r;
}
__SPU_FN int clock() { return (int)spu_clock(); }

#undef __SPU_VEC2
#undef __SPU_VEC3
#undef __SPU_VEC4
#undef __SPU_BUILTIN_CONVERSIONS
#undef __SPU_SHFL
#undef __SPU_VOTE

#endif  // SPU_CUDA_H
