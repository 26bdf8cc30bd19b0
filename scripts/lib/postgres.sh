# shellcheck shell=bash
# A throwaway PostgreSQL cluster on loopback, for tests that compare against the real server
# (crates/protocol/tests/pg_differential.rs).
#
# Usage (source it; it defines functions and changes no shell options):
#
#   source scripts/lib/postgres.sh
#   pg_start                      # exports KD_TEST_PG_URL=postgres://postgres@127.0.0.1:PORT/postgres
#   KD_REQUIRE_PG=1 cargo test -p kd-protocol --test pg_differential
#   pg_stop                       # stops the cluster and deletes its folder
#
# pg_start installs Debian's postgresql package when no server binaries are found and it runs as
# root. initdb and pg_ctl refuse to run as root, so as root the cluster belongs to the `postgres`
# user (created when missing) and both run through runuser. The cluster listens on 127.0.0.1 only,
# on a free port, with its socket in its own temporary folder; local connections are trusted and
# the only role is the superuser `postgres`. The database is UTF8 so that \uXXXX escapes in jsonb
# input decode to UTF-8, as on the server that defined kd-mcp-v1.

# Prints the folder holding initdb and pg_ctl, or fails.
_kd_pg_bindir() {
    local dir
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(command -v pg_ctl)"
        return 0
    fi
    # Debian keeps the server binaries out of PATH; take the newest major version.
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

# Prints the path of an administration command that may sit outside a non-root PATH.
_kd_pg_sbin() {
    command -v "$1" 2>/dev/null || { [ -x "/usr/sbin/$1" ] && echo "/usr/sbin/$1"; } ||
        { [ -x "/sbin/$1" ] && echo "/sbin/$1"; }
}

# Runs a command as the cluster's owner: `postgres` when we are root, ourselves otherwise.
_kd_pg_as_owner() {
    if [ "$(id -u)" = 0 ]; then
        "$(_kd_pg_sbin runuser)" -u postgres -- "$@"
    else
        "$@"
    fi
}

# Prints a TCP port on 127.0.0.1 that nothing listens on right now.
_kd_pg_free_port() {
    python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

pg_start() {
    if [ -n "${KD_PG_DIR:-}" ]; then
        echo "pg_start: a cluster is already running in $KD_PG_DIR (call pg_stop first)" >&2
        return 1
    fi

    local bindir
    if ! bindir=$(_kd_pg_bindir); then
        if [ "$(id -u)" != 0 ]; then
            echo "pg_start: initdb/pg_ctl not found and not root, cannot install postgresql" >&2
            return 1
        fi
        echo "pg_start: installing postgresql" >&2
        if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; } >/dev/null; then
            echo "pg_start: apt-get install postgresql failed" >&2
            return 1
        fi
        bindir=$(_kd_pg_bindir) || { echo "pg_start: initdb/pg_ctl still not found" >&2; return 1; }
    fi

    if [ "$(id -u)" = 0 ] && ! id -u postgres >/dev/null 2>&1; then
        "$(_kd_pg_sbin useradd)" --system --user-group --no-create-home --shell /usr/sbin/nologin postgres || {
            echo "pg_start: could not create the postgres user" >&2
            return 1
        }
    fi

    local dir port
    dir=$(mktemp -d "${TMPDIR:-/tmp}/kd-pg.XXXXXX") || return 1
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$dir" || { rm -rf "$dir"; return 1; }
        # mktemp makes the folder 0700; the owner reaches it via the parent, which stays as it is.
    fi
    port=$(_kd_pg_free_port) || { rm -rf "$dir"; return 1; }

    # cd into the cluster folder: initdb and pg_ctl warn when the owner cannot read the cwd.
    if ! (cd "$dir" && _kd_pg_as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust \
            -E UTF8 --no-locale >"$dir/initdb.log" 2>&1); then
        echo "pg_start: initdb failed:" >&2
        cat "$dir/initdb.log" >&2
        rm -rf "$dir"
        return 1
    fi
    if ! (cd "$dir" && _kd_pg_as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $dir" start >/dev/null); then
        echo "pg_start: the server did not start:" >&2
        cat "$dir/server.log" >&2
        rm -rf "$dir"
        return 1
    fi

    export KD_PG_DIR="$dir"
    export KD_PG_BINDIR="$bindir"
    export KD_TEST_PG_URL="postgres://postgres@127.0.0.1:$port/postgres"
    echo "pg_start: $("$bindir/pg_ctl" --version) on 127.0.0.1:$port ($dir)" >&2
}

pg_stop() {
    local dir="${KD_PG_DIR:-}"
    if [ -z "$dir" ]; then
        echo "pg_stop: no cluster started by pg_start" >&2
        return 0
    fi
    if [ -d "$dir/data" ]; then
        (cd "$dir" && _kd_pg_as_owner "${KD_PG_BINDIR:-$(_kd_pg_bindir)}/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null) ||
            echo "pg_stop: pg_ctl stop failed; removing the folder anyway" >&2
    fi
    rm -rf "$dir"
    unset KD_PG_DIR KD_PG_BINDIR KD_TEST_PG_URL
}
