//! This hub's metrics (DESIGN rule 10), served as Prometheus text at `/metrics`
//! (`http::observe`).
//!
//! Each hub has its own registry: a `metrics-exporter-prometheus` recorder held in
//! [`HubMetrics`], never installed as the process's global recorder, so that hubs in one process
//! (the tests start many) count apart. Instruments are registered on it directly; the store's
//! writer gets its handles as [`StoreMetrics`]. Labels take values from closed sets only (tool
//! names, error codes, route templates, status codes): no agent, person, address or request id.

use std::time::Duration;

use kd_core::store::StoreMetrics;
use metrics::{Counter, Histogram, Key, KeyName, Label, Metadata, Recorder, SharedString};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

/// Tool calls, by `tool`, `transport` (`mcp` | `rest`) and `code` (`ok` or the error code).
pub const TOOL_CALLS: &str = "karmadue_tool_calls_total";
/// Seconds a tool call took in [`crate::Kernel::call`], by `tool`.
pub const TOOL_CALL_DURATION: &str = "karmadue_tool_call_duration_seconds";
/// HTTP requests answered, by `route` (the route template, `unmatched` for none) and `status`.
pub const HTTP_REQUESTS: &str = "karmadue_http_requests_total";
/// Seconds until the response head, by `route`.
pub const HTTP_DURATION: &str = "karmadue_http_request_duration_seconds";
/// Calls refused as `rate_limited`, by `bucket` (`address` | `tier` | `tool` | `quota`).
pub const RATE_LIMITED: &str = "karmadue_rate_limited_total";
/// Write batches the store's writer committed.
pub const STORE_BATCHES: &str = "karmadue_store_batches_committed_total";
/// Write jobs committed (refused jobs roll back and are not counted).
pub const STORE_JOBS: &str = "karmadue_store_jobs_committed_total";
/// Jobs per committed batch.
pub const STORE_BATCH_SIZE: &str = "karmadue_store_batch_size";
/// Seconds a batch's `COMMIT` took.
pub const STORE_COMMIT_DURATION: &str = "karmadue_store_commit_duration_seconds";
/// The event log's head seq (its length: seqs run 1..=n), read when `/metrics` is served.
pub const EVENT_LOG_HEAD: &str = "karmadue_event_log_head_seq";
/// When this hub started, Unix seconds (its clock).
pub const START_TIME: &str = "karmadue_process_start_time_seconds";
/// Always 1, labelled with the `version`.
pub const BUILD_INFO: &str = "karmadue_build_info";

/// Connections closed on accept because the connection cap was reached.
pub const CONNECTIONS_REFUSED: &str = "karmadue_connections_refused_total";
/// Connections closed on accept because their address held its share of the cap.
pub const CONNECTIONS_REFUSED_PER_ADDRESS: &str = "karmadue_connections_refused_per_address_total";
/// Connections being served now.
pub const CONNECTIONS_OPEN: &str = "karmadue_connections_open";

/// The `bucket` values of [`RATE_LIMITED`].
pub const RATE_LIMIT_BUCKETS: [&str; 4] = ["address", "tier", "tool", "quota"];

const SECONDS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
const COMMIT_SECONDS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
];
const BATCH_SIZES: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];

/// How often [`HubMetrics::run_upkeep`] should run (it drains histogram samples between
/// scrapes, so that memory stays flat when nobody scrapes).
pub const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// One hub's registry and the handles it hands out.
pub struct HubMetrics {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    store: StoreMetrics,
}

impl std::fmt::Debug for HubMetrics {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("HubMetrics").finish_non_exhaustive()
    }
}

