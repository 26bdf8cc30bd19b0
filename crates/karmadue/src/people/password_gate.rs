//! A bound on password hashing (docs/decisions.md 140). argon2id with the default parameters
//! takes about 19 MiB and tens of milliseconds of one core per hash, so a flood of sign-ups
//! or sign-ins run side by side on the blocking pool (up to 512 threads) would exhaust memory.
//! Every hash and every verification takes a permit of [`PasswordGate`] first: at most
//! [`PASSWORD_HASHES_AT_ONCE`] run at a time; a request that waits longer than the gate's
//! `wait` is refused as busy (503 with `Retry-After`) before any work is done. The permit
//! goes with the work onto the blocking thread, so a client that hangs up mid-hash does not
//! free it before the hash is done.

use std::time::Duration;

use super::AppError;

/// How many argon2id hashes (or verifications) run at once in one hub process.
pub const PASSWORD_HASHES_AT_ONCE: usize = 2;
/// How long a sign-up or sign-in waits for a permit before it is refused as busy.
pub const PASSWORD_WAIT: Duration = Duration::from_secs(10);
/// The `Retry-After` of a busy refusal, seconds.
pub const BUSY_RETRY_AFTER_S: i64 = 5;

/// The semaphore in front of password hashing.
#[derive(Debug)]
pub struct PasswordGate {
    permits: std::sync::Arc<tokio::sync::Semaphore>,
    size: u32,
    wait: Duration,
}

impl Default for PasswordGate {
    fn default() -> Self {
        Self::new(PASSWORD_HASHES_AT_ONCE, PASSWORD_WAIT)
    }
}

impl PasswordGate {
    /// A gate of `permits` hashes at once, waiting at most `wait` for one.
    pub fn new(permits: usize, wait: Duration) -> Self {
        Self {
            permits: std::sync::Arc::new(tokio::sync::Semaphore::new(permits)),
            size: u32::try_from(permits).unwrap_or(u32::MAX),
            wait,
        }
    }

    /// Runs `work` (a hash or a verification) on the blocking pool once a permit is free.
    ///
    /// # Errors
    /// [`AppError::Busy`] when no permit came within the gate's wait (nothing ran);
    /// [`AppError::Internal`] when the work panicked.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, AppError> {
        let permits = std::sync::Arc::clone(&self.permits);
        let permit = tokio::time::timeout(self.wait, permits.acquire_owned())
            .await
            .map_err(|_| AppError::Busy {
                retry_after_s: BUSY_RETRY_AFTER_S,
            })?
            .map_err(|_| AppError::Internal)?;
        // The permit lives as long as the work, even if this future is dropped meanwhile.
        tokio::task::spawn_blocking(move || {
            let result = work();
            drop(permit);
            result
        })
        .await
        .map_err(|_| AppError::Internal)
    }

    /// Takes every permit for as long as the guard lives (tests: a hub whose hashing is busy).
    /// `None` only if the semaphore was closed, which this gate never does.
    pub async fn hold_all(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.permits.acquire_many(self.size).await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_waits_for_a_permit_and_is_refused_as_busy_after_the_wait() {
        let gate = PasswordGate::new(1, Duration::from_millis(50));
        assert_eq!(gate.run(|| 1).await, Ok(1));
        let held = gate.permits.acquire().await.unwrap();
        let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&ran);
        let refused = gate
            .run(move || flag.store(true, std::sync::atomic::Ordering::SeqCst))
            .await;
        assert_eq!(
            refused,
            Err(AppError::Busy {
                retry_after_s: BUSY_RETRY_AFTER_S
            })
        );
        assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
        drop(held);
        assert_eq!(gate.run(|| 2).await, Ok(2));
    }

    #[tokio::test]
    async fn a_caller_that_goes_away_mid_hash_keeps_the_permit_taken_until_the_hash_ends() {
        let gate = std::sync::Arc::new(PasswordGate::new(1, Duration::from_secs(5)));
        let (finish, finished) = std::sync::mpsc::channel::<()>();
        let running = std::sync::Arc::clone(&gate);
        let call = tokio::spawn(async move {
            running
                .run(move || {
                    let _ = finished.recv();
                })
                .await
        });
        while gate.permits.available_permits() == 1 {
            tokio::task::yield_now().await;
        }
        // The client hangs up: the request's future is dropped while the hash runs.
        call.abort();
        let _ = call.await;
        assert_eq!(
            gate.permits.available_permits(),
            0,
            "the hash still runs, so its permit is still taken"
        );
        finish.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), async {
            while gate.permits.available_permits() == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .unwrap();
    }
}
