use super::*;
use std::sync::OnceLock;

/// Every N the structural tests cover: 1..=300 and a few large ones around powers of two.
fn sizes() -> impl Iterator<Item = usize> {
    (1..=300).chain([1000, 1023, 1024, 1025, 4097, 16384])
}

/// ⌊log₂ N⌋ for N ≥ 1, computed without the schedule's own loop.
fn floor_log2(n: usize) -> usize {
    (usize::BITS - 1 - n.leading_zeros()) as usize
}

/// The schedule's elimination order: level by level, blocks in increasing order within a level.
fn elimination_order(s: &Schedule) -> Vec<usize> {
    let mut order = Vec::with_capacity(s.n_blocks());
    for level in s.levels() {
        let mut blocks: Vec<usize> = level.eliminations.iter().map(|e| e.block).collect();
        blocks.sort_unstable();
        order.extend(blocks);
    }
    order
}

/// One step of the symbolic block elimination.
struct Step {
    node: usize,
    /// Neighbours of `node` that are not yet eliminated when it is eliminated, sorted.
    neighbours: Vec<usize>,
    /// Edges (lo, hi) between pairs of `neighbours` that did not exist before this step.
    new_fill: Vec<(usize, usize)>,
    /// Pairs of `neighbours` that were already adjacent (Schur update of an existing block).
    existing_pairs: Vec<(usize, usize)>,
}

struct Symbolic {
    steps: Vec<Step>,
    /// Strictly-lower off-diagonal nonzero blocks of L in (row_block, col_block) = (later, earlier),
    /// sorted and distinct.
    l_pattern: Vec<(usize, usize)>,
}

/// Symbolic block Cholesky of the tridiagonal block graph (edges i–i+1) in the given order.
fn symbolic_elimination(n: usize, order: &[usize]) -> Symbolic {
    assert_eq!(order.len(), n);
    // Adjacency lists (degrees stay tiny here, so linear scans beat tree sets).
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n.saturating_sub(1) {
        adj[i].push(i + 1);
        adj[i + 1].push(i);
    }
    let mut eliminated = vec![false; n];
    let mut steps = Vec::with_capacity(n);
    let mut l_pattern = Vec::new();
    for &v in order {
        assert!(!eliminated[v], "order eliminates block {v} twice");
        // Eliminated nodes are removed from their neighbours' adjacency, so adj[v] is the
        // set of remaining neighbours.
        let mut neighbours: Vec<usize> = std::mem::take(&mut adj[v]);
        neighbours.sort_unstable();
        debug_assert!(neighbours.iter().all(|&u| !eliminated[u]));
        let mut new_fill = Vec::new();
        let mut existing_pairs = Vec::new();
        for (x, &a) in neighbours.iter().enumerate() {
            for &b in &neighbours[x + 1..] {
                if adj[a].contains(&b) {
                    existing_pairs.push((a, b));
                } else {
                    adj[a].push(b);
                    adj[b].push(a);
                    new_fill.push((a, b));
                }
            }
        }
        for &u in &neighbours {
            let at = adj[u].iter().position(|&w| w == v).expect("asymmetric adjacency");
            adj[u].swap_remove(at);
            l_pattern.push((u, v));
        }
        eliminated[v] = true;
        steps.push(Step { node: v, neighbours, new_fill, existing_pairs });
    }
    l_pattern.sort_unstable();
    let len = l_pattern.len();
    l_pattern.dedup();
    assert_eq!(l_pattern.len(), len, "an edge of L was created twice");
    Symbolic { steps, l_pattern }
}

/// The schedule for N and its symbolic elimination, computed once per N for all tests.
fn symbolic_case(n: usize) -> (&'static Schedule, &'static Symbolic) {
    static CASES: OnceLock<Vec<(usize, Schedule, Symbolic)>> = OnceLock::new();
    let cases = CASES.get_or_init(|| {
        sizes()
            .map(|n| {
                let s = Schedule::new(n);
                let sym = symbolic_elimination(n, &elimination_order(&s));
                (n, s, sym)
            })
            .collect()
    });
    let (_, s, sym) = cases.iter().find(|c| c.0 == n).expect("N not in sizes()");
    (s, sym)
}

