//! The KarmaDue visa (permissions document, "What your passport unlocks": "A valid KarmaDue
//! visa (x-kd-visa) stands in for the stamps on the tools its scopes name"; docs/decisions.md
//! 402–406). A visa is a JSON Web Token (RFC 7519) in the JWS compact serialization
//! (RFC 7515), signed with EdDSA (Ed25519, RFC 8037) by the hub's `kd-passport-1`, so any
//! destination checks it with the hub's JWKS and an ordinary JOSE library:
//!
//! ```text
//! <base64url(header)>.<base64url(claims)>.<base64url(Ed25519 signature over the first two parts)>
//! header: {"alg":"EdDSA","kid":"kd-passport-1","typ":"kd-visa+jwt"}
//! claims: {"iss","sub","handle","credential_id","scope","tier","iat","nbf","exp","jti"[,"aud"]}
//! ```
//!
//! `iss` is the hub's public URL without a trailing slash, `sub` the agent id, `scope` the
//! scopes it names separated by one space, `iat`/`nbf`/`exp` Unix seconds, `jti` the visa id
//! (`kdv_` and 24 hex characters). base64url is without padding. This module only builds and
//! splits the text; signing and the checks (key, issuer, time, agent, scope) are the hub's.

use serde::{Deserialize, Serialize};

use crate::b64;

/// The request header that carries a visa.
pub const HEADER: &str = "x-kd-visa";
/// The JOSE `typ` of a visa.
pub const TYP: &str = "kd-visa+jwt";
/// The JOSE `alg`: Ed25519 (RFC 8037).
pub const ALG: &str = "EdDSA";
/// The longest visa text taken, in bytes.
pub const MAX_LEN: usize = 4096;

/// The protected header of a visa.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Always [`ALG`].
    pub alg: String,
    /// The signing key's id in the hub's JWKS (`kd-passport-1`).
    pub kid: String,
    /// Always [`TYP`].
    pub typ: String,
}

/// The claims of a visa.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claims {
    /// The issuing hub: its public URL, no trailing slash.
    pub iss: String,
    /// The agent id the visa names.
    pub sub: String,
    /// The agent's `kd_` handle.
    pub handle: String,
    /// The agent's passport id (`kdp_…`) when the visa was issued.
    pub credential_id: String,
    /// The scopes it names, separated by one space (`kd.listings.write kd.outcomes.write`).
    pub scope: String,
    /// The agent's tier when issued (`owner_linked_admitted`).
    pub tier: String,
    /// Issued at, Unix seconds.
    pub iat: i64,
    /// Not before, Unix seconds (the issue time).
    pub nbf: i64,
    /// Expires at, Unix seconds.
    pub exp: i64,
    /// The visa id, `kdv_` and 24 hex characters.
    pub jti: String,
    /// The destination it was asked for, when one was named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aud: Option<String>,
}

impl Claims {
    /// Whether the visa names `scope`.
    pub fn names(&self, scope: &str) -> bool {
        self.scope.split(' ').any(|named| named == scope)
    }
}

/// A visa split into its parts (not yet checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The protected header.
    pub header: Header,
    /// The claims.
    pub claims: Claims,
    /// The text the signature covers: the first two parts and the dot between them.
    pub signing_input: String,
    /// The third part: the signature, base64url.
    pub signature: String,
}

/// Why a text is not a visa.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VisaError {
    /// Over [`MAX_LEN`] bytes.
    #[error("the visa is longer than {MAX_LEN} bytes")]
    TooLong,
    /// Not three base64url parts separated by dots.
    #[error("a visa is three base64url parts separated by dots (JWS compact serialization)")]
    Shape,
    /// A part does not decode, or its JSON does not fit the visa's header or claims.
    #[error("the visa's {0} is not a visa's")]
    Part(&'static str),
}

/// The signing input of a visa with these parts: `base64url(header).base64url(claims)`.
pub fn signing_input(header: &Header, claims: &Claims) -> String {
    format!("{}.{}", part(header), part(claims))
}

