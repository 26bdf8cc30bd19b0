//! The tree against the RFC 6962 reference vectors and a property test.
//!
//! The vectors are those of google/trillian's `merkle/log_verifier_test.go` (Apache-2.0),
//! the same as certificate-transparency's reference tests: the 8 leaves "", 00, 10, 2021,
//! 3031, 40414243, 5051525354555657, 606162636465666768696a6b6c6d6e6f, the root of every
//! prefix, and the published inclusion and consistency proofs (their leaf numbers are 1-based
//! there; 0-based indices here).

use super::proof::{self, Hashes, MemHashes};
use super::{Hash, empty_root, leaf_hash, node_hash};

const LEAVES: [&str; 8] = [
    "",
    "00",
    "10",
    "2021",
    "3031",
    "40414243",
    "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
];

/// MTH of the first 1..=8 leaves.
const ROOTS: [&str; 8] = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];

/// (index, size, proof).
const INCLUSION: [(u64, u64, &[&str]); 6] = [
    (0, 1, &[]),
    (
        0,
        8,
        &[
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        5,
        8,
        &[
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        3,
        &["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"],
    ),
    (
        1,
        5,
        &[
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (
        1,
        2,
        &["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"],
    ),
];

/// (old, new, proof).
const CONSISTENCY: [(u64, u64, &[&str]); 4] = [
    (1, 1, &[]),
    (
        1,
        8,
        &[
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        &[
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        &[
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
];

fn h(text: &str) -> Hash {
    super::parse_hex(text).unwrap()
}

fn hs(texts: &[&str]) -> Vec<Hash> {
    texts.iter().map(|text| h(text)).collect()
}

/// The vector tree, appended in two batches (so a batch starting mid-subtree is covered).
fn vector_tree() -> MemHashes {
    let leaves: Vec<Hash> = LEAVES
        .iter()
        .map(|leaf| leaf_hash(&hex::decode(leaf).unwrap()))
        .collect();
    let mut tree = MemHashes::default();
    let size = proof::append(&mut tree, 0, &leaves[..3]).unwrap();
    assert_eq!(proof::append(&mut tree, size, &leaves[3..]).unwrap(), 8);
    tree
}

#[test]
fn roots_match_the_reference_vectors() {
    let mut tree = vector_tree();
    assert_eq!(
        hex::encode(empty_root()),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(proof::root(&mut tree, 0).unwrap(), empty_root());
    for (size, root) in ROOTS.iter().enumerate() {
        assert_eq!(
            proof::root(&mut tree, size as u64 + 1).unwrap(),
            h(root),
            "size {}",
            size + 1
        );
    }
}

#[test]
fn inclusion_proofs_match_the_reference_vectors() {
    let mut tree = vector_tree();
    for (index, size, want) in INCLUSION {
        let got = proof::inclusion(&mut tree, index, size).unwrap();
        assert_eq!(got, hs(want), "inclusion {index} in {size}");
        let leaf = tree.hash_at(0, index).unwrap();
        let root = h(ROOTS[size as usize - 1]);
        assert!(proof::verify_inclusion(index, size, &leaf, &got, &root));
    }
}

#[test]
fn consistency_proofs_match_the_reference_vectors() {
    let mut tree = vector_tree();
    for (old, new, want) in CONSISTENCY {
        let got = proof::consistency(&mut tree, old, new).unwrap();
        assert_eq!(got, hs(want), "consistency {old} to {new}");
        let (old_root, new_root) = (h(ROOTS[old as usize - 1]), h(ROOTS[new as usize - 1]));
        assert!(proof::verify_consistency(
            old, new, &old_root, &new_root, &got
        ));
    }
}

/// A root recomputed from the leaves alone, by RFC 6962's MTH recursion.
fn reference_root(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => empty_root(),
        1 => leaves[0],
        n => {
            let k = 1 << (usize::BITS - 1 - (n - 1).leading_zeros());
            node_hash(&reference_root(&leaves[..k]), &reference_root(&leaves[k..]))
        }
    }
}

fn tampered(hash: &Hash) -> Hash {
    let mut bad = *hash;
    bad[0] ^= 1;
    bad
}

/// The inclusion proof of leaf `index` in the tree of `size` verifies, and fails once the
/// leaf, the root, the index or any step of the path is changed, or the path is longer.
fn check_inclusion(tree: &mut MemHashes, leaves: &[Hash], index: u64, size: u64, root: &Hash) {
    let root = *root;
    let path = proof::inclusion(tree, index, size).unwrap();
    let leaf = leaves[index as usize];
    assert!(
        proof::verify_inclusion(index, size, &leaf, &path, &root),
        "{index} in {size}"
    );
    assert!(!proof::verify_inclusion(
        index,
        size,
        &tampered(&leaf),
        &path,
        &root
    ));
    assert!(!proof::verify_inclusion(
        index,
        size,
        &leaf,
        &path,
        &tampered(&root)
    ));
    if index + 1 < size {
        assert!(!proof::verify_inclusion(
            index + 1,
            size,
            &leaf,
            &path,
            &root
        ));
    }
    for at in 0..path.len() {
        let mut bad = path.clone();
        bad[at] = tampered(&bad[at]);
        assert!(!proof::verify_inclusion(index, size, &leaf, &bad, &root));
    }
    let mut longer = path.clone();
    longer.push(root);
    assert!(!proof::verify_inclusion(index, size, &leaf, &longer, &root));
}

/// The consistency proof from `old` to `size` verifies, and fails once either root or any step
/// of the path is changed, or the path is shortened.
fn check_consistency(tree: &mut MemHashes, roots: &[Hash], old: u64, size: u64, root: &Hash) {
    let root = *root;
    let path = proof::consistency(tree, old, size).unwrap();
    let old_root = roots[old as usize];
    assert!(
        proof::verify_consistency(old, size, &old_root, &root, &path),
        "{old} to {size}"
    );
    assert!(!proof::verify_consistency(
        old,
        size,
        &tampered(&old_root),
        &root,
        &path
    ));
    assert!(!proof::verify_consistency(
        old,
        size,
        &old_root,
        &tampered(&root),
        &path
    ));
    for at in 0..path.len() {
        let mut bad = path.clone();
        bad[at] = tampered(&bad[at]);
        assert!(!proof::verify_consistency(
            old, size, &old_root, &root, &bad
        ));
    }
    if !path.is_empty() {
        assert!(!proof::verify_consistency(
            old,
            size,
            &old_root,
            &root,
            &path[1..]
        ));
    }
}

#[test]
fn every_proof_up_to_70_leaves_verifies_and_tampering_fails() {
    const N: u64 = 70;
    let leaves: Vec<Hash> = (0..N).map(|i| leaf_hash(&i.to_be_bytes())).collect();
    let mut tree = MemHashes::default();
    // Appended in uneven batches, as the writer's batches are.
    let mut size = 0;
    for chunk in leaves.chunks(7) {
        size = proof::append(&mut tree, size, chunk).unwrap();
    }
    let roots: Vec<Hash> = (0..=N)
        .map(|n| reference_root(&leaves[..n as usize]))
        .collect();
    for size in 1..=N {
        let root = proof::root(&mut tree, size).unwrap();
        assert_eq!(root, roots[size as usize], "root of {size}");
        for index in 0..size {
            check_inclusion(&mut tree, &leaves, index, size, &root);
        }
        for old in 1..=size {
            check_consistency(&mut tree, &roots, old, size, &root);
        }
    }
}

#[test]
fn out_of_range_proofs_are_refused() {
    let mut tree = vector_tree();
    assert!(proof::inclusion(&mut tree, 8, 8).is_err());
    assert!(proof::consistency(&mut tree, 0, 8).is_err());
    assert!(proof::consistency(&mut tree, 5, 4).is_err());
    assert!(!proof::verify_inclusion(
        0,
        0,
        &empty_root(),
        &[],
        &empty_root()
    ));
    assert!(!proof::verify_consistency(
        0,
        1,
        &empty_root(),
        &empty_root(),
        &[]
    ));
}

/// Memory hashes that count the reads of stored hashes.
#[derive(Default)]
struct Counted {
    inner: MemHashes,
    reads: usize,
}

impl proof::Hashes for Counted {
    fn hash_at(&mut self, level: u32, index: u64) -> Result<Hash, crate::store::StoreError> {
        self.reads += 1;
        self.inner.hash_at(level, index)
    }

    fn put(&mut self, level: u32, index: u64, hash: &Hash) -> Result<(), crate::store::StoreError> {
        self.inner.put(level, index, hash)
    }
}

/// Decision 272: a frontier kept across many batches gives the reference root at every size
/// and never reads a stored hash back; a frontier dropped (or of another size) reads what it
/// needs and still gives the same tree.
#[test]
fn appending_across_many_batches_with_a_kept_frontier_gives_the_reference_roots() {
    const N: u64 = 1000;
    let leaves: Vec<Hash> = (0..N).map(|i| leaf_hash(&i.to_be_bytes())).collect();
    let mut kept = Counted::default();
    let mut frontier = proof::Frontier::default();
    let mut fresh = Counted::default();
    let (mut size, mut width) = (0_u64, 1_usize);
    while size < N {
        let end = (size as usize + width).min(leaves.len());
        let batch = &leaves[size as usize..end];
        let grown = proof::append_with(&mut kept, &mut frontier, size, batch).unwrap();
        assert_eq!(proof::append(&mut fresh, size, batch).unwrap(), grown);
        assert_eq!(frontier.size(), grown);
        size = grown;
        let reads = kept.reads;
        assert_eq!(
            proof::root(&mut kept.inner, size).unwrap(),
            reference_root(&leaves[..size as usize]),
            "size {size}"
        );
        assert_eq!(reads, 0, "the kept frontier read nothing back");
        width = width % 13 + 1;
    }
    assert!(
        fresh.reads > 0,
        "a frontier per batch reads left siblings back"
    );
    for level in 0..10 {
        for index in 0..(N >> level) {
            assert_eq!(
                kept.inner.hash_at(level, index).unwrap(),
                fresh.inner.hash_at(level, index).unwrap()
            );
        }
    }
    // A frontier of another size is dropped: appending from the stored tree still agrees.
    let more: Vec<Hash> = (N..N + 5).map(|i| leaf_hash(&i.to_be_bytes())).collect();
    let mut stale = proof::Frontier::default();
    let grown = proof::append_with(&mut kept, &mut stale, N, &more).unwrap();
    let all: Vec<Hash> = leaves.iter().chain(&more).copied().collect();
    assert_eq!(
        proof::root(&mut kept.inner, grown).unwrap(),
        reference_root(&all)
    );
}
