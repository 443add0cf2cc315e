"""Provider API implementations. Each module imports its SDK itself, on first use."""
