"""The ``acp:`` target: an agent driven over the Agent Client Protocol, the harness as its client."""