/// Flops of the symbolic elimination in units of n³: per node potrf 1/3, a trsm and a syrk per
/// remaining neighbour, and a gemm (2) per pair of remaining neighbours.
fn symbolic_flops_units(sym: &Symbolic) -> f64 {
    sym.steps
        .iter()
        .map(|st| {
            let d = st.neighbours.len() as f64;
            1.0 / 3.0 + 2.0 * d + d * (d - 1.0)
        })
        .sum()
}

fn assert_close(a: f64, b: f64, what: &str) {
    let tol = 1e-12 * a.abs().max(b.abs()).max(1.0);
    assert!((a - b).abs() <= tol, "{what}: {a} != {b}");
}

/// The elimination a block belongs to: (level, index within that level's eliminations).
fn elimination_index(s: &Schedule) -> Vec<(usize, usize)> {
    let mut at = vec![(usize::MAX, usize::MAX); s.n_blocks()];
    for (l, level) in s.levels().iter().enumerate() {
        for (x, e) in level.eliminations.iter().enumerate() {
            at[e.block] = (l, x);
        }
    }
    at
}

// ---------------------------------------------------------------------------------------------
// 1. Coverage and level structure
// ---------------------------------------------------------------------------------------------

#[test]
#[should_panic]
fn zero_blocks_is_rejected() {
    let _ = Schedule::new(0);
}

#[test]
fn n_blocks_is_reported() {
    for n in sizes() {
        assert_eq!(Schedule::new(n).n_blocks(), n);
    }
}

#[test]
fn every_block_is_eliminated_exactly_once() {
    for n in sizes() {
        let s = Schedule::new(n);
        let mut count = vec![0usize; n];
        for level in s.levels() {
            for e in &level.eliminations {
                assert!(e.block < n, "N={n}: block {} out of range", e.block);
                count[e.block] += 1;
            }
        }
        for (b, &c) in count.iter().enumerate() {
            assert_eq!(c, 1, "N={n}: block {b} eliminated {c} times");
        }
    }
}

#[test]
fn number_of_levels_is_floor_log2_n_plus_one() {
    for n in sizes() {
        let s = Schedule::new(n);
        assert_eq!(s.levels().len(), floor_log2(n) + 1, "N={n}");
    }
}

#[test]
fn level_l_has_stride_two_to_the_l() {
    for n in sizes() {
        let s = Schedule::new(n);
        for (l, level) in s.levels().iter().enumerate() {
            assert_eq!(level.stride, 1 << l, "N={n} level {l}");
        }
    }
}

#[test]
fn every_level_eliminates_at_least_one_block() {
    for n in sizes() {
        let s = Schedule::new(n);
        for (l, level) in s.levels().iter().enumerate() {
            assert!(!level.eliminations.is_empty(), "N={n} level {l} is empty");
        }
    }
}

#[test]
fn level_l_eliminates_the_odd_multiples_of_its_stride_in_increasing_order() {
    for n in sizes() {
        let s = Schedule::new(n);
        for (l, level) in s.levels().iter().enumerate() {
            let st = level.stride;
            // 1-based i = st, 3st, 5st, … ≤ N.
            let expected: Vec<usize> = (st..=n).step_by(2 * st).map(|i| i - 1).collect();
            let got: Vec<usize> = level.eliminations.iter().map(|e| e.block).collect();
            assert_eq!(got, expected, "N={n} level {l}");
        }
    }
}