/// Gives every metric its help text.
fn describe(recorder: &PrometheusRecorder) {
    let text = |name: &'static str, text: &'static str| {
        (KeyName::from_const_str(name), SharedString::const_str(text))
    };
    for (name, text) in [
        text(
            TOOL_CALLS,
            "Tool calls, by tool, transport and outcome code.",
        ),
        text(
            HTTP_REQUESTS,
            "HTTP requests answered, by route template and status.",
        ),
        text(
            RATE_LIMITED,
            "Calls refused as rate_limited, by the bucket that was full.",
        ),
        text(STORE_BATCHES, "Write batches the store's writer committed."),
        text(
            CONNECTIONS_REFUSED,
            "Connections closed on accept: the connection cap, or the address's share of it, was reached.",
        ),
        text(
            CONNECTIONS_REFUSED_PER_ADDRESS,
            "Connections closed on accept because their address held its share of the cap.",
        ),
        text(
            STORE_JOBS,
            "Write jobs committed (refused jobs are rolled back).",
        ),
    ] {
        recorder.describe_counter(name, None, text);
    }
    for (name, text) in [
        text(
            TOOL_CALL_DURATION,
            "Seconds a tool call took in the hub's pipeline, by tool.",
        ),
        text(
            HTTP_DURATION,
            "Seconds until the response head, by route template.",
        ),
        text(STORE_BATCH_SIZE, "Jobs per committed write batch."),
        text(
            STORE_COMMIT_DURATION,
            "Seconds a write batch's COMMIT (its fsync) took.",
        ),
    ] {
        recorder.describe_histogram(name, None, text);
    }
    for (name, text) in [
        text(EVENT_LOG_HEAD, "The event log's head seq (its row count)."),
        text(START_TIME, "When this hub started, Unix seconds."),
        text(CONNECTIONS_OPEN, "Connections being served now."),
        text(BUILD_INFO, "Always 1; the version is a label."),
    ] {
        recorder.describe_gauge(name, None, text);
    }
}

static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

impl HubMetrics {
    /// A fresh registry for a hub started at `start_ms` (Unix milliseconds, the hub's clock).
    pub fn new(start_ms: i64) -> Self {
        // The buckets are constants and never empty; were they, histograms would render as
        // summaries.
        let recorder = histogram_buckets().unwrap_or_default().build_recorder();
        let handle = recorder.handle();
        describe(&recorder);
        let store = StoreMetrics {
            batches: counter(&recorder, Key::from_static_name(STORE_BATCHES)),
            jobs: counter(&recorder, Key::from_static_name(STORE_JOBS)),
            batch_size: histogram_handle(&recorder, Key::from_static_name(STORE_BATCH_SIZE)),
            commit_seconds: histogram_handle(
                &recorder,
                Key::from_static_name(STORE_COMMIT_DURATION),
            ),
        };
        // Present from the first scrape, at zero.
        let _ = counter(&recorder, Key::from_static_name(CONNECTIONS_REFUSED));
        for bucket in RATE_LIMIT_BUCKETS {
            let _ = counter(&recorder, rate_limited_key(bucket));
        }
        #[allow(clippy::cast_precision_loss)] // milliseconds since 1970 fit in 53 bits
        let start_s = start_ms as f64 / 1000.0;
        recorder
            .register_gauge(&Key::from_static_name(START_TIME), &METADATA)
            .set(start_s);
        recorder
            .register_gauge(&Key::from_static_name(CONNECTIONS_OPEN), &METADATA)
            .set(0.0);
        recorder
            .register_gauge(
                &Key::from_parts(
                    BUILD_INFO,
                    vec![Label::from_static_parts(
                        "version",
                        env!("CARGO_PKG_VERSION"),
                    )],
                ),
                &METADATA,
            )
            .set(1.0);
        Self {
            recorder,
            handle,
            store,
        }
    }

    /// The handles the store's writer counts into.
    pub fn store(&self) -> StoreMetrics {
        self.store.clone()
    }

