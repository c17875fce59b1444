//! Batch masks: upload, factor and solve only the items a mask selects (interior-point or MPC
//! batches where converged items are skipped). Unselected items keep their workspace, status,
//! boosted-pivot count and right-hand sides untouched. The CPU work is proportional to the number
//! of selected items (the batched executor runs over the list of selected items only); on the GPU
//! every kernel skips the items left out (their CTAs return at once: the launch sequence is the
//! same, the arithmetic and memory traffic scale with the selected items), see
//! kernels/layout.cu `btchol_mask_begin`.

use super::{Engine, ItemStatus, Plan, State};
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
        self.active.clear();
        self.active.extend(mask.iter().enumerate().filter(|(_, &m)| m).map(|(b, _)| b));
        Ok(())
    }

    /// [`Plan::upload`] for the items `mask` selects (`mask.len()` = B): checks and copies only
    /// those items of `matrix`, whose other items are not read; they become "uploaded, not
    /// factored". Unselected items keep what the plan held (their factor, status and count).
    /// Nothing is copied on error (on the GPU the selected items may be partly converted
    /// already: they are then marked not uploaded, so they cannot be factored by mistake).
    pub fn upload_masked(&mut self, matrix: &BlockTridiagRef<T>, mask: &[bool]) -> Result<()> {
        self.check_matrix(matrix)?;
        self.select(mask, "upload_masked")?;
        for &b in &self.active {
            matrix.check_finite_item(b)?;
        }
        match &mut self.engine {
            Engine::Cpu(e) => e.upload(matrix, &self.active),
            Engine::Cuda(e) => {
                if let Err(err) = e.upload_host(matrix.layout(), matrix.diag_data(), matrix.sub_data(), Some(mask)) {
                    for &b in &self.active {
                        self.status[b] = ItemStatus::Pending;
                        self.fresh[b] = false;
                    }
                    return Err(err);
                }
            }
        }
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
    /// first selected item that is not positive definite.
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
        match &mut self.engine {
            Engine::Cpu(e) => e.factor(&mut self.status, &mut self.boosted, &self.active),
            Engine::Cuda(e) => e.factor_masked(mask, &mut self.status, &mut self.boosted)?,
        }
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
    /// failed are left unchanged and the first is the error.
    pub fn solve_masked(&mut self, mask: &[bool], rhs: &mut RhsMut<T>) -> Result<()> {
        self.select(mask, "solve_masked")?;
        if self.state != State::Factored {
            return Err(Error::InvalidState("solve_masked called before factor".into()));
        }
        self.check_factored(&self.active)?;
        rhs.shape().required_len(self.dims)?;
        rhs.check_finite_items(self.dims, &self.active, self.host_passes())?;
        match &mut self.engine {
            Engine::Cpu(e) => e.solve(&self.status, rhs, &self.active),
            Engine::Cuda(e) => e.solve_host(&self.status, rhs.shape, rhs.data, Some(mask))?,
        }
        self.first_failure_in(&self.active)
    }
}
