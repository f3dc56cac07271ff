"""openapi.yaml through a client generator, as a user of the API would take it: openapi-python-client
must generate every operation and every schema (it silently drops what it cannot read: before,
createSession, the event schemas and the blob upload), and the generated client must talk to a
real daemon."""
from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

SPEC = Path(__file__).resolve().parent.parent.parent / "openapi.yaml"


def _generate(tmp_path: Path) -> Path:
    generator = Path(sys.executable).parent / "openapi-python-client"
    assert generator.exists(), f"{generator} is missing: scripts/requirements/generators.txt installs it"
    result = subprocess.run([str(generator), "generate", "--path", str(SPEC), "--meta", "none", "--output-path", str(tmp_path / "transferd_client")],
                            capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for dropped in ("Unable to process schema", "will not be generated", "Failure to process schema"):
        assert dropped not in output, output
    return tmp_path / "transferd_client"


def test_every_operation_and_schema_is_generated_and_the_client_works(tmp_path, daemon):
    package = _generate(tmp_path)
    api = package / "api"
    for module in ("sessions/create_session.py", "sessions/list_sessions.py", "events/list_session_events.py",
                   "events/acknowledge_session_events.py", "tasks/create_blob.py", "tasks/create_task.py", "tasks/create_tasks.py",
                   "limits/update_limits.py"):
        assert (api / module).exists(), module
    models = {path.stem for path in (package / "models").glob("*.py")}
    for model in ("session", "session_configuration", "served_session_configuration", "will_retry_event",
                  "did_complete_with_error_event", "did_become_invalid_event", "did_finish_events_event"):
        assert model in models, model

    sys.path.insert(0, str(tmp_path))
    try:
        client_module = importlib.import_module("transferd_client")
        create_session = importlib.import_module("transferd_client.api.sessions.create_session")
        get_session = importlib.import_module("transferd_client.api.sessions.get_session")
        session_create = importlib.import_module("transferd_client.models.session_create")
        client = client_module.AuthenticatedClient(base_url=daemon.url, token=daemon.token) if daemon.token \
            else client_module.Client(base_url=daemon.url)
        made = create_session.sync(client=client, body=session_create.SessionCreate(description="from a generated client"))
        assert made is not None and made.id and made.description == "from a generated client", made
        fetched = get_session.sync(made.id, client=client)
        assert fetched.id == made.id and fetched.configuration.http_maximum_connections_per_host == 6
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.startswith("transferd_client")]:
            del sys.modules[name]
