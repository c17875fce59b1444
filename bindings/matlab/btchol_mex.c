/*
 * btchol_mex.c: MATLAB / GNU Octave MEX gateway to btchol's C API (include/btchol.h).
 *
 *   [x, logdet, info] = btchol_mex(D, E, b)
 *   [x, logdet, info] = btchol_mex(D, E, b, opts)
 *   v  = btchol_mex('version')          the library's version string
 *   tf = btchol_mex('cuda_available')   true when a CUDA GPU is usable
 *
 * Column-major (MATLAB) layout, B systems of N diagonal blocks of size n, m right-hand sides:
 *   D  n x n x N x B      diagonal blocks (only the lower triangle of each is read)
 *   E  n x n x (N-1) x B  sub-diagonal blocks, E(:,:,i,k) = Psi_{i+1,i} of item k; [] when N = 1
 *   b  (N*n) x m x B      right-hand sides
 * all real, full, and of one class: double or single. x has the size and class of b.
 * logdet is B x 1 double. opts is a struct with optional fields backend ('auto' | 'cpu' | 'cuda'),
 * algorithm ('auto' | 'seq' | 'nd') and threads (0 = all cores).
 *
 * Errors are raised with mexErrMsgIdAndTxt: the identifier is btchol:<status> (e.g.
 * btchol:notPositiveDefinite) and the text carries the status name, the failing C function and
 * btchol_last_error_message(): "BTCHOL_STATUS_<NAME>: <function>: <detail>". With three outputs, a matrix that is not positive definite is not
 * an error: info(k) is LAPACK's INFO for item k (0 = factored) and x(:,:,k) is NaN for failed
 * items, like [R, p] = chol(A).
 *
 * gpuArray inputs: only in MATLAB with the Parallel Computing Toolbox, when compiled with
 * -DBTCHOL_MEX_GPU (see README.md); GNU Octave has no mxGPUArray API, so Octave builds (which
 * define HAVE_OCTAVE in mex.h) never include that code.
 */
#include "mex.h"

#include <btchol.h>

#include <stdio.h>
#include <string.h>

#if defined(BTCHOL_MEX_GPU) && (!defined(HAVE_OCTAVE) || defined(BTCHOL_MEX_GPU_SYNTAX_CHECK))
#define BTCHOL_WITH_GPU 1
#include "gpu/mxGPUArray.h"
#include <cuda_runtime_api.h>
#else
#define BTCHOL_WITH_GPU 0
#endif

/* ---- errors ------------------------------------------------------------------------------- */

static const char *status_name(btchol_status s) {
    switch (s) {
    case BTCHOL_STATUS_SUCCESS: return "BTCHOL_STATUS_SUCCESS";
    case BTCHOL_STATUS_INVALID_ARGUMENT: return "BTCHOL_STATUS_INVALID_ARGUMENT";
    case BTCHOL_STATUS_NULL_POINTER: return "BTCHOL_STATUS_NULL_POINTER";
    case BTCHOL_STATUS_INVALID_DIMENSION: return "BTCHOL_STATUS_INVALID_DIMENSION";
    case BTCHOL_STATUS_BUFFER_TOO_SMALL: return "BTCHOL_STATUS_BUFFER_TOO_SMALL";
    case BTCHOL_STATUS_NON_FINITE_INPUT: return "BTCHOL_STATUS_NON_FINITE_INPUT";
    case BTCHOL_STATUS_NOT_POSITIVE_DEFINITE: return "BTCHOL_STATUS_NOT_POSITIVE_DEFINITE";
    case BTCHOL_STATUS_INVALID_STATE: return "BTCHOL_STATUS_INVALID_STATE";
    case BTCHOL_STATUS_BACKEND_UNAVAILABLE: return "BTCHOL_STATUS_BACKEND_UNAVAILABLE";
    case BTCHOL_STATUS_CUDA_ERROR: return "BTCHOL_STATUS_CUDA_ERROR";
    case BTCHOL_STATUS_OUT_OF_MEMORY: return "BTCHOL_STATUS_OUT_OF_MEMORY";
    case BTCHOL_STATUS_INTERNAL: return "BTCHOL_STATUS_INTERNAL";
    default: return "BTCHOL_STATUS_UNKNOWN";
    }
}

