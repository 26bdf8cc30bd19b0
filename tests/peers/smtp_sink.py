"""A local SMTP sink for the browser tests: an aiosmtpd server on 127.0.0.1 that keeps every
message it receives as one JSON file in a folder, and delivers nothing.

    python tests/peers/smtp_sink.py DIR [--port N]

Listens on 127.0.0.1 (port 0, the default, lets the system choose) and prints exactly one line
`smtp sink listening on 127.0.0.1:PORT` once it accepts connections; scripts/peers.sh reads the
port from it and gives the hub `--smtp-url smtp://127.0.0.1:PORT`. Runs until SIGTERM or SIGINT.

Each message becomes DIR/NNNNNN-<uuid>.json, written to a temporary name and renamed, so a
reader never sees half a file:

    {"received_at": ISO-8601, "peer": "127.0.0.1:PORT", "helo": "...",
     "mail_from": "...", "rcpt_tos": [...],                    # the SMTP envelope
     "from": "...", "to": "...", "subject": "...",             # the message's headers
     "content_type": "text/plain; charset=utf-8",
     "body": "...",                                  # the decoded text body, \n line ends
     "raw": "..."}                                             # the message as received

The SMTP protocol is aiosmtpd's (PyPI); this file only stores what it hands over.
"""

import argparse
import asyncio
import datetime
import email
import email.policy
import itertools
import json
import os
import pathlib
import signal
import sys
import uuid

from aiosmtpd.smtp import SMTP


class Keep:
    """aiosmtpd handler: accepts any recipient and stores each message."""

    def __init__(self, folder: pathlib.Path):
        self.folder = folder
        self.counter = itertools.count(1)

    async def handle_DATA(self, server, session, envelope):
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        message = email.message_from_bytes(raw, policy=email.policy.default)
        if message.is_multipart():
            part = message.get_body(preferencelist=("plain", "html"))
            body = part.get_content() if part is not None else ""
        else:
            body = message.get_content()
        body = body.replace("\r\n", "\n")
        record = {
            "received_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "peer": "%s:%s" % tuple(session.peer[:2]) if session.peer else None,
            "helo": session.host_name,
            "mail_from": envelope.mail_from,
            "rcpt_tos": list(envelope.rcpt_tos),
            "from": str(message.get("from", "")),
            "to": str(message.get("to", "")),
            "subject": str(message.get("subject", "")),
            "content_type": str(message.get("content-type", "")),
            "body": body,
            "raw": raw.decode("utf-8", "replace"),
        }
        name = "%06d-%s.json" % (next(self.counter), uuid.uuid4().hex[:8])
        temporary = self.folder / ("." + name + ".tmp")
        temporary.write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
        os.replace(temporary, self.folder / name)
        print("smtp sink: kept %s for %s" % (name, ", ".join(envelope.rcpt_tos)), flush=True)
        return "250 Message accepted for delivery"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=pathlib.Path)
    parser.add_argument("--port", type=int, default=0)
    options = parser.parse_args()
    options.folder.mkdir(parents=True, exist_ok=True)
    handler = Keep(options.folder)

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    server = loop.run_until_complete(
        loop.create_server(
            lambda: SMTP(handler, hostname="kd-smtp-sink", loop=loop),
            host="127.0.0.1",
            port=options.port,
        )
    )
    host, port = server.sockets[0].getsockname()[:2]
    print("smtp sink listening on %s:%d" % (host, port), flush=True)
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, loop.stop)
    try:
        loop.run_forever()
    finally:
        server.close()
        loop.run_until_complete(server.wait_closed())
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
