//! C2SP `tlog-tiles` paths: `tile/<L>/<N>[.p/<W>]` (hashes) and `tile/entries/<N>[.p/<W>]`
//! (leaf data), tiles of height 8 (256 hashes or entries wide).
//!
//! A tile at level `L`, index `N` holds the stored hashes at tree level `8 * L`, indices
//! `N * 256 .. N * 256 + W`, concatenated (32 bytes each). An entry bundle holds the leaf data
//! of entries `N * 256 ..`, each as a big-endian 2-byte length and the data: here the 32 raw
//! bytes of the event's `row_hash`. `N` is written as groups of three digits, every group but
//! the last prefixed with `x` (`1234067` → `x001/x234/067`).

/// Hashes (or entries) in a full tile.
pub const WIDTH: u64 = 256;

/// Tree levels a tile spans.
pub const HEIGHT: u32 = 8;

/// A parsed tile path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tile {
    /// The tile level; `None` for an entry bundle.
    pub level: Option<u32>,
    /// The tile index.
    pub index: u64,
    /// How many hashes or entries it holds (256 for a full tile).
    pub width: u64,
}

impl Tile {
    /// The tile's path under the tiles prefix, e.g. `tile/0/x001/234` or
    /// `tile/entries/000.p/7`.
    pub fn path(&self) -> String {
        let level = self
            .level
            .map_or_else(|| "entries".to_owned(), |level| level.to_string());
        let mut path = format!("tile/{level}/{}", encode_index(self.index));
        if self.width < WIDTH {
            path.push_str(&format!(".p/{}", self.width));
        }
        path
    }

    /// Whether the tile is full (immutable: it never changes once served).
    pub fn is_full(&self) -> bool {
        self.width == WIDTH
    }
}

/// `n` as tlog-tiles path elements.
pub fn encode_index(n: u64) -> String {
    let mut groups = vec![format!("{:03}", n % 1000)];
    let mut rest = n / 1000;
    while rest > 0 {
        groups.push(format!("x{:03}", rest % 1000));
        rest /= 1000;
    }
    groups.reverse();
    groups.join("/")
}

/// Parses what follows `tile/`: `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]`.
///
/// # Errors
/// What is malformed.
pub fn parse(path: &str) -> Result<Tile, String> {
    let bad = || format!("{path:?} is not a tile path (<L>/<N>[.p/<W>] or entries/<N>[.p/<W>])");
    let (level, rest) = path.split_once('/').ok_or_else(bad)?;
    let level = match level {
        "entries" => None,
        digits if digits.len() <= 2 && digits.bytes().all(|b| b.is_ascii_digit()) => {
            Some(digits.parse::<u32>().map_err(|_| bad())?)
        }
        _ => return Err(bad()),
    };
    let (index_path, width) = match rest.split_once(".p/") {
        Some((index_path, width)) => {
            if width.starts_with('0') {
                return Err(bad());
            }
            let width = width
                .parse::<u64>()
                .ok()
                .filter(|width| (1..WIDTH).contains(width))
                .ok_or_else(bad)?;
            (index_path, width)
        }
        None => (rest, WIDTH),
    };
    let groups: Vec<&str> = index_path.split('/').collect();
    let mut index: u64 = 0;
    for (at, group) in groups.iter().enumerate() {
        let digits = if at + 1 < groups.len() {
            group.strip_prefix('x').ok_or_else(bad)?
        } else {
            group
        };
        if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let value: u64 = digits.parse().map_err(|_| bad())?;
        index = index
            .checked_mul(1000)
            .and_then(|index| index.checked_add(value))
            .ok_or_else(bad)?;
    }
    Ok(Tile {
        level,
        index,
        width,
    })
}

/// An entry bundle's bytes from its entries' data.
pub fn entry_bundle(entries: &[Vec<u8>]) -> Vec<u8> {
    let mut bundle = Vec::with_capacity(entries.len() * 34);
    for entry in entries {
        let length = u16::try_from(entry.len()).unwrap_or(u16::MAX);
        bundle.extend_from_slice(&length.to_be_bytes());
        bundle.extend_from_slice(entry);
    }
    bundle
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_paths_round_trip_as_the_spec_writes_them() {
        assert_eq!(encode_index(0), "000");
        assert_eq!(encode_index(1_234_067), "x001/x234/067");
        let tile = parse("0/x001/x234/067.p/8").unwrap();
        assert_eq!(
            tile,
            Tile {
                level: Some(0),
                index: 1_234_067,
                width: 8
            }
        );
        assert_eq!(tile.path(), "tile/0/x001/x234/067.p/8");
        assert_eq!(parse("entries/001").unwrap().level, None);
        assert!(parse("entries/001").unwrap().is_full());
        for bad in [
            "0/1",
            "0/x001",
            "0/001.p/256",
            "0/001.p/0",
            "0/001.p/08",
            "a/001",
            "0/1234",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(entry_bundle(&[vec![0xab]]), vec![0, 1, 0xab]);
    }
}
