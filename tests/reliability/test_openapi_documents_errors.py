"""The OpenAPI document names the error bodies and statuses the server answers (issue 18,
defect 11): RFC 6749 bodies on the OAuth endpoints, 409/422 on writes, 500/503 everywhere."""

from __future__ import annotations

OPENAPI = "/api/v1/openapi.json"


async def _document(client) -> dict:
    resp = await client.get(OPENAPI)
    assert resp.status_code == 200
    return resp.json()


async def test_oauth_errors_are_documented_as_rfc_6749_bodies(client) -> None:
    doc = await _document(client)
    assert set(doc["components"]["schemas"]["OAuthError"]["properties"]) == {
        "error",
        "error_description",
    }
    for path in ("/api/v1/oauth/token", "/api/v1/oauth/register"):
        for status in ("400", "429"):
            content = doc["paths"][path]["post"]["responses"][status]["content"]
            assert content["application/json"]["schema"]["$ref"].endswith("/OAuthError")
    resp = await client.post("/api/v1/oauth/token", data={})
    assert resp.status_code == 400 and set(resp.json()) <= {"error", "error_description"}


async def test_every_authenticated_operation_documents_its_error_statuses(client) -> None:
    doc = await _document(client)
    missing = []
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if not operation.get("security"):
                continue
            wanted = {"400", "401", "403", "404", "429", "500", "503"}
            if method in ("post", "put", "patch", "delete"):
                wanted |= {"409", "422"}
            if lacking := wanted - set(operation["responses"]):
                missing.append((method, path, sorted(lacking)))
    assert missing == []