/// Splits a compact visa into its header, claims, signing input and signature.
///
/// # Errors
/// [`VisaError`] when the text is too long, not three parts, or a part does not decode.
pub fn parse(compact: &str) -> Result<Parsed, VisaError> {
    if compact.len() > MAX_LEN {
        return Err(VisaError::TooLong);
    }
    let mut parts = compact.split('.');
    let (Some(header), Some(claims), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(VisaError::Shape);
    };
    let b64url = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
    };
    if ![header, claims, signature].into_iter().all(b64url) {
        return Err(VisaError::Shape);
    }
    let decode =
        |part: &str, name: &'static str| b64::decode_url(part).map_err(|_| VisaError::Part(name));
    let header_json: Header = serde_json::from_slice(&decode(header, "header")?)
        .map_err(|_| VisaError::Part("header"))?;
    let claims_json: Claims = serde_json::from_slice(&decode(claims, "claims")?)
        .map_err(|_| VisaError::Part("claims"))?;
    Ok(Parsed {
        header: header_json,
        claims: claims_json,
        signing_input: format!("{header}.{claims}"),
        signature: signature.to_owned(),
    })
}

/// One part: compact JSON (no spaces, fields in declaration order) in base64url. A header or
/// claims always serialise (plain strings and numbers).
fn part<T: Serialize>(value: &T) -> String {
    b64::encode_url(serde_json::to_string(value).unwrap_or_default().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> Claims {
        Claims {
            iss: "https://hub.example".into(),
            sub: "7d3c2a9e-0000-4000-8000-000000000001".into(),
            handle: "kd_0123456789ab".into(),
            credential_id: "kdp_0123456789abcdef01234567".into(),
            scope: "kd.listings.write kd.outcomes.write".into(),
            tier: "owner_linked_admitted".into(),
            iat: 1_800_000_000,
            nbf: 1_800_000_000,
            exp: 1_800_003_600,
            jti: "kdv_0123456789abcdef01234567".into(),
            aud: None,
        }
    }

    fn header() -> Header {
        Header {
            alg: ALG.into(),
            kid: "kd-passport-1".into(),
            typ: TYP.into(),
        }
    }

    #[test]
    fn the_header_part_is_the_fixed_json_in_base64url() {
        let input = signing_input(&header(), &claims());
        let (head, _) = input.split_once('.').unwrap();
        assert_eq!(
            b64::decode_url(head).unwrap(),
            br#"{"alg":"EdDSA","kid":"kd-passport-1","typ":"kd-visa+jwt"}"#
        );
        assert!(!input.contains('='));
    }

    #[test]
    fn a_built_visa_parses_back_and_names_its_scopes() {
        let input = signing_input(&header(), &claims());
        let parsed = parse(&format!("{input}.c2ln")).unwrap();
        assert_eq!(parsed.claims, claims());
        assert_eq!(parsed.header, header());
        assert_eq!(parsed.signing_input, input);
        assert!(parsed.claims.names("kd.outcomes.write"));
        assert!(!parsed.claims.names("kd.outcomes"));
    }

    #[test]
    fn malformed_visas_are_refused_for_what_they_are() {
        let input = signing_input(&header(), &claims());
        assert_eq!(parse("a.b"), Err(VisaError::Shape));
        assert_eq!(parse(&format!("{input}.c2ln.x")), Err(VisaError::Shape));
        assert_eq!(parse(&format!("{input}.c2l=")), Err(VisaError::Shape));
        assert_eq!(parse(&format!("{input}.")), Err(VisaError::Shape));
        assert_eq!(parse("e30.e30.c2ln"), Err(VisaError::Part("header")));
        let (head, _) = input.split_once('.').unwrap();
        assert_eq!(
            parse(&format!("{head}.e30.c2ln")),
            Err(VisaError::Part("claims"))
        );
        assert_eq!(parse(&"a".repeat(MAX_LEN + 1)), Err(VisaError::TooLong));
    }
}
