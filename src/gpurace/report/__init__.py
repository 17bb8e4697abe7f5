"""Renderers for findings: text for terminals, JSON for scripts and records, SARIF for code scanning."""

from gpurace.report.json_format import dumps, from_json, to_json
from gpurace.report.model import Report
from gpurace.report.sarif import to_sarif
from gpurace.report.text import render_text

__all__ = ["Report", "dumps", "from_json", "render_text", "to_json", "to_sarif"]