    /// One finished tool call.
    pub fn tool_call(
        &self,
        tool: &'static str,
        transport: &'static str,
        code: &'static str,
        took: Duration,
    ) {
        counter(
            &self.recorder,
            Key::from_parts(
                TOOL_CALLS,
                vec![
                    Label::from_static_parts("tool", tool),
                    Label::from_static_parts("transport", transport),
                    Label::from_static_parts("code", code),
                ],
            ),
        )
        .increment(1);
        histogram_handle(
            &self.recorder,
            Key::from_parts(
                TOOL_CALL_DURATION,
                vec![Label::from_static_parts("tool", tool)],
            ),
        )
        .record(took);
    }

    /// One answered HTTP request. `route` is a route template (never the request's path).
    pub fn http_request(&self, route: &str, status: u16, took: Duration) {
        counter(
            &self.recorder,
            Key::from_parts(
                HTTP_REQUESTS,
                vec![
                    Label::new("route", route.to_owned()),
                    Label::new("status", status.to_string()),
                ],
            ),
        )
        .increment(1);
        histogram_handle(
            &self.recorder,
            Key::from_parts(HTTP_DURATION, vec![Label::new("route", route.to_owned())]),
        )
        .record(took);
    }

    /// One `rate_limited` refusal; `bucket` is one of [`RATE_LIMIT_BUCKETS`].
    pub fn rate_limited(&self, bucket: &'static str) {
        counter(&self.recorder, rate_limited_key(bucket)).increment(1);
    }

    /// One connection closed on accept at the connection cap.
    pub fn connection_refused(&self) {
        counter(&self.recorder, Key::from_static_name(CONNECTIONS_REFUSED)).increment(1);
    }

    /// One connection closed on accept because its address held its share of the cap (also
    /// counted in [`CONNECTIONS_REFUSED`]).
    pub fn connection_refused_per_address(&self) {
        counter(&self.recorder, Key::from_static_name(CONNECTIONS_REFUSED)).increment(1);
        counter(
            &self.recorder,
            Key::from_static_name(CONNECTIONS_REFUSED_PER_ADDRESS),
        )
        .increment(1);
    }

    /// Sets the open connections gauge.
    pub fn set_open_connections(&self, open: usize) {
        #[allow(clippy::cast_precision_loss)] // far fewer than 2^53 connections
        let open = open as f64;
        self.recorder
            .register_gauge(&Key::from_static_name(CONNECTIONS_OPEN), &METADATA)
            .set(open);
    }

    /// Sets the event log head gauge.
    pub fn set_event_log_head(&self, seq: i64) {
        #[allow(clippy::cast_precision_loss)] // a log of 2^53 rows is far away
        let seq = seq as f64;
        self.recorder
            .register_gauge(&Key::from_static_name(EVENT_LOG_HEAD), &METADATA)
            .set(seq);
    }

    /// The registry as Prometheus text (exposition format 0.0.4).
    pub fn render(&self) -> String {
        self.handle.render()
    }

    /// Drains histogram samples into their buckets; run every [`UPKEEP_EVERY`].
    pub fn run_upkeep(&self) {
        self.handle.run_upkeep();
    }
}

fn histogram_buckets() -> Result<PrometheusBuilder, metrics_exporter_prometheus::BuildError> {
    PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(TOOL_CALL_DURATION.into()), SECONDS)?
        .set_buckets_for_metric(Matcher::Full(HTTP_DURATION.into()), SECONDS)?
        .set_buckets_for_metric(Matcher::Full(STORE_BATCH_SIZE.into()), BATCH_SIZES)?
        .set_buckets_for_metric(Matcher::Full(STORE_COMMIT_DURATION.into()), COMMIT_SECONDS)
}

fn rate_limited_key(bucket: &'static str) -> Key {
    Key::from_parts(
        RATE_LIMITED,
        vec![Label::from_static_parts("bucket", bucket)],
    )
}

fn counter(recorder: &PrometheusRecorder, key: Key) -> Counter {
    recorder.register_counter(&key, &METADATA)
}

fn histogram_handle(recorder: &PrometheusRecorder, key: Key) -> Histogram {
    recorder.register_histogram(&key, &METADATA)
}
