//! Delivering the outbox through the configured SMTP relay (DECISIONS 7). Writes queue mail in
//! their own transaction ([`kd_core::outbox::queue`]); this sender, started by
//! [`crate::serve`] only when `--smtp-url` is set, sends what is waiting and marks it sent.
//! A mail that fails stays in the outbox and is retried on the next round. Without a relay the
//! operator reads the outbox (`karmadue outbox`).

use std::sync::Arc;
use std::time::Duration;

use kd_core::outbox::{self, Mail};
use lettre::message::header::ContentType;
use lettre::{Message, SmtpTransport, Transport};

use kd_kernel::Kernel;

/// How often the sender looks at the outbox when nothing wakes it (real time: this is I/O,
/// not a rule of the hub).
pub const RETRY_EVERY: Duration = Duration::from_secs(30);

/// Why one mail was not sent. Messages are for the log; they never hold the relay's URL.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The relay URL or an address could not be used.
    #[error("mail setup: {0}")]
    Setup(String),
    /// The relay refused or could not be reached.
    #[error("smtp: {0}")]
    Smtp(String),
}

fn message(from: &str, mail: &Mail) -> Result<Message, SendError> {
    Message::builder()
        .from(
            from.parse()
                .map_err(|error| SendError::Setup(format!("from address: {error}")))?,
        )
        .to(mail
            .to_email
            .parse()
            .map_err(|error| SendError::Setup(format!("to address: {error}")))?)
        .subject(mail.subject.clone())
        .header(ContentType::TEXT_PLAIN)
        .body(mail.body.clone())
        .map_err(|error| SendError::Setup(error.to_string()))
}

fn send_blocking(url: &str, from: &str, mail: &Mail) -> Result<(), SendError> {
    let transport = SmtpTransport::from_url(url)
        .map_err(|_| SendError::Setup("the SMTP URL is not usable".into()))?
        .timeout(Some(Duration::from_secs(20)))
        .build();
    transport
        .send(&message(from, mail)?)
        .map_err(|error| SendError::Smtp(error.to_string()))?;
    Ok(())
}

/// Sends every waiting mail once, oldest first; returns how many were sent. Does nothing
/// without a relay.
///
/// # Errors
/// `internal` when the outbox cannot be read or updated; a failed send is logged (with the
/// mail id only) and left for the next round.
pub async fn deliver_waiting(hub: &Kernel) -> Result<usize, kd_kernel::error::ToolError> {
    let Some(url) = hub.config.smtp_url.clone() else {
        return Ok(0);
    };
    let waiting = hub.store.read(|conn| outbox::list(conn, true)).await?;
    let mut sent = 0;
    for mail in waiting {
        let (url, from, to_send) = (url.clone(), hub.config.mail_from.clone(), mail.clone());
        let outcome =
            tokio::task::spawn_blocking(move || send_blocking(url.expose(), &from, &to_send))
                .await
                .map_err(kd_kernel::error::ToolError::internal)?;
        match outcome {
            Ok(()) => {
                let mail_id = mail.mail_id.clone();
                hub.store
                    .write(move |txn| -> Result<(), kd_core::store::StoreError> {
                        outbox::mark_sent(txn.conn(), &mail_id, txn.now_ms())
                    })
                    .await??;
                sent += 1;
            }
            Err(error) => {
                tracing::warn!(mail_id = %mail.mail_id, %error, "mail not sent; kept in the outbox")
            }
        }
    }
    Ok(sent)
}

/// Wakes the mail sender after a write queued mail (the kernel holds one per hub).
#[derive(Debug, Default, Clone)]
pub struct MailWakeup(Arc<tokio::sync::Notify>);

impl MailWakeup {
    /// Wakes the sender of `kernel`'s hub, if it runs one.
    pub fn notify(kernel: &Kernel) {
        if let Some(wakeup) = kernel.areas.get::<MailWakeup>() {
            wakeup.0.notify_one();
        }
    }
}

/// The sender loop: a round when woken (people's `MailWakeup`) or every [`RETRY_EVERY`].
pub async fn run_sender(hub: Arc<Kernel>) {
    let wakeup = hub.areas.get::<MailWakeup>().cloned().unwrap_or_default();
    loop {
        if let Err(error) = deliver_waiting(&hub).await {
            tracing::error!(cause = ?error.cause, "mail delivery round failed");
        }
        tokio::select! {
            () = wakeup.0.notified() => {}
            () = tokio::time::sleep(RETRY_EVERY) => {}
        }
    }
}
