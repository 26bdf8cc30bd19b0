//! The operator's extra certificate authorities for outbound https (`--outbound-ca-file`;
//! docs/decisions.md 420): a company network's private CA, trusted next to the public roots
//! (Mozilla's, which ureq compiles in), never instead of them.
//!
//! ureq takes one root set per agent, and the public roots come only as trust anchors (not
//! certificates it could add to a set of its own), so a request is made with the public roots
//! first and, only when the server's certificate is refused and the operator named CAs, once
//! more with those CAs (docs/decisions.md 421). A refused certificate fails the handshake
//! before any request byte is sent, so the second try sends the request once.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::CertificateDer;

use super::OutboundError;

/// The DER certificates of the operator's extra CAs (empty: the public roots only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedCas(Arc<[Vec<u8>]>);

impl TrustedCas {
    /// Whether no extra CA was named.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many CAs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The CAs as ureq's root set.
    pub(super) fn root_certs(&self) -> ureq::tls::RootCerts {
        self.0
            .iter()
            .map(|der| ureq::tls::Certificate::from_der(der).to_owned())
            .collect::<Vec<_>>()
            .into()
    }

    /// Reads a PEM file of one or more CA certificates (other PEM sections, such as a key,
    /// are skipped).
    ///
    /// # Errors
    /// [`OutboundError::CaFile`]: the file cannot be read, is not PEM, holds no certificate,
    /// or holds a certificate that cannot be a trust anchor.
    pub fn from_pem_file(path: &Path) -> Result<Self, OutboundError> {
        let refused = |reason: String| OutboundError::CaFile {
            path: path.display().to_string(),
            reason,
        };
        let bytes =
            std::fs::read(path).map_err(|error| refused(format!("cannot read it ({error})")))?;
        let mut certificates = Vec::new();
        for item in ureq::tls::parse_pem(&bytes) {
            match item {
                Ok(ureq::tls::PemItem::Certificate(certificate)) => {
                    certificates.push(certificate.der().to_vec());
                }
                Ok(_) => {}
                Err(_) => return Err(refused("it is not readable PEM".into())),
            }
        }
        if certificates.is_empty() {
            return Err(refused(
                "it holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
            ));
        }
        for (index, der) in certificates.iter().enumerate() {
            let mut store = rustls::RootCertStore::empty();
            if store.add(CertificateDer::from(der.as_slice())).is_err() {
                return Err(refused(format!(
                    "certificate {} of {} is not a usable X.509 certificate",
                    index + 1,
                    certificates.len()
                )));
            }
        }
        Ok(Self(certificates.into()))
    }
}

/// Whether ureq's error is the server's certificate refused (unknown issuer, expired, not
/// for this name…): rustls reports it through ureq either as itself or inside an I/O error.
pub(super) fn is_untrusted(error: &ureq::Error) -> bool {
    let certificate = |error: &rustls::Error| matches!(error, rustls::Error::InvalidCertificate(_));
    match error {
        ureq::Error::Rustls(inner) => certificate(inner),
        ureq::Error::Io(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            .is_some_and(certificate),
        _ => false,
    }
}