/* The mnemonic part of the error identifier, btchol:<mnemonic>. */
static const char *status_id(btchol_status s) {
    switch (s) {
    case BTCHOL_STATUS_INVALID_ARGUMENT: return "btchol:invalidArgument";
    case BTCHOL_STATUS_NULL_POINTER: return "btchol:nullPointer";
    case BTCHOL_STATUS_INVALID_DIMENSION: return "btchol:invalidDimension";
    case BTCHOL_STATUS_BUFFER_TOO_SMALL: return "btchol:bufferTooSmall";
    case BTCHOL_STATUS_NON_FINITE_INPUT: return "btchol:nonFiniteInput";
    case BTCHOL_STATUS_NOT_POSITIVE_DEFINITE: return "btchol:notPositiveDefinite";
    case BTCHOL_STATUS_INVALID_STATE: return "btchol:invalidState";
    case BTCHOL_STATUS_BACKEND_UNAVAILABLE: return "btchol:backendUnavailable";
    case BTCHOL_STATUS_CUDA_ERROR: return "btchol:cudaError";
    case BTCHOL_STATUS_OUT_OF_MEMORY: return "btchol:outOfMemory";
    case BTCHOL_STATUS_INTERNAL: return "btchol:internal";
    default: return "btchol:unknownStatus";
    }
}

/* Everything the gateway must release before raising an error (mexErrMsgIdAndTxt never returns). */
typedef struct {
    btchol_plan *plan;
#if BTCHOL_WITH_GPU
    const mxGPUArray *gpu[3];
#endif
} resources;

static void release(resources *r) {
    btchol_plan_destroy(r->plan); /* NULL is a no-op */
    r->plan = NULL;
#if BTCHOL_WITH_GPU
    for (int k = 0; k < 3; k++) {
        if (r->gpu[k]) mxGPUDestroyGPUArray(r->gpu[k]);
        r->gpu[k] = NULL;
    }
#endif
}

/* Raises the error of a failed btchol call: status name, function and last-error message. */
static void fail_status(resources *r, btchol_status s, const char *function, const char *extra) {
    char text[1400];
    /* Copy the message before anything else calls into btchol. It names the function already
     * ("btchol_plan_factor: ...") in today's library; add the name where it does not. */
    const char *msg = btchol_last_error_message();
    size_t flen = strlen(function);
    int named = strncmp(msg, function, flen) == 0 && msg[flen] == ':';
    snprintf(text, sizeof text, "%s: %s%s%s%s", status_name(s), named ? "" : function, named ? "" : ": ", msg,
             extra ? extra : "");
    release(r);
    mexErrMsgIdAndTxt(status_id(s), "%s", text);
}

#define CHECK(r, call, fname)                                                                    \
    do {                                                                                         \
        btchol_status st_ = (call);                                                              \
        if (st_ != BTCHOL_STATUS_SUCCESS) fail_status((r), st_, (fname), NULL);                  \
    } while (0)

static void fail_arg(resources *r, const char *id, const char *text) {
    release(r);
    mexErrMsgIdAndTxt(id, "%s", text);
}

/* ---- arguments ---------------------------------------------------------------------------- */

/* Size of dimension k (0-based) of an array with `nd` dimensions `dims` (1 past the end). */
static mwSize dim_at(const mwSize *dims, mwSize nd, mwSize k) { return k < nd ? dims[k] : 1; }

typedef struct {
    int64_t B, N, n, m;
} shape;

