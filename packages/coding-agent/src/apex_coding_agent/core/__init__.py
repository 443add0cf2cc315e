"""The coding agent's core services: settings, environment, trust and permissions."""
