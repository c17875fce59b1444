# Tests of BTChol.jl against dense LinearAlgebra references. Needs Julia (>= 1.6), which the
# project's machines do not have: run by hand with
#   BTCHOL_LIB=$PWD/target/release/libbtchol.so julia bindings/julia/test_btchol.jl
using LinearAlgebra, Random, Test

include(joinpath(@__DIR__, "BTChol.jl"))
using .BTChol

"Random diagonally dominant SPD batch: D n×n×N×B, E n×n×(N-1)×B, b (N*n)×m×B."
function make_problem(T, B, N, n, m; rng=MersenneTwister(1))
    D = zeros(T, n, n, N, B)
    E = T.((2 .* rand(rng, n, n, N - 1, B) .- 1) ./ n)
    for k in 1:B, i in 1:N
        S = (2 .* rand(rng, n, n) .- 1) ./ n
        D[:, :, i, k] = T.((S + S') / 2 + 4I)
    end
    D, E, T.(randn(rng, N * n, m, B))
end

"Dense matrix of item k (lower triangle of D only)."
function dense(D, E, k)
    n, N = size(D, 1), size(D, 3)
    A = zeros(Float64, N * n, N * n)
    for i in 1:N
        r = (i-1)*n+1:i*n
        A[r, r] = Symmetric(Float64.(D[:, :, i, k]), :L)
    end
    for i in 1:N-1
        r, c = i*n+1:(i+1)*n, (i-1)*n+1:i*n
        A[r, c] = E[:, :, i, k]
        A[c, r] = E[:, :, i, k]'
    end
    A
end

@testset "BTChol" begin
    @test occursin(r"^\d+\.\d+\.\d+$", BTChol.version())
    @test BTChol.cuda_available() isa Bool

    for T in (Float64, Float32), alg in (:seq, :nd), (B, N, n, m) in ((3, 5, 4, 2), (1, 1, 3, 1), (2, 7, 1, 3))
        D, E, b = make_problem(T, B, N, n, m)
        p = Plan(T, B, N, n; backend=:cpu, algorithm=alg)
        @test backend(p) == :cpu && algorithm(p) == alg && workspace_bytes(p) > 0
        upload!(p, D, N > 1 ? E : nothing)
        factor!(p)
        @test item_status(p) == zeros(Int64, B)
        x = solve!(p, copy(b))
        ld = logdet(p)
        tol = T == Float64 ? 1e-10 : 1e-4
        for k in 1:B
            A = dense(D, E, k)
            @test norm(x[:, :, k] - A \ Float64.(b[:, :, k])) <= tol * norm(A \ Float64.(b[:, :, k]))
            @test isapprox(ld[k], LinearAlgebra.logdet(A); rtol=tol)
        end
        close(p)
        @test !isopen(p)
    end

    # not positive definite: item 2, block 3, column 2 (1-based) => INFO = 2*3 + 2 = 8
    D, E, b = make_problem(Float64, 3, 5, 3, 1)
    D[2, 2, 3, 2] = -10
    p = Plan(3, 5, 3; backend=:cpu, algorithm=:seq)
    upload!(p, D, E)
    err = try
        factor!(p); nothing
    catch e
        e
    end
    @test err isa BTCholError
    @test (err.item, err.block, err.column, err.info) == (2, 3, 2, 8)
    @test err.name == "BTCHOL_STATUS_NOT_POSITIVE_DEFINITE" && !isempty(err.msg)
    @test item_status(p) == [0, 8, 0]
    x = copy(b)
    @test_throws BTCholError solve!(p, x)
    @test x[:, :, 2] == b[:, :, 2]
    @test isnan(logdet(p)[2])

    # NaN, shapes, element types, call order
    D, E, b = make_problem(Float64, 2, 4, 2, 1)
    p = Plan(2, 4, 2; backend=:cpu)
    Dn = copy(D); Dn[1, 1, 2, 2] = NaN
    @test_throws BTCholError upload!(p, Dn, E)
    @test_throws DimensionMismatch upload!(p, D[:, :, 1:3, :], E)
    @test_throws ArgumentError upload!(p, Float32.(D), E)
    @test_throws BTCholError solve!(p, copy(b))          # before factor
    x = copy(b)
    factor_solve!(p, D, E, x)
    @test norm(x[:, :, 1] - dense(D, E, 1) \ b[:, :, 1]) < 1e-10
    @test_throws ArgumentError solve!(p, Float32.(b))
    @test_throws DimensionMismatch solve!(p, zeros(7, 1, 2))
    close(p)
    @test_throws BTCholError factor!(p)
end