/* Checks the sizes of D, E and b (given as dimension vectors) and returns (B, N, n, m). */
static shape check_sizes(resources *r, const mwSize *dd, mwSize ndd, const mwSize *de, mwSize nde, size_t numel_e,
                         const mwSize *db, mwSize ndb) {
    char text[512];
    shape s;
    if (ndd > 4) fail_arg(r, "btchol:invalidDimension", "D must be n x n x N x B (at most 4 dimensions)");
    s.n = (int64_t)dim_at(dd, ndd, 0);
    s.N = (int64_t)dim_at(dd, ndd, 2);
    s.B = (int64_t)dim_at(dd, ndd, 3);
    if (s.n < 1 || dim_at(dd, ndd, 1) != (mwSize)s.n || s.N < 1 || s.B < 1) {
        snprintf(text, sizeof text, "D is %dx%dx%dx%d: it must be n x n x N x B with square, non-empty blocks",
                 (int)dim_at(dd, ndd, 0), (int)dim_at(dd, ndd, 1), (int)dim_at(dd, ndd, 2), (int)dim_at(dd, ndd, 3));
        fail_arg(r, "btchol:invalidDimension", text);
    }
    if (s.N == 1) {
        if (numel_e != 0) fail_arg(r, "btchol:invalidDimension", "E must be empty ([]) when N = 1");
    } else if (nde > 4 || dim_at(de, nde, 0) != (mwSize)s.n || dim_at(de, nde, 1) != (mwSize)s.n ||
               dim_at(de, nde, 2) != (mwSize)(s.N - 1) || dim_at(de, nde, 3) != (mwSize)s.B) {
        snprintf(text, sizeof text, "E is %dx%dx%dx%d, expected %dx%dx%dx%d (n x n x (N-1) x B)",
                 (int)dim_at(de, nde, 0), (int)dim_at(de, nde, 1), (int)dim_at(de, nde, 2), (int)dim_at(de, nde, 3),
                 (int)s.n, (int)s.n, (int)(s.N - 1), (int)s.B);
        fail_arg(r, "btchol:invalidDimension", text);
    }
    s.m = (int64_t)dim_at(db, ndb, 1);
    if (ndb > 3 || dim_at(db, ndb, 0) != (mwSize)(s.N * s.n) || dim_at(db, ndb, 2) != (mwSize)s.B || s.m < 1) {
        snprintf(text, sizeof text, "b is %dx%dx%d, expected %dxMx%d ((N*n) x m x B, m >= 1)", (int)dim_at(db, ndb, 0),
                 (int)dim_at(db, ndb, 1), (int)dim_at(db, ndb, 2), (int)(s.N * s.n), (int)s.B);
        fail_arg(r, "btchol:invalidDimension", text);
    }
    return s;
}

static void check_numeric(resources *r, const mxArray *a, const char *name) {
    char text[200];
    if (!(mxIsDouble(a) || mxIsSingle(a)) || mxIsComplex(a) || mxIsSparse(a)) {
        snprintf(text, sizeof text, "%s must be a real, full double or single array", name);
        fail_arg(r, "btchol:invalidArgument", text);
    }
}

/* Reads a string field of opts into buf; returns 0 when the field is absent. */
static int string_field(resources *r, const mxArray *opts, const char *field, char *buf, size_t len) {
    const mxArray *f = mxGetField(opts, 0, field);
    char text[200];
    if (!f) return 0;
    if (!mxIsChar(f) || mxGetString(f, buf, (mwSize)len) != 0) {
        snprintf(text, sizeof text, "opts.%s must be a short character vector", field);
        fail_arg(r, "btchol:invalidArgument", text);
    }
    return 1;
}

