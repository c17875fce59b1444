function varargout = btchol_solve(D, E, b, opts)
%BTCHOL_SOLVE  Solve batches of SPD block-tridiagonal systems with btchol.
%
%   X = BTCHOL_SOLVE(D, E, B) solves Psi*X = B, where Psi is the symmetric positive-definite
%   block-tridiagonal matrix with diagonal blocks D(:,:,i) and sub-diagonal blocks E(:,:,i)
%   (Psi(i+1,i) = E(:,:,i), Psi(i,i+1) = E(:,:,i)'), by a block Cholesky factorization.
%
%   Sizes (B systems of N diagonal blocks of size n, m right-hand sides):
%     D  n x n x N x B       only the lower triangle of each block is read
%     E  n x n x (N-1) x B   [] when N = 1
%     B  (N*n) x m x B
%   All real, full, and all double or all single; X has the size and class of B.
%
%   [X, LOGDET] = BTCHOL_SOLVE(...) also returns log(det(Psi)) of each system (B x 1 double).
%
%   [X, LOGDET, INFO] = BTCHOL_SOLVE(...) does not raise an error for a matrix that is not
%   positive definite: INFO(k) is 0 when system k was factored, else LAPACK's INFO (the order of
%   the leading minor that is not positive definite); X(:,:,k) and LOGDET(k) are NaN for it.
%
%   BTCHOL_SOLVE(D, E, B, OPTS) with a struct OPTS of optional fields:
%     backend    'auto' (default: the GPU when usable, else the CPU), 'cpu' or 'cuda'
%     algorithm  'auto' (default), 'seq' (sequential) or 'nd' (nested dissection)
%     threads    CPU threads, 0 (default) = all cores
%
%   Errors have identifiers btchol:<status>, e.g. btchol:notPositiveDefinite,
%   btchol:nonFiniteInput, btchol:invalidDimension, btchol:backendUnavailable; the message names
%   the status and btchol's own explanation (item, block and column of the failure, 1-based).
%
%   Example:
%     n = 2; N = 3; D = repmat(4*eye(n), [1 1 N]); E = repmat(-eye(n), [1 1 N-1]);
%     x = btchol_solve(D, E, ones(N*n, 1));
%
%   See also BTCHOL_MEX, CHOL, MLDIVIDE.
if nargin < 3
    error('btchol:invalidArgument', 'usage: [x, logdet, info] = btchol_solve(D, E, b[, opts])');
end
if nargin < 4
    opts = struct();
end
[varargout{1:max(nargout, 1)}] = btchol_mex(D, E, b, opts);
end
