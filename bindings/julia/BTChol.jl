"""
    BTChol

Julia binding of btchol's C API (`include/btchol.h`): Cholesky factor and solve of batches of
symmetric positive-definite block-tridiagonal systems on the CPU or an NVIDIA GPU.

    include("bindings/julia/BTChol.jl"); using .BTChol
    p = Plan(Float64, B, N, n)            # or Plan(B, N, n); keywords backend, algorithm, threads
    upload!(p, D, E)                      # D: n×n×N×B, E: n×n×(N-1)×B (column-major blocks)
    factor!(p)                            # throws BTCholError (status, message, item/block/column)
    solve!(p, b)                          # b: (N*n)×B or (N*n)×m×B, overwritten by x
    logdet(p)                             # Vector{Float64} of length B
    close(p)                              # or let the finalizer do it

The library is `ENV["BTCHOL_LIB"]` when set (read when this file is included), else
`target/release/libbtchol.so` of the repository this file is in, else `libbtchol` from the
system loader.
"""
module BTChol

import LinearAlgebra: logdet

export Plan, upload!, factor!, solve!, factor_solve!, logdet, item_status, backend, algorithm,
       workspace_bytes, BTCholError, version, cuda_available

const libbtchol = let path = get(ENV, "BTCHOL_LIB", "")
    if !isempty(path)
        path
    else
        local_build = normpath(joinpath(@__DIR__, "..", "..", "target", "release", "libbtchol.so"))
        isfile(local_build) ? local_build : "libbtchol"
    end
end

# ---- constants of btchol.h (numeric values fixed by the ABI) ----------------------------------

const STATUS_SUCCESS = Int32(0)
const STATUS_NOT_POSITIVE_DEFINITE = Int32(6)
const STATUS_INVALID_STATE = Int32(7)
const STATUS_NAMES = Dict{Int32,String}(
    0 => "BTCHOL_STATUS_SUCCESS",
    1 => "BTCHOL_STATUS_INVALID_ARGUMENT",
    2 => "BTCHOL_STATUS_NULL_POINTER",
    3 => "BTCHOL_STATUS_INVALID_DIMENSION",
    4 => "BTCHOL_STATUS_BUFFER_TOO_SMALL",
    5 => "BTCHOL_STATUS_NON_FINITE_INPUT",
    6 => "BTCHOL_STATUS_NOT_POSITIVE_DEFINITE",
    7 => "BTCHOL_STATUS_INVALID_STATE",
    8 => "BTCHOL_STATUS_BACKEND_UNAVAILABLE",
    9 => "BTCHOL_STATUS_CUDA_ERROR",
    10 => "BTCHOL_STATUS_OUT_OF_MEMORY",
    11 => "BTCHOL_STATUS_INTERNAL",
)
const DTYPE = Dict{DataType,Int32}(Float32 => 0, Float64 => 1)
const LAYOUT_ROW_MAJOR = Int32(0)
const LAYOUT_COL_MAJOR = Int32(1)
const BACKENDS = Dict{Symbol,Int32}(:auto => 0, :cpu => 1, :cuda => 2)
const ALGORITHMS = Dict{Symbol,Int32}(:auto => 0, :seq => 1, :nd => 2)

"""`btchol_plan_options`: 72 bytes, the C layout (ABI 0)."""
struct PlanOptions
    struct_size::Csize_t
    backend::Int32
    algorithm::Int32
    layout::Int32
    threads::Int32
    max_nrhs::Int64
    reserved::NTuple{5,Int64}
end

# ---- errors -----------------------------------------------------------------------------------

"""
    BTCholError

A failed btchol call: `status` (the `btchol_status` value), `name` (e.g.
`"BTCHOL_STATUS_NOT_POSITIVE_DEFINITE"`), `func` (the C function), `msg` (the text of
`btchol_last_error_message()`). For a matrix that is not positive definite, `item`, `block` and
`column` locate the failed pivot (1-based) and `info` is LAPACK's INFO; otherwise they are 0.
"""
struct BTCholError <: Exception
    status::Int32
    name::String
    func::String
    msg::String
    item::Int
    block::Int
    column::Int
    info::Int
end

function Base.showerror(io::IO, e::BTCholError)
    # The library's messages start with the C function's name; name it where one does not.
    named = startswith(e.msg, e.func * ":")
    print(io, "BTCholError: ", e.name, ": ", named ? "" : e.func * ": ", e.msg)
    e.item > 0 && print(io, " (1-based: item ", e.item, ", block ", e.block, ", column ", e.column, ")")
