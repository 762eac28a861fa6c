"""Helpers shared by the tests (importable as ``support`` or ``tests.support``)."""
