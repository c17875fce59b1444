function failed = test_btchol()
%TEST_BTCHOL  Tests of the btchol MEX binding against backslash (GNU Octave or MATLAB).
%   failed = test_btchol() runs every test, prints one line per test and a summary
%   "matlab: N passed, M failed", and returns the number of failures. From a shell:
%     octave --no-gui --eval "exit(test_btchol() > 0)"
tests = {@t_version, @t_solve_matches_backslash, @t_single, @t_edge_shapes, @t_logdet, ...
         @t_not_pd_error, @t_not_pd_info_output, @t_nan_rejected, @t_bad_arguments, @t_cuda_backend};
passed = 0;
failed = 0;
for k = 1:numel(tests)
    name = func2str(tests{k});
    try
        tests{k}();
        passed = passed + 1;
        fprintf('PASS %s\n', name);
    catch err
        failed = failed + 1;
        fprintf('FAIL %s: %s\n', name, err.message);
    end
end
fprintf('matlab: %d passed, %d failed\n', passed, failed);
end

% ---- helpers --------------------------------------------------------------------------------

function [D, E, b] = make_problem(B, N, n, m, seed)
% Random diagonally dominant SPD block-tridiagonal batch in MATLAB layout.
rand('seed', seed); randn('seed', seed); %#ok<RAND> same stream in Octave and MATLAB
D = zeros(n, n, N, B);
E = (2 * rand(n, n, max(N - 1, 0), B) - 1) / n;
for k = 1:B
    for i = 1:N
        S = (2 * rand(n) - 1) / n;
        D(:, :, i, k) = (S + S') / 2 + 4 * eye(n);
    end
end
if N == 1
    E = [];
end
b = randn(N * n, m, B);
end

function A = dense(D, E, k)
% The sparse matrix Psi of item k (lower triangle of D only).
n = size(D, 1); N = size(D, 3);
A = sparse(N * n, N * n);
for i = 1:N
    L = tril(D(:, :, i, k));
    r = (i - 1) * n + (1:n);
    A(r, r) = L + tril(L, -1)';
end
for i = 1:N - 1
    r = i * n + (1:n); c = (i - 1) * n + (1:n);
    A(r, c) = E(:, :, i, k);
    A(c, r) = E(:, :, i, k)';
end
end

function check_solution(D, E, b, x, tol)
assert(isequal(size(x), size(b)), 'x has size %s, b %s', mat2str(size(x)), mat2str(size(b)));
for k = 1:size(b, 3)
    A = dense(double(D), double(E), k);
    ref = A \ double(b(:, :, k));
    err = norm(double(x(:, :, k)) - ref, 'fro') / norm(ref, 'fro');
    assert(err <= tol, 'item %d: relative error %g > %g', k, err, tol);
end
end

function expect_error(f, id, varargin)
% Runs f, which must raise an error with identifier id and a message containing each varargin.
try
    f();
catch err
    assert(strcmp(err.identifier, id), 'expected error %s, got %s: %s', id, err.identifier, err.message);
    for j = 1:numel(varargin)
        assert(~isempty(strfind(err.message, varargin{j})), 'message "%s" lacks "%s"', err.message, varargin{j});
    end
    return;
end
error('test:noError', 'expected error %s, but the call succeeded', id);
end

% ---- tests ----------------------------------------------------------------------------------

function t_version()
v = btchol_mex('version');
assert(ischar(v) && numel(strfind(v, '.')) == 2, 'version %s', v);
assert(islogical(btchol_mex('cuda_available')));
end

function t_solve_matches_backslash()
shapes = [3 5 4 2; 2 6 3 1; 1 4 2 3; 4 9 5 2];    % B N n m
algs = {'seq', 'nd'};
for s = 1:size(shapes, 1)
    B = shapes(s, 1); N = shapes(s, 2); n = shapes(s, 3); m = shapes(s, 4);
    [D, E, b] = make_problem(B, N, n, m, s);
    for a = 1:numel(algs)
        x = btchol_solve(D, E, b, struct('backend', 'cpu', 'algorithm', algs{a}));
        check_solution(D, E, b, x, 1e-10);
    end
    x = btchol_solve(D, E, b);   % defaults
    check_solution(D, E, b, x, 1e-10);
end
end

function t_single()
[D, E, b] = make_problem(2, 7, 3, 2, 11);
x = btchol_solve(single(D), single(E), single(b), struct('backend', 'cpu', 'threads', 1));
assert(isa(x, 'single'), 'x is %s', class(x));
check_solution(D, E, b, x, 1e-4);
end

function t_edge_shapes()
% N = 1 (E = []), n = 1, B = 1, m = 1, and the upper triangle of D is ignored.
[D, E, b] = make_problem(3, 1, 4, 2, 21);
check_solution(D, E, b, btchol_solve(D, [], b, struct('backend', 'cpu')), 1e-10);
[D, E, b] = make_problem(2, 8, 1, 1, 22);
check_solution(D, E, b, btchol_solve(D, E, b, struct('backend', 'cpu')), 1e-10);
[D, E, b] = make_problem(1, 1, 1, 1, 23);
check_solution(D, E, b, btchol_solve(D, E, b), 1e-12);
[D, E, b] = make_problem(2, 3, 3, 1, 24);
G = D;
for k = 1:2
    for i = 1:3
        G(:, :, i, k) = tril(D(:, :, i, k)) + triu(1e3 * ones(3), 1);
    end
end
check_solution(D, E, b, btchol_solve(G, E, b, struct('backend', 'cpu')), 1e-10);
end

function t_logdet()
[D, E, b] = make_problem(3, 6, 3, 1, 31);
[x, ld] = btchol_solve(D, E, b, struct('backend', 'cpu'));
assert(isequal(size(ld), [3 1]) && isa(ld, 'double'));
for k = 1:3
    R = chol(dense(D, E, k));
    ref = 2 * sum(log(full(diag(R))));
    assert(abs(ld(k) - ref) <= 1e-10 * abs(ref), 'logdet item %d: %g vs %g', k, ld(k), ref);
end
check_solution(D, E, b, x, 1e-10);
end

function t_not_pd_error()
[D, E, b] = make_problem(3, 5, 3, 2, 41);
D(2, 2, 3, 2) = -10;       % item 2, block 3, column 2 (1-based): LAPACK INFO = 2*3 + 2 = 8
expect_error(@() btchol_solve(D, E, b, struct('backend', 'cpu', 'algorithm', 'seq')), ...
             'btchol:notPositiveDefinite', 'BTCHOL_STATUS_NOT_POSITIVE_DEFINITE', ...
             'item 2, block 3, column 2');
end

function t_not_pd_info_output()
[D, E, b] = make_problem(3, 5, 3, 2, 42);
D(2, 2, 3, 2) = -10;
[x, ld, info] = btchol_solve(D, E, b, struct('backend', 'cpu', 'algorithm', 'seq'));
assert(isequal(info, [0; 8; 0]), 'info = %s', mat2str(info));
x2 = x(:, :, 2);
assert(all(isnan(x2(:))) && isnan(ld(2)) && all(isfinite(ld([1 3]))));
check_solution(D(:, :, :, [1 3]), E(:, :, :, [1 3]), b(:, :, [1 3]), x(:, :, [1 3]), 1e-10);
[x, ld, info] = btchol_solve(D(:, :, :, 1), E(:, :, :, 1), b(:, :, 1));  % all fine
assert(info == 0);
end

function t_nan_rejected()
[D, E, b] = make_problem(2, 4, 2, 1, 51);
D(1, 1, 2, 2) = NaN;
expect_error(@() btchol_solve(D, E, b, struct('backend', 'cpu')), 'btchol:nonFiniteInput', ...
             'BTCHOL_STATUS_NON_FINITE_INPUT', 'btchol_plan_factor_solve');
[D, E, b] = make_problem(2, 4, 2, 1, 52);
b(3, 1, 1) = Inf;
expect_error(@() btchol_solve(D, E, b, struct('backend', 'cpu')), 'btchol:nonFiniteInput');
end

function t_bad_arguments()
[D, E, b] = make_problem(2, 4, 3, 1, 61);
expect_error(@() btchol_solve(D, E(:, :, 1:2, :), b), 'btchol:invalidDimension', 'E is 3x3x2x2');
expect_error(@() btchol_solve(D, E, b(1:end-1, :, :)), 'btchol:invalidDimension', 'b is 11x1x2');
expect_error(@() btchol_solve(D, E, b(:, :, 1)), 'btchol:invalidDimension');
expect_error(@() btchol_solve(D(:, 1:2, :, :), E, b), 'btchol:invalidDimension');
expect_error(@() btchol_solve(D, single(E), b), 'btchol:invalidArgument');
expect_error(@() btchol_solve(D, E, single(b)), 'btchol:invalidArgument');
expect_error(@() btchol_solve(D, E, complex(b)), 'btchol:invalidArgument');
expect_error(@() btchol_solve(int32(D), E, b), 'btchol:invalidArgument');
expect_error(@() btchol_solve(D, E, b, struct('backend', 'gpu')), 'btchol:invalidArgument', 'backend');
expect_error(@() btchol_solve(D, E, b, struct('algorithm', 'x')), 'btchol:invalidArgument', 'algorithm');
expect_error(@() btchol_solve(D, E, b, struct('threads', -1)), 'btchol:invalidArgument', 'threads');
expect_error(@() btchol_solve(D, E, b, struct('colour', 'red')), 'btchol:invalidArgument', 'colour');
expect_error(@() btchol_solve(D, E), 'btchol:invalidArgument');
expect_error(@() btchol_mex('nonsense'), 'btchol:invalidArgument');
end

function t_cuda_backend()
[D, E, b] = make_problem(2, 8, 3, 2, 71);
if btchol_mex('cuda_available')
    check_solution(D, E, b, btchol_solve(D, E, b, struct('backend', 'cuda')), 1e-10);
else
    expect_error(@() btchol_solve(D, E, b, struct('backend', 'cuda')), 'btchol:backendUnavailable', ...
                 'BTCHOL_STATUS_BACKEND_UNAVAILABLE');
    fprintf('  (no CUDA GPU: checked that backend ''cuda'' is refused)\n');
end
end
