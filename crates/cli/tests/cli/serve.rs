//! `serve`: its data folder and key, trusted proxies, the connection cap, logs and SIGTERM.

use super::*;

#[test]
fn serve_makes_its_data_folder_and_key_with_owner_only_mode() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("fresh");
    // The modes are the hub's own, not the umask's: a permissive umask changes nothing.
    let permissive = || {
        let mut shell = Command::new("sh");
        shell.args(["-c", "umask 000 && exec \"$0\" \"$@\"", BIN]);
        shell
    };
    let hub = start_hub_as(permissive(), &data, &[]);
    assert!(data.join("karmadue.sqlite").exists());
    let key = data.join("keys").join("kd-passport-1.key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&key), 0o600);
        assert_eq!(mode(&data), 0o700, "the data folder");
        for file in [
            "karmadue.sqlite",
            "karmadue.sqlite-wal",
            "karmadue.sqlite-shm",
        ] {
            assert_eq!(mode(&data.join(file)), 0o600, "{file}");
        }
        // A folder made before (by hand, or by an earlier version) is tightened at start.
        drop(hub);
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(
            data.join("karmadue.sqlite"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let _again = start_hub_as(permissive(), &data, &[]);
        assert_eq!(mode(&data), 0o700);
        assert_eq!(mode(&data.join("karmadue.sqlite")), 0o600);
    }
}

#[test]
fn serve_names_its_trusted_proxies_and_refuses_one_that_is_not_an_address() {
    let dir = tempfile::tempdir().unwrap();
    let refused = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .args(["--trusted-proxies", "127.0.0.1, proxy.local"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--trusted-proxies") && stderr.contains("\"proxy.local\""),
        "{stderr}"
    );
    assert!(
        !dir.path().join("data").exists(),
        "a refused flag starts nothing"
    );
    let hub = start_hub_with(
        &dir.path().join("data"),
        &["--trusted-proxies".as_ref(), "10.0.0.0/8,::1".as_ref()],
    );
    assert!(
        hub.banner
            .iter()
            .any(|line| line.contains("trusted proxies 10.0.0.0/8, ::1/128")),
        "{:?}",
        hub.banner
    );
}

#[test]
fn a_connection_cap_below_one_is_refused_by_flag_and_by_environment_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let flag = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--max-connections", "0"])
        .arg("--data-dir")
        .arg(&data)
        .output()
        .unwrap();
    let env = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .env("KARMADUE_MAX_CONNECTIONS", "none")
        .output()
        .unwrap();
    for output in [flag, env] {
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("--max-connections") && stderr.contains("1 or more"),
            "{stderr}"
        );
    }
    assert!(!data.exists(), "nothing was made");
}

/// A log written to a pipe or a file carries no ANSI colour codes, and SIGTERM ends the hub
/// with a shutdown line.
#[test]
fn logs_to_a_pipe_are_plain_text_and_sigterm_says_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--bundled-catalog",
            "false",
            "--data-dir",
        ])
        .arg(dir.path().join("data"))
        .env("KARMADUE_LOG", "info")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut BufReader::new(stdout), &mut text).unwrap();
        text
    });
    std::thread::sleep(std::time::Duration::from_secs(2));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    let text = reader.join().unwrap();
    assert!(status.success(), "{status:?}: {text}");
    assert!(text.contains("KarmaDue hub listening on"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "colour codes in a piped log: {text:?}"
    );
    assert!(
        text.contains("shutting down") && text.contains("stopped"),
        "{text}"
    );
}

/// The status of a GET to `url` (any status, no error for 4xx).
fn status_of(url: &str) -> u16 {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    agent.get(url).call().unwrap().status().as_u16()
}