static void read_options(resources *r, const mxArray *opts, btchol_plan_options *o) {
    char buf[32], text[200];
    int known = 0;
    if (!opts || mxIsEmpty(opts)) return;
    if (!mxIsStruct(opts) || mxGetNumberOfElements(opts) != 1)
        fail_arg(r, "btchol:invalidArgument", "opts must be a scalar struct (fields backend, algorithm, threads)");
    if (string_field(r, opts, "backend", buf, sizeof buf)) {
        known++;
        if (!strcmp(buf, "auto")) o->backend = BTCHOL_BACKEND_AUTO;
        else if (!strcmp(buf, "cpu")) o->backend = BTCHOL_BACKEND_CPU;
        else if (!strcmp(buf, "cuda")) o->backend = BTCHOL_BACKEND_CUDA;
        else {
            snprintf(text, sizeof text, "opts.backend is '%s'; expected 'auto', 'cpu' or 'cuda'", buf);
            fail_arg(r, "btchol:invalidArgument", text);
        }
    }
    if (string_field(r, opts, "algorithm", buf, sizeof buf)) {
        known++;
        if (!strcmp(buf, "auto")) o->algorithm = BTCHOL_ALGORITHM_AUTO;
        else if (!strcmp(buf, "seq")) o->algorithm = BTCHOL_ALGORITHM_SEQUENTIAL;
        else if (!strcmp(buf, "nd")) o->algorithm = BTCHOL_ALGORITHM_NESTED_DISSECTION;
        else {
            snprintf(text, sizeof text, "opts.algorithm is '%s'; expected 'auto', 'seq' or 'nd'", buf);
            fail_arg(r, "btchol:invalidArgument", text);
        }
    }
    const mxArray *t = mxGetField(opts, 0, "threads");
    if (t) {
        known++;
        if (!mxIsNumeric(t) || mxGetNumberOfElements(t) != 1 || mxGetScalar(t) < 0 ||
            mxGetScalar(t) != (double)(int32_t)mxGetScalar(t))
            fail_arg(r, "btchol:invalidArgument", "opts.threads must be a non-negative integer (0 = all cores)");
        o->threads = (int32_t)mxGetScalar(t);
    }
    if (known != mxGetNumberOfFields(opts)) {
        for (int k = 0; k < mxGetNumberOfFields(opts); k++) {
            const char *name = mxGetFieldNameByNumber(opts, k);
            if (strcmp(name, "backend") && strcmp(name, "algorithm") && strcmp(name, "threads")) {
                snprintf(text, sizeof text, "unknown field opts.%s (known: backend, algorithm, threads)", name);
                fail_arg(r, "btchol:invalidArgument", text);
            }
        }
    }
}

/* ---- outputs ------------------------------------------------------------------------------ */

static mxArray *item_info(resources *r, int64_t B) {
    mxArray *info = mxCreateDoubleMatrix((mwSize)B, 1, mxREAL);
    int64_t *st = (int64_t *)mxMalloc((size_t)B * sizeof(int64_t));
    CHECK(r, btchol_plan_item_status(r->plan, st), "btchol_plan_item_status");
    double *p = (double *)mxGetData(info);
    for (int64_t k = 0; k < B; k++) p[k] = (double)st[k];
    mxFree(st);
    return info;
}

static mxArray *logdet_out(resources *r, int64_t B) {
    mxArray *ld = mxCreateDoubleMatrix((mwSize)B, 1, mxREAL);
    CHECK(r, btchol_plan_logdet(r->plan, (double *)mxGetData(ld)), "btchol_plan_logdet");
    return ld;
}

/* The error text of a failed factorization, with MATLAB's 1-based indices. */
static void fail_not_pd(resources *r, btchol_status s, const char *fname, int64_t item, int64_t info, int64_t n) {
    char extra[200];
    snprintf(extra, sizeof extra, " (in MATLAB's 1-based numbering: item %lld, block %lld, column %lld)",
             (long long)(item + 1), (long long)((info - 1) / n + 1), (long long)((info - 1) % n + 1));
    fail_status(r, s, fname, extra);
}

/* ---- the gateway -------------------------------------------------------------------------- */

