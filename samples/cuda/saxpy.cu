// y = a * x + y, the first CUDA kernel most people write, unchanged: its launch
// file saxpy.spu gives the data and the launch a CUDA host program would.
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
