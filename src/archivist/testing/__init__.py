"""Test support shipped with archivist: a throwaway PostgreSQL for tests and the
store conformance suite that every backend must pass."""
