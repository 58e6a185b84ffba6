"""The OpenAPI document says what the server does: every error status an operation can
answer, as ``application/problem+json`` (RFC 9457) with one ``Problem`` schema; the two
ways to send the API key as security schemes; the export as NDJSON; and, on a server
without an embedder, only the search mode it accepts. Why: clients generated from the
document, and schemathesis's conformance checks, trust it — an undocumented 401 or a
422 body that does not match its schema breaks them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

PROBLEM = "application/problem+json"
NDJSON = "application/x-ndjson"


class FieldError(BaseModel):
    field: str = Field(description="Dotted path of the offending field ('' for the whole body).")
    message: str


class Problem(BaseModel):
    """An error: RFC 9457 problem details."""

    type: str = "about:blank"
    title: str = Field(description="Short summary of the kind of error, e.g. 'invalid request'.")
    status: int = Field(ge=400, le=599)
    detail: str = Field(description="What went wrong, for a person to read.")
    instance: str = Field("", description="The request path.")
    errors: list[FieldError] | None = Field(None, description="Invalid requests only: each field and its problem.")
    code: str | None = Field(None, description="Refused writes: the write gate's reason code (e.g. 'secret').")
    needed: int | None = Field(None, description="Over budget: the tokens the protected part needs.")
    budget: int | None = Field(None, description="Over budget: the budget given.")
    expected: int | None = Field(None, description="Stale writes: the version the write was based on.")
    current: int | None = Field(None, description="Stale writes: the current version.")


_WHY = {
    "400": "A body that is not JSON, or a Host header the server does not serve.",
    "401": "No valid API key.",
    "403": "The key may not act for this user or agent, or its role may not do this.",
    "404": "No such item in this scope.",
    "409": "A conflicting write (a stale version, or a concurrent change).",
    "413": "The body is larger than the server accepts.",
    "422": "The request is well formed but invalid: a field, or a write the gate refuses.",
    "503": "The store is busy, or its database server cannot be reached now (a restart); retry after "
           "`Retry-After` seconds.",
}
_HEADERS = {"503": {"headers": {"Retry-After": {"description": "Seconds to wait before retrying.",
                                               "schema": {"type": "integer"}}}}}


def errors_of(path: str, method: str, secured: bool) -> list[str]:
    """The error statuses an operation can answer."""
    out = ["400", "413", "422", "503"]
    if secured:
        out += ["401", "403"]
    if path.count("{") > 1 or path.startswith(("/v1/jobs/", "/v1/erasure-jobs/")):  # a fact, trace or job id
        out.append("404")
    if method in ("post", "put", "delete"):
        out.append("409")
    return sorted(out)


def complete(document: dict[str, Any], *, search_modes: list[str]) -> dict[str, Any]:
    """Rewrite FastAPI's generated document in place (see the module docstring)."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    schemas["FieldError"] = FieldError.model_json_schema()
    problem = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    problem.pop("$defs", None)
    schemas["Problem"] = problem
    ref = {PROBLEM: {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for path, operations in document.get("paths", {}).items():
        for method, op in operations.items():
            responses = op.setdefault("responses", {})
            responses.pop("422", None)
            for status in errors_of(path, method, bool(op.get("security"))):
                responses[status] = {"description": _WHY[status], "content": ref, **_HEADERS.get(status, {})}
    if "SearchBody" in schemas:
        mode = schemas["SearchBody"]["properties"]["mode"]
        mode["anyOf"] = [{"type": "string", "enum": search_modes}, {"type": "null"}]
        mode["description"] = ("keyword, or with an embedder configured vector or hybrid; "
                               "default: hybrid when an embedder is configured, else keyword")
    return document
