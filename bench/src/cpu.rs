//! Where the CPU went during a timed window: per-thread on-CPU time from
//! `/proc/self/task/*/schedstat`, grouped by thread name, plus the process total from
//! `/proc/self/stat` (which also counts threads that ended meanwhile). Linux only; elsewhere
//! the snapshot is empty and the report says so.

use std::collections::BTreeMap;

/// On-CPU seconds per thread group at one instant.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    per_thread: BTreeMap<u64, (String, f64)>,
    process: f64,
    machine: Machine,
}

/// Machine-wide CPU seconds from `/proc/stat` (all processes, all cores).
#[derive(Clone, Copy, Debug, Default)]
pub struct Machine {
    /// Busy: user, nice, system, irq, softirq.
    pub busy: f64,
    /// Stolen by the hypervisor.
    pub steal: f64,
}

impl Machine {
    fn take() -> Self {
        let fields: Vec<f64> = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|text| {
                let line = text
                    .lines()
                    .find(|line| line.starts_with("cpu "))?
                    .to_owned();
                Some(
                    line.split_whitespace()
                        .skip(1)
                        .filter_map(|field| field.parse().ok())
                        .collect(),
                )
            })
            .unwrap_or_default();
        let at = |index: usize| fields.get(index).copied().unwrap_or(0.0) / 100.0;
        Self {
            busy: at(0) + at(1) + at(2) + at(5) + at(6),
            steal: at(7),
        }
    }
}

/// CPU use inside a window.
#[derive(Clone, Debug, Default)]
pub struct Usage {
    /// CPU seconds per thread group of this process.
    pub groups: BTreeMap<&'static str, f64>,
    /// This process, all threads (including ones that ended).
    pub process: f64,
    /// The whole machine, busy.
    pub machine_busy: f64,
    /// The whole machine, stolen by the hypervisor.
    pub machine_steal: f64,
}

impl Usage {
    /// CPU seconds of other processes (machine busy minus this process), at least 0.
    pub fn others(&self) -> f64 {
        (self.machine_busy - self.process).max(0.0)
    }
}

/// The thread groups the bench names.
pub fn group_of(name: &str) -> &'static str {
    if name.starts_with("kd-server") {
        "server (tokio workers + blocking pool)"
    } else if name.starts_with("kd-store-writer") {
        "store writer thread"
    } else if name.starts_with("kd-client") {
        "bench client"
    } else {
        "other"
    }
}

impl Snapshot {
    /// Reads the current times.
    pub fn take() -> Self {
        let mut per_thread = BTreeMap::new();
        if let Ok(entries) = std::fs::read_dir("/proc/self/task") {
            for entry in entries.flatten() {
                let Ok(tid) = entry.file_name().to_string_lossy().parse::<u64>() else {
                    continue;
                };
                let path = entry.path();
                let name = std::fs::read_to_string(path.join("comm"))
                    .map(|text| text.trim().to_owned())
                    .unwrap_or_default();
                let on_cpu_ns = std::fs::read_to_string(path.join("schedstat"))
                    .ok()
                    .and_then(|text| text.split_whitespace().next()?.parse::<f64>().ok());
                if let Some(ns) = on_cpu_ns {
                    per_thread.insert(tid, (name, ns / 1e9));
                }
            }
        }
        let process = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|text| {
                // Fields after the `(comm)`: utime and stime are the 12th and 13th.
                let rest = text.rsplit_once(')')?.1;
                let fields: Vec<&str> = rest.split_whitespace().collect();
                let utime: f64 = fields.get(11)?.parse().ok()?;
                let stime: f64 = fields.get(12)?.parse().ok()?;
                Some((utime + stime) / 100.0)
            })
            .unwrap_or(0.0);
        Self {
            per_thread,
            process,
            machine: Machine::take(),
        }
    }

    /// CPU spent between `earlier` and `self`.
    pub fn since(&self, earlier: &Snapshot) -> Usage {
        let mut groups: BTreeMap<&'static str, f64> = BTreeMap::new();
        for (tid, (name, seconds)) in &self.per_thread {
            let before = earlier.per_thread.get(tid).map_or(0.0, |(_, s)| *s);
            *groups.entry(group_of(name)).or_default() += (seconds - before).max(0.0);
        }
        Usage {
            groups,
            process: (self.process - earlier.process).max(0.0),
            machine_busy: (self.machine.busy - earlier.machine.busy).max(0.0),
            machine_steal: (self.machine.steal - earlier.machine.steal).max(0.0),
        }
    }
}
