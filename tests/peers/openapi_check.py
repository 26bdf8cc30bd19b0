"""The hub's OpenAPI document, checked from outside (scripts/peers.sh).

1. Fetches GET /functions/v1/public-api/openapi.json from KD_HUB_URL and validates it as
   OpenAPI 3.1 with openapi-spec-validator.
2. Runs schemathesis against the same live hub: every documented operation, a bounded number
   of examples each (KD_SCHEMATHESIS_EXAMPLES, default 25), with every check but the few this
   hub cannot pass by design (see EXCLUDED). A 5xx, an undocumented status, a content type or
   a body the document does not allow all fail the operation.

Prints one line per check and then `N passed, M failed` (each validation, and each operation
schemathesis ran, counts once).
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import urllib.request
import xml.etree.ElementTree as ElementTree

from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename
from peer_checks import check, checks

DOCUMENT_PATH = "/functions/v1/public-api/openapi.json"
CONFIG = pathlib.Path(__file__).with_name("schemathesis.toml")

# Checks left out, and why:
# - positive_data_acceptance: schema-valid arguments are still refused when they name nothing
#   (404), need a signature (401), a stamp (403) or collide (409); the document says so, so
#   these refusals are conformance, not defects.
# - use_after_free, ensure_resource_availability: the document has no links (no resource is
#   created then deleted over REST).
# - ignored_auth: the owner session is optional on every operation ({} in security); a signed
#   tool is checked by its kd-mcp-v1 headers, which are parameters, not a security scheme.
EXCLUDED = [
    "positive_data_acceptance",
    "use_after_free",
    "ensure_resource_availability",
    "ignored_auth",
]

# What the requests library raises (requests.exceptions.InvalidHeader) for a header value with
# leading whitespace or a CR/LF, before anything is sent.
CLIENT_REFUSED_HEADER = "Invalid leading whitespace, reserved character(s), or return character(s) in header value"


def validate_document(base, folder):
    with urllib.request.urlopen(base + DOCUMENT_PATH, timeout=10) as response:
        content_type = response.headers.get("content-type", "")
        text = response.read().decode("utf-8")
    check("openapi.json is served as application/json", content_type.startswith("application/json"), content_type)
    path = folder / "openapi.json"
    path.write_text(text)
    try:
        spec_dict, base_uri = read_from_filename(str(path))
        validate(spec_dict, base_uri=base_uri)
        check(f"openapi-spec-validator: OpenAPI {spec_dict.get('openapi')} ({len(spec_dict['paths'])} paths)", True)
    except Exception as error:  # the validator's errors are of several types
        check("openapi-spec-validator", False, str(error)[:2000])


def run_schemathesis(base, folder):
    examples = os.environ.get("KD_SCHEMATHESIS_EXAMPLES", "25")
    junit = folder / "schemathesis.xml"
    schemathesis = pathlib.Path(sys.executable).with_name("schemathesis")
    command = [
        str(schemathesis), "--config-file", str(CONFIG), "run", base + DOCUMENT_PATH,
        "--url", base,
        "--checks", "all",
        "--exclude-checks", ",".join(EXCLUDED),
        "--max-examples", examples,
        "--seed", "20261011",
        "--phases", "examples,coverage,fuzzing",
        "--workers", "4",
        "--request-timeout", "10",
        "--no-color",
        "--report", "junit",
        "--report-junit-path", str(junit),
        "--generation-database", "none",
    ]
    print("$ " + " ".join(command), flush=True)
    completed = subprocess.run(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    output = completed.stdout
    # The whole output when something failed; the summary otherwise.
    if completed.returncode != 0:
        print(output)
    else:
        print("\n".join(output.splitlines()[-25:]))
    if not junit.exists():
        check("schemathesis ran", False, f"exit {completed.returncode}, no report")
        return
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    ran = 0
    unsent = 0
    for case in cases:
        ran += 1
        problems = [child for child in case if child.tag in ("failure", "error")]
        skipped = any(child.tag == "skipped" for child in case)
        if skipped:
            continue
        texts = [(child.get("message") or "") + " " + (child.text or "") for child in problems]
        if problems and all(child.tag == "error" for child in problems) and all(CLIENT_REFUSED_HEADER in text for text in texts):
            # The request never left schemathesis: its HTTP client refused a header value the
            # generator made (schemathesis/schemathesis#1142 and later). Nothing of the hub's
            # was tested by that case, so it is neither a pass nor a failure of the hub.
            unsent += 1
            print(f"note  schemathesis: {case.get('name')}: a generated header value was refused by the client itself, not sent")
            continue
        detail = " | ".join(text.strip()[:300] for text in texts)
        check(f"schemathesis: {case.get('name')}", not problems, detail)
    check("schemathesis ran every operation it found", ran > 0 and completed.returncode in (0, 1), f"exit {completed.returncode}")
    if completed.returncode != 0 and checks.failed == 0 and unsent == 0:
        check("schemathesis exit status", False, f"exit {completed.returncode}")


def main():
    base = os.environ["KD_HUB_URL"].rstrip("/")
    with tempfile.TemporaryDirectory(prefix="kd-openapi-") as folder:
        folder = pathlib.Path(folder)
        validate_document(base, folder)
        run_schemathesis(base, folder)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
