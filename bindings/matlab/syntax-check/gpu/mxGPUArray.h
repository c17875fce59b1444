/* Compile-check stand-in for MATLAB's gpu/mxGPUArray.h: the declarations btchol_mex.c uses. */
#ifndef BTCHOL_STUB_MXGPUARRAY_H
#define BTCHOL_STUB_MXGPUARRAY_H
#include "mex.h"
typedef struct mxGPUArray_tag mxGPUArray;
enum { MX_GPU_SUCCESS = 0, MX_GPU_FAILURE = 1 };
int mxInitGPU(void);
int mxIsGPUArray(mxArray const *const);
mxGPUArray const *mxGPUCreateFromMxArray(mxArray const *const);
mxGPUArray *mxGPUCopyFromMxArray(mxArray const *const);
mxClassID mxGPUGetClassID(mxGPUArray const *);
mxComplexity mxGPUGetComplexity(mxGPUArray const *);
void *mxGPUGetData(mxGPUArray *const);
void const *mxGPUGetDataReadOnly(mxGPUArray const *const);
mwSize const *mxGPUGetDimensions(mxGPUArray const *const);
mwSize mxGPUGetNumberOfDimensions(mxGPUArray const *const);
mwSize mxGPUGetNumberOfElements(mxGPUArray const *const);
mxArray *mxGPUCreateMxArrayOnGPU(mxGPUArray const *const);
void mxGPUDestroyGPUArray(mxGPUArray const *const);
#endif