#[test]
fn block_level_matches_the_level_that_eliminates_the_block() {
    for n in sizes() {
        let s = Schedule::new(n);
        for (l, level) in s.levels().iter().enumerate() {
            for e in &level.eliminations {
                assert_eq!(s.block_level(e.block), l, "N={n} block {}", e.block);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Dependencies
// ---------------------------------------------------------------------------------------------

#[test]
fn couplings_point_to_survivors_eliminated_strictly_later() {
    for n in sizes() {
        let s = Schedule::new(n);
        for (l, level) in s.levels().iter().enumerate() {
            for e in &level.eliminations {
                assert!(e.couplings.len() <= 2, "N={n} block {}", e.block);
                for c in &e.couplings {
                    assert!(c.survivor < n, "N={n} block {}: survivor out of range", e.block);
                    assert_ne!(c.survivor, e.block, "N={n}: block coupled to itself");
                    assert!(
                        s.block_level(c.survivor) > l,
                        "N={n} level {l}: block {} coupled to {} eliminated at level {}",
                        e.block,
                        c.survivor,
                        s.block_level(c.survivor)
                    );
                }
            }
        }
    }
}

#[test]
fn couplings_are_at_distance_stride_distinct_and_ordered_lower_then_upper() {
    for n in sizes() {
        let s = Schedule::new(n);
        for level in s.levels() {
            for e in &level.eliminations {
                if let [a, b] = e.couplings[..] {
                    assert!(a.survivor < e.block && e.block < b.survivor, "N={n} {e:?}");
                    assert_ne!(a.slot, b.slot, "N={n} {e:?}");
                }
                for c in &e.couplings {
                    assert_eq!(c.survivor.abs_diff(e.block), level.stride, "N={n} {e:?}");
                }
            }
        }
    }
}

#[test]
fn schur_updates_target_blocks_eliminated_later_and_are_race_free() {
    for n in sizes() {
        let s = Schedule::new(n);
        for (l, level) in s.levels().iter().enumerate() {
            let mut targets = Vec::new();
            for u in &level.updates {
                assert!(u.block < n, "N={n} level {l}: update target out of range");
                assert!(
                    s.block_level(u.block) > l,
                    "N={n} level {l}: update of block {} eliminated at level {}",
                    u.block,
                    s.block_level(u.block)
                );
                assert!(
                    (1..=2).contains(&u.sources.len()),
                    "N={n} level {l}: update of {} has {} sources",
                    u.block,
                    u.sources.len()
                );
                targets.push(u.block);
            }
            let len = targets.len();
            targets.sort_unstable();
            targets.dedup();
            assert_eq!(targets.len(), len, "N={n} level {l}: a block is updated twice");
        }
    }
}

#[test]
fn schur_update_sources_are_couplings_of_this_level_to_the_updated_block() {
    for n in sizes() {
        let s = Schedule::new(n);
        let at = elimination_index(&s);
        for (l, level) in s.levels().iter().enumerate() {
            for u in &level.updates {
                for &(slot, elim) in &u.sources {
                    assert!(elim < n, "N={n}: source block out of range");
                    assert_eq!(
                        s.block_level(elim),
                        l,
                        "N={n} level {l}: update of {} sources block {elim} of another level",
                        u.block
                    );
                    let (el, ex) = at[elim];
                    assert_eq!(el, l);
                    let e = &level.eliminations[ex];
                    assert_eq!(e.block, elim);
                    assert!(
                        e.couplings.iter().any(|c| c.slot == slot && c.survivor == u.block),
                        "N={n} level {l}: source ({slot}, {elim}) of update of {} is not a \
                         coupling of {elim} to {}: {:?}",
                        u.block,
                        u.block,
                        e.couplings
                    );
                }
            }
        }
    }
}

#[test]
fn every_coupling_appears_in_exactly_one_schur_update_of_its_level() {
    for n in sizes() {
        let s = Schedule::new(n);
        for (l, level) in s.levels().iter().enumerate() {
            // slot → (survivor, eliminated block, number of times it is applied).
            let mut applied: Vec<Option<(usize, usize, usize)>> = vec![None; s.n_slots()];
            for e in &level.eliminations {
                for c in &e.couplings {
                    assert!(applied[c.slot].is_none(), "N={n}: slot {} coupled twice", c.slot);
                    applied[c.slot] = Some((c.survivor, e.block, 0));
                }
            }
            for u in &level.updates {
                for &(slot, elim) in &u.sources {
                    match applied.get_mut(slot) {
                        Some(Some((surv, e, c))) if *surv == u.block && *e == elim => *c += 1,
                        _ => panic!(
                            "N={n} level {l}: update source ({slot}, {elim}) of block {} is no \
                             coupling of this level",
                            u.block
                        ),
                    }
                }
            }
            for (slot, a) in applied.iter().enumerate() {
                if let Some((surv, e, c)) = a {
                    assert_eq!(*c, 1, "N={n} level {l}: coupling of {e} to {surv} (slot {slot}) applied {c} times");
                }
            }
        }
    }
}

#[test]
fn last_level_has_no_updates_and_eliminates_one_block() {
    for n in sizes() {
        let s = Schedule::new(n);
        let last = s.levels().last().unwrap();
        assert_eq!(last.eliminations.len(), 1, "N={n}");
        assert!(last.eliminations[0].couplings.is_empty(), "N={n}");
        assert!(last.updates.is_empty(), "N={n}");
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Slots
// ---------------------------------------------------------------------------------------------

#[test]
fn slot_count_is_sum_over_levels_and_less_than_two_n() {
    for n in sizes() {
        let s = Schedule::new(n);
        let expected: usize = (0..=floor_log2(n)).map(|l| (n >> l).saturating_sub(1)).sum();
        assert_eq!(s.n_slots(), expected, "N={n}");
        assert_eq!(s.slots().len(), s.n_slots(), "N={n}");
        assert!(s.n_slots() < 2 * n, "N={n}: {} slots", s.n_slots());
        assert!(s.n_slots() >= n - 1, "N={n}");
    }
}

#[test]
fn every_slot_is_the_coupling_slot_of_exactly_one_elimination() {
    for n in sizes() {
        let s = Schedule::new(n);
        let mut uses = vec![0usize; s.n_slots()];
        for level in s.levels() {
            for e in &level.eliminations {
                for c in &e.couplings {
                    assert!(c.slot < s.n_slots(), "N={n}: slot {} out of range", c.slot);
                    uses[c.slot] += 1;
                }
            }
        }
        for (k, &u) in uses.iter().enumerate() {
            assert_eq!(u, 1, "N={n}: slot {k} transformed {u} times");
        }
    }
}

#[test]
fn coupling_slot_info_matches_the_elimination_in_factor_orientation() {
    for n in sizes() {
        let s = Schedule::new(n);
        for (l, level) in s.levels().iter().enumerate() {
            for e in &level.eliminations {
                for c in &e.couplings {
                    assert_eq!(
                        s.slot(c.slot),
                        SlotInfo { row_block: c.survivor, col_block: e.block, level: l },
                        "N={n} level {l} block {}",
                        e.block
                    );
                }
            }
        }
    }
}

#[test]
fn slot_rows_are_eliminated_later_than_slot_columns_at_the_slot_level() {
    for n in sizes() {
        let s = Schedule::new(n);
        for (k, info) in s.slots().iter().enumerate() {
            assert!(info.row_block < n && info.col_block < n, "N={n} slot {k}");
            assert_eq!(s.block_level(info.col_block), info.level, "N={n} slot {k}: {info:?}");
            assert!(s.block_level(info.row_block) > info.level, "N={n} slot {k}: rows not eliminated later: {info:?}");
        }
    }
}

#[test]
fn level_zero_slot_k_couples_blocks_k_and_k_plus_one() {
    for n in sizes() {
        let s = Schedule::new(n);
        for k in 0..n - 1 {
            let info = s.slot(k);
            assert_eq!(info.level, 0, "N={n} slot {k}");
            let pair = (info.row_block.min(info.col_block), info.row_block.max(info.col_block));
            assert_eq!(pair, (k, k + 1), "N={n} slot {k}: {info:?}");
        }
        // No other slot is a level-0 slot.
        for k in n - 1..s.n_slots() {
            assert!(s.slot(k).level > 0, "N={n} slot {k}");
        }
    }
}

#[test]
fn fill_is_present_exactly_when_there_are_two_couplings_and_indexes_them() {
    for n in sizes() {
        let s = Schedule::new(n);
        for level in s.levels() {
            for e in &level.eliminations {
                match e.fill {
                    Some(f) => {
                        assert_eq!(e.couplings.len(), 2, "N={n} {e:?}");
                        assert!(f.rows < 2 && f.cols < 2 && f.rows != f.cols, "N={n} {e:?}");
                    }
                    None => assert!(e.couplings.len() < 2, "N={n} {e:?}"),
                }
            }
        }
    }
}

#[test]
fn every_fill_slot_is_written_once_and_never_collides_with_level_zero_slots() {
    for n in sizes() {
        let s = Schedule::new(n);
        let mut writers = vec![0usize; s.n_slots()];
        let mut n_fill = 0;
        for level in s.levels() {
            for e in &level.eliminations {
                if let Some(f) = e.fill {
                    assert!(f.slot < s.n_slots(), "N={n}: fill slot {} out of range", f.slot);
                    assert!(f.slot >= n - 1, "N={n}: fill of {} overwrites level-0 slot", e.block);
                    writers[f.slot] += 1;
                    n_fill += 1;
                }
            }
        }
        for (k, &w) in writers.iter().enumerate() {
            if k < n - 1 {
                assert_eq!(w, 0, "N={n}: level-0 slot {k} written by fill");
            } else {
                assert_eq!(w, 1, "N={n}: fill slot {k} written {w} times");
            }
        }
        // The slots are exactly the N−1 given blocks plus one per fill.
        assert_eq!(s.n_slots(), n - 1 + n_fill, "N={n}");
    }
}

#[test]
fn every_fill_slot_is_consumed_at_the_next_level_by_one_of_its_two_blocks() {
    for n in sizes() {
        let s = Schedule::new(n);
        // slot → (level, eliminated block, survivor) of the coupling that consumes it.
        let mut consumer = vec![None; s.n_slots()];
        for (l, level) in s.levels().iter().enumerate() {
            for e in &level.eliminations {
                for c in &e.couplings {
                    consumer[c.slot] = Some((l, e.block, c.survivor));
                }
            }
        }
        for (l, level) in s.levels().iter().enumerate() {
            for e in &level.eliminations {
                let Some(f) = e.fill else { continue };
                let (a, c) = (e.couplings[0].survivor, e.couplings[1].survivor);
                let (cl, elim, surv) =
                    consumer[f.slot].unwrap_or_else(|| panic!("N={n}: fill slot {} never consumed", f.slot));
                assert_eq!(cl, l + 1, "N={n}: fill of {} (level {l}) consumed at {cl}", e.block);
                assert_eq!(s.slot(f.slot).level, l + 1, "N={n} slot {}", f.slot);
                let consumed_pair = (elim.min(surv), elim.max(surv));
                assert_eq!(consumed_pair, (a.min(c), a.max(c)), "N={n} fill of {}", e.block);
            }
        }
    }
}

#[test]
fn fill_orientation_matches_slot_rows_and_columns() {
    for n in sizes() {
        let s = Schedule::new(n);
        for level in s.levels() {
            for e in &level.eliminations {
                let Some(f) = e.fill else { continue };
                let info = s.slot(f.slot);
                assert_eq!(e.couplings[f.rows].survivor, info.row_block, "N={n} {e:?} {info:?}");
                assert_eq!(e.couplings[f.cols].survivor, info.col_block, "N={n} {e:?} {info:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Symbolic elimination
// ---------------------------------------------------------------------------------------------

#[test]
fn couplings_and_fill_match_symbolic_block_elimination() {
    for n in sizes() {
        let (s, sym) = symbolic_case(n);
        let at = elimination_index(s);
        for st in &sym.steps {
            let (l, x) = at[st.node];
            let e = &s.levels()[l].eliminations[x];
            let mut survivors: Vec<usize> = e.couplings.iter().map(|c| c.survivor).collect();
            survivors.sort_unstable();
            assert_eq!(
                survivors, st.neighbours,
                "N={n}: block {} (level {l}) couplings differ from its remaining neighbours",
                st.node
            );
            assert!(
                st.existing_pairs.is_empty(),
                "N={n}: block {} would update existing blocks {:?} that the schedule ignores",
                st.node,
                st.existing_pairs
            );
            match (st.neighbours.len(), e.fill) {
                (2, Some(f)) => {
                    assert_eq!(st.new_fill.len(), 1);
                    let info = s.slot(f.slot);
                    let pair = (info.row_block.min(info.col_block), info.row_block.max(info.col_block));
                    assert_eq!(pair, st.new_fill[0], "N={n}: fill of block {}", st.node);
                }
                (0 | 1, None) => assert!(st.new_fill.is_empty()),
                (d, f) => panic!("N={n}: block {} has {d} neighbours and fill {f:?}", st.node),
            }
        }
    }
}

#[test]
fn slot_pattern_equals_symbolic_factor_pattern() {
    for n in sizes() {
        let (s, sym) = symbolic_case(n);
        let mut slot_pattern: Vec<(usize, usize)> = s.slots().iter().map(|i| (i.row_block, i.col_block)).collect();
        slot_pattern.sort_unstable();
        slot_pattern.dedup();
        assert_eq!(slot_pattern.len(), s.n_slots(), "N={n}: two slots hold the same block");
        assert_eq!(slot_pattern, sym.l_pattern, "N={n}");
    }
}

#[test]
fn nested_dissection_fill_is_below_n_blocks() {
    // The factor has N−1 given blocks plus fewer than N fill blocks (a direct consequence of the
    // symbolic pattern; spelled out since it bounds the factor storage).
    for n in sizes() {
        let (_, sym) = symbolic_case(n);
        let fill: usize = sym.steps.iter().map(|st| st.new_fill.len()).sum();
        assert!(fill < n, "N={n}: {fill} fill blocks");
        assert_eq!(sym.l_pattern.len(), n - 1 + fill, "N={n}");
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Transposed upload of the sub-diagonal blocks
// ---------------------------------------------------------------------------------------------

#[test]
fn sub_block_transposed_iff_block_eliminated_after_its_successor() {
    for n in sizes() {
        let s = Schedule::new(n);
        for i in 0..n - 1 {
            assert_ne!(s.block_level(i), s.block_level(i + 1), "N={n}: neighbours {i}, {}", i + 1);
            assert_eq!(s.sub_block_transposed(i), s.block_level(i) > s.block_level(i + 1), "N={n} i={i}");
        }
    }
}

#[test]
fn sub_block_transposed_known_small_case() {
    // N = 4 (1-based 1..4): level 0 eliminates 1, 3; level 1 eliminates 2; level 2 eliminates 4.
    // 0-based levels: [0, 1, 0, 2]. E_0 (blocks 0,1): 0 first → not transposed;
    // E_1 (1,2): 2 first → transposed; E_2 (2,3): 2 first → not transposed.
    let s = Schedule::new(4);
    assert_eq!((0..4).map(|b| s.block_level(b)).collect::<Vec<_>>(), [0, 1, 0, 2]);
    assert_eq!((0..3).map(|i| s.sub_block_transposed(i)).collect::<Vec<_>>(), [false, true, false]);
}

// ---------------------------------------------------------------------------------------------
// 6. Flop counts
// ---------------------------------------------------------------------------------------------

#[test]
fn factor_flops_equal_symbolic_count() {
    for n in sizes() {
        let (s, sym) = symbolic_case(n);
        for bs in [1usize, 2, 7, 64] {
            let n3 = (bs as f64).powi(3);
            assert_close(s.factor_flops(bs), symbolic_flops_units(sym) * n3, &format!("N={n} n={bs}"));
        }
    }
}

#[test]
fn factor_flops_equal_schedule_operation_count() {
    // Counted from the schedule's own operations, with the syrk count taken from the couplings
    // (one syrk per coupling) rather than from the updates.
    for n in sizes() {
        let s = Schedule::new(n);
        let mut units = 0.0;
        for level in s.levels() {
            for e in &level.eliminations {
                let d = e.couplings.len() as f64;
                units += 1.0 / 3.0 + d /* trsm */ + d /* syrk */;
                if e.fill.is_some() {
                    units += 2.0;
                }
            }
        }
        assert_close(s.factor_flops(5), units * 125.0, &format!("N={n}"));
    }
}

#[test]
fn sequential_factor_flops_formula_and_symbolic_natural_order() {
    for n in sizes() {
        for bs in [1usize, 3, 32] {
            let n3 = (bs as f64).powi(3);
            let formula = (7.0 / 3.0 * n as f64 - 2.0) * n3;
            assert_close(sequential_factor_flops(n, bs), formula, &format!("N={n} n={bs}"));
        }
        // The natural elimination order 0, 1, …, N−1 is the sequential algorithm.
        let natural: Vec<usize> = (0..n).collect();
        let sym = symbolic_elimination(n, &natural);
        assert_close(sequential_factor_flops(n, 1), symbolic_flops_units(&sym), &format!("N={n}"));
    }
}

#[test]
fn single_block_flops_are_one_potrf() {
    let s = Schedule::new(1);
    for bs in [1usize, 4, 100] {
        let potrf = (bs as f64).powi(3) / 3.0;
        assert_close(s.factor_flops(bs), potrf, &format!("n={bs}"));
        assert_close(sequential_factor_flops(1, bs), potrf, &format!("n={bs}"));
    }
}

#[test]
fn nested_dissection_flops_lie_between_sequential_and_nineteen_thirds_n() {
    // ND never saves flops over the sequential sweep, and each block costs at most
    // potrf + 2 trsm + 2 syrk + 1 gemm = 19/3 n³.
    for n in sizes() {
        let nd = Schedule::new(n).factor_flops(1);
        let seq = sequential_factor_flops(n, 1);
        assert!(nd >= seq - 1e-9, "N={n}: {nd} < {seq}");
        assert!(nd <= 19.0 / 3.0 * n as f64 + 1e-9, "N={n}: {nd} > 19/3·N");
    }
}

// ---------------------------------------------------------------------------------------------
// Small hand-checked case
// ---------------------------------------------------------------------------------------------

#[test]
fn seven_blocks_match_hand_derived_schedule() {
    // 1-based: level 0 eliminates 1,3,5,7; level 1 eliminates 2,6; level 2 eliminates 4.
    let s = Schedule::new(7);
    let blocks: Vec<Vec<usize>> =
        s.levels().iter().map(|lv| lv.eliminations.iter().map(|e| e.block).collect()).collect();
    assert_eq!(blocks, vec![vec![0, 2, 4, 6], vec![1, 5], vec![3]]);
    // 6 given slots + level-1 fill (⌊7/2⌋−1 = 2) + level-2 fill (⌊7/4⌋−1 = 0).
    assert_eq!(s.n_slots(), 8);
    let updated: Vec<Vec<usize>> = s.levels().iter().map(|lv| lv.updates.iter().map(|u| u.block).collect()).collect();
    assert_eq!(updated, vec![vec![1, 3, 5], vec![3], vec![]]);
    // Block 2 (1-based 3) couples 1 and 3 (0-based) and creates fill between them.
    let e = &s.levels()[0].eliminations[1];
    assert_eq!(e.block, 2);
    let f = e.fill.unwrap();
    let info = s.slot(f.slot);
    assert_eq!((info.row_block, info.col_block, info.level), (3, 1, 1));
}

// ---------------------------------------------------------------------------------------------
// 6. The partitioned schedule: the same properties, checked by one validator
// ---------------------------------------------------------------------------------------------

/// Every property the backends rely on, for any schedule: each block eliminated once at its
/// `block_level`; couplings, fills and the slot pattern equal the symbolic elimination in the
/// schedule's order (no update of an existing block is ignored); slot info in factor
/// orientation; every fill consumed at the next level; updates race-free and covering every
/// coupling exactly once; level-0 slots are the caller's E_i; flops equal the symbolic count.
fn assert_valid_schedule(s: &Schedule, what: &str) {
    let n = s.n_blocks();
    let order = elimination_order(s);
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "{what}: every block once");
    let sym = symbolic_elimination(n, &order);
    let at = elimination_index(s);
    for (b, &(l, _)) in at.iter().enumerate() {
        assert_eq!(s.block_level(b), l, "{what}: block_level of {b}");
    }
    for st in &sym.steps {
        let (l, x) = at[st.node];
        let e = &s.levels()[l].eliminations[x];
        let survivors: Vec<usize> = e.couplings.iter().map(|c| c.survivor).collect();
        assert_eq!(survivors, st.neighbours, "{what}: couplings of block {} (sorted, lower first)", st.node);
        assert!(st.existing_pairs.is_empty(), "{what}: block {} updates existing blocks", st.node);
        match (st.neighbours.len(), e.fill) {
            (2, Some(f)) => {
                let info = s.slot(f.slot);
                let pair = (info.row_block.min(info.col_block), info.row_block.max(info.col_block));
                assert_eq!(pair, st.new_fill[0], "{what}: fill of block {}", st.node);
                assert_eq!(e.couplings[f.rows].survivor, info.row_block, "{what}: fill rows of {}", st.node);
                assert_eq!(e.couplings[f.cols].survivor, info.col_block, "{what}: fill cols of {}", st.node);
                assert_eq!(info.level, l + 1, "{what}: fill of {} consumed at the next level", st.node);
            }
            (0 | 1, None) => {}
            (d, f) => panic!("{what}: block {} has {d} neighbours and fill {f:?}", st.node),
        }
    }
    let mut pattern: Vec<(usize, usize)> = s.slots().iter().map(|i| (i.row_block, i.col_block)).collect();
    pattern.sort_unstable();
    pattern.dedup();
    assert_eq!(pattern.len(), s.n_slots(), "{what}: two slots hold the same block");
    assert_eq!(pattern, sym.l_pattern, "{what}: slot pattern");
    for k in 0..n.saturating_sub(1) {
        let i = s.slot(k);
        assert_eq!((i.row_block.min(i.col_block), i.row_block.max(i.col_block)), (k, k + 1), "{what}: slot {k}");
    }
    let mut consumed = vec![0; s.n_slots()];
    for (l, level) in s.levels().iter().enumerate() {
        let mut updated = std::collections::HashSet::new();
        let mut covered = std::collections::HashSet::new();
        for u in &level.updates {
            assert!(updated.insert(u.block), "{what}: block {} updated twice at level {l}", u.block);
            assert!(s.block_level(u.block) > l, "{what}: update of an eliminated block");
            assert!((1..=2).contains(&u.sources.len()), "{what}: update sources");
            for &(slot, b) in &u.sources {
                let e = &level.eliminations[level.eliminations.binary_search_by_key(&b, |e| e.block).unwrap()];
                assert!(e.couplings.iter().any(|c| c.slot == slot && c.survivor == u.block), "{what}: source");
                assert!(covered.insert(slot), "{what}: coupling {slot} in two updates");
            }
        }
        for e in &level.eliminations {
            for c in &e.couplings {
                assert!(covered.contains(&c.slot), "{what}: coupling {} of {} in no update", c.slot, e.block);
                consumed[c.slot] += 1;
                let i = s.slot(c.slot);
                assert_eq!((i.row_block, i.col_block, i.level), (c.survivor, e.block, l), "{what}: slot {}", c.slot);
            }
        }
    }
    assert!(consumed.iter().all(|&c| c == 1), "{what}: every slot consumed once");
    assert_close(s.factor_flops(1), symbolic_flops_units(&sym), what);
}

#[test]
fn the_validator_accepts_nested_dissection() {
    for n in (1..=40).chain([255, 256, 257, 1000]) {
        assert_valid_schedule(&Schedule::new(n), &format!("nd N={n}"));
    }
}

#[test]
fn partitioned_schedules_are_valid_for_every_chunk_and_awkward_n() {
    for chunk in (1..=9).chain([15, 31, 100]) {
        for n in (1..=70).chain([127, 128, 129, 1000, 1021]) {
            assert_valid_schedule(&Schedule::partitioned(n, chunk), &format!("partitioned N={n} chunk={chunk}"));
        }
    }
}

#[test]
fn partitioned_levels_are_the_chunk_steps_then_the_separators_nested_dissection() {
    // N = 16 full chunks of 15, each with its separator, and a short last chunk of 7: 15 chunk
    // steps, then ⌊log₂ 16⌋ + 1 levels of the 16 separators.
    let (chunk, n) = (15, 16 * 16 + 7);
    let s = Schedule::partitioned(n, chunk);
    assert_eq!(s.levels().len(), chunk + 5);
    for (j, level) in s.levels().iter().take(chunk).enumerate() {
        let expect: Vec<usize> = (0..17).map(|k| k * 16 + j).filter(|&b| b < n && (b % 16) < 15).collect();
        let got: Vec<usize> = level.eliminations.iter().map(|e| e.block).collect();
        assert_eq!(got, expect, "step {j}");
        assert_eq!(level.stride, 0);
    }
    let seps: Vec<usize> = s.levels()[chunk..].iter().flat_map(|l| l.eliminations.iter().map(|e| e.block)).collect();
    assert!(seps.iter().all(|b| b % 16 == 15), "{seps:?}");
    assert_eq!(seps.len(), 16);
}

#[test]
fn partitioned_with_one_chunk_is_the_sequential_algorithm() {
    for n in [1, 2, 3, 17] {
        let s = Schedule::partitioned(n, n);
        assert_eq!(s.levels().len(), n);
        assert!(s.levels().iter().all(|l| l.eliminations.len() == 1 && l.eliminations[0].fill.is_none()));
        assert_eq!(s.n_slots(), n - 1);
        assert_close(s.factor_flops(2), sequential_factor_flops(n, 2), "flops");
    }
}

#[test]
fn partitioned_flops_stay_within_three_times_the_sequential_algorithm() {
    // Spike fill costs about as much as nested dissection's: ≈ 2.7× the sequential flops.
    for chunk in [3, 7, 15, 31] {
        let s = Schedule::partitioned(16384, chunk);
        let ratio = s.factor_flops(1) / sequential_factor_flops(16384, 1);
        assert!(ratio > 1.5 && ratio < 3.0, "chunk {chunk}: {ratio}");
    }
}
