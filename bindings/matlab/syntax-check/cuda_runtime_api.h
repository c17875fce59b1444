/* Compile-check stand-in for CUDA's cuda_runtime_api.h: the declarations btchol_mex.c uses. */
#ifndef BTCHOL_STUB_CUDA_RUNTIME_API_H
#define BTCHOL_STUB_CUDA_RUNTIME_API_H
#include <stddef.h>
typedef enum cudaError { cudaSuccess = 0 } cudaError_t;
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudaDeviceSynchronize(void);
#endif
