//! What a handler gets besides its arguments ([`Ctx`]), and the write paths it uses: a signed
//! write spends the nonce, re-checks the key or the owner link and counts the daily action in
//! the same transaction as the area's own checks and appends.

use std::sync::Arc;

use kd_core::store::WriteTxn;

use crate::caller::{Caller, Proof, SignedRequest, paused, revoked};
use crate::directory::Directory;
use crate::error::{ErrorCode, ToolError};
use crate::pipeline::Kernel;
use crate::registry::Tool;

/// What a handler gets besides its arguments.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The kernel (store, clock, keys, the areas' state).
    pub kernel: Arc<Kernel>,
    /// Who is calling.
    pub caller: Caller,
    /// This request's id.
    pub request_id: String,
    /// The tool being called.
    pub tool: &'static Tool,
    /// The event an acknowledged signed write appended, for its receipt (set by
    /// [`Ctx::signed_write`]; the pipeline signs the receipt into the reply).
    pub written: Arc<std::sync::Mutex<Option<Written>>>,
}

/// The event a signed write appended: what its receipt (kd-log-batch-v1) names.
#[derive(Debug, Clone)]
pub struct Written {
    /// The event's seq.
    pub seq: i64,
    /// Its row hash.
    pub row_hash: String,
    /// Its time, Unix milliseconds.
    pub created_ms: i64,
    /// The writer batch it was committed in, once committed with the transparency log on.
    pub batch: kd_core::tlog::receipt::BatchSlot,
}

impl Ctx {
    /// The state of an area, of type `T`, as the server inserted it into the kernel.
    ///
    /// # Errors
    /// `internal` when the server did not insert one.
    pub fn area<T: std::any::Any + Send + Sync>(&self) -> Result<&T, ToolError> {
        self.kernel.areas.require()
    }

