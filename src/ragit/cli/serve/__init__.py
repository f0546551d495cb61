"""``ragit serve``: one long-lived process per repository that answers read-only CLI commands
from a warm :class:`ragit.api.Repo`, and the cheap client the CLI uses to reach it.

- :mod:`.protocol` the socket path, the frames and what a request must match (imported by the
  client, so it imports nothing heavy);
- :mod:`.client` the forwarding decision and the round trip, made before the CLI imports click;
- :mod:`.server` the accept loop, the warm Repo, idle and removal shutdown.
"""
