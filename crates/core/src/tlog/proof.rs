//! The tree's algorithms over its stored hashes (RFC 6962 §2.1; verification as RFC 9162
//! §2.1.3.2 and §2.1.4.2 write it).
//!
//! A stored hash is the hash of a complete subtree: at `(level, index)` the hash of the
//! `2^level` leaves from `index * 2^level`. Appending leaf `i` stores `(0, i)` and then, while
//! the new hash is a right child, its parent: each complete subtree is computed once, when its
//! last leaf arrives, and never again. Roots and proofs of any size are made from these hashes
//! alone (a range that is not a complete subtree splits at the largest power of two below its
//! length, as RFC 6962's MTH does), so nothing is ever recomputed from the leaves.

use super::{Hash, empty_root, node_hash};
use crate::store::StoreError;

/// Where the stored hashes live: the database ([`super::store::DbHashes`]) or memory.
pub trait Hashes {
    /// The stored hash at `(level, index)`.
    ///
    /// # Errors
    /// [`StoreError`] when it cannot be read or is missing (a tree shorter than asked).
    fn hash_at(&mut self, level: u32, index: u64) -> Result<Hash, StoreError>;

    /// Stores the hash at `(level, index)`.
    ///
    /// # Errors
    /// [`StoreError`] when it cannot be written.
    fn put(&mut self, level: u32, index: u64, hash: &Hash) -> Result<(), StoreError>;
}

/// The largest power of two smaller than `n` (`n >= 2`).
fn split(n: u64) -> u64 {
    1 << (63 - (n - 1).leading_zeros())
}

/// The tree's right edge as a writer last saw it: the last hash stored at each level, with
/// its index. A right child's left sibling is the last hash stored before it at its level, so
/// a writer that keeps this across batches appends without reading the stored hashes back.
/// A level it does not know (a fresh frontier, one behind the stored tree) is read from the
/// hashes, so a partial frontier is never wrong, only slower.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontier {
    /// Leaves in the tree this frontier is the edge of.
    size: u64,
    /// Per level, the last `(index, hash)` stored there.
    last: Vec<Option<(u64, Hash)>>,
}

impl Frontier {
    /// Leaves in the tree this frontier is the edge of.
    pub fn size(&self) -> u64 {
        self.size
    }
}

/// Appends the leaf hashes `leaves` to a tree of `size` leaves, storing every complete
/// subtree they finish. Returns the new size.
///
/// # Errors
/// [`StoreError`] from the hashes.
pub fn append(hashes: &mut impl Hashes, size: u64, leaves: &[Hash]) -> Result<u64, StoreError> {
    append_with(hashes, &mut Frontier::default(), size, leaves)
}

/// [`append`] keeping the tree's right edge in `frontier` across calls: the left siblings it
/// knows are not read from `hashes`. A frontier of another size than `size` is dropped first.
/// After an error the frontier may name hashes that were not stored: drop it.
///
/// # Errors
/// [`StoreError`] from the hashes.
pub fn append_with(
    hashes: &mut impl Hashes,
    frontier: &mut Frontier,
    size: u64,
    leaves: &[Hash],
) -> Result<u64, StoreError> {
    if frontier.size != size {
        *frontier = Frontier {
            size,
            last: Vec::new(),
        };
    }
    let mut index = size;
    for leaf in leaves {
        let (mut level, mut at, mut hash) = (0u32, index, *leaf);
        loop {
            hashes.put(level, at, &hash)?;
            let slot = level as usize;
            if frontier.last.len() <= slot {
                frontier.last.resize(slot + 1, None);
            }
            let previous = frontier.last[slot].replace((at, hash));
            if at & 1 == 0 {
                break;
            }
            let left = match previous {
                Some((stored, left)) if stored == at - 1 => left,
                _ => hashes.hash_at(level, at - 1)?,
            };
            hash = node_hash(&left, &hash);
            level += 1;
            at >>= 1;
        }
        index += 1;
        frontier.size = index;
    }
    Ok(index)
}

/// The hash of the leaves `lo..hi` (`lo < hi`; `lo` a multiple of the largest power of two
/// not above `hi - lo`, as every range of the RFC 6962 recursion is).
///
/// # Errors
/// [`StoreError`] from the hashes.
pub fn subtree(hashes: &mut impl Hashes, lo: u64, hi: u64) -> Result<Hash, StoreError> {
    let n = hi - lo;
    if n.is_power_of_two() && lo.is_multiple_of(n) {
        let level = n.trailing_zeros();
        return hashes.hash_at(level, lo >> level);
    }
    let k = split(n);
    let left = subtree(hashes, lo, lo + k)?;
    let right = subtree(hashes, lo + k, hi)?;
    Ok(node_hash(&left, &right))
}

/// The root hash of the tree of the first `size` leaves (RFC 6962 MTH).
///
/// # Errors
/// [`StoreError`] from the hashes.
pub fn root(hashes: &mut impl Hashes, size: u64) -> Result<Hash, StoreError> {
    if size == 0 {
        return Ok(empty_root());
    }
    subtree(hashes, 0, size)
}

/// The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 6962 PATH), nearest
/// the leaf first. `index < size`.
///
/// # Errors
/// [`StoreError`] from the hashes; [`StoreError::Invalid`] when `index >= size`.
pub fn inclusion(hashes: &mut impl Hashes, index: u64, size: u64) -> Result<Vec<Hash>, StoreError> {
    if index >= size {
        return Err(StoreError::Invalid(format!(
            "leaf {index} is not in a tree of {size}"
        )));
    }
    let mut proof = Vec::new();
    path(hashes, index, 0, size, &mut proof)?;
    Ok(proof)
}

