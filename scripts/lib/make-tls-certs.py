"""Writes the certificates of the TLS test origins into the folder given as the only argument.

Made fresh on every run of scripts/test.sh (nothing secret or long-lived is committed), with
trustme (pinned in scripts/requirements/peers.txt):
  ca.pem                      the test CA, which sessions pass as their tlsCABundle
  valid.crt / valid.key       a leaf for 127.0.0.1 and localhost, signed by the test CA
  expired.crt / expired.key   the same names, signed by the test CA, expired yesterday
  untrusted.crt / .key        the same names, signed by a second CA nobody trusts
  other-ca.pem                that second CA
Each .crt holds the leaf first, then its CA (what nginx sends as the chain).
"""
import datetime
import pathlib
import sys

import trustme


def write_leaf(folder: pathlib.Path, name: str, leaf: "trustme.LeafCert") -> None:
    leaf.private_key_pem.write_to_path(str(folder / f"{name}.key"))
    (folder / f"{name}.crt").write_bytes(b"".join(blob.bytes() for blob in leaf.cert_chain_pems))


def main() -> None:
    folder = pathlib.Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    names = ("127.0.0.1", "localhost")
    now = datetime.datetime.now(datetime.timezone.utc)
    ca = trustme.CA(organization_name="transferd test CA")
    stranger = trustme.CA(organization_name="transferd untrusted CA")
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    stranger.cert_pem.write_to_path(str(folder / "other-ca.pem"))
    write_leaf(folder, "valid", ca.issue_cert(*names))
    write_leaf(folder, "expired", ca.issue_cert(
        *names, not_before=now - datetime.timedelta(days=10), not_after=now - datetime.timedelta(days=1)))
    write_leaf(folder, "untrusted", stranger.issue_cert(*names))


if __name__ == "__main__":
    main()