end

# Reads the message right after the failing call: it is per OS thread, and no yield point lies
# between the two ccalls, so the task cannot have moved to another thread.
last_error_message() = unsafe_string(ccall((:btchol_last_error_message, libbtchol), Cstring, ()))

function BTCholError(status::Integer, func::AbstractString; item=0, info=0, n=1)
    msg = last_error_message()
    block, column = info > 0 ? (div(info - 1, n) + 1, rem(info - 1, n) + 1) : (0, 0)
    BTCholError(Int32(status), get(STATUS_NAMES, Int32(status), "BTCHOL_STATUS_UNKNOWN"), func, msg, item,
                block, column, info)
end

check(status::Int32, func::AbstractString) = status == STATUS_SUCCESS || throw(BTCholError(status, func))

# ---- module functions -------------------------------------------------------------------------

"""The library's version string, e.g. `"0.1.0"`."""
version() = unsafe_string(ccall((:btchol_version, libbtchol), Cstring, ()))

"""`true` when the NVIDIA driver loads and reports a device (CUDA plans can be created)."""
cuda_available() = ccall((:btchol_cuda_available, libbtchol), Int32, ()) != 0

# ---- the plan ---------------------------------------------------------------------------------

"""
    Plan(T, B, N, n; backend=:auto, algorithm=:auto, threads=0)
    Plan(B, N, n; ...)                                    # T = Float64

A btchol plan for `B` systems of `N` diagonal blocks of size `n`, element type `T` (`Float32`
or `Float64`), column-major blocks (Julia's layout). `backend` is `:auto` (the GPU when usable),
`:cpu` or `:cuda`; `algorithm` is `:auto`, `:seq` or `:nd`; `threads = 0` uses all cores.
It holds all of its workspace; `close(p)` or the finalizer destroys it. Not thread-safe: use one
plan per task at a time.
"""
mutable struct Plan{T<:Union{Float32,Float64}}
    handle::Ptr{Cvoid}
    batch::Int   # fixed at creation, like N and n
    N::Int
    n::Int

    function Plan{T}(batch::Integer, N::Integer, n::Integer; backend::Symbol=:auto, algorithm::Symbol=:auto,
                     threads::Integer=0) where {T<:Union{Float32,Float64}}
        haskey(BACKENDS, backend) || throw(ArgumentError("backend must be :auto, :cpu or :cuda, got :$backend"))
        haskey(ALGORITHMS, algorithm) || throw(ArgumentError("algorithm must be :auto, :seq or :nd, got :$algorithm"))
        ref = Ref{PlanOptions}()
        check(ccall((:btchol_plan_options_init, libbtchol), Int32, (Ref{PlanOptions},), ref),
              "btchol_plan_options_init")
        o = ref[]
        opts = PlanOptions(o.struct_size, BACKENDS[backend], ALGORITHMS[algorithm], LAYOUT_COL_MAJOR,
                           Int32(threads), o.max_nrhs, o.reserved)
        handle = Ref{Ptr{Cvoid}}(C_NULL)
        check(ccall((:btchol_plan_create, libbtchol), Int32,
                    (Int64, Int64, Int64, Int32, Ref{PlanOptions}, Ref{Ptr{Cvoid}}),
                    batch, N, n, DTYPE[T], opts, handle), "btchol_plan_create")
        p = new{T}(handle[], batch, N, n)
        finalizer(close, p)
    end
end

Plan(::Type{T}, batch::Integer, N::Integer, n::Integer; kw...) where {T} = Plan{T}(batch, N, n; kw...)
Plan(batch::Integer, N::Integer, n::Integer; kw...) = Plan{Float64}(batch, N, n; kw...)

"""Destroys the plan (idempotent); later calls throw a `BTCholError` (invalid state)."""
function Base.close(p::Plan)
    h, p.handle = p.handle, C_NULL
    h == C_NULL || ccall((:btchol_plan_destroy, libbtchol), Cvoid, (Ptr{Cvoid},), h)
    nothing
end

Base.isopen(p::Plan) = p.handle != C_NULL

function handle(p::Plan)
    p.handle == C_NULL &&
        throw(BTCholError(STATUS_INVALID_STATE, "BTCHOL_STATUS_INVALID_STATE", "Plan", "the plan is closed", 0, 0, 0, 0))
    p.handle
end

Base.show(io::IO, p::Plan{T}) where {T} =
    print(io, "BTChol.Plan{", T, "}(batch=", p.batch, ", N=", p.N, ", n=", p.n, isopen(p) ? ")" : ", closed)")