fn path(
    hashes: &mut impl Hashes,
    m: u64,
    lo: u64,
    hi: u64,
    proof: &mut Vec<Hash>,
) -> Result<(), StoreError> {
    let n = hi - lo;
    if n <= 1 {
        return Ok(());
    }
    let k = split(n);
    if m < lo + k {
        path(hashes, m, lo, lo + k, proof)?;
        proof.push(subtree(hashes, lo + k, hi)?);
    } else {
        path(hashes, m, lo + k, hi, proof)?;
        proof.push(subtree(hashes, lo, lo + k)?);
    }
    Ok(())
}

/// The consistency proof from the tree of `old` leaves to the tree of `new` (RFC 6962
/// PROOF). `0 < old <= new`; empty when they are equal.
///
/// # Errors
/// [`StoreError`] from the hashes; [`StoreError::Invalid`] when not `0 < old <= new`.
pub fn consistency(hashes: &mut impl Hashes, old: u64, new: u64) -> Result<Vec<Hash>, StoreError> {
    if old == 0 || old > new {
        return Err(StoreError::Invalid(format!(
            "no consistency proof from {old} to {new}"
        )));
    }
    let mut proof = Vec::new();
    subproof(hashes, old, 0, new, true, &mut proof)?;
    Ok(proof)
}

fn subproof(
    hashes: &mut impl Hashes,
    m: u64,
    lo: u64,
    hi: u64,
    whole: bool,
    proof: &mut Vec<Hash>,
) -> Result<(), StoreError> {
    let n = hi - lo;
    if m == n {
        if !whole {
            proof.push(subtree(hashes, lo, hi)?);
        }
        return Ok(());
    }
    let k = split(n);
    if m <= k {
        subproof(hashes, m, lo, lo + k, whole, proof)?;
        proof.push(subtree(hashes, lo + k, hi)?);
    } else {
        subproof(hashes, m - k, lo + k, hi, false, proof)?;
        proof.push(subtree(hashes, lo, lo + k)?);
    }
    Ok(())
}

/// Whether `proof` shows the leaf hash `leaf` at `index` in the tree of `size` leaves whose
/// root is `root` (RFC 9162 §2.1.3.2).
pub fn verify_inclusion(index: u64, size: u64, leaf: &Hash, proof: &[Hash], root: &Hash) -> bool {
    if index >= size {
        return false;
    }
    let (mut fnode, mut snode, mut hash) = (index, size - 1, *leaf);
    for sibling in proof {
        if snode == 0 {
            return false;
        }
        if fnode & 1 == 1 || fnode == snode {
            hash = node_hash(sibling, &hash);
            while fnode & 1 == 0 && fnode != 0 {
                fnode >>= 1;
                snode >>= 1;
            }
        } else {
            hash = node_hash(&hash, sibling);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    snode == 0 && hash == *root
}

/// Whether `proof` shows the tree of `old` leaves with root `old_root` is a prefix of the tree
/// of `new` leaves with root `new_root` (RFC 9162 §2.1.4.2). `old == 0` is refused (every tree
/// extends the empty one; there is nothing to prove).
pub fn verify_consistency(
    old: u64,
    new: u64,
    old_root: &Hash,
    new_root: &Hash,
    proof: &[Hash],
) -> bool {
    if old == 0 || old > new {
        return false;
    }
    if old == new {
        return proof.is_empty() && old_root == new_root;
    }
    let mut path: Vec<Hash> = Vec::with_capacity(proof.len() + 1);
    if old.is_power_of_two() {
        path.push(*old_root);
    }
    path.extend_from_slice(proof);
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    let (mut fnode, mut snode) = (old - 1, new - 1);
    while fnode & 1 == 1 {
        fnode >>= 1;
        snode >>= 1;
    }
    let (mut fr, mut sr) = (*first, *first);
    for c in rest {
        if snode == 0 {
            return false;
        }
        if fnode & 1 == 1 || fnode == snode {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            while fnode & 1 == 0 && fnode != 0 {
                fnode >>= 1;
                snode >>= 1;
            }
        } else {
            sr = node_hash(&sr, c);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    snode == 0 && fr == *old_root && sr == *new_root
}

/// The stored hashes in memory (tests, and checking a tree recomputed from the rows).
#[derive(Debug, Default, Clone)]
pub struct MemHashes {
    levels: Vec<Vec<Hash>>,
}

impl Hashes for MemHashes {
    fn hash_at(&mut self, level: u32, index: u64) -> Result<Hash, StoreError> {
        self.levels
            .get(level as usize)
            .and_then(|hashes| hashes.get(usize::try_from(index).ok()?))
            .copied()
            .ok_or_else(|| StoreError::Invalid(format!("no tree hash at ({level}, {index})")))
    }

    fn put(&mut self, level: u32, index: u64, hash: &Hash) -> Result<(), StoreError> {
        let slot = level as usize;
        if self.levels.len() <= slot {
            self.levels.resize(slot + 1, Vec::new());
        }
        let hashes = &mut self.levels[slot];
        let at = usize::try_from(index).map_err(|_| StoreError::Invalid("index".into()))?;
        if hashes.len() == at {
            hashes.push(*hash);
        } else if let Some(slot) = hashes.get_mut(at) {
            *slot = *hash;
        } else {
            return Err(StoreError::Invalid(format!(
                "tree hash ({level}, {index}) stored out of order"
            )));
        }
        Ok(())
    }
}
