//! Batch masks: upload, factor and solve only the items a mask selects (interior-point or MPC
//! batches where converged items are skipped). Unselected items keep their workspace, status,
//! boosted-pivot count and right-hand sides untouched, and the CPU work is proportional to the
//! number of selected items (the batched executor runs over the list of selected items only).

use super::{not_on_cuda, Engine, ItemStatus, Plan, State};
use crate::error::{Error, Result};
use crate::model::{BlockTridiagRef, RhsMut};
use crate::scalar::Scalar;

impl<T: Scalar> Plan<T> {
    /// Fills `self.active` with the items `mask` selects (no allocation: capacity B).
    fn select(&mut self, mask: &[bool], call: &str) -> Result<()> {
        if mask.len() != self.dims.batch {
            return Err(Error::InvalidArgument(format!(
                "{call}: the mask has {} entries, the plan's batch has {}",
                mask.len(),
                self.dims.batch
            )));
        }
        if let Engine::Cuda(_) = self.engine {
            return Err(not_on_cuda(&format!("a batch mask ({call})")));
        }
        self.active.clear();
        self.active.extend(mask.iter().enumerate().filter(|(_, &m)| m).map(|(b, _)| b));
        Ok(())
    }

    /// [`Plan::upload`] for the items `mask` selects (`mask.len()` = B): checks and copies only
    /// those items of `matrix`, whose other items are not read; they become "uploaded, not
    /// factored". Unselected items keep what the plan held (their factor, status and count).
    /// Nothing is copied on error. CPU plans only (CUDA: [`Error::Unsupported`]).
    pub fn upload_masked(&mut self, matrix: &BlockTridiagRef<T>, mask: &[bool]) -> Result<()> {
        self.check_matrix(matrix)?;
        self.select(mask, "upload_masked")?;
        for &b in &self.active {
            matrix.check_finite_item(b)?;
        }
        let Engine::Cpu(e) = &mut self.engine else { unreachable!("select refuses CUDA plans") };
        e.upload(matrix, &self.active);
        for &b in &self.active {
            self.status[b] = ItemStatus::Pending;
            self.fresh[b] = true;
        }
        if self.state == State::Empty && !self.active.is_empty() {
            self.state = State::Uploaded;
        }
        Ok(())
    }

    /// [`Plan::factor`] for the items `mask` selects: each must have been uploaded since its last
    /// factorization (else [`Error::InvalidState`] naming it, and nothing is factored). The other
    /// items keep their previous factor, status and boosted-pivot count. The error names the
    /// first selected item that is not positive definite. CPU plans only.
    pub fn factor_masked(&mut self, mask: &[bool]) -> Result<()> {
        self.select(mask, "factor_masked")?;
        if self.state == State::Empty {
            return Err(Error::InvalidState("factor_masked called before upload".into()));
        }
        if let Some(k) = self.active.iter().find(|&&b| !self.fresh[b]) {
            return Err(Error::InvalidState(format!(
                "factor_masked: item {k} was not uploaded since its last factorization (the factor \
                 overwrote it): upload it again (upload_masked uploads only the selected items)"
            )));
        }
        let Engine::Cpu(e) = &mut self.engine else { unreachable!("select refuses CUDA plans") };
        e.factor(&mut self.status, &mut self.boosted, &self.active);
        for &b in &self.active {
            self.fresh[b] = false;
        }
        if !self.active.is_empty() {
            self.state = State::Factored;
        }
        self.first_failure_in(&self.active)
    }

    /// [`Plan::solve`] for the items `mask` selects: their right-hand sides are solved in place;
    /// those of the other items are neither read nor written. Each selected item must be
    /// factored ([`Error::InvalidState`] naming it otherwise); selected items whose factorization
    /// failed are left unchanged and the first is the error. CPU plans only.
    pub fn solve_masked(&mut self, mask: &[bool], rhs: &mut RhsMut<T>) -> Result<()> {
        self.select(mask, "solve_masked")?;
        if self.state != State::Factored {
            return Err(Error::InvalidState("solve_masked called before factor".into()));
        }
        self.check_factored(&self.active)?;
        rhs.shape().required_len(self.dims)?;
        rhs.check_finite_items(self.dims, &self.active)?;
        let Engine::Cpu(e) = &self.engine else { unreachable!("select refuses CUDA plans") };
        e.solve(&self.status, rhs, &self.active);
        self.first_failure_in(&self.active)
    }
}
