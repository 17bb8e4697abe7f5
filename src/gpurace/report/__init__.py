"""Renderers for findings: text, JSON, SARIF."""