#if BTCHOL_WITH_GPU
static void solve_gpu(resources *r, int nlhs, mxArray *plhs[], const mxArray *prhs[], btchol_plan_options *o);
#endif

void mexFunction(int nlhs, mxArray *plhs[], int nrhs, const mxArray *prhs[]) {
    resources r;
    memset(&r, 0, sizeof r);

    if (nrhs == 1 && mxIsChar(prhs[0])) {
        char cmd[32];
        mxGetString(prhs[0], cmd, sizeof cmd);
        if (!strcmp(cmd, "version")) {
            plhs[0] = mxCreateString(btchol_version());
        } else if (!strcmp(cmd, "cuda_available")) {
            plhs[0] = mxCreateLogicalScalar(btchol_cuda_available() != 0);
        } else {
            mexErrMsgIdAndTxt("btchol:invalidArgument", "unknown command '%s' (expected 'version' or 'cuda_available')",
                              cmd);
        }
        return;
    }
    if (nrhs < 3 || nrhs > 4)
        mexErrMsgIdAndTxt("btchol:invalidArgument", "usage: [x, logdet, info] = btchol_mex(D, E, b[, opts])");
    if (nlhs > 3) mexErrMsgIdAndTxt("btchol:invalidArgument", "at most three outputs: [x, logdet, info]");

    btchol_plan_options o;
    CHECK(&r, btchol_plan_options_init(&o), "btchol_plan_options_init");
    o.layout = BTCHOL_LAYOUT_COL_MAJOR;
    read_options(&r, nrhs == 4 ? prhs[3] : NULL, &o);

#if BTCHOL_WITH_GPU
    if (mxIsGPUArray(prhs[0]) || mxIsGPUArray(prhs[1]) || mxIsGPUArray(prhs[2])) {
        solve_gpu(&r, nlhs, plhs, prhs, &o);
        return;
    }
#endif

    const mxArray *D = prhs[0], *E = prhs[1], *b = prhs[2];
    check_numeric(&r, D, "D");
    check_numeric(&r, b, "b");
    if (mxGetClassID(D) != mxGetClassID(b))
        fail_arg(&r, "btchol:invalidArgument", "D, E and b must all be double or all be single");
    shape s = check_sizes(&r, mxGetDimensions(D), mxGetNumberOfDimensions(D), mxGetDimensions(E),
                          mxGetNumberOfDimensions(E), mxGetNumberOfElements(E), mxGetDimensions(b),
                          mxGetNumberOfDimensions(b));
    if (s.N > 1) {
        check_numeric(&r, E, "E");
        if (mxGetClassID(E) != mxGetClassID(D))
            fail_arg(&r, "btchol:invalidArgument", "D, E and b must all be double or all be single");
    }
    btchol_dtype dtype = mxIsDouble(D) ? BTCHOL_DTYPE_F64 : BTCHOL_DTYPE_F32;

    CHECK(&r, btchol_plan_create(s.B, s.N, s.n, dtype, &o, &r.plan), "btchol_plan_create");

    mxArray *x = mxDuplicateArray(b); /* solved in place */
    int64_t failed_item = -1, info = 0;
    btchol_status st = btchol_plan_factor_solve(r.plan, mxGetData(D), s.N > 1 ? mxGetData(E) : NULL, mxGetData(x),
                                                s.m, BTCHOL_LAYOUT_COL_MAJOR, 0, 0, &failed_item, &info);
    if (st == BTCHOL_STATUS_NOT_POSITIVE_DEFINITE && nlhs >= 3) {
        /* [x, logdet, info] form: report per item instead of raising; failed items get NaN. */
        mxArray *infos = item_info(&r, s.B);
        const double *pi = (const double *)mxGetData(infos);
        size_t per_item = (size_t)(s.N * s.n * s.m);
        for (int64_t k = 0; k < s.B; k++) {
            if (pi[k] == 0) continue;
            if (dtype == BTCHOL_DTYPE_F64) {
                double *p = (double *)mxGetData(x) + (size_t)k * per_item;
                for (size_t j = 0; j < per_item; j++) p[j] = mxGetNaN();
            } else {
                float *p = (float *)mxGetData(x) + (size_t)k * per_item;
                for (size_t j = 0; j < per_item; j++) p[j] = (float)mxGetNaN();
            }
        }
        plhs[0] = x;
        plhs[1] = logdet_out(&r, s.B);
        plhs[2] = infos;
        release(&r);
        return;
    }
    if (st == BTCHOL_STATUS_NOT_POSITIVE_DEFINITE) fail_not_pd(&r, st, "btchol_plan_factor_solve", failed_item, info, s.n);
    if (st != BTCHOL_STATUS_SUCCESS) fail_status(&r, st, "btchol_plan_factor_solve", NULL);

    plhs[0] = x;
    if (nlhs >= 2) plhs[1] = logdet_out(&r, s.B);
    if (nlhs >= 3) plhs[2] = item_info(&r, s.B);
    release(&r);
}