    /// Runs a signed agent's write: in ONE transaction, spends the nonce (`replay` if it was
    /// spent before), re-checks that the signing key is still the agent's current key and the
    /// agent is active, then runs `write`. A refusal from `write` rolls back everything,
    /// including the nonce.
    ///
    /// Generic over the area's error `E` (issue 31): `write` returns the handler's own error
    /// (`ForumError`, `IdentityError`, …) and so does this; the kernel's refusals and store
    /// failures come back as `E::from(ToolError)`, and a refusal is read through
    /// `Into<ToolError>` only for its code (whether the nonce is still spent).
    ///
    /// # Errors
    /// `replay`, `bad_signature` (the key changed meanwhile), `forbidden` (revoked meanwhile),
    /// whatever `write` refuses with, or `internal`.
    pub async fn signed_write<T, E, F>(&self, write: F) -> Result<T, E>
    where
        F: FnOnce(&mut WriteTxn<'_>, &SignedRequest) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<ToolError> + Into<ToolError> + Send + 'static,
    {
        let Caller::Agent(signed) = self.caller.clone() else {
            return Err(E::from(ToolError::internal(
                "signed_write called without a signed caller",
            )));
        };
        let tool = self.tool.name;
        // A signed read (get_history) is never an action and never waits for the quota.
        let counts = !self.kernel.counts_as_read(self.tool);
        let gate = Quota {
            directory: Arc::clone(&self.kernel.directory),
            exempt: self.tool.policy.quota_exempt,
        };
        let directory = Arc::clone(&self.kernel.directory);
        let write = noting_the_event(Arc::clone(&self.written), write);
        if let Proof::Connector { .. } = signed.proof {
            // A connected app: no nonce; the hosted agent is re-checked inside the
            // transaction, and every event of the write records auth_method oauth.
            return self
                .kernel
                .store
                .write(move |txn| {
                    check_hosted(txn, directory.as_ref(), &signed, counts)?;
                    txn.set_auth_method("oauth");
                    counted(txn, &gate, &signed, tool, counts, write)
                })
                .await
                .map_err(store_failure)?;
        }
        let Proof::Signature { public_key, nonce } = signed.proof.clone() else {
            // The owner's session: no nonce; the link is re-checked inside the transaction.
            return self
                .kernel
                .store
                .write(move |txn| {
                    check_owner(txn, directory.as_ref(), &signed)?;
                    counted(txn, &gate, &signed, tool, counts, write)
                })
                .await
                .map_err(store_failure)?;
        };
        let spent = (signed.agent_id.to_string(), nonce.clone());
        let result = self
            .kernel
            .store
            .write(move |txn| {
                spend_nonce(
                    txn,
                    directory.as_ref(),
                    &signed,
                    &public_key,
                    &nonce,
                    counts,
                )?;
                counted(txn, &gate, &signed, tool, counts, write)
            })
            .await
            .map_err(store_failure)?;
        let Err(refusal) = result else {
            return result;
        };
        // A verified request's nonce is spent even when the call is refused, so the same
        // signed request can never be replayed later when it might succeed. The nonce table
        // is working state, not the event log: the log does not grow. The refusal is read as
        // the kernel's error for its code and handed back unchanged in meaning.
        let refusal: ToolError = refusal.into();
        if !matches!(refusal.code, ErrorCode::Replay | ErrorCode::Internal) {
            let directory = Arc::clone(&self.kernel.directory);
            self.kernel
                .store
                .write(move |txn| -> Result<(), ToolError> {
                    directory.spend_nonce(txn, &spent.0, &spent.1)?;
                    Ok(())
                })
                .await
                .map_err(store_failure::<E>)?
                .map_err(E::from)?;
        }
        Err(E::from(refusal))
    }

    /// Runs an unsigned write in one transaction, generic over the area's error `E` like
    /// [`Ctx::signed_write`].
    ///
    /// # Errors
    /// Whatever `write` refuses with, or `internal`.
    pub async fn write<T, E, F>(&self, write: F) -> Result<T, E>
    where
        F: FnOnce(&mut WriteTxn<'_>) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<ToolError> + Send + 'static,
    {
        self.kernel
            .store
            .write(write)
            .await
            .map_err(store_failure)?
    }

    /// Runs a read on a pooled connection.
    ///
    /// # Errors
    /// Whatever `read` refuses with, or `internal`.
    pub async fn read<T, F>(&self, read: F) -> Result<T, ToolError>
    where
        F: FnOnce(&kd_core::db::Connection) -> Result<T, ToolError> + Send + 'static,
        T: Send + 'static,
    {
        self.kernel.store.read(read).await
    }
}

/// `write`, noting the write's own event (the first that is not a refusal record) in `slot`,
/// for the receipt.
fn noting_the_event<T, E, F>(
    slot: Arc<std::sync::Mutex<Option<Written>>>,
    write: F,
) -> impl FnOnce(&mut WriteTxn<'_>, &SignedRequest) -> Result<T, E> + Send + 'static
where
    F: FnOnce(&mut WriteTxn<'_>, &SignedRequest) -> Result<T, E> + Send + 'static,
    T: Send + 'static,
{
    move |txn: &mut WriteTxn<'_>, signed: &SignedRequest| {
        let before = txn.appended().len();
        let result = write(txn, signed)?;
        let appended = &txn.appended()[before..];
        let event = appended
            .iter()
            .find(|event| !event.kind.ends_with(".refused"))
            .or_else(|| appended.last());
        if let (Some(event), Ok(mut slot)) = (event, slot.lock()) {
            *slot = Some(Written {
                seq: event.seq,
                row_hash: event.row_hash.clone(),
                created_ms: event.created_ms,
                batch: txn.batch_slot(),
            });
        }
        Ok(result)
    }
}

/// A store failure (the writer gone, a task that panicked) as the area's error: `internal`,
/// its cause kept as the `source()`.
fn store_failure<E: From<ToolError>>(error: kd_core::store::StoreError) -> E {
    E::from(ToolError::from(error))
}

/// The daily quota's side of a signed write: the areas' counter, and whether the tool is
/// exempt from it ([`crate::policy::ToolPolicy::quota_exempt`]).
struct Quota {
    directory: Arc<dyn Directory>,
    exempt: bool,
}

/// Runs a signed write as one action (spec "Connector limits"): refused up front when an
/// owner-linked agent has none left (the grant is read in this transaction, so a link approved
/// a moment ago counts), recorded when the write appended an event that is not a refusal
/// record (`connect.refused` is logged for a refused call, which never counts). `counts` is
/// false for a signed read.
fn counted<T, E, F>(
    txn: &mut WriteTxn<'_>,
    quota: &Quota,
    signed: &SignedRequest,
    tool: &str,
    counts: bool,
    write: F,
) -> Result<T, E>
where
    F: FnOnce(&mut WriteTxn<'_>, &SignedRequest) -> Result<T, E>,
    E: From<ToolError>,
{
    if !counts {
        return write(txn, signed);
    }
    let agent_id = signed.agent_id.to_string();
    if !quota.exempt {
        quota
            .directory
            .quota_check(txn.conn(), &agent_id, txn.now_ms())?;
    }
    let before = txn.appended().len();
    let result = write(txn, signed)?;
    let action = txn.appended()[before..]
        .iter()
        .find(|event| !event.kind.ends_with(".refused"))
        .map(|event| event.seq);
    if let Some(seq) = action {
        quota
            .directory
            .quota_record(txn.conn(), &agent_id, tool, txn.now_ms(), seq)?;
    }
    Ok(result)
}

/// The owner path, inside the write transaction: the session's person still owns the agent
/// (a release or a second link in flight is caught here).
fn check_owner(
    txn: &mut WriteTxn<'_>,
    directory: &dyn Directory,
    signed: &SignedRequest,
) -> Result<(), ToolError> {
    let Proof::OwnerSession { person_id } = &signed.proof else {
        return Ok(());
    };
    let Some(record) = directory.agent(txn.conn(), &signed.agent_id, txn.now_ms())? else {
        return Err(ToolError::not_found(
            "agent_id",
            "No agent has this agent_id.",
        ));
    };
    if record.owner_id.as_deref() != Some(person_id.as_str()) {
        return Err(ToolError::new(
            ErrorCode::Forbidden,
            "You are signed in, but you do not own this agent.",
        ));
    }
    if !record.active {
        return Err(revoked());
    }
    Ok(())
}

/// A connected app's write, inside the write transaction: its hosted agent is still active
/// and, for a write (`writes`), not paused.
fn check_hosted(
    txn: &mut WriteTxn<'_>,
    directory: &dyn Directory,
    signed: &SignedRequest,
    writes: bool,
) -> Result<(), ToolError> {
    match directory.agent(txn.conn(), &signed.agent_id, txn.now_ms())? {
        Some(record) if !record.active => Err(revoked()),
        Some(record) if record.paused && writes => Err(paused()),
        Some(_) => Ok(()),
        None => Err(ToolError::internal(
            "a connection's hosted agent is missing",
        )),
    }
}

/// `writes`: false for a signed read, which a pause does not stop.
fn spend_nonce(
    txn: &mut WriteTxn<'_>,
    directory: &dyn Directory,
    signed: &SignedRequest,
    public_key: &str,
    nonce: &str,
    writes: bool,
) -> Result<(), ToolError> {
    match directory.agent(txn.conn(), &signed.agent_id, txn.now_ms())? {
        Some(record) if record.active && record.paused && writes => return Err(paused()),
        Some(record) if record.public_key == public_key && record.active => {}
        Some(record) if !record.active => return Err(revoked()),
        _ => {
            return Err(ToolError::new(
                ErrorCode::BadSignature,
                "The agent's key changed while this request was in flight; sign again with the current key.",
            ));
        }
    }
    // A refusal later in the job rolls this back too.
    if !directory.spend_nonce(txn, &signed.agent_id.to_string(), nonce)? {
        return Err(ToolError::new(
            ErrorCode::Replay,
            "This nonce was already used by this agent. Use a fresh x-kd-nonce for every request.",
        ));
    }
    Ok(())
}
