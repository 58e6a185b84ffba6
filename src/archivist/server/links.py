"""OpenAPI links: how one response's ids feed the next call (remember → get, versions,
confirm, forget; search → get; context → trace; ingest → job). Generated clients and
schemathesis's stateful phase follow them. The agent comes from the response body (the
fact's or the trace's ``agent``), since the request may not have named one."""


def _fact(operation: str, pointer: str, about: str) -> dict:
    return {"operationId": operation, "description": about,
            "parameters": {"user": "$request.path.user", "fact_id": f"$response.body#{pointer}/id",
                           "header.X-Agent": f"$response.body#{pointer}/agent"}}


REMEMBERED = {
    "GetFact": _fact("getFact", "", "Read the fact just written."),
    "ListFactVersions": _fact("listFactVersions", "", "Its versions, oldest first."),
    "ConfirmFact": _fact("confirmFact", "", "Confirm it (a candidate becomes committed)."),
    "ForgetFact": _fact("forgetFact", "", "Forget it everywhere."),
}
SEARCHED = {
    "GetFirstHit": _fact("getFact", "/0/fact", "Read the best hit."),
}
CONTEXT = {
    "GetTrace": {"operationId": "getTrace",
                 "parameters": {"user": "$request.path.user", "trace_id": "$response.body#/trace_id",
                                "header.X-Agent": "$response.body#/trace/agent"},
                 "description": "The stored trace of this view (writer keys only)."},
}
INGESTED = {
    "GetJob": {"operationId": "getJob", "parameters": {"job_id": "$response.body#/job_id"},
               "description": "Poll the extraction job."},
}
