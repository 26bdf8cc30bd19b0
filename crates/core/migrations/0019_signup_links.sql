-- Sign-up confirmation links (issue 16, DECISIONS 260): a sign-up waits here until the person
-- opens the link mailed to the address; only then is the account made (`person.signed_up`).
-- Working state, never logged: only the SHA-256 of the link's token is kept.
CREATE TABLE signup_links (
    token_sha256  TEXT    PRIMARY KEY,
    email         TEXT    NOT NULL,          -- trimmed, lowercased
    display_name  TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,          -- argon2id PHC string
    created_ms    INTEGER NOT NULL,
    expires_ms    INTEGER NOT NULL
) STRICT;
CREATE INDEX signup_links_email ON signup_links (email);