"""`:cpu` or `:cuda`: where the plan runs."""
function backend(p::Plan)
    out = Ref{Int32}(0)
    check(ccall((:btchol_plan_backend, libbtchol), Int32, (Ptr{Cvoid}, Ref{Int32}), handle(p), out),
          "btchol_plan_backend")
    out[] == 2 ? :cuda : :cpu
end

"""`:seq` or `:nd`: the factorization the plan runs."""
function algorithm(p::Plan)
    out = Ref{Int32}(0)
    check(ccall((:btchol_plan_algorithm, libbtchol), Int32, (Ptr{Cvoid}, Ref{Int32}), handle(p), out),
          "btchol_plan_algorithm")
    out[] == 2 ? :nd : :seq
end

"""Bytes of workspace the plan holds (host and device)."""
function workspace_bytes(p::Plan)
    out = Ref{Int64}(0)
    check(ccall((:btchol_plan_workspace_bytes, libbtchol), Int32, (Ptr{Cvoid}, Ref{Int64}), handle(p), out),
          "btchol_plan_workspace_bytes")
    Int(out[])
end

# ---- arguments --------------------------------------------------------------------------------

# The blocks as a dense Array{T} of size (n, n, count, B) (a copy only when needed: upload copies
# into the plan anyway). A 3-dimensional (n, n, count) array is accepted when B == 1.
function blocks(p::Plan{T}, A, name, count) where {T}
    want = (p.n, p.n, count, p.batch)
    sz = size(A)
    (sz == want || (p.batch == 1 && sz == want[1:3])) ||
        throw(DimensionMismatch("$name has size $sz, expected $want (n × n × $(name == "D" ? "N" : "(N-1)") × B)"))
    eltype(A) === T || throw(ArgumentError("$name has element type $(eltype(A)), the plan's is $T"))
    A isa Array{T} ? A : Array{T}(A)
end

function subblocks(p::Plan{T}, E) where {T}
    if p.N == 1
        (E === nothing || isempty(E)) || throw(DimensionMismatch("E must be nothing or empty when N = 1"))
        return nothing
    end
    E === nothing && throw(ArgumentError("E is required when N > 1"))
    blocks(p, E, "E", p.N - 1)
end

# (nrhs, layout, ld, item_stride) that address b in place (it is never copied).
function rhs_args(p::Plan{T}, b::StridedArray{T}) where {T}
    R, B = p.N * p.n, p.batch
    if ndims(b) == 1 && B == 1
        sz, st = (R, 1, 1), (stride(b, 1), R, R)
        size(b, 1) == R || throw(DimensionMismatch("b has length $(length(b)), expected N*n = $R"))
    elseif ndims(b) == 2
        sz, st = (size(b, 1), 1, size(b, 2)), (stride(b, 1), size(b, 1), stride(b, 2))
    elseif ndims(b) == 3
        sz, st = size(b), strides(b)
    else
        throw(DimensionMismatch("b must be (N*n) × B or (N*n) × m × B, got size $(size(b))"))
    end
    (sz[1] == R && sz[3] == B && sz[2] >= 1) ||
        throw(DimensionMismatch("b has size $(size(b)), expected ($R, B=$B) or ($R, m, B=$B)"))
    m = sz[2]
    sR, sM, sB = st
    m == 1 && (sM = sR == 1 ? R : 1)
    R == 1 && (sR = sM == 1 ? m : 1)
    if sR == 1 && sM >= R
        layout, ld = LAYOUT_COL_MAJOR, sM
    elseif sM == 1 && sR >= m
        layout, ld = LAYOUT_ROW_MAJOR, sR
    else
        throw(ArgumentError("b (strides $(strides(b))) is not contiguous along its rows or columns; pass a copy"))
    end
    B > 1 && sB <= 0 && throw(ArgumentError("b's batch items overlap (item stride $sB)"))
    Int64(m), layout, Int64(ld), Int64(B > 1 ? sB : 0)
end

# ---- operations -------------------------------------------------------------------------------

"""
    upload!(p, D, E)

Copies the blocks into the plan: `D` is n×n×N×B, `E` is n×n×(N-1)×B (`nothing` when N = 1),
of the plan's element type. NaN/Inf are rejected (`BTCHOL_STATUS_NON_FINITE_INPUT`).
"""
function upload!(p::Plan{T}, D::AbstractArray, E) where {T}
    Dd = blocks(p, D, "D", p.N)
    Ed = subblocks(p, E)
    GC.@preserve Dd Ed begin
        check(ccall((:btchol_plan_upload, libbtchol), Int32, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}),
                    handle(p), pointer(Dd), Ed === nothing ? C_NULL : pointer(Ed)), "btchol_plan_upload")
    end
    p
