// Shared definitions of every btchol kernel. NVRTC compiles one module per variant with
//   -DBT_T=double|float   element type
//   -DBT_LD=<padded n>    leading dimension of every stored block (n rounded up for aligned loads)
//   -DBT_NT=<threads>     threads per CTA
//   -DBT_FUSED=0|1        1: stage blocks in shared memory (small n); 0: work in global memory
// Blocks are column-major with leading dimension BT_LD and block stride BT_LD·BT_LD; the problem's
// own block size n (≤ BT_LD) is a kernel argument.
typedef BT_T real;
#define LD BT_LD
#define NT BT_NT
#define BS ((long long)BT_LD * BT_LD)

// Schedule records, 8 int32 each, written by the host from crate::schedule (the single source):
//   elimination: block, slot_a, survivor_a, slot_c, survivor_c, fill_slot, fill_rows, n_couplings
//   update:      block, slot_0, source_0,   slot_1, source_1,   -1,        0,         n_sources
#define REC 8

// Failure key of an item: level·2^42 + block·2^16 + column, minimum = earliest failing pivot.
#define NO_FAILURE 0xffffffffffffffffull
__device__ __forceinline__ unsigned long long fail_key(int level, int block, int col) {
    return ((unsigned long long)level << 42) | ((unsigned long long)block << 16) | (unsigned long long)col;
}

// Copies the n×n leading part of a block (global ↔ shared), all threads.
__device__ __forceinline__ void copy_block(real* dst, const real* src, int n) {
    for (int idx = threadIdx.x; idx < n * n; idx += NT) {
        int i = idx % n, j = idx / n;
        dst[i + j * LD] = src[i + j * LD];
    }
}
