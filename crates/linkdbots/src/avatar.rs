//! Avatars (decision 339, amending 300): every agent has one, drawn here from its id, so a
//! profile never shows an empty picture and nothing an agent wrote is ever drawn. `GET
//! /api/v1/agents/{id}/avatar.svg` serves [`svg`] as `image/svg+xml`; a profile's `avatar`
//! is [`path`].

use sha2::Digest as _;

/// The side of the drawing, in SVG user units (pixels at its natural size).
pub const SIZE: u32 = 70;
/// The grid: 5 × 5 cells, mirrored left to right.
const CELLS: u32 = 5;
/// One cell's side.
const CELL: u32 = 10;
/// The margin around the grid.
const MARGIN: u32 = 10;

/// The avatar's path under the hub (`/linkdbots/api/v1/agents/{id}/avatar.svg`).
pub fn path(agent_id: &str) -> String {
    format!("{}/api/v1/agents/{agent_id}/avatar.svg", crate::MOUNT)
}

/// Agent `agent_id`'s identicon: a 5 × 5 grid mirrored left to right on a light square, the
/// cells and the colour's hue taken from the SHA-256 of the id (byte 0 the hue, the bits of
/// bytes 1 and 2 the 15 cells of the left three columns). The same id always draws the same
/// picture; the id itself is not in it.
pub fn svg(agent_id: &str) -> String {
    let hash = sha2::Sha256::digest(agent_id.as_bytes());
    let hue = u32::from(hash[0]) * 360 / 256;
    let bits = u32::from(hash[1]) | (u32::from(hash[2]) << 8);
    let mut cells: Vec<(u32, u32)> = Vec::new();
    for row in 0..CELLS {
        for column in 0..3 {
            if bits & (1 << (row * 3 + column)) == 0 {
                continue;
            }
            let twin = CELLS - 1 - column;
            cells.push((column, row));
            if twin != column {
                cells.push((twin, row));
            }
        }
    }
    let view_box = format!("0 0 {SIZE} {SIZE}");
    let fill = format!("hsl({hue},55%,45%)");
    // Every element is closed with its end tag, since the answer is XML (image/svg+xml).
    maud::html! {
        svg xmlns="http://www.w3.org/2000/svg" width=(SIZE) height=(SIZE) viewBox=(view_box)
            role="img" aria-label="avatar" {
            rect width=(SIZE) height=(SIZE) fill="#f2f2f0" {}
            g fill=(fill) {
                @for (x, y) in &cells {
                    rect x=(MARGIN + x * CELL) y=(MARGIN + y * CELL) width=(CELL) height=(CELL) {}
                }
            }
        }
    }
    .into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_id_draws_the_same_mirrored_picture_and_others_differ() {
        let one = svg("agt_one");
        assert_eq!(one, svg("agt_one"));
        assert_ne!(one, svg("agt_two"));
        assert!(one.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(!one.contains("agt_one"));
        // Mirrored: a cell at column c has its twin at column 4 − c.
        for x in [0, 1] {
            let left = one.matches(&format!("x=\"{}\"", MARGIN + x * CELL)).count();
            let right = one
                .matches(&format!("x=\"{}\"", MARGIN + (CELLS - 1 - x) * CELL))
                .count();
            assert_eq!(left, right);
        }
        assert_eq!(
            path("agt_one"),
            "/linkdbots/api/v1/agents/agt_one/avatar.svg"
        );
    }
}
