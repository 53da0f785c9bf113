// What CUDA C programs commonly use, in one kernel: a by-value struct parameter, a
// 3-D grid, a per-thread array in local memory indexed at run time, sinf,
// __noinline__ device functions (one taking the struct by value) and printf. Its
// launch file is wave3d.spu.

struct Wave {
    float amplitude;
    float frequency;
    int harmonics;  // how many of the 8 partials to add
    float *out;
};

// A device function the compiler keeps: called, not inlined.
__device__ __noinline__ float soft_clip(float s, float limit) {
    return s > limit ? limit : (s < -limit ? -limit : s);
}

// The struct passed on by value to another device function.
__device__ __noinline__ float scale(float s, Wave w) {
    return w.amplitude * soft_clip(s, 1.5f);
}

extern "C" __global__ void wave3d(const float *in, Wave w, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (threadIdx.x == 0 && threadIdx.y == 0)
        printf("block (%d, %d, %d): %d harmonics, amplitude %.2f\n", blockIdx.x, blockIdx.y,
               blockIdx.z, w.harmonics, w.amplitude);
    if (x >= nx || y >= ny || z >= nz)
        return;
    int i = (z * ny + y) * nx + x;
    // The partials of a square wave; read back rotated by z, an index known only
    // at run time, so the array stays in local memory.
    float partial[8];
    for (int h = 0; h < 8; h++) {
        float k = 2 * h + 1;
        partial[h] = sinf(w.frequency * k * in[i]) / k;
    }
    float s = 0.0f;
    for (int h = 0; h < w.harmonics; h++)
        s += partial[(h + z) % 8];
    w.out[i] = scale(s, w);
}