end

function factor_status(p::Plan, status::Int32, func, failed::Ref{Int64}, info::Ref{Int64})
    if status == STATUS_NOT_POSITIVE_DEFINITE
        throw(BTCholError(status, func; item=Int(failed[]) + 1, info=Int(info[]), n=p.n))
    end
    check(status, func)
end

"""
    factor!(p)

Factors every item. A matrix that is not positive definite throws a `BTCholError` naming the
first failing item with its block and column (1-based); the other items are still factored
(`item_status(p)` tells which).
"""
function factor!(p::Plan)
    failed, info = Ref{Int64}(-1), Ref{Int64}(0)
    status = ccall((:btchol_plan_factor, libbtchol), Int32, (Ptr{Cvoid}, Ref{Int64}, Ref{Int64}),
                   handle(p), failed, info)
    factor_status(p, status, "btchol_plan_factor", failed, info)
    p
end

"""
    item_status(p) -> Vector{Int64}

Per item: 0 factored, k > 0 LAPACK INFO (the pivot of row k failed), -1 not factored since the
last upload.
"""
function item_status(p::Plan)
    out = Vector{Int64}(undef, p.batch)
    check(ccall((:btchol_plan_item_status, libbtchol), Int32, (Ptr{Cvoid}, Ptr{Int64}), handle(p), out),
          "btchol_plan_item_status")
    out
end

"""
    logdet(p) -> Vector{Float64}

log det of each item's matrix, from the factor (NaN where the factorization failed).
"""
function logdet(p::Plan)
    out = Vector{Float64}(undef, p.batch)
    check(ccall((:btchol_plan_logdet, libbtchol), Int32, (Ptr{Cvoid}, Ptr{Float64}), handle(p), out),
          "btchol_plan_logdet")
    out
end

function not_pd_from_status(p::Plan, func)
    st = item_status(p)
    k = findfirst(>(0), st)
    k === nothing ? BTCholError(STATUS_NOT_POSITIVE_DEFINITE, func) :
        BTCholError(STATUS_NOT_POSITIVE_DEFINITE, func; item=k, info=Int(st[k]), n=p.n)
end

"""
    solve!(p, b) -> b

Solves in place with the factor: `b` is (N*n)×B or (N*n)×m×B (a vector when B = 1) of the
plan's element type; any strided array with unit stride along its rows or its columns is
addressed directly, never copied. Items whose factorization failed are left unchanged and a
`BTCholError` is thrown after the other items are solved.
"""
function solve!(p::Plan{T}, b::StridedArray{T}) where {T}
    m, layout, ld, stride = rhs_args(p, b)
    status = GC.@preserve b ccall((:btchol_plan_solve, libbtchol), Int32,
                                  (Ptr{Cvoid}, Ptr{Cvoid}, Int64, Int32, Int64, Int64),
                                  handle(p), pointer(b), m, layout, ld, stride)
    if status == STATUS_NOT_POSITIVE_DEFINITE
        e = not_pd_from_status(p, "btchol_plan_solve")
        throw(e)
    end
    check(status, "btchol_plan_solve")
    b
end

solve!(p::Plan{T}, b::AbstractArray) where {T} =
    throw(ArgumentError("b must be a strided array of element type $T (it is solved in place, never converted); " *
                        "got $(typeof(b))"))

"""
    factor_solve!(p, D, E, b) -> b

`upload!`, `factor!` and `solve!` in one C call.
"""
function factor_solve!(p::Plan{T}, D::AbstractArray, E, b::StridedArray{T}) where {T}
    m, layout, ld, stride = rhs_args(p, b)
    Dd = blocks(p, D, "D", p.N)
    Ed = subblocks(p, E)
    failed, info = Ref{Int64}(-1), Ref{Int64}(0)
    status = GC.@preserve Dd Ed b ccall((:btchol_plan_factor_solve, libbtchol), Int32,
                                        (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Int64, Int32, Int64, Int64,
                                         Ref{Int64}, Ref{Int64}),
                                        handle(p), pointer(Dd), Ed === nothing ? C_NULL : pointer(Ed), pointer(b),
                                        m, layout, ld, stride, failed, info)
    factor_status(p, status, "btchol_plan_factor_solve", failed, info)
    b
end

end # module