/// Each bad Ronin flag exits non-zero naming the flag and why, and makes no data folder.
fn refuses_bad_ronin_flags(data: &std::path::Path) {
    let refusals: [(&[&str], &str); 8] = [
        (&["--ronin-mount", "ronin"], "must start with /"),
        // With an address of its own Ronin has no mount: the flag would do nothing (389).
        (
            &["--ronin-listen", "127.0.0.1:0", "--ronin-mount", "/hire"],
            "cannot be used with",
        ),
        (&["--ronin-mount", "/mcp"], "the hub's own pages"),
        (
            &[
                "--ronin-listen",
                "127.0.0.1:0",
                "--ronin-public-url",
                "http://u:p@ronin.test/",
            ],
            "user name or password",
        ),
        (&["--ronin-mount", "/ronin/"], "must not end with /"),
        (&["--ronin-mount", "/"], "--ronin-listen"),
        (
            &["--ronin-public-url", "http://ronin.test"],
            "--ronin-listen",
        ),
        (
            &[
                "--ronin-listen",
                "127.0.0.1:0",
                "--ronin-public-url",
                "ronin.test",
            ],
            "http:// or https://",
        ),
    ];
    for (flags, why) in refusals {
        let refused = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data)
            .args(flags)
            .output()
            .unwrap();
        assert!(!refused.status.success(), "{flags:?}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.contains("--ronin-") && stderr.contains(why),
            "{flags:?}: {stderr}"
        );
        assert!(!data.exists(), "{flags:?}: a refused flag starts nothing");
    }
}

/// `--ronin-mount`, `--ronin-listen` and `--ronin-public-url` (docs/decisions.md 389, 391): a
/// bad value is refused with the flag's name and starts nothing; Ronin on its own address is
/// served at its root there, not under the main address's mount, the banner says where, and
/// SIGTERM stops both addresses.
#[test]
fn ronin_s_flags_are_checked_and_ronin_listen_serves_it_at_the_root_of_its_own_address() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    refuses_bad_ronin_flags(&data);
    let hub = start_hub_with(&data, &["--ronin-listen".as_ref(), "127.0.0.1:0".as_ref()]);
    let line = hub
        .banner
        .iter()
        .find(|line| line.trim_start().starts_with("Ronin "))
        .unwrap_or_else(|| panic!("{:?}", hub.banner));
    let ronin = line
        .split_whitespace()
        .nth(1)
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    assert!(
        ronin.starts_with("http://127.0.0.1:") && ronin != hub.url,
        "{line}"
    );
    assert_eq!(status_of(&format!("{ronin}/api/v1/health")), 200);
    assert_eq!(status_of(&format!("{ronin}/AGENTS.md")), 200);
    assert_eq!(status_of(&format!("{}/ronin/api/v1/health", hub.url)), 404);
    assert_eq!(
        status_of(&format!("{}/functions/v1/docs/docs/ronin.md", hub.url)),
        200
    );
    // SIGTERM stops both listeners and the process ends cleanly.
    let mut hub = hub;
    let killed = Command::new("kill")
        .args(["-TERM", &hub.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(hub.child.wait().unwrap().success());
    for url in [&ronin, &hub.url] {
        assert!(
            ureq::get(format!("{url}/")).call().is_err(),
            "{url} still answers"
        );
    }
}

/// `--outbound-ca-file` (docs/decisions.md 420): a file that is missing, not PEM, or holds no
/// certificate is refused at start, by flag and by environment, naming the flag and why; no
/// data folder is made. A file of CA certificates starts the hub.
#[test]
fn a_bad_outbound_ca_file_is_refused_at_start_and_a_good_one_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "just words\n").unwrap();
    let key_only = dir.path().join("key.pem");
    std::fs::write(
        &key_only,
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let broken = dir.path().join("broken.pem");
    std::fs::write(
        &broken,
        "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.pem");
    let cases = [
        (&missing, "cannot read it"),
        (&not_pem, "holds no PEM certificate"),
        (&key_only, "holds no PEM certificate"),
        (&broken, "not a usable X.509 certificate"),
    ];
    for (file, why) in cases {
        let flag = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--outbound-ca-file"])
            .arg(file)
            .arg("--data-dir")
            .arg(&data)
            .output()
            .unwrap();
        let env = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(&data)
            .env("KARMADUE_OUTBOUND_CA_FILE", file)
            .output()
            .unwrap();
        for output in [flag, env] {
            assert!(!output.status.success(), "{file:?}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains("--outbound-ca-file") && stderr.contains(why),
                "{file:?}: {stderr}"
            );
        }
        assert!(!data.exists(), "{file:?}: a refused file starts nothing");
    }
    let ca = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../karmadue/tests/api/fixtures/tls/ca.pem"
    );
    let hub = start_hub_with(&data, &["--outbound-ca-file".as_ref(), ca.as_ref()]);
    assert_eq!(status_of(&format!("{}/", hub.url)), 200);
}
