// 2-D stencil with producer-consumer blocksync (thesis Ch. 3 and Algorithm 3), in
// CUDA C: the kernel of stencil_pc.spu, computing the same values in the same order
// and moving the same words off chip. See README.md for the method.
//
//   H[i,j,k] = (H[i-1,j,k] + H[i,j-1,k] + H[i,j,k-1]) / 3
//
// Block (bx, by) owns rows 32*by .. +32 and columns 32*bx .. +32; its 8x8 threads
// each own a 4x4 subtile. North and west inputs arrive through the CBs as 32x32
// tiles laid out [j][k] and [i][k]; south and east outputs leave the same way. The
// Interface Units run the same kernel (spu_is_iu) and move the tiles between the
// CBs and global memory.

#define TILE 32

// IU code: north and west IUs load C and B tiles into their CB, south and east IUs
// store Hi and Hj tiles from theirs. Thread t copies words t, t + 32, ... of each
// tile; element [row][col] of tile `t` is at row 32*iuid + row, column 32*t + col.
static __device__ __forceinline__ void interface_unit(const unsigned *B, const unsigned *C,
                                                       unsigned *Hi, unsigned *Hj,
                                                       unsigned K) {
    unsigned dir = spu_iu_dir();
    unsigned base = spu_iu_id() * TILE * K;
    unsigned tiles = K / TILE;
    for (unsigned t = 0; t < tiles; t++) {
        unsigned first = base + TILE * t;
        if (dir == SPU_NORTH || dir == SPU_WEST) {
            const unsigned *src = dir == SPU_NORTH ? C : B;
            for (unsigned w = threadIdx.x; w < TILE * TILE; w += blockDim.x) {
                unsigned v = src[first + (w / TILE) * K + w % TILE];
                if (dir == SPU_NORTH)
                    spu_cb_store_south_u32(4 * w, v);
                else
                    spu_cb_store_east_u32(4 * w, v);
            }
            if (dir == SPU_NORTH)
                spu_blocksync_south();  // tile ready for the SM below
            else
                spu_blocksync_east();
        } else {
            if (dir == SPU_SOUTH)
                spu_blocksync_north();  // wait for the SM above to hand a tile over
            else
                spu_blocksync_west();
            unsigned *dst = dir == SPU_SOUTH ? Hi : Hj;
            for (unsigned w = threadIdx.x; w < TILE * TILE; w += blockDim.x) {
                unsigned v = dir == SPU_SOUTH ? spu_cb_load_north_u32(4 * w)
                                              : spu_cb_load_west_u32(4 * w);
                dst[first + (w / TILE) * K + w % TILE] = v;
            }
        }
    }
}

extern "C" __global__ void stencil_pc(const float *A, const float *B, const float *C,
                                      float *Hk, float *Hi, float *Hj, unsigned N,
                                      unsigned K) {
    if (spu_is_iu()) {
        interface_unit((const unsigned *)B, (const unsigned *)C, (unsigned *)Hi,
                       (unsigned *)Hj, K);
        return;
    }
    // Two 33x33 planes (k even, k odd); row 0 and column 0 hold the north and west
    // inputs of the plane, cell (i+1, j+1) holds H[i,j,k].
    __shared__ float plane[2][TILE + 1][TILE + 1];
    const unsigned tj = threadIdx.x, ti = threadIdx.y;
    const unsigned i0 = 4 * ti, j0 = 4 * tj;
    const unsigned row = TILE * blockIdx.y + i0, col = TILE * blockIdx.x + j0;
    const float third = 1.0f / 3.0f;

    // Plane 1 starts as H[.,.,-1] = A (k = 0 reads the odd plane as "k - 1").
    for (unsigned r = 0; r < 4; r++)
        for (unsigned c = 0; c < 4; c++)
            plane[1][i0 + 1 + r][j0 + 1 + c] = A[(row + r) * N + col + c];

    for (unsigned t = 0; t < K / TILE; t++) {
        spu_blocksync_north();  // the north input tile is ready
        spu_blocksync_west();   // the west input tile is ready
        // A wavefront of 32 + 7 + 7 steps: thread (ti, tj) works on kl = s - ti - tj.
        for (unsigned s = 0; s < TILE + 14; s++) {
            unsigned kl = s - ti - tj;  // (negative values wrap and fail the test)
            if (kl < TILE) {
                float(*p)[TILE + 1] = plane[kl & 1];
                float(*q)[TILE + 1] = plane[(kl & 1) ^ 1];
                if (ti == 0)
                    for (unsigned c = 0; c < 4; c++)
                        p[0][j0 + 1 + c] = spu_cb_load_north(4 * ((j0 + c) * TILE + kl));
                if (tj == 0)
                    for (unsigned r = 0; r < 4; r++)
                        p[i0 + 1 + r][0] = spu_cb_load_west(4 * ((i0 + r) * TILE + kl));
                for (unsigned r = 0; r < 4; r++) {
                    float west = p[i0 + 1 + r][j0];
                    for (unsigned c = 0; c < 4; c++) {
                        // __fmul_rn: never fused with the next cell's first add.
                        float h = __fmul_rn(west + p[i0 + r][j0 + 1 + c] + q[i0 + 1 + r][j0 + 1 + c],
                                            third);
                        p[i0 + 1 + r][j0 + 1 + c] = h;
                        west = h;
                    }
                }
                if (ti == 7)
                    for (unsigned c = 0; c < 4; c++)
                        spu_cb_store_south(4 * ((j0 + c) * TILE + kl), p[TILE][j0 + 1 + c]);
                if (tj == 7)
                    for (unsigned r = 0; r < 4; r++)
                        spu_cb_store_east(4 * ((i0 + r) * TILE + kl), p[i0 + 1 + r][TILE]);
            }
            __syncthreads();  // every thread finished step s
        }
        spu_blocksync_south();  // hand the south output tile over
        spu_blocksync_east();   // hand the east output tile over
    }

    // Hk = the last plane (K is a multiple of 32, so K - 1 is odd: plane 1).
    for (unsigned r = 0; r < 4; r++)
        for (unsigned c = 0; c < 4; c++)
            Hk[(row + r) * N + col + c] = plane[1][i0 + 1 + r][j0 + 1 + c];
}