#if BTCHOL_WITH_GPU
/* gpuArray inputs (MATLAB with the Parallel Computing Toolbox): D, E and b are put on the GPU
 * (inputs that are not gpuArrays are copied there), x is returned as a gpuArray. The plan runs on
 * the CUDA backend of CUDA device 0, which must be MATLAB's selected device (gpuDevice(1)). */
static void solve_gpu(resources *r, int nlhs, mxArray *plhs[], const mxArray *prhs[], btchol_plan_options *o) {
    int device = -1;
    if (mxInitGPU() != MX_GPU_SUCCESS) fail_arg(r, "btchol:cudaError", "mxInitGPU failed: no usable GPU in MATLAB");
    if (cudaGetDevice(&device) != cudaSuccess || device != 0)
        fail_arg(r, "btchol:invalidArgument", "btchol uses CUDA device 0: select it with gpuDevice(1)");
    if (o->backend == BTCHOL_BACKEND_CPU)
        fail_arg(r, "btchol:invalidArgument", "gpuArray inputs need opts.backend 'auto' or 'cuda', not 'cpu'");
    o->backend = BTCHOL_BACKEND_CUDA;

    const mxGPUArray *D = mxGPUCreateFromMxArray(prhs[0]);
    r->gpu[0] = D;
    int has_e = mxIsGPUArray(prhs[1]) || mxGetNumberOfElements(prhs[1]) > 0;
    const mxGPUArray *E = has_e ? mxGPUCreateFromMxArray(prhs[1]) : NULL;
    r->gpu[1] = E;
    mxGPUArray *x = mxGPUCopyFromMxArray(prhs[2]); /* a writable copy: solved in place */
    r->gpu[2] = x;

    mxClassID cls = mxGPUGetClassID(D);
    if ((cls != mxDOUBLE_CLASS && cls != mxSINGLE_CLASS) || mxGPUGetClassID(x) != cls ||
        (E && mxGPUGetNumberOfElements(E) > 0 && mxGPUGetClassID(E) != cls) || mxGPUGetComplexity(D) != mxREAL ||
        mxGPUGetComplexity(x) != mxREAL || (E && mxGPUGetComplexity(E) != mxREAL))
        fail_arg(r, "btchol:invalidArgument", "D, E and b must be real and all double or all single");

    mwSize const *dd = mxGPUGetDimensions(D);
    mwSize const *db = mxGPUGetDimensions(x);
    mwSize const *de = E ? mxGPUGetDimensions(E) : NULL;
    mwSize ed0[2] = {0, 0};
    /* Copy the dimension vectors so that they can be freed before check_sizes may raise. */
    mwSize ddc[8] = {1, 1, 1, 1, 1, 1, 1, 1}, dbc[8] = {1, 1, 1, 1, 1, 1, 1, 1}, dec[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    mwSize ndd = mxGPUGetNumberOfDimensions(D), ndb = mxGPUGetNumberOfDimensions(x);
    mwSize nde = E ? mxGPUGetNumberOfDimensions(E) : 2;
    size_t numel_e = E ? mxGPUGetNumberOfElements(E) : 0;
    memcpy(ddc, dd, (ndd < 8 ? ndd : 8) * sizeof(mwSize));
    memcpy(dbc, db, (ndb < 8 ? ndb : 8) * sizeof(mwSize));
    if (de) memcpy(dec, de, (nde < 8 ? nde : 8) * sizeof(mwSize));
    else memcpy(dec, ed0, sizeof ed0);
    mxFree((void *)dd);
    mxFree((void *)db);
    if (de) mxFree((void *)de);
    shape s = check_sizes(r, ddc, ndd, dec, nde, numel_e, dbc, ndb);

    btchol_dtype dtype = cls == mxDOUBLE_CLASS ? BTCHOL_DTYPE_F64 : BTCHOL_DTYPE_F32;
    CHECK(r, btchol_plan_create(s.B, s.N, s.n, dtype, o, &r->plan), "btchol_plan_create");
    /* D, E and the copy of b in x come from MATLAB's GPU work, which the plan's own
     * (non-blocking) stream is not ordered after: wait for it before btchol reads them. */
    if (cudaDeviceSynchronize() != cudaSuccess) fail_arg(r, "btchol:cudaError", "cudaDeviceSynchronize failed");
    CHECK(r, btchol_plan_upload_device(r->plan, mxGPUGetDataReadOnly(D), s.N > 1 ? mxGPUGetDataReadOnly(E) : NULL),
          "btchol_plan_upload_device");
    int64_t failed_item = -1, info = 0;
    btchol_status st = btchol_plan_factor(r->plan, &failed_item, &info);
    if (st == BTCHOL_STATUS_NOT_POSITIVE_DEFINITE && nlhs < 3)
        fail_not_pd(r, st, "btchol_plan_factor", failed_item, info, s.n);
    if (st != BTCHOL_STATUS_SUCCESS && st != BTCHOL_STATUS_NOT_POSITIVE_DEFINITE)
        fail_status(r, st, "btchol_plan_factor", NULL);
    st = btchol_plan_solve_device(r->plan, mxGPUGetData(x), s.m, BTCHOL_LAYOUT_COL_MAJOR, 0, 0);
    if (st != BTCHOL_STATUS_SUCCESS && st != BTCHOL_STATUS_NOT_POSITIVE_DEFINITE)
        fail_status(r, st, "btchol_plan_solve_device", NULL);
    /* MATLAB requires all device work to be finished before a gpuArray is returned. */
    CHECK(r, btchol_plan_synchronize(r->plan), "btchol_plan_synchronize");
    if (nlhs >= 2) plhs[1] = logdet_out(r, s.B);
    if (nlhs >= 3) {
        /* Failed items get NaN, as on the CPU: all-ones bytes are a NaN in float and double. */
        plhs[2] = item_info(r, s.B);
        const double *pi = (const double *)mxGetData(plhs[2]);
        size_t item_bytes = (size_t)(s.N * s.n * s.m) * (dtype == BTCHOL_DTYPE_F64 ? sizeof(double) : sizeof(float));
        for (int64_t k = 0; k < s.B; k++)
            if (pi[k] != 0 && cudaMemset((char *)mxGPUGetData(x) + (size_t)k * item_bytes, 0xFF, item_bytes) != cudaSuccess)
                fail_arg(r, "btchol:cudaError", "cudaMemset failed while marking failed items with NaN");
        if (cudaDeviceSynchronize() != cudaSuccess) fail_arg(r, "btchol:cudaError", "cudaDeviceSynchronize failed");
    }
    plhs[0] = mxGPUCreateMxArrayOnGPU(x);
    release(r);
}
#endif
